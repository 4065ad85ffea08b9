// The one interface every tool reaches the service through. Two implementations: remote.ts (the service
// over HTTP) and local/ (the embedded store). Failures are ServiceErrors in both.
import type { Asset, Project, RenderReceipt, Script } from '../api/models.js';
import type { Edit } from '../edit/model.js';
import type { Cue } from '../edit/captions.js';
import type { ImportTarget, MediaListing } from './local/media-files.js';

/** How cutroom renders an edit itself. */
export interface RenderOptions {
  /** Fade at every edit of the sound, ms (the plan's default when absent). */
  fadeMs?: number;
  /** Captions burned in when the edit asks (its `captions`), on the output clock (workflow/captions.ts). */
  cues?: Cue[];
  /**
   * The dialogue's transcripts' words by asset (s on each source's clock): where music ducks, speech is taken from
   * them.
   */
  speechWords?: Map<string, { start: number; end: number }[]>;
  /** Display sizes of the sources (asset id -> size): a service gets a cut's focus as the crop that frames it. */
  sources?: Map<string, { width: number; height: number }>;
}

/** How far a render this machine runs has got, as its renderer last said. */
export interface RenderProgress {
  /** 0..1 of the render. */
  fraction: number;
  /** Seconds left, once enough is done to tell. */
  eta_seconds?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface CreateProjectInput {
  name: string;
  description: string;
  prompt_id?: string;
}

export interface ImportedMedia {
  asset: Asset;
  kind: 'video' | 'audio' | 'image';
  duration_ms?: number;
  /** What the file's header claimed, when the media ends well before it (duration_ms is where it really ends). */
  header_duration_ms?: number;
  width?: number;
  height?: number;
  has_audio: boolean;
  /** The project already held this content: `asset` is the asset imported before, and nothing was copied. */
  already_imported?: boolean;
}

export interface ImportOptions extends CallOptions {
  /** Import a copy even when the project already holds the same content. */
  again?: boolean;
  /** The file is one cutroom fetched (import by URL) into a folder of its own: named so, not by its path. */
  fetched?: { name: string };
}

/** What delete_asset removed. */
export interface DeletedAsset {
  name?: string;
  /** Its media file in the data dir was removed (false: it had none, or its record pointed outside the data dir). */
  file_removed: boolean;
}

/** A stored record that could not be used (local backend): where it is and what is wrong with it. */
export interface RecordProblem {
  path: string;
  message: string;
}

/** Projects, and the records that could not be read: one bad record hides no other project. */
export interface ProjectList {
  projects: Project[];
  problems?: RecordProblem[];
}

export type ProjectWithProblems = Project & { problems?: RecordProblem[] };

export interface Backend {
  readonly kind: 'remote' | 'local';
  /** One line for logs and the server's instructions, e.g. "Video Jungle API at https://api.video-jungle.com". */
  readonly description: string;
  listProjects(limit: number | undefined, call?: CallOptions): Promise<ProjectList>;
  /** The project; with the local backend, also its asset records that could not be read. */
  getProject(projectId: string, call?: CallOptions): Promise<ProjectWithProblems>;
  createProject(input: CreateProjectInput, call?: CallOptions): Promise<Project>;
  deleteProject(projectId: string, call?: CallOptions): Promise<void>;
  listScripts(projectId: string, limit: number | undefined, call?: CallOptions): Promise<Script[]>;
  /**
   * Starts a render of the edit in the project. Sent once; never retried. `render` is how cutroom renders it itself
   * (the local backend); a service renders by its own rules.
   */
  createEdit(projectId: string, edit: Edit, call?: CallOptions, render?: RenderOptions): Promise<RenderReceipt>;
  /**
   * Local backend only: settles when a render this process is running ends (done or failed; never rejects), or
   * undefined when it runs none by that id. A wait then hears of the end at once instead of at its next poll.
   */
  renderSettled?(assetId: string): Promise<void> | undefined;
  /**
   * Local backend only: how far a render still processing has got (from ffmpeg's own progress), whichever server
   * sharing the data dir runs it; undefined before it has started or when nothing says.
   */
  renderProgress?(projectId: string, assetId: string): Promise<RenderProgress | undefined>;
  /**
   * Local backend only: stops a render still processing, whichever process sharing the data dir runs it (it removes
   * its partial file and marks the asset failed). 'stopped' once it is; 'asked' when its process has not stopped it
   * within the wait; 'not running' when it had ended already.
   */
  cancelRender?(projectId: string, assetId: string, call?: CallOptions): Promise<'stopped' | 'asked' | 'not running'>;
  /**
   * Local backend only: brings a media file from an allowed folder into a project; content the project already holds
   * comes back as its existing asset (already_imported) unless `again`.
   */
  importMedia?(projectId: string, path: string, call?: ImportOptions): Promise<ImportedMedia>;
  /** Local backend only: removes an asset's record and its media in the data dir (nothing outside it). */
  deleteAsset?(projectId: string, assetId: string, call?: CallOptions): Promise<DeletedAsset>;
  /**
   * Local backend only: the media files (by name) in a folder of the allowed folders, or in each allowed folder;
   * and what each path names to import: a folder's media files, the path itself, or why neither. One call walks at
   * most WALK_ENTRIES entries in all.
   */
  listMedia?(folder: string | undefined, opts: { recursive: boolean; signal?: AbortSignal }): Promise<MediaListing[]>;
  mediaTargets?(paths: string[], opts: { recursive: boolean; signal?: AbortSignal }): Promise<ImportTarget[]>;
  close(): Promise<void>;
}
