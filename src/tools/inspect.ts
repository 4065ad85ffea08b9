// inspect_asset: what is inside a source before cutting it (shots to the frame, silences, loudness, a sheet, a zoom).
import type { ServerContext } from '@modelcontextprotocol/server';
import { MAX_BYTES as MAX_SHEET_BYTES } from '../media/contact-sheet.js';
import { z } from 'zod';
import { TimeInputSchema } from '../edit/model.js';
import {
  InspectResultSchema,
  MAX_SHEET_FRAMES,
  inspectWithSheet,
  inspectionUri,
  type InspectResult,
} from '../workflow/inspect.js';
import { storedTranscript, transcriptUri } from '../workflow/transcribe.js';
import type { StoredTranscript } from '../workflow/transcript.js';
import { defineTool, type HandlerDeps } from './define.js';
import { progressFor } from './progress.js';
import { ok } from './result.js';
import { fitList } from './budget.js';

function describe(r: InspectResult): string {
  const size = r.width ? `, ${r.width}x${r.height}` : '';
  const fps = r.fps ? `, ${r.fps} fps` : '';
  const lines = [
    `${r.kind} ${r.asset_id}: ${r.duration_seconds} s${size}${fps}, ${r.has_audio ? 'with sound' : 'no sound'}${r.cached ? ' (cached scan)' : ''}`,
  ];
  if (r.kind === 'video')
    lines.push(
      `${r.shots.length} shot${r.shots.length === 1 ? '' : 's'}: ${r.shots
        .slice(0, 30)
        .map((s) => `#${s.index} ${s.start}-${s.end}`)
        .join(', ')}${r.shots.length > 30 ? ', … (all in structuredContent.shots)' : ''}`,
    );
  if (r.has_audio)
    lines.push(
      r.silences.length
        ? `Silences: ${r.silences
            .slice(0, 20)
            .map((s) => `${s.start_seconds}-${s.end_seconds} s`)
            .join(', ')}${r.silences.length > 20 ? ', …' : ''}`
        : 'No silence.',
    );
  if (r.sheet.mode === 'shots')
    lines.push(
      `The sheet shows shots ${r.sheet.first_shot}-${r.sheet.last_shot}, one frame each.${r.sheet.more ? ` ${r.sheet.more}.` : ''}`,
    );
  if (r.sheet.mode === 'zoom')
    lines.push(
      `The sheet shows ${r.frames.length} frames from ${r.sheet.from_seconds} to ${r.sheet.to_seconds} s: ${r.frames.map((f) => f.seconds).join(', ')}`,
    );
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
const InspectOutput = InspectResultSchema.extend({
  transcript: TranscriptStatusSchema,
  shots_total: z.number().int().optional().describe('When only some shots are listed: how many there are'),
  silences_total: z.number().int().optional(),
  warnings: z.array(z.string()).optional(),
  left_out: z.array(z.string()).optional(),
});

/** JSON bytes each list may take in a result (24 KB in all); the loudness curve is shown at most this coarse. */
const LIST_BYTES = { shots: 7000, silences: 2000 };
const LOUDNESS_WINDOWS = 100;

/** Windows of the loudness curve merged into at most `max`: the power mean of their RMS, the highest peak. */
function coarser(curve: InspectResult['loudness'], max: number): { curve: InspectResult['loudness']; merged: number } {
  const k = Math.ceil(curve.length / max);
  if (k <= 1) return { curve, merged: 1 };
  const out: InspectResult['loudness'] = [];
  for (let i = 0; i < curve.length; i += k) {
    const group = curve.slice(i, i + k);
    const power = group.reduce((p, w) => p + 10 ** (w.mean_db / 10), 0) / group.length;
    out.push({
      start_seconds: group[0]!.start_seconds,
      mean_db: Math.round(Math.max(-100, 10 * Math.log10(power)) * 10) / 10,
      peak_db: Math.max(...group.map((w) => w.peak_db)),
    });
  }
  return { curve: out, merged: k };
}

/**
 * The inspection as a result can carry it, whatever the source's length: the shots from the sheet's first on, the
 * silences from there, a coarser loudness curve; what is left out is said, with how to get it (a page from later
 * on, or the inspection resource, which has it all).
 */
function bounded(r: Omit<InspectResult, 'jpeg'>, uri: string) {
  const leftOut: string[] = [];
  // All the shots when they fit; else from the sheet's first shot (a page of shots, or a zoom) on.
  const firstShot = fitList(r.shots, LIST_BYTES.shots).leftOut
    ? (r.sheet.first_shot ?? r.frames.find((f) => f.shot !== undefined)?.shot ?? 1)
    : 1;
  const from = r.shots[firstShot - 1]?.start_seconds ?? r.sheet.from_seconds ?? 0;
  const shotsFrom = r.shots.slice(Math.max(0, firstShot - 1));
  const shots = fitList(shotsFrom, LIST_BYTES.shots);
  const next = shotsFrom[shots.shown.length];
  if (shots.leftOut && next)
    leftOut.push(`shots ${next.index}-${r.shots.length}: call again with from: ${next.start_seconds}, or read ${uri}`);
  if (firstShot > 1) leftOut.push(`shots 1-${firstShot - 1}: call without from, or read ${uri}`);
  const later = r.silences.filter((x) => x.end_seconds > from);
  const silences = fitList(later, LIST_BYTES.silences);
  if (silences.leftOut || later.length < r.silences.length)
    leftOut.push(
      `${r.silences.length - silences.shown.length} of ${r.silences.length} silences: ${uri} lists them all`,
    );
  const loud = coarser(r.loudness, LOUDNESS_WINDOWS);
  if (loud.merged > 1)
    leftOut.push(`the loudness curve is shown ${loud.merged} windows to one: ${uri} has all ${r.loudness.length}`);
  const partial = shots.shown.length < r.shots.length;
  return {
    ...r,
    shots: shots.shown,
    ...(partial ? { shots_total: r.shots.length } : {}),
    silences: silences.shown,
    ...(silences.shown.length < r.silences.length ? { silences_total: r.silences.length } : {}),
    loudness: loud.curve,
    scan: {
      ...r.scan,
      ...(loud.merged > 1 && r.scan.loudness_window_seconds
        ? { loudness_window_seconds: Math.round(r.scan.loudness_window_seconds * loud.merged * 1000) / 1000 }
        : {}),
    },
    ...(leftOut.length ? { left_out: leftOut } : {}),
  };
}

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const InspectAssetInput = z.object({
  project_id: z.string(),
  asset_id: z.string(),
  from: TimeInputSchema.optional().describe('Start of a zoom; alone, the shots from there'),
  to: TimeInputSchema.optional().describe('End of a zoom'),
  frames: z.number().int().min(1).max(MAX_SHEET_FRAMES).optional().describe('Frames in a zoom'),
});

/** What inspect_asset says of the asset's transcript: its words, or that transcribe_asset can hear them. */
function transcriptLine(stored: StoredTranscript | undefined, hasAudio: boolean): string {
  if (stored)
    return `Transcript: ${stored.transcript.words.length} words (${stored.transcript.aligned ? 'aligned to a text' : 'recognised'}).`;
  if (hasAudio) return 'No transcript yet: transcribe_asset hears its words.';
  return '';
}

async function inspectAsset(
  { project_id, asset_id, from, to, frames }: z.output<typeof InspectAssetInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const progress = progressFor(ctx);
  const { jpeg, ...result } = await inspectWithSheet(
    deps,
    project_id,
    asset_id,
    { from, to, frames },
    {
      signal: ctx.mcpReq.signal,
      onProgress: (f, message) => void progress(Math.round(f * 100), 100, message),
      debug: (m) => deps.logger.debug(m),
    },
  );
  await progress(100, 100, 'done');
  const stored = await storedTranscript(deps, project_id, result.asset_id, ctx.mcpReq.signal).catch(() => undefined);
  const transcript = stored
    ? {
        exists: true,
        aligned: stored.transcript.aligned,
        words: stored.transcript.words.length,
        resource_uri: transcriptUri(project_id.trim(), result.asset_id),
      }
    : { exists: false };
  const uri = inspectionUri(project_id.trim(), result.asset_id);
  const shown = bounded(result, uri);
  const warnings =
    frames !== undefined && (from === undefined || to === undefined)
      ? [`frames does nothing without both from and to (it sets a zoom's frames; the sheet shows one frame per shot)`]
      : [];
  const text = [
    describe(result),
    transcriptLine(stored, result.has_audio),
    ...warnings.map((w) => `Warning: ${w}`),
    ...(shown.left_out ?? []).map((l) => `Left out: ${l}.`),
  ]
    .filter(Boolean)
    .join('\n');
  const out = ok({ ...shown, transcript, ...(warnings.length ? { warnings } : {}) }, text);
  // (A sheet over its bound, as ffmpeg's lowest quality may leave one, is not sent inline.)
  if (jpeg && jpeg.length <= MAX_SHEET_BYTES)
    out.content.push({ type: 'image', data: jpeg.toString('base64'), mimeType: 'image/jpeg' });
  out.content.push({
    type: 'resource_link',
    uri,
    name: 'inspection.json',
    mimeType: 'application/json',
    description: 'This inspection, whole (JSON)',
  });
  return out;
}

const inspectAssetTool = defineTool({
  name: 'inspect_asset',
  config: {
    title: 'Look inside a source',
    description:
      'What an asset holds: duration, size, fps, sound; shots (hard cuts, to the frame), silences, loudness; a contact sheet, a frame ' +
      'per shot. from/to zoom in: labelled frames evenly spaced, for exact in and out points. Cached. ' +
      'Then clips can be {asset_id, shot}.',
    inputSchema: InspectAssetInput,
    outputSchema: InspectOutput,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: ({ project_id }) => ({ what: `project ${project_id}`, listedBy: 'list_projects' }),
  handler: inspectAsset,
});

export const inspectTools = [inspectAssetTool];
