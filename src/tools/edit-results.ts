// What the edit tools (compose_edit, render_edit, preview_edit, export_edit, import_edit) say about a checked
// edit: the check's structured shape and text, and the refusal of an edit with errors. Shared here so that tool
// groups never import each other.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DiagnosticSchema } from '../edit/model.js';
import { TimelineSummarySchema } from '../edit/plan.js';
import { formatShort } from '../edit/timecode.js';
import { countBySeverity, describeDiagnostics, type CheckedEdit } from '../workflow/check-edit.js';
import { fail } from './result.js';

export const CheckOutput = {
  ready: z.boolean().describe('True when there is no error: the edit can be rendered'),
  diagnostics: z.array(DiagnosticSchema),
  summary: TimelineSummarySchema.optional().describe('The cuts with their places on the output timeline'),
  skipped_checks: z.array(z.string()).describe('Checks that could not run, and how to enable them'),
  notes: z.array(z.string()).optional().describe('What was resolved along the way, e.g. which shot list a clip given by shot came from'),
};

function headline(c: CheckedEdit): string {
  const { errors, warnings } = countBySeverity(c);
  const shape = c.summary ? `${c.summary.cuts.length} cut${c.summary.cuts.length === 1 ? '' : 's'}, ${formatShort(c.summary.total_seconds * 1000)} at ${c.summary.resolution}, ${c.summary.fps} fps` : 'no playable cut';
  if (errors) return `Not ready: ${errors} error${errors === 1 ? '' : 's'}${warnings ? ` and ${warnings} warning${warnings === 1 ? '' : 's'}` : ''} (${shape}).`;
  return `Ready: ${shape}${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}.`;
}

export function checkText(c: CheckedEdit): string {
  const parts = [headline(c)];
  if (c.diagnostics.length) parts.push(describeDiagnostics(c));
  if (c.summary && c.ready) {
    parts.push(c.summary.cuts.map((cut) => `${cut.index + 1}. ${cut.asset_id} ${cut.source_in}-${cut.source_out} -> ${cut.timeline_start}-${cut.timeline_end}`).join('\n'));
  }
  if (c.skipped.length) parts.push(`Skipped: ${c.skipped.join('; ')}`);
  if (c.notes.length) parts.push(`Notes: ${c.notes.join('; ')}`);
  return parts.join('\n');
}

export function checkStructured(c: CheckedEdit) {
  return {
    ready: c.ready,
    diagnostics: c.diagnostics,
    ...(c.summary ? { summary: c.summary } : {}),
    skipped_checks: c.skipped,
    ...(c.notes.length ? { notes: c.notes } : {}),
  };
}

/** How many diagnostics an error result spells out; compose_edit returns every one as data. */
const REFUSAL_MAX_DIAGNOSTICS = 200;

/**
 * An isError result for an edit with errors: nothing sent, every diagnostic in the text. It carries no
 * structuredContent: compose_edit's shape is not render_edit's or preview_edit's outputSchema, and strict
 * clients reject a whole result whose structuredContent does not conform.
 */
export function refuseEdit(c: CheckedEdit, action: string): CallToolResult {
  const list = describeDiagnostics(c, REFUSAL_MAX_DIAGNOSTICS, 'the result of compose_edit, which returns them all as data');
  return fail(`${headline(c)} Nothing was ${action}. Fix these and call again:\n${list}`);
}

