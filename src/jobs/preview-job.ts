// A preview as a job: what a server puts in the queue, what its worker reports while it runs and what it returns.
import type { CheckedEdit } from '../workflow/checked-edit.js';
import type { MediaRuntime } from '../workflow/media-runtime.js';
import type { Preview, PreviewOptions } from '../workflow/preview-types.js';
import { encode, jobIdOf } from './codec.js';

export const PREVIEW = 'preview';

/** startPreview's arguments, less what cannot travel (the debug hook) and the runtime (named by its cache dir). */
export interface PreviewData {
  /** The server's cache folder; with an object store, that folder relative to CUTROOM_CACHE_DIR (JobPlace). */
  cacheDir: string;
  /** The object store the preview is to be put in (its bucket and prefix), when the server has one. */
  store?: string;
  checked: CheckedEdit;
  opts: Omit<PreviewOptions, 'debug'>;
}

/** What the worker says as it goes (job progress): the preview's id as soon as it has one, then its progress. */
export interface PreviewProgress {
  id: string;
  fraction: number;
  message: string;
  cuts: number;
  ready: number[];
  /**
   * Without an object store (a shared cache dir): each ready cut's segment, by its key in the segment store (never
   * a path), and its clip's length, so that any server makes the clip itself as in-process.
   */
  segments?: { cut: number; key: string; seconds: number }[];
}

/** The job's return value: the preview as made (its sheet is read from the shared cache dir, not carried). */
export interface PreviewReturn {
  preview: Preview;
  ffmpegMaxRssKiB?: number;
}

/**
 * Where a job works. On a shared volume, the server's own cache folder (a path workers see too). With an object
 * store, that folder relative to CUTROOM_CACHE_DIR, which each worker resolves under its own: no volume is shared,
 * and replicas with different dirs give the same work the same job id.
 */
export interface JobPlace {
  cacheDir: string;
  store?: string;
}

export function previewJobData(
  rt: MediaRuntime,
  checked: CheckedEdit,
  opts: PreviewOptions,
  place: JobPlace = { cacheDir: rt.cache.opts.dir },
): { jobId: string; data: { payload: string } } {
  const { debug: _d, ...rest } = opts;
  const data: PreviewData = { ...place, checked, opts: rest };
  // The project record (its dates, its other assets) does not change what is previewed.
  const { project: _p, ...what } = checked;
  return {
    jobId: jobIdOf(PREVIEW, { cacheDir: data.cacheDir, checked: what, opts: rest }),
    data: { payload: encode(data) },
  };
}
