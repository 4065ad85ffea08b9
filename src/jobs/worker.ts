// `cutroom worker`: runs the queue's jobs with the same workflow functions a server runs in-process, on the cache
// dir it shares with the servers. Each job passes its progress on (job progress, heard by the servers' QueueEvents);
// a cancel published by a server stops the job's ffmpeg here; a job whose worker died is taken up by another
// (BullMQ's stalled-job check, once its lock lapses).
import { resolve, sep } from 'node:path';
import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from '../log.js';
import { scanJob, type ScanWork } from '../workflow/inspect.js';
import { hearJob, type HearWork } from '../workflow/transcribe.js';
import { renderTimeline } from '../media/render.js';
import type { RenderWork } from './render-job.js';
import { startPreview } from '../workflow/preview.js';
import type { MediaRuntime } from '../workflow/media-runtime.js';
import type { PreviewJob } from '../workflow/preview-types.js';
import { decode } from './codec.js';
import {
  CANCEL_CHANNEL,
  CLIP_CHANNEL,
  MAKING_TTL_S,
  PREFIX,
  QUEUE_NAME,
  cancelledKey,
  connect,
  makingKey,
  sayOutages,
  shownUrl,
  watched,
  within,
} from './connection.js';
import { answerClips } from './worker-clips.js';
import { takeCallerSlot } from './fair.js';
import { jobFailure, workerOutward } from './failures.js';
import { PREVIEW, type PreviewData, type PreviewProgress, type PreviewReturn } from './preview-job.js';

export interface WorkerOptions {
  url: string;
  logger: Logger;
  /** Jobs at once. */
  concurrency: number;
  /** The cache dir every job's folder must be in (CUTROOM_CACHE_DIR, shared with the servers). */
  cacheDir: string;
  /** The data dir local renders are written in (CUTROOM_DATA_DIR, shared with the servers). */
  dataDir: string;
  /** The media runtime of a cache dir (one per caller's folder over HTTP), made once and kept. */
  runtimeFor(cacheDir: string): MediaRuntime | undefined;
  /** How long a job's lock lasts unrenewed: a dead worker's job is taken up this long (and a check) after. */
  lockMs: number;
  /**
   * The object store previews are put in (ObjectStore.shown), when this worker has one: then jobs name their folder
   * relative to cacheDir.
   */
  store?: string;
  /** Strings no caller may be shown (the object store's address): see workerOutward. */
  hidden?: string[];
}

const CANCELLED = 'the preview was cancelled; nothing was kept';
/** How often the jobs running here are looked for in Redis (one whose record is gone is stopped). */
const LOST_CHECK_MS = 1000;
/** A worker's error that is only Redis being away (said once per outage by connection.ts). */
const CONNECTION_LOST = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE|Connection is closed/i;

/** Progress is passed on at most this often (each is a Redis write and an event every server reads). */
const PROGRESS_EVERY_MS = 250;

/** Progress passed on at most every PROGRESS_EVERY_MS, the last one always (`now`: at once). */
function throttled<A extends unknown[]>(
  send: (...args: A) => void,
): ((...args: A) => void) & { now(...args: A): void; stop(): void } {
  let sentAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let last: A | undefined;
  const now = (...args: A) => {
    clearTimeout(timer);
    timer = undefined;
    sentAt = Date.now();
    send(...args);
  };
  const fn = (...args: A) => {
    last = args;
    if (timer) return;
    timer = setTimeout(() => now(...last!), Math.max(0, PROGRESS_EVERY_MS - (Date.now() - sentAt)));
  };
  return Object.assign(fn, { now, stop: () => clearTimeout(timer) });
}

export interface RunningWorker {
  close(graceMs: number): Promise<void>;
  /** For /healthz: healthy while it takes jobs and its Redis answers (a PING, within a second). */
  health(): Promise<WorkerHealth>;
}

export interface WorkerHealth {
  ok: boolean;
  /** The connection's state ('ready', 'reconnecting', ...): 'ready' also while a hung Redis answers nothing. */
  redis: string;
  /** Whether Redis answered a PING within a second. */
  answers: boolean;
  active: number;
  draining: boolean;
  concurrency: number;
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  const { logger } = opts;
  sayOutages(logger);
  const conn = connect(opts.url, 'cutroom-worker');
  const root = resolve(opts.cacheDir);
  const dataRoot = resolve(opts.dataDir);
  /** Every message a caller is shown (failures, progress) as a server's own would be: no path of this worker's. */
  const outward = workerOutward({ cache: root, data: dataRoot }, opts.hidden);
  const runtimes = new Map<string, MediaRuntime>();
  /** The previews this worker is making, by job id: asked for a cut's clip, it makes it (worker-clips.ts). */
  const making = new Map<string, { preview: PreviewJob; rt: MediaRuntime }>();
  let active = 0;
  /** The ids of the jobs running here. */
  const running = new Set<string>();
  let draining = false;

  /**
   * The runtime of a job's cache folder: only ever one inside this worker's own cache dir. With an object store the
   * job names it relative to CUTROOM_CACHE_DIR (JobPlace), and this worker works in its own; both sides must agree.
   */
  const runtimeOf = (cacheDir: string, store?: string): MediaRuntime => {
    if ((store ?? '') !== (opts.store ?? '')) {
      throw new UnrecoverableError(
        store
          ? `the job's preview is to be kept in the object store ${store}, ${opts.store ? `but this worker's is ${opts.store}` : 'but this worker has none'}: give servers and workers the same CUTROOM_S3_BUCKET and CUTROOM_S3_PREFIX`
          : `this worker keeps previews in the object store ${opts.store}, but the server that queued the job has none: give servers and workers the same CUTROOM_S3_BUCKET, or share CUTROOM_CACHE_DIR and set it on neither`,
      );
    }
    if (store && (cacheDir.startsWith('/') || cacheDir.split('/').includes('..')))
      throw new UnrecoverableError('the job names a cache folder outside CUTROOM_CACHE_DIR');
    const dir = store ? resolve(root, cacheDir) : resolve(cacheDir);
    if (dir !== root && !dir.startsWith(root + sep))
      throw new UnrecoverableError(
        `the job's cache dir is not inside this worker's CUTROOM_CACHE_DIR (${root}): servers and workers must share it`,
      );
    let rt = runtimes.get(dir);
    if (!rt) {
      rt = opts.runtimeFor(dir);
      if (!rt) throw new Error('this worker has no ffmpeg');
      runtimes.set(dir, rt);
    }
    return rt;
  };

  /** What a job's error is thrown as (a cancel or the input's: not tried again; the machine's: tried again), logged. */
  const failed = (job: Job, err: unknown, signal: AbortSignal | undefined, cancelled: string): Error => {
    const failure = jobFailure(err, signal?.aborted === true, cancelled, outward);
    logger.info(
      `job ${job.id}: ${failure.message}${failure instanceof UnrecoverableError ? '' : ' (to be tried again)'}`,
    );
    return failure;
  };

  /**
   * A job of a kind besides previews: `work` run on its cache dir's runtime, its progress passed on, stopped by a
   * cancel (then not tried again), a failure for the machine thrown to be tried again.
   */
  const generic = async (
    job: Job,
    signal: AbortSignal | undefined,
    what: string,
    work: (
      rt: MediaRuntime,
      data: never,
      signal: AbortSignal,
      progress: (fraction: number, message: string) => void,
    ) => Promise<unknown>,
  ): Promise<unknown> => {
    const cancelled = `the ${what} was cancelled; nothing was kept`;
    if ((await conn.exists(cancelledKey(job.id!))) === 1) throw new UnrecoverableError(cancelled);
    const { cacheDir, store, what: data } = decode<{ cacheDir: string; store?: string; what: never }>(job.data.payload);
    const rt = runtimeOf(cacheDir, store);
    logger.info(`job ${job.id}: started the ${what}${job.attemptsMade ? ` (attempt ${job.attemptsMade + 1})` : ''}`);
    const send = throttled(
      (fraction: number, message: string) =>
        void job.updateProgress({ fraction, message: outward(message) }).catch(() => {}),
    );
    send(0, 'started on a worker');
    try {
      return await work(rt, data, signal ?? new AbortController().signal, send);
    } catch (err) {
      throw failed(job, err, signal, cancelled);
    } finally {
      send.stop();
    }
  };
  const debugOf = (job: Job) => (m: string) => logger.debug(`job ${job.id}: ${m}`);
  const kinds: Record<string, (job: Job, signal?: AbortSignal) => Promise<unknown>> = {
    inspect: (job, signal) =>
      generic(job, signal, 'inspection', (rt, work: ScanWork, sig, onProgress) => {
        if (!rt.prober) throw new Error('this worker has no ffprobe: inspections need it');
        return scanJob({ runtime: rt, prober: rt.prober }, work, { signal: sig, onProgress, debug: debugOf(job) });
      }),
    render: (job, signal) =>
      generic(job, signal, 'render', async (rt, work: RenderWork, sig, onProgress) => {
        // A render writes in the data dir it shares with the servers: never anywhere else.
        const out = resolve(work.output);
        if (!out.startsWith(dataRoot + sep))
          throw new UnrecoverableError(
            `the render's output is not inside this worker's CUTROOM_DATA_DIR (${dataRoot}): servers and workers must share it`,
          );
        const { verify, ...req } = work;
        return rt.limiter.run(() =>
          renderTimeline({
            ...req,
            ffmpeg: rt.ffmpeg,
            signal: sig,
            onProgress: (f) => onProgress(f, 'rendering'),
            ...(verify && rt.prober ? { verifyWith: rt.prober.ffprobe } : {}),
          }),
        );
      }),
    transcribe: (job, signal) =>
      generic(job, signal, 'transcription', (rt, work: HearWork, sig, onProgress) => {
        if (!rt.prober) throw new Error('this worker has no ffprobe: transcriptions need it');
        // (Another worker may have one: tried again, maybe there.)
        if (!rt.speech) throw new Error('this worker has no speech engine: install PocketSphinx on every worker');
        return hearJob({ runtime: rt, prober: rt.prober }, work, sig, onProgress, debugOf(job));
      }),
  };

  const preview = async (job: Job, signal?: AbortSignal): Promise<PreviewReturn> => {
    if ((await conn.exists(cancelledKey(job.id!))) === 1) throw new UnrecoverableError(CANCELLED);
    const { cacheDir, store, checked, opts: o } = decode<PreviewData>(job.data.payload);
    const rt = runtimeOf(cacheDir, store);
    if (signal?.aborted) throw new UnrecoverableError(CANCELLED);
    const p = await startPreview(rt, checked, { ...o, debug: (m) => logger.debug(`job ${job.id}: ${m}`) });
    logger.info(
      `job ${job.id}: started preview ${p.id}${job.attemptsMade ? ` (attempt ${job.attemptsMade + 1})` : ''}`,
    );
    void conn.set(makingKey(cacheDir, p.id), job.id!, 'EX', MAKING_TTL_S).catch(() => {});
    const send = throttled(() => {
      const progress: PreviewProgress = {
        id: p.id,
        fraction: p.progress,
        message: outward(p.message),
        cuts: p.cuts,
        ready: [...p.ready],
      };
      // (With an object store no server can read the segments: it asks this worker instead.)
      if (!rt.store)
        progress.segments = p.ready.flatMap((cut) => ((s) => (s ? [{ cut, ...s }] : []))(p.segment?.(cut)));
      void job.updateProgress(progress as never).catch(() => {});
    });
    const listener = () => send();
    p.listeners.add(listener);
    making.set(job.id!, { preview: p, rt });
    send.now();
    const onAbort = () => {
      logger.info(`job ${job.id}: cancelled; stopping preview ${p.id}`);
      p.abort();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { sheetBytes: _s, ffmpegMaxRssKiB, ...made } = await p.done;
      if (rt.store) {
        // Put in the store before the job completes: a server told it is done finds it there. Held meanwhile, so
        // that eviction here does not take it mid-upload; a store that fails is the machine's (tried again).
        await rt.cache.hold(made.preview_id).catch(() => {});
        await rt.store.put(made.preview_id).catch((err: Error) => {
          throw new Error(`the preview was made, but could not be put in the object store: ${err.message}`);
        });
        logger.debug(`job ${job.id}: preview ${made.preview_id} put in the object store`);
      }
      return { preview: made, ...(ffmpegMaxRssKiB ? { ffmpegMaxRssKiB } : {}) };
    } catch (err) {
      throw failed(job, err, signal, CANCELLED);
    } finally {
      send.stop();
      // (Removed once the preview is in the store, or failed: a reader then finds it there, or finds it gone.)
      void conn.del(makingKey(cacheDir, p.id)).catch(() => {});
      p.listeners.delete(listener);
      if (making.get(job.id!)?.preview === p) making.delete(job.id!);
      signal?.removeEventListener('abort', onAbort);
      // (The job ended here one way or the other: nothing in this process holds the preview any more.)
      if (!signal?.aborted) p.release();
    }
  };

  const dispatch = async (job: Job, signal?: AbortSignal): Promise<unknown> => {
    if (job.name === PREVIEW) return preview(job, signal);
    const kind = kinds[job.name];
    if (kind) return kind(job, signal);
    throw new UnrecoverableError(`this worker does not know jobs of kind "${job.name}" (an older cutroom?)`);
  };

  const worker = new Worker(
    QUEUE_NAME,
    async (job, token, signal) => {
      // A caller whose jobs fill their share waits (the job is put back a moment), letting other callers' run.
      const { caller, callerLimit } = job.data as { caller?: string; callerLimit?: number };
      const lease =
        caller && callerLimit ? await takeCallerSlot(conn, caller, callerLimit, job.id!, opts.lockMs * 2) : undefined;
      if (caller && callerLimit && !lease) {
        await job.moveToDelayed(Date.now() + 300 + Math.floor(Math.random() * 400), token);
        throw new DelayedError();
      }
      active++;
      running.add(job.id!);
      try {
        return await dispatch(job, signal);
      } catch (err) {
        // Whatever ends a job is its failedReason, which callers are shown: never this worker's paths.
        if (err instanceof Error) err.message = outward(err.message);
        throw err;
      } finally {
        active--;
        running.delete(job.id!);
        await lease?.release();
      }
    },
    {
      connection: connect(opts.url, 'cutroom-worker-jobs'),
      prefix: PREFIX,
      concurrency: opts.concurrency,
      lockDuration: opts.lockMs,
      // A dead worker's job is looked for a few times per lock period, and failed after it stalled twice.
      stalledInterval: Math.max(1000, Math.round(opts.lockMs / 3)),
      maxStalledCount: 2,
      autorun: false,
    },
  );
  // A lost connection is said once per outage (connection.ts), not per retry here.
  worker.on('error', (err) => {
    if (!CONNECTION_LOST.test(err.message)) logger.warn(`queue: ${err.message}`);
  });
  const sub = watched(conn.duplicate(), opts.url);
  const onClipAsked = answerClips(conn, making, logger);
  sub.on('message', (channel: string, message: string) => {
    if (channel === CLIP_CHANNEL) return onClipAsked(message);
    if (worker.cancelJob(message, 'cancelled')) logger.debug(`job ${message}: a cancel came`);
  });
  await sub.subscribe(CANCEL_CHANNEL, CLIP_CHANNEL);
  // A job whose record is gone (Redis restarted empty, or emptied) is stopped: no server follows it any more, and it
  // would hold its slot to its end for nothing.
  const lostWatch = setInterval(() => {
    for (const id of running)
      void within(conn.exists(`${PREFIX}:${QUEUE_NAME}:${id}`), 2000).then(
        (found) => {
          if (found || !running.has(id)) return;
          if (worker.cancelJob(id, 'its record is gone'))
            logger.warn(`job ${id}: its record is gone from the queue (Redis restarted or emptied): stopped`);
        },
        () => {},
      );
  }, LOST_CHECK_MS);
  lostWatch.unref();
  void worker.run().catch((err: Error) => logger.error(`the worker stopped: ${err.message}`));
  await worker.waitUntilReady();
  logger.announce(
    `cutroom worker: running up to ${opts.concurrency} job(s) at once from ${shownUrl(opts.url)} (cache dir ${root}${opts.store ? `; previews kept in ${opts.store}` : ''})`,
  );

  return {
    health: async () => {
      // A PING waits for a Redis that is away (the connection retries): bounded here, since a probe must answer.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), 1000)));
      const answers = await Promise.race([
        conn.ping().then(
          (r) => r === 'PONG',
          () => false,
        ),
        timeout,
      ]).finally(() => clearTimeout(timer));
      return {
        ok: !draining && answers && worker.isRunning(),
        redis: conn.status,
        answers,
        active,
        draining,
        concurrency: opts.concurrency,
      };
    },
    close: async (graceMs) => {
      draining = true;
      // Jobs in flight may finish within the grace; those that do not stall, and another worker takes them up.
      const closing = worker.close();
      const timer = new Promise<'late'>((r) => setTimeout(() => r('late'), graceMs).unref());
      if ((await Promise.race([closing.then(() => 'closed' as const), timer])) === 'late')
        logger.warn(`jobs still running after ${graceMs} ms; stopping anyway (another worker takes them up)`);
      clearInterval(lostWatch);
      sub.disconnect();
      conn.disconnect();
    },
  };
}
