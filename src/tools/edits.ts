// Edit tools: compose_edit, render_edit, get_render_status.
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DiagnosticSchema, EditSchema } from '../edit/model.js';
import { TimelineSummarySchema } from '../edit/plan.js';
import { checkEdit, describeDiagnostics } from '../workflow/check-edit.js';
import { EditInputShape } from '../workflow/edit-input.js';
import { RenderStatusSchema, checkAgainSeconds, durationText, findRender, renderStatus, runningText, waitForRender, whereItStands, type RenderStatus } from '../workflow/render-status.js';
import type { ToolDeps } from '../workflow/deps.js';
import { CheckOutput, checkStructured, checkText, refuseEdit } from './edit-results.js';
import { progressFor } from './progress.js';
import { ToolError, guard, ok, requireUuid, unknownOutcome } from './result.js';

const projectSubject = (id: string) => ({ what: `project ${id}`, listedBy: 'list_projects' });
export const renderUri = (projectId: string, assetId: string) => `vj://projects/${projectId}/renders/${assetId}`;

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ComposeEditInput = z.object(EditInputShape);
const ComposeEditOutput = z.object({ ...CheckOutput, edit: EditSchema.optional().describe('The canonical edit, present when ready') });
const RenderEditInput = z.object({
  ...EditInputShape,
  wait: z.boolean().optional().describe('Follow the render until it is done (up to about 45 s), with progress notifications'),
});
const RenderEditOutput = z.object({
  render: RenderStatusSchema.extend({ edit_id: z.string().optional() }),
  warnings: z.array(DiagnosticSchema),
  summary: TimelineSummarySchema.optional(),
});
const GetRenderStatusInput = z.object({
  project_id: z.string().describe('Project id (a UUID) the render belongs to'),
  asset_id: z.string().describe("The render's asset id, as render_edit returned it"),
});

export function register(server: McpServer, deps: ToolDeps): void {
  const { backend, logger } = deps;
  const openWorldHint = backend.kind === 'remote';

  server.registerTool(
    'compose_edit',
    {
      title: 'Compose and check an edit',
      description:
        'Builds an edit definition (a timeline of video cuts with audio overlays) and checks it without rendering anything. ' +
        'Give clips [{asset_id, start, end, volume?, crop?}] in playing order (or {asset_id, shot} for a shot as inspect_asset numbers them, start/end then being offsets inside it), plus overlays [{asset_id, at, until?, volume?}] for voiceover or music, ' +
        'or a whole edit definition as edit. Times: seconds or HH:MM:SS.mmm; clip times are in the source clip, overlay times on the output timeline. ' +
        'Returns the canonical edit ready for render_edit or preview_edit, diagnostics (error|warning, a JSON pointer path, message, hint) and a summary ' +
        'of every cut\'s place on the timeline. Clip lengths are measured with ffprobe. Use it to iterate until ready is true.',
      inputSchema: ComposeEditInput,
      outputSchema: ComposeEditOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint },
    },
    (input, ctx) =>
      guard(
        'compose_edit',
        logger,
        async () => {
          const c = await checkEdit(deps, input, ctx.mcpReq.signal);
          return ok({ ...checkStructured(c), ...(c.edit ? { edit: c.edit } : {}) }, checkText(c));
        },
        projectSubject(input.project_id),
      ),
  );

  server.registerTool(
    'render_edit',
    {
      title: 'Render an edit',
      description:
        'Renders an edit in the project: checks it first exactly as compose_edit does (any error and nothing is sent), then asks the service once ' +
        'to render it. A render is slow and costs money: check with compose_edit or preview_edit first. Returns the render\'s asset (id, status, url ' +
        'once done). With wait: true it follows the render for up to about 45 s; otherwise, and after that, follow it with get_render_status. ' +
        'If the request fails midway it is never resent automatically: check get_project for a new asset before trying again.',
      inputSchema: RenderEditInput,
      outputSchema: RenderEditOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint },
    },
    ({ wait, ...input }, ctx) =>
      guard(
        'render_edit',
        logger,
        async () => {
          const c = await checkEdit(deps, input, ctx.mcpReq.signal);
          if (!c.ready || !c.edit) return refuseEdit(c, 'rendered');
          const receipt = await backend.createEdit(c.projectId, c.edit, { signal: ctx.mcpReq.signal }, { fadeMs: c.fadeMs }).catch((err: unknown) => {
            throw unknownOutcome(
              err,
              'the render request',
              'call get_project and look for a generated_video asset created just now; only if there is none, call render_edit again.',
            );
          });
          if (!receipt.asset_id && !receipt.url) {
            throw new ToolError('the service accepted the render but named no asset; call get_project to find the new generated_video asset');
          }
          const progress = progressFor(ctx);
          let status: RenderStatus | undefined;
          if (wait) {
            // A backend that renders itself reports the fraction done; a service, only the time gone (no total).
            const fractions = !!backend.renderProgress;
            status = await waitForRender(backend, c.projectId, receipt, {
              maxWaitMs: deps.renderWaitMs,
              pollMs: deps.renderPollMs,
              signal: ctx.mcpReq.signal,
              onProgress: (s, elapsed) =>
                fractions
                  ? progress(s?.progress ?? 0, 1, s ? whereItStands(s) : 'not listed yet')
                  : progress(Math.round(elapsed / 1000), undefined, s ? whereItStands(s) : 'not listed yet'),
            });
          }
          const assetId = status?.asset_id ?? receipt.asset_id ?? 'unknown';
          const render = {
            ...(status ?? { asset_id: assetId, status: receipt.status ?? 'submitted', uploaded: false, done: false, failed: false }),
            ...(receipt.edit_id ? { edit_id: receipt.edit_id } : {}),
          };
          const warnings = c.diagnostics.filter((d) => d.severity === 'warning');
          const follow = `get_render_status {project_id: "${c.projectId}", asset_id: "${assetId}"}`;
          const next = render.done
            ? `Rendered: ${render.url ?? assetId}`
            : render.failed
              ? `The render failed (${render.status}${render.reason ? `: ${render.reason}` : ''}).`
              : status
                ? `Still running after a ${durationText(deps.renderWaitMs / 1000)} wait: ${runningText(render, backend.kind)}. Follow it with ${follow} in about ${durationText(checkAgainSeconds(render))}.`
                : `Render started (status ${render.status}). Follow it with ${follow}.`;
          const result = ok(
            { render, warnings, ...(c.summary ? { summary: c.summary } : {}) },
            `${next}${warnings.length ? `\nWarnings:\n${describeDiagnostics({ diagnostics: warnings }, 12, 'structuredContent.warnings')}` : ''}${c.notes.length ? `\nNotes: ${c.notes.join('; ')}` : ''}`,
          );
          if (assetId !== 'unknown') {
            result.content.push({ type: 'resource_link', uri: renderUri(c.projectId, assetId), name: c.edit.video_output_filename, mimeType: 'video/mp4', description: 'The render: its status and, once done, its link' });
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
        'Where a render started by render_edit stands: its status; while it runs, time elapsed and (local renders) fraction done and time left; ' +
        'once done, its url (a signed link that expires). Check again when its text says, until done or failed.',
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
          if (!asset) throw new ToolError(`no asset ${aid} in project ${pid} yet; if render_edit just returned it, try again in a few seconds, else get_project lists the assets`);
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
