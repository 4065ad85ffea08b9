// State a later call may name (kept edits, transcripts, inspections, remembered names, exports), as every replica of
// a team reads it (DESIGN.md: one seam for it). Each store keeps its files under its own folder, the data dir or the
// cache dir, as on one machine; with a team's shared store (jobs/kept-store.ts: the bucket, or Redis) each file
// written is put there too, under its path relative to that folder, and a file missing here is fetched from there,
// so a replica never answers "not kept here" for what another made. Without one, the folder alone (shared or not).
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, relative, sep } from 'node:path';

/** Where a team keeps documents every replica reads: whole values by key, each written whole or not at all. */
export interface SharedKept {
  put(key: string, bytes: Buffer): Promise<void>;
  /** The value of a key; undefined when there is none. */
  get(key: string): Promise<Buffer | undefined>;
  /** Where, for an error (the bucket and prefix, or the queue's Redis; never an address with credentials). */
  readonly shown: string;
}

/** One folder's files mirrored in the shared store: `space` names the folder kind (data, cache), `root` its path. */
export class KeptFiles {
  constructor(
    private readonly shared: SharedKept,
    private readonly root: string,
    private readonly space: 'data' | 'cache',
  ) {}

  /** The key of a file under the root; undefined for one outside it (never mirrored). */
  private keyOf(path: string): string | undefined {
    const rel = relative(this.root, path);
    if (!rel || rel.startsWith('..') || rel.startsWith(sep)) return undefined;
    return `${this.space}/${rel.split(sep).join('/')}`;
  }

  /** Puts a file just written here (with these bytes) in the shared store. */
  async wrote(path: string, bytes: Buffer | string): Promise<void> {
    const key = this.keyOf(path);
    if (key) await this.shared.put(key, Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'utf8'));
  }

  /**
   * Brings a file another replica wrote into its place here (under a temporary name, renamed when whole: two readers
   * fetching at once both leave a whole file); false when the shared store has none.
   */
  async fetch(path: string): Promise<boolean> {
    const key = this.keyOf(path);
    const bytes = key ? await this.shared.get(key) : undefined;
    if (!bytes) return false;
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, bytes);
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return true;
  }
}
