// A preview as a job: what a server puts in the queue, what its worker reports while it runs and what it returns.
import type { CheckedEdit } from '../workflow/check-edit.js';
import type { MediaRuntime, Preview, PreviewOptions } from '../workflow/preview.js';
import { encode, jobIdOf } from './codec.js';

export const PREVIEW = 'preview';

/** startPreview's arguments, less what cannot travel (the debug hook) and the runtime (named by its cache dir). */
export interface PreviewData {
  cacheDir: string;
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
}

/** The job's return value: the preview as made (its sheet is read from the shared cache dir, not carried). */
export interface PreviewReturn {
  preview: Preview;
  ffmpegMaxRssKiB?: number;
}

export function previewJobData(rt: MediaRuntime, checked: CheckedEdit, opts: PreviewOptions): { jobId: string; data: { payload: string } } {
  const { debug: _d, ...rest } = opts;
  const data: PreviewData = { cacheDir: rt.cache.opts.dir, checked, opts: rest };
  // The project record (its dates, its other assets) does not change what is previewed.
  const { project: _p, ...what } = checked;
  return { jobId: jobIdOf(PREVIEW, { cacheDir: data.cacheDir, checked: what, opts: rest }), data: { payload: encode(data) } };
}
