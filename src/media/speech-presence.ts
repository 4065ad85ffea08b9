// Whether an asset's sound holds speech (issue 47, item 4): its sound decoded small (8 kHz mono floats) and judged by
// analysis/speech-presence.ts, before any transcription is paid for. Kept per media in memory: a decode and a judgement
// cost well under a second for minutes of sound, against tens of seconds of recognition.
import { PRESENCE_RATE, speechPresence, type SpeechPresence } from '../analysis/speech-presence.js';
import { UserFacingError } from '../errors.js';
import { inputArgs, type MediaSource } from './input.js';
import { mediaIdentity } from './inspect-cache.js';
import type { Limiter } from './probe.js';
import { runProcess } from './process.js';

/** Sound judged at most this long (s) from a source's start: beyond, the rest is taken as judged. */
const MAX_SECONDS = 3 * 3600;
const memory = new Map<string, SpeechPresence>();
const MEMORY_KEEP = 500;

/** Where `source`'s first sound stream holds speech. */
export async function speechIn(
  deps: { ffmpeg: string; limiter: Limiter },
  source: MediaSource,
  signal?: AbortSignal,
): Promise<SpeechPresence> {
  const key = await mediaIdentity(source);
  const hit = memory.get(key);
  if (hit) return hit;
  const args = [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    ...inputArgs(source),
    '-t',
    String(MAX_SECONDS),
    '-map',
    '0:a:0',
    '-ac',
    '1',
    '-ar',
    String(PRESENCE_RATE),
    '-f',
    'f32le',
    'pipe:1',
  ];
  const r = await deps.limiter.run(() =>
    runProcess(deps.ffmpeg, args, {
      timeoutMs: 600_000,
      ...(signal ? { signal } : {}),
      maxStdout: MAX_SECONDS * PRESENCE_RATE * 4,
    }),
  );
  if (r.code !== 0)
    throw new UserFacingError(
      r.cancelled ? 'cancelled' : `ffmpeg could not read the sound (${r.stderr.trim().split('\n').pop() ?? r.code})`,
    );
  const samples = new Float32Array(
    r.stdout.buffer.slice(r.stdout.byteOffset, r.stdout.byteOffset + (r.stdout.length & ~3)),
  );
  const found = speechPresence(samples);
  memory.set(key, found);
  if (memory.size > MEMORY_KEEP) memory.delete(memory.keys().next().value!);
  return found;
}
