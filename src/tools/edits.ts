// Edit tools: compose_edit, render_edit, get_render_status.
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Backend } from '../backend/types.js';
import { DiagnosticSchema, type Diagnostic, type Edit } from '../edit/model.js';
import { forService, type SourceSizes } from '../edit/service-form.js';
import { DEFAULT_FADE_MS } from '../edit/plan.js';
import { checkAndKeep, describeDiagnostics, sourceSizes } from '../workflow/check-edit.js';
import { captionsOf, dialogueWords } from '../workflow/captions.js';
import { EditInputShape, EditRefShape } from '../workflow/edit-input.js';
import { editUri } from '../workflow/edit-store.js';
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
import type { ToolDeps } from '../workflow/deps.js';
import { fitList } from './budget.js';
import { CheckOutput, checkStructured, checkText, refuseEdit } from './edit-results.js';
import { afterStage, beating, progressFor } from './progress.js';
import { ToolError, guard, ok, requireUuid, shown, unknownOutcome } from './result.js';

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

export function register(server: McpServer, deps: ToolDeps): void {
  const { backend, logger } = deps;
  const openWorldHint = backend.kind === 'remote';

  server.registerTool(
    'compose_edit',
    {
      title: 'Compose and check an edit',
      description:
        'Builds an edit (video cuts in playing order, audio overlays) and checks it against the media, rendering nothing: diagnostics ' +
        "(error|warning, JSON pointer, hint) and each cut's place on the timeline. When ready, keeps it under an edit_id (the same edit, the same id) " +
        'for preview_edit, render_edit, export_edit. Iterate until ready.',
      inputSchema: ComposeEditInput,
      outputSchema: ComposeEditOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint },
    },
    (input, ctx) =>
      guard(
        'compose_edit',
        logger,
        async () => {
          const listen = beating(progressFor(ctx));
          const c = await checkAndKeep(deps, input, ctx.mcpReq.signal, {
            onProgress: listen.update,
            waitMs: deps.renderWaitMs,
            debug: (m) => logger.debug(m),
          }).finally(listen.stop);
          const text = checkText(c);
          const result = ok(checkStructured(c, Buffer.byteLength(text)), text);
          if (c.editId)
            result.content.push({
              type: 'resource_link',
              uri: editUri(c.editId),
              name: `${c.editId}.json`,
              mimeType: 'application/json',
              description: 'The checked edit, whole',
            });
          return result;
        },
        projectSubject(input.project_id),
      ),
  );

  server.registerTool(
    'render_edit',
    {
      title: 'Render an edit',
      description:
        'Renders an edit (edit_id) into a new video asset, checked first (any error: nothing sent). Slow and costly: preview first. Follow it with get_render_status. Never resent: after a failure midway, look for a new asset in get_project before trying again.',
      inputSchema: RenderEditInput,
      outputSchema: RenderEditOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint },
    },
    ({ wait, ...input }, ctx) =>
      guard(
        'render_edit',
        logger,
        async () => {
          const started = Date.now();
          const progress = progressFor(ctx);
          // A backend that renders itself reports the fraction done; a service, only the time gone (no total).
          const fractions = !!backend.renderProgress;
          const listen = beating(progress, { total: fractions ? 1 : null, share: wait ? 0.5 : 1 });
          const c = await checkAndKeep(deps, input, ctx.mcpReq.signal, {
            onProgress: listen.update,
            waitMs: deps.renderWaitMs,
            debug: (m) => logger.debug(m),
          }).finally(listen.stop);
          if (!c.ready || !c.edit) return refuseEdit(c, 'rendered');
          // Captions burned in by a backend that renders itself (the service's format cannot carry them: a warning).
          const sources = sourceSizes(c.assets);
          const captions =
            backend.kind === 'local' && c.timeline?.captions?.burn
              ? await captionsOf(deps, c, ctx.mcpReq.signal)
              : undefined;
          const speechWords = backend.kind === 'local' ? await dialogueWords(deps, c, ctx.mcpReq.signal) : undefined;
          const receipt = await backend
            .createEdit(
              c.projectId,
              c.edit,
              { signal: ctx.mcpReq.signal },
              {
                fadeMs: c.fadeMs,
                sources,
                ...(captions ? { cues: captions.cues } : {}),
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
          let status: RenderStatus | undefined;
          // Time spent listening (a clip cut by words) counts against the wait.
          const waitMs = listen.last < 0 ? deps.renderWaitMs : Math.max(0, deps.renderWaitMs - (Date.now() - started));
          if (wait) {
            const next = afterStage(progress, listen.last);
            status = await waitForRender(backend, c.projectId, receipt, {
              maxWaitMs: waitMs,
              pollMs: deps.renderPollMs,
              signal: ctx.mcpReq.signal,
              onProgress: (s, elapsed) =>
                fractions
                  ? next(s?.progress ?? 0, 1, s ? whereItStands(s) : 'not listed yet')
                  : next(Math.round(elapsed / 1000), undefined, s ? whereItStands(s) : 'not listed yet'),
            });
          }
          const assetId = status?.asset_id ?? receipt.asset_id ?? 'unknown';
          const render = {
            ...(status ?? {
              asset_id: assetId,
              status: receipt.status ?? 'submitted',
              uploaded: false,
              done: false,
              failed: false,
            }),
            ...(receipt.edit_id ? { service_edit_id: receipt.edit_id } : {}),
          };
          const captionWarnings = (captions?.warnings ?? []).map((message): Diagnostic => ({
            severity: 'warning',
            path: '/captions',
            message,
          }));
          const warnings = [
            ...c.diagnostics.filter((d) => d.severity === 'warning'),
            ...renderOptionWarnings(backend, c.fadeMs, c.edit, sources),
            ...captionWarnings,
          ];
          const follow = `get_render_status {project_id: "${c.projectId}", asset_id: "${assetId}"}`;
          const next = render.done
            ? `Rendered: ${render.url ?? assetId}`
            : render.failed
              ? `The render failed (${render.status}${render.reason ? `: ${render.reason}` : ''}).`
              : status
                ? `Still running after a ${durationText(waitMs / 1000)} wait: ${runningText(render, backend.kind)}. Follow it with ${follow} in about ${durationText(checkAgainSeconds(render))}.`
                : `Render started (status ${render.status}). Follow it with ${follow}.`;
          const result = ok(
            { render, ...(c.editId ? { edit_id: c.editId } : {}), warnings: fitList(warnings, 6000).shown },
            `${next}${warnings.length ? `\nWarnings:\n${describeDiagnostics({ diagnostics: warnings }, 12, 'structuredContent.warnings')}` : ''}${c.notes.length ? `\nNotes: ${c.notes.slice(0, 5).join('; ')}${c.notes.length > 5 ? `; … ${c.notes.length - 5} more (compose_edit lists them)` : ''}` : ''}${c.editId ? `\nedit_id: ${c.editId}` : ''}`,
          );
          if (assetId !== 'unknown') {
            result.content.push({
              type: 'resource_link',
              uri: renderUri(c.projectId, assetId),
              name: c.edit.video_output_filename,
              mimeType: 'video/mp4',
              description: 'The render: its status and, once done, its link',
            });
          }
          return result;
        },
        projectSubject(input.project_id),
      ),
  );

  server.registerTool(
    'get_render_status',
    {
      title: 'Check a render',
      description:
        'Where a render_edit render stands: status; while it runs, time elapsed and (local) fraction done and time left; once done, its url (signed, expires). Check again when its text says.',
      inputSchema: GetRenderStatusInput,
      outputSchema: RenderStatusSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint },
    },
    ({ project_id, asset_id }, ctx) =>
      guard(
        'get_render_status',
        logger,
        async () => {
          const pid = requireUuid(project_id, 'project_id', 'list_projects');
          const aid = asset_id.trim();
          if (!aid) throw new ToolError('asset_id is empty; render_edit returned the id to use');
          const asset = await findRender(backend, pid, { asset_id: aid }, ctx.mcpReq.signal);
          if (!asset)
            throw new ToolError(
              `no asset ${shown(aid)} in project ${pid} yet; if render_edit just returned it, try again in a few seconds, else get_project lists the assets`,
            );
          const s = await renderStatus(backend, pid, asset);
          const text = s.done
            ? `Done: ${s.url ?? '(no url)'}`
            : s.failed
              ? `Failed (${s.status}${s.reason ? `: ${s.reason}` : ''})`
              : `Not done: ${runningText(s, backend.kind)}. Check again in about ${durationText(checkAgainSeconds(s))}.`;
          return ok(s, text);
        },
        projectSubject(project_id),
      ),
  );
}
