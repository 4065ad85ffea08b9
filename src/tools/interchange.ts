// export_edit and import_edit: hand a cut to an editor (OTIO, FCPXML, EDL) and take the editor's cut back.
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DiagnosticSchema, EditSchema } from '../edit/model.js';
import { TimelineSummarySchema } from '../edit/plan.js';
import { describeDiagnostics } from '../workflow/check-edit.js';
import { EditInputShape } from '../workflow/edit-input.js';
import { FORMAT_MIME, exportEdit, importEdit, type InterchangeDeps } from '../workflow/interchange.js';
import type { ToolDeps } from '../workflow/deps.js';
import { CheckOutput, checkStructured, checkText, refuseEdit } from './edit-results.js';
import { guard, ok } from './result.js';

export const exportUri = (id: string, file: string) => `cutroom://exports/${id}/${file}`;
const FormatSchema = z.enum(['otio', 'fcpxml', 'edl']);
const projectSubject = (id: string) => ({ what: `project ${id}`, listedBy: 'list_projects' });

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ExportEditInput = z.object({
  ...EditInputShape,
  format: FormatSchema.describe('otio, fcpxml or edl'),
  media: z.enum(['links', 'download']).optional().describe('links (default) or download: fetch each source beside the file'),
});
const ExportEditOutput = z.object({
  export_id: z.string(),
  format: FormatSchema,
  path: z.string().describe('The timeline file, on the machine cutroom runs on (a hosted cutroom gives its cutroom:// resource URI)'),
  media_dir: z.string().optional().describe('Where the fetched media is (media: "download")'),
  media: z.array(z.object({ asset_id: z.string(), reference: z.string().describe('The path or link the file points at (links without their query)') })),
  warnings: z.array(z.string()).describe('What the format does not carry, and other things to know'),
  diagnostics: z.array(DiagnosticSchema).describe("The check's warnings"),
  summary: TimelineSummarySchema.optional(),
});
const ImportEditInput = z.object({
  project_id: z.string().describe('Project id (a UUID) whose assets the media is mapped to'),
  path: z.string().optional().describe('Absolute path of the timeline file, or the cutroom://exports/... URI export_edit returned'),
  content: z.string().optional().describe('The timeline file\'s text, instead of path'),
  format: FormatSchema.optional().describe('otio, fcpxml or edl; told from the file when absent'),
  fps: z.number().optional().describe("Frame rate of the timeline (EDL: cutroom's own say theirs; for others give it, else the sources' rate or 30 is assumed, with a warning; OTIO and FCPXML: overrides the file)"),
  resolution: z.string().optional().describe('Output size when the file does not say (EDL): WIDTHxHEIGHT or a preset ("1080p", "720p", "vertical", "square", "4k"); default 1920x1080'),
  media_map: z.record(z.string(), z.string()).optional().describe('Map media by hand: {name or path in the file: asset_id}'),
});
const ImportEditOutput = z.object({
  ...CheckOutput,
  edit: EditSchema.optional().describe('The canonical edit, present when ready: give it to render_edit, preview_edit or compose_edit'),
  format: FormatSchema,
  mapped: z.array(z.string()).describe('How each cut\'s and overlay\'s media was found'),
});

export function register(server: McpServer, deps: ToolDeps): void {
  const { backend, logger } = deps;
  if (!deps.exportsDir) return;
  const ix: InterchangeDeps = { backend, prober: deps.prober, runtime: deps.runtime, exportsDir: deps.exportsDir, allowedDirs: deps.allowedDirs ?? [], ...(deps.hosted ? { hosted: true } : {}) };
  const openWorldHint = backend.kind === 'remote';

  server.registerTool(
    'export_edit',
    {
      title: 'Export an edit for an editor',
      description:
        'Writes an edit as a timeline file that DaVinci Resolve, Premiere or Final Cut opens: format "otio" (OpenTimelineIO), "fcpxml" (1.10) or "edl" (CMX 3600). ' +
        'Takes the same edit as render_edit (edit, or clips/overlays) and checks it first exactly as compose_edit does: any error and nothing is written. ' +
        'media: "links" (default) points at the media where it is (local files; on the service, signed links that expire); "download" first fetches each source once into a media folder beside the file, for an editor to relink against. ' +
        'Returns the file\'s path, a resource link to it, the media references and what the format could not carry. import_edit reads the editor\'s version back.',
      inputSchema: ExportEditInput,
      outputSchema: ExportEditOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint },
    },
    ({ format, media, ...input }, ctx) =>
      guard(
        'export_edit',
        logger,
        async () => {
          const r = await exportEdit(ix, input, { format, media: media ?? 'links', signal: ctx.mcpReq.signal });
          if ('refused' in r) return refuseEdit(r.refused, 'exported');
          const diagnostics = r.checked.diagnostics.filter((d) => d.severity === 'warning');
          // A hosted caller cannot open the server's files: the file is named by its resource URI.
          const shown = ix.hosted ? exportUri(r.exportId, r.file) : r.path;
          const lines = [
            `Exported ${r.format.toUpperCase()} (${r.checked.summary?.cuts.length ?? 0} cuts, ${r.checked.summary?.overlays.length ?? 0} overlays): ${shown}`,
            ...(r.mediaDir ? [`Media fetched into ${r.mediaDir}`] : []),
            ...r.warnings.map((w) => `Warning: ${w}`),
            ...(diagnostics.length ? [describeDiagnostics({ diagnostics })] : []),
          ];
          const result = ok(
            {
              export_id: r.exportId,
              format: r.format,
              path: shown,
              ...(r.mediaDir ? { media_dir: r.mediaDir } : {}),
              media: r.media,
              warnings: r.warnings,
              diagnostics,
              ...(r.checked.summary ? { summary: r.checked.summary } : {}),
            },
            lines.join('\n'),
          );
          result.content.push({ type: 'resource_link', uri: exportUri(r.exportId, r.file), name: r.file, mimeType: FORMAT_MIME[r.format], description: `The ${r.format.toUpperCase()} timeline` });
          return result;
        },
        projectSubject(input.project_id),
      ),
  );

  server.registerTool(
    'import_edit',
    {
      title: 'Import an editor\'s timeline',
      description:
        'Reads an OTIO, FCPXML or EDL timeline (an export_edit file an editor changed, or one Resolve, Premiere or Final Cut wrote) back into an edit of the project. ' +
        'Give path (a file in the exports folder or in the folders cutroom may read) or content (the file\'s text). Each clip\'s media is mapped back to an asset ' +
        '(cutroom id, path or link without its query, clip or reel name), or by media_map. Returns the edit as compose_edit does (ready, diagnostics with JSON pointers, summary), ' +
        'with a diagnostic for everything that does not map: transitions, speed changes, effects, gaps, unknown media. An EDL has no field for its rate: cutroom\'s own EDLs say it in a comment; for another, give fps, else its sources\' rate (or 30) is assumed with a warning.',
      inputSchema: ImportEditInput,
      outputSchema: ImportEditOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint },
    },
    (input, ctx) =>
      guard(
        'import_edit',
        logger,
        async () => {
          const r = await importEdit(ix, input, ctx.mcpReq.signal);
          const c = r.checked;
          return ok(
            { ...checkStructured(c), ...(c.ready && c.edit ? { edit: c.edit } : {}), format: r.format, mapped: r.mapped },
            `${checkText(c)}\nRead as ${r.format.toUpperCase()}.${r.mapped.length ? `\nMedia: ${r.mapped.join('; ')}` : ''}`,
          );
        },
        projectSubject(input.project_id),
      ),
  );
}
