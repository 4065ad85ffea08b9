// What every tool group receives from createServer.
import type { Backend } from '../backend/types.js';
import type { Logger } from '../log.js';
import type { MediaTools } from '../media/locate.js';
import type { MediaProber } from '../media/probe.js';
import type { MediaRuntime } from '../workflow/preview.js';

export interface ToolDeps {
  backend: Backend;
  logger: Logger;
  media: MediaTools;
  /** Present when ffprobe was found. */
  prober?: MediaProber;
  /** How long render_edit with wait polls before handing over to get_render_status. */
  renderWaitMs: number;
  /** The first interval between its polls (it grows to 5 s). */
  renderPollMs?: number;
  /** ffmpeg, its process limit and the preview cache; absent when ffmpeg was not found. */
  runtime?: MediaRuntime;
}
