// The shape of each crossfaded join (sound-plan.ts crossfadeJoins), from the two sounds it overlaps, read from the
// sources. An equal-power crossfade holds the level of two unrelated sounds (room tone's hiss: their powers add);
// two stretches of one steady tone in the same phase add as amplitudes, and under it they bump up to +3 dB at the
// join (measured +2.6 to +2.9 dB on a 500 Hz hum locked to 25 fps's frames, as mains hum is: every join meets it in
// phase). There an equal-gain (linear) crossfade holds the level. Which one is decided by how alike the two sides'
// sound is where they overlap: their correlation, taken on their first differences so that a room tone's rumble
// (pink noise's power lies low, and two stretches of it can look alike over 20 ms) does not count as a tone.
import type { RenderPlan } from '../edit/plan.js';
import { monoSoundArgs } from './input.js';
import { runProcess } from './process.js';
import { SAMPLE_RATE, type CutSound } from './sound-plan.js';
import type { InputSpec } from './timeline-args.js';

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

/** `n` samples of a source's sound (mono, SAMPLE_RATE) from `at` seconds; undefined where it cannot be read. */
async function soundAt(
  ffmpeg: string,
  spec: InputSpec,
  at: number,
  n: number,
  opts: { signal?: AbortSignal; turn?: <T>(work: () => Promise<T>) => Promise<T> },
): Promise<Float32Array | undefined> {
  // From the millisecond at or before it (a seek the args write exactly), the samples before `at` dropped.
  const from = Math.max(0, Math.floor(at * 1000) / 1000);
  const skip = Math.round((at - from) * SAMPLE_RATE);
  const args = monoSoundArgs(spec.source, { from, seconds: (skip + n) / SAMPLE_RATE + 0.002 }, SAMPLE_RATE, {
    sample: 'f32le',
  });
  const work = () =>
    runProcess(ffmpeg, args, {
      timeoutMs: 60_000,
      ...(opts.signal ? { signal: opts.signal } : {}),
      maxStdout: (skip + n) * 4 + 4096,
    });
  const r = await (opts.turn ? opts.turn(work) : work());
  if (r.code !== 0) return undefined;
  const all = new Float32Array(
    r.stdout.buffer.slice(r.stdout.byteOffset, r.stdout.byteOffset + (r.stdout.length & ~3)),
  );
  return all.length >= skip + n ? all.subarray(skip, skip + n) : undefined;
}

/**
 * The plan with each crossfaded join's shape: `equalGainJoin` on the cut after a join whose two sides' sound is
 * alike where they overlap (crossfades: crossfadeJoins of this plan's sounds). A side that cannot be read keeps
 * the equal-power crossfade.
 */
export async function shapeCrossfades(
  ffmpeg: string,
  plan: RenderPlan,
  sounds: CutSound[],
  crossfades: number[],
  cutInputs: InputSpec[],
  opts: { signal?: AbortSignal; turn?: <T>(work: () => Promise<T>) => Promise<T> } = {},
): Promise<RenderPlan> {
  if (!crossfades.some((n) => n > 0)) return plan;
  const cuts = await Promise.all(
    plan.cuts.map(async (b, k) => {
      const n = crossfades[k] ?? 0;
      const a = plan.cuts[k - 1];
      const sa = sounds[k - 1];
      const sb = sounds[k]!;
      if (!n || !a || !sa) return b;
      const half = n / 2;
      // Where each side's sound in the overlap lies in its source: a's from half the crossfade before its slot ends,
      // b's from half of it before its slot starts (its range's samples from its in point, sound-plan.ts).
      const [x, y] = await Promise.all([
        soundAt(ffmpeg, cutInputs[k - 1]!, a.inSec + (sa.skip + sa.samples - half) / SAMPLE_RATE, n, opts),
        soundAt(ffmpeg, cutInputs[k]!, b.inSec + (sb.skip - half) / SAMPLE_RATE, n, opts),
      ]);
      return x && y && likeness(x, y) > EQUAL_GAIN_FROM ? { ...b, equalGainJoin: true } : b;
    }),
  );
  return { ...plan, cuts };
}
