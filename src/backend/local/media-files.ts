// What the allowed folders hold: media files found by their names (no file is opened or probed here), for
// list_media and for import_media given a folder. Links are followed only where they stay inside the allowed
// folders; each folder is walked once (by device and inode, so links back up the tree cost nothing) and each file
// listed once, however many names lead to it. A walk is bounded (WALK_DEPTH levels, WALK_ENTRIES entries a call),
// and everything it passes over is named with its reason: nothing is left out without a word.
import type { Dirent, Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, resolve } from 'node:path';
import { UserFacingError, shown } from '../../errors.js';
import { displayPath, fsPath, isInside, notReadable, realPathOf } from '../../open-allowed.js';

/** A folder asked for, as a message quotes it. */
const PATH_CHARS = 300;

export type MediaKind = 'video' | 'audio' | 'image';

const EXTENSIONS: Record<MediaKind, string[]> = {
  video: [
    '.mp4',
    '.mov',
    '.m4v',
    '.mkv',
    '.webm',
    '.avi',
    '.mxf',
    '.mts',
    '.m2ts',
    '.mpg',
    '.mpeg',
    '.ts',
    '.wmv',
    '.flv',
    '.3gp',
  ],
  audio: ['.wav', '.mp3', '.m4a', '.aac', '.flac', '.ogg', '.oga', '.opus', '.aif', '.aiff', '.wma', '.caf'],
  image: ['.png', '.jpg', '.jpeg', '.webp', '.gif', '.tif', '.tiff', '.bmp'],
};

/** The kind a file's name says it is, or undefined for a name that is not media's. */
export function kindByName(name: string): MediaKind | undefined {
  const ext = extname(name).toLowerCase();
  return (Object.keys(EXTENSIONS) as MediaKind[]).find((k) => EXTENSIONS[k].includes(ext));
}

/**
 * Folders more than this many levels below the folder asked are not walked (they are named, to be asked for
 * themselves).
 */
export const WALK_DEPTH = 8;
/** The most directory entries one call reads, over all its walks. */
export const WALK_ENTRIES = 20_000;

/** Why the walk passed over an entry. */
export type SkipKind =
  | 'hidden'
  | 'not_media'
  | 'not_file'
  | 'subfolder'
  | 'too_deep'
  | 'link_outside'
  | 'broken_link'
  | 'same_file'
  | 'same_folder'
  | 'permission'
  | 'unreadable'
  | 'not_read';

/** Each kind in a few words, for a count of them (list_media), and the reason of one where it says all. */
export const SKIP_REASONS: Record<SkipKind, string> = {
  hidden: 'hidden (a name starting with a dot)',
  not_media: 'not a media file by its name',
  not_file: 'not a file or a folder',
  subfolder: 'a folder: recursive: true walks it',
  too_deep: `a folder more than ${WALK_DEPTH} levels down: give it as a folder of its own`,
  link_outside: 'a link leading outside the folders cutroom may read',
  broken_link: 'a link to nothing',
  same_file: 'another name of a file listed',
  same_folder: 'a link to a folder listed already',
  permission: 'permission denied',
  unreadable: 'cannot be read',
  not_read: `not read: a call reads at most ${WALK_ENTRIES} entries; give it as a folder of its own`,
};

export interface FoundMedia {
  path: string;
  kind: MediaKind;
  size_bytes: number;
}

export interface Skipped {
  path: string;
  kind: SkipKind;
  reason: string;
}

export interface MediaListing {
  /** The folder listed, as resolved (and shown: see displayPath). */
  folder: string;
  /** In path order (comparePaths), each file once. */
  files: FoundMedia[];
  /** Everything passed over, in path order. */
  skipped: Skipped[];
  /** The walk reached WALK_ENTRIES: what it did not read. */
  truncated?: { entries_not_read: number; folders_not_read: number };
}

/** What a path given to import_media names: a folder's listing, a file to import, or why it names neither. */
export interface ImportTarget {
  asked: string;
  folder?: MediaListing;
  error?: string;
}

/** What one call may still read, shared by its walks. */
export class WalkBudget {
  constructor(public entries = WALK_ENTRIES) {}
}

/** Strings in code-unit order. */
function compareCodeUnits(a: string, b: string): number {
  if (a < b) return -1;
  if (a > b) return 1;
  return 0;
}

/** Names in the order a person expects, ties (names the collation holds equal) broken by code points: a total order. */
export const compareNames = (a: string, b: string) => a.localeCompare(b) || compareCodeUnits(a, b);

/** Paths in the order a walk meets them, folder by folder (each name before what is inside it). */
export function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = compareNames(x[i]!, y[i]!);
    if (c) return c;
  }
  return x.length - y.length;
}

/**
 * The folder `asked` names (relative to the first allowed one), resolved and checked to be inside `allowed`; as shown.
 */
export async function allowedFolder(asked: string, allowed: string[]): Promise<string> {
  const path = isAbsolute(asked) ? asked : resolve(allowed[0] ?? process.cwd(), asked);
  let real: Buffer;
  let st: Stats;
  try {
    real = await realPathOf(path);
    st = await stat(real);
  } catch (err) {
    throw notReadable(asked, err, 'folder');
  }
  if (!isInside(allowed, real))
    throw new UserFacingError(
      `${shown(asked, PATH_CHARS)} is outside the folders cutroom may read (${allowed.join(', ')}); add it to CUTROOM_ALLOWED_DIRS`,
    );
  if (!st.isDirectory()) throw new UserFacingError(`${shown(asked, PATH_CHARS)} is not a folder`);
  return displayPath(real);
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;
/** Why an entry could not be looked at, from what the system said. */
const failure = (err: unknown, link = false): [SkipKind, string] => {
  const code = errno(err);
  if (code === 'EACCES' || code === 'EPERM') return ['permission', SKIP_REASONS.permission];
  if (link && code === 'ENOENT') return ['broken_link', SKIP_REASONS.broken_link];
  if (link && code === 'ELOOP') return ['broken_link', 'a loop of links'];
  return ['unreadable', `cannot be read (${code})`];
};

interface Candidate extends FoundMedia {
  /** Device and inode: one file under several names is listed once. */
  id: string;
  /** Reached through a link: a name that is not a link is preferred. */
  viaLink: boolean;
}

const asBytes = (p: string | Buffer) => (typeof p === 'string' ? Buffer.from(p) : p);
const under = (dir: string, name: string) => (dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`);
const underRaw = (dir: Buffer, name: Buffer) =>
  Buffer.concat(dir.at(-1) === 0x2f ? [dir, name] : [dir, Buffer.from('/'), name]);

/**
 * The media files in a folder (shown as displayPath shows it), and its subfolders with `recursive`: each folder
 * walked once and each file listed once; at most WALK_DEPTH levels down and as many entries as `budget` still allows.
 * Folders reached through a link are walked after every folder reached without one, so that a file is listed under
 * the name that is not a link's.
 */
export async function listMedia(
  folder: string,
  allowed: string[],
  opts: { recursive: boolean; budget: WalkBudget; signal?: AbortSignal },
): Promise<MediaListing> {
  const { recursive, budget, signal } = opts;
  const found: Candidate[] = [];
  const skipped: Skipped[] = [];
  const truncated = { entries_not_read: 0, folders_not_read: 0 };
  const walked = new Map<string, string>();
  const linked: { raw: Buffer; shown: string; depth: number }[] = [];
  const skip = (path: string, kind: SkipKind, reason = SKIP_REASONS[kind]) => void skipped.push({ path, kind, reason });

  const walk = async (raw: Buffer, shown: string, depth: number, viaLink: boolean): Promise<void> => {
    if (budget.entries <= 0) {
      truncated.folders_not_read++;
      return skip(shown, 'not_read');
    }
    let entries: { e: Dirent<Buffer>; name: string }[];
    try {
      // Resolved again here: a folder turned into a link since its parent was read leads nowhere outside.
      raw = await realpath(raw, { encoding: 'buffer' });
      if (!isInside(allowed, raw)) return skip(shown, 'link_outside');
      const st = await stat(raw);
      const seen = walked.get(`${st.dev}:${st.ino}`);
      if (seen !== undefined) return skip(shown, 'same_folder', `a link to ${seen}, listed already`);
      walked.set(`${st.dev}:${st.ino}`, shown);
      entries = (await readdir(raw, { withFileTypes: true, encoding: 'buffer' })).map((e) => ({
        e,
        name: displayPath(e.name),
      }));
    } catch (err) {
      return skip(shown, ...failure(err));
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    for (const [i, { e, name }] of entries.entries()) {
      if (signal?.aborted) throw new UserFacingError('listing the folder was cancelled');
      if (budget.entries <= 0) {
        const left = entries.length - i;
        truncated.entries_not_read += left;
        skip(
          shown,
          'not_read',
          `${left} of its entries not read: a call reads at most ${WALK_ENTRIES}; give its subfolders as folders of their own`,
        );
        break;
      }
      budget.entries--;
      const path = under(shown, name);
      if (name.startsWith('.')) {
        skip(path, 'hidden');
        continue;
      }
      let target = underRaw(raw, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      const isLink = e.isSymbolicLink();
      if (isLink) {
        try {
          target = await realpath(target, { encoding: 'buffer' });
          if (!isInside(allowed, target)) {
            skip(path, 'link_outside');
            continue;
          }
          const st = await stat(target);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch (err) {
          skip(path, ...failure(err, true));
          continue;
        }
      }
      if (isDir) {
        if (!recursive) skip(path, 'subfolder');
        else if (depth >= WALK_DEPTH) skip(path, 'too_deep');
        else if (isLink) linked.push({ raw: target, shown: path, depth: depth + 1 });
        else await walk(target, path, depth + 1, viaLink);
        continue;
      }
      if (!isFile) {
        skip(path, 'not_file');
        continue;
      }
      const kind = kindByName(name);
      if (!kind) {
        skip(path, 'not_media');
        continue;
      }
      try {
        const st = await stat(target);
        found.push({ path, kind, size_bytes: st.size, id: `${st.dev}:${st.ino}`, viaLink: viaLink || isLink });
      } catch (err) {
        skip(path, ...failure(err));
      }
    }
  };

  await walk(asBytes(fsPath(folder)), folder, 0, false);
  for (let next = linked.shift(); next; next = linked.shift()) await walk(next.raw, next.shown, next.depth, true);

  // One file, one entry: the name that is not a link's, else the first in order; the others are named as its.
  const byFile = new Map<string, Candidate[]>();
  for (const c of found) byFile.set(c.id, [...(byFile.get(c.id) ?? []), c]);
  const files: FoundMedia[] = [];
  for (const names of byFile.values()) {
    names.sort((a, b) => Number(a.viaLink) - Number(b.viaLink) || comparePaths(a.path, b.path));
    const [kept, ...others] = names;
    files.push({ path: kept!.path, kind: kept!.kind, size_bytes: kept!.size_bytes });
    for (const o of others) skip(o.path, 'same_file', `the same file as ${kept!.path}`);
  }
  files.sort((a, b) => comparePaths(a.path, b.path));
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return { folder, files, skipped, ...(truncated.entries_not_read || truncated.folders_not_read ? { truncated } : {}) };
}
