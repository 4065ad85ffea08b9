// /uploads/<token>: resumable uploads (tus 1.0, by @tus/server and its file store) behind the signed, expiring links
// import_media {upload} hands a caller (workflow/upload-links.ts signs them). The link is its own authority (a
// person's browser or tus client holds no credentials): altered, unknown, or presented with another caller's
// credentials, it is answered as an upload that never existed; past its time, it says it expired; an upload over
// its cap is refused (413). One link creates one upload (POST), then resumes it (HEAD, PATCH) at the same URL. When
// the last byte arrives the file is imported into the link's project as any import is (probed, copied), its bytes
// removed, and what became of it kept beside it for import_media {upload_id}; uploads past their time are swept. A
// HEAD on a finished upload says it is whole (offset = length), so a client resuming it sees it is done. Browser pages
// of any origin (a view in a sandboxed frame is of the origin "null") may use a link they hold, as a tus client would:
// the link is the only authority, nothing ambient (no cookie, no credential) is ever honoured cross-origin.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';
import type { ImportedMedia, ImportOptions } from '../backend/types.js';
import type { Logger } from '../log.js';
import { readUpload, signUpload, type UploadClaim, type Uploads, type UploadState } from '../workflow/upload-links.js';

/** What is kept beside an upload: its claim, then what became of it. */
interface UploadRecord {
  caller: string;
  project: string;
  name: string;
  expires: number;
  /** Its length, once all of it arrived. */
  size?: number;
  done?: ImportedMedia;
  failed?: string;
}

export interface UploadDesk {
  /** Answers a request under /uploads/; `callerOf` as for files (undefined: no credentials; null: nobody). */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    callerOf: (req: IncomingMessage) => Promise<string | undefined | null>,
  ): Promise<void>;
  /** One caller's uploads, with links starting at `base`. */
  forCaller(caller: string, base: string): Uploads;
  /** Removes uploads past their time (and a day, for what became of them); returns how many. */
  sweep(): Promise<number>;
}

/**
 * CORS for /uploads/: any origin, since a link is a bearer capability its holder may use from any page (an MCP App's
 * sandboxed frame included), and no credentials: no Allow-Credentials, and no Authorization among the headers a page
 * may send (a caller's credentials only narrow who may use a link; a browser page has no need of them). Exposed: what
 * a tus client reads to resume (Upload-Offset, Upload-Length, Location, Tus-*).
 */
const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'Location, Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Upload-Offset, Upload-Length, Upload-Expires',
};
const PREFLIGHT: Record<string, string> = {
  ...CORS,
  'access-control-allow-methods': 'POST, HEAD, PATCH, OPTIONS',
  'access-control-allow-headers':
    'Tus-Resumable, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Defer-Length, Content-Type, X-Requested-With',
  'access-control-max-age': '600',
  'cache-control': 'no-store',
};

const NOT_FOUND = 'no such upload: ask cutroom for a new upload link (import_media {upload})';
const recordOf = (dir: string, id: string) => join(dir, `${id}.cutroom.json`);

function plain(res: ServerResponse, status: number, error: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'tus-resumable': '1.0.0' });
  res.end(JSON.stringify({ error }));
}

async function readRecord(dir: string, id: string): Promise<UploadRecord | undefined> {
  try {
    return JSON.parse(await readFile(recordOf(dir, id), 'utf8')) as UploadRecord;
  } catch {
    return undefined;
  }
}

export function createUploadDesk(opts: {
  dir: string;
  secret: string;
  ttlS: number;
  maxBytes: number;
  /** Imports into the projects of the caller (by their key) who asked for the link. */
  importMedia: (caller: string, projectId: string, path: string, call?: ImportOptions) => Promise<ImportedMedia>;
  logger: Logger;
}): UploadDesk {
  const { dir, secret } = opts;
  const ready = mkdir(dir, { recursive: true });
  const tokenOf = (url: string) => /^\/uploads\/([^/?#]+)/.exec(new URL(url, 'http://x').pathname)?.[1] ?? '';
  const claimOf = (url: string) => readUpload(secret, tokenOf(url), Date.now());
  const store = new FileStore({ directory: dir });
  const tus = new Server({
    path: '/uploads',
    datastore: store,
    // The link's own claim names the upload (never anything the client chose) and caps its size.
    namingFunction: (req) => claimOf(req.url)!.id,
    getFileIdFromRequest: (req) => claimOf(req.url)?.id,
    maxSize: (req) => claimOf(req.url)?.max ?? 0,
    // The upload is resumed at the link it was created at.
    generateUrl: (req) => new URL(req.url).pathname,
    onUploadFinish: async (_req, upload) => {
      const record = await readRecord(dir, upload.id);
      if (!record) throw { status_code: 404, body: NOT_FOUND };
      const file = join(dir, upload.id);
      const size = upload.size ?? upload.offset;
      try {
        const media = await opts.importMedia(record.caller, record.project, file, { fetched: { name: record.name } });
        await writeFile(recordOf(dir, upload.id), JSON.stringify({ ...record, size, done: media }));
        return {};
      } catch (err) {
        const reason = (err as Error).message;
        await writeFile(recordOf(dir, upload.id), JSON.stringify({ ...record, size, failed: reason }));
        throw { status_code: 422, body: `the upload arrived but was not imported: ${reason}` };
      } finally {
        // The project holds its own copy now (or nothing): the uploaded bytes go.
        await rm(file, { force: true });
      }
    },
    onResponseError: (_req, err) => {
      if (!('status_code' in err)) opts.logger.warn(`uploads: ${err.message}`);
      return undefined;
    },
  });

  return {
    async handle(req, res, path, callerOf) {
      await ready;
      for (const [k, v] of Object.entries(CORS)) res.setHeader(k, v);
      // A preflight carries no link to check (nor anything else): it says what a page may send.
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { ...PREFLIGHT, 'tus-resumable': '1.0.0', 'tus-version': '1.0.0' }).end();
        return;
      }
      const token = /^\/uploads\/([^/]+)$/.exec(path)?.[1];
      const claim = token ? readUpload(secret, token, Date.now()) : undefined;
      const record = claim ? await readRecord(dir, claim.id) : undefined;
      if (!claim || !record || record.caller !== claim.caller) return plain(res, 404, NOT_FOUND);
      // Another caller's upload does not exist, for them.
      const caller = await callerOf(req);
      if (caller !== undefined && caller !== claim.caller) return plain(res, 404, NOT_FOUND);
      if (claim.expired) return plain(res, 403, 'this upload link has expired: ask cutroom for a new one');
      if (record.done || record.failed) {
        // Whole: a resuming client sees there is nothing left to send (tus: offset = length).
        if (req.method === 'HEAD' && record.size !== undefined) {
          const size = String(record.size);
          res.writeHead(200, {
            'tus-resumable': '1.0.0',
            'upload-offset': size,
            'upload-length': size,
            'cache-control': 'no-store',
          });
          res.end();
          return;
        }
        return plain(res, 409, 'this upload is complete: import_media {upload_id} says what became of it');
      }
      if (req.method === 'POST' && (await stat(join(dir, claim.id)).catch(() => undefined)))
        return plain(
          res,
          409,
          'this link has created its upload already: resume it (HEAD, then PATCH) at the same URL',
        );
      await tus.handle(req, res);
    },
    forCaller(caller, base): Uploads {
      return {
        maxBytes: opts.maxBytes,
        origin: new URL(base).origin,
        async open(project, name, maxBytes) {
          await ready;
          const claim: UploadClaim = {
            id: randomBytes(16).toString('hex'),
            project,
            name,
            caller,
            max: maxBytes,
            expires: Math.floor(Date.now() / 1000) + opts.ttlS,
          };
          const record: UploadRecord = { caller, project, name, expires: claim.expires };
          await writeFile(recordOf(dir, claim.id), JSON.stringify(record), { flag: 'wx' });
          return {
            id: claim.id,
            url: `${base}/uploads/${signUpload(secret, claim)}`,
            expiresAt: new Date(claim.expires * 1000).toISOString(),
          };
        },
        async status(id): Promise<UploadState> {
          if (!/^[0-9a-f]{32}$/.test(id)) return { state: 'unknown' };
          const record = await readRecord(dir, id);
          if (!record || record.caller !== caller) return { state: 'unknown' };
          if (record.done) return { state: 'done', project: record.project, media: record.done };
          if (record.failed) return { state: 'failed', reason: record.failed };
          const upload = await store.getUpload(id).catch(() => undefined);
          if (upload?.size !== undefined) return { state: 'receiving', received: upload.offset, total: upload.size };
          return { state: 'waiting', expiresAt: new Date(record.expires * 1000).toISOString() };
        },
      };
    },
    async sweep() {
      await ready;
      const now = Date.now() / 1000;
      let removed = 0;
      for (const entry of await readdir(dir).catch(() => [] as string[])) {
        const id = /^([0-9a-f]{32})\.cutroom\.json$/.exec(entry)?.[1];
        if (!id) continue;
        const record = await readRecord(dir, id);
        const finished = record?.done !== undefined || record?.failed !== undefined;
        if (record && now < record.expires + (finished ? 86_400 : 0)) continue;
        for (const f of [id, `${id}.json`, `${id}.cutroom.json`]) await rm(join(dir, f), { force: true });
        removed++;
      }
      return removed;
    },
  };
}
