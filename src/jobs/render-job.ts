// A local render as a job: the server's render request, less what only the machine running it can give (its
// ffmpeg, its ffprobe, the signal and the progress hook, which the queue carries instead).
import type { RenderOutcome, RenderRequest } from '../media/render.js';
import type { JobRunner } from '../workflow/jobs.js';

export type RenderWork = Omit<
  RenderRequest,
  'ffmpeg' | 'signal' | 'onProgress' | 'verifyWith' | 'sheetFor' | 'trackRss'
> & {
  /** Checked with ffprobe before it takes its name (the worker's own ffprobe). */
  verify: boolean;
};

/** A renderer for the local backend that renders on the queue's workers (which share the data dir). */
export function queuedRenderer(jobs: JobRunner, cacheDir: string): (req: RenderRequest) => Promise<RenderOutcome> {
  return (req) => {
    const { ffmpeg: _f, signal, onProgress, verifyWith, sheetFor: _s, trackRss: _t, ...rest } = req;
    const work: RenderWork = { ...rest, verify: !!verifyWith };
    // A render waits its turn in the queue as long as it may run (its caller follows it with get_render_status).
    return jobs.run<RenderOutcome>('render', cacheDir, work, {
      signal,
      onProgress: (f) => onProgress?.(f),
      startWaitMs: req.timeoutMs,
    });
  };
}
