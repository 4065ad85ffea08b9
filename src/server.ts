// createServer(deps): an McpServer with every tool and resource registered. No I/O here.
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import type { Backend } from './backend/types.js';
import { type Logger, silentLogger } from './log.js';
import * as editResources from './resources/edits.js';
import * as exportResources from './resources/exports.js';
import * as inspectionResources from './resources/inspections.js';
import { DEFAULT_PART_BYTES, HTTP_PART_BYTES, showTextBodies } from './resources/parts.js';
import * as projectResources from './resources/projects.js';
import * as transcriptResources from './resources/transcripts.js';
import * as viewResources from './resources/views.js';
import * as workflowPrompts from './prompts/workflows.js';
import * as workflowSkills from './prompts/skills.js';
import type { MediaTools } from './media/locate.js';
import type { MediaProber } from './media/probe.js';
import type { ToolDeps } from './workflow/deps.js';
import type { EditStore } from './workflow/edit-store.js';
import { remotePaths, type RemotePaths } from './workflow/remote-paths.js';
import type { FileLinks } from './workflow/file-links.js';
import type { FetchRules } from './api/url-fetch.js';
import type { Uploads } from './workflow/upload-links.js';
import type { MediaRuntime } from './workflow/media-runtime.js';
import { UI_EXTENSION } from './workflow/views.js';
import { listAppOnlyToolsToAppHosts } from './tools/app-only.js';
import { assetTools } from './tools/assets.js';
import { registerTools } from './tools/define.js';
import { editTools } from './tools/edits.js';
import { inspectTools } from './tools/inspect.js';
import { interchangeTools } from './tools/interchange.js';
import { mediaTools } from './tools/media.js';
import { momentTools } from './tools/moments.js';
import { previewTools } from './tools/preview.js';
import { projectTools } from './tools/projects.js';
import { adaptToolResultsToProtocol } from './tools/protocol-compat.js';
import { scriptTools } from './tools/scripts.js';
import { tightenTools } from './tools/tighten.js';
import { transcriptTools } from './tools/transcripts.js';
import { viewTools } from './tools/view.js';
import { NAME, VERSION } from './version.js';
import type { JobRunner } from './workflow/jobs.js';
import type { KeptFiles } from './kept.js';

export interface ServerDeps {
  backend: Backend;
  logger?: Logger;
  /** ffmpeg/ffprobe as located at start (media/locate); absent ones disable the checks that need them. */
  media?: MediaTools;
  prober?: MediaProber;
  renderWaitMs?: number;
  renderPollMs?: number;
  runtime?: MediaRuntime;
  exportsDir?: string;
  /** A team's shared store for the cache dir's kept files (exports); absent: this machine's folders alone. */
  kept?: KeptFiles;
  allowedDirs?: string[];
  /** Resources larger than this many bytes are served in parts (default 4 MiB). */
  partBytes?: number;
  /** Serving one caller of a hosted server (HTTP, remote backend): files on this machine are not theirs. */
  hosted?: boolean;
  /** Checked edits by edit_id. */
  edits?: EditStore;
  /**
   * Served over stateless HTTP (one instance per request): no notification can follow a request's answer, so no
   * list change is advertised; `protocolVersion` is the version a 2025-era request declares in its
   * MCP-Protocol-Version header (2025-03-26 when it sends none, as the specification says to assume).
   */
  http?: { protocolVersion?: string };
  /** The server's own folders (cache, data): over HTTP, results show no path in them (workflow/remote-paths.ts). */
  serverFolders?: string[];
  /** import_media {url}: what a fetch may reach, bring and take. */
  fetchRules?: FetchRules;
  /** Over HTTP, signed links to the server's files for this caller (results link to them instead of naming them). */
  links?: FileLinks;
  /** Over HTTP on the local backend, this caller's upload links (import_media {upload}). */
  uploads?: Uploads;
  /** The job queue (CUTROOM_QUEUE_URL); absent: the heavy work runs in this process. */
  jobs?: JobRunner;
}

/**
 * Over HTTP the caller cannot open the server's files: every resource read is shown with the server's folders replaced
 * (workflow/remote-paths.ts; tool results are, by registerTools in tools/define.ts). A text served in parts is replaced
 * before it is split (resources/parts.ts); its manifest and parts are passed as they are here (their sizes and hashes
 * are of those bytes).
 */
function hideServerPathsInResources(server: McpServer, paths: RemotePaths): void {
  /** A failure thrown rather than returned (a resource read's, answered as a JSON-RPC error) is shown the same way. */
  const shownFailure = (err: unknown) => {
    if (err instanceof Error) err.message = paths.text(err.message);
    return err;
  };
  // A body served in parts is shown before it is split, so that its parts join to what is shown.
  showTextBodies(server, paths.text);
  const registerResource = server.registerResource.bind(server) as (...a: unknown[]) => unknown;
  type Read = (
    uri: URL,
    ...rest: unknown[]
  ) => Promise<{ contents: { uri: string; _meta?: Record<string, unknown> }[] }>;
  (server as unknown as { registerResource: (...a: unknown[]) => unknown }).registerResource = (...a: unknown[]) => {
    const read = a.at(-1) as Read;
    const shown: Read = async (uri, ...rest) => {
      let r: Awaited<ReturnType<Read>>;
      try {
        r = await read(uri, ...rest);
      } catch (err) {
        throw shownFailure(err);
      }
      const parted =
        /\/parts\/\d+$/.test(uri.pathname) ||
        r.contents.some((c) => c._meta && Object.keys(c._meta).some((k) => /manifest|parts/i.test(k)));
      return parted ? r : paths.value(r);
    };
    return registerResource(...a.slice(0, -1), shown);
  };
}

/** Links that take a preview's or an export's cutroom:// URI (what a hosted caller's results name) for its file. */
function linksToUris(links: FileLinks, runtime?: MediaRuntime, exportsDir?: string): FileLinks {
  const fileOf = (uri: string) => {
    const m = /^cutroom:\/\/(previews|exports)\/([\w-]+)\/([\w-]+\.[A-Za-z0-9]+)$/.exec(uri);
    if (!m) return uri;
    const dir = m[1] === 'previews' ? runtime?.cache.root : exportsDir;
    return dir ? join(dir, m[2]!, m[3]!) : uri;
  };
  return { link: (file, name) => links.link(fileOf(file), name) };
}

/**
 * What every tool shares, said once here rather than in every tool's description (each byte of tools/list is paid in
 * every chat): the workflow, the clocks times are on, ids and links, and how long results are bounded.
 */
/** `http`: over HTTP the server's folders are not named (a caller sees no path of the server's, here either). */
export function instructions(backend: Backend, http = false): string {
  const on = http && backend.kind === 'local' ? 'local projects on the server' : backend.description;
  return [
    `cutroom is a cutting room for generative video projects, working on ${on} (${backend.kind} backend).`,
    'Workflow: list_projects; get_project (assets by name, kind, length, size); inspect_asset (shots, silences, a contact sheet) and transcribe_asset ' +
      '(words with times) to see and hear a source; compose_edit until ready, which keeps the edit and returns its edit_id; preview_edit {edit_id} for a ' +
      'local dry run (contact sheet, loudness and flags per cut); render_edit {edit_id}, then get_render_status until done. Renders are slow and costly: preview first. ' +
      'export_edit and import_edit hand a cut to an editor (OTIO, FCPXML, EDL) and take it back.',
    "Times are seconds (65.25) or HH:MM:SS(.mmm). A clip's start and end are in and out points in its source; an overlay's at and until are on the " +
      'output timeline, and its audio plays from its own beginning, or from `from` (a time in the audio). ' +
      "Sound: gain_db (dB, -60 to 24) multiplies with volume 0-1 and audio_levels; fade_in and fade_out are seconds of fade at an item's start " +
      'and end; an overlay with role "music" ducks duck_db (default 12) under speech (the cuts\' sound and dialogue overlays, heard in the sound). ' +
      'Cuts\' loudness is evened out (level_dialogue, default true); loudness "web" (-14 LUFS), "podcast" (-16) or "broadcast" (-23) brings the ' +
      'output there; the preview reports LUFS of dialogue, music and mix per cut and flags music too close under speech. captions {burn: true} ' +
      'burns the transcripts in (export_edit srt/vtt writes them); a clip\'s focus {x, y} or "auto" fills a vertical or square output. ' +
      'On the service, gain_db of 0 or less is carried in audio_levels; gains over 0, fades, from, ducking, levelling, loudness and captions shape previews and local renders only.',
    'Project and asset ids are UUIDs; an id that names nothing gets "did you mean". Signed links in results expire: fetch again rather than reuse them.',
    'Long results are bounded: left_out says what a result leaves out and how to get it (a page, or a resource with the whole).',
    'delete_project and delete_asset delete for good: ask the user first, then call with confirm: true.',
    ...(backend.kind === 'local'
      ? [
          'Local backend (no account): import_media {project_id, path} brings media in from the allowed folders (list_media shows them), or {url} fetches an https link; renders are made on this machine.',
        ]
      : []),
    'Every failure is an error result that says what to do next; an edit checked and found not ready is not one: compose_edit and tighten_edit answer ready: false with the diagnostics to fix.',
  ].join('\n');
}

export function createServer({
  backend,
  logger = silentLogger,
  media = {},
  prober,
  renderWaitMs = 45_000,
  renderPollMs,
  runtime,
  exportsDir,
  kept,
  allowedDirs,
  partBytes,
  hosted,
  edits,
  http,
  serverFolders,
  links,
  uploads,
  fetchRules,
  jobs,
}: ServerDeps): McpServer {
  const server = new McpServer(
    { name: NAME, version: VERSION, title: 'cutroom — a cutting room for video projects' },
    {
      // (tools: declared below, once registered: McpServer sets its tools/list handler when a capability names tools,
      // and listAppOnlyToolsToAppHosts must see it set.)
      capabilities: {
        resources: { listChanged: !http },
        prompts: { listChanged: false },
        completions: {},
        logging: {},
        // MCP Apps: this server serves views (ui://) and app-only tools.
        extensions: { [UI_EXTENSION]: {} },
      },
      instructions: instructions(backend, !!http),
    },
  );
  const deps: ToolDeps = {
    backend,
    logger,
    media,
    prober,
    renderWaitMs,
    renderPollMs,
    runtime,
    exportsDir,
    allowedDirs,
    // Over HTTP no part may make a server-sent event over 1 MiB.
    partBytes: http ? Math.min(partBytes ?? DEFAULT_PART_BYTES, HTTP_PART_BYTES) : partBytes,
    ...(hosted ? { hosted } : {}),
    ...(edits ? { edits } : {}),
    ...(jobs ? { jobs } : {}),
    ...(kept ? { kept } : {}),
    ...(fetchRules ? { fetchRules } : {}),
    ...(uploads ? { uploads } : {}),
  };
  const paths =
    http && serverFolders?.length
      ? remotePaths(serverFolders, links && linksToUris(links, runtime, exportsDir))
      : undefined;
  if (paths) hideServerPathsInResources(server, paths);
  // Before any tool is registered: McpServer sets its tools/list handler with the first, and this must see it set.
  listAppOnlyToolsToAppHosts(server);
  // In tools/list's order.
  registerTools(
    server,
    deps,
    [
      ...projectTools,
      ...assetTools,
      ...scriptTools,
      ...editTools,
      ...previewTools,
      ...mediaTools,
      ...inspectTools,
      ...interchangeTools,
      ...transcriptTools,
      ...momentTools,
      ...tightenTools,
      ...viewTools,
    ],
    paths,
  );
  projectResources.register(server, deps);
  inspectionResources.register(server, deps);
  exportResources.register(server, deps);
  editResources.register(server, deps);
  transcriptResources.register(server, deps);
  viewResources.register(server, deps);
  workflowPrompts.register(server, { backend, logger });
  workflowSkills.register(server, { local: backend.kind === 'local' });
  adaptToolResultsToProtocol(server, http?.protocolVersion);
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}
