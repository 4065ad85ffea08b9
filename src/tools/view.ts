// view_edit: the preview view's own tool (an MCP Apps app-only tool, _meta.ui.visibility ["app"]): the person trims,
// drops or moves a cut in the view, and it calls this with the edit it shows and the changes. The changed edit is
// checked and kept (a new edit_id), and its preview started (or joined, or reused) as preview_edit does. Listed only
// to clients that declare the MCP Apps extension (server.ts); callable by any, since a host relays its view's calls.
// An in point is said, kept and listed as the source frame the render starts the cut on (cutClock), never as a time
// between two frames: a trimmed one is moved onto it, and each listed cut's source_in is the frame's.
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { EditChangeSchema, applyChanges } from '../edit/changes.js';
import { cutClock } from '../edit/cut-clock.js';
import type { Diagnostic } from '../edit/model.js';
import { formatTimecode, parseTimecode } from '../edit/timecode.js';
import { checkAndKeep } from '../workflow/check-edit.js';
import type { CheckedEdit } from '../workflow/checked-edit.js';
import type { ToolDeps } from '../workflow/deps.js';
import { EditRefShape } from '../workflow/edit-input.js';
import type { MediaRuntime } from '../workflow/media-runtime.js';
import { cutClipUri, previewLevels } from '../workflow/preview.js';
import type { PreviewJob } from '../workflow/preview-types.js';
import { PREVIEW_VIEW_URI } from '../workflow/views.js';
import { PreviewOutputSchema, doneResult, follow, needRuntime, startCheckedPreview } from './preview.js';
import { defineTool, type HandlerDeps } from './define.js';
import { progressFor } from './progress.js';
import { ToolError, ok } from './result.js';

export const VIEW_EDIT = 'view_edit';

const ViewEditInput = z.object({
  ...EditRefShape,
  width: z.number().int().min(64).max(1920).optional(),
  changes: z.array(EditChangeSchema).max(50).optional(),
  seen: z.number().int().min(0).optional(),
});

const ViewEditOutput = PreviewOutputSchema.extend({
  project_id: z.string().optional(),
  changed: z.string().optional(),
  ready: z.array(z.object({ index: z.number().int(), uri: z.string() })).optional(),
  levels: z.object({ step: z.number(), cuts: z.array(z.array(z.number())) }).optional(),
});

/**
 * JSON bytes the levels may take in a result: beyond, neighbours are merged (their louder kept) and the step doubles.
 */
const LEVELS_BYTES = 3000;
export function boundLevels(
  levels: { step: number; cuts: number[][] },
  max = LEVELS_BYTES,
): { step: number; cuts: number[][] } {
  let { step, cuts } = levels;
  // (Silence may come as -Infinity, which JSON cannot carry: the floor is -120 dB.)
  cuts = cuts.map((c) => c.map((db) => (Number.isFinite(db) ? Math.max(-120, Math.round(db * 10) / 10) : -120)));
  while (JSON.stringify({ step, cuts }).length > max && cuts.some((c) => c.length > 1)) {
    cuts = cuts.map((c) =>
      Array.from({ length: Math.ceil(c.length / 2) }, (_, i) => Math.max(c[2 * i]!, c[2 * i + 1] ?? -Infinity)),
    );
    step *= 2;
  }
  return { step, cuts };
}

/**
 * Why a changed edit cannot be made, in one line for the person: its first error, the cut named as the view shows it
 * (#1 is index 0). The view leaves out what in it is written for a model (person-text.ts).
 */
function refusal(c: CheckedEdit): string {
  const d: Diagnostic | undefined = c.diagnostics.find((x) => x.severity === 'error') ?? c.diagnostics[0];
  if (!d) return 'its check found no error, yet it cannot be previewed';
  const cut = /^\/video_series_sequential\/(\d+)/.exec(d.path);
  return `${cut ? `cut ${Number(cut[1]) + 1}: ` : ''}${d.message}${d.hint ? `; ${d.hint}` : ''}`;
}

/**
 * The in point a cut of an asset starts on (ms): the start of the source frame the render uses (cutClock), to the
 * ms; within half a millisecond of that frame, so that it means the same frame again. As given where the asset's
 * frame rate is not known.
 */
export function frameInPoint(checked: Pick<CheckedEdit, 'assets'>, assetId: string, inMs: number): number {
  const facts = checked.assets.get(assetId.trim())?.facts;
  if (!facts?.frameRate) return inMs;
  return Math.round(cutClock({ inSec: inMs / 1000 }, facts).inSec * 1000);
}

/** The edit the view shows, checked, with its changes applied and checked again; `changed` says what changed. */
async function changedEdit(
  deps: ToolDeps,
  input: Omit<z.output<typeof ViewEditInput>, 'width' | 'changes' | 'seen'>,
  changes: z.output<typeof ViewEditInput>['changes'],
  signal: AbortSignal,
): Promise<{ checked: CheckedEdit; changed?: string }> {
  const checked = await checkAndKeep(deps, input, signal, { waitMs: deps.renderWaitMs });
  if (!changes?.length) {
    if (!checked.ready) throw new ToolError(`the edit is not ready: ${refusal(checked)}`);
    return { checked };
  }
  if (!checked.ready || !checked.edit) throw new ToolError(`the edit to change is not ready: ${refusal(checked)}`);
  const applied = applyChanges(checked.edit, changes, {
    inPointOf: (assetId, inMs) => frameInPoint(checked, assetId, inMs),
  });
  if (!applied.ok) throw new ToolError(applied.reason);
  const again = await checkAndKeep(
    deps,
    { project_id: checked.projectId, edit: applied.edit, audio_fade_ms: checked.fadeMs },
    signal,
    { waitMs: deps.renderWaitMs },
  );
  if (!again.ready) throw new ToolError(`the changed edit would not play: ${refusal(again)}`);
  return { checked: again, changed: applied.changed };
}

/** A cut's in point as the view shows it: the start of the source frame it starts on (frameInPoint). */
function frameTimecode(checked: Pick<CheckedEdit, 'assets'>, c: { asset_id: string; source_in: string }): string {
  const t = parseTimecode(c.source_in);
  return t.ok ? formatTimecode(frameInPoint(checked, c.asset_id, t.ms)) : c.source_in;
}

/** The preview still rendering: its progress and the cuts ready to play (the view asks again with seen). */
function renderingView(job: PreviewJob, changed: string | undefined, extra: Record<string, unknown>): CallToolResult {
  const ready = job.ready.map((index) => ({ index, uri: cutClipUri(job.id, index) }));
  return ok(
    {
      preview_id: job.id,
      status: 'rendering' as const,
      progress: Math.round(job.progress * 1000) / 1000,
      ...extra,
      ready,
    },
    `${changed ? `Changed: ${changed}. ` : ''}The preview ${job.id} is rendering (${Math.floor(job.progress * 100)}%, ${ready.length} cuts ready); call again with seen: ${ready.length}.`,
  );
}

/** The preview done: preview_edit's result, with what changed and the cuts' levels the view draws. */
async function doneView(
  deps: ToolDeps,
  rt: MediaRuntime,
  job: PreviewJob,
  checked: CheckedEdit,
  changed: string | undefined,
  extra: Record<string, unknown>,
): Promise<CallToolResult> {
  if ('error' in job.settled!) throw job.settled.error;
  const levels = await previewLevels(rt, job.id).catch(() => undefined);
  const bounded = levels?.cuts?.length ? boundLevels(levels) : undefined;
  const reserve = bounded ? JSON.stringify(bounded).length : 0;
  const result = doneResult(job.settled!.result, {
    hosted: deps.hosted,
    ...(checked.editId ? { editId: checked.editId } : {}),
    reserveBytes: reserve,
  });
  const made = result.structuredContent as { cuts?: { asset_id: string; source_in: string }[] };
  const structured = {
    ...made,
    ...(made.cuts ? { cuts: made.cuts.map((c) => ({ ...c, source_in: frameTimecode(checked, c) })) } : {}),
    ...extra,
    ...(bounded ? { levels: bounded } : {}),
  };
  if (changed) result.content.unshift({ type: 'text', text: `Changed: ${changed}.` });
  return { ...result, structuredContent: structured };
}

async function viewEdit(
  { width, changes, seen, ...input }: z.output<typeof ViewEditInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
): Promise<CallToolResult> {
  const rt = needRuntime(deps, VIEW_EDIT);
  const signal = ctx.mcpReq.signal;
  const started = performance.now();
  const { checked, changed } = await changedEdit(deps, input, changes, signal);
  const job = await startCheckedPreview(deps, rt, checked, width, signal, { waitMs: deps.renderWaitMs });
  const waitMs = Math.max(0, deps.renderWaitMs - (performance.now() - started));
  // Back as soon as the preview is done, or more cuts are ready than the view has.
  const settled = job.settled
    ? true
    : await follow(job, waitMs, signal, progressFor(ctx), () => job.ready.length > (seen ?? 0));
  // Cancelled while waiting: this caller no longer wants it (a preview nobody else follows stops).
  if (!settled && signal.aborted) job.abort();
  else job.release();
  // (The project: where the view's drop zone adds a file.)
  const extra = {
    project_id: checked.projectId,
    ...(checked.editId ? { edit_id: checked.editId } : {}),
    ...(changed ? { changed } : {}),
  };
  if (!settled || !job.settled) return renderingView(job, changed, extra);
  return doneView(deps, rt, job, checked, changed, extra);
}

const viewEditTool = defineTool({
  name: VIEW_EDIT,
  config: {
    description: 'For the preview view: apply changes (trim, drop, move cuts) to an edit and preview it.',
    inputSchema: ViewEditInput,
    outputSchema: ViewEditOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    _meta: { ui: { resourceUri: PREVIEW_VIEW_URI, visibility: ['app'] } },
  },
  subject: (input) => ({ what: `project ${String(input.project_id ?? '')}`, listedBy: 'list_projects' }),
  handler: viewEdit,
});

export const viewTools = [viewEditTool];
