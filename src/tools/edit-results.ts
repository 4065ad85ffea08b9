// What the edit tools (compose_edit, render_edit, preview_edit, export_edit, import_edit) say about a checked
// edit: the check's structured shape and text, bounded whatever the edit's length, and the refusal of an edit with
// errors. Shared here so that tool groups never import each other.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DiagnosticSchema, type Diagnostic } from '../edit/model.js';
import { TimelineSummarySchema, type TimelineSummary } from '../edit/plan.js';
import { formatShort } from '../edit/timecode.js';
import { countBySeverity, describeDiagnostics } from '../workflow/check-edit.js';
import type { CheckedEdit } from '../workflow/checked-edit.js';
import { editUri } from '../workflow/edit-store.js';
import { fitList } from './budget.js';
import { fail } from './result.js';

export const LeftOutSchema = z.array(z.string()).optional().describe('What this result leaves out, and how to get it');

export const CheckOutput = {
  ready: z.boolean().describe('No error: it can be previewed, rendered, exported'),
  edit_id: z.string().optional().describe('When ready: give it to preview_edit, render_edit, export_edit'),
  diagnostics: z.array(DiagnosticSchema),
  summary: TimelineSummarySchema.optional(),
  skipped_checks: z.array(z.string()),
  notes: z.array(z.string()).optional(),
  left_out: LeftOutSchema,
};

/** Bytes of JSON each part of a check may take in a result (24 KB in all, with the text). */
const BUDGET = { diagnostics: 6000, summary: 5000, notes: 2000 };

/** The summary with as many cuts (and overlays) as fit `bytes`; what is left out is said in `leftOut`. */
export function boundedSummary(
  summary: TimelineSummary,
  bytes: number,
  leftOut: string[],
  where: string,
): TimelineSummary {
  const cuts = fitList(summary.cuts, bytes * 0.8);
  const overlays = fitList(summary.overlays, bytes * 0.2);
  if (!cuts.leftOut && !overlays.leftOut) return summary;
  if (cuts.leftOut)
    leftOut.push(`cuts ${cuts.shown.length + 1}-${summary.cuts.length} of ${summary.cuts.length}: ${where}`);
  if (overlays.leftOut)
    leftOut.push(
      `overlays ${overlays.shown.length + 1}-${summary.overlays.length} of ${summary.overlays.length}: ${where}`,
    );
  return {
    ...summary,
    cuts: cuts.shown,
    overlays: overlays.shown,
    cuts_total: summary.cuts.length,
    overlays_total: summary.overlays.length,
  };
}

/** Where the whole of a check's long lists can be read. */
const wholeAt = (c: CheckedEdit) =>
  c.editId ? `${editUri(c.editId)} has them all` : 'fix what is listed and check again';

function boundedDiagnostics(diagnostics: Diagnostic[], leftOut: string[]): Diagnostic[] {
  const fit = fitList(diagnostics, BUDGET.diagnostics);
  if (fit.leftOut)
    leftOut.push(`${fit.leftOut} more diagnostics (${diagnostics.length} in all): fix these and check again`);
  return fit.shown;
}

/** The first line of a check: ready or not, and when not, the first real problem in words (not only a count). */
function headline(c: CheckedEdit): string {
  const { errors, warnings } = countBySeverity(c);
  const shape = c.summary
    ? `${c.summary.cuts.length} cut${c.summary.cuts.length === 1 ? '' : 's'}, ${formatShort(c.summary.total_seconds * 1000)} at ${c.summary.resolution}, ${c.summary.fps} fps`
    : undefined;
  const w = warnings ? `${warnings} warning${warnings === 1 ? '' : 's'}` : '';
  if (errors) {
    const first = c.diagnostics.find((d) => d.severity === 'error')!;
    const more = errors > 1 ? `; ${errors - 1} more error${errors === 2 ? '' : 's'}` : '';
    return `Not ready: ${first.message} (at ${first.path || '/'})${more}${w ? `, ${w}` : ''}.`;
  }
  return `Ready: ${shape ?? 'no playable cut'}${w ? `, ${w}` : ''}.`;
}

/** Cuts spelled out in the text only while the list is short; a long one is in structuredContent alone. */
const TEXT_CUTS = 12;

export function checkText(c: CheckedEdit): string {
  const parts = [headline(c)];
  if (c.editId) parts.push(`edit_id: ${c.editId}`);
  if (c.diagnostics.length) parts.push(describeDiagnostics(c));
  if (c.summary && c.ready) {
    const cuts = c.summary.cuts;
    if (cuts.length <= TEXT_CUTS)
      parts.push(
        cuts
          .map(
            (cut) =>
              `${cut.index + 1}. ${cut.asset_id} ${cut.source_in}-${cut.source_out} -> ${cut.timeline_start}-${cut.timeline_end}`,
          )
          .join('\n'),
      );
    else
      parts.push(
        `${cuts.length} cuts, listed in structuredContent.summary${c.editId ? ` (all of them in ${editUri(c.editId)})` : ''}.`,
      );
  }
  if (c.skipped.length) parts.push(`Skipped: ${c.skipped.join('; ')}`);
  if (c.notes.length)
    parts.push(
      `Notes: ${c.notes.slice(0, 5).join('; ')}${c.notes.length > 5 ? `; … ${c.notes.length - 5} more in structuredContent.notes` : ''}`,
    );
  return parts.join('\n');
}

/** JSON bytes a check's structuredContent may take in all, at most; the text's bytes come off it (24 KB in all). */
const STRUCTURED_BYTES = 17_000;
const RESULT_BYTES = 23 * 1024;

/** `textBytes`: the bytes of the text the result carries beside it. */
export function checkStructured(c: CheckedEdit, textBytes = 0) {
  const budget = Math.min(STRUCTURED_BYTES, RESULT_BYTES - textBytes);
  const leftOut: string[] = [];
  const diagnostics = boundedDiagnostics(c.diagnostics, leftOut);
  const notes = fitList(c.notes, BUDGET.notes);
  if (notes.leftOut) leftOut.push(`${notes.leftOut} more notes (${c.notes.length} in all)`);
  // The summary takes what the diagnostics and notes left, and never less than its own budget.
  const used = Buffer.byteLength(JSON.stringify(diagnostics)) + Buffer.byteLength(JSON.stringify(notes.shown));
  const summaryBytes = Math.max(BUDGET.summary, budget - used - 1000);
  return {
    ready: c.ready,
    ...(c.editId ? { edit_id: c.editId } : {}),
    diagnostics,
    ...(c.summary ? { summary: boundedSummary(c.summary, summaryBytes, leftOut, wholeAt(c)) } : {}),
    skipped_checks: c.skipped,
    ...(notes.shown.length ? { notes: notes.shown } : {}),
    ...(leftOut.length ? { left_out: leftOut } : {}),
  };
}

/** The summary a result other than compose_edit's carries: bounded the same way. */
export function summaryOf(c: CheckedEdit, leftOut: string[]): TimelineSummary | undefined {
  return c.summary ? boundedSummary(c.summary, BUDGET.summary, leftOut, wholeAt(c)) : undefined;
}

/** How many diagnostics an error result spells out, in how many bytes at most. */
const REFUSAL_MAX_DIAGNOSTICS = 40;
const REFUSAL_BYTES = 12_000;

/**
 * An isError result for an edit with errors: nothing sent, the diagnostics in the text. It carries no
 * structuredContent: compose_edit's shape is not render_edit's or preview_edit's outputSchema, and strict
 * clients reject a whole result whose structuredContent does not conform.
 */
export function refuseEdit(c: CheckedEdit, action: string): CallToolResult {
  const list = describeDiagnostics(
    c,
    REFUSAL_MAX_DIAGNOSTICS,
    "compose_edit's result (fix these first)",
    REFUSAL_BYTES,
  );
  return fail(`${headline(c)} Nothing was ${action}. Fix these and call again:\n${list}`);
}

/** A link to a kept edit's resource (the checked edit, whole), for a result that made or changed it. */
export function editLink(editId: string, description: string): CallToolResult['content'][number] {
  return {
    type: 'resource_link',
    uri: editUri(editId),
    name: `${editId}.json`,
    mimeType: 'application/json',
    description,
  };
}
