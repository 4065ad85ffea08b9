// Who wrote what: the test behind every "left behind by a process that is gone" sweep (local records, the data
// dir's lock, render records, previews, exports, scratch files, orphaned ffmpeg). Shared by every room that sweeps,
// so they agree on what "gone" is.
//
// A pid alone names nothing outside its pid namespace: replicas in separate containers (or on separate hosts)
// sharing one volume would take each other's live work for a dead process's. So a writer is tagged `<pid>@<space>`,
// where the space is a hash of the machine's boot id and the pid namespace. A tag from our own space is judged by
// its pid (and, for processes, their start time); a tag from another space cannot be judged by pid, only by its
// lease: the file's mtime, refreshed every LEASE_REFRESH_MS while its work runs, stale after LEASE_STALE_MS.
// A bare pid (what earlier versions wrote) is judged as one of ours.
import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { utimes } from 'node:fs/promises';
import { hostname } from 'node:os';

/** How often a lease (a marker's mtime) is refreshed while its work runs. */
export const LEASE_REFRESH_MS = 10_000;
/** A lease from another pid namespace or host untouched for this long is a dead writer's. */
export const LEASE_STALE_MS = 60_000;

let space: string | undefined;
/** This process's pid space: 8 hex digits of the boot id (or the host name) and the pid namespace. */
export function pidSpace(): string {
  if (space) return space;
  const read = (f: () => string) => {
    try {
      return f().trim();
    } catch {
      return '';
    }
  };
  const boot = read(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')) || `host:${hostname()}`;
  const ns = read(() => readlinkSync('/proc/self/ns/pid'));
  space = createHash('sha256').update(`${boot}\n${ns}`).digest('hex').slice(0, 8);
  return space;
}

/** This process as a writer: `<pid>@<space>`, for names and markers. */
export const writerTag = (): string => `${process.pid}@${pidSpace()}`;

/** The pattern of a writer tag in a name (a bare pid too), as a capturing group. */
export const TAG = '(\\d+(?:@[0-9a-f]{8})?)';

export interface Writer {
  pid: number;
  /** Undefined for a bare pid (treated as ours). */
  space?: string;
}

/** Reads a tag (`1234@0a1b2c3d` or `1234`); undefined when it is neither. */
export function parseTag(text: string): Writer | undefined {
  const m = /^(\d+)(?:@([0-9a-f]{8}))?$/.exec(text.trim());
  if (!m) return undefined;
  return { pid: Number(m[1]), ...(m[2] ? { space: m[2] } : {}) };
}

export const isOurSpace = (w: Writer): boolean => w.space === undefined || w.space === pidSpace();

/**
 * Whether what `tag` wrote is a dead writer's. Ours: its process is gone (never when it is this process). Another
 * space's: its lease, `touchedMs` (the mtime of the file or marker), is older than LEASE_STALE_MS. An unreadable
 * tag is judged by its lease alone. With `leased` (the marker's lease is kept while its work runs), a stale lease
 * is a dead writer's in our space too: a pid reused by another process, or a writer frozen for a minute.
 */
export function writerGone(
  tag: string | Writer | undefined,
  touchedMs: number,
  opts: { leased?: boolean; staleMs?: number; now?: number } = {},
): boolean {
  const w = typeof tag === 'string' ? parseTag(tag) : tag;
  const stale = (opts.now ?? Date.now()) - touchedMs > (opts.staleMs ?? LEASE_STALE_MS);
  if (w && isOurSpace(w)) return w.pid !== process.pid && (!processAlive(w.pid) || (!!opts.leased && stale));
  return stale;
}

/** Whether a process with this pid is running: EPERM means it runs as another user; a zombie is gone. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process not yet reaped by its parent (a zombie) still answers kill(0): it is dead all the same.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** A process's start time (clock ticks since boot, from /proc), to tell a pid reused from the one tagged. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Keeps the lease on `path` (a marker) while its work runs: its mtime is refreshed every LEASE_REFRESH_MS until
 * the returned function is called or the file is gone.
 */
export function keepLease(path: string, everyMs = LEASE_REFRESH_MS): () => void {
  const timer = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') clearInterval(timer);
    });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
