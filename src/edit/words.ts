// Words as data, pure functions only: a known text split into words, aligned to what an engine heard, grouped into
// sentences, searched by phrase, and turned into in and out points that fall in the pauses around words.

/** A word of a transcript, on the asset's clock. */
export interface TimedWord {
  index: number;
  word: string;
  start_seconds: number;
  end_seconds: number;
  confidence?: number;
}

export interface Sentence {
  index: number;
  text: string;
  start_seconds: number;
  end_seconds: number;
  first_word: number;
  last_word: number;
}

/** A word of a known text: as written, its key for matching, and whether a sentence ends with it. */
export interface TextWord {
  word: string;
  key: string;
  endsSentence: boolean;
}

/** The form words are matched in: lower case, no surrounding punctuation, inner apostrophes kept ("don't"). */
export function wordKey(word: string): string {
  return word
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/^[^\p{L}\p{N}']+|[^\p{L}\p{N}']+$/gu, '')
    .replace(/^'+|'+$/g, '');
}

/** A text split into its words (at spaces, dashes and slashes); a word ending in . ! ? ends a sentence. */
export function textWords(text: string): TextWord[] {
  return text
    .split(/[\s\u2013\u2014/]+|(?<=\p{L})-(?=\p{L})/u)
    .map((w) => w.trim())
    .filter((w) => wordKey(w))
    .map((w) => ({ word: w.replace(/^[("'\u201c\u2018[]+|[)"'\u201d\u2019\],;:]+$/gu, '') || w, key: wordKey(w), endsSentence: /[.!?]["')\u201d\u2019\]]*$/.test(w) }));
}

/**
 * Which heard word each text word is (or -1): the longest common subsequence of their keys, so that a word the
 * engine missed or misheard does not shift the rest.
 */
export function matchWords(text: string[], heard: string[]): number[] {
  const n = text.length;
  const m = heard.length;
  // Rows of the LCS table, kept whole for the walk back (texts of a few thousand words: a few MB).
  const table = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = table[i]!;
    const next = table[i + 1]!;
    for (let j = m - 1; j >= 0; j--) row[j] = text[i] === heard[j] ? next[j + 1]! + 1 : Math.max(next[j]!, row[j + 1]!);
  }
  const match = new Array<number>(n).fill(-1);
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (text[i] === heard[j]) match[i++] = j++;
    else if (table[i + 1]![j]! >= table[i]![j + 1]!) i++;
    else j++;
  }
  return match;
}

export interface HeardWordLike {
  word: string;
  start: number;
  end: number;
  confidence?: number;
}

/**
 * A known text placed in time: every word of it, in order. Words the engine heard take its times; the others
 * (`unplaced`) share the time between their placed neighbours by their length in letters.
 */
export function alignText(text: TextWord[], heard: HeardWordLike[], span: { from: number; to: number }): { words: TimedWord[]; unplaced: number[] } {
  const match = matchWords(text.map((w) => w.key), heard.map((h) => wordKey(h.word)));
  const words: TimedWord[] = text.map((w, i) => {
    const h = match[i]! >= 0 ? heard[match[i]!]! : undefined;
    return { index: i, word: w.word, start_seconds: h?.start ?? NaN, end_seconds: h?.end ?? NaN, ...(h?.confidence !== undefined ? { confidence: h.confidence } : {}) };
  });
  const unplaced = match.flatMap((j, i) => (j < 0 ? [i] : []));
  for (let i = 0; i < words.length; ) {
    if (!Number.isNaN(words[i]!.start_seconds)) {
      i++;
      continue;
    }
    let k = i;
    while (k < words.length && Number.isNaN(words[k]!.start_seconds)) k++;
    const from = i > 0 ? words[i - 1]!.end_seconds : span.from;
    const to = k < words.length ? words[k]!.start_seconds : span.to;
    const letters = words.slice(i, k).reduce((s, w) => s + w.word.length, 0) || 1;
    let t = from;
    for (let x = i; x < k; x++) {
      const d = ((to - from) * words[x]!.word.length) / letters;
      words[x]!.start_seconds = t;
      words[x]!.end_seconds = t + d;
      t += d;
    }
    i = k;
  }
  return { words: words.map(roundTimes), unplaced };
}

const ms = (s: number) => Math.round(s * 1000) / 1000;
const roundTimes = (w: TimedWord): TimedWord => ({ ...w, start_seconds: ms(w.start_seconds), end_seconds: ms(w.end_seconds) });

/** Heard words as a transcript's words, in time order. */
export function heardWords(heard: HeardWordLike[]): TimedWord[] {
  return [...heard]
    .sort((a, b) => a.start - b.start)
    .map((h, index) => roundTimes({ index, word: h.word, start_seconds: h.start, end_seconds: h.end, ...(h.confidence !== undefined ? { confidence: Math.round(h.confidence * 1000) / 1000 } : {}) }));
}

/** A pause this long between words ends a sentence where no punctuation says so (free recognition has none). */
export const SENTENCE_PAUSE_SECONDS = 0.6;

/** Words grouped into sentences: at the text's sentence ends when known, else at pauses. */
export function sentencesOf(words: TimedWord[], ends?: boolean[]): Sentence[] {
  const out: Sentence[] = [];
  let first = 0;
  words.forEach((w, i) => {
    const next = words[i + 1];
    const end = !next || (ends ? ends[i] === true : next.start_seconds - w.end_seconds >= SENTENCE_PAUSE_SECONDS);
    if (!end) return;
    const part = words.slice(first, i + 1);
    out.push({ index: out.length, text: part.map((p) => p.word).join(' '), start_seconds: words[first]!.start_seconds, end_seconds: w.end_seconds, first_word: first, last_word: i });
    first = i + 1;
  });
  return out;
}

/** Every place a phrase is said (case and punctuation ignored), as [first, last] word indices, in time order. */
export function findPhrase(words: TimedWord[], phrase: string): [number, number][] {
  const keys = textWords(phrase).map((w) => w.key);
  if (!keys.length) return [];
  const have = words.map((w) => wordKey(w.word));
  const hits: [number, number][] = [];
  for (let i = 0; i + keys.length <= have.length; i++) if (keys.every((k, j) => have[i + j] === k)) hits.push([i, i + keys.length - 1]);
  return hits;
}

/** How far before a first word and after a last word a clip reaches, at most (and never past half the pause). */
export const WORD_HANDLE_SECONDS = 0.15;

/**
 * In and out points around words first..last: in the pauses around them, never inside a word: a handle of up to
 * WORD_HANDLE_SECONDS, at most half the pause to the neighbouring word, within [0, duration].
 */
export function clipAroundWords(words: TimedWord[], first: number, last: number, durationSec: number): { start: number; end: number } {
  const a = words[first]!;
  const b = words[last]!;
  const prev = words[first - 1];
  const next = words[last + 1];
  const before = prev ? Math.max(0, (a.start_seconds - prev.end_seconds) / 2) : a.start_seconds;
  const after = next ? Math.max(0, (next.start_seconds - b.end_seconds) / 2) : Math.max(0, durationSec - b.end_seconds);
  return { start: ms(Math.max(0, a.start_seconds - Math.min(WORD_HANDLE_SECONDS, before))), end: ms(Math.min(durationSec, b.end_seconds + Math.min(WORD_HANDLE_SECONDS, after))) };
}
