// The local backend's records on disk: one JSON file per project, asset and script, each written to a temp
// file, flushed and renamed (a crash leaves the old record or the new one, never half of one). Writers take a
// lock on the data dir, so two servers sharing it never lose each other's changes; readers need no lock.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { UserFacingError } from '../../errors.js';
import { firstIssue } from './records.js';
import { keepLease, writerGone, writerTag } from '../../owners.js';

export class CorruptRecordError extends UserFacingError {
  override name = 'CorruptRecordError';
  constructor(
    message: string,
    readonly path: string,
    readonly why: string,
  ) {
    super(message);
  }
}

/** Writes a whole file or nothing: on any failure (a full disk, say) the temporary file is removed. */
export async function writeAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.${writerTag()}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', 0o644);
  try {
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/** ENOSPC and its relatives: the disk (or the user's quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** What an agent is told when a write to the data dir found the disk full; callers undo their writes first. */
export function diskFullError(dataDir: string): UserFacingError {
  return new UserFacingError(
    `the disk holding the data dir ${dataDir} is full; nothing was changed: free some space there (or move CUTROOM_DATA_DIR) and try again`,
  );
}

/**
 * Reads a record and checks its shape: undefined when there is no file, CorruptRecordError (naming the file)
 * when it is not JSON or not of the schema's shape.
 */
export async function readRecord<T>(path: string, schema: z.ZodType<T>): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw corrupt(path, (err as Error).message);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw corrupt(path, firstIssue(parsed.error));
  return parsed.data;
}

const corrupt = (path: string, why: string) =>
  new CorruptRecordError(
    `the record ${path} is corrupt (${why}); fix it or move it out of the data dir (CUTROOM_DATA_DIR)`,
    path,
    why,
  );

export async function listJson(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

const LOCK_WAIT_MS = 15_000;
/** The lock's lease: refreshed this often while it is held, and broken when untouched for LOCK_STALE_MS. */
const LOCK_REFRESH_MS = 2_000;
const LOCK_STALE_MS = 10_000;

/**
 * Runs fn holding the data dir's lock: a directory holding its owner's tag (owners.ts), made under a temporary
 * name and renamed into place, so the lock and its owner appear together (renaming onto an existing, non-empty
 * lock fails). Its mtime is a lease, refreshed while it is held. A lock is broken when its owner is gone (a pid of
 * our pid space that no longer runs) or its lease is stale (10 s: an owner in another container or host that
 * died, or a pid reused): never only because it is old.
 */
export async function withLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(dataDir, '.lock');
  const started = Date.now();
  await mkdir(dataDir, { recursive: true });
  for (let attempt = 0; ; attempt++) {
    const mine = join(dataDir, `.lock-${writerTag()}-${randomBytes(4).toString('hex')}`);
    await mkdir(mine);
    try {
      await writeFile(join(mine, 'owner'), writerTag());
    } catch (err) {
      await rm(mine, { recursive: true, force: true });
      throw err;
    }
    try {
      await rename(mine, lock);
      break;
    } catch (err) {
      await rm(mine, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      const owner = await readFile(join(lock, 'owner'), 'utf8').catch(() => undefined);
      const touched = await stat(lock).then(
        (s) => s.mtimeMs,
        () => Date.now(),
      );
      if (writerGone(owner, touched, { leased: true, staleMs: LOCK_STALE_MS })) {
        await discard(lock, owner);
        continue;
      }
      if (Date.now() - started > LOCK_WAIT_MS)
        throw new UserFacingError(
          `the data dir ${dataDir} stayed locked for ${LOCK_WAIT_MS / 1000} s (by process ${owner?.trim() || 'unknown'}); try again`,
        );
      await new Promise((r) => setTimeout(r, Math.min(50, 5 + attempt * 5)));
    }
  }
  const stopLease = keepLease(lock, LOCK_REFRESH_MS);
  try {
    return await fn();
  } finally {
    stopLease();
    await discard(lock, writerTag());
  }
}

/**
 * Moves the lock away in one step, then deletes it: an emptied lock in place could be taken by a rename. When what
 * was moved is not the lock of `owner` (another writer took the lock between our look and the move), it is put
 * back as it was.
 */
async function discard(lock: string, owner: string | undefined): Promise<void> {
  const trash = `${lock}-released-${writerTag()}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(lock, trash);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = await readFile(join(trash, 'owner'), 'utf8').catch(() => undefined);
  if (
    moved !== owner &&
    (await rename(trash, lock).then(
      () => true,
      () => false,
    ))
  )
    return;
  await rm(trash, { recursive: true, force: true });
}
