// What inspect_asset found, kept per asset: in memory and on disk under the cache dir (inspections/, beside
// previews/). Keyed by the asset id plus what identifies its media (a local file's path, size and mtime; a link
// without its query, i.e. without the signature, which changes on every fetch): an asset's media does not change.
// For a team, each record is mirrored in its shared store (kept.ts): one replica's is read on every other (the
// keyframe thumbnails stay where they were made; a sheet drawn elsewhere takes its frames anew).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeptFiles } from '../kept.js';
import type { MediaSource } from './input.js';

/** What identifies the media behind a source (never the link's signature). */
export async function mediaIdentity(src: MediaSource): Promise<string> {
  if (src.kind === 'file') {
    const s = await stat(src.path).catch(() => undefined);
    return `file:${src.path}:${s?.size ?? '?'}:${s?.mtimeMs ?? '?'}`;
  }
  const u = new URL(src.url);
  return `${u.origin}${u.pathname}`;
}

/** Writes a file so that readers see the old content or the new, never half of it. */
export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    // A write cut short (a full disk) leaves no partial file behind.
    await rm(tmp, { force: true });
    throw err;
  }
}

/** A record's files: the record first (without it the others are never read), then what it keeps beside it. */
const SIDECARS = ['json', 'keyframes.mjpeg', 'cuts.mjpeg', 'sound.pcm'];

export class InspectionCache<T> {
  private readonly memory = new Map<string, T>();
  constructor(
    readonly dir: string,
    private readonly maxInMemory = 50,
    /** Inspections kept on disk: beyond this many, the least recently written go (JSON and thumbnails). */
    private readonly maxOnDisk = 500,
    /**
     * The folder under `dir` its records live in. Records of another folder are never counted or evicted with these
     * (transcripts' corrections, which nothing can make again, live in a folder of their own that is never trimmed).
     */
    private readonly folder = 'inspections',
    /** A team's shared store (kept.ts), when there is one. */
    private readonly kept?: KeptFiles,
    /**
     * Bytes kept on disk, a record's files together: beyond them the least recently written go too (the newest record
     * is always kept, or a record larger than the bound would be made again on every use).
     */
    private readonly maxBytesOnDisk = Infinity,
  ) {}

  get root(): string {
    return join(this.dir, this.folder);
  }

  private fileOf(key: string, ext = 'json'): string {
    return join(this.root, `${createHash('sha256').update(key).digest('hex').slice(0, 40)}.${ext}`);
  }

  /** Where the keyframe thumbnails of an inspection live (written by pass 1, read by sheets). */
  async thumbsPathOf(key: string): Promise<string> {
    await mkdir(this.root, { recursive: true });
    return this.fileOf(key, 'keyframes.mjpeg');
  }

  /** Where the sound a record was made from is kept, when it keeps one (an asset's phone pass, for its queries). */
  async soundPathOf(key: string): Promise<string> {
    await mkdir(this.root, { recursive: true });
    return this.fileOf(key, 'sound.pcm');
  }

  /** Where the thumbnails of every cut's first frame live (written by the refinement, read by sheets). */
  async cutThumbsPathOf(key: string): Promise<string> {
    await mkdir(this.root, { recursive: true });
    return this.fileOf(key, 'cuts.mjpeg');
  }

  async get(key: string): Promise<T | undefined> {
    const hit = this.memory.get(key);
    if (hit) return hit;
    try {
      const file = this.fileOf(key);
      const text = await readFile(file, 'utf8').catch(async (err: unknown) => {
        // Made on another replica: fetched from the team's store.
        if (await this.kept?.fetch(file).catch(() => false)) return readFile(file, 'utf8');
        throw err;
      });
      const stored = JSON.parse(text) as { key?: string; value?: T };
      if (stored.key !== key || !stored.value) return undefined;
      this.remember(key, stored.value);
      return stored.value;
    } catch {
      // Absent or unreadable: inspect again.
      return undefined;
    }
  }

  async set(key: string, value: T): Promise<void> {
    await mkdir(this.root, { recursive: true });
    const text = JSON.stringify({ key, value });
    await writeFileAtomic(this.fileOf(key), text);
    // Remembered once it is on disk: a write that failed (a full disk) leaves nothing to be reused.
    this.remember(key, value);
    await this.kept?.wrote(this.fileOf(key), text);
    await this.trim().catch(() => {});
  }

  /** Forgets an inspection: from memory and from disk, with its thumbnails (it is scanned again when asked for). */
  async delete(key: string): Promise<void> {
    this.memory.delete(key);
    for (const ext of SIDECARS) await rm(this.fileOf(key, ext), { force: true });
  }

  /**
   * Keeps the newest `maxOnDisk` inspections on disk, within `maxBytesOnDisk` (an evicted one is simply scanned again
   * when asked for).
   */
  async trim(): Promise<number> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const sizeOf = async (n: string) => (await stat(join(this.root, n)).catch(() => undefined))?.size ?? 0;
    const records = await Promise.all(
      names
        .filter((n) => /^[0-9a-f]{40}\.json$/.test(n))
        .map(async (n) => {
          const id = n.slice(0, 40);
          const mtime = (await stat(join(this.root, n)).catch(() => undefined))?.mtimeMs ?? 0;
          const sizes = Number.isFinite(this.maxBytesOnDisk)
            ? await Promise.all(SIDECARS.map((ext) => sizeOf(`${id}.${ext}`)))
            : [];
          return { id, mtime, bytes: sizes.reduce((a, b) => a + b, 0) };
        }),
    );
    records.sort((a, b) => b.mtime - a.mtime);
    let bytes = 0;
    const cut = records.findIndex((r, i) => {
      bytes += r.bytes;
      return i >= this.maxOnDisk || (i > 0 && bytes > this.maxBytesOnDisk);
    });
    const old = cut < 0 ? [] : records.slice(cut);
    for (const { id } of old) {
      // The record first: without it the thumbnails are never read.
      for (const ext of SIDECARS) await rm(join(this.root, `${id}.${ext}`), { force: true });
    }
    return old.length;
  }

  private remember(key: string, value: T): void {
    this.memory.delete(key);
    this.memory.set(key, value);
    if (this.memory.size > this.maxInMemory) this.memory.delete(this.memory.keys().next().value!);
  }
}
