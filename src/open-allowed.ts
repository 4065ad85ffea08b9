// Opening a file from the allowed folders as one descriptor (no link, no FIFO), checked after opening: whatever
// happens to the name afterwards (swapped for a symlink, replaced), everything cutroom reads comes through this
// descriptor. Used for media the local backend imports, timeline files import_edit reads, and the previews and
// exports resources serve. Also the names the tools show for files: a name that is not UTF-8 is shown in a form that
// maps back to its bytes.
import { isUtf8 } from 'node:buffer';
import { constants } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { UserFacingError, shown } from './errors.js';

/** A path asked for, as a message quotes it (a real path is at most 4096 bytes; a request's can be any length). */
export const PATH_CHARS = 300;

/**
 * Whether `path` (resolved) is one of `dirs` or inside one. A path of raw bytes that is not UTF-8 is compared byte by
 * byte.
 */
export function isInside(dirs: string[], path: string | Buffer): boolean {
  if (typeof path !== 'string') {
    if (isUtf8(path)) return isInside(dirs, path.toString('utf8'));
    return dirs.some((dir) => {
      const d = Buffer.from(resolve(dir));
      const prefix = d.toString().endsWith(sep) ? d : Buffer.concat([d, Buffer.from(sep)]);
      return path.length > prefix.length && path.subarray(0, prefix.length).equals(prefix);
    });
  }
  return dirs.some((dir) => {
    const rel = relative(dir, path);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  });
}

// The escapes of a shown name: a byte that is not part of UTF-8 (0x80 and up), and a backslash (0x5C) that would
// otherwise read as one. Nothing else is ever decoded, so a shown name cannot smuggle a '/' or a '..'.
const ESCAPE = /\\x([89a-fA-F][0-9a-fA-F]|5[cC])/;
const ESCAPES = new RegExp(ESCAPE.source, 'g');
const LITERAL_BACKSLASH = /\\(?=x(?:[89a-fA-F][0-9a-fA-F]|5[cC]))/g;

/** The bytes a lead byte says its UTF-8 sequence has, or 0 for a byte that cannot start one. */
function sequenceLength(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/**
 * A path (or a name) as the tools show it. UTF-8 comes as it is; a byte that is not part of valid UTF-8 is shown as
 * `\xNN`, and then a backslash that would read as such an escape as `\x5C`, so that fsPath() maps the shown form back
 * to the very bytes (like Python's surrogate escapes, in a form that survives JSON and a model's copying).
 */
export function displayPath(raw: Buffer): string {
  if (isUtf8(raw)) {
    const text = raw.toString('utf8');
    if (!ESCAPE.test(text)) return text;
  }
  let out = '';
  let run = 0;
  const flush = (end: number) => void (out += raw.toString('utf8', run, end).replace(LITERAL_BACKSLASH, '\\x5C'));
  for (let i = 0; i < raw.length;) {
    const n = sequenceLength(raw[i]!);
    if (n && i + n <= raw.length && isUtf8(raw.subarray(i, i + n))) {
      i += n;
      continue;
    }
    flush(i);
    out += `\\x${raw[i]!.toString(16).toUpperCase()}`;
    run = ++i;
  }
  flush(raw.length);
  return out;
}

/** The file system's name for a path shown by displayPath(): the string itself, or its bytes when it holds escapes. */
export function fsPath(shown: string): string | Buffer {
  if (!ESCAPE.test(shown)) return shown;
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of shown.matchAll(ESCAPES)) {
    parts.push(Buffer.from(shown.slice(last, m.index), 'utf8'), Buffer.from([parseInt(m[1]!, 16)]));
    last = m.index + m[0].length;
  }
  parts.push(Buffer.from(shown.slice(last), 'utf8'));
  return Buffer.concat(parts);
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** One line for a name that could not be resolved or opened: what errno says, in words. */
export function notReadable(path: string, err: unknown, what = 'file'): UserFacingError {
  const asked = shown(path, PATH_CHARS);
  switch (code(err)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new UserFacingError(`no ${what} at ${asked}`);
    case 'EACCES':
    case 'EPERM':
      return new UserFacingError(
        `permission denied: cutroom's user may not read ${asked} (or a folder on its way); give it read access`,
      );
    case 'ELOOP':
      return new UserFacingError(`${asked} is a loop of links`);
    case 'ENAMETOOLONG':
      return new UserFacingError(`${asked} is too long a name for this machine's file system`);
    default:
      // The system's own message names the path again, whole: say the code instead.
      return new UserFacingError(
        `cannot open ${asked} (${code(err) ?? shown((err as Error).message ?? String(err), 200)})`,
      );
  }
}

/**
 * The real path (links and .. resolved) of a path as the tools show it, as bytes. A shown name with escapes is
 * read as the bytes they stand for; when nothing has those bytes, as the name typed (a name may hold `\x..` itself).
 */
export async function realPathOf(shown: string): Promise<Buffer> {
  const named = fsPath(shown);
  try {
    return await realpath(named, { encoding: 'buffer' });
  } catch (err) {
    if (typeof named !== 'string' && code(err) === 'ENOENT') return await realpath(shown, { encoding: 'buffer' });
    throw err;
  }
}

const changed = (asked: string) =>
  new UserFacingError(
    `${shown(asked, PATH_CHARS)} changed while cutroom was opening it (it was replaced, or became a link); nothing was imported: try again once it stays put`,
  );

/**
 * Resolves `asked` (symlinks and .. included), checks that it is inside `allowed`, and opens it without
 * following a link. After opening: the descriptor must be a regular file, the very file (device and inode)
 * that the checked path names, and (on Linux, where /proc says) at a path inside the allowed folders.
 * `real` is the resolved path as the tools show it (displayPath).
 */
export async function openAllowed(
  asked: string,
  allowed: string[],
): Promise<{ fh: FileHandle; real: string; size: number }> {
  let raw: Buffer;
  try {
    raw = await realPathOf(asked);
  } catch (err) {
    throw notReadable(asked, err);
  }
  const real = displayPath(raw);
  if (!isInside(allowed, raw)) {
    throw new UserFacingError(
      `${shown(asked, PATH_CHARS)}${real !== asked ? ` (which is ${real})` : ''} is outside the folders cutroom may read (${allowed.join(', ')}); move it there or add its folder to CUTROOM_ALLOWED_DIRS`,
    );
  }
  let fh: FileHandle;
  try {
    // O_NONBLOCK: a FIFO planted under the name must not hang the call (it is refused below as not a file).
    fh = await open(raw, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (code(err) === 'ELOOP') throw changed(asked);
    throw notReadable(asked, err);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new UserFacingError(`${shown(asked, PATH_CHARS)} is not a file`);
    const named = await stat(raw).catch(() => undefined);
    if (!named || named.dev !== st.dev || named.ino !== st.ino) throw changed(asked);
    const where = await readlink(`/proc/self/fd/${fh.fd}`, { encoding: 'buffer' }).catch(() => undefined);
    const deleted = Buffer.from(' (deleted)');
    const at =
      where && where.length > deleted.length && where.subarray(-deleted.length).equals(deleted)
        ? where.subarray(0, -deleted.length)
        : where;
    if (at !== undefined && !isInside(allowed, at)) throw changed(asked);
    return { fh, real, size: st.size };
  } catch (err) {
    await fh.close();
    throw err;
  }
}
