// The words around a cut's edges placed again in the sound before it is cut (media/word-align.ts): a transcript's
// word times are as loose as the engine that made them (a word run over the pause beside it, a boundary between two
// words a tenth of a second off); held to the few words around an edge, in order, PocketSphinx places them within a
// few tens of milliseconds. Which words, which seconds of sound, and which of the engine's times to trust are decided
// here; without PocketSphinx (or where it places nothing), the transcript's times stand.
import type { TimedWord } from '../edit/words.js';
import { phoneNames } from '../analysis/dictionary.js';
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
 * The first and last words' neighbours and themselves, placed again: by transcript index, with the phones each of
 * the word's pronunciations starts and ends with (where the aligner had them).
 */
export type Realigned = Map<number, { start: number; end: number; firstPhones?: string[]; lastPhones?: string[] }>;

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

/**
 * Where the sound marks a join: the word after starts with a stop's closure, a sibilant's hiss or an h, after a word
 * that ends in no obstruent ("the|sun", "grandmother|kept"), or the word before ends with a stop released into a
 * vowel ("kept|a"). Elsewhere both alignments may err alike, by up to 60 ms: a vowel into a vowel ("saw|a"), into a
 * glide or a weak fricative ("knew|where", "to|the", "bell|three"), one stop's closure running into the next
 * ("market|to", "and|rang"), a fricative fading into a vowel ("roses|and", "roof|all") (bench/README.md).
 */
const STOPS = new Set(['P', 'B', 'T', 'D', 'K', 'G']);
const ONSETS = new Set([...STOPS, 'S', 'SH', 'Z', 'ZH', 'CH', 'JH', 'HH']);
const OBSTRUENTS = new Set([...ONSETS, 'F', 'TH', 'V', 'DH']);
const VOWELS = new Set(['AA', 'AE', 'AH', 'AO', 'AW', 'AY', 'EH', 'ER', 'EY', 'IH', 'IY', 'OW', 'OY', 'UH', 'UW']);

/** Whether the sound marks a join, by the phones the words' pronunciations end (before it) and start (after it) with. */
function landmark(before: string[] | undefined, after: string[] | undefined): boolean {
  const all = (phones: string[] | undefined, set: Set<string>) => !!phones?.length && phones.every((p) => set.has(p));
  const none = (phones: string[] | undefined, set: Set<string>) => !!phones?.length && !phones.some((p) => set.has(p));
  return (all(after, ONSETS) && none(before, OBSTRUENTS)) || (all(before, STOPS) && all(after, VOWELS));
}

/** Two boundaries between words that run together agree when this close (s); the transcript's heard no pause there. */
const AGREE_BOUNDARY = 0.015;
const RUN_ON_GAP = 0.03;

/**
 * Where the words run together at a cut's edges, the boundary the transcript and the forced alignment (`forced`, from
 * realignEdges) agree on, each taken as the midpoint of the word's end and the next one's start: before the first
 * word, the earlier of the two (the later may be in the word), after the last, the later. Undefined at an edge where
 * either is missing, the transcript hears a pause, no phone there marks the join, or they lie further apart than
 * AGREE_BOUNDARY.
 */
export function agreedBoundaries(
  words: TimedWord[],
  forced: Realigned,
  first: number,
  last: number,
): { before?: number; after?: number } {
  const agreed = (left: number, right: number, pick: (x: number, y: number) => number) => {
    const a = words[left];
    const b = words[right];
    const fa = forced.get(left);
    const fb = forced.get(right);
    if (!a || !b || !fa || !fb || b.start_seconds - a.end_seconds > RUN_ON_GAP) return undefined;
    if (!landmark(fa.lastPhones, fb.firstPhones)) return undefined;
    const transcript = (a.end_seconds + b.start_seconds) / 2;
    const aligned = (fa.end + fb.start) / 2;
    return Math.abs(transcript - aligned) <= AGREE_BOUNDARY ? pick(transcript, aligned) : undefined;
  };
  const before = agreed(first - 1, first, Math.min);
  const after = agreed(last, last + 1, Math.max);
  return { ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) };
}

/** Whether the transcript runs words first..last into a neighbour word at either edge (no pause heard between). */
export function runsOn(words: TimedWord[], first: number, last: number): boolean {
  const touches = (left: number, right: number) => {
    const a = words[left];
    const b = words[right];
    return !!a && !!b && b.start_seconds - a.end_seconds <= RUN_ON_GAP;
  };
  return touches(first - 1, first) || touches(last, last + 1);
}
