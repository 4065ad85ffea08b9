// The queue's Redis: one place that turns CUTROOM_QUEUE_URL into connections, and the names cutroom uses in it.
import type { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';

/** The BullMQ queue every server and worker shares, and the prefix of every key cutroom writes. */
export const QUEUE_NAME = 'media';
export const PREFIX = 'cutroom';
/** Where a server says "stop this job" to whichever worker runs it (pub/sub: every worker hears it). */
export const CANCEL_CHANNEL = `${PREFIX}:cancel`;
/** Where a replica passes on a notifications/cancelled for a call another replica answers (a hash naming the call). */
export const CALL_CANCEL_CHANNEL = `${PREFIX}:cancel-call`;
export const holdersKey = (jobId: string) => `${PREFIX}:holders:${jobId}`;
export const keptKey = (jobId: string) => `${PREFIX}:kept:${jobId}`;
export const cancelledKey = (jobId: string) => `${PREFIX}:cancelled:${jobId}`;
/**
 * A preview a worker is making, by its job's cache folder and its id: a replica that never followed its job sees it.
 */
export const makingKey = (cacheDir: string, previewId: string) => `${PREFIX}:making:${cacheDir}:${previewId}`;
/** How long that mark outlives a worker killed before removing it (a job runs 10 minutes at most). */
export const MAKING_TTL_S = 600;

/**
 * The job (and its id) whose worker marked preview `previewId` of a cache folder as being made (it may have ended
 * since).
 */
export async function makingJob(
  conn: Redis,
  queue: Queue,
  cacheDir: string,
  previewId: string,
): Promise<{ id: string; job: Job } | undefined> {
  const id = await within(conn.get(makingKey(cacheDir, previewId)), 2000);
  const job = id ? await within(queue.getJob(id), 2000) : undefined;
  return id && job ? { id, job } : undefined;
}
/**
 * Where a server asks the worker running a preview's job for a cut's clip (pub/sub: every worker hears it, the one
 * running the job answers). A message is JSON: { job, preview, cut, ask } (ask: the request's token).
 */
export const CLIP_CHANNEL = `${PREFIX}:clip`;
/** Set by the worker once a cut's clip is in the object store: every replica then reads it from there. */
export const clipMadeKey = (jobId: string, previewId: string, cut: number) =>
  `${PREFIX}:clip:${jobId}:${previewId}:${cut}`;
/** Why one request for a clip failed (by its token): a failure is that request's answer, never a later one's. */
export const clipFailedKey = (ask: string) => `${PREFIX}:clip-failed:${ask}`;
/** The jobs of one caller running now on any worker (a sorted set: job id -> lease time). */
export const callerKey = (caller: string) => `${PREFIX}:caller:${caller}`;
/** How long the keys above outlive their job at most (a job runs 10 minutes at most). */
export const MARK_TTL_S = 3600;

/**
 * A connection that keeps trying while Redis is away (restarted, failed over): commands wait for it instead of
 * failing at once; whoever waits bounds the wait itself (jobs/queue.ts). BullMQ needs maxRetriesPerRequest null
 * for its blocking reads.
 */
export function connect(url: string, name: string): Redis {
  const conn = new Redis(url, {
    maxRetriesPerRequest: null,
    connectionName: name,
    retryStrategy: (times) => Math.min(200 * times, 2000),
    // An unreachable Redis is retried quietly; callers say what it means.
    lazyConnect: false,
  });
  watched(conn, url);
  return conn;
}

/**
 * Redis going away, said once per outage for the whole process (however many connections retry, every 2 s at
 * most), and its coming back with how long it was away: never a line per retry. Connections are watched from
 * `connect` (and `watched` for a duplicate); the lines go to the logger `sayOutages` was given.
 */
const outage = { logger: undefined as Logger | undefined, down: new Set<Redis>(), since: 0, said: '' };

export function sayOutages(logger: Logger): void {
  outage.logger = logger;
}

/** Watches a connection for the outage lines (and so it never emits an unhandled 'error'). */
export function watched(conn: Redis, url: string): Redis {
  conn.on('error', (err: Error & { code?: string }) => {
    if (outage.down.has(conn)) return;
    if (!outage.down.size) {
      outage.since = Date.now();
      outage.said = shownUrl(url);
      outage.logger?.warn(
        `the job queue's Redis at ${outage.said} is unreachable (${err.code ?? err.message}); calls that need it wait or say so, and it is retried quietly until it is back`,
      );
    }
    outage.down.add(conn);
  });
  const up = () => {
    if (!outage.down.delete(conn) || outage.down.size) return;
    outage.logger?.info(
      `the job queue's Redis at ${outage.said} is back after ${((Date.now() - outage.since) / 1000).toFixed(1)} s`,
    );
  };
  conn.on('ready', up);
  // A connection closed for good (disconnect) is not waited for.
  conn.on('end', up);
  return conn;
}

/** Resolves with the promise's value, or rejects after `ms` (a command waiting for a Redis that is away). */
export function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** The URL without its password, for logs. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'CUTROOM_QUEUE_URL';
  }
}
