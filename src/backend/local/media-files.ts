// What the allowed folders hold: media files found by their names (no file is opened or probed here), for
// list_media and for import_media given a folder. Links are followed only where they stay inside the allowed
// folders; hidden files and folders are left out.
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, resolve } from 'node:path';
import { UserFacingError, shown } from '../../errors.js';
import { isInside } from '../../open-allowed.js';

/** A folder asked for, as a message quotes it. */
const PATH_CHARS = 300;

export type MediaKind = 'video' | 'audio' | 'image';

const EXTENSIONS: Record<MediaKind, string[]> = {
  video: ['.mp4', '.mov', '.m4v', '.mkv', '.webm', '.avi', '.mxf', '.mts', '.m2ts', '.mpg', '.mpeg', '.ts', '.wmv', '.flv', '.3gp'],
  audio: ['.wav', '.mp3', '.m4a', '.aac', '.flac', '.ogg', '.oga', '.opus', '.aif', '.aiff', '.wma', '.caf'],
  image: ['.png', '.jpg', '.jpeg', '.webp', '.gif', '.tif', '.tiff', '.bmp'],
};

/** The kind a file's name says it is, or undefined for a name that is not media's. */
export function kindByName(name: string): MediaKind | undefined {
  const ext = extname(name).toLowerCase();
  return (Object.keys(EXTENSIONS) as MediaKind[]).find((k) => EXTENSIONS[k].includes(ext));
}

export interface FoundMedia {
  path: string;
  kind: MediaKind;
  size_bytes: number;
}

export interface MediaListing {
  /** The folder listed, as resolved. */
  folder: string;
  files: FoundMedia[];
  /** Files left out and why (not media by name, a link leading outside, unreadable), at most `max` of them. */
  skipped: { path: string; reason: string }[];
  /** More media than `max` was there: the first `max` are listed. */
  truncated: boolean;
}

/** The folder `asked` names (relative to the first allowed one), resolved and checked to be inside `allowed`. */
export async function allowedFolder(asked: string, allowed: string[]): Promise<string> {
  const path = isAbsolute(asked) ? asked : resolve(allowed[0] ?? process.cwd(), asked);
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new UserFacingError(`no folder at ${shown(asked, PATH_CHARS)}`);
  }
  if (!isInside(allowed, real)) throw new UserFacingError(`${shown(asked, PATH_CHARS)} is outside the folders cutroom may read (${allowed.join(', ')}); add it to CUTROOM_ALLOWED_DIRS`);
  if (!(await stat(real)).isDirectory()) throw new UserFacingError(`${shown(asked, PATH_CHARS)} is not a folder`);
  return real;
}

/** The media files in a folder (and its subfolders with `recursive`), in name order, at most `max`. */
export async function listMedia(folder: string, allowed: string[], opts: { recursive: boolean; max: number; signal?: AbortSignal }): Promise<MediaListing> {
  const files: FoundMedia[] = [];
  const skipped: MediaListing['skipped'] = [];
  let truncated = false;
  const skip = (path: string, reason: string) => void (skipped.length < opts.max && skipped.push({ path, reason }));
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    } catch (err) {
      return skip(dir, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    for (const e of entries) {
      if (opts.signal?.aborted) throw new UserFacingError('listing the folder was cancelled');
      if (e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      let real = path;
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        real = await realpath(path).catch(() => '');
        if (!real || !isInside(allowed, real)) {
          skip(path, 'a link leading outside the folders cutroom may read');
          continue;
        }
        const st = await stat(real).catch(() => undefined);
        isDir = !!st?.isDirectory();
        isFile = !!st?.isFile();
      }
      if (isDir) {
        // Depth-bounded: a link back up the tree must not loop.
        if (opts.recursive && depth < 8) await walk(path, depth + 1);
        continue;
      }
      if (!isFile) continue;
      const kind = kindByName(e.name);
      if (!kind) {
        skip(path, 'not a media file by its name');
        continue;
      }
      if (files.length >= opts.max) {
        truncated = true;
        return;
      }
      const size = (await stat(real).catch(() => undefined))?.size ?? 0;
      files.push({ path, kind, size_bytes: size });
    }
  };
  await walk(folder, 0);
  return { folder, files, skipped, truncated };
}
