// A transcript with a person's corrections laid over it (issue 47, item 1), pure: each correction's words, aligned to
// the sound between the words it replaces, take the place of the transcript's words inside its span (by their
// middles), and the whole is numbered again. Sentences keep the transcript's ends and take the correction's
// punctuation; words the correction's alignment did not place, or doubts, stay marked; the corrected ranges are listed.
// Applied on every read, so a transcript made again (recognised anew) still carries them.
import { sentencesOf, type Sentence, type TimedWord } from '../edit/words.js';

/** What a correction holds: the right words placed in time over [from, to] on the asset's clock. */
export interface Correction {
  from: number;
  to: number;
  /** The words as given, placed in time; indices from 0 within the correction. */
  words: { word: string; start_seconds: number; end_seconds: number; confidence?: number }[];
  /** Whether each word ends a sentence (the text's punctuation). */
  ends: boolean[];
  /** Within the correction: words not heard in the sound, and placed words it does not support. */
  unplaced?: number[];
  doubtful?: number[];
}

/** The parts of a transcript a correction changes. */
export interface CorrectableTranscript {
  words: TimedWord[];
  sentences: Sentence[];
  unplaced?: number[];
  doubtful?: number[];
  corrected?: number[][];
}

const middle = (w: { start_seconds: number; end_seconds: number }) => (w.start_seconds + w.end_seconds) / 2;

/**
 * `t` with `corrections` applied (in time order; none may overlap): the words whose middle lies inside a correction's
 * span are replaced by its words. The result's `corrected` lists each correction's [first, last] word range.
 */
export function applyCorrections<T extends CorrectableTranscript>(t: T, corrections: Correction[]): T {
  if (!corrections.length) return t;
  const endsAt = new Set(t.sentences.map((s) => s.last_word));
  const unplacedIn = new Set(t.unplaced ?? []);
  const doubtfulIn = new Set(t.doubtful ?? []);
  const words: TimedWord[] = [];
  const ends: boolean[] = [];
  const unplaced: number[] = [];
  const doubtful: number[] = [];
  const corrected: number[][] = [];
  const keep = (i: number) => {
    const w = t.words[i]!;
    if (unplacedIn.has(i)) unplaced.push(words.length);
    if (doubtfulIn.has(i)) doubtful.push(words.length);
    ends.push(endsAt.has(i));
    words.push({ ...w, index: words.length });
  };
  let i = 0;
  for (const c of [...corrections].sort((a, b) => a.from - b.from)) {
    while (i < t.words.length && middle(t.words[i]!) < c.from) keep(i++);
    let replacedEnded = false;
    while (i < t.words.length && middle(t.words[i]!) <= c.to) replacedEnded = endsAt.has(i++);
    if (!c.words.length) continue;
    const at = words.length;
    c.words.forEach((w, k) => {
      ends.push(c.ends[k] === true || (k === c.words.length - 1 && replacedEnded));
      words.push({ index: at + k, ...w });
    });
    for (const k of c.unplaced ?? []) unplaced.push(at + k);
    for (const k of c.doubtful ?? []) doubtful.push(at + k);
    corrected.push([at, at + c.words.length - 1]);
  }
  while (i < t.words.length) keep(i++);
  const { unplaced: _u, doubtful: _d, ...rest } = t;
  return {
    ...rest,
    words,
    sentences: sentencesOf(words, ends),
    ...(unplaced.length || t.unplaced ? { unplaced } : {}),
    ...(doubtful.length ? { doubtful } : {}),
    corrected,
  } as T;
}
