// The shape of each crossfaded join (sound-plan.ts crossfadeJoins), from the two sounds it overlaps, read from the
// sources. An equal-power crossfade holds the level of two unrelated sounds (room tone's hiss: their powers add);
// two stretches of one steady tone in the same phase add as amplitudes, and under it they bump up to +3 dB at the
// join (measured +2.6 to +2.9 dB on a 500 Hz hum locked to 25 fps's frames, as mains hum is: every join meets it in
// phase). There an equal-gain (linear) crossfade holds the level. Which one is decided by how alike the two sides'
// sound is where they overlap (analysis/crossfade-likeness.ts); here the two sides are read from the sources.
import { ALIGN_BELOW, EQUAL_GAIN_FROM, bestDelay, likeness } from '../analysis/crossfade-likeness.js';
import type { RenderPlan } from '../edit/plan.js';
import { inputArgs, monoSoundArgs } from './input.js';
import { runProcess } from './process.js';
import { SAMPLE_RATE, type CutSound } from './sound-plan.js';
import type { InputSpec } from './timeline-args.js';

type ReadOptions = { signal?: AbortSignal; turn?: <T>(work: () => Promise<T>) => Promise<T>; maxInputs?: number };

/** Where a window of a source's sound is read from: `n` samples (mono, SAMPLE_RATE) from `at` seconds. */
export interface SoundWindow {
  spec: InputSpec;
  at: number;
  n: number;
}

/** The seek a window's args write exactly (the millisecond at or before it), and the samples to drop after it. */
function seekOf(w: SoundWindow): { from: number; skip: number } {
  const from = Math.max(0, Math.floor(w.at * 1000) / 1000);
  return { from, skip: Math.round((w.at - from) * SAMPLE_RATE) };
}

/** One window's samples, by a process of its own; undefined where it cannot be read. */
async function soundAt(ffmpeg: string, w: SoundWindow, opts: ReadOptions): Promise<Float32Array | undefined> {
  const { from, skip } = seekOf(w);
  const args = monoSoundArgs(w.spec.source, { from, seconds: (skip + w.n) / SAMPLE_RATE + 0.002 }, SAMPLE_RATE, {
    sample: 'f32le',
  });
  const all = await readFloats(ffmpeg, args, skip + w.n, opts);
  return all && all.length >= skip + w.n ? all.subarray(skip, skip + w.n) : undefined;
}

async function readFloats(
  ffmpeg: string,
  args: string[],
  samples: number,
  opts: ReadOptions,
): Promise<Float32Array | undefined> {
  const work = () =>
    runProcess(ffmpeg, args, {
      timeoutMs: 60_000,
      ...(opts.signal ? { signal: opts.signal } : {}),
      maxStdout: samples * 4 + 4096,
    });
  const r = await (opts.turn ? opts.turn(work) : work());
  if (r.code !== 0) return undefined;
  return new Float32Array(r.stdout.buffer.slice(r.stdout.byteOffset, r.stdout.byteOffset + (r.stdout.length & ~3)));
}

/**
 * Several windows' samples by one process: each window an input of its own (its own seek), padded or cut to its exact
 * length and laid end to end. ffmpeg's start costs far more than an input's (measured: 16 windows 0.8 s of CPU in one
 * process, 4 s in 16), and a tightened edit has a join every few seconds. Undefined where the process fails.
 */
async function windowsAt(ffmpeg: string, ws: SoundWindow[], opts: ReadOptions): Promise<Float32Array[] | undefined> {
  const seeks = ws.map(seekOf);
  const lengths = ws.map((w, k) => seeks[k]!.skip + w.n);
  const args = ['-hide_banner', '-nostdin', '-v', 'error'];
  ws.forEach((w, k) => {
    const { from } = seeks[k]!;
    const seconds = lengths[k]! / SAMPLE_RATE + 0.002;
    args.push(...(from > 0 ? ['-ss', from.toFixed(3)] : []), '-t', seconds.toFixed(3), ...inputArgs(w.spec.source));
  });
  const chains = ws.map(
    (_, k) =>
      `[${k}:a:0]aresample=${SAMPLE_RATE},aformat=sample_fmts=flt:channel_layouts=mono,apad,atrim=end_sample=${lengths[k]}[w${k}]`,
  );
  const graph = `${chains.join(';')};${ws.map((_, k) => `[w${k}]`).join('')}concat=n=${ws.length}:v=0:a=1[out]`;
  args.push('-filter_complex', graph, '-map', '[out]', '-f', 'f32le', 'pipe:1');
  const total = lengths.reduce((a, b) => a + b, 0);
  const all = await readFloats(ffmpeg, args, total, opts);
  if (!all || all.length < total) return undefined;
  let at = 0;
  return ws.map((w, k) => {
    const start = at + seeks[k]!.skip;
    at += lengths[k]!;
    return all.subarray(start, start + w.n);
  });
}

/** Every window's samples, read in batches of up to maxInputs (CUTROOM_FFMPEG_MAX_INPUTS, 16 if not given) a process; a batch that fails is read
 * window by window, so that one unreadable source costs only its own joins. */
export async function soundsAt(
  ffmpeg: string,
  ws: SoundWindow[],
  opts: ReadOptions,
): Promise<(Float32Array | undefined)[]> {
  const size = Math.max(1, opts.maxInputs ?? 16);
  const batches: SoundWindow[][] = [];
  for (let i = 0; i < ws.length; i += size) batches.push(ws.slice(i, i + size));
  const read = await Promise.all(
    batches.map(async (b) => (await windowsAt(ffmpeg, b, opts)) ?? Promise.all(b.map((w) => soundAt(ffmpeg, w, opts)))),
  );
  return read.flat();
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
  opts: ReadOptions = {},
): Promise<RenderPlan> {
  if (!crossfades.some((n) => n > 0)) return plan;
  // Per join: how late b's sound may play, and where both sides' sound is read (all joins' windows read together).
  const joins = plan.cuts.map((b, k) => {
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
    const windows: [SoundWindow, SoundWindow] = [
      { spec: cutInputs[k - 1]!, at: aAt - aLead / SAMPLE_RATE, n: n + aLead },
      { spec: cutInputs[k]!, at: b.inSec + (sb.skip - half - most) / SAMPLE_RATE, n: n + most },
    ];
    return { n, aLead, most, windows };
  });
  const samples = await soundsAt(
    ffmpeg,
    joins.flatMap((j) => j?.windows ?? []),
    opts,
  );
  let taken = 0;
  const read = joins.map((j) => {
    if (!j) return undefined;
    const [x, y] = [samples[taken], samples[taken + 1]];
    taken += 2;
    return x && y ? { n: j.n, x, aLead: j.aLead, y, most: j.most } : undefined;
  });
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
