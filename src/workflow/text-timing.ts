// A known text aligned to the sound: after recognition has matched the text word by word (the guide), the text is
// aligned again by PocketSphinx held to its whole sequence of words (media/word-align.ts), in runs of whole sentences,
// and each word takes the time the sound gives it (analysis/text-timing.ts). Without PocketSphinx, without a
// pronunciation for a word of a run, or where the engine places nothing, the guide's times stand.
import { phoneNames } from '../analysis/dictionary.js';
import { alignChunks, timesBySound, type PlacedTime } from '../analysis/text-timing.js';
import type { TimedWord } from '../edit/words.js';
import type { MediaSource } from '../media/input.js';
import type { SpeechEngine } from '../media/speech.js';
import { alignWords } from '../media/word-align.js';
import { speechRuns } from '../media/word-edges.js';
import type { MediaRuntime } from './media-runtime.js';
import { pronouncerFor } from './pronouncer.js';

/** The most sound (s, by the guide) aligned in one run: the engine's search grows with it. */
const RUN_SECONDS = 60;
/** Sound (s) given past the context sentence's guide end: the guide may be this far off under a bed. */
const SLACK = 3;

/** `guide` (the text's words, timed by recognition) with the times the sound gives them. */
export async function timeTextBySound(
  rt: Pick<MediaRuntime, 'ffmpeg' | 'limiter'>,
  engine: SpeechEngine,
  scratchDir: string,
  source: MediaSource,
  span: { from: number; to: number },
  guide: TimedWord[],
  ends: boolean[],
  heard: Set<number>,
  signal?: AbortSignal,
  progress?: (fraction: number) => void,
  debug?: (msg: string) => void,
): Promise<TimedWord[]> {
  if (engine.name !== 'pocketsphinx' || !guide.length) return guide;
  const pronouncer = await pronouncerFor(engine);
  const deps = { ffmpeg: rt.ffmpeg, limiter: rt.limiter, engine, scratchDir };
  const placed = new Map<number, PlacedTime>();
  const chunks = alignChunks(guide, ends, RUN_SECONDS);
  // Where the last run's kept words ended: the next run's sound starts there.
  let from = span.from;
  for (const [n, c] of chunks.entries()) {
    if (signal?.aborted) break;
    const words = guide.slice(c.first, c.through + 1).map((w) => ({
      index: w.index,
      pronunciations: pronouncer.pronounce(w.word).map(phoneNames),
    }));
    const to = c.through === guide.length - 1 ? span.to : Math.min(span.to, guide[c.through]!.end_seconds + SLACK);
    let got: Awaited<ReturnType<typeof alignWords>> = [];
    if (words.every((w) => w.pronunciations.length))
      try {
        got = await alignWords(deps, source, from, to, words, signal);
      } catch (err) {
        // A run the engine fails on keeps the guide's times; a cancel is the caller's to report.
        if (signal?.aborted) throw err;
        debug?.(`aligning words ${c.first}-${c.last} to the sound failed: ${(err as Error).message}`);
      }
    const kept = got.filter((p) => p.index >= c.first && p.index <= c.last);
    debug?.(
      `aligned words ${c.first}-${c.last} (through ${c.through}) to ${from.toFixed(2)}-${to.toFixed(2)} s: ${kept.length} placed`,
    );
    for (const p of kept) placed.set(p.index, p);
    // A run placed whole hands its end on; otherwise the next starts a little before its guide's start.
    from =
      kept.length === c.last - c.first + 1
        ? kept.at(-1)!.end
        : Math.max(span.from, (guide[c.last + 1]?.start_seconds ?? span.to) - SLACK);
    progress?.((n + 1) / chunks.length);
  }
  if (!placed.size) return guide;
  const speech = await speechRuns(rt, source, span.from, span.to, signal);
  return timesBySound(guide, placed, speech, heard, ends);
}
