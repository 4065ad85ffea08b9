// Transcriptions under way in this process, one per transcript asked for: every call that asks for the same one
// meanwhile joins it, with its progress so far. A call may stop waiting and leave it running (an edit call that
// cannot wait hands over to transcribe_asset); it is stopped only when every caller still waiting has cancelled.
import { UserFacingError } from '../errors.js';

export interface TranscriptionJob<T> {
  readonly key: string;
  /** When it started (ms since the epoch). */
  readonly started: number;
  /** Fraction done (0-1) and what it is doing ("listening", or what it waits for). */
  progress: number;
  message: string;
  readonly done: Promise<T>;
  readonly controller: AbortController;
  readonly callers: Set<object>;
  readonly listeners: Set<(fraction: number, message: string) => void>;
}

export interface FollowOptions {
  signal?: AbortSignal;
  onProgress?: (fraction: number, message: string) => void;
  /** Stop waiting at this time (ms since the epoch): the job goes on, and the call gets `handOver(job)` thrown. */
  handOverAt?: number;
}

/** The jobs of one transcript cache (over HTTP, each caller has their own). */
export class TranscriptionJobs<T> {
  private readonly jobs = new Map<string, TranscriptionJob<T>>();

  /** The job under way for `key`, unless it was stopped. */
  find(key: string): TranscriptionJob<T> | undefined {
    const job = this.jobs.get(key);
    return job && !job.controller.signal.aborted ? job : undefined;
  }

  /** The newest job under way whose key starts with `prefix`. */
  latest(prefix: string): TranscriptionJob<T> | undefined {
    let newest: TranscriptionJob<T> | undefined;
    for (const [key, job] of this.jobs) {
      if (key.startsWith(prefix) && !job.controller.signal.aborted && (!newest || job.started >= newest.started))
        newest = job;
    }
    return newest;
  }

  /**
   * Starts `work` as the job for `key`; it reports progress to whoever follows it, and leaves the list when it settles.
   */
  start(
    key: string,
    work: (signal: AbortSignal, progress: (fraction: number, message: string) => void) => Promise<T>,
  ): TranscriptionJob<T> {
    const controller = new AbortController();
    const listeners = new Set<(fraction: number, message: string) => void>();
    const job: TranscriptionJob<T> = {
      key,
      started: Date.now(),
      progress: 0,
      message: 'starting',
      controller,
      callers: new Set(),
      listeners,
      done: Promise.resolve().then(() =>
        work(controller.signal, (fraction, message) => {
          job.progress = Math.max(job.progress, fraction);
          job.message = message;
          for (const l of listeners) l(job.progress, message);
        }),
      ),
    };
    job.done
      .finally(() => {
        if (this.jobs.get(key) === job) this.jobs.delete(key);
      })
      // Its failure reaches every caller still waiting; a job every caller left fails unheard.
      .catch(() => {});
    this.jobs.set(key, job);
    return job;
  }

  /**
   * Waits for a job as one of its callers: its progress so far at once, then as it comes. Cancelling leaves it
   * (and stops it when no caller is left); at `handOverAt` the caller leaves it running.
   */
  follow(job: TranscriptionJob<T>, opts: FollowOptions, handOver: (job: TranscriptionJob<T>) => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const me = {};
      const listener = (f: number, m: string) => opts.onProgress?.(f, m);
      let timer: NodeJS.Timeout | undefined;
      const leave = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        job.callers.delete(me);
        job.listeners.delete(listener);
      };
      const onAbort = () => {
        leave();
        if (!job.callers.size) job.controller.abort();
        reject(new UserFacingError('the transcription was cancelled; nothing was kept'));
      };
      job.callers.add(me);
      if (opts.signal?.aborted) return onAbort();
      job.listeners.add(listener);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      opts.onProgress?.(job.progress, job.message);
      if (opts.handOverAt !== undefined) {
        timer = setTimeout(
          () => {
            leave();
            reject(handOver(job));
          },
          Math.max(0, opts.handOverAt - Date.now()),
        );
      }
      job.done.then(
        (v) => (leave(), resolve(v)),
        (e: unknown) => (leave(), reject(e)),
      );
    });
  }
}
