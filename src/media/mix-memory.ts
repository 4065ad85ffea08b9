// A re-preview measures its sound only around what changed (issue 34, item 3: the loop). The timeline's sound is
// measured in 100 ms windows (its levels and true peak per window, its loudness in 400 ms blocks ending on each:
// mixGraph in timeline-args.ts). When a timeline differs from one measured before only in some cuts' sound (the same
// length, the same overlays and mix, every cut in the same slot, the others the same segment at the same gains), the
// windows the changed samples cannot reach keep their earlier measurements, and one process measures the rest: from
// a little before the first changed sample (the filters' state and a block's 400 ms, measured and dropped) to a
// little after the last (the blocks that reach back into it). The same samples give the same figures, to the digit
// (test/unit/media-mix-memory.test.ts; the loop test compares a re-preview's with a fresh one's).
import { createHash } from 'node:crypto';
import type { RenderPlan } from '../edit/plan.js';
import type { Measurements } from './measure.js';
import { CROSSFADE_SAMPLES, SAMPLE_RATE, type CutSound } from './sound-plan.js';
import type { SampleSpan, SoundJob } from './timeline-args.js';

/** One measurement window: 100 ms. */
export const WINDOW_SAMPLES = SAMPLE_RATE / 10;
/** Windows measured ahead of those kept, and dropped: the loudness filters settle and a 400 ms block fills. */
const WARM_WINDOWS = 10;
/** Windows kept fresh before the first changed one (the true peak's resampler reaches a few samples back). */
const BEFORE_WINDOWS = 1;
/** Windows kept fresh after the last changed one: a block reaches 4 windows back, and a margin. */
const AFTER_WINDOWS = 8;
/** Past this share of the timeline to measure, the whole is measured (a span saves little and adds a merge). */
const MOST = 0.75;
/** Timelines remembered per store. */
const REMEMBERED = 8;

/** What a timeline's sound is made of, for comparing with one measured before. */
export interface MixIdentity {
  /** Everything but its cuts (its length, overlays, the mix's settings): equal, or nothing is reused. */
  whole: string;
  /** Per cut: what its samples are (its segment, its plan, its place in the sound). */
  cuts: string[];
  /** Per cut: its slot on the timeline, [start, end) in samples. */
  slots: [number, number][];
  /** The timeline's samples. */
  total: number;
}

const hash = (what: unknown) => createHash('sha256').update(JSON.stringify(what)).digest('hex').slice(0, 40);

/**
 * A timeline's sound identity: `whole` (what identifies it but its cuts), and each cut's samples: its segment's (by
 * its key; a cut whose segment is not made yet is read from its source by the same chain) placed by its plan (gains,
 * levelling, fades) in its slot (`sounds`, after levelling).
 */
export function mixIdentity(
  whole: string,
  plan: Pick<RenderPlan, 'cuts'>,
  keys: string[],
  sounds: CutSound[],
): MixIdentity {
  const last = sounds.at(-1);
  return {
    whole,
    cuts: plan.cuts.map((cut, i) => hash({ segment: keys[i], cut, sound: sounds[i] })),
    slots: sounds.map((s) => [s.slotStart, s.slotStart + s.slot]),
    total: last ? last.slotStart + last.slot : 0,
  };
}

export type MixMeasured = Required<Pick<Measurements, 'mixLevels'>> & Pick<Measurements, 'blocks' | 'truePeaks'>;

/** What to measure of a timeline, and the earlier measurements the rest is taken from. */
export interface MixReuse {
  /** Samples to measure ([0, 0) when no cut's sound changed: nothing). */
  span: SampleSpan;
  /** Windows [from, to) whose fresh measurement is kept (by index: window i starts at i * 100 ms). */
  fresh: { from: number; to: number };
  earlier: MixMeasured;
}

/**
 * The windows of a timeline's sound whose samples changed against an earlier one, or undefined when they cannot be
 * told.
 */
function changedWindows(now: MixIdentity, before: MixIdentity): { from: number; to: number } | undefined {
  if (now.whole !== before.whole || now.total !== before.total || now.cuts.length !== before.cuts.length)
    return undefined;
  let first = Infinity;
  let last = -Infinity;
  for (const [i, id] of now.cuts.entries()) {
    const [start, end] = now.slots[i]!;
    const [bStart, bEnd] = before.slots[i]!;
    if (id === before.cuts[i] && start === bStart && end === bEnd) continue;
    first = Math.min(first, start, bStart);
    last = Math.max(last, end, bEnd);
  }
  if (first === Infinity) return { from: 0, to: 0 };
  return { from: Math.floor(first / WINDOW_SAMPLES), to: Math.ceil(last / WINDOW_SAMPLES) };
}

/** What to measure of `now` given `before`'s measurements; undefined when all of it must be. */
export function reuseFor(now: MixIdentity, before: MixIdentity, earlier: MixMeasured): MixReuse | undefined {
  const changed = changedWindows(now, before);
  if (!changed) return undefined;
  if (changed.to <= changed.from) return { span: { from: 0, to: 0 }, fresh: { from: 0, to: 0 }, earlier };
  const windows = Math.ceil(now.total / WINDOW_SAMPLES);
  const fresh = { from: Math.max(0, changed.from - BEFORE_WINDOWS), to: Math.min(windows, changed.to + AFTER_WINDOWS) };
  const span = {
    from: Math.max(0, fresh.from - WARM_WINDOWS) * WINDOW_SAMPLES,
    to: Math.min(now.total, fresh.to * WINDOW_SAMPLES),
  };
  if (span.to - span.from > MOST * now.total) return undefined;
  return { span, fresh, earlier };
}

/** The whole timeline's measurements: the fresh ones of the windows re-measured, the earlier ones elsewhere. */
export function mergeMeasured(reuse: MixReuse, fresh: MixMeasured): MixMeasured {
  const { from, to } = reuse.fresh;
  const take = <T>(earlier: T[] | undefined, now: T[] | undefined, windowOf: (x: T) => number): T[] | undefined => {
    if (!earlier && !now) return undefined;
    const inside = (x: T) => windowOf(x) >= from && windowOf(x) < to;
    return [
      ...(earlier ?? []).filter((x) => windowOf(x) < from),
      ...(now ?? []).filter(inside),
      ...(earlier ?? []).filter((x) => windowOf(x) >= to),
    ];
  };
  const level = (x: { t: number }) => Math.round(x.t * 10);
  // A block is named by its end: the window it ends with.
  const block = (x: { end: number }) => Math.round(x.end * 10) - 1;
  const names = new Set([...Object.keys(reuse.earlier.blocks ?? {}), ...Object.keys(fresh.blocks ?? {})]);
  const blocks = names.size
    ? Object.fromEntries([...names].map((n) => [n, take(reuse.earlier.blocks?.[n], fresh.blocks?.[n], block) ?? []]))
    : undefined;
  const truePeaks = take(reuse.earlier.truePeaks, fresh.truePeaks, level);
  return {
    mixLevels: take(reuse.earlier.mixLevels, fresh.mixLevels, level)!,
    ...(blocks ? { blocks } : {}),
    ...(truePeaks ? { truePeaks } : {}),
  };
}

/**
 * The job that measures a span of a timeline's sound: the cuts whose slots lie outside it are silence (not read nor
 * placed: only the span's own samples matter, and they are the same). Those within a crossfade of it are read (a
 * join beside a silent slot is not crossfaded, and its crossfade reaches half of it into the next slot).
 */
export function spanJob(job: SoundJob, span: SampleSpan): SoundJob {
  const near = CROSSFADE_SAMPLES;
  const parts = job.parts.map((p) => {
    const s = job.sounds[p.cut]!;
    return s.slotStart + s.slot <= span.from - near || s.slotStart >= span.to + near
      ? { cut: p.cut, silent: true as const }
      : p;
  });
  return { ...job, parts, span };
}

/** The measurements of the last few timelines measured (of one cache dir, in memory). */
export class MixMemory {
  private entries: { id: MixIdentity; measured: MixMeasured }[] = [];

  /** The cheapest way to measure `id`'s sound from a timeline remembered, if any is cheaper than measuring it all. */
  reuse(id: MixIdentity): MixReuse | undefined {
    let best: MixReuse | undefined;
    for (const e of this.entries) {
      const r = reuseFor(id, e.id, e.measured);
      if (r && (!best || r.span.to - r.span.from < best.span.to - best.span.from)) best = r;
    }
    return best;
  }

  remember(id: MixIdentity, measured: MixMeasured): void {
    this.entries = [{ id, measured }, ...this.entries.filter((e) => !sameIdentity(e.id, id))].slice(0, REMEMBERED);
  }
}

const sameIdentity = (a: MixIdentity, b: MixIdentity) =>
  a.whole === b.whole &&
  a.total === b.total &&
  a.cuts.length === b.cuts.length &&
  a.cuts.every((c, i) => c === b.cuts[i] && a.slots[i]![0] === b.slots[i]![0] && a.slots[i]![1] === b.slots[i]![1]);
