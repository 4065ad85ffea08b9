// Opening a file from the allowed folders as one descriptor, checked after opening: whatever happens to the
// name afterwards (swapped for a symlink, replaced), everything cutroom reads comes through this descriptor. Used
// for media the local backend imports, timeline files import_edit reads, and the previews and exports resources serve.
import { constants } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { UserFacingError, shown } from './errors.js';

/** A path asked for, as a message quotes it (a real path is at most 4096 bytes; a request's can be any length). */
const PATH_CHARS = 300;

export function isInside(dirs: string[], path: string): boolean {
  return dirs.some((dir) => {
    const rel = relative(dir, path);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  });
}

const changed = (asked: string) =>
  new UserFacingError(`${shown(asked, PATH_CHARS)} changed while cutroom was opening it (it was replaced, or became a link); nothing was imported: try again once it stays put`);

/**
 * Resolves `asked` (symlinks and .. included), checks that it is inside `allowed`, and opens it without
 * following a link. After opening: the descriptor must be a regular file, the very file (device and inode)
 * that the checked path names, and (on Linux, where /proc says) at a path inside the allowed folders.
 */
export async function openAllowed(asked: string, allowed: string[]): Promise<{ fh: FileHandle; real: string; size: number }> {
  let real: string;
  try {
    real = await realpath(asked);
  } catch {
    throw new UserFacingError(`no file at ${shown(asked, PATH_CHARS)}`);
  }
  if (!isInside(allowed, real)) {
    throw new UserFacingError(`${shown(asked, PATH_CHARS)}${real !== asked ? ` (which is ${real})` : ''} is outside the folders cutroom may read (${allowed.join(', ')}); move it there or add its folder to CUTROOM_ALLOWED_DIRS`);
  }
  let fh: FileHandle;
  try {
    // O_NONBLOCK: a FIFO planted under the name must not hang the call (it is refused below as not a file).
    fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw changed(asked);
    if (code === 'ENOENT') throw new UserFacingError(`no file at ${shown(asked, PATH_CHARS)}`);
    throw new UserFacingError(`cannot open ${shown(asked, PATH_CHARS)}: ${(err as Error).message}`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new UserFacingError(`${shown(asked, PATH_CHARS)} is not a file`);
    const named = await stat(real).catch(() => undefined);
    if (!named || named.dev !== st.dev || named.ino !== st.ino) throw changed(asked);
    const where = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => undefined);
    if (where !== undefined && !isInside(allowed, where.replace(/ \(deleted\)$/, ''))) throw changed(asked);
    return { fh, real, size: st.size };
  } catch (err) {
    await fh.close();
    throw err;
  }
}
