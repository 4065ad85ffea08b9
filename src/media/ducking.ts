// Where speech is heard on an edit's output timeline, for music to duck under (issue 33, item 2): the dialogue's
// sound, which is every cut's own sound and every overlay that is not music or effects, heard in the sound itself
// (word-edges.ts's speech frames: bands rising over the pause's floor), or in its transcript's words where the
// asset has one (what was said, not every sound: a tone or a door in a pause does not duck the music). Asked only
// when an overlay ducks.
import { joinSpans, type RenderPlan, type Span } from '../edit/plan.js';
import type { Timeline } from '../edit/normalize.js';
import type { InputSpec } from './timeline-args.js';
import { speechRuns, type EdgeDeps } from './word-edges.js';

/** Speech this far down (its gain, or its level windows) is not heard over music: nothing ducks under it. */
const INAUDIBLE_DB = -30;

/**
 * The parts of speech runs (s, from the item's start) that are heard: outside level windows under INAUDIBLE_DB
 * (a muted span, `volume: 0`, the picture beyond a word cut's sound).
 */
function audible(runs: Span[], levels: { level: number; from: number; to: number }[]): Span[] {
  const quiet = levels.filter((l) => l.level <= 10 ** (INAUDIBLE_DB / 20));
  let out = runs;
  for (const q of quiet)
    out = out.flatMap((r) =>
      [
        { from: r.from, to: Math.min(r.to, q.from) },
        { from: Math.max(r.from, q.to), to: r.to },
      ].filter((x) => x.to - x.from > 0.02),
    );
  return out;
}

/** Whether any overlay of the timeline ducks (music with a duck of more than 0 dB). */
export const ducks = (t: Timeline) => t.overlays.some((o) => !!o.duckDb);

/**
 * Speech heard in the sound (no transcript) is taken to begin this much (s) before where its frames rise over the
 * pause's floor: a word's first consonant is quieter than that rise, and a duck that lands late was heard (150 ms).
 */
const SOUND_LEAD = 0.15;

/** Words closer than this (s) are one run of speech: the music does not come up between them. */
const WORD_GAP = 0.3;

/** A piece of sound that may hold speech: its source from `from` for `length` s, heard at `at` on the timeline. */
interface Heard {
  spec: InputSpec;
  /** Its transcript's words (s, on its source's clock), when it has one. */
  words?: { start: number; end: number }[];
  from: number;
  length: number;
  at: number;
  levels: { level: number; from: number; to: number }[];
}

/**
 * Speech on the output timeline (s), in order, overlapping spans joined: each cut's sound from its in point for its
 * length, each dialogue overlay's from its `from`. Sources without sound, or too far down to be heard, add nothing.
 */
export async function speechOnTimeline(
  deps: EdgeDeps,
  t: Timeline,
  plan: RenderPlan,
  cutInputs: InputSpec[],
  overlayInputs: InputSpec[],
  signal?: AbortSignal,
  words?: Map<string, { start: number; end: number }[]>,
): Promise<Span[]> {
  const pieces: Heard[] = [];
  const add = (
    spec: InputSpec | undefined,
    gainDb: number | undefined,
    assetId: string,
    piece: Omit<Heard, 'spec' | 'words'>,
  ) => {
    const said = words?.get(assetId);
    if (spec?.hasAudio && (gainDb ?? 0) > INAUDIBLE_DB)
      pieces.push({ spec, ...piece, ...(said ? { words: said } : {}) });
  };
  plan.cuts.forEach((c, i) =>
    add(cutInputs[i], c.gainDb, c.assetId, {
      from: c.inSec,
      length: c.durationSec,
      at: c.timelineStartSec,
      levels: c.levels,
    }),
  );
  plan.overlays.forEach((o, k) => {
    const role = t.overlays[k]?.role;
    if (role !== 'music' && role !== 'effects')
      add(overlayInputs[k], o.gainDb, o.assetId, {
        from: o.fromSec ?? 0,
        length: o.durationSec,
        at: o.startSec,
        levels: o.levels,
      });
  });
  const heard = await Promise.all(
    pieces.map(async (p) => {
      const end = p.from + p.length;
      const runs = p.words
        ? joinSpans(
            p.words
              .filter((w) => w.end > p.from && w.start < end)
              .map((w) => ({ from: Math.max(p.from, w.start), to: Math.min(end, w.end) })),
            WORD_GAP,
          )
        : (await speechRuns(deps, p.spec.source, p.from, end, signal)).map((r) => ({
            from: Math.max(p.from, r.from - SOUND_LEAD),
            to: r.to,
          }));
      return audible(
        runs.map((r) => ({ from: r.from - p.from, to: Math.min(r.to - p.from, p.length) })),
        p.levels,
      ).map((r) => ({ from: p.at + r.from, to: p.at + r.to }));
    }),
  );
  return joinSpans(heard.flat(), 0).map((s) => ({ from: +s.from.toFixed(3), to: +s.to.toFixed(3) }));
}
