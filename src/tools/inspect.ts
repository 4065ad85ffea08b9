// inspect_asset: what is inside a source before cutting it (shots to the frame, silences, loudness, a sheet, a zoom).
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { TimeInputSchema } from '../edit/model.js';
import { SCENE_THRESHOLD, SILENCE_DB, SILENCE_MIN_SECONDS } from '../media/inspect.js';
import { DEFAULT_ZOOM_FRAMES, InspectResultSchema, MAX_SHEET_FRAMES, inspectWithSheet, inspectionUri, type InspectResult } from '../workflow/inspect.js';
import { storedTranscript, transcriptUri } from '../workflow/transcribe.js';
import type { ToolDeps } from '../workflow/deps.js';
import { progressFor } from './progress.js';
import { guard, ok } from './result.js';

function describe(r: InspectResult): string {
  const size = r.width ? `, ${r.width}x${r.height}` : '';
  const fps = r.fps ? `, ${r.fps} fps` : '';
  const lines = [`${r.kind} ${r.asset_id}: ${r.duration_seconds} s${size}${fps}, ${r.has_audio ? 'with sound' : 'no sound'}${r.cached ? ' (cached scan)' : ''}`];
  if (r.kind === 'video') lines.push(`${r.shots.length} shot${r.shots.length === 1 ? '' : 's'}: ${r.shots.slice(0, 30).map((s) => `#${s.index} ${s.start}-${s.end}`).join(', ')}${r.shots.length > 30 ? ', … (all in structuredContent.shots)' : ''}`);
  if (r.has_audio) lines.push(r.silences.length ? `Silences: ${r.silences.slice(0, 20).map((s) => `${s.start_seconds}-${s.end_seconds} s`).join(', ')}${r.silences.length > 20 ? ', …' : ''}` : 'No silence.');
  if (r.sheet.mode === 'shots') lines.push(`The sheet shows shots ${r.sheet.first_shot}-${r.sheet.last_shot}, one frame each.${r.sheet.more ? ` ${r.sheet.more}.` : ''}`);
  if (r.sheet.mode === 'zoom') lines.push(`The sheet shows ${r.frames.length} frames from ${r.sheet.from_seconds} to ${r.sheet.to_seconds} s: ${r.frames.map((f) => f.seconds).join(', ')}`);
  if (r.scan.note) lines.push(`Note: ${r.scan.note}.`);
  return lines.join('\n');
}

/** Whether the asset has a transcript (transcribe_asset), so that an agent knows it can search and cut by words. */
const TranscriptStatusSchema = z.object({
  exists: z.boolean(),
  aligned: z.boolean().optional().describe('It is a known text aligned to the sound'),
  words: z.number().int().optional(),
  resource_uri: z.string().optional(),
});
const InspectOutput = InspectResultSchema.extend({ transcript: TranscriptStatusSchema.describe("The asset's transcript (whole asset): whether transcribe_asset made one") });

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const InspectAssetInput = z.object({
  project_id: z.string().describe('Project id (a UUID)'),
  asset_id: z.string().describe('Asset id (a UUID), as get_project lists it'),
  from: TimeInputSchema.optional().describe('Start of a span to zoom into (or to page shots from): seconds or HH:MM:SS.mmm'),
  to: TimeInputSchema.optional().describe('End of the span; default the end of the asset'),
  frames: z.number().int().min(1).max(MAX_SHEET_FRAMES).optional().describe(`Frames in a zoom (default ${DEFAULT_ZOOM_FRAMES})`),
});

export function register(server: McpServer, deps: ToolDeps): void {
  const { logger } = deps;
  server.registerTool(
    'inspect_asset',
    {
      title: 'Look inside a source',
      description:
        'Shows what is inside a video, audio or image asset before you cut it: kind, duration, size, fps, whether it has sound; ' +
        `shots (hard cuts found to the frame, as ffmpeg's scdet at threshold ${SCENE_THRESHOLD} finds them on a full decode; gradual transitions such as fades and dissolves are NOT found); ` +
        `silences (at least ${SILENCE_MIN_SECONDS} s below ${SILENCE_DB} dBFS) and a coarse loudness curve; and a labelled contact sheet (JPEG). ` +
        `Without from/to the sheet shows one frame per shot (the first ${MAX_SHEET_FRAMES}); from alone pages on (the shots from there). With from and to (seconds or HH:MM:SS.mmm) it zooms in: ` +
        `frames (default ${DEFAULT_ZOOM_FRAMES}, at most ${MAX_SHEET_FRAMES}) evenly spaced in the span, each labelled with its source time and shot, to pick exact in and out points; ` +
        'a span holding more shots than frames shows one frame per shot instead. The scan is cached per asset: asking again or zooming is quick. ' +
        'A long source takes a while the first time (keyframes first, then only the stretches where something changed); sends progress notifications. ' +
        'A clip in compose_edit, preview_edit or render_edit can be given as a shot: {asset_id, shot} (start/end then being offsets inside it).',
      inputSchema: InspectAssetInput,
      outputSchema: InspectOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: deps.backend.kind === 'remote' },
    },
    ({ project_id, asset_id, from, to, frames }, ctx) =>
      guard(
        'inspect_asset',
        logger,
        async () => {
          const progress = progressFor(ctx);
          const { jpeg, ...result } = await inspectWithSheet(deps, project_id, asset_id, { from, to, frames }, {
            signal: ctx.mcpReq.signal,
            onProgress: (f, message) => void progress(Math.round(f * 100), 100, message),
            debug: (m) => logger.debug(m),
          });
          await progress(100, 100, 'done');
          const stored = await storedTranscript(deps, project_id, result.asset_id, ctx.mcpReq.signal).catch(() => undefined);
          const transcript = stored
            ? { exists: true, aligned: stored.transcript.aligned, words: stored.transcript.words.length, resource_uri: transcriptUri(project_id.trim(), result.asset_id) }
            : { exists: false };
          const text = `${describe(result)}\n${stored ? `Transcript: ${transcript.words} words (${stored.transcript.aligned ? 'aligned to a text' : 'recognised'}).` : result.has_audio ? 'No transcript yet: transcribe_asset hears its words.' : ''}`.trimEnd();
          const out = ok({ ...result, transcript }, text);
          if (jpeg) out.content.push({ type: 'image', data: jpeg.toString('base64'), mimeType: 'image/jpeg' });
          out.content.push({ type: 'resource_link', uri: inspectionUri(project_id.trim(), result.asset_id), name: 'inspection.json', mimeType: 'application/json', description: 'This inspection as JSON' });
          return out;
        },
        { what: `project ${project_id}`, listedBy: 'list_projects' },
      ),
  );
}
