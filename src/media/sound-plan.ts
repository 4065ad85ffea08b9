// Where each cut's sound plays on the timeline, to the sample, decided from the plan and the sources' clocks (no
// media read). A cut's picture starts on the first whole frame inside its range (cutClock: up to a source frame after
// its in point) and runs its planned frames, holding its last frame past its out point where it must; its sound is
// its range [in, out). Played in sync with the picture, cut after cut, the sound of a range is shorter than the
// picture that shows it by up to a frame or two: each cut's sound stopped at its out point and left a hole of
// 18-48 ms before the next (heard as drop-outs in a bed of room tone or music). Here the sound is continuous:
//  - each cut's sound is in sync with its picture, or late by `lag` (never early: sound late by up to ~125 ms is
//    not noticed, early by 45 ms is, ITU-R BT.1359); a lag is taken only where the cuts before a join cannot
//    otherwise reach it, the least that does, at most MAX_LAG_SEC;
//  - the sound of one cut gives way to the next's at the picture's cut where both have sound there, else as near it
//    as they do (within a frame or two of it);
//  - nothing outside a cut's [in, out) is ever played, but for the handle of a crossfade (crossfadeJoins): where two
//    cuts with pause beyond them (sound handles) meet, each plays on for half the crossfade beyond its slot, under the
//    other's fade.
import { cutClock, type ClockSource } from '../edit/cut-clock.js';
import type { PlanCut, RenderPlan } from '../edit/plan.js';

export const SAMPLE_RATE = 48_000;

/** The most a cut's sound may trail its picture to close a hole; past it a hole is left. */
export const MAX_LAG_SEC = 0.12;

/** Samples of a cut's range [in, out) at SAMPLE_RATE (its times are whole milliseconds). */
export function rangeSamples(cut: Pick<PlanCut, 'durationSec'>): number {
  return Math.max(1, Math.round(cut.durationSec * SAMPLE_RATE));
}

/**
 * One cut's place in the timeline's sound, in samples. The timeline's sound is the cuts' slots end to end (their
 * sum is the picture's length); in its slot a cut plays `samples` of its range from `skip` (0 = its in point),
 * after `lead` samples of silence, and silence after them to the slot's end (a hole, only where MAX_LAG_SEC is not
 * enough, or before a first cut whose sound is late).
 */
export interface CutSound {
  /** Where its slot starts on the timeline. */
  slotStart: number;
  slot: number;
  lead: number;
  skip: number;
  samples: number;
  /** How late its sound is against its picture. */
  lag: number;
}

export function soundPlan(
  plan: Pick<RenderPlan, 'cuts' | 'fpsNum' | 'fpsDen'>,
  clocks: (ClockSource & { hasAudio?: boolean })[],
): CutSound[] {
  const K = plan.cuts.length;
  const toSamples = (frames: number) => Math.round((frames * plan.fpsDen * SAMPLE_RATE) / plan.fpsNum);
  // The picture's cut points, and where each cut's picture starts in its range (the in point moved onto a frame).
  const picture: number[] = [];
  let frames = 0;
  for (const c of plan.cuts) {
    picture.push(toSamples(frames));
    frames += c.frames;
  }
  const end = toSamples(frames);
  // (A frame that starts up to half a millisecond before the in point is its own: moved may be a few samples under 0.)
  const moved = plan.cuts.map((c, k) => Math.round((cutClock(c, clocks[k] ?? {}).inSec - c.inSec) * SAMPLE_RATE));
  const span = plan.cuts.map(rangeSamples);
  // In sync, cut k's range plays over [picture_k - moved_k, picture_k - moved_k + span_k). Cut k-1's must reach cut
  // k's start; where it does not, cut k-1 (and so the cuts before it, back to one with room) trails by the shortfall.
  const maxLag = Math.round(MAX_LAG_SEC * SAMPLE_RATE);
  const lag = new Array<number>(K).fill(0);
  for (let k = K - 1; k >= 1; k--) {
    const shortfall = picture[k]! - moved[k]! - (picture[k - 1]! - moved[k - 1]! + span[k - 1]!);
    lag[k - 1] = Math.min(maxLag, Math.max(0, lag[k]! + shortfall));
  }
  const first = (k: number) => picture[k]! + lag[k]! - moved[k]!;
  const last = (k: number) => first(k) + span[k]!;
  // Where each cut's sound starts: at its picture's cut when both cuts have sound there, else the nearest point that
  // they do (or, past the lag's limit, where its own starts).
  const from: number[] = [];
  for (let k = 0; k < K; k++) {
    const at = k === 0 ? Math.max(0, first(0)) : Math.max(from[k - 1]!, first(k), Math.min(picture[k]!, last(k - 1)));
    from.push(Math.min(at, end));
  }
  return plan.cuts.map((_, k) => {
    const slotStart = k === 0 ? 0 : from[k]!;
    const slotEnd = k === K - 1 ? end : from[k + 1]!;
    const stop = Math.min(last(k), slotEnd);
    return {
      slotStart,
      slot: slotEnd - slotStart,
      lead: from[k]! - slotStart,
      skip: Math.max(0, from[k]! - first(k)),
      samples: Math.max(0, stop - from[k]!),
      lag: lag[k]!,
    };
  });
}

/** Length of the crossfade at a join whose cuts have sound handles, in samples (20 ms, centred on the join). */
export const CROSSFADE_SAMPLES = 960;

/** Sound decoded after a cut's out point (its sound input reads this much beyond its range), seconds. */
export const DECODED_AFTER_SEC = 0.1;

/**
 * For each join (index k: between cut k-1 and cut k; index 0 unused, always 0), the samples of its crossfade
 * (equal-power, or equal-gain where its two sides' sound is alike: crossfade-shape.ts), centred on it; 0 where the join keeps its faded edges (a dip of a few milliseconds either side).
 *
 * What is crossfaded is pause: each cut plays on for half the crossfade beyond its slot, so the sound it plays there
 * must be neither a word nor muted. A cut's sound handles (the edit's sound_handles: compose_edit measures, for a cut
 * by words, the pause in its source beyond its out point and before its in point, as heard) say how much it may.
 * A join is crossfaded where both cuts have sound, the sound of one gives way to the next's there with no hole or
 * lead between them, neither's edge carries a fade the edit asked for, each plays at least half of it, and each
 * plays no more beyond its range than its handle on that side (and, after cut k-1's out point, than is decoded); and
 * not where the two play the same stretch of one source (a sentence trimmed where the next clip starts: the same
 * samples twice, 3 dB up under an equal-power crossfade). Elsewhere (a neighbour's word beyond a cut, faded by the
 * edit's level windows) the join keeps its fades: a crossfade would let the word through. The timeline's length and
 * the picture do not change.
 */
export function crossfadeJoins(
  plan: Pick<RenderPlan, 'cuts'>,
  sounds: CutSound[],
  clocks: { hasAudio?: boolean }[],
): number[] {
  const half = CROSSFADE_SAMPLES / 2;
  return plan.cuts.map((b, k) => {
    const a = plan.cuts[k - 1];
    const sa = sounds[k - 1];
    const sb = sounds[k]!;
    if (!a || !sa || !a.handles || !b.handles) return 0;
    if (!clocks[k - 1]?.hasAudio || !clocks[k]?.hasAudio) return 0;
    if (a.fadeOutSec || b.fadeInSec) return 0;
    // No hole: a's sound reaches its slot's end and b's starts on its slot's start.
    if (sb.lead !== 0 || sa.lead + sa.samples !== sa.slot) return 0;
    if (sa.samples < half || sb.samples < half) return 0;
    // The same stretch of one source on both sides of the join.
    const aOut = a.inSec + a.durationSec;
    if (a.assetId === b.assetId && Math.abs(b.inSec - aOut) * SAMPLE_RATE < CROSSFADE_SAMPLES) return 0;
    // Samples each plays beyond its range: a after its out point, b before its in point.
    const beyondA = sa.skip + sa.samples + half - rangeSamples(a);
    const beyondB = half - sb.skip;
    if (beyondA > Math.min(a.handles.after, DECODED_AFTER_SEC) * SAMPLE_RATE) return 0;
    if (beyondB > Math.min(b.handles.before, b.inSec) * SAMPLE_RATE) return 0;
    return CROSSFADE_SAMPLES;
  });
}
