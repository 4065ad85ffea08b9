// Footage that moves: when most GOPs are candidates (their keyframes differ because the picture moves, not only at
// cuts), their reference frames alone are decoded first, tiny and without the loop filter (B-frames are skipped: in
// streams that have them, that is most of the decoding work saved), and only the stretches where the picture steps
// are decoded fully for scdet. A hard cut steps the difference between neighbouring references far above the steady
// difference motion makes (bench/README.md); the threshold sits well under the cuts.
//
// Pure decisions here; the decoding is in inspect.ts.
import type { FramePacket, Run } from './inspect-frames.js';

/** scdet's measure between two frames of the same planar layout: mean absolute difference, percent of full scale. */
export function mafd(a: Uint8Array, b: Uint8Array): number {
  let sad = 0;
  for (let i = 0; i < a.length; i++) sad += Math.abs(a[i]! - b[i]!);
  return (sad * 100) / a.length / 256;
}

/**
 * A stretch whose references differ (scdet's measure on tiny frames) this much more than the calmest of the stretches
 * around it is decoded fully. On the moving bench footage and the tests' moving source, the smallest such step at a
 * cut was 13, the largest elsewhere 8.5: the threshold sits at a third of the cuts' smallest.
 */
export const LOCATE_STEP = 4;
/**
 * The calm a stretch steps up from is the least difference among this many stretches on each side: cuts in several
 * stretches in a row (a flash, a quick montage) still leave a calm one to compare with.
 */
export const LOCATE_WINDOW = 2;
/** References further apart than this leave the stretch between them unseen: it is decoded fully. */
export const MAX_LOCATE_GAP = 8;
/** Candidates covering more than this share of the frames are located first (streams with B-frames only). */
export const LOCATE_SHARE = 0.25;

/**
 * True when frames are shown in another order than they are decoded (B-frames), so references are fewer than frames.
 */
export function hasReordering(frames: FramePacket[]): boolean {
  let last = -1;
  for (const f of frames) {
    if (f.dts === undefined) return false;
    if (f.dts < last) return true;
    last = f.dts;
  }
  return false;
}

/** What the locator decoded of one run: frame indices (ascending) and each one's tiny picture. */
export interface Located {
  indices: number[];
  tiny: Uint8Array[];
}

/**
 * The stretches (lo, hi] of a run that may hold a cut: between neighbouring decoded references whose difference
 * steps up from what the stretches beside it show, that are too far apart, or that hold a packet standing out in
 * size (a flash of a few B-frames between two references is seen only there); and any frames of the run before
 * the first or after the last reference decoded.
 */
export function suspiciousStretches(run: Run, seen: Located, outliers: Set<number>): [number, number][] {
  const { indices: ix, tiny } = seen;
  if (!ix.length) return [[run.from, run.to]];
  const out: [number, number][] = [];
  if (ix[0]! > run.from) out.push([run.from, ix[0]!]);
  const d: number[] = [];
  for (let k = 0; k + 1 < ix.length; k++) d.push(mafd(tiny[k]!, tiny[k + 1]!));
  for (let k = 0; k < d.length; k++) {
    const lo = ix[k]!;
    const hi = ix[k + 1]!;
    let calm = Infinity;
    for (let j = Math.max(0, k - LOCATE_WINDOW); j <= Math.min(d.length - 1, k + LOCATE_WINDOW); j++)
      if (j !== k) calm = Math.min(calm, d[j]!);
    // A run of one stretch has nothing beside it: any difference at all is looked at.
    if (calm === Infinity) calm = 0;
    let flagged = hi - lo > MAX_LOCATE_GAP || d[k]! - calm >= LOCATE_STEP;
    for (let i = lo + 1; !flagged && i <= hi; i++) if (outliers.has(i)) flagged = true;
    if (flagged) out.push([lo, hi]);
  }
  if (ix.at(-1)! < run.to) out.push([ix.at(-1)!, run.to]);
  return out;
}

/**
 * Runs to decode fully for the suspicious stretches: each from the keyframe at or before the stretch's start to its
 * end (scdet needs every frame from a keyframe), overlapping ones merged. `keys` are the keyframes' frame indices.
 */
export function runsForStretches(keys: number[], stretches: [number, number][]): Run[] {
  const runs: Run[] = [];
  const sorted = [...stretches].sort((a, b) => a[0] - b[0]);
  for (const [lo, hi] of sorted) {
    let g = 0;
    let a = 0;
    let b = keys.length - 1;
    while (a <= b) {
      const m = (a + b) >> 1;
      if (keys[m]! <= lo) {
        g = m;
        a = m + 1;
      } else b = m - 1;
    }
    const from = keys[g]!;
    const last = runs.at(-1);
    if (last && from <= last.to) last.to = Math.max(last.to, hi);
    else runs.push({ from, to: hi });
  }
  return runs;
}
