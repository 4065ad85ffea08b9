// The sound decoded for hearing fillers (analysis/filler-sound.ts measures it): a span of a source's first audio
// stream as 16 kHz mono, read in pieces of at most PIECE_S seconds that overlap by OVERLAP_S (an island cut by a
// piece's edge is whole in the next), each piece measured against its own floors. Islands are on the source's clock.
import { soundIslands, type SoundIsland } from '../analysis/filler-sound.js';
import { monoSoundArgs, type MediaSource } from './input.js';
import type { Limiter } from './probe.js';
import { runProcess } from './process.js';

const RATE = 16_000;
const PIECE_S = 60;
const OVERLAP_S = 4;

export interface FillerSoundDeps {
  ffmpeg: string;
  limiter: Limiter;
}

async function decode(
  deps: FillerSoundDeps,
  source: MediaSource,
  from: number,
  seconds: number,
  signal?: AbortSignal,
): Promise<Float32Array> {
  const r = await deps.limiter.run(() =>
    runProcess(deps.ffmpeg, monoSoundArgs(source, { from, seconds }, RATE), {
      timeoutMs: 120_000,
      ...(signal ? { signal } : {}),
      maxStdout: Math.ceil(seconds + 1) * RATE * 2,
    }),
  );
  if (r.code !== 0)
    throw new Error(
      r.cancelled
        ? 'cancelled'
        : `ffmpeg could not decode the sound to hear fillers in (${r.stderr.trim().split('\n').pop() ?? r.code})`,
    );
  const b = r.stdout;
  const pcm = new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1)));
  return Float32Array.from(pcm, (v) => v / 32768);
}

/** The islands of sound between pauses in [from, to] of a source (its clock), each measured (filler or not). */
export async function hearIslands(
  deps: FillerSoundDeps,
  source: MediaSource,
  from: number,
  to: number,
  signal?: AbortSignal,
): Promise<SoundIsland[]> {
  const out: SoundIsland[] = [];
  for (let at = Math.max(0, from); at < to; at += PIECE_S - OVERLAP_S) {
    const seconds = Math.min(PIECE_S, to - at);
    const islands = soundIslands(await decode(deps, source, at, seconds, signal), RATE);
    for (const i of islands) {
      const moved = { ...i, from: at + i.from, to: at + i.to };
      // Heard already in the piece before (the overlap): kept once.
      if (!out.some((o) => o.to > moved.from && o.from < moved.to)) out.push(moved);
    }
    if (at + seconds >= to) break;
  }
  return out;
}
