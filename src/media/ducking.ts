// Where speech is heard on an edit's output timeline, for music to duck under (issue 33, item 2): the dialogue's
// sound, which is every cut's own sound and every overlay that is not music or effects, heard in the sound itself
// (word-edges.ts's speech frames: bands rising over the pause's floor). Asked only when an overlay ducks.
import type { RenderPlan } from '../edit/plan.js';
import type { Timeline } from '../edit/normalize.js';
import type { InputSpec } from './timeline-args.js';
import { speechRuns, type EdgeDeps } from './word-edges.js';

export type Span = { from: number; to: number };

/** Speech this far down (its gain, or its level windows) is not heard over music: nothing ducks under it. */
const INAUDIBLE_DB = -30;

/**
 * The parts of speech runs (s, from the item's start) that are heard: outside level windows under INAUDIBLE_DB
 * (a muted span, `volume: 0`, the picture beyond a word cut's sound).
 */
function audible(runs: Span[], levels: { level: number; from: number; to: number }[]): Span[] {
  const quiet = levels.filter((l) => l.level <= 10 ** (INAUDIBLE_DB / 20));
  let out = runs;
  for (const q of quiet) out = out.flatMap((r) => [{ from: r.from, to: Math.min(r.to, q.from) }, { from: Math.max(r.from, q.to), to: r.to }].filter((x) => x.to - x.from > 0.02));
  return out;
}

/** Whether any overlay of the timeline ducks (music with a duck of more than 0 dB). */
export const ducks = (t: Timeline) => t.overlays.some((o) => !!o.duckDb);

/**
 * Speech on the output timeline (s), in order, overlapping spans joined: each cut's sound from its in point for its
 * length, each dialogue overlay's from its `from`. Sources without sound add nothing. At most `limit` pieces of
 * sound are read at once by the deps' limiter.
 */
export async function speechOnTimeline(deps: EdgeDeps, t: Timeline, plan: RenderPlan, cutInputs: InputSpec[], overlayInputs: InputSpec[], signal?: AbortSignal): Promise<Span[]> {
  const reads: Promise<Span[]>[] = [];
  plan.cuts.forEach((c, i) => {
    const spec = cutInputs[i];
    if (!spec?.hasAudio || (c.gainDb ?? 0) <= INAUDIBLE_DB) return;
    const heard = (runs: Span[]) => audible(runs.map((r) => ({ from: r.from - c.inSec, to: Math.min(r.to, c.inSec + c.durationSec) - c.inSec })), c.levels);
    reads.push(speechRuns(deps, spec.source, c.inSec, c.inSec + c.durationSec, signal).then((runs) => heard(runs).map((r) => ({ from: c.timelineStartSec + r.from, to: c.timelineStartSec + r.to }))));
  });
  plan.overlays.forEach((o, k) => {
    const role = t.overlays[k]?.role;
    const spec = overlayInputs[k];
    if (role === 'music' || role === 'effects' || !spec?.hasAudio || (o.gainDb ?? 0) <= INAUDIBLE_DB) return;
    const from = o.fromSec ?? 0;
    const heard = (runs: Span[]) => audible(runs.map((r) => ({ from: r.from - from, to: Math.min(r.to, from + o.durationSec) - from })), o.levels);
    reads.push(speechRuns(deps, spec.source, from, from + o.durationSec, signal).then((runs) => heard(runs).map((r) => ({ from: o.startSec + r.from, to: o.startSec + r.to }))));
  });
  const all = (await Promise.all(reads)).flat().sort((a, b) => a.from - b.from);
  const out: Span[] = [];
  for (const s of all) {
    const last = out.at(-1);
    if (last && s.from <= last.to) last.to = Math.max(last.to, s.to);
    else out.push({ from: +s.from.toFixed(3), to: +s.to.toFixed(3) });
  }
  return out;
}
