// The words around a cut's edges placed again in the sound before it is cut (media/word-align.ts): a transcript's
// word times are as loose as the engine that made them (a word run over the pause beside it, a boundary between two
// words a tenth of a second off); held to the few words around an edge, in order, PocketSphinx places them within a
// few tens of milliseconds. Which words, which seconds of sound, and which of the engine's times to trust are decided
// here; without PocketSphinx (or where it places nothing), the transcript's times stand. Where the cut may then go
// close to a neighbour word is the pure rule of analysis/word-joins.ts.
import { unheardRuns, type TimedWord } from '../edit/words.js';
import { phoneNames } from '../analysis/dictionary.js';
import { sibilantJoin } from '../analysis/join-landmarks.js';
import type { Realigned } from '../analysis/word-joins.js';
import { alignWords, type AlignedWord } from '../media/word-align.js';
import type { MediaSource } from '../media/input.js';
import { speechRuns } from '../media/word-edges.js';
import type { MediaRuntime } from './media-runtime.js';
import { pronouncerFor } from './pronouncer.js';

/** Words either side of an edge aligned with it: enough context for the engine, few enough to stay quick. */
const CONTEXT_WORDS = 3;
/** Seconds of sound kept beyond the outer words (their times may be off by this much). */
const WINDOW_MARGIN = 0.3;
/** A cut this short (s, by the transcript) is aligned in one window, its two edges together. */
const ONE_WINDOW = 6;

/** A word the transcript placed is taken as aligned again only within this much (s) of the transcript's times. */
const AGREE = 0.12;

/** A word placed this short (s) was squeezed in; one whose time is less than this share speech ran over a pause. */
const MIN_WORD = 0.02;
const SPOKEN_SHARE = 0.5;

/** The share of a word's time that lies in runs of speech. */
function spokenShare(w: { start: number; end: number }, runs: { from: number; to: number }[]): number {
  let spoken = 0;
  for (const r of runs) spoken += Math.max(0, Math.min(w.end, r.to) - Math.max(w.start, r.from));
  return spoken / Math.max(1e-6, w.end - w.start);
}

/**
 * The words around words first..last of a transcript, aligned again to the sound: every placed word of the windows
 * around the first word's onset and the last word's end, by index. Undefined when it cannot be done here (no
 * PocketSphinx, no scratch folder, no pronunciation); an empty map when the engine placed nothing. `unplaced`: the
 * words the transcript did not place (or doubted), which may be placed anywhere in the windows.
 */
export async function realignEdges(
  rt: MediaRuntime,
  source: MediaSource,
  words: TimedWord[],
  first: number,
  last: number,
  duration: number,
  unplaced: Set<number>,
  signal?: AbortSignal,
): Promise<Realigned | undefined> {
  const engine = rt.speech;
  if (engine?.name !== 'pocketsphinx' || !rt.scratchDir) return undefined;
  const pronouncer = await pronouncerFor(engine);
  const windows: [number, number][] =
    words[last]!.end_seconds - words[first]!.start_seconds <= ONE_WINDOW
      ? [[first - CONTEXT_WORDS, last + CONTEXT_WORDS]]
      : [
          [first - CONTEXT_WORDS, first + CONTEXT_WORDS],
          [last - CONTEXT_WORDS, last + CONTEXT_WORDS],
        ];
  const out: Realigned = new Map();
  for (const [a, b] of windows) {
    const from = Math.max(0, a);
    const to = Math.min(words.length - 1, b);
    const inWindow = words.slice(from, to + 1).map((w) => ({
      index: w.index,
      pronunciations: pronouncer.pronounce(w.word).map(phoneNames),
    }));
    if (inWindow.some((w) => !w.pronunciations.length)) return undefined;
    const windowFrom = Math.max(0, words[from]!.start_seconds - WINDOW_MARGIN);
    const windowTo = Math.min(duration, words[to]!.end_seconds + WINDOW_MARGIN);
    const placed: AlignedWord[] = await alignWords(
      { ffmpeg: rt.ffmpeg, limiter: rt.limiter, engine, scratchDir: rt.scratchDir },
      source,
      windowFrom,
      windowTo,
      inWindow,
      signal,
    );
    // Each within its window (a word the transcript put a second off, its pause swallowed, is placed where it is),
    // and only where the sound is speech: under a music bed, which it hears as vowels, the engine may run a word
    // over a pause.
    const speech = await speechRuns(rt, source, windowFrom, windowTo, signal);
    for (const p of placed) {
      // A word the transcript placed is moved by tens of milliseconds, not more: one placed further off is the
      // engine matching the sequence elsewhere in the window (under a bed it placed a sentence's middle in the word
      // before), and the transcript's time stands.
      const w = words[p.index];
      const placedByTranscript = w && !unplaced.has(p.index);
      if (
        placedByTranscript &&
        (Math.abs(p.start - w.start_seconds) > AGREE || Math.abs(p.end - w.end_seconds) > AGREE)
      )
        continue;
      const phones = inWindow.find((x) => x.index === p.index)?.pronunciations.map((x) => x.split(' ')) ?? [];
      if (p.end - p.start >= MIN_WORD && spokenShare(p, speech) >= SPOKEN_SHARE)
        out.set(p.index, {
          start: p.start,
          end: p.end,
          firstPhones: phones.map((x) => x[0]!),
          lastPhones: phones.map((x) => x.at(-1)!),
        });
    }
  }
  return out;
}

/** Words either side of a run of doubted words aligned with it, held there: the run's footing in the sound. */
const ANCHOR_WORDS = 2;
/** Seconds of sound kept beyond the anchors; beyond a run at the text's start or end, whose own times are guessed. */
const ANCHOR_MARGIN = 0.1;
const OPEN_MARGIN = 2;

/** A run of a known text's words the transcript did not place or doubted, asked of the sound. */
export interface AskedRun {
  /** The run's words within the cut that the engine left out. */
  unsaid: number[];
  /** The run's words it kept, in order. */
  kept: number[];
  /** The heard words either side of the run. */
  before?: number;
  after?: number;
  /** Where it placed the run's kept words that lie in speech (not a pause), each at least MIN_WORD long. */
  heard: Realigned;
}

/**
 * Asks the sound which words of first..last that the transcript of a known text did not place or doubted (`off`) it
 * holds: each run of them aligned again between heard words either side, the engine free to leave any of the run's
 * words out. A text's word the speaker never said is left out ("left [the] [old] station" over "left the station":
 * "old" out, "the" kept); one said is kept, however short (flite's four voices, bench/README.md). One entry a run
 * the engine could place (a run it placed nothing of tells nothing); undefined when it cannot be asked here (no
 * PocketSphinx, no pronunciation).
 */
export async function askTheSound(
  rt: MediaRuntime,
  source: MediaSource,
  words: TimedWord[],
  first: number,
  last: number,
  duration: number,
  off: Set<number>,
  signal?: AbortSignal,
): Promise<AskedRun[] | undefined> {
  const engine = rt.speech;
  if (engine?.name !== 'pocketsphinx' || !rt.scratchDir) return undefined;
  const pronouncer = await pronouncerFor(engine);
  const out: AskedRun[] = [];
  for (const r of unheardRuns(words, first, last, off)) {
    const from = Math.max(0, r.first - ANCHOR_WORDS);
    const to = Math.min(words.length - 1, r.last + ANCHOR_WORDS);
    const inWindow = words.slice(from, to + 1).map((w) => ({
      index: w.index,
      pronunciations: pronouncer.pronounce(w.word).map(phoneNames),
    }));
    if (inWindow.some((w) => !w.pronunciations.length)) return undefined;
    const optional = new Set(inWindow.map((w) => w.index).filter((i) => off.has(i)));
    const windowFrom = Math.max(0, words[from]!.start_seconds - (r.first === 0 ? OPEN_MARGIN : ANCHOR_MARGIN));
    const windowTo = Math.min(
      duration,
      words[to]!.end_seconds + (r.last === words.length - 1 ? OPEN_MARGIN : ANCHOR_MARGIN),
    );
    const deps = { ffmpeg: rt.ffmpeg, limiter: rt.limiter, engine, scratchDir: rt.scratchDir };
    const placed = await alignWords(deps, source, windowFrom, windowTo, inWindow, signal, optional);
    if (!placed.length) continue;
    const kept = new Set(placed.map((p) => p.index));
    const run = Array.from({ length: r.last - r.first + 1 }, (_, k) => r.first + k);
    const speech = await speechRuns(rt, source, windowFrom, windowTo, signal);
    const heard: Realigned = new Map();
    for (const p of placed) {
      if (!run.includes(p.index) || p.end - p.start < MIN_WORD || spokenShare(p, speech) < SPOKEN_SHARE) continue;
      const phones = inWindow.find((x) => x.index === p.index)?.pronunciations.map((x) => x.split(' ')) ?? [];
      heard.set(p.index, {
        start: p.start,
        end: p.end,
        firstPhones: phones.map((x) => x[0]!),
        lastPhones: phones.map((x) => x.at(-1)!),
      });
    }
    out.push({
      unsaid: run.filter((i) => !kept.has(i) && i >= first && i <= last),
      kept: run.filter((i) => kept.has(i)),
      ...(r.first > 0 ? { before: r.first - 1 } : {}),
      ...(r.last + 1 < words.length ? { after: r.last + 1 } : {}),
      heard,
    });
  }
  return out;
}

/**
 * Whether the cut's first word starts with a sibilant out of a neighbour that ends in no obstruent (`head`), and its
 * last word ends with one into a neighbour that starts with none (`tail`), by every pronunciation of the words: there
 * an edge must not fall inside the hiss (media/word-edges.ts).
 */
export async function sibilantEdges(
  rt: MediaRuntime,
  words: TimedWord[],
  first: number,
  last: number,
): Promise<{ head?: true; tail?: true }> {
  const pronouncer = await pronouncerFor(rt.speech);
  const phones = (i: number) => {
    const w = words[i];
    return w ? pronouncer.pronounce(w.word).map((p) => phoneNames(p).split(' ')) : [];
  };
  const starts = (i: number) => phones(i).map((x) => x[0]!);
  const ends = (i: number) => phones(i).map((x) => x.at(-1)!);
  return {
    ...(sibilantJoin(ends(first - 1), starts(first)) ? { head: true } : {}),
    ...(sibilantJoin(starts(last + 1), ends(last)) ? { tail: true } : {}),
  };
}
