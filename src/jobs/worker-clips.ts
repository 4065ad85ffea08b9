// A worker's side of a cut's clip asked for while its preview renders, with an object store: servers cannot read
// this worker's segments, so the worker that runs the job makes the clip (as in-process: once, a few at once,
// stopped with the preview), puts it in the store beside the preview's other files, and answers through Redis.
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { UserFacingError } from '../errors.js';
import { clipFile } from '../workflow/preview.js';
import type { MediaRuntime } from '../workflow/media-runtime.js';
import type { PreviewJob } from '../workflow/preview-types.js';
import { MARK_TTL_S, clipFailedKey, clipMadeKey } from './connection.js';

/** How long a failure's answer is kept: read by the server waiting for it within a second or two. */
const FAILED_TTL_S = 120;

export interface ClipAsk {
  job: string;
  preview: string;
  cut: number;
  ask: string;
}

/** A message on CLIP_CHANNEL, or undefined when it is not one (never trusted beyond its shape). */
export function clipAskOf(message: string): ClipAsk | undefined {
  try {
    const m = JSON.parse(message) as Partial<ClipAsk>;
    if (
      typeof m.job !== 'string' ||
      typeof m.preview !== 'string' ||
      typeof m.ask !== 'string' ||
      !Number.isInteger(m.cut) ||
      (m.cut as number) < 0
    )
      return undefined;
    if (m.job.length > 200 || m.preview.length > 100 || !/^[0-9a-f]{16,64}$/.test(m.ask)) return undefined;
    return m as ClipAsk;
  } catch {
    return undefined;
  }
}

/** The handler of CLIP_CHANNEL's messages: `making` holds the previews this worker runs, by job id. */
export function answerClips(
  conn: Redis,
  making: Map<string, { preview: PreviewJob; rt: MediaRuntime }>,
  logger: Logger,
): (message: string) => void {
  // Puts in flight, by job, preview and cut: several servers asking at once wait for one.
  const putting = new Map<string, Promise<void>>();
  return (message) => {
    const ask = clipAskOf(message);
    const here = ask && making.get(ask.job);
    // Another worker runs it (every worker hears every request).
    if (!ask || !here) return;
    const { preview: p, rt } = here;
    const fail = (why: string) => void conn.set(clipFailedKey(ask.ask), why, 'EX', FAILED_TTL_S).catch(() => {});
    if (p.id !== ask.preview)
      return fail(
        `preview ${ask.preview} was started anew on another worker (as ${p.id}): follow preview_edit {preview_id} to its end and play preview.mp4`,
      );
    if (!rt.store) return fail('this worker keeps no previews in an object store');
    const slot = `${ask.job}\0${p.id}\0${ask.cut}`;
    let put = putting.get(slot);
    if (!put) {
      const store = rt.store;
      put = p
        .clip(ask.cut)
        .then(() => store.putFile(p.id, clipFile(ask.cut)))
        .then(async () => void (await conn.set(clipMadeKey(ask.job, p.id, ask.cut), '1', 'EX', MARK_TTL_S)))
        .finally(() => putting.delete(slot));
      putting.set(slot, put);
    }
    put.then(
      () => logger.debug(`job ${ask.job}: cut ${ask.cut + 1}'s clip put in the object store`),
      (err: Error) => {
        // (A cut not rendered yet, a stopped preview: the in-process words. Anything else says where it failed.)
        fail(
          err instanceof UserFacingError
            ? err.message
            : `cut ${ask.cut + 1}'s clip could not be made on the worker: ${err.message}`,
        );
        logger.debug(`job ${ask.job}: cut ${ask.cut + 1}'s clip: ${err.message}`);
      },
    );
  };
}
