// The server's side of the job queue: previews are put in it (one job per edit, whoever asks) and followed there,
// progress passed on from whichever worker runs them. A preview, a local render, a scan or a transcription goes in
// under a content-addressed id (codec.ts), so that a repeat from any replica joins its job; it is followed through
// QueueEvents and a poll that notices a lost job or a Redis that stopped answering; a caller who leaves lets go of
// the job, and the last one to leave before anyone kept it has it stopped on its worker.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { UserFacingError } from '../errors.js';
import type { Logger } from '../log.js';
import type { CheckedEdit } from '../workflow/checked-edit.js';
import type { CancelledPreview, JobCall, JobKind, JobRunner, PreviewRunner, QueuedPreview } from '../workflow/jobs.js';
import type { MediaRuntime } from '../workflow/media-runtime.js';
import type { PreviewJob, PreviewOptions, PreviewResult } from '../workflow/preview-types.js';
import {
  CALL_CANCEL_CHANNEL,
  CANCEL_CHANNEL,
  MARK_TTL_S,
  PREFIX,
  QUEUE_NAME,
  cancelledKey,
  connect,
  holdersKey,
  keptKey,
  makingJob,
  sayOutages,
  shownUrl,
  watched,
  within,
} from './connection.js';
import { QueueClips } from './queue-clips.js';
import { redisKept } from './kept-store.js';
import type { SharedKept } from '../kept.js';
import { encode, jobIdOf } from './codec.js';
import { failureForCaller } from './failures.js';
import { PREVIEW, previewJobData, type JobPlace, type PreviewProgress, type PreviewReturn } from './preview-job.js';
import { previewHere } from '../workflow/preview.js';
import { relative, sep } from 'node:path';

export interface QueueOptions {
  url: string;
  logger: Logger;
  /** How long a call waits for a worker to take its job before saying none did (CUTROOM_RENDER_WAIT_MS). */
  startWaitMs: number;
  /** Tries of a job that fails for the machine (the first included). */
  attempts?: number;
  /** How often a followed job's state is read (besides its events), to notice a lost job or an unreachable Redis. */
  pollMs?: number;
  /** How long Redis may not answer before a followed job is given up with an error that says so. */
  unreachableMs?: number;
  /** Jobs one caller (one cache folder) may have running at once across all workers (CUTROOM_HTTP_CALLER_FFMPEG). */
  callerLimit?: number;
  /**
   * The object store finished previews are put in (its bucket and prefix, as ObjectStore.shown), with this server's
   * CUTROOM_CACHE_DIR: jobs then name their folder relative to it, and workers need not share it.
   */
  store?: { shown: string; cacheRoot: string };
}

const CANCELLED = 'the preview was cancelled; nothing was kept';
/** How long a cancel waits for the worker running the job to stop it. */
const STOP_WAIT_MS = 15_000;

/** Whoever waits on a job here, fed by the queue's events and a poll. */
interface Waiter {
  onProgress(p: never): void;
  onCompleted(r: never): void;
  onFailed(reason: string | undefined): void;
}

/** One caller's hold on a preview job: a PreviewJob for the tools. */
interface Followed extends PreviewJob, Waiter {
  jobId: string;
  onProgress(p: PreviewProgress): void;
  onCompleted(r: PreviewReturn): void;
  /** The worker started the job: its preview's id is known. */
  started: Promise<void>;
}

const WHAT: Record<JobKind, string> = { inspect: 'inspection', transcribe: 'transcription', render: 'render' };

export class QueueJobs implements JobRunner {
  readonly preview: PreviewRunner;
  private readonly conn: Redis;
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly following = new Map<string, Set<Waiter>>();
  private readonly byPreview = new Map<string, Followed>();
  private readonly attempts: number;
  private readonly pollMs: number;
  private readonly unreachableMs: number;
  private readonly clips: QueueClips;
  private readonly closers: (() => void)[] = [];

  constructor(private readonly opts: QueueOptions) {
    sayOutages(opts.logger);
    this.conn = connect(opts.url, 'cutroom-server');
    this.queue = new Queue(QUEUE_NAME, { connection: this.conn, prefix: PREFIX });
    this.queue.on('error', () => {});
    this.events = new QueueEvents(QUEUE_NAME, {
      connection: connect(opts.url, 'cutroom-server-events'),
      prefix: PREFIX,
    });
    this.events.on('error', () => {});
    this.clips = new QueueClips(this.conn, this.queue);
    this.attempts = opts.attempts ?? 3;
    this.pollMs = opts.pollMs ?? 1000;
    this.unreachableMs = opts.unreachableMs ?? 20_000;
    this.events.on('progress', ({ jobId, data }) =>
      this.each(jobId, (f) => f.onProgress(data as unknown as PreviewProgress)),
    );
    this.events.on('completed', ({ jobId, returnvalue }) =>
      this.each(jobId, (f) => f.onCompleted(parsed(returnvalue) as PreviewReturn)),
    );
    this.events.on('failed', ({ jobId, failedReason }) => this.each(jobId, (f) => f.onFailed(failedReason)));
    this.preview = {
      start: (rt, checked, o, signal) => this.startPreview(rt, checked, o, signal),
      job: (rt, id) => this.byPreview.get(`${rt.cache.root}\0${id}`),
      onQueue: (rt, id) => this.queued(rt, id).catch(() => undefined),
      clip: (rt, id, index) => this.clips.clip(rt, this.placeOf(rt.cache.opts.dir).cacheDir, id, index),
      cancel: (rt, id) => this.cancelPreview(rt, id),
    };
    opts.logger.info(`previews run on the job queue at ${shownUrl(opts.url)} (cutroom worker runs them)`);
  }

  /**
   * A preview started anywhere, by the job its worker marked it with: still being made (by that worker or, taken over,
   * under another id), made (under which id), or failed. A mark is removed when its job ends, but not by a worker
   * killed.
   */
  private async queued(rt: MediaRuntime, id: string): Promise<QueuedPreview | undefined> {
    const job = (await makingJob(this.conn, this.queue, this.placeOf(rt.cache.opts.dir).cacheDir, id))?.job;
    if (!job) return undefined;
    const state = await within(job.getState(), 2000);
    if (state === 'completed') {
      const made = (parsed(job.returnvalue) as PreviewReturn | undefined)?.preview?.preview_id;
      return made ? { state: 'made', id: made } : undefined;
    }
    if (state === 'failed') return { state: 'failed', reason: failureForCaller(job.failedReason, 'preview') };
    const p = (typeof job.progress === 'object' ? job.progress : {}) as Partial<PreviewProgress>;
    return {
      state: 'rendering',
      fraction: p.fraction ?? 0,
      message: p.message ?? 'queued: waiting for a cutroom worker',
    };
  }

  /** Resolves once the queue's Redis answered (an unreachable one is said in the log, not fatal). */
  async ready(): Promise<void> {
    await within(Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]), 10_000).catch((err: Error) =>
      this.opts.logger.warn(
        `the job queue at ${shownUrl(this.opts.url)} does not answer yet (${err.message}); previews wait for it`,
      ),
    );
  }

  /** The queue's depth and its oldest waiting job's age, for the log (an operator sees a backlog grow). */
  async depth(): Promise<string> {
    const counts = await within(this.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'failed'), 5000);
    const [oldest] = await within(this.queue.getJobs(['waiting'], 0, 0, true), 5000);
    const age = oldest ? Math.round((Date.now() - oldest.timestamp) / 1000) : undefined;
    const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
    return `job queue: ${waiting} waiting${age !== undefined ? ` (the oldest for ${age} s)` : ''}, ${counts.delayed ?? 0} delayed, ${counts.active ?? 0} running, ${counts.failed ?? 0} failed in the last hour`;
  }

  /** Cancels of calls passed between replicas (serve-http.ts): published on a channel every replica listens to. */
  callCancels(): { publish(call: string): void; listen(stop: (call: string) => void): void } {
    return {
      publish: (call) => void this.conn.publish(CALL_CANCEL_CHANNEL, call).catch(() => {}),
      listen: (stop) => {
        const sub = watched(this.conn.duplicate(), this.opts.url);
        this.closers.push(() => sub.disconnect());
        sub.on('message', (_channel: string, call: string) => stop(call));
        void sub.subscribe(CALL_CANCEL_CHANNEL).catch(() => {});
      },
    };
  }

  /** The team's shared store of kept state in this queue's Redis (used when no bucket is configured). */
  kept(): SharedKept {
    return redisKept(this.conn, shownUrl(this.opts.url));
  }

  async close(): Promise<void> {
    for (const set of this.following.values()) for (const f of set) f.onFailed('the server is stopping');
    // Bounded: with Redis away, BullMQ's close waits for a connection that may never come back.
    await within(Promise.allSettled([this.events.close(), this.queue.close()]), 3000).catch(() => {});
    for (const close of this.closers) close();
    this.conn.disconnect();
  }

  private each(jobId: string, fn: (f: Waiter & Followed) => void): void {
    for (const f of this.following.get(jobId) ?? []) fn(f as Waiter & Followed);
  }

  /**
   * A job of another kind than a preview: queued (or joined), followed to its end, let go when the call is cancelled.
   */
  /** Where a job on this cache folder works (see JobPlace). */
  private placeOf(cacheDir: string): JobPlace {
    if (!this.opts.store) return { cacheDir };
    const rel = relative(this.opts.store.cacheRoot, cacheDir);
    if (rel.startsWith('..')) throw new UserFacingError('this cache folder is not inside CUTROOM_CACHE_DIR');
    return { cacheDir: rel.split(sep).join('/'), store: this.opts.store.shown };
  }

  async run<T>(kind: JobKind, serverDir: string, what: unknown, call: JobCall): Promise<T> {
    const place = this.placeOf(serverDir);
    const { cacheDir } = place;
    const jobId = jobIdOf(kind, { cacheDir, what });
    const name = WHAT[kind];
    const startWaitMs = call.startWaitMs ?? this.opts.startWaitMs;
    let settled = false;
    let started = false;
    let lastReached = Date.now();
    let finish!: (outcome: { value: T } | { error: Error }) => void;
    const outcome = new Promise<T>(
      (resolve, reject) => (finish = (o) => ('value' in o ? resolve(o.value) : reject(o.error))),
    );
    const waiter: Waiter = {
      onProgress: (p: { fraction?: number; message?: string }) => {
        started = true;
        if (p && typeof p === 'object' && typeof p.fraction === 'number')
          call.onProgress?.(p.fraction, p.message ?? '');
      },
      onCompleted: (r: T) => end({ value: parsed(r) as T }),
      onFailed: (reason) => end({ error: new UserFacingError(failureForCaller(reason, name)) }),
    };
    const end = (o: { value: T } | { error: Error }) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(noWorker);
      call.signal?.removeEventListener('abort', onAbort);
      this.following.get(jobId)?.delete(waiter);
      if (!this.following.get(jobId)?.size) this.following.delete(jobId);
      finish(o);
    };
    const onAbort = () => {
      // Ended once its worker stopped it (its ffmpeg gone, its partial files removed), when this cancel stops it.
      void this.letGo(jobId, true)
        .then((stopped) => (stopped ? this.stoppedOnWorker(jobId) : undefined))
        .finally(() => end({ error: new UserFacingError(`the ${name} was cancelled`) }));
    };
    let set = this.following.get(jobId);
    if (!set) this.following.set(jobId, (set = new Set()));
    set.add(waiter);
    const poll = setInterval(() => {
      void (async () => {
        try {
          const job = await within(this.queue.getJob(jobId), Math.max(2000, this.pollMs));
          lastReached = Date.now();
          if (settled) return;
          if (!job)
            return end({
              error: new UserFacingError(
                `the ${name}'s job is gone from the queue (its Redis was restarted or emptied); call again`,
              ),
            });
          if (job.processedOn) started = true;
          const state = await within(job.getState(), 2000);
          if (state === 'completed') waiter.onCompleted(job.returnvalue as never);
          else if (state === 'failed') waiter.onFailed(job.failedReason);
        } catch {
          if (Date.now() - lastReached > this.unreachableMs)
            end({
              error: new UserFacingError(
                `the job queue at ${shownUrl(this.opts.url)} has not answered for ${Math.round(this.unreachableMs / 1000)} s: call again once it is back`,
              ),
            });
        }
      })();
    }, this.pollMs);
    poll.unref();
    // A job no worker starts is not waited for for ever: it stays queued, and the same call later joins it.
    const noWorker = setTimeout(() => {
      if (started || settled) return;
      end({
        error: new UserFacingError(
          `no cutroom worker has started the ${name} within ${Math.round(startWaitMs / 1000)} s; it stays queued: ask again later to follow it (is \`cutroom worker\` running with the same CUTROOM_QUEUE_URL?)`,
        ),
      });
      void this.letGo(jobId, false);
    }, startWaitMs);
    if (call.signal?.aborted) onAbort();
    else call.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await within(
        this.enqueue(jobId, kind, { payload: encode({ ...place, what }), ...this.callerOf(cacheDir) }),
        this.unreachableMs,
      );
    } catch (err) {
      end({
        error: new UserFacingError(
          `the ${name} could not be queued: the job queue at ${shownUrl(this.opts.url)} did not answer (${(err as Error).message}); try again once it is back`,
        ),
      });
    }
    return outcome;
  }

  private async startPreview(
    rt: MediaRuntime,
    checked: CheckedEdit,
    opts: PreviewOptions,
    signal?: AbortSignal,
  ): Promise<PreviewJob> {
    const { jobId, data } = previewJobData(rt, checked, opts, this.placeOf(rt.cache.opts.dir));
    const f = this.follow(rt, jobId, checked.timeline?.cuts.length ?? 0);
    try {
      await within(
        this.enqueue(jobId, PREVIEW, { ...data, ...this.callerOf(this.placeOf(rt.cache.opts.dir).cacheDir) }),
        this.unreachableMs,
      ).catch((err: Error) => {
        throw new UserFacingError(
          `the preview could not be queued: the job queue at ${shownUrl(this.opts.url)} did not answer (${err.message}); try again once it is back`,
        );
      });
      opts.debug?.(`preview job ${jobId}: queued (or joined)`);
      // Until a worker starts it, the job has no preview id to hand over.
      const waited = await new Promise<'started' | 'timeout' | 'cancelled'>((resolve) => {
        const timer = setTimeout(() => resolve('timeout'), this.opts.startWaitMs);
        const onAbort = () => resolve('cancelled');
        signal?.addEventListener('abort', onAbort, { once: true });
        f.started.then(
          () => resolve('started'),
          () => resolve('started'),
        );
        void f.done.catch(() => {});
        if (signal?.aborted) resolve('cancelled');
        void Promise.race([f.started, f.done]).finally(() => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        });
      });
      if (waited === 'cancelled') {
        f.abort();
        throw new UserFacingError(CANCELLED);
      }
      if (waited === 'timeout') {
        const waiting = await within(this.queue.getWaitingCount(), 2000).catch(() => undefined);
        f.release();
        f.stopFollowing();
        throw new UserFacingError(
          `no cutroom worker has started the preview within ${Math.round(this.opts.startWaitMs / 1000)} s${waiting !== undefined ? ` (${waiting} job(s) wait in the queue)` : ''}; it stays queued: call preview_edit again with the same edit to follow it (is \`cutroom worker\` running with the same CUTROOM_QUEUE_URL?)`,
        );
      }
      if (f.settled && 'error' in f.settled && !f.id) throw f.settled.error;
      return f;
    } catch (err) {
      f.stopFollowing();
      throw err;
    }
  }

  /** Adds the job, unless the same work is queued or running (then this joins it). A finished one is done anew. */
  /** Who a job is for (a caller's cache folder, hashed) and how many of theirs may run at once, for the workers. */
  private callerOf(cacheDir: string): { caller?: string; callerLimit?: number } {
    return this.opts.callerLimit
      ? { caller: createHash('sha256').update(cacheDir).digest('hex').slice(0, 24), callerLimit: this.opts.callerLimit }
      : {};
  }

  private async enqueue(
    jobId: string,
    kind: string,
    data: { payload: string; caller?: string; callerLimit?: number },
  ): Promise<void> {
    let joining = false;
    const existing = await this.queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      // A job being stopped (cancelled) is not joined: it ends "cancelled" whoever joins it.
      const stopping = (await this.conn.exists(cancelledKey(jobId))) === 1;
      if (stopping && (state === 'active' || state === 'waiting' || state === 'prioritized' || state === 'delayed'))
        await this.settledOrGone(existing, 10_000);
      if (stopping || state === 'completed' || state === 'failed' || state === 'unknown')
        await existing.remove().catch(() => {});
      else joining = true;
    }
    // Joining counts one more holder (a keep by an earlier caller stands); a new job starts its marks afresh.
    if (joining) await this.conn.multi().incr(holdersKey(jobId)).expire(holdersKey(jobId), MARK_TTL_S).exec();
    else
      await this.conn
        .multi()
        .del(cancelledKey(jobId), keptKey(jobId))
        .set(holdersKey(jobId), 1, 'EX', MARK_TTL_S)
        .exec();
    await this.queue.add(kind, data, {
      jobId,
      attempts: this.attempts,
      backoff: { type: 'exponential', delay: 2000 },
      // Kept a while, so that a caller who comes back reads how it ended; a new request for a finished one redoes it
      // (the worker then finds the finished preview in the cache dir at once).
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 3600, count: 1000 },
    });
  }

  private async settledOrGone(job: Job, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const state = await job.getState().catch(() => 'unknown');
      if (state !== 'active' && state !== 'waiting' && state !== 'prioritized' && state !== 'delayed') return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private follow(rt: MediaRuntime, jobId: string, cuts: number): Followed & { stopFollowing(): void } {
    let resolveDone!: (r: PreviewResult) => void;
    let rejectDone!: (e: Error) => void;
    let startedResolve!: () => void;
    const done = new Promise<PreviewResult>((res, rej) => ((resolveDone = res), (rejectDone = rej)));
    const started = new Promise<void>((res) => (startedResolve = res));
    let left = false;
    let lastReached = Date.now();
    const ids = new Set<string>();
    const key = (id: string) => `${rt.cache.root}\0${id}`;
    const stopFollowing = () => {
      clearInterval(poll);
      this.following.get(jobId)?.delete(f);
      if (!this.following.get(jobId)?.size) this.following.delete(jobId);
      // Kept a minute after, for preview_edit {preview_id} to read how it ended.
      setTimeout(
        () => ids.forEach((id) => this.byPreview.get(key(id)) === f && this.byPreview.delete(key(id))),
        60_000,
      ).unref();
    };
    const settle = (outcome: { result: PreviewResult } | { error: Error }) => {
      if (f.settled) return;
      f.settled = outcome;
      startedResolve();
      stopFollowing();
      if ('result' in outcome) resolveDone(outcome.result);
      else {
        // Its clips being made here stop: the worker removes a failed preview's folder.
        if (f.id) this.clips.stop(rt, f.id);
        rejectDone(outcome.error);
      }
    };
    const setId = (id: string) => {
      if (!id || f.id === id) return;
      f.id = id;
      ids.add(id);
      this.byPreview.set(key(id), f);
      startedResolve();
    };
    const f: Followed & { stopFollowing(): void } = {
      jobId,
      id: '',
      progress: 0,
      message: 'queued: waiting for a cutroom worker',
      done,
      listeners: new Set(),
      cuts,
      ready: [],
      started,
      stopFollowing,
      onProgress: (p) => {
        if (!p || typeof p !== 'object') return;
        // A worker that took the job over from one that died starts a preview of its own: a new id, progress anew.
        if (p.id && p.id !== f.id && f.id) f.ready = [];
        setId(p.id);
        f.progress = Math.max(f.progress, p.fraction ?? 0);
        f.message = p.message ?? f.message;
        f.cuts = p.cuts ?? f.cuts;
        f.ready = p.ready ?? f.ready;
        for (const l of f.listeners) l(f.progress, f.message);
      },
      onCompleted: (r) => {
        if (f.settled || !r?.preview) return;
        const id = r.preview.preview_id;
        setId(id);
        const dir = join(rt.cache.root, id);
        // With an object store, the worker put the preview there before its job completed: fetched into this
        // server's cache dir, and served from it as one made here (its paths this server's).
        const here = rt.store ? previewHere(rt, id) : Promise.resolve(true);
        void here
          .then((found) => {
            if (!found)
              throw new UserFacingError(
                `preview ${id} was made by a worker but is not in the object store ${this.opts.store?.shown ?? ''}: do the worker and this server have the same CUTROOM_S3_BUCKET and CUTROOM_S3_PREFIX?`,
              );
            return readFile(join(dir, 'sheet.jpg'));
          })
          .then(
            (sheetBytes) => {
              const paths = rt.store ? { path: join(dir, 'preview.mp4'), sheet_path: join(dir, 'sheet.jpg') } : {};
              settle({
                result: {
                  ...r.preview,
                  ...paths,
                  sheetBytes,
                  ...(r.ffmpegMaxRssKiB ? { ffmpegMaxRssKiB: r.ffmpegMaxRssKiB } : {}),
                },
              });
            },
            (err: Error) =>
              settle({
                error:
                  err instanceof UserFacingError
                    ? err
                    : new UserFacingError(
                        `preview ${id} was made by a worker but is not in this server's cache dir (${rt.cache.opts.dir}): servers and workers must share CUTROOM_CACHE_DIR, or an object store (CUTROOM_S3_BUCKET)`,
                      ),
              }),
          );
      },
      onFailed: (reason) =>
        settle({ error: new UserFacingError(left ? CANCELLED : failureForCaller(reason, 'preview')) }),
      abort: () => {
        if (left || f.settled) return false;
        left = true;
        // This caller stops waiting now; the job stops if nobody else holds it and nobody kept it.
        settle({ error: new UserFacingError(CANCELLED) });
        void this.letGo(jobId, true);
        return true;
      },
      release: () => {
        if (left) return;
        left = true;
        void this.letGo(jobId, false);
      },
      clip: async (index) => {
        const path = f.id
          ? await this.clips.clip(rt, this.placeOf(rt.cache.opts.dir).cacheDir, f.id, index)
          : undefined;
        if (!path) throw new UserFacingError(`cut ${index + 1} is not rendered yet`);
        return path;
      },
    };
    const poll = setInterval(
      () =>
        void this.check(
          f,
          jobId,
          () => lastReached,
          (t) => (lastReached = t),
          settle,
        ),
      this.pollMs,
    );
    poll.unref();
    let set = this.following.get(jobId);
    if (!set) this.following.set(jobId, (set = new Set()));
    set.add(f);
    return f;
  }

  /** The poll: a job that vanished (Redis restarted empty) or a Redis that stopped answering ends the wait clearly. */
  private async check(
    f: Followed,
    jobId: string,
    lastReached: () => number,
    reached: (t: number) => void,
    settle: (o: { error: Error }) => void,
  ): Promise<void> {
    if (f.settled) return;
    try {
      const job = await within(this.queue.getJob(jobId), Math.max(2000, this.pollMs));
      reached(Date.now());
      if (f.settled) return;
      if (!job) {
        // Look again in a moment before saying so: a finished job may be removed just as its event is on its way.
        await new Promise((r) => setTimeout(r, 500));
        if (f.settled || (await within(this.queue.getJob(jobId), 2000).catch(() => undefined))) return;
        settle({
          error: new UserFacingError(
            "the preview's job is gone from the queue (its Redis was restarted or emptied); nothing of it was kept: call preview_edit again",
          ),
        });
        return;
      }
      if (typeof job.progress === 'object' && job.progress) f.onProgress(job.progress as unknown as PreviewProgress);
      const state = await within(job.getState(), 2000);
      if (state === 'completed') f.onCompleted(job.returnvalue as PreviewReturn);
      else if (state === 'failed') f.onFailed(job.failedReason);
    } catch {
      if (Date.now() - lastReached() > this.unreachableMs) {
        settle({
          error: new UserFacingError(
            `the job queue at ${shownUrl(this.opts.url)} has not answered for ${Math.round(this.unreachableMs / 1000)} s: the preview's fate is unknown; call preview_edit again once it is back (a finished preview is then found at once)`,
          ),
        });
      }
    }
  }

  /**
   * A caller lets go of a job: kept (it runs to its end), or cancelled, which stops it when no one else holds it (true
   * when it did).
   */
  private async letGo(jobId: string, cancel: boolean): Promise<boolean> {
    try {
      if (!cancel) {
        await within(this.conn.multi().set(keptKey(jobId), '1', 'EX', MARK_TTL_S).decr(holdersKey(jobId)).exec(), 5000);
        return false;
      }
      const [[, left], [, kept]] = (await within(
        this.conn.multi().decr(holdersKey(jobId)).exists(keptKey(jobId)).exec(),
        5000,
      )) as [[null, number], [null, number]];
      if (left > 0 || kept) return false;
      await this.stop(jobId);
      this.opts.logger.debug(`job ${jobId}: cancelled by its last caller`);
      return true;
    } catch (err) {
      this.opts.logger.warn(`job ${jobId}: could not tell the queue (${(err as Error).message})`);
      return false;
    }
  }

  /** Stops a job whoever holds it: marked cancelled, its worker told, or taken out of the queue if not started. */
  private async stop(jobId: string): Promise<void> {
    await within(
      this.conn.multi().set(cancelledKey(jobId), '1', 'EX', MARK_TTL_S).publish(CANCEL_CHANNEL, jobId).exec(),
      5000,
    );
    // Not started yet: taken out of the queue (an active one is locked by its worker, which the message stops).
    const job = await within(this.queue.getJob(jobId), 5000);
    if (job && (await job.getState()) !== 'active') await job.remove().catch(() => {});
  }

  /** Waits (bounded) until a stopped job's worker has ended it; true once it has, or it is gone. */
  private async stoppedOnWorker(jobId: string): Promise<boolean> {
    const job = await within(this.queue.getJob(jobId), 5000).catch(() => undefined);
    if (!job) return true;
    await this.settledOrGone(job, STOP_WAIT_MS);
    const state = await within(job.getState(), 2000).catch(() => 'unknown');
    return state !== 'active' && state !== 'waiting' && state !== 'prioritized' && state !== 'delayed';
  }

  /**
   * preview_edit {preview_id, cancel}: stops the preview wherever it runs (whoever else follows or kept it), once its
   * worker ended it; undefined when no job on the queue is making it.
   */
  private async cancelPreview(rt: MediaRuntime, id: string): Promise<CancelledPreview | undefined> {
    try {
      return await this.stopPreview(rt, id);
    } catch (err) {
      throw new UserFacingError(
        `nothing was cancelled: the job queue at ${shownUrl(this.opts.url)} did not answer (${(err as Error).message}); try again once it is back`,
      );
    }
  }

  private async stopPreview(rt: MediaRuntime, id: string): Promise<CancelledPreview | undefined> {
    const followed = this.byPreview.get(`${rt.cache.root}\0${id}`);
    const jobId =
      followed && !followed.settled
        ? followed.jobId
        : (await makingJob(this.conn, this.queue, this.placeOf(rt.cache.opts.dir).cacheDir, id))?.id;
    if (!jobId) return undefined;
    const job = await within(this.queue.getJob(jobId), 5000);
    const state = job ? await within(job.getState(), 2000) : 'unknown';
    if (!job || state === 'completed' || state === 'failed' || state === 'unknown') return 'not running';
    await this.stop(jobId);
    this.opts.logger.info(`job ${jobId}: preview ${id} cancelled by its id`);
    return (await this.stoppedOnWorker(jobId)) ? 'stopped' : 'asked';
  }
}

const parsed = (v: unknown): unknown => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
};
