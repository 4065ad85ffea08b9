// The seam between the tools and where the heavy work runs (DESIGN.md, jobs/). With no queue configured the tools
// call workflow/ directly, in this process, as on one machine; with CUTROOM_QUEUE_URL they call a JobRunner, whose
// jobs run the same workflow functions on `cutroom worker`s sharing the cache dir.
import type { CheckedEdit } from './checked-edit.js';
import type { MediaRuntime } from './media-runtime.js';
import type { PreviewJob, PreviewOptions } from './preview-types.js';

export interface PreviewRunner {
  /**
   * As startPreview: starts the preview of a checked edit, or joins the one of the same edit already running
   * (anywhere). Resolves once the preview has an id; `signal` ends the wait for it (the job is then let go).
   */
  start(rt: MediaRuntime, checked: CheckedEdit, opts: PreviewOptions, signal?: AbortSignal): Promise<PreviewJob>;
  /** A preview started through this runner from this process, by its id, while it is followed. */
  job(rt: MediaRuntime, id: string): PreviewJob | undefined;
  /**
   * Where the preview of this id stands on the queue (started by any server), asked by a replica that did not follow
   * it: a worker is making it; it was made, under another id when a worker took the job over from one that died;
   * it failed; or the queue knows nothing of it (undefined).
   */
  onQueue?(rt: MediaRuntime, id: string): Promise<QueuedPreview | undefined>;
  /**
   * The path here of a ready cut's clip of a preview a worker is making (started by any server), made on first
   * asking; undefined when no worker is making that preview, or that cut is not rendered yet.
   */
  clip?(rt: MediaRuntime, id: string, index: number): Promise<string | undefined>;
  /**
   * Stops the preview of this id wherever a worker makes it (started by any server, whoever follows it), once that
   * worker ended it (its folder removed); undefined when no job on the queue is making it.
   */
  cancel?(rt: MediaRuntime, id: string): Promise<CancelledPreview | undefined>;
}

/** How a cancel by id ended: stopped; asked, but not stopped within the wait; or it had ended already. */
export type CancelledPreview = 'stopped' | 'asked' | 'not running';

export type QueuedPreview =
  | { state: 'rendering'; fraction: number; message: string }
  | { state: 'made'; id: string }
  | { state: 'failed'; reason: string };

/** What a job's caller gives besides its work: the call's signal (cancelling it lets go of the job) and progress. */
export interface JobCall {
  signal?: AbortSignal;
  onProgress?: (fraction: number, message: string) => void;
  /** How long to wait for a worker to start it before failing (default CUTROOM_RENDER_WAIT_MS). */
  startWaitMs?: number;
}

export interface JobRunner {
  preview: PreviewRunner;
  /**
   * Runs a job of a kind the workers know (jobs/worker.ts), on a cache dir (a caller's, over HTTP), and resolves
   * with what it returned. The same work asked meanwhile (anywhere) joins it; when every caller cancelled, it is
   * stopped.
   */
  run<T>(kind: JobKind, cacheDir: string, what: unknown, call: JobCall): Promise<T>;
  close(): Promise<void>;
}

/**
 * The kinds of job besides previews: an asset's scan (inspect_asset), a transcription (transcribe_asset), a local
 * render.
 */
/** The kinds of job a worker runs besides previews (jobs/preview-job.ts has its own). */
export const JOB_KINDS = ['inspect', 'transcribe', 'render'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
