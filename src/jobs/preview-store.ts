// Finished previews in the object store: a worker puts a preview's folder there before its job completes, and a
// server fetches it into its own cache dir when it needs it, serving it as ever (resources, never bucket links).
// Keys mirror the cache dir: <prefix><caller's folder>/previews/<id>/<file>, so one caller's previews stay theirs.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MARKER, RESULT_FILE, isPreviewId, type PreviewCache } from '../media/cache.js';
import { writerTag } from '../owners.js';
import type { PreviewStore } from '../workflow/media-runtime.js';
import type { ObjectStore } from './object-store.js';

/** Uploads at once for one preview (its files are a few: the video, the sheet, the levels, the cuts' clips). */
const AT_ONCE = 4;

/**
 * The store of the previews of one cache folder. `place` is that folder relative to CUTROOM_CACHE_DIR ('' for the
 * root, callers/<id> for a caller over HTTP): the same on every replica and worker, whatever their own dirs are.
 */
export function previewStore(objects: ObjectStore, cache: PreviewCache, place: string): PreviewStore {
  const folder = (id: string) => `${place ? `${place}/` : ''}previews/${id}/`;
  return {
    put: async (id) => {
      if (!isPreviewId(id)) throw new Error(`not a preview id: ${id}`);
      const base = folder(id);
      // A preview made before (the same edit asked again) is there already: its record is written last.
      if (await objects.exists(base + RESULT_FILE)) return;
      const dir = join(cache.root, id);
      const names = (await readdir(dir, { withFileTypes: true }))
        .filter(
          (e) =>
            e.isFile() &&
            e.name !== MARKER &&
            e.name !== RESULT_FILE &&
            !e.name.includes('.part-') &&
            !e.name.endsWith('.part'),
        )
        .map((e) => e.name);
      for (let i = 0; i < names.length; i += AT_ONCE)
        await Promise.all(names.slice(i, i + AT_ONCE).map((n) => objects.putFile(base + n, join(dir, n))));
      await objects.putFile(base + RESULT_FILE, join(dir, RESULT_FILE));
    },
    // One file of a preview still being made (a cut's clip asked for meanwhile): its record is not written, so no
    // reader takes the folder as a finished preview; put again whole with the rest when it is done.
    putFile: async (id, name) => {
      if (!isPreviewId(id) || !/^[\w.-]+$/.test(name)) throw new Error(`not a preview's file: ${id}/${name}`);
      await objects.putFile(folder(id) + name, join(cache.root, id, name));
    },
    getFile: async (id, name, to) => {
      if (!isPreviewId(id) || !/^[\w.-]+$/.test(name)) return false;
      return objects.getFile(folder(id) + name, to);
    },
    fetch: async (id) => {
      if (!isPreviewId(id)) return false;
      const base = folder(id);
      const names = (await objects.list(base)).map((k) => k.slice(base.length)).filter((n) => n && !n.includes('/'));
      // No record, no preview: one still being put (or never made) is not served half-written.
      if (!names.includes(RESULT_FILE)) return false;
      // Built under a temporary name marked by this process (as PreviewCache.create does), then renamed: no reader
      // or evictor sees it half-fetched, and a server killed meanwhile leaves a folder the evictor sweeps.
      const tmp = join(cache.root, `.new-${id}-${randomBytes(4).toString('hex')}`);
      const final = join(cache.root, id);
      await mkdir(tmp, { recursive: true });
      try {
        await writeFile(join(tmp, MARKER), `${writerTag()}\n`);
        let whole = true;
        for (let i = 0; i < names.length; i += AT_ONCE)
          for (const got of await Promise.all(
            names.slice(i, i + AT_ONCE).map((n) => objects.getFile(base + n, join(tmp, n))),
          ))
            whole &&= got;
        // An object gone between the listing and its read (expired by the bucket's lifecycle): the preview is gone.
        if (!whole) {
          await rm(tmp, { recursive: true, force: true });
          return false;
        }
        // The record names the worker's paths: this server's own, as a preview made here would.
        const record = JSON.parse(await readFile(join(tmp, RESULT_FILE), 'utf8')) as Record<string, unknown>;
        await writeFile(
          join(tmp, RESULT_FILE),
          JSON.stringify({ ...record, path: join(final, 'preview.mp4'), sheet_path: join(final, 'sheet.jpg') }),
        );
        try {
          await rename(tmp, final);
        } catch (err) {
          // Fetched meanwhile by another server sharing this dir (or a reader of this one): theirs is as good.
          const code = (err as NodeJS.ErrnoException).code;
          if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
          await rm(tmp, { recursive: true, force: true });
        }
      } catch (err) {
        await rm(tmp, { recursive: true, force: true });
        throw err;
      }
      // Held a moment, then evictable like any finished preview here (the store keeps it).
      await cache.hold(id).catch(() => {});
      return true;
    },
  };
}
