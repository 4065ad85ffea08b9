// Search by sound as well as spelling, pure: a query's words and a transcript's words become phones (the dictionary,
// else letter-to-sound), and the query's phones are matched against every run of 1..k consecutive heard words with a
// weighted edit distance in which similar phones cost less, so that a word the engine misheard, split or merged
// ("the light towns" for "the lighthouse", "keep her" for "keeper") is still found. Exact spellings always win;
// runs that sound almost like the query are near misses, and words recognition was unsure of are flagged doubtful
// by their confidence.
import { findPhrase, textWords, wordKey, type TimedWord } from '../edit/words.js';
import { FRICATIVES, PHONES, STOPS, VOWELS, type Cmudict } from './dictionary.js';
import { lettersToPhones, numberWords } from './letter-to-sound.js';

/** Every pronunciation of a word: the dictionary's variants, else one by letter-to-sound. */
export interface Pronouncer {
  pronounce(word: string): Uint8Array[];
}

/**
 * Pronunciations from the dictionary (when there is one: without it, letter-to-sound alone), letter-to-sound for
 * the words it lacks (remembered: a transcript says its words many times), and whole numbers in digits as words.
 */
export function createPronouncer(dict?: Cmudict): Pronouncer {
  const guessed = new Map<string, Uint8Array[]>();
  const pronounce = (word: string): Uint8Array[] => {
    const key = wordKey(word);
    if (!key) return [];
    const known = dict?.lookup(key);
    if (known?.length) return known;
    let guess = guessed.get(key);
    if (!guess) {
      guess = [
        /^\d{1,6}$/.test(key) ? concat(numberWords(Number(key)).map((w) => pronounce(w)[0]!)) : lettersToPhones(key),
      ];
      if (guessed.size >= 50_000) guessed.clear();
      guessed.set(key, guess);
    }
    return guess;
  };
  return { pronounce };
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};

// ---- How alike two phones sound -------------------------------------------------------------------------------

const id = (name: string) => PHONES.indexOf(name as (typeof PHONES)[number]);
const ids = (names: ReadonlySet<string>) => new Set([...names].map(id));
const VOWEL_IDS = ids(VOWELS);
const STOP_IDS = ids(STOPS);
const FRICATIVE_IDS = ids(FRICATIVES);

/**
 * Pairs that sound alike, and what mistaking one for the other costs. Otherwise: two vowels 0.5 (0.35 with AH),
 * two stops or two fricatives 0.7, anything else 1.
 */
const CLOSE: [number, string][] = [
  // vowels: neighbours in the mouth, and a diphthong and its ends; AH (the reduced vowel) is near all of them
  [0.2, 'AA AO'],
  [0.3, 'IY IH, IH EH, EH AE, EH EY, EY IY, UH UW, OW AO, OW UW, AE AA, AH ER'],
  [0.4, 'AY AA, AY AE, AY IY, AY IH, AW AA, AW AO, AW OW, AW UW, OY AO, OY OW, OY IY, EY AE'],
  // consonants: voiced and unvoiced pairs, then neighbours in place or manner
  [0.25, 'P B, T D, K G, F V, TH DH, S Z, SH ZH, CH JH'],
  [0.3, 'M N, N NG'],
  [0.35, 'TH F, CH SH, JH ZH, R ER'],
  [0.4, 'B V, DH V, TH S, DH D, S SH, Z ZH, M NG, L R, Y IY, W UW'],
  [0.45, 'DH Z, TH T, CH T, JH D'],
  [0.5, 'M B, N D, NG G, W R, W L, L ER, L D, P F'],
];

/** What a phone costs when it is heard but not in the query, or in the query but not heard. */
const GAP: [number, string][] = [
  [0.4, 'HH'],
  [0.5, 'AH'],
  [0.6, 'Y T D'],
  [0.8, 'R L N W IH'],
];

const N = PHONES.length;
const SUBSTITUTE = new Float64Array(N * N);
const GAP_COST = new Float64Array(N).fill(1);
/**
 * Mistaking or missing the query's first phone costs this many times more: a word's onset is what a recogniser
 * most often gets right, and what most sets apart the dictionary's many near-homophones (measured: fewer false
 * hits at the same recall).
 */
const ONSET_WEIGHT = 1.5;
/** A phone heard again across a word boundary ("light towns": one T said, two written) costs only this. */
const REPEAT_COST = 0.15;

/** What hearing phone b for phone a costs by their classes, before the close pairs below are set. */
function classSubstituteCost(a: number, b: number): number {
  if (a === b) return 0;
  const vowels = Number(VOWEL_IDS.has(a)) + Number(VOWEL_IDS.has(b));
  if (vowels === 2 && (a === id('AH') || b === id('AH'))) return 0.35;
  if (vowels === 2) return 0.5;
  if (vowels === 1) return 1;
  const sameManner = (STOP_IDS.has(a) && STOP_IDS.has(b)) || (FRICATIVE_IDS.has(a) && FRICATIVE_IDS.has(b));
  if (sameManner) return 0.7;
  return 1;
}

for (let a = 0; a < N; a++) {
  for (let b = 0; b < N; b++) SUBSTITUTE[a * N + b] = classSubstituteCost(a, b);
}
for (const [cost, pairs] of CLOSE) {
  for (const pair of pairs.split(', ')) {
    const [a, b] = pair.split(' ').map(id) as [number, number];
    SUBSTITUTE[a * N + b] = SUBSTITUTE[b * N + a] = cost;
  }
}
for (const [cost, names] of GAP) for (const name of names.split(' ')) GAP_COST[id(name)] = cost;

/** What a phone costs heard but not in the query, or in the query but not heard. */
export const gapCost = (p: number): number => GAP_COST[p]!;

/** What mistaking phone a for phone b costs, 0 (the same) to 1 (nothing alike). */
export const phoneCost = (a: number, b: number): number => SUBSTITUTE[a * N + b]!;

/**
 * The weighted edit distance from phones `a` (a query) to phones `b` (what was heard); `onset` weighs the cost of
 * mistaking or missing a's first phone (1: the plain distance, symmetric).
 */
export function phoneDistance(a: ArrayLike<number>, b: ArrayLike<number>, onset = 1): number {
  let col = firstColumn(a, onset);
  for (let j = 0; j < b.length; j++) col = step(col, new Float64Array(col.length), a, b[j]!, GAP_COST[b[j]!]!, onset);
  return col[a.length]!;
}

/**
 * The weighted distance of phones `a` (one word of a query) from the closest stretch of `b` (a run heard): what
 * was heard before and after that stretch costs nothing. A word of a longer query that is nowhere in a run is not
 * in it, however well the rest matches ("northern lights" is not "northern coast").
 */
export function distanceWithin(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let col = firstColumn(a, 1);
  let best = col[a.length]!;
  for (let j = 0; j < b.length; j++) {
    const p = b[j]!;
    const out = new Float64Array(col.length); // out[0] = 0: the stretch may start at any heard phone
    for (let q = 1; q < col.length; q++) {
      const qp = a[q - 1]!;
      out[q] = Math.min(col[q - 1]! + SUBSTITUTE[qp * N + p]!, col[q]! + GAP_COST[p]!, out[q - 1]! + GAP_COST[qp]!);
    }
    col = out;
    best = Math.min(best, col[a.length]!);
  }
  return best;
}

/** The alignment before anything was heard: the query's first q phones all missed. */
function firstColumn(query: ArrayLike<number>, onset: number): Float64Array {
  const col = new Float64Array(query.length + 1);
  for (let q = 1; q <= query.length; q++) col[q] = col[q - 1]! + (q === 1 ? onset : 1) * GAP_COST[query[q - 1]!]!;
  return col;
}

/** One column of the alignment, written to `out`: the query against what was heard so far and one more phone, p. */
function step(
  col: Float64Array,
  out: Float64Array,
  query: ArrayLike<number>,
  p: number,
  insert: number,
  onset: number,
): Float64Array {
  out[0] = col[0]! + insert;
  for (let q = 1; q < col.length; q++) {
    const qp = query[q - 1]!;
    const w = q === 1 ? onset : 1;
    out[q] = Math.min(col[q - 1]! + w * SUBSTITUTE[qp * N + p]!, col[q]! + insert, out[q - 1]! + w * GAP_COST[qp]!);
  }
  return out;
}

// ---- Search ---------------------------------------------------------------------------------------------------

/** A place the query was found: the `index` of its first and last words, as search_transcripts gives them. */
export interface SoundHit {
  words: [number, number];
  start_seconds: number;
  end_seconds: number;
  /** The words heard there, as the transcript has them. */
  text: string;
  match: 'exact' | 'sounds_like';
  /** 1 for an exact spelling; else how alike the sounds are, 0-1 (1 - weighted phone distance / query phones). */
  score: number;
  /** The `index` of each word there whose confidence is low (`doubtfulWords`). */
  doubtful?: number[];
}

export interface SoundSearch {
  hits: SoundHit[];
  /** Runs that sound almost like the query, scored just under what a hit needs: worth a listen, not hits. */
  near_misses: SoundHit[];
}

export interface SoundSearchOptions {
  /** The score a run needs to be a `sounds_like` hit, for a query of this many phones (default `acceptScore`). */
  accept?: (queryPhones: number) => number;
  /** How far under that a run is still a near miss (default NEAR_MISS_BAND). */
  nearBand?: number;
  /** How many more heard words than the query has a run may span (a word heard split in parts). */
  extraWords?: number;
  /** Confidence under which a word is doubtful. */
  doubtfulBelow?: number;
}

/*
 * What a sounds_like hit needs, chosen by measurement (test/unit/analysis-search.test.ts has the corpus and the
 * figures): a score of 0.72, and more for a short query, whose one wrong phone makes another word ("ship", "shop"):
 * a weighted distance of at most 0.5 per phone less 1.3, so 0.93 for 3 phones, 0.83 for 4, 0.76 for 5.
 */
export const SOUNDS_LIKE_ACCEPT = 0.72;
/** (Phones counted as the matcher compares them: ER as two, AH R.) */
export const acceptScore = (queryPhones: number): number => Math.max(SOUNDS_LIKE_ACCEPT, 0.5 + 1.3 / queryPhones);
/** A near miss scores at most this much under what a hit needs. */
export const NEAR_MISS_BAND = 0.1;
/** A query shorter than this in phones is matched by spelling only: a short sound is like too many others. */
export const MIN_QUERY_PHONES = 3;
/** Query pronunciations tried, at most (the product of its words' variants). */
const MAX_QUERY_VARIANTS = 16;

/** Confidence (the engine's posterior, 0-1) under which a heard word is doubtful. */
export const DOUBTFUL_CONFIDENCE = 0.5;

/**
 * The `index` of each word whose engine gave a confidence under `below` (words without one are not judged), for
 * results to say which words may have been misheard. Measured on PocketSphinx's output (analysis-search.test.ts):
 * under 0.5 flags 63% of misheard words and 28% of words heard right; confidence alone does not tell them apart.
 */
export function doubtfulWords(words: TimedWord[], below = DOUBTFUL_CONFIDENCE): number[] {
  return words.filter((w) => w.confidence !== undefined && w.confidence < below).map((w) => w.index);
}

const ER = id('ER');
const AH_R = Uint8Array.of(id('AH'), id('R'));

/**
 * A word's pronunciations as the matcher compares them: ER as AH R (an r-coloured vowel is a vowel and an r, so
 * "harbour" HH AA R B ER meets "har bore" HH AA R B AO R vowel for vowel), remembered for the search's length.
 */
function soundsOf(pronouncer: Pronouncer): (word: string) => Uint8Array[] {
  const memo = new Map<string, Uint8Array[]>();
  return (word) => {
    let sounds = memo.get(word);
    if (!sounds) {
      sounds = pronouncer
        .pronounce(word)
        .map((v) => (v.includes(ER) ? concat(Array.from(v, (p) => (p === ER ? AH_R : Uint8Array.of(p)))) : v));
      memo.set(word, sounds);
    }
    return sounds;
  };
}

/** Every pronunciation of a sequence of words, joined (the product of their variants, the first `max` of it). */
function sequencePronunciations(words: string[], sounds: (word: string) => Uint8Array[], max: number): Uint8Array[] {
  let out: Uint8Array[] = [new Uint8Array(0)];
  for (const w of words) {
    const variants = sounds(w);
    if (!variants.length) continue;
    out = out.flatMap((head) => variants.map((v) => concat([head, v]))).slice(0, max);
  }
  return out;
}

interface Candidate {
  first: number;
  last: number;
  score: number;
  /** How far above (or under) what a hit needs. */
  margin: number;
}

/**
 * Every place `query` is said in `words` (a transcript's words, in order): exact spellings (as findPhrase finds
 * them), then runs of 1..k heard words that sound like it, best first, none overlapping another; then the near
 * misses. Each list in time order. Deterministic; the work is about query phones x heard phones x k.
 */
export function searchBySound(
  words: TimedWord[],
  query: string,
  pronouncer: Pronouncer,
  options: SoundSearchOptions = {},
): SoundSearch {
  const accept = options.accept ?? acceptScore;
  const band = options.nearBand ?? NEAR_MISS_BAND;
  const below = options.doubtfulBelow ?? DOUBTFUL_CONFIDENCE;
  const queryWords = textWords(query).map((w) => w.key);
  const taken = new Uint8Array(words.length);
  const hit = (first: number, last: number, match: SoundHit['match'], score: number): SoundHit => {
    const doubtful = doubtfulWords(words.slice(first, last + 1), below);
    return {
      words: [words[first]!.index, words[last]!.index],
      start_seconds: words[first]!.start_seconds,
      end_seconds: words[last]!.end_seconds,
      text: words
        .slice(first, last + 1)
        .map((w) => w.word)
        .join(' '),
      match,
      score: Math.round(score * 1000) / 1000,
      ...(doubtful.length ? { doubtful } : {}),
    };
  };
  const claim = (first: number, last: number) => {
    for (let i = first; i <= last; i++) if (taken[i]) return false;
    taken.fill(1, first, last + 1);
    return true;
  };
  const hits = findPhrase(words, query)
    .filter(([f, l]) => claim(f, l))
    .map(([f, l]) => hit(f, l, 'exact', 1));
  const near_misses: SoundHit[] = [];
  const sounds = soundsOf(pronouncer);
  const queries = sequencePronunciations(queryWords, sounds, MAX_QUERY_VARIANTS)
    .filter((q) => q.length >= MIN_QUERY_PHONES)
    .map((phones) => ({ phones, needs: accept(phones.length) - band }));
  if (queries.length && words.length) {
    const candidates = runsLike(words, queries, sounds, queryWords.length + (options.extraWords ?? 2));
    candidates.sort(
      (a, b) => b.margin - a.margin || b.score - a.score || a.last - a.first - (b.last - b.first) || a.first - b.first,
    );
    for (const c of candidates) {
      if (!claim(c.first, c.last)) continue;
      const whole = c.margin >= band - 1e-9 && everyWordIn(queryWords, words.slice(c.first, c.last + 1), sounds);
      (whole ? hits : near_misses).push(hit(c.first, c.last, 'sounds_like', c.score));
    }
  }
  const inTime = (a: SoundHit, b: SoundHit) => a.words[0] - b.words[0];
  return { hits: hits.sort(inTime), near_misses: near_misses.sort(inTime) };
}

/**
 * How alike (1 - distance / phones) each word of a query of several words must be to some stretch of a run. Measured
 * on the planted mishearings (analysis-search.test.ts): 0.7 loses some, 0.6 keeps every one, and "lights" scores
 * 0.53 against "northern coast".
 */
export const WORD_WITHIN_FLOOR = 0.6;

/**
 * Whether each word of a query of two or more words (of MIN_QUERY_PHONES phones or more) sounds like some stretch of
 * the run: a run that matches most of the query well but one of its words not at all is a near miss, not a hit.
 */
function everyWordIn(queryWords: string[], run: TimedWord[], sounds: (word: string) => Uint8Array[]): boolean {
  if (queryWords.length < 2) return true;
  const heard = run.map((w) => sounds(wordKey(w.word)));
  for (const word of queryWords) {
    const variants = sounds(word).filter((v) => v.length >= MIN_QUERY_PHONES);
    if (!variants.length) continue;
    let best = 0;
    for (const v of variants)
      for (const joined of sequenceOf(heard)) best = Math.max(best, 1 - distanceWithin(v, joined) / v.length);
    if (best < WORD_WITHIN_FLOOR) return false;
  }
  return true;
}

/** A run's phones, one joined sequence per choice of its words' first two variants (at most 8). */
function sequenceOf(heard: Uint8Array[][]): Uint8Array[] {
  let out: Uint8Array[] = [new Uint8Array(0)];
  for (const variants of heard) {
    if (!variants.length) continue;
    out = out.flatMap((head) => variants.slice(0, 2).map((v) => concat([head, v]))).slice(0, 8);
  }
  return out;
}

/**
 * Every run of 1..maxWords heard words that scores at least what a near miss needs (`needs`), scored 1 - distance
 * / query phones and kept with its margin over `needs`: the best over the query's pronunciations, each heard word's
 * variants taken as a lattice (the alignment goes on from the cheapest).
 */
function runsLike(
  words: TimedWord[],
  queries: { phones: Uint8Array; needs: number }[],
  sounds: (word: string) => Uint8Array[],
  maxWords: number,
): Candidate[] {
  const heard = words.map((w) => sounds(wordKey(w.word)));
  const best = new Map<number, Candidate>();
  for (const { phones: q, needs } of queries) {
    const budget = q.length * (1 - needs) + 1e-9; // a distance over this scores under what a near miss needs
    const start = firstColumn(q, ONSET_WEIGHT);
    // the column at the end of each word of a run, and two to work in (no allocation per phone)
    const ends = Array.from({ length: maxWords }, () => new Float64Array(q.length + 1));
    const work = [new Float64Array(q.length + 1), new Float64Array(q.length + 1)] as const;
    for (let first = 0; first < words.length; first++) {
      let col = start;
      let before: Uint8Array[] = [];
      for (let k = 0; k < maxWords && first + k < words.length; k++) {
        const variants = heard[first + k]!;
        const end = ends[k]!;
        if (!variants.length)
          end.set(col); // a word without phones (no letters) adds nothing
        else end.fill(Infinity);
        for (const v of variants) {
          let c = col;
          for (let j = 0; j < v.length; j++) {
            const p = v[j]!;
            // the first phone of a word that repeats the last of the word before is said once
            const repeat = j === 0 && before.some((b) => b[b.length - 1] === p);
            c = step(c, c === work[0] ? work[1] : work[0], q, p, repeat ? REPEAT_COST : GAP_COST[p]!, ONSET_WEIGHT);
          }
          for (let x = 0; x < end.length; x++) if (c[x]! < end[x]!) end[x] = c[x]!;
        }
        col = end;
        before = variants;
        const distance = col[q.length]!;
        if (distance <= budget) {
          const score = Math.max(0, 1 - distance / q.length);
          const key = first * maxWords + k;
          const margin = score - needs;
          if ((best.get(key)?.margin ?? -Infinity) < margin) best.set(key, { first, last: first + k, score, margin });
        }
        let least = Infinity;
        for (let x = 0; x < col.length; x++) least = Math.min(least, col[x]!);
        if (least > budget) break; // a longer run cannot come back under the budget
      }
    }
  }
  return [...best.values()];
}
