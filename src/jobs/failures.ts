// Which failures a job is tried again for. The machine's (a full disk, a killed process, anything unexpected) are
// retried with backoff a few times, maybe elsewhere; the input's (an edit that cannot be rendered, media that cannot
// be read) and a cancellation are not: they would fail the same way again.
import { UnrecoverableError } from 'bullmq';
import { UserFacingError } from '../errors.js';
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

/** The error a processor throws for a job's failure: UnrecoverableError unless the machine is to blame. */
export function jobFailure(err: unknown, cancelled: boolean, cancelledMessage: string): Error {
  if (cancelled) return new UnrecoverableError(cancelledMessage);
  const message = err instanceof Error ? err.message : String(err);
  return isMachineFailure(err) ? new Error(message) : new UnrecoverableError(message);
}

/** What a caller is told of a job that failed for good, from BullMQ's failedReason. */
export function failureForCaller(reason: string | undefined, what: string): string {
  if (!reason) return `the ${what} failed on a worker, which said nothing more; nothing was kept`;
  if (/stalled more than allowable limit/i.test(reason))
    return `the ${what} failed: the workers that took it stopped before finishing (killed, or out of memory), more than once; nothing was kept`;
  return reason;
}
