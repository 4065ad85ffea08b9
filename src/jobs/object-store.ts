// The object store (CUTROOM_S3_*): an S3-compatible bucket where workers put what they made and servers read it
// back, so that replicas need no shared volume. Objects are put and fetched whole, and private: nothing here sets an
// ACL or signs a link, and callers read them only through cutroom's resources. Loaded only when a bucket is
// configured.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';

export interface ObjectStoreOptions {
  bucket: string;
  region: string;
  /** An S3-compatible store's URL (MinIO, Ceph, R2...): addressed path-style, bucket in the path. */
  endpoint?: string;
  /** Every key starts with it ('' or ending in /). */
  prefix: string;
}

/** A failure of the store itself (unreachable, refused): the machine's, worth trying again. */
export class StoreError extends Error {
  override name = 'StoreError';
}

/** The last part of a key (a file's name, a preview's id): errors name no caller's folder. */
const nameOf = (key: string) => key.split('/').filter(Boolean).pop() ?? key;

const missing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

export class ObjectStore {
  private readonly client: S3Client;

  constructor(private readonly opts: ObjectStoreOptions) {
    this.client = new S3Client({
      region: opts.region,
      // S3-compatible stores (and s3rver, in the tests) may not decode the aws-chunked uploads with checksum trailers
      // the SDK sends by default: checksums there only where the API requires them.
      ...(opts.endpoint
        ? {
            endpoint: opts.endpoint,
            forcePathStyle: true,
            requestChecksumCalculation: 'WHEN_REQUIRED' as const,
            responseChecksumValidation: 'WHEN_REQUIRED' as const,
          }
        : {}),
      // A worker tries a job again itself: a few quick tries here, not the SDK's long backoff.
      maxAttempts: 3,
    });
  }

  /**
   * The bucket and prefix: what errors name (a caller over HTTP may read them; the endpoint's address is the
   * operator's), and what servers and workers compare to know they keep previews in the same place.
   */
  get shown(): string {
    return `s3://${this.opts.bucket}/${this.opts.prefix}`;
  }

  /** For the log: with the endpoint's host (never credentials, which are not in it). */
  get where(): string {
    return `${this.shown}${this.opts.endpoint ? ` at ${new URL(this.opts.endpoint).host}` : ''}`;
  }

  /** Whether the bucket answers with these credentials; throws a StoreError that says why not. */
  async check(): Promise<void> {
    await this.call('reach the bucket', () => this.client.send(new HeadBucketCommand({ Bucket: this.opts.bucket })));
  }

  /** Uploads a file, streamed (previews are far under the 5 GB one PUT may carry). */
  async putFile(key: string, path: string): Promise<void> {
    const { size } = await stat(path);
    await this.call(`store ${nameOf(key)}`, () =>
      this.client.send(
        new PutObjectCommand({
          Bucket: this.opts.bucket,
          Key: this.opts.prefix + key,
          Body: createReadStream(path),
          ContentLength: size,
        }),
      ),
    );
  }

  /** Puts a small value whole (one PUT). */
  async putBytes(key: string, bytes: Buffer): Promise<void> {
    await this.call(`store ${nameOf(key)}`, () =>
      this.client.send(new PutObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.prefix + key, Body: bytes })),
    );
  }

  /** A small object's bytes; undefined when there is no such object. */
  async getBytes(key: string): Promise<Buffer | undefined> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.prefix + key }),
      );
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (err) {
      if (missing(err)) return undefined;
      throw this.failure(`read ${nameOf(key)}`, err);
    }
  }

  /** Downloads an object to `path` (a temporary name, renamed when whole); false when there is no such object. */
  async getFile(key: string, path: string): Promise<boolean> {
    let res;
    try {
      res = await this.client.send(new GetObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.prefix + key }));
    } catch (err) {
      if (missing(err)) return false;
      throw this.failure(`read ${nameOf(key)}`, err);
    }
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.part-${randomBytes(4).toString('hex')}`;
    try {
      await pipeline(res.Body as Readable, createWriteStream(tmp));
      await rename(tmp, path);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw (err as NodeJS.ErrnoException).code ? err : this.failure(`read ${nameOf(key)}`, err);
    }
    return true;
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.prefix + key }));
      return true;
    } catch (err) {
      if (missing(err)) return false;
      throw this.failure(`look for ${nameOf(key)}`, err);
    }
  }

  /** The keys under a folder (without the store's prefix). */
  async list(folder: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.call(`list the files of ${nameOf(folder)}`, () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.opts.bucket,
            Prefix: this.opts.prefix + folder,
            ContinuationToken: token,
          }),
        ),
      );
      for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(this.opts.prefix.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  close(): void {
    this.client.destroy();
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.failure(what, err);
    }
  }

  /** An error that says what could not be done where, in the store's words (which never carry the secret). */
  private failure(what: string, err: unknown): StoreError {
    const e = err as StoreFailure;
    // A network failure names the store's address in its message: only its code is said (the log at start has the
    // address).
    if (!e?.$metadata?.httpStatusCode && e?.code)
      return new StoreError(`the object store ${this.shown} could not ${what}: it did not answer (${e.code})`);
    return new StoreError(`the object store ${this.shown} could not ${what}: ${refusalReason(what, e)}`);
  }
}

/** A store's error as the S3 client throws it. */
type StoreFailure = { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };

/** Why the store did not do `what`: a missing bucket and a refused key in plain words, else the error's own. */
function refusalReason(what: string, e: StoreFailure): string {
  const status = e?.$metadata?.httpStatusCode;
  if (e?.name === 'NoSuchBucket' || (what === 'reach the bucket' && status === 404)) return 'the bucket does not exist';
  if (status === 403 || e?.name === 'InvalidAccessKeyId' || e?.name === 'SignatureDoesNotMatch')
    return `access denied (${e?.name ?? 403}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
  return `${e?.name ?? 'error'}: ${e?.message ?? String(e)}`;
}
