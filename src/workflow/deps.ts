// What every tool group and resource receives from createServer.
import type { Backend } from '../backend/types.js';
import type { KeptFiles } from '../kept.js';
import type { Logger } from '../log.js';
import type { MediaTools } from '../media/locate.js';
import type { MediaProber } from '../media/probe.js';
import type { EditStore } from './edit-store.js';
import type { JobRunner } from './jobs.js';
import type { MediaRuntime } from './media-runtime.js';
import type { Uploads } from './upload-links.js';
import type { FetchRules } from '../api/url-fetch.js';

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
  /** Where export_edit writes (CUTROOM_CACHE_DIR/exports); without it the interchange tools are not offered. */
  exportsDir?: string;
  /** Folders import_edit may read a timeline file from (CUTROOM_ALLOWED_DIRS), besides exportsDir. */
  allowedDirs?: string[];
  /** Resources larger than this many bytes are served in parts of this size (CUTROOM_RESOURCE_PART_BYTES). */
  partBytes?: number;
  /** One caller of a hosted server: import_edit reads only their exports; export_edit fetches no media here. */
  hosted?: boolean;
  /** Checked edits by edit_id (CUTROOM_DATA_DIR/edits, per caller over HTTP). */
  edits?: EditStore;
  /** A team's shared store for the cache dir's kept files (exports): kept.ts. */
  kept?: KeptFiles;
  /** import_media {url}: what a fetch may reach, bring and take (CUTROOM_FETCH_*). */
  fetchRules?: FetchRules;
  /** Over HTTP on the local backend: this caller's upload links (import_media {upload}). */
  uploads?: Uploads;
  /** The job queue (CUTROOM_QUEUE_URL): previews run on its workers. Absent: in this process. */
  jobs?: JobRunner;
}
