// Changes a person makes to an edit in the preview view (view_edit): trim a cut's in or out point, drop a cut, move
// a cut to another place. Pure: the changes are applied to the canonical edit, in the order given (each change's
// indices are those of the edit as the changes before it left it), and said in one line; the result is checked like
// any other edit afterwards (normalize, lint), which refuses an out point past its source's end. What is said is read
// by the person in the view: cuts and places are numbered from 1, as the view shows them (the fields, from 0).
import { z } from 'zod';
import type { Edit } from './model.js';
import { TimeInputSchema } from './model.js';
import { formatShort, formatTimecode, parseTimecode } from './timecode.js';

export const EditChangeSchema = z.object({
  cut: z.number().int().min(0),
  in: TimeInputSchema.optional(),
  out: TimeInputSchema.optional(),
  drop: z.boolean().optional(),
  move_to: z.number().int().min(0).optional(),
});
export type EditChange = z.infer<typeof EditChangeSchema>;

export type Applied = { ok: true; edit: Edit; changed: string } | { ok: false; reason: string };

export interface ChangeOptions {
  /**
   * The in point a cut of this asset starts on when given `inMs` (ms): the start of the source frame the render uses
   * (cutClock). A trimmed in point is kept, and said, as that frame, not as a time between two frames.
   */
  inPointOf?: (assetId: string, inMs: number) => number;
}

const ms = (tc: string) => {
  const r = parseTimecode(tc);
  return r.ok ? r.ms : 0;
};

/**
 * The edit with the changes made. An overlay that the shorter timeline would leave hanging past its end is cut at
 * the new end (and one that would start after it is dropped), so that a trim or a drop under music stays playable.
 */
export function applyChanges(edit: Edit, changes: EditChange[], opts: ChangeOptions = {}): Applied {
  const cuts = edit.video_series_sequential.map((c) => ({ ...c }));
  const said: string[] = [];
  for (const [k, ch] of changes.entries()) {
    const where = changes.length > 1 ? `change ${k + 1}: ` : '';
    const c = cuts[ch.cut];
    const n = ch.cut + 1;
    if (!c)
      return {
        ok: false,
        reason: `${where}there is no cut ${n} (cut: ${ch.cut}, an index from 0; the edit has ${cuts.length} cuts)`,
      };
    const kinds = [ch.in !== undefined || ch.out !== undefined, ch.drop === true, ch.move_to !== undefined].filter(
      Boolean,
    ).length;
    if (kinds === 0)
      return {
        ok: false,
        reason: `${where}say what to do with cut ${n}: in and/or out (a trim), drop: true, or move_to`,
      };
    if (kinds > 1)
      return {
        ok: false,
        reason: `${where}one change at a time for cut ${n}: a trim (in/out), drop or move_to; give the others as further changes`,
      };
    if (ch.drop) {
      if (cuts.length === 1) return { ok: false, reason: `${where}cut ${n} is the only cut; an edit needs one` };
      cuts.splice(ch.cut, 1);
      said.push(
        `dropped cut ${n} (${c.video_id.slice(0, 8)} ${formatShort(ms(c.video_start_time))}-${formatShort(ms(c.video_end_time))})`,
      );
      continue;
    }
    if (ch.move_to !== undefined) {
      if (ch.move_to >= cuts.length)
        return {
          ok: false,
          reason: `${where}there is no place ${ch.move_to + 1} for cut ${n} (move_to: ${ch.move_to}, an index from 0; the edit has ${cuts.length} places)`,
        };
      if (ch.move_to === ch.cut) return { ok: false, reason: `${where}cut ${n} is already at place ${ch.move_to + 1}` };
      cuts.splice(ch.cut, 1);
      cuts.splice(ch.move_to, 0, c);
      said.push(`moved cut ${n} to place ${ch.move_to + 1}`);
      continue;
    }
    const inMs = ms(c.video_start_time);
    const outMs = ms(c.video_end_time);
    let newIn = inMs;
    let newOut = outMs;
    /** The in point as given, when the frame it starts on is later. */
    let asked: number | undefined;
    for (const [name, v] of [
      ['in', ch.in],
      ['out', ch.out],
    ] as const) {
      if (v === undefined) continue;
      const t = parseTimecode(v);
      if (!t.ok) return { ok: false, reason: `${where}cut ${n}'s ${name} point ${t.reason}` };
      if (name === 'out') newOut = t.ms;
      else {
        newIn = opts.inPointOf?.(c.video_id, t.ms) ?? t.ms;
        if (newIn !== t.ms) asked = t.ms;
      }
    }
    if (newIn >= newOut) {
      const frame = asked !== undefined ? `, the first frame from ${formatShort(asked)}` : '';
      return {
        ok: false,
        reason: `${where}cut ${n}'s in point (${formatShort(newIn)}${frame}) must be before its out point (${formatShort(newOut)}): it would show nothing`,
      };
    }
    c.video_start_time = formatTimecode(newIn);
    c.video_end_time = formatTimecode(newOut);
    const moved = [
      ...(newIn !== inMs
        ? [
            `in ${formatShort(inMs)} → ${formatShort(newIn)}${asked !== undefined ? ` (the first frame from ${formatShort(asked)})` : ''}`,
          ]
        : []),
      ...(newOut !== outMs ? [`out ${formatShort(outMs)} → ${formatShort(newOut)}`] : []),
    ];
    const same =
      asked !== undefined
        ? ` (in ${formatShort(asked)} starts it on the frame at ${formatShort(newIn)}, as before)`
        : '';
    said.push(
      moved.length
        ? `trimmed cut ${n}: ${moved.join(', ')} (now ${formatShort(newOut - newIn)})`
        : `cut ${n} unchanged${same}`,
    );
  }
  // The overlays fit the new length of the timeline.
  const totalMs = cuts.reduce((s, c) => s + ms(c.video_end_time) - ms(c.video_start_time), 0);
  const overlays: Edit['audio_overlay'] = [];
  let clipped = 0;
  for (const o of edit.audio_overlay) {
    const s = ms(o.audio_start_time);
    if (s >= totalMs) {
      clipped++;
      continue;
    }
    if (ms(o.audio_end_time) > totalMs) {
      clipped++;
      overlays.push({ ...o, audio_end_time: formatTimecode(totalMs) });
    } else overlays.push(o);
  }
  if (clipped)
    said.push(`${clipped} overlay${clipped > 1 ? 's' : ''} fitted to the new length (${formatShort(totalMs)})`);
  return {
    ok: true,
    edit: { ...edit, video_series_sequential: cuts, audio_overlay: overlays },
    changed: said.join('; '),
  };
}
