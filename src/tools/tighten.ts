// tighten_edit: a kept edit without its long pauses and fillers, as a NEW edit for review (never applied silently).
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DEFAULT_FILLERS, DEFAULT_MAX_PAUSE_SECONDS } from '../analysis/tighten.js';
import { describeDiagnostics } from '../workflow/check-edit.js';
import { tightenEdit } from '../workflow/tighten.js';
import { fitList } from './budget.js';
import { editLink } from './edit-results.js';
import { defineTool, type HandlerDeps } from './define.js';
import { ok } from './result.js';

const Input = z.object({
  edit_id: z.string(),
  max_pause_seconds: z.number().optional().describe(`Longer pauses are cut; default ${DEFAULT_MAX_PAUSE_SECONDS}`),
  fillers: z
    .array(z.string())
    .optional()
    .describe(`Words to drop; default ${DEFAULT_FILLERS.slice(0, 3).join(', ')}…`),
});
const Output = z.object({
  edit_id: z.string().optional(),
  from_edit_id: z.string(),
  ready: z.boolean(),
  cuts_before: z.number().int(),
  cuts_after: z.number().int(),
  saved_seconds: z.number(),
  removals: z.array(
    z.object({
      cut: z.number().int(),
      asset_id: z.string(),
      start_seconds: z.number(),
      end_seconds: z.number(),
      reason: z.string(),
    }),
  ),
  untranscribed_cuts: z.array(z.number().int()).optional(),
  left_out: z.array(z.string()).optional(),
});
const REMOVALS_BYTES = 14_000;

type Tightened = Awaited<ReturnType<typeof tightenEdit>>;

/** How many fillers were looked for, found and removed, and those the sound does not hold where they were placed. */
function fillerLine(f: Tightened['plan']['fillers']): string {
  const at = (w: Tightened['plan']['fillers']['in_silence'][number]) =>
    `"${w.word}" at ${w.start_seconds.toFixed(2)}-${w.end_seconds.toFixed(2)} s (cut ${w.cut})`;
  const heard = f.heard ?? [];
  // What the count could not see: a filler run into words (heard), one the text leaves out (aligned), or any written
  // as another word (the sound not read).
  let limit = '. The sound could not be read here: a filler the transcript wrote as another word is not found.';
  if (f.heard) limit = '. A filler is heard only between two pauses; one run into the words around it is not found.';
  else if (f.by_text)
    limit = '. The transcripts hold the words of their text: a filler the text leaves out is not found.';
  return (
    `Fillers looked for (${f.looked_for.join(', ')}): ${f.found - heard.length} in the transcript` +
    (f.heard
      ? `, ${heard.length} more heard in the sound${heard.length ? ` (written ${heard.map(at).join(', ')})` : ''}`
      : '') +
    `, ${f.removed} removed` +
    (f.in_silence.length ? `; left in, placed where the sound is silence: ${f.in_silence.map(at).join(', ')}` : '') +
    limit
  );
}

/** tighten_edit's text: what came out, each removal (the first few), and the new edit or why it is not ready. */
function tightenText(t: Tightened, removals: { shown: Tightened['plan']['removals'] }, leftOut: string[]): string {
  const { plan, checked: c } = t;
  return [
    plan.removals.length
      ? `${plan.removals.length} removal${plan.removals.length === 1 ? '' : 's'}, ${plan.saved_seconds} s shorter: ${t.cutsBefore} cuts became ${plan.edit.video_series_sequential.length}.`
      : 'Nothing to take out: no pause over the limit, no filler, no word said twice.',
    ...removals.shown
      .slice(0, 15)
      .map(
        (r) => `cut ${r.cut}: ${r.asset_id} ${r.start_seconds.toFixed(3)}-${r.end_seconds.toFixed(3)} s: ${r.reason}`,
      ),
    fillerLine(plan.fillers),
    ...(removals.shown.length > 15 ? [`… ${removals.shown.length - 15} more in structuredContent.removals`] : []),
    ...(plan.untranscribed.length
      ? [
          `Left as they are (their source has no transcript: transcribe_asset, then call again): cuts ${plan.untranscribed.join(', ')}.`,
        ]
      : []),
    c.ready
      ? `New edit_id: ${c.editId ?? '(not kept)'} (from ${t.from}, unchanged). Review it with preview_edit.`
      : `The new edit is not ready:\n${describeDiagnostics(c)}`,
    ...leftOut.map((l) => `Left out: ${l}.`),
  ].join('\n');
}

async function tightenEditCall(
  { edit_id, max_pause_seconds, fillers }: z.output<typeof Input>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const t = await tightenEdit(deps, edit_id, { maxPauseSeconds: max_pause_seconds, fillers }, ctx.mcpReq.signal);
  const { plan, checked: c } = t;
  const removals = fitList(plan.removals, REMOVALS_BYTES);
  const leftOut = removals.leftOut ? [`${removals.leftOut} removals: the new edit (its resource) holds every cut`] : [];
  const out = ok(
    {
      ...(c.editId ? { edit_id: c.editId } : {}),
      from_edit_id: t.from,
      ready: c.ready,
      cuts_before: t.cutsBefore,
      cuts_after: plan.edit.video_series_sequential.length,
      saved_seconds: plan.saved_seconds,
      removals: removals.shown,
      ...(plan.untranscribed.length ? { untranscribed_cuts: plan.untranscribed } : {}),
      ...(leftOut.length ? { left_out: leftOut } : {}),
    },
    tightenText(t, removals, leftOut),
  );
  if (c.editId) out.content.push(editLink(c.editId, 'The tightened edit, whole'));
  return out;
}

const tightenEditTool = defineTool({
  name: 'tighten_edit',
  config: {
    title: 'Tighten an edit',
    description:
      'A new edit without pauses over max_pause_seconds, fillers (by word and by sound) and words said twice in a row (split in the pauses, no word clipped). ' +
      'Lists each removal and why; the original stays: review the new edit_id, then preview or render it.',
    inputSchema: Input,
    outputSchema: Output,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: () => ({ what: "the edit's project", listedBy: 'list_projects' }),
  handler: tightenEditCall,
});

export const tightenTools = [tightenEditTool];
