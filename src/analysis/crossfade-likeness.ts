// How alike the two sides of a crossfaded join sound, and which crossfade holds the level there: pure measures on
// the samples (media/crossfade-shape.ts reads them from the sources). The correlation is taken on first differences
// so that a room tone's rumble (pink noise's power lies low, and two stretches of it can look alike over 20 ms) does
// not count as a tone.

/**
 * Past this correlation an equal-gain crossfade holds the level better than an equal-power one: at the join's
 * middle the two give 1 + r and (1 + r) / 2 of the level's power, as far from 1 (in dB) at r = sqrt(2) - 1.
 */
export const EQUAL_GAIN_FROM = Math.SQRT2 - 1;

/** How alike two sounds of one length are: the correlation of their first differences (0 where either is silent). */
export function likeness(a: Float32Array, b: Float32Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 1; i < Math.min(a.length, b.length); i++) {
    const da = a[i]! - a[i - 1]!;
    const db = b[i]! - b[i - 1]!;
    ab += da * db;
    aa += da * da;
    bb += db * db;
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}

/**
 * Below this correlation neither shape holds the level within 1.5 dB at the join's middle (1 + r under equal power):
 * the two sides' tone is out of phase, and the later one's sound is delayed until it is in phase.
 */
export const ALIGN_BELOW = 10 ** (-1.5 / 10) - 1;

/** The delay (samples, 0 to `most`) of `b` that makes it most alike `a`: `b` holds `most` samples before `a`'s. */
export function bestDelay(a: Float32Array, b: Float32Array, most: number): { delay: number; likeness: number } {
  let best = { delay: 0, likeness: likeness(a, b.subarray(most, most + a.length)) };
  for (let d = 1; d <= most; d++) {
    const r = likeness(a, b.subarray(most - d, most - d + a.length));
    if (r > best.likeness + 1e-9) best = { delay: d, likeness: r };
  }
  return best;
}
