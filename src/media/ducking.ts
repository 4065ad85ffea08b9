// Where speech is heard on an edit's output timeline, for music to duck under (issue 33, item 2): the dialogue's
// sound, which is every cut's own sound and every overlay that is not music or effects, heard in the sound itself
// (word-edges.ts's speech frames: bands rising over the pause's floor). Asked only when an overlay ducks.
import type { RenderPlan } from '../edit/plan.js';
import type { Timeline } from '../edit/normalize.js';
import type { InputSpec } from './timeline-args.js';
import { speechRuns, type EdgeDeps } from './word-edges.js';

export type Span = { from: number; to: number };

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
    if (!spec?.hasAudio) return;
    reads.push(speechRuns(deps, spec.source, c.inSec, c.inSec + c.durationSec, signal).then((runs) => runs.map((r) => ({ from: c.timelineStartSec + r.from - c.inSec, to: c.timelineStartSec + Math.min(r.to, c.inSec + c.durationSec) - c.inSec }))));
  });
  plan.overlays.forEach((o, k) => {
    const role = t.overlays[k]?.role;
    const spec = overlayInputs[k];
    if (role === 'music' || role === 'effects' || !spec?.hasAudio) return;
    const from = o.fromSec ?? 0;
    reads.push(speechRuns(deps, spec.source, from, from + o.durationSec, signal).then((runs) => runs.map((r) => ({ from: o.startSec + r.from - from, to: o.startSec + r.to - from }))));
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
