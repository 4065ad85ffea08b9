// Which failures a job is tried again for. The machine's (a full disk, a killed process, anything unexpected) are
// retried with backoff a few times, maybe elsewhere; the input's (an edit that cannot be rendered, media that cannot
// be read) and a cancellation are not: they would fail the same way again.
import { UnrecoverableError } from 'bullmq';
import { UserFacingError } from '../errors.js';
import { redact } from '../log.js';
import { RenderError } from '../media/render-error.js';

const MACHINE =
  /disk holding the cache dir .* is full|no space left on device|killed by SIG|out of memory|ENOSPC|EIO\b|EMFILE|ENFILE/i;

export function isMachineFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  if (err instanceof UserFacingError) return MACHINE.test(err.message);
  // ffmpeg's own failures are the input's unless the disk filled or the process was killed.
  if (err instanceof RenderError) return err.noSpace || MACHINE.test(err.message);
  return true;
}

/**
 * The error a processor throws for a job's failure: UnrecoverableError unless the machine is to blame. Its message is
 * what callers are shown (`outward`: as a server's own would be).
 */
export function jobFailure(
  err: unknown,
  cancelled: boolean,
  cancelledMessage: string,
  outward: (text: string) => string = (t) => t,
): Error {
  if (cancelled) return new UnrecoverableError(cancelledMessage);
  const message = outward(err instanceof Error ? err.message : String(err));
  return isMachineFailure(err) ? new Error(message) : new UnrecoverableError(message);
}

/** What a caller is told of a job that failed for good, from BullMQ's failedReason. */
export function failureForCaller(reason: string | undefined, what: string): string {
  if (!reason) return `the ${what} failed on a worker, which said nothing more; nothing was kept`;
  if (/stalled more than allowable limit/i.test(reason))
    return `the ${what} failed: the workers that took it stopped before finishing (killed, or out of memory), more than once; nothing was kept`;
  return reason;
}

/** A caller's folder under a cache dir (callers/<hash of their key>): never shown to anyone. */
const CALLER_FOLDER = /[ /]?callers\/[0-9a-f]{32}\b/g;

/**
 * What a worker's message (a failure, a progress line) becomes before a caller is shown it: what a server's own
 * would be (over HTTP, callers.ts and remote-paths.ts). The worker's cache dir, with the caller's folder in it, is
 * "(the server's cache)", its data dir "(the server's data)", a caller's folder named anywhere is "(a caller's folder)", and the
 * `hidden` strings (the object store's address) are "(the object store)"; then the log's redaction (secrets, the
 * query strings of signed links).
 */
export function workerOutward(
  folders: { cache: string; data: string },
  hidden: string[] = [],
): (text: string) => string {
  // Longest first: one folder may lie inside the other.
  const named = [
    { dir: folders.cache, as: "(the server's cache)" },
    { dir: folders.data, as: "(the server's data)" },
  ]
    .map(({ dir, as }) => ({ dir: dir.replace(/\/+$/, ''), as }))
    .filter(({ dir }) => dir.length > 1)
    .sort((a, b) => b.dir.length - a.dir.length)
    .map(({ dir, as }) => ({
      find: new RegExp(`${escape(dir)}(?:/callers/[0-9a-f]{32})?(?=[/\\s"'<>)\\]:;,]|$)`, 'g'),
      as,
    }));
  return (text) => {
    let out = text;
    for (const { find, as } of named) out = out.replace(find, as);
    out = out.replace(CALLER_FOLDER, " (a caller's folder)");
    for (const h of hidden) if (h.length >= 4) out = out.split(h).join('(the object store)');
    return redact(out);
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
