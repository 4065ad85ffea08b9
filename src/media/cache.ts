// cutroom's own folder for previews: one folder per preview, the newest N kept within a size cap.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface PreviewCacheOptions {
  dir: string;
  keep: number;
  maxBytes: number;
}

const ID = /^\d{14}-[0-9a-f]{8}$/;
export const isPreviewId = (id: string) => ID.test(id);

export class PreviewCache {
  constructor(readonly opts: PreviewCacheOptions) {}

  get root(): string {
    return join(this.opts.dir, 'previews');
  }

  /** A new, empty folder for one preview. Ids sort by creation time. */
  async create(): Promise<{ id: string; dir: string }> {
    const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const id = `${stamp}-${randomBytes(4).toString('hex')}`;
    const dir = join(this.root, id);
    await mkdir(dir, { recursive: true });
    return { id, dir };
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
    const dated = await Promise.all(names.map(async (id) => ({ id, mtime: (await stat(join(this.root, id)).catch(() => undefined))?.mtimeMs ?? 0 })));
    return dated.sort((a, b) => b.mtime - a.mtime || b.id.localeCompare(a.id)).map((e) => e.id);
  }

  /** Removes the oldest previews beyond `keep`, then more of the oldest while over the size cap. */
  async evict(protect?: string): Promise<string[]> {
    let entries: { id: string; bytes: number; mtime: number }[] = [];
    try {
      const ids = (await readdir(this.root)).filter(isPreviewId);
      entries = await Promise.all(
        ids.map(async (id) => {
          const dir = join(this.root, id);
          let bytes = 0;
          let mtime = 0;
          for (const f of await readdir(dir).catch(() => [] as string[])) {
            const s = await stat(join(dir, f)).catch(() => undefined);
            if (s) {
              bytes += s.size;
              mtime = Math.max(mtime, s.mtimeMs);
            }
          }
          return { id, bytes, mtime };
        }),
      );
    } catch {
      return [];
    }
    entries.sort((a, b) => b.mtime - a.mtime || b.id.localeCompare(a.id));
    const removed: string[] = [];
    let total = entries.reduce((s, e) => s + e.bytes, 0);
    for (const [i, e] of entries.entries()) {
      if (e.id === protect) continue;
      if (i >= this.opts.keep || total > this.opts.maxBytes) {
        await rm(join(this.root, e.id), { recursive: true, force: true });
        total -= e.bytes;
        removed.push(e.id);
      }
    }
    return removed;
  }
}
