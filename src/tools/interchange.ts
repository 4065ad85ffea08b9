// export_edit and import_edit: hand a cut to an editor (OTIO, FCPXML, EDL) and take the editor's cut back.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DiagnosticSchema, type Diagnostic } from '../edit/model.js';
import { describeDiagnostics } from '../workflow/check-edit.js';
import { EditRefShape } from '../workflow/edit-input.js';
import {
  FORMAT_MIME,
  exportEdit,
  importEdit,
  type ExportOutcome,
  type InterchangeDeps,
} from '../workflow/interchange.js';
import type { ToolDeps } from '../workflow/deps.js';
import { CheckOutput, LeftOutSchema, checkStructured, checkText, refuseEdit } from './edit-results.js';
import { defineTool, type HandlerDeps } from './define.js';
import { beating, progressFor } from './progress.js';
import { ok } from './result.js';
import { fitList } from './budget.js';

export const exportUri = (id: string, file: string) => `cutroom://exports/${id}/${file}`;
/** Warnings an export's text spells out; the rest are counted. */
const TEXT_WARNINGS = 8;
const FormatSchema = z.enum(['otio', 'fcpxml', 'edl']);
const ExportFormatSchema = z.enum(['otio', 'fcpxml', 'edl', 'srt', 'vtt']);
const projectSubject = (id: unknown) => ({
  what: typeof id === 'string' && id ? `project ${id}` : "the edit's project",
  listedBy: 'list_projects',
});

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ExportEditInput = z.object({
  ...EditRefShape,
  format: ExportFormatSchema,
  media: z
    .enum(['links', 'download'])
    .optional()
    .describe('download: fetch remote sources beside the file (links expire)'),
});
const ExportEditOutput = z.object({
  export_id: z.string(),
  edit_id: z.string().optional(),
  format: ExportFormatSchema,
  path: z.string().describe('On the machine cutroom runs on (over HTTP: its cutroom:// URI)'),
  link: z.string().optional().describe('Over HTTP: a signed link to the file; it expires'),
  links_expire_at: z.string().optional(),
  media_dir: z.string().optional(),
  media: z.array(z.object({ asset_id: z.string(), reference: z.string() })),
  warnings: z.array(z.string()),
  diagnostics: z.array(DiagnosticSchema),
  left_out: LeftOutSchema,
});
const ImportEditInput = z.object({
  project_id: z.string(),
  path: z.string().optional().describe('The file, or its cutroom://exports/ URI'),
  content: z.string().optional().describe("Or the file's text"),
  format: FormatSchema.optional().describe('Default: told from the file'),
  fps: z.number().optional().describe("The timeline's rate, over the file's (an EDL not cutroom's needs it)"),
  resolution: z.string().optional().describe('When the file does not say (EDL)'),
  media_map: z.record(z.string(), z.string()).optional().describe('{name or path in the file: asset_id}'),
});
const ImportEditOutput = z.object({
  ...CheckOutput,
  format: FormatSchema,
  mapped: z.array(z.string()).describe("How each item's media was found"),
});

/** What export_edit and import_edit work with; none without a folder to export to (neither tool is offered then). */
function interchangeDeps(deps: ToolDeps): InterchangeDeps | undefined {
  if (!deps.exportsDir) return undefined;
  return {
    backend: deps.backend,
    prober: deps.prober,
    runtime: deps.runtime,
    exportsDir: deps.exportsDir,
    allowedDirs: deps.allowedDirs ?? [],
    ...(deps.hosted ? { hosted: true } : {}),
    ...(deps.edits ? { edits: deps.edits } : {}),
    ...(deps.kept ? { kept: deps.kept } : {}),
  };
}
const offered = (deps: ToolDeps) => interchangeDeps(deps) !== undefined;

/** export_edit's text: what was written where, what the format could not carry, the check's warnings. */
function exportText(r: ExportOutcome, shown: string, diagnostics: Diagnostic[]): string {
  return [
    `Exported ${r.format.toUpperCase()} (${r.checked.summary?.cuts.length ?? 0} cuts, ${r.checked.summary?.overlays.length ?? 0} overlays): ${shown}`,
    ...(r.mediaDir ? [`Media fetched into ${r.mediaDir}`] : []),
    ...r.warnings.slice(0, TEXT_WARNINGS).map((w) => `Warning: ${w}`),
    ...(r.warnings.length > TEXT_WARNINGS
      ? [`… ${r.warnings.length - TEXT_WARNINGS} more warnings (structuredContent.warnings, left_out)`]
      : []),
    ...(diagnostics.length ? [describeDiagnostics({ diagnostics })] : []),
  ].join('\n');
}

async function exportEditCall(
  { format, media, ...input }: z.output<typeof ExportEditInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const ix = interchangeDeps(deps)!;
  const listen = beating(progressFor(ctx));
  const r = await exportEdit(ix, input, {
    format,
    media: media ?? 'links',
    signal: ctx.mcpReq.signal,
    listening: { onProgress: listen.update, waitMs: deps.renderWaitMs, debug: (m) => deps.logger.debug(m) },
  }).finally(listen.stop);
  if ('refused' in r) return refuseEdit(r.refused, 'exported');
  const diagnostics = r.checked.diagnostics.filter((d) => d.severity === 'warning');
  const leftOut: string[] = [];
  const references = fitList(r.media, 4000);
  if (references.leftOut) leftOut.push(`${references.leftOut} more media references: the file itself names them all`);
  // One warning per cut the format cannot carry (an EDL has no volume): thousands for a long edit.
  const warnings = fitList(r.warnings, 3000);
  if (warnings.leftOut)
    leftOut.push(`${warnings.leftOut} more warnings (${r.warnings.length} in all), of the kinds listed`);
  // A hosted caller cannot open the server's files: the file is named by its resource URI.
  const shown = ix.hosted ? exportUri(r.exportId, r.file) : r.path;
  const result = ok(
    {
      export_id: r.exportId,
      ...(r.checked.editId ? { edit_id: r.checked.editId } : {}),
      format: r.format,
      path: shown,
      ...(r.mediaDir ? { media_dir: r.mediaDir } : {}),
      media: references.shown,
      warnings: warnings.shown,
      diagnostics: fitList(diagnostics, 4000).shown,
      ...(leftOut.length ? { left_out: leftOut } : {}),
    },
    exportText(r, shown, diagnostics),
  );
  result.content.push({
    type: 'resource_link',
    uri: exportUri(r.exportId, r.file),
    name: r.file,
    mimeType: FORMAT_MIME[r.format],
    description: `The ${r.format.toUpperCase()} ${r.format === 'srt' || r.format === 'vtt' ? 'captions' : 'timeline'}`,
  });
  return result;
}

async function importEditCall(input: z.output<typeof ImportEditInput>, ctx: ServerContext, deps: HandlerDeps) {
  const r = await importEdit(interchangeDeps(deps)!, input, ctx.mcpReq.signal);
  const c = r.checked;
  const mapped = fitList(r.mapped, 3000);
  const text = `${checkText(c)}\nRead as ${r.format.toUpperCase()}.${r.mapped.length ? `\nMedia: ${r.mapped.slice(0, 10).join('; ')}${r.mapped.length > 10 ? '; …' : ''}` : ''}`;
  const structured = checkStructured(c, Buffer.byteLength(text) + Buffer.byteLength(JSON.stringify(mapped.shown)));
  if (mapped.leftOut) (structured.left_out ??= []).push(`${mapped.leftOut} more media mappings`);
  return ok({ ...structured, format: r.format, mapped: mapped.shown }, text);
}

const exportEditTool = defineTool({
  name: 'export_edit',
  config: {
    title: 'Export an edit for an editor',
    description:
      'Writes an edit (edit_id) as a timeline file for Resolve, Premiere or Final Cut: otio, fcpxml (1.10), edl (CMX 3600), or captions: srt, vtt; checked first. Returns the file, its media and what the format cannot carry. import_edit reads it back.',
    inputSchema: ExportEditInput,
    outputSchema: ExportEditOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  offered,
  subject: (input) => projectSubject(input.project_id),
  handler: exportEditCall,
});

const importEditTool = defineTool({
  name: 'import_edit',
  config: {
    title: "Import an editor's timeline",
    description:
      "Reads an editor's OTIO, FCPXML or EDL timeline into an edit of the project, media mapped to assets by id, path, link or name (or media_map). Returns what compose_edit does, with a diagnostic for what it cannot take (transitions, speed changes, effects).",
    inputSchema: ImportEditInput,
    outputSchema: ImportEditOutput,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  offered,
  subject: (input) => projectSubject(input.project_id),
  handler: importEditCall,
});

export const interchangeTools = [exportEditTool, importEditTool];
