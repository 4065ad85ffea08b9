// cutroom's own folder for previews: one folder per preview, the newest N finished ones kept within a size cap.
// Several server processes may share the folder, in one pid namespace or several (replicas on a shared volume). A
// preview being made carries a marker naming its writer (owners.ts), whose mtime is its lease: no evictor touches
// it while that writer lives, and it is swept once the writer is gone (a killed server's).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killOrphans } from './process.js';
import { keepLease, writerGone, writerTag } from '../owners.js';

export interface PreviewCacheOptions {
  dir: string;
  keep: number;
  maxBytes: number;
}

const ID = /^\d{14}-[0-9a-f]{8}$/;
export const isPreviewId = (id: string) => ID.test(id);

/** The in-progress marker inside a preview folder: the pid of the process making it. */
export const MARKER = '.rendering';
/** A finished preview's result, written last: its presence means the preview is complete. */
export const RESULT_FILE = 'preview.json';
/** How long a returned preview is held against eviction (see complete). */
const HOLD_MS = 5_000;

export class PreviewCache {
  constructor(readonly opts: PreviewCacheOptions) {}

  get root(): string {
    return join(this.opts.dir, 'previews');
  }

  /**
   * A new folder for one preview, marked in progress by this process. It is built under a temporary name and
   * renamed, so no evictor (of any process) ever sees it without its marker. Ids sort by creation time.
   */
  async create(): Promise<{ id: string; dir: string }> {
    const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const id = `${stamp}-${randomBytes(4).toString('hex')}`;
    const dir = join(this.root, id);
    const tmp = join(this.root, `.new-${id}`);
    await mkdir(tmp, { recursive: true });
    try {
      await writeFile(join(tmp, MARKER), `${writerTag()}\n`);
      await rename(tmp, dir);
      keepLease(join(dir, MARKER));
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
    return { id, dir };
  }

  /**
   * Records a finished preview (its result, written last) and evicts. The preview stays held by this process
   * for HOLD_MS: counted towards `keep` but never removed, so that its path is still there when the caller
   * gets it even while many other previews finish; then it is released and the cache evicted again.
   */
  async complete(id: string, record: string): Promise<void> {
    await writeFile(join(this.root, id, RESULT_FILE), record);
    await this.evict(id);
    setTimeout(() => void this.release(id), HOLD_MS).unref();
  }

  /**
   * Holds a finished preview again, as `complete` does, when it is handed out a second time (the same edit
   * previewed again): made the newest and kept from eviction for HOLD_MS.
   */
  async hold(id: string): Promise<void> {
    const now = new Date();
    await utimes(join(this.root, id, RESULT_FILE), now, now);
    await writeFile(join(this.root, id, MARKER), `${writerTag()}\n`);
    setTimeout(() => void this.release(id), HOLD_MS).unref();
  }

  private async release(id: string): Promise<void> {
    await unlink(join(this.root, id, MARKER)).catch(() => {});
    await this.evict().catch(() => {});
  }

  /** The path of a file of a preview, or undefined when the id or name is not one cutroom made. */
  fileOf(id: string, name: string): string | undefined {
    if (!isPreviewId(id) || !['preview.mp4', 'sheet.jpg'].includes(name)) return undefined;
    return join(this.root, id, name);
  }

  /** The ids of the previews in the cache, the most recently written first. */
  async ids(): Promise<string[]> {
    const names = (await readdir(this.root).catch(() => [] as string[])).filter(isPreviewId);
    // Ids carry their second of creation; the folder's mtime orders previews made within one second.
    const dated = await Promise.all(
      names.map(async (id) => ({ id, mtime: (await stat(join(this.root, id)).catch(() => undefined))?.mtimeMs ?? 0 })),
    );
    return dated.sort((a, b) => b.mtime - a.mtime || b.id.localeCompare(a.id)).map((e) => e.id);
  }

  /** Whether the preview is still being made by a live process. */
  async inProgress(id: string): Promise<boolean> {
    return isPreviewId(id) && (await this.stateOf(join(this.root, id))).state === 'making';
  }

  /**
   * A preview folder's state. making: unfinished, its process alive; dead: unfinished, its process gone;
   * held: finished, just returned by its live process; finished. `since` orders finished ones: when their
   * result was written (the folder's own mtime for previews of older versions).
   */
  private async stateOf(dir: string): Promise<{ state: 'making' | 'dead' | 'held' | 'finished'; since: number }> {
    const marker = join(dir, MARKER);
    const [owner, touched] = await Promise.all([
      readFile(marker, 'utf8').catch(() => undefined),
      stat(marker).then(
        (s) => s.mtimeMs,
        () => undefined,
      ),
    ]);
    const result = await stat(join(dir, RESULT_FILE)).catch(() => undefined);
    const since =
      result?.mtimeMs ??
      (await stat(dir).then(
        (s) => s.mtimeMs,
        () => 0,
      ));
    if (touched === undefined) return { state: 'finished', since };
    // A marker being written (empty) is judged by its lease: fresh, so live.
    const live = !writerGone(owner, touched, { leased: true });
    if (result) return { state: live ? 'held' : 'finished', since };
    return { state: live ? 'making' : 'dead', since };
  }

  /**
   * Removes the oldest finished previews beyond `keep`, then more of the oldest while over the size cap. A
   * preview being made is never touched nor counted, and one whose process is gone is removed; a held one counts
   * but stays.
   */
  async evict(protect?: string): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return [];
    }
    const removed: string[] = [];
    const remove = async (name: string) => {
      await rm(join(this.root, name), { recursive: true, force: true });
      removed.push(name);
    };
    const finished: { id: string; bytes: number; since: number; held: boolean }[] = [];
    for (const name of names) {
      const dir = join(this.root, name);
      // A folder under construction whose process died before the rename.
      if (name.startsWith('.new-')) {
        const owner = await readFile(join(dir, MARKER), 'utf8').catch(() => undefined);
        const touched = await stat(dir).then(
          (s) => s.mtimeMs,
          () => Date.now(),
        );
        if (writerGone(owner, touched)) await remove(name);
        continue;
      }
      if (!isPreviewId(name)) continue;
      const { state, since } = await this.stateOf(dir);
      if (state === 'making') continue;
      if (state === 'dead') {
        // ffmpeg outlives a killed server: stop any still writing here before the folder goes.
        await killOrphans(`${dir}/`);
        await remove(name);
        continue;
      }
      let bytes = 0;
      for (const f of await readdir(dir).catch(() => [] as string[]))
        bytes += (await stat(join(dir, f)).catch(() => undefined))?.size ?? 0;
      finished.push({ id: name, bytes, since, held: state === 'held' });
    }
    finished.sort((a, b) => b.since - a.since || b.id.localeCompare(a.id));
    let total = finished.reduce((s, e) => s + e.bytes, 0);
    for (const [i, e] of finished.entries()) {
      if (e.id === protect || e.held) continue;
      if (i >= this.opts.keep || total > this.opts.maxBytes) {
        await remove(e.id);
        total -= e.bytes;
      }
    }
    return removed;
  }
}
