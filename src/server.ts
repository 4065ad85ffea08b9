// createServer(deps): an McpServer with every tool and resource registered. No I/O here.
import { type CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { Backend } from './backend/types.js';
import { type Logger, silentLogger } from './log.js';
import * as exportResources from './resources/exports.js';
import * as inspectionResources from './resources/inspections.js';
import * as projectResources from './resources/projects.js';
import * as transcriptResources from './resources/transcripts.js';
import * as viewResources from './resources/views.js';
import * as workflowPrompts from './prompts/workflows.js';
import type { MediaTools } from './media/locate.js';
import type { MediaProber } from './media/probe.js';
import type { ToolDeps } from './workflow/deps.js';
import * as editTools from './tools/edits.js';
import * as inspectTools from './tools/inspect.js';
import * as interchangeTools from './tools/interchange.js';
import * as mediaTools from './tools/media.js';
import * as previewTools from './tools/preview.js';
import type { MediaRuntime } from './workflow/preview.js';
import * as projectTools from './tools/projects.js';
import { adaptToolResultsToProtocol } from './tools/protocol-compat.js';
import * as scriptTools from './tools/scripts.js';
import * as transcriptTools from './tools/transcripts.js';
import { NAME, VERSION } from './version.js';

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
  allowedDirs?: string[];
  /** Resources larger than this many bytes are served in parts (default 4 MiB). */
  partBytes?: number;
  /** Serving one caller of a hosted server (HTTP, remote backend): files on this machine are not theirs. */
  hosted?: boolean;
  /**
   * Served over stateless HTTP (one instance per request): no notification can follow a request's answer, so no
   * list change is advertised; `protocolVersion` is the version a 2025-era request declares in its
   * MCP-Protocol-Version header (2025-03-26 when it sends none, as the specification says to assume).
   */
  http?: { protocolVersion?: string };
}

/**
 * Every tool failure is also a log notification (level "error", logger "cutroom"), for clients that show the log:
 * sent at the level the client set with logging/setLevel, on the call's own stream (over HTTP too).
 */
function logToolFailures(server: McpServer): void {
  const register = server.registerTool.bind(server) as (...a: unknown[]) => unknown;
  type Handler = (...a: unknown[]) => Promise<CallToolResult>;
  (server as unknown as { registerTool: (name: string, config: unknown, handler: Handler) => unknown }).registerTool = (name, config, handler) =>
    register(name, config, async (...args: unknown[]) => {
      const result = await handler(...args);
      const ctx = args.at(-1) as { mcpReq?: { log?: (level: 'error', data: unknown, logger?: string) => Promise<void> } } | undefined;
      if (result.isError) {
        const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ').trim();
        await ctx?.mcpReq?.log?.('error', `${name}: ${text}`, 'cutroom').catch(() => {});
      }
      return result;
    });
}

export function instructions(backend: Backend): string {
  return [
    `cutroom is a cutting room for generative video projects, working on ${backend.description} (${backend.kind} backend).`,
    'Start with list_projects to find project ids; get_project shows a project\'s assets (videos, audio, images) and their signed links, which expire: fetch again rather than reuse old ones.',
    'list_scripts shows the generation scripts attached to a project, with the inputs a new generation needs; the full graph is the resource vj://projects/{project_id}/scripts/{script_id}.',
    'create_project makes a new project. delete_project deletes for good: ask the user first, then call it with confirm: true.',
    'To cut a video: get_project for the asset ids, compose_edit with clips (source in/out points, in playing order) and overlays (audio placed on the output timeline) until ready is true, preview_edit to see a local dry run (a contact sheet and per-cut loudness and flags), then render_edit (with wait: true) and get_render_status until done. A render is slow and costly: compose and preview first.',
    'To hand a cut to a human editor: export_edit writes it as OTIO, FCPXML or EDL (for Resolve, Premiere, Final Cut); import_edit reads the editor\'s timeline back into an edit to preview and render.',
    ...(backend.kind === 'local'
      ? ['This is the local backend (no account): bring media in with import_media {project_id, path} from the allowed folders; renders are made on this machine and their urls are file:// links.']
      : []),
    'Ids are UUIDs; every failure comes back as an error result that says what to do next.',
  ].join('\n');
}

export function createServer({ backend, logger = silentLogger, media = {}, prober, renderWaitMs = 45_000, renderPollMs, runtime, exportsDir, allowedDirs, partBytes, hosted, http }: ServerDeps): McpServer {
  const server = new McpServer(
    { name: NAME, version: VERSION, title: 'cutroom — a cutting room for video projects' },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: !http }, prompts: { listChanged: false }, completions: {}, logging: {} },
      instructions: instructions(backend),
    },
  );
  const deps: ToolDeps = { backend, logger, media, prober, renderWaitMs, renderPollMs, runtime, exportsDir, allowedDirs, partBytes, ...(hosted ? { hosted } : {}) };
  logToolFailures(server);
  projectTools.register(server, deps);
  scriptTools.register(server, deps);
  editTools.register(server, deps);
  previewTools.register(server, deps);
  mediaTools.register(server, deps);
  inspectTools.register(server, deps);
  interchangeTools.register(server, deps);
  transcriptTools.register(server, deps);
  projectResources.register(server, deps);
  inspectionResources.register(server, deps);
  exportResources.register(server, deps);
  transcriptResources.register(server, deps);
  viewResources.register(server, deps);
  workflowPrompts.register(server, { backend, logger });
  adaptToolResultsToProtocol(server, http?.protocolVersion);
  return server;
}
