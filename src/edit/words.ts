// Words as data, pure functions only: a known text split into words, aligned to what an engine heard (the words the
// sound does not support marked), grouped into sentences, searched by phrase, and turned into in and out points
// that fall in the pauses around words: a cut around words takes the sound a handle beyond them, the picture on
// whole frames around it, muted beyond the sound.

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
    .map((w) => ({
      word: w.replace(/^[("'\u201c\u2018[]+|[)"'\u201d\u2019\],;:]+$/gu, '') || w,
      key: wordKey(w),
      endsSentence: /[.!?]["')\u201d\u2019\]]*$/.test(w),
    }));
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

/** How long a word the engine did not hear takes to say, at an end of the span: per letter, and at least. */
const SECONDS_PER_LETTER = 0.07;
const MIN_WORD_SECONDS = 0.12;

/** A placed word beside words the engine did not hear is doubtful when it is this short (s) or this unsure. */
const SQUEEZED_SECONDS = 0.1;
/** A recognised word under this confidence (the engine's posterior) is unsure: captions name it, search doubts it. */
export const LOW_CONFIDENCE = 0.5;

/**
 * Placed words the sound does not support: a text that holds words never said has its neighbours pulled onto
 * whatever was heard nearby. A placed word is doubtful when it sits beside unplaced words of the text and is squeezed
 * (shorter than SQUEEZED_SECONDS) or unsure (confidence under LOW_CONFIDENCE), or when it starts inside the word
 * placed before it.
 */
function unsupportedWords(words: TimedWord[], placed: boolean[]): number[] {
  const out: number[] = [];
  let prevEnd = -Infinity;
  words.forEach((w, i) => {
    if (!placed[i]) return;
    const besideUnheard = (i > 0 && !placed[i - 1]) || (i + 1 < words.length && !placed[i + 1]);
    const weak =
      w.end_seconds - w.start_seconds < SQUEEZED_SECONDS ||
      (w.confidence !== undefined && w.confidence < LOW_CONFIDENCE);
    if ((besideUnheard && weak) || w.start_seconds < prevEnd - 0.01) out.push(i);
    prevEnd = Math.max(prevEnd, w.end_seconds);
  });
  return out;
}

/**
 * A known text placed in time: every word of it, in order. Words the engine heard take its times; the others
 * (`unplaced`) share the time between their placed neighbours by their length in letters (at an end of the span, the
 * time they take to say beside the placed word they lead to or follow). Placed words the sound
 * does not support are listed as `doubtful` (unsupportedWords).
 */
export function alignText(
  text: TextWord[],
  heard: HeardWordLike[],
  span: { from: number; to: number },
): { words: TimedWord[]; unplaced: number[]; doubtful: number[] } {
  const match = matchWords(
    text.map((w) => w.key),
    heard.map((h) => wordKey(h.word)),
  );
  const words: TimedWord[] = text.map((w, i) => {
    const h = match[i]! >= 0 ? heard[match[i]!]! : undefined;
    return {
      index: i,
      word: w.word,
      start_seconds: h?.start ?? NaN,
      end_seconds: h?.end ?? NaN,
      ...(h?.confidence !== undefined ? { confidence: h.confidence } : {}),
    };
  });
  const unplaced = match.flatMap((j, i) => (j < 0 ? [i] : []));
  for (let i = 0; i < words.length;) {
    if (!Number.isNaN(words[i]!.start_seconds)) {
      i++;
      continue;
    }
    let k = i;
    while (k < words.length && Number.isNaN(words[k]!.start_seconds)) k++;
    const letters = words.slice(i, k).reduce((s, w) => s + w.word.length, 0) || 1;
    // Words missed at an end of the span sit beside the placed word they lead to or follow, as long as they take to
    // say, not across the silence at that end (a correction's span reaches to the words around it).
    const said = Math.max(letters * SECONDS_PER_LETTER, (k - i) * MIN_WORD_SECONDS);
    let from = i > 0 ? words[i - 1]!.end_seconds : span.from;
    let to = k < words.length ? words[k]!.start_seconds : span.to;
    if (i === 0 && k < words.length) from = Math.max(from, to - said);
    else if (k === words.length && i > 0) to = Math.min(to, from + said);
    let t = from;
    for (let x = i; x < k; x++) {
      const d = ((to - from) * words[x]!.word.length) / letters;
      words[x]!.start_seconds = t;
      words[x]!.end_seconds = t + d;
      t += d;
    }
    i = k;
  }
  const rounded = words.map(roundTimes);
  return {
    words: rounded,
    unplaced,
    doubtful: unsupportedWords(
      rounded,
      match.map((j) => j >= 0),
    ),
  };
}

/** Unplaced words in a run this long are taken for words never said (one or two alone: words the engine missed). */
const UNSAID_RUN = 3;

/**
 * The words that cannot be cut by: doubtful ones, and unplaced ones in a run of UNSAID_RUN or more (with the doubtful
 * words beside them). A word or two the engine missed between heard ones is placed between them and can be.
 */
export function unheardWords(words: TimedWord[], unplaced: number[] = [], doubtful: number[] = []): Set<number> {
  const out = new Set(doubtful);
  const off = new Set([...unplaced, ...doubtful]);
  for (let i = 0; i < words.length;) {
    if (!off.has(i)) {
      i++;
      continue;
    }
    let k = i;
    while (k < words.length && off.has(k)) k++;
    if (k - i >= UNSAID_RUN) for (let j = i; j < k; j++) out.add(j);
    i = k;
  }
  return out;
}

/**
 * Whether words first..last can be cut by: their edges must have been heard (see unheardWords), and most of them.
 * Otherwise what is said instead, with the nearest heard words on either side, for a diagnostic.
 */
export function unheardSpan(words: TimedWord[], first: number, last: number, unheard: Set<number>): string | undefined {
  const inside = words.slice(first, last + 1).filter((w) => unheard.has(w.index)).length;
  if (!unheard.has(first) && !unheard.has(last) && inside * 2 <= last - first + 1) return undefined;
  const near = (from: number, step: number) => {
    for (let i = from; i >= 0 && i < words.length; i += step) if (!unheard.has(i)) return words[i]!;
    return undefined;
  };
  const show = (w: TimedWord | undefined) =>
    w ? `"${w.word}" (word ${w.index}, ${w.start_seconds}-${w.end_seconds} s)` : undefined;
  const around = [show(near(first - 1, -1)), show(near(last + 1, 1))].filter(Boolean);
  const said = words
    .slice(first, last + 1)
    .map((w) => w.word)
    .join(' ');
  return `not heard: "${said.length > 80 ? `${said.slice(0, 80)}…` : said}" (words ${first}-${last}: ${inside} of ${last - first + 1} not placed in the sound, or doubtful)${around.length ? `; the nearest heard words are ${around.join(' and ')}` : ''}`;
}

/** A run of words cut by that recognition did not hear: their indices and the time between their heard neighbours. */
export interface UnheardRun {
  first: number;
  last: number;
  from: number;
  to: number;
}

/** The runs of `unheard` words that words first..last touch, each with the span between its heard neighbours. */
export function unheardRuns(words: TimedWord[], first: number, last: number, unheard: Set<number>): UnheardRun[] {
  const out: UnheardRun[] = [];
  for (let i = first; i <= last; i++) {
    if (!unheard.has(i)) continue;
    let a = i;
    let b = i;
    while (a > 0 && unheard.has(a - 1)) a--;
    while (b + 1 < words.length && unheard.has(b + 1)) b++;
    out.push({
      first: a,
      last: b,
      from: a > 0 ? words[a - 1]!.end_seconds : words[a]!.start_seconds,
      to: b + 1 < words.length ? words[b + 1]!.start_seconds : words[b]!.end_seconds,
    });
    i = b;
  }
  return out;
}

/** Words unheard by recognition are taken as said where the sound between their heard neighbours holds this much
 * speech a word at least (s): a sentence never said sits in a pause, or in no time at all. */
export const SAID_SPEECH_PER_WORD = 0.12;

/**
 * Whether `words` unheard words were said in a span of `span` s between heard ones that holds `spoken` s of speech:
 * SAID_SPEECH_PER_WORD a word; or, where the span is short (the words' neighbours, timed by a forced alignment of
 * the sound, close in on them), SAID_SPEECH_SHARE of it speech and SAID_SPAN_PER_WORD a word long. Short words
 * ("the", "a": 20-70 ms in flite's voices) fall under the first, and the measure of speech misses their soft sounds:
 * rms's doubtful "the" between "rang" and "bell" (0.107 s) held 0.05 s of speech. A text's words never said sit in a
 * pause (little of it speech) or in no time at all.
 */
export function saidBetween(spoken: number, span: number, words: number): boolean {
  if (spoken >= SAID_SPEECH_PER_WORD * words) return true;
  return span >= SAID_SPAN_PER_WORD * words && spoken >= SAID_SPEECH_SHARE * span;
}
/** A word takes at least this long (s) where it was said. */
const SAID_SPAN_PER_WORD = 0.05;
/** The share of a short span between heard words that must be speech for the words there to have been said. */
const SAID_SPEECH_SHARE = 0.4;

const ms = (s: number) => Math.round(s * 1000) / 1000;
const roundTimes = (w: TimedWord): TimedWord => ({
  ...w,
  start_seconds: ms(w.start_seconds),
  end_seconds: ms(w.end_seconds),
});

/** Heard words as a transcript's words, in time order. */
export function heardWords(heard: HeardWordLike[]): TimedWord[] {
  return [...heard]
    .sort((a, b) => a.start - b.start)
    .map((h, index) =>
      roundTimes({
        index,
        word: h.word,
        start_seconds: h.start,
        end_seconds: h.end,
        ...(h.confidence !== undefined ? { confidence: Math.round(h.confidence * 1000) / 1000 } : {}),
      }),
    );
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
    out.push({
      index: out.length,
      text: part.map((p) => p.word).join(' '),
      start_seconds: words[first]!.start_seconds,
      end_seconds: w.end_seconds,
      first_word: first,
      last_word: i,
    });
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
  for (let i = 0; i + keys.length <= have.length; i++)
    if (keys.every((k, j) => have[i + j] === k)) hits.push([i, i + keys.length - 1]);
  return hits;
}

/** The pause kept before a cut's first word and after its last by default (s): a clip's dead air, at most. */
export const DEFAULT_WORD_HANDLE = 0.15;

/** A pause beside a word, as the sound has it (media/word-edges.ts): its extent and its quietest moment. */
export interface PauseSpan {
  from: number;
  to: number;
  quietest: number;
}

/** A level window on the source clock (seconds, to the millisecond). */
export interface LevelSpan {
  level: number;
  from: number;
  to: number;
}

/** Cut by words: the picture on whole source frames, the sound heard only around the words. */
export interface WordCut {
  /** The cut's in and out points: whole frames around the sound. */
  start: number;
  end: number;
  /** Where the sound is heard: the handle before the first word's onset, after the last word's end. */
  soundIn: number;
  soundOut: number;
  /** Level 0 outside the sound, short steps up and down at its edges (no click), 1 over it. */
  levels: LevelSpan[];
  /** Whether each edge fell at the quietest point of a pause shorter than the handle. */
  shortBefore: boolean;
  shortAfter: boolean;
  /** Whether each edge is where the words run into their neighbour (no pause): the neighbour's part faded out. */
  runOnBefore?: boolean;
  runOnAfter?: boolean;
}

export interface FrameGrid {
  /** Where a written in point plays from (edit/cut-clock.ts), for a source with a constant frame rate. */
  clock: (inSec: number) => number;
  /** Seconds a source frame lasts, and its first frame's time. */
  frameSec: number;
  firstSec: number;
  /** Extra picture kept after the sound, s: the output timeline rounds each cut to its own frames. */
  tailMarginSec: number;
}

const floorMs = (s: number) => Math.floor(s * 1000 + 1e-6) / 1000;
const ceilMs = (s: number) => Math.ceil(s * 1000 - 1e-6) / 1000;

/**
 * Steps of level from 0 to 1 over [from, to) (1 ms each at least; four, or one each 2 ms over a longer fade, at most
 * ten): an edge that does not click.
 */
function ramp(from: number, to: number, up: boolean): LevelSpan[] {
  const span = Math.round((to - from) * 1000);
  const n = Math.min(span, Math.max(4, Math.min(10, Math.round(span / 2))));
  const out: LevelSpan[] = [];
  for (let i = 0; i < n; i++) {
    const a = ms(from + Math.floor((span * i) / n) / 1000);
    const b = ms(from + Math.floor((span * (i + 1)) / n) / 1000);
    const level = Math.round(((up ? i + 1 : n - i) / (n + 1)) * 1000) / 1000;
    if (b > a) out.push({ level, from: a, to: b });
  }
  return out;
}

/** Where words run together, the neighbour's part beside the cut is faded out over this long (s) by default. */
export const RUN_ON_FADE = 0.015;

/**
 * A clip by words, from the edges the sound has (the first word's onset, the last word's end, and the pauses beside
 * them): the sound is heard from a handle before the onset to a handle after the end, or from the quietest point of
 * a pause shorter than the handle; where the words run into their neighbour with no pause (`runOnBefore`,
 * `runOnAfter`), from the edge itself, the neighbour's part beside it faded out over `runOnFadeSec`. The picture takes
 * the whole source frames around that (its in point a frame start at or before the sound's, so that no frame grid
 * moves the sound into the word), and what it holds beyond the sound is muted with level windows, faded over
 * `fadeSec` inside the handle.
 */
export function cutAroundEdges(
  e: {
    onset: number;
    before: PauseSpan;
    end: number;
    after: PauseSpan;
    runOnBefore?: boolean;
    runOnAfter?: boolean;
    /** The run-on fade at this edge (s), where it is not `runOnFadeSec`. */
    runOnFadeBefore?: number;
    runOnFadeAfter?: number;
  },
  opts: { handle: number; fadeSec: number; duration: number; grid?: FrameGrid; runOnFadeSec?: number },
): WordCut {
  const onset = floorMs(Math.max(0, e.onset));
  const end = ceilMs(Math.min(opts.duration, e.end));
  const runOnFade = opts.runOnFadeSec ?? RUN_ON_FADE;
  const shortBefore = !!e.runOnBefore || onset - e.before.from < opts.handle - 1e-9;
  const shortAfter = !!e.runOnAfter || e.after.to - end < opts.handle - 1e-9;
  // A handle is measured from the words' own times, not from their millisecond rounding (rounding twice could add a
  // millisecond beyond the handle).
  const headFrom = () => {
    if (e.runOnBefore) return onset - (e.runOnFadeBefore ?? runOnFade);
    return shortBefore ? Math.min(onset, e.before.quietest) : e.onset - opts.handle;
  };
  const tailTo = () => {
    if (e.runOnAfter) return end + (e.runOnFadeAfter ?? runOnFade);
    return shortAfter ? Math.max(end, e.after.quietest) : e.end + opts.handle;
  };
  const soundIn = Math.min(onset, floorMs(Math.max(0, headFrom())));
  const soundOut = Math.max(end, ceilMs(Math.min(opts.duration, tailTo())));
  let start = soundIn;
  let stop = soundOut;
  const g = opts.grid;
  if (g) {
    // The frame start at or before the sound's in point, written to the millisecond, that the clock keeps there.
    let k = Math.floor((soundIn - g.firstSec) / g.frameSec + 1e-6);
    while (k > 0 && g.clock(ms(g.firstSec + k * g.frameSec)) > soundIn + 1e-6) k--;
    start = Math.max(0, ms(g.firstSec + Math.max(0, k) * g.frameSec));
    if (g.clock(start) > soundIn + 1e-6) start = soundIn;
    const kOut = Math.ceil((soundOut + g.tailMarginSec - g.firstSec) / g.frameSec - 1e-6);
    stop = Math.min(opts.duration, Math.max(soundOut, ms(g.firstSec + kOut * g.frameSec)));
  }
  const levels: LevelSpan[] = [];
  // (Where the words run together the whole stretch beyond the edge is the fade: the neighbour's part, going out.)
  const fadeIn = e.runOnBefore ? onset - soundIn : Math.min(opts.fadeSec, onset - soundIn);
  const fadeOut = e.runOnAfter ? soundOut - end : Math.min(opts.fadeSec, soundOut - end);
  if (soundIn > start) levels.push({ level: 0, from: start, to: soundIn });
  const upTo = ms(soundIn + Math.floor(fadeIn * 1000) / 1000);
  levels.push(...ramp(soundIn, upTo, true));
  const downFrom = ms(soundOut - Math.floor(fadeOut * 1000) / 1000);
  levels.push({ level: 1, from: upTo, to: downFrom });
  levels.push(...ramp(downFrom, soundOut, false));
  if (stop > soundOut) levels.push({ level: 0, from: soundOut, to: stop });
  return {
    start,
    end: stop,
    soundIn,
    soundOut,
    levels: levels.filter((l) => l.to > l.from),
    shortBefore,
    shortAfter,
    ...(e.runOnBefore ? { runOnBefore: true } : {}),
    ...(e.runOnAfter ? { runOnAfter: true } : {}),
  };
}

/** A clip's edges as the transcript has them (no sound read): the pauses are the gaps to the neighbouring words. */
export function transcriptEdges(
  words: TimedWord[],
  first: number,
  last: number,
  duration: number,
): { onset: number; before: PauseSpan; end: number; after: PauseSpan } {
  const a = words[first]!;
  const b = words[last]!;
  const prev = words[first - 1];
  const next = words[last + 1];
  const from = prev ? Math.min(prev.end_seconds, a.start_seconds) : 0;
  const to = next ? Math.max(next.start_seconds, b.end_seconds) : duration;
  return {
    onset: a.start_seconds,
    before: { from, to: a.start_seconds, quietest: prev ? (from + a.start_seconds) / 2 : 0 },
    end: b.end_seconds,
    after: { from: b.end_seconds, to, quietest: next ? (to + b.end_seconds) / 2 : duration },
  };
}

/**
 * In and out points around words first..last by the transcript's times alone: a handle into each pause, or its middle.
 */
export function clipAroundWords(
  words: TimedWord[],
  first: number,
  last: number,
  duration: number,
  handle = DEFAULT_WORD_HANDLE,
): { start: number; end: number } {
  const c = cutAroundEdges(transcriptEdges(words, first, last, duration), { handle, fadeSec: 0, duration });
  return { start: c.soundIn, end: c.soundOut };
}
