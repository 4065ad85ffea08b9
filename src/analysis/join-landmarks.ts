// Where two words that run together meet, found in the sound itself to the millisecond, pure: samples in, seconds
// out. Only where a sibilant's hiss starts out of a word ending in a vowel or another sonorant ("the|sun",
// "a|ship"): the hiss over the voice rises by tens of dB within a few milliseconds. Measured against flite's true
// boundaries (four voices, clean and under a bed 10 and 20 dB down; bench/README.md), the onset found is within
// -12..+10 ms of the true one (p90 8 ms); a stop's closure (the low band falling) or a stop released into a vowel (it
// rising) is found no closer than 20-40 ms at p90 and is not used.
import { OBSTRUENTS, type PhoneName } from './dictionary.js';

const obstruents: ReadonlySet<string> = OBSTRUENTS;

const SIBILANTS: ReadonlySet<string> = new Set<PhoneName>(['S', 'SH', 'Z', 'ZH']);

/**
 * Whether a word ending in `before` and one starting with `after` (the phones each of their pronunciations ends or
 * starts with) meet at a sibilant's onset: every pronunciation of the word after starts with s, sh, z or zh, and none
 * of the word before ends in a stop or a fricative.
 */
export function sibilantJoin(before: string[] | undefined, after: string[] | undefined): boolean {
  if (!before?.length || !after?.length) return false;
  return after.every((p) => SIBILANTS.has(p)) && before.every((p) => !obstruents.has(p));
}

/** The sound is measured every millisecond over FRAME_MS; a change is read across SPAN_MS. */
const FRAME_MS = 6;
const SPAN_MS = 10;
/** The hiss over the voice rises at least this much (dB over SPAN_MS) at an onset, and stays this far up. */
const MIN_RISE = 8;
/** Past the steepest rise it holds from HOLD_FROM to HOLD_TO ms on (a sibilant lasts 60 ms or more). */
const HOLD_FROM = 10;
const HOLD_TO = 30;
/** The onset is where the rise first reaches this share of its steepest, on the way to it. */
const ONSET_SHARE = 0.5;
/** Low part: a two-pole smoothing at this frequency (Hz). */
const LOW_HZ = 1000;

/**
 * Per millisecond from `origin` (s, on the samples' clock), the hiss over the voice (dB): the energy of the second
 * difference (which weighs by frequency squared: a vowel's low harmonics all but vanish, a hiss's 4-8 kHz stay) over
 * that of the sound smoothed under about 1 kHz.
 */
export function hissOverVoice(samples: Float32Array, rate: number): { origin: number; tilt: Float64Array } {
  const frame = Math.round((FRAME_MS * rate) / 1000);
  const hop = Math.max(1, Math.round(rate / 1000));
  const n = samples.length;
  const low = new Float64Array(n + 1);
  const high = new Float64Array(n + 1);
  const a = Math.exp((-2 * Math.PI * LOW_HZ) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[i]!;
    s1 = (1 - a) * x + a * s1;
    s2 = (1 - a) * s1 + a * s2;
    const d = i > 0 && i < n - 1 ? samples[i + 1]! - 2 * x + samples[i - 1]! : 0;
    low[i + 1] = low[i]! + s2 * s2; // running sums: each frame's energy in two subtractions
    high[i + 1] = high[i]! + d * d;
  }
  const count = Math.max(0, Math.floor((n - frame) / hop) + 1);
  const tilt = new Float64Array(count);
  for (let f = 0; f < count; f++) {
    const from = f * hop;
    const to = from + frame;
    tilt[f] = 10 * Math.log10((high[to]! - high[from]! + 1e-12) / (low[to]! - low[from]! + 1e-12));
  }
  return { origin: frame / 2 / rate, tilt };
}

/**
 * A sibilant's onset within `reach` (s) of `around` (both on the samples' clock): the steepest rise of the hiss over
 * the voice there, taken back to where the rise first reached half of that, and only where it rises by MIN_RISE,
 * not at the window's edge (the rise may go on beyond it), and holds afterwards. Undefined where none does.
 */
export function sibilantOnset(samples: Float32Array, rate: number, around: number, reach: number): number | undefined {
  const { origin, tilt } = hissOverVoice(samples, rate);
  const half = Math.round(SPAN_MS / 2);
  const rise = (f: number) => tilt[f + half]! - tilt[f - half]!;
  const at = (s: number) => Math.round((s - origin) * 1000);
  const from = Math.max(half, at(around - reach));
  const to = Math.min(tilt.length - 1 - half, at(around + reach));
  let best: number | undefined;
  let steepest = MIN_RISE;
  for (let f = from; f <= to; f++) {
    if (rise(f) >= steepest) {
      steepest = rise(f);
      best = f;
    }
  }
  if (best === undefined || best - from < 2 || to - best < 2) return undefined;
  while (best - 1 >= from && rise(best - 1) >= ONSET_SHARE * steepest) best--;
  const base = tilt[best - half]!;
  for (let f = best + HOLD_FROM; f <= Math.min(tilt.length - 1, best + HOLD_TO); f++)
    if (tilt[f]! < base + MIN_RISE) return undefined;
  return origin + best / 1000;
}

/** A hiss counts as begun before an instant when its onset lies at least this long (ms) before it. */
const BEGUN_MS = 5;
/**
 * A hiss's median hiss over the voice is at least this (dB): a sibilant's is over 0 dB on flite's four voices (kal's
 * 8 kHz s about +2, -6 under a chord bed 10 dB down), a vowel's under -10 (rms's buzzy vowels -12..-25).
 */
const HISS_LEVEL = -8;

/**
 * Where `at` (s, on the samples' clock) lies inside a sibilant's hiss that began before it (a cut placed in the middle
 * of "sailed"'s s by a transcript that gave the s to the word before): that hiss's onset, searched back up to `reach`
 * (s). The onset is a steep rise of the hiss over the voice (MIN_RISE at least) taken back to half of it, as in
 * sibilantOnset; from HOLD_FROM past it up to `at`, the sound is a hiss (its median at HISS_LEVEL or more, and MIN_RISE
 * over the median of the 10 ms before the onset) and never falls back to that level (a vowel between them would). The
 * sound around `at` is a hiss too. Undefined where `at` is in no such hiss.
 */
export function hissBegunBefore(samples: Float32Array, rate: number, at: number, reach: number): number | undefined {
  const { origin, tilt } = hissOverVoice(samples, rate);
  const half = Math.round(SPAN_MS / 2);
  const rise = (f: number) => tilt[f + half]! - tilt[f - half]!;
  const frame = (s: number) => Math.round((s - origin) * 1000);
  const median = (from: number, to: number) => {
    const v = Array.from(tilt.subarray(Math.max(0, from), Math.max(0, to + 1))).sort((x, y) => x - y);
    return v.length ? v[v.length >> 1]! : -Infinity;
  };
  const end = Math.min(tilt.length - 1 - half, frame(at));
  const from = Math.max(3 * half, frame(at - reach));
  if (median(end - half, end + half) < HISS_LEVEL) return undefined;
  // Each steep rise (a local top), taken back to half of it, and whether the hiss holds from it to `at`; the earliest
  // that does is the onset (a weak s may rise twice).
  const holds = (onset: number) => {
    const base = median(onset - 3 * half, onset - half);
    const held = tilt.subarray(onset + HOLD_FROM, end + 1);
    if (!held.length || Math.min(...held) < base) return false;
    const level = median(onset + HOLD_FROM, end);
    return level >= HISS_LEVEL && level >= base + MIN_RISE;
  };
  let found: number | undefined;
  for (let f = end - BEGUN_MS; f >= from; f--) {
    const r = rise(f);
    if (r < MIN_RISE || r < rise(f - 1) || r < rise(f + 1)) continue;
    let onset = f;
    while (onset - 1 >= from && rise(onset - 1) >= ONSET_SHARE * r) onset--;
    if (holds(onset)) found = onset;
  }
  return found === undefined ? undefined : origin + found / 1000;
}
