// The shape of each crossfaded join (sound-plan.ts crossfadeJoins), from the two sounds it overlaps, read from the
// sources. An equal-power crossfade holds the level of two unrelated sounds (room tone's hiss: their powers add);
// two stretches of one steady tone in the same phase add as amplitudes, and under it they bump up to +3 dB at the
// join (measured +2.6 to +2.9 dB on a 500 Hz hum locked to 25 fps's frames, as mains hum is: every join meets it in
// phase). There an equal-gain (linear) crossfade holds the level. Which one is decided by how alike the two sides'
// sound is where they overlap (analysis/crossfade-likeness.ts); here the two sides are read from the sources.
import { ALIGN_BELOW, EQUAL_GAIN_FROM, bestDelay, likeness } from '../analysis/crossfade-likeness.js';
import type { RenderPlan } from '../edit/plan.js';
import { monoSoundArgs } from './input.js';
import { runProcess } from './process.js';
import { SAMPLE_RATE, type CutSound } from './sound-plan.js';
import type { InputSpec } from './timeline-args.js';

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
 * The plan with each crossfaded join's shape (crossfades: crossfadeJoins of this plan's sounds): `equalGainJoin` on
 * the cut after a join whose two sides' sound is alike where they overlap; and where they are so unlike that neither
 * shape holds the level (a tone meeting itself out of phase), `soundDelay` on that cut: its sound is played up to
 * ~10 ms late (unnoticed: sound late by up to ~125 ms is, ITU-R BT.1359), to meet the tone in phase. Only as far as its
 * pause before it allows, and only where the join after it is crossfaded too (there its range's last samples play
 * under the crossfade; elsewhere they would be cut off): the timeline's last cut, or one whose words run on at its
 * end, is not delayed, and such a join may still dip. A side that cannot be read keeps the equal-power crossfade,
 * undelayed. Joins are taken in order: a cut's delay moves what it plays at the join after it.
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
  // Per join: how late b's sound may play, and the sound of both sides (read at once, all joins together).
  const read = await Promise.all(
    plan.cuts.map(async (b, k) => {
      const n = crossfades[k] ?? 0;
      const a = plan.cuts[k - 1];
      const sa = sounds[k - 1];
      const sb = sounds[k]!;
      if (!n || !a || !sa) return undefined;
      const half = n / 2;
      // Within b's pause before it, beyond what the crossfade plays there (half of it, less what of its range it
      // skips), and its source's start; and only where the join after it is crossfaded too, so that its range's
      // last samples still play (under that crossfade) rather than being cut off.
      const room = Math.floor(Math.min(b.handles?.before ?? 0, b.inSec) * SAMPLE_RATE) - (half - sb.skip);
      const most = (crossfades[k + 1] ?? 0) > 0 ? Math.max(0, Math.min(room, MAX_DELAY)) : 0;
      // Each side's sound in the overlap: a's from half the crossfade before its slot ends (and MAX_DELAY before
      // that: a's own delay, decided at the join before, moves it), b's from half of it before its slot starts (and
      // `most` before that, to search).
      const aAt = a.inSec + (sa.skip + sa.samples - half) / SAMPLE_RATE;
      const aLead = Math.min(MAX_DELAY, Math.floor(aAt * SAMPLE_RATE));
      const [x, y] = await Promise.all([
        soundAt(ffmpeg, cutInputs[k - 1]!, aAt - aLead / SAMPLE_RATE, n + aLead, opts),
        soundAt(ffmpeg, cutInputs[k]!, b.inSec + (sb.skip - half - most) / SAMPLE_RATE, n + most, opts),
      ]);
      return x && y ? { n, x, aLead, y, most } : undefined;
    }),
  );
  // In order: a cut's delay moves what it plays at the join after it.
  const cuts = [...plan.cuts];
  read.forEach((r, k) => {
    if (!r) return;
    const aDelay = cuts[k - 1]!.soundDelay ?? 0;
    if (aDelay > r.aLead) return;
    const x = r.x.subarray(r.aLead - aDelay, r.aLead - aDelay + r.n);
    let found = { delay: 0, likeness: likeness(x, r.y.subarray(r.most, r.most + r.n)) };
    if (found.likeness < ALIGN_BELOW && r.most > 0) found = bestDelay(x, r.y, r.most);
    cuts[k] = {
      ...cuts[k]!,
      ...(found.likeness > EQUAL_GAIN_FROM ? { equalGainJoin: true } : {}),
      ...(found.delay ? { soundDelay: found.delay } : {}),
    };
  });
  return { ...plan, cuts };
}

/** The most a cut's sound is delayed to meet a tone in phase: 10 ms, a period of 100 Hz. */
const MAX_DELAY = SAMPLE_RATE / 100;
