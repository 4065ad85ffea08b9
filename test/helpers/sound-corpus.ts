// A corpus for search by sound, made from the real CMU dictionary: transcripts of distractor words (dictionary
// words of about the query's length in phones, and the short words speech is full of) with planted mishearings of
// the kinds PocketSphinx makes (a word split in two, two merged, a near phone, a spelling variant), each at known
// word indices. Deterministic (a seeded generator), so the figures measured on it are the same on every run.
import { existsSync, readFileSync } from 'node:fs';
import type { TimedWord } from '../../src/edit/words.js';
import type { Cmudict } from '../../src/analysis/dictionary.js';

export const CMUDICT_PATH = '/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict';
export const cmudictText = (): string | undefined =>
  existsSync(CMUDICT_PATH) ? readFileSync(CMUDICT_PATH, 'utf8') : undefined;

/** A query and how the engine heard it: planted in a transcript, each must be found. */
export const PLANTED: { query: string; heard: string; kind: string }[] = [
  { query: 'lighthouse', heard: 'light towns', kind: 'split, near phones' },
  { query: 'lighthouse', heard: 'like house', kind: 'split, near phone' },
  { query: 'the lighthouse', heard: 'the light towns', kind: 'split, near phones' },
  { query: 'keeper', heard: 'keep her', kind: 'split' },
  { query: 'lighthouse keeper', heard: 'light towns keep her', kind: 'two splits' },
  { query: 'harbour', heard: 'harbor', kind: 'spelling variant' },
  { query: 'harbour', heard: 'har bore', kind: 'split, near phone' },
  { query: 'understand', heard: 'under stand', kind: 'split' },
  { query: 'together', heard: 'to gather', kind: 'split, near phone' },
  { query: 'fisherman', heard: 'fish or man', kind: 'split in three' },
  { query: 'forget', heard: 'four get', kind: 'split' },
  { query: 'somebody', heard: 'some buddy', kind: 'split' },
  { query: 'captain', heard: 'cap ten', kind: 'split, near phone' },
  { query: 'postman', heard: 'post man', kind: 'split' },
  { query: 'lamplight', heard: 'lamp light', kind: 'split (a word the dictionary lacks)' },
  { query: 'dunmore', heard: 'done more', kind: 'split (a name the dictionary lacks)' },
  { query: 'ice cream', heard: 'i scream', kind: 'merge and split elsewhere' },
  { query: 'a part', heard: 'apart', kind: 'merge' },
  { query: 'in deed', heard: 'indeed', kind: 'merge' },
  { query: 'heron', heard: 'herring', kind: 'near phones' },
  { query: 'boats', heard: 'votes', kind: 'near phone (b/v)' },
  { query: 'pier', heard: 'peer', kind: 'homophone' },
  { query: 'shallow', heard: 'shadow', kind: 'near phone (l/d)' },
  { query: 'weather', heard: 'whether', kind: 'homophone' },
  { query: 'kilbride', heard: 'kill bride', kind: 'split (a name)' },
];

/** Words speech is full of, among the distractors. */
const SHORT = [
  'the',
  'a',
  'and',
  'to',
  'of',
  'in',
  'it',
  'is',
  'that',
  'was',
  'he',
  'she',
  'on',
  'for',
  'with',
  'as',
  'we',
  'at',
  'but',
  'they',
  'so',
  'her',
  'his',
  'all',
  'up',
  'out',
  'then',
  'there',
  'now',
];

/** mulberry32: a small seeded generator. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The dictionary's plain words (letters only), in its order. */
export const plainWords = (text: string): string[] => [
  ...new Set(
    text
      .split('\n')
      .map((l) => l.split(/\s/)[0]!.replace(/\(\d+\)$/, ''))
      .filter((w) => /^[a-z]{2,}$/.test(w)),
  ),
];

export interface PlantedTranscript {
  query: string;
  words: TimedWord[];
  /** Word indices [first, last] of each planted mishearing. */
  planted: [number, number][];
}

/**
 * One transcript per planted mishearing: `length` words, a third of them short words and the rest dictionary words
 * whose length in phones is within one of the query's, with the mishearing planted `times` times at random places
 * (never touching another). Words are 0.4 s apart; confidences are left out.
 */
export function plantedTranscripts(
  dict: Cmudict,
  vocabulary: string[],
  opts: { length: number; times: number; seed: number },
): PlantedTranscript[] {
  const rand = seeded(opts.seed);
  const byLength = new Map<number, string[]>();
  for (const w of vocabulary) {
    const n = dict.lookup(w)[0]?.length ?? 0;
    if (!byLength.has(n)) byLength.set(n, []);
    byLength.get(n)!.push(w);
  }
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  return PLANTED.map(({ query, heard }) => {
    const queryPhones = query.split(' ').reduce((n, w) => n + (dict.lookup(w)[0]?.length ?? w.length), 0);
    const similar = [queryPhones - 1, queryPhones, queryPhones + 1]
      .flatMap((n) => byLength.get(n) ?? [])
      .filter((w) => !query.split(' ').includes(w) && !heard.split(' ').includes(w));
    const text: string[] = Array.from({ length: opts.length }, () => (rand() < 1 / 3 ? pick(SHORT) : pick(similar)));
    const heardWords = heard.split(' ');
    const planted: [number, number][] = [];
    const slots = Math.floor(opts.length / opts.times);
    for (let k = 0; k < opts.times; k++) {
      const at = k * slots + 1 + Math.floor(rand() * (slots - heardWords.length - 2));
      text.splice(at, heardWords.length, ...heardWords);
      planted.push([at, at + heardWords.length - 1]);
    }
    const words = text.map((word, index) => ({
      index,
      word,
      start_seconds: index * 0.4,
      end_seconds: index * 0.4 + 0.3,
    }));
    return { query, words, planted };
  });
}
