// Edit tools: compose_edit, render_edit, get_render_status.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { RenderReceipt } from '../api/models.js';
import type { Backend } from '../backend/types.js';
import { DiagnosticSchema, type Diagnostic, type Edit } from '../edit/model.js';
import { outputFilenameProblem } from '../edit/normalize.js';
import { forService, type SourceSizes } from '../edit/service-form.js';
import { DEFAULT_FADE_MS } from '../edit/plan.js';
import { checkAndKeep, describeDiagnostics, sourceSizes } from '../workflow/check-edit.js';
import type { CheckedEdit } from '../workflow/checked-edit.js';
import { captionsOf, dialogueWords, type EditCaptions } from '../workflow/captions.js';
import { EditInputShape, EditRefShape } from '../workflow/edit-input.js';
import {
  RenderStatusSchema,
  checkAgainSeconds,
  durationText,
  findRender,
  renderStatus,
  runningText,
  waitForRender,
  whereItStands,
  type RenderStatus,
} from '../workflow/render-status.js';
import { fitList } from './budget.js';
import { CheckOutput, checkStructured, checkText, editLink, refuseEdit } from './edit-results.js';
import { defineTool, type HandlerDeps } from './define.js';
import { afterStage, beating, progressFor, type Progress } from './progress.js';
import { ToolError, ok, requireUuid, shown, unknownOutcome } from './result.js';

const projectSubject = (id: unknown) => ({
  what: typeof id === 'string' && id ? `project ${id}` : "the edit's project",
  listedBy: 'list_projects',
});
export const renderUri = (projectId: string, assetId: string) => `vj://projects/${projectId}/renders/${assetId}`;

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ComposeEditInput = z.object(EditInputShape);
const ComposeEditOutput = z.object(CheckOutput);
const RenderEditInput = z.object({
  ...EditRefShape,
  wait: z.boolean().optional().describe('Follow it (45 s at most)'),
});
const RenderEditOutput = z.object({
  render: RenderStatusSchema.extend({ service_edit_id: z.string().optional() }),
  edit_id: z.string().optional(),
  warnings: z.array(DiagnosticSchema),
});
const GetRenderStatusInput = z.object({
  project_id: z.string(),
  asset_id: z.string().describe("The render's asset id, from render_edit"),
  cancel: z.boolean().optional().describe('Stop it (local); its partial file is removed'),
});

/** Options of a render that do nothing where it is made: said, not silently dropped. */
function renderOptionWarnings(backend: Backend, fadeMs: number, edit: Edit, sources: SourceSizes): Diagnostic[] {
  if (backend.kind !== 'remote') return [];
  const fade: Diagnostic[] =
    fadeMs !== DEFAULT_FADE_MS
      ? [
          {
            severity: 'warning',
            path: '/audio_fade_ms',
            message: 'audio_fade_ms shapes previews and local renders only: the service renders by its own rules',
            hint: 'preview_edit shows it; leave it out for renders on the service',
          },
        ]
      : [];
  return [...fade, ...forService(edit, sources).warnings];
}

async function composeEdit(input: z.output<typeof ComposeEditInput>, ctx: ServerContext, deps: HandlerDeps) {
  const listen = beating(progressFor(ctx));
  const c = await checkAndKeep(deps, input, ctx.mcpReq.signal, {
    onProgress: listen.update,
    waitMs: deps.renderWaitMs,
    debug: (m) => deps.logger.debug(m),
  }).finally(listen.stop);
  const text = checkText(c);
  const result = ok(checkStructured(c, Buffer.byteLength(text)), text);
  if (c.editId) result.content.push(editLink(c.editId, 'The checked edit, whole'));
  return result;
}

/** Sends a checked, ready edit to be rendered (with its burned captions and its dialogue's words, locally). */
async function submitRender(
  deps: HandlerDeps,
  c: CheckedEdit,
  edit: Edit,
  extra: { sources: SourceSizes; captions: EditCaptions | undefined },
  signal: AbortSignal,
): Promise<RenderReceipt> {
  const { backend } = deps;
  const speechWords = backend.kind === 'local' ? await dialogueWords(deps, c, signal) : undefined;
  const receipt = await backend
    .createEdit(
      c.projectId,
      edit,
      { signal },
      {
        fadeMs: c.fadeMs,
        sources: extra.sources,
        ...(extra.captions ? { cues: extra.captions.cues } : {}),
        ...(speechWords?.size ? { speechWords } : {}),
      },
    )
    .catch((err: unknown) => {
      throw unknownOutcome(
        err,
        'the render request',
        'call get_project and look for a generated_video asset created just now; only if there is none, call render_edit again.',
      );
    });
  if (!receipt.asset_id && !receipt.url) {
    throw new ToolError(
      'the service accepted the render but named no asset; call get_project to find the new generated_video asset',
    );
  }
  return receipt;
}

/** Follows a render for up to `waitMs`, its progress passed on: a fraction done where the backend tells one. */
function followRender(
  backend: Backend,
  projectId: string,
  receipt: RenderReceipt,
  opts: { waitMs: number; pollMs: number | undefined; progress: Progress; fractions: boolean; signal: AbortSignal },
): Promise<RenderStatus | undefined> {
  const { progress, fractions } = opts;
  return waitForRender(backend, projectId, receipt, {
    maxWaitMs: opts.waitMs,
    pollMs: opts.pollMs,
    signal: opts.signal,
    onProgress: (s, elapsed) =>
      fractions
        ? progress(s?.progress ?? 0, 1, s ? whereItStands(s) : 'not listed yet')
        : progress(Math.round(elapsed / 1000), undefined, s ? whereItStands(s) : 'not listed yet'),
  });
}

/**
 * What render_edit warns of: the check's warnings, options that do nothing where it renders, captions it cannot make.
 */
function renderWarnings(
  backend: Backend,
  c: CheckedEdit,
  edit: Edit,
  sources: SourceSizes,
  captions: EditCaptions | undefined,
): Diagnostic[] {
  const captionWarnings = (captions?.warnings ?? []).map((message): Diagnostic => ({
    severity: 'warning',
    path: '/captions',
    message,
  }));
  return [
    ...c.diagnostics.filter((d) => d.severity === 'warning'),
    ...renderOptionWarnings(backend, c.fadeMs, edit, sources),
    ...captionWarnings,
  ];
}

type ShownRender = RenderStatus & { service_edit_id?: string };

/** How loud a finished local render came out, when it was measured. */
const loudnessText = (s: RenderStatus) =>
  s.lufs !== undefined && s.true_peak_db !== undefined ? ` (${s.lufs} LUFS, true peak ${s.true_peak_db} dBTP)` : '';

/** render_edit's first line: where the render stands, and what to call next. */
function renderNextText(
  render: ShownRender,
  followed: boolean,
  opts: { waitMs: number; follow: string; kind: Backend['kind'] },
): string {
  if (render.done) return `Rendered: ${render.url ?? render.asset_id}${loudnessText(render)}`;
  if (render.failed) return `The render failed (${render.status}${render.reason ? `: ${render.reason}` : ''}).`;
  if (followed)
    return `Still running after a ${durationText(opts.waitMs / 1000)} wait: ${runningText(render, opts.kind)}. Follow it with ${opts.follow} in about ${durationText(checkAgainSeconds(render))}.`;
  return `Render started (status ${render.status}). Follow it with ${opts.follow}.`;
}

/** render_edit's text after its first line: the warnings, the check's notes, the edit_id. */
function renderMoreText(warnings: Diagnostic[], c: CheckedEdit): string {
  const warned = warnings.length
    ? `\nWarnings:\n${describeDiagnostics({ diagnostics: warnings }, 12, 'structuredContent.warnings')}`
    : '';
  const noted = c.notes.length
    ? `\nNotes: ${c.notes.slice(0, 5).join('; ')}${c.notes.length > 5 ? `; … ${c.notes.length - 5} more (compose_edit lists them)` : ''}`
    : '';
  return `${warned}${noted}${c.editId ? `\nedit_id: ${c.editId}` : ''}`;
}

/**
 * render_edit {edit_id, filename}: the file name is the render's, not the edit's (the edit and its id stay); checked
 * as the edit's own would be.
 */
function renderName(input: z.output<typeof RenderEditInput>): { name?: string; rest: typeof input } {
  const { filename, ...others } = input;
  const rest = { ...others, filename: undefined };
  if (input.edit_id === undefined || !input.edit_id.trim() || filename === undefined) return { rest: input };
  const problem = outputFilenameProblem(filename);
  if (problem) throw new ToolError(`filename: ${problem.message}${problem.hint ? `; ${problem.hint}` : ''}`);
  return { name: filename as string, rest };
}

async function renderEdit({ wait, ...given }: z.output<typeof RenderEditInput>, ctx: ServerContext, deps: HandlerDeps) {
  const { backend, logger } = deps;
  const { name, rest: input } = renderName(given);
  const signal = ctx.mcpReq.signal;
  const started = Date.now();
  const progress = progressFor(ctx);
  // A backend that renders itself reports the fraction done; a service, only the time gone (no total).
  const fractions = !!backend.renderProgress;
  const listen = beating(progress, { total: fractions ? 1 : null, share: wait ? 0.5 : 1 });
  let c: CheckedEdit;
  let captions: EditCaptions | undefined;
  try {
    c = await checkAndKeep(deps, input, signal, {
      onProgress: listen.update,
      waitMs: deps.renderWaitMs,
      debug: (m) => logger.debug(m),
    });
    if (!c.ready || !c.edit) return refuseEdit(c, 'rendered');
    // Captions burned in by a backend that renders itself (the service's format cannot carry them: a warning), the
    // speech heard now where it was not (its time counts against the wait too).
    captions =
      backend.kind === 'local' && c.timeline?.captions?.burn
        ? await captionsOf(deps, c, signal, {
            onProgress: listen.update,
            waitMs: Math.max(0, deps.renderWaitMs - (Date.now() - started)),
            debug: (m) => logger.debug(m),
          })
        : undefined;
  } finally {
    listen.stop();
  }
  if (!c.edit) return refuseEdit(c, 'rendered');
  const edit = name ? { ...c.edit, video_output_filename: name } : c.edit;
  const sources = sourceSizes(c.assets);
  const receipt = await submitRender(deps, c, edit, { sources, captions }, signal);
  // Time spent listening (a clip cut by words) counts against the wait.
  const waitMs = listen.last < 0 ? deps.renderWaitMs : Math.max(0, deps.renderWaitMs - (Date.now() - started));
  const status = wait
    ? await followRender(backend, c.projectId, receipt, {
        waitMs,
        pollMs: deps.renderPollMs,
        progress: afterStage(progress, listen.last),
        fractions,
        signal,
      })
    : undefined;
  const assetId = status?.asset_id ?? receipt.asset_id ?? 'unknown';
  const render: ShownRender = {
    ...(status ?? {
      asset_id: assetId,
      status: receipt.status ?? 'submitted',
      uploaded: false,
      done: false,
      failed: false,
    }),
    ...(receipt.edit_id ? { service_edit_id: receipt.edit_id } : {}),
  };
  const warnings = renderWarnings(backend, c, edit, sources, captions);
  const follow = `get_render_status {project_id: "${c.projectId}", asset_id: "${assetId}"}`;
  const next = renderNextText(render, status !== undefined, { waitMs, follow, kind: backend.kind });
  const result = ok(
    { render, ...(c.editId ? { edit_id: c.editId } : {}), warnings: fitList(warnings, 6000).shown },
    `${next}${renderMoreText(warnings, c)}`,
  );
  if (assetId !== 'unknown') {
    result.content.push({
      type: 'resource_link',
      uri: renderUri(c.projectId, assetId),
      name: edit.video_output_filename,
      mimeType: 'video/mp4',
      description: 'The render: its status and, once done, its link',
    });
  }
  return result;
}

/** get_render_status's text: done, failed, or how far it has got and when to look again. */
function renderStatusText(s: RenderStatus, kind: Backend['kind']): string {
  if (s.done) return `Done: ${s.url ?? '(no url)'}${loudnessText(s)}`;
  if (s.failed) return `Failed (${s.status}${s.reason ? `: ${s.reason}` : ''})`;
  return `Not done: ${runningText(s, kind)}. Check again in about ${durationText(checkAgainSeconds(s))}.`;
}

/** get_render_status {cancel: true}: stops a local render wherever it runs; a service's cannot be stopped. */
async function cancelRender(backend: Backend, projectId: string, assetId: string, signal: AbortSignal) {
  if (!backend.cancelRender)
    throw new ToolError(
      `nothing was cancelled: the service offers no way to stop a render (its API has none); render ${assetId} runs to its end`,
    );
  if (!(await findRender(backend, projectId, { asset_id: assetId }, signal)))
    throw new ToolError(`no asset ${shown(assetId)} in project ${projectId}; get_project lists the assets`);
  const outcome = await backend.cancelRender(projectId, assetId, { signal });
  const asset = await findRender(backend, projectId, { asset_id: assetId }, signal);
  if (!asset) throw new ToolError(`asset ${shown(assetId)} is gone from project ${projectId}`);
  const s = await renderStatus(backend, projectId, asset);
  const text = {
    'not running': () => `Nothing to cancel: it had ended. ${renderStatusText(s, backend.kind)}`,
    asked: () => `Asked to stop; the server running it has not stopped it yet. ${renderStatusText(s, backend.kind)}`,
    stopped: () => `Cancelled: ${s.reason ?? 'stopped'}. The asset stays, marked failed.`,
  }[outcome]();
  return ok(s, text);
}

async function getRenderStatus(
  { project_id, asset_id, cancel }: z.output<typeof GetRenderStatusInput>,
  ctx: ServerContext,
  { backend }: HandlerDeps,
) {
  const pid = requireUuid(project_id, 'project_id', 'list_projects');
  const aid = asset_id.trim();
  if (!aid) throw new ToolError('asset_id is empty; render_edit returned the id to use');
  if (cancel) return cancelRender(backend, pid, aid, ctx.mcpReq.signal);
  const asset = await findRender(backend, pid, { asset_id: aid }, ctx.mcpReq.signal);
  if (!asset)
    throw new ToolError(
      `no asset ${shown(aid)} in project ${pid} yet; if render_edit just returned it, try again in a few seconds, else get_project lists the assets`,
    );
  const s = await renderStatus(backend, pid, asset);
  return ok(s, renderStatusText(s, backend.kind));
}

const composeEditTool = defineTool({
  name: 'compose_edit',
  config: {
    title: 'Compose and check an edit',
    description:
      'Builds an edit (video cuts in order, audio overlays) and checks it against the media, rendering nothing: diagnostics ' +
      "(with JSON pointers and hints) and each cut's place on the timeline. Once ready, kept under an edit_id (same edit, same id) " +
      'for preview_edit, render_edit, export_edit.',
    inputSchema: ComposeEditInput,
    outputSchema: ComposeEditOutput,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: (input) => projectSubject(input.project_id),
  handler: composeEdit,
});

const renderEditTool = defineTool({
  name: 'render_edit',
  config: {
    title: 'Render an edit',
    description:
      'Renders an edit (edit_id) into a new video asset, checked first (any error: nothing sent). Slow and costly: preview first; follow it with get_render_status. Never resent: after a failure midway, look for a new asset in get_project before retrying.',
    inputSchema: RenderEditInput,
    outputSchema: RenderEditOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  subject: (input) => projectSubject(input.project_id),
  handler: renderEdit,
});

const getRenderStatusTool = defineTool({
  name: 'get_render_status',
  config: {
    title: 'Check a render',
    description:
      'Where a render stands: status; while it runs, time elapsed, (local) progress and time left; once done, its url (signed, expires). Check again when its text says.',
    inputSchema: GetRenderStatusInput,
    outputSchema: RenderStatusSchema,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: ({ project_id }) => projectSubject(project_id),
  handler: getRenderStatus,
});

export const editTools = [composeEditTool, renderEditTool, getRenderStatusTool];
