// Where a cut by words may go close to a neighbour word it runs into, pure: the phones that mark a join in the sound,
// and the boundary a transcript and a forced alignment of the words around an edge (workflow/aligned-edges.ts) agree
// on. No I/O: the words and their alignment in, seconds out.
import type { TimedWord } from '../edit/words.js';
import { OBSTRUENTS, ONSETS, STOPS, VOWELS } from './dictionary.js';
import { sibilantJoin } from './join-landmarks.js';

/**
 * The first and last words' neighbours and themselves, placed again: by transcript index, with the phones each of
 * the word's pronunciations starts and ends with (where the aligner had them).
 */
export type Realigned = Map<number, { start: number; end: number; firstPhones?: string[]; lastPhones?: string[] }>;

/**
 * Where the sound marks a join: the word after starts with a stop's closure, a sibilant's hiss or an h, after a word
 * that ends in no obstruent ("the|sun", "grandmother|kept"), or the word before ends with a stop released into a
 * vowel ("kept|a"). Elsewhere both alignments may err alike, by up to 60 ms: a vowel into a vowel ("saw|a"), into a
 * glide or a weak fricative ("knew|where", "to|the", "bell|three"), one stop's closure running into the next
 * ("market|to", "and|rang"), a fricative fading into a vowel ("roses|and", "roof|all") (bench/README.md). By the
 * phones the words' pronunciations end (before it) and start (after it) with.
 */
export function landmark(before: string[] | undefined, after: string[] | undefined): boolean {
  const all = (phones: string[] | undefined, set: ReadonlySet<string>) =>
    !!phones?.length && phones.every((p) => set.has(p));
  const none = (phones: string[] | undefined, set: ReadonlySet<string>) =>
    !!phones?.length && !phones.some((p) => set.has(p));
  return (all(after, ONSETS) && none(before, OBSTRUENTS)) || (all(before, STOPS) && all(after, VOWELS));
}

/** Two boundaries between words that run together agree when this close (s); the transcript's heard no pause there. */
const AGREE_BOUNDARY = 0.015;
const RUN_ON_GAP = 0.03;

/**
 * Where the words run together at a cut's edges, the boundary the transcript and the forced alignment (`forced`,
 * from workflow/aligned-edges.ts) agree on, each taken as the midpoint of the word's end and the next one's start:
 * before the first word, the earlier of the two (the later may be in the word), after the last, the later. Undefined
 * at an edge where either is missing, the transcript hears a pause, no phone there marks the join, or they lie
 * further apart than AGREE_BOUNDARY. `hissBefore`, `hissAfter`: the join there is a sibilant's onset
 * (join-landmarks.ts), which the sound itself places closer.
 */
export function agreedBoundaries(
  words: TimedWord[],
  forced: Realigned,
  first: number,
  last: number,
): { before?: number; after?: number; hissBefore?: true; hissAfter?: true } {
  const agreed = (left: number, right: number, pick: (x: number, y: number) => number) => {
    const a = words[left];
    const b = words[right];
    const fa = forced.get(left);
    const fb = forced.get(right);
    if (!a || !b || !fa || !fb || b.start_seconds - a.end_seconds > RUN_ON_GAP) return undefined;
    if (!landmark(fa.lastPhones, fb.firstPhones)) return undefined;
    const transcript = (a.end_seconds + b.start_seconds) / 2;
    const aligned = (fa.end + fb.start) / 2;
    if (Math.abs(transcript - aligned) > AGREE_BOUNDARY) return undefined;
    return { at: pick(transcript, aligned), hiss: sibilantJoin(fa.lastPhones, fb.firstPhones) };
  };
  const before = agreed(first - 1, first, Math.min);
  const after = agreed(last, last + 1, Math.max);
  return {
    ...(before ? { before: before.at } : {}),
    ...(after ? { after: after.at } : {}),
    ...(before?.hiss ? { hissBefore: true } : {}),
    ...(after?.hiss ? { hissAfter: true } : {}),
  };
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
