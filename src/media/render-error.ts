// A render, a preview or a measurement that did not finish: cancelled, out of disk, or ffmpeg's own failure.
import { MediaJobError } from './process.js';

export class RenderError extends MediaJobError {
  override name = 'RenderError';
  constructor(
    message: string,
    cancelled = false,
    /** The disk filled up (ENOSPC): said as such, not as ffmpeg's last line. */
    readonly noSpace = false,
  ) {
    super(message, cancelled);
  }
}
