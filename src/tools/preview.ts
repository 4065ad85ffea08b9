// preview_edit: the dry run. Renders the edit locally, small and fast, and shows the agent what it would get.
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DiagnosticSchema } from '../edit/model.js';
import { INSTALL_HINT } from '../media/locate.js';
import { checkEdit, describeDiagnostics } from '../workflow/check-edit.js';
import { EditInputShape } from '../workflow/edit-input.js';
import { PreviewSchema, previewEdit } from '../workflow/preview.js';
import type { ToolDeps } from './context.js';
import { refuseEdit } from './edits.js';
import { progressFor } from './progress.js';
import { ToolError, guard, ok } from './result.js';

export const previewUri = (id: string, file: 'preview.mp4' | 'sheet.jpg') => `cutroom://previews/${id}/${file}`;

export function register(server: McpServer, deps: ToolDeps): void {
  const { logger } = deps;
  server.registerTool(
    'preview_edit',
    {
      title: 'Preview an edit locally',
      description:
        'The dry run before render_edit: checks the edit as compose_edit does, then renders it on this machine with ffmpeg, small and fast, ' +
        'and shows you a contact sheet (first, middle and last frame of every cut, labelled with the cut number and timeline timecode). ' +
        "Per cut it reports the measured loudness and flags black or frozen pictures, silence where sound was asked, and sound where level 0 was asked. " +
        'Nothing is sent to the service. Takes seconds for a minute of video; sends progress notifications.',
      inputSchema: z.object({
        ...EditInputShape,
        width: z.number().int().min(64).max(1920).optional().describe('Width of the preview in pixels (default 640); the edit\'s shape is kept'),
      }),
      outputSchema: PreviewSchema.extend({ diagnostics: z.array(DiagnosticSchema).describe('Warnings from the checks') }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: deps.backend.kind === 'remote' },
    },
    ({ width, ...input }, ctx) =>
      guard(
        'preview_edit',
        logger,
        async () => {
          const rt = deps.runtime;
          if (!rt) throw new ToolError(`preview_edit needs ffmpeg and ffprobe, which were not found; ${INSTALL_HINT}`);
          const started = performance.now();
          const checked = await checkEdit(deps, input, ctx.mcpReq.signal);
          logger.debug(`preview_edit: checked the edit in ${(performance.now() - started).toFixed(0)} ms`);
          if (!checked.ready) return refuseEdit(checked, 'previewed');
          const progress = progressFor(ctx);
          const p = await previewEdit(rt, checked, {
            width: width ?? 640,
            signal: ctx.mcpReq.signal,
            onProgress: (f, message) => void progress(Math.round(f * 100), 100, message),
            debug: (m) => logger.debug(m),
          });
          logger.debug(`preview_edit: done in ${(performance.now() - started).toFixed(0)} ms`);
          await progress(100, 100, 'done');
          const { sheetBytes, ffmpegMaxRssKiB: _rss, ...preview } = p;
          const flagged = preview.cuts.filter((c) => c.flags.length);
          const lines = [
            `Preview ${preview.resolution}, ${preview.measured_seconds} s (planned ${preview.planned_seconds} s), ${preview.cuts.length} cuts: ${preview.path}`,
            ...preview.cuts.map((c) => `${c.index + 1}. ${c.timeline_start}-${c.timeline_end} ${c.asset_id} ${c.loudness ? `mean ${c.loudness.mean_db} dB, peak ${c.loudness.peak_db} dB` : 'no sound measured'}${c.flags.length ? ` — ${c.flags.join('; ')}` : ''}`),
            ...preview.warnings.map((w) => `Warning: ${w}`),
          ];
          if (!flagged.length) lines.push('No cut was flagged.');
          if (checked.diagnostics.length) lines.push(describeDiagnostics(checked));
          if (checked.notes.length) lines.push(`Notes: ${checked.notes.join('; ')}`);
          const result = ok({ ...preview, diagnostics: checked.diagnostics }, lines.join('\n'));
          result.content.push(
            { type: 'image', data: sheetBytes.toString('base64'), mimeType: 'image/jpeg' },
            { type: 'resource_link', uri: previewUri(preview.preview_id, 'preview.mp4'), name: 'preview.mp4', mimeType: 'video/mp4', description: `Local preview, ${preview.measured_seconds} s` },
          );
          return result;
        },
        { what: `project ${input.project_id}`, listedBy: 'list_projects' },
      ),
  );
}
