// Words related to a subject, pure: WordNet's plain-text database (Debian's wordnet-base: index.POS lines
// `lemma pos n p ptrs... sense_cnt tagsense offsets...`, data.POS lines `offset lex pos w_cnt lemma lex_id ... p_cnt
// ptr offset pos st ... | gloss`, POS.exc lines `inflected base`) read from text handed in, so that "storm" finds
// "wind" (its gloss), "windstorm" (a kind of it) and "sea" (a gloss that says "stormy state of the sea"); else, without
// WordNet, the words said beside the subject in the same transcript. The files are read by workflow/related-words.ts.
import { wordKey } from '../edit/words.js';

/** A related word's weight, 0-1: what a sentence saying it (and not the subject) tells of being on the subject. */
export type Related = Map<string, number>;

/** The text of WordNet's files, one string per file (data files by byte offset: read as latin1). */
export interface WordnetText {
  index: Partial<Record<Pos, string>>;
  data: Partial<Record<Pos, string>>;
  exceptions: Partial<Record<Pos, string>>;
}
type Pos = 'noun' | 'verb' | 'adj' | 'adv';
const POSES: Pos[] = ['noun', 'verb', 'adj', 'adv'];
const POS_OF: Record<string, Pos> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj', r: 'adv' };

/** Weights: the subject's synonyms, then kinds of it and what it is a kind or part of, then words of definitions. */
const W = { synonym: 0.9, linked: 0.7, gloss: 0.6, glossOfLinked: 0.4, mentions: 0.6, glossOfMentions: 0.4 };
/** Words too common in definitions to say anything about a subject. */
const GENERIC = new Set(
  (
    'a about above across after again against all also an and any are as at be been being between both but by can ' +
    'could did do does done during each either especially etc for from had has have having he her his how if in into ' +
    'is it its large less made make many may more most much must no not of off often on one or other out over own ' +
    'part person place same several should small so some something someone somewhat such than that the their them ' +
    'then there these they thing things this those through to too type under up upon use used usually very was way ' +
    'we were what when where which while who whose will with within without would you kind state act form quality ' +
    'very great good having make makes people time condition manner often take takes give gives cause causes'
  ).split(' '),
);

/** The forms a word may be the inflection of (WordNet's detachment rules and its exception lists), itself first. */
export function baseForms(word: string, exceptions?: Map<string, string[]>): string[] {
  const w = wordKey(word);
  if (!w) return [];
  const out = new Set([w, ...(exceptions?.get(w) ?? [])]);
  const rules: [string, string][] = [
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['s', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
    ['er', ''],
    ['est', ''],
  ];
  for (const [suffix, base] of rules)
    if (w.length > suffix.length + 2 && w.endsWith(suffix) && !w.endsWith('ss'))
      out.add(w.slice(0, -suffix.length) + base);
  return [...out];
}

/** POS.exc lines, inflected -> bases. */
export function parseExceptions(text: WordnetText): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const pos of POSES)
    for (const line of (text.exceptions[pos] ?? '').split('\n')) {
      const [form, ...bases] = line.trim().split(' ');
      if (form && bases.length) map.set(form, [...(map.get(form) ?? []), ...bases]);
    }
  return map;
}

interface Synset {
  lemmas: string[];
  /** Pointers: symbol, offset, part of speech. */
  pointers: { symbol: string; offset: number; pos: Pos }[];
  gloss: string;
}

/** One data.POS line. */
export function parseDataLine(line: string): Synset | undefined {
  const bar = line.indexOf(' | ');
  const head = (bar < 0 ? line : line.slice(0, bar)).trim().split(' ');
  const wordCount = parseInt(head[3] ?? '', 16);
  if (!(wordCount > 0)) return undefined;
  const lemmas = Array.from({ length: wordCount }, (_, k) =>
    (head[4 + 2 * k] ?? '').replace(/\(.*\)$/, '').toLowerCase(),
  );
  let at = 4 + 2 * wordCount;
  const pointerCount = parseInt(head[at] ?? '0', 10);
  at++;
  const pointers: Synset['pointers'] = [];
  for (let k = 0; k < pointerCount; k++, at += 4) {
    const pos = POS_OF[head[at + 2] ?? ''];
    if (pos) pointers.push({ symbol: head[at]!, offset: Number(head[at + 1]), pos });
  }
  // The definition without its examples (quoted, after a semicolon).
  const gloss = bar < 0 ? '' : line.slice(bar + 3).replace(/;?\s*"[^"]*"/g, '');
  return { lemmas, pointers, gloss };
}

/** A lemma's synset offsets in one part of speech (index.POS lines are sorted; found by their line start). */
export function indexOffsets(index: string, lemma: string): number[] {
  const key = lemma.replace(/ /g, '_');
  const at = index.startsWith(`${key} `) ? 0 : index.indexOf(`\n${key} `);
  if (at < 0) return [];
  const line = index.slice(at ? at + 1 : 0, index.indexOf('\n', at + 1));
  const f = line.split(' ');
  const pointerCount = Number(f[3]);
  const senses = Number(f[2]);
  return f
    .slice(4 + pointerCount + 2, 4 + pointerCount + 2 + senses)
    .map(Number)
    .filter((n) => Number.isFinite(n));
}

const contentWords = (text: string) =>
  text
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length > 2 && !GENERIC.has(w));

/** A lemma's words: a compound's parts at half its weight ("ice storm": ice is not what a storm is). */
function add(into: Related, lemma: string, weight: number): void {
  const parts = lemma.toLowerCase().split(/[_\s-]+/);
  const each = parts.length > 1 ? weight / 2 : weight;
  for (const part of parts) {
    if (part.length < 3 || GENERIC.has(part)) continue;
    // A definition's "winds" is the wind a transcript says: kept by its bases too.
    for (const w of baseForms(part)) if ((into.get(w) ?? 0) < each) into.set(w, each);
  }
}

/** Synsets whose definition names the word (or its -s, -y, -ed, -ing forms) at most this many, first ones first. */
const MAX_MENTIONS = 60;

/**
 * The words WordNet relates to `term`: its synonyms; the words of kinds of it, of what it is a kind or part of and of
 * words derived from it; the words of those definitions; and the words of definitions that mention it. A first or
 * second sense counts fully, later senses at 0.7 of it (a storm's assault on a stronghold is its third sense).
 */
export function wordnetRelated(term: string, text: WordnetText, exceptions: Map<string, string[]>): Related {
  const related: Related = new Map();
  const bases = baseForms(term, exceptions);
  const synsetAt = (pos: Pos, offset: number) => {
    const data = text.data[pos];
    if (!data || offset >= data.length) return undefined;
    return parseDataLine(data.slice(offset, data.indexOf('\n', offset)));
  };
  for (const pos of POSES) {
    const index = text.index[pos];
    if (!index) continue;
    const offsets = [...new Set(bases.flatMap((b) => indexOffsets(index, b)))];
    offsets.forEach((offset, sense) => {
      const rank = sense < 2 ? 1 : 0.7;
      const own = synsetAt(pos, offset);
      if (!own) return;
      for (const l of own.lemmas) add(related, l, W.synonym * rank);
      for (const g of contentWords(own.gloss)) add(related, g, W.gloss * rank);
      for (const p of own.pointers) {
        // Hypernyms, hyponyms, holonyms, meronyms, derivations, similar, also-see and attributes.
        if (!/^[@~#%+&^=]/.test(p.symbol)) continue;
        const linked = synsetAt(p.pos, p.offset);
        if (!linked) continue;
        for (const l of linked.lemmas) add(related, l, W.linked * rank);
        for (const g of contentWords(linked.gloss)) add(related, g, W.glossOfLinked * rank);
      }
    });
  }
  // Definitions that mention the word: "a turbulent and stormy state of the sea" says sea goes with storm.
  const named = bases.filter(
    (b) => b.length >= 3 && POSES.some((pos) => indexOffsets(text.index[pos] ?? '', b).length),
  );
  if (named.length) {
    const mention = new RegExp(
      `\\b(?:${named.map((b) => b.replace(/[^a-z0-9]/g, '')).join('|')})(?:s|es|y|ed|ing)?\\b`,
    );
    let found = 0;
    for (const pos of POSES) {
      const data = text.data[pos];
      if (!data) continue;
      for (let at = data.indexOf(' | '); at >= 0 && found < MAX_MENTIONS; at = data.indexOf(' | ', at + 3)) {
        const end = data.indexOf('\n', at);
        const gloss = data.slice(at + 3, end < 0 ? undefined : end).replace(/;?\s*"[^"]*"/g, '');
        if (!mention.test(gloss)) continue;
        const start = data.lastIndexOf('\n', at) + 1;
        const synset = parseDataLine(data.slice(start, end < 0 ? undefined : end));
        if (!synset) continue;
        found++;
        for (const l of synset.lemmas) add(related, l, W.mentions);
        for (const g of contentWords(synset.gloss)) add(related, g, W.glossOfMentions);
      }
    }
  }
  for (const b of bases) related.delete(b);
  return related;
}

/**
 * Without WordNet: the words said in the same sentence as the subject in this transcript (at 0.4), so a sentence
 * that goes on about what the subject's sentence named is still on it.
 */
export function cooccurring(
  sentences: string[][],
  isSubject: (word: string) => boolean,
  exceptions?: Map<string, string[]>,
): Related {
  const related: Related = new Map();
  for (const words of sentences) {
    if (!words.some(isSubject)) continue;
    for (const w of words) {
      if (isSubject(w)) continue;
      for (const b of baseForms(w, exceptions)) add(related, b, 0.4);
    }
  }
  return related;
}

/** How much a run of words says of the subject by its related words alone (at most 0.6), and the words that did. */
export function relatedness(
  words: string[],
  related: Related,
  exceptions?: Map<string, string[]>,
): { score: number; heard: string[] } {
  let miss = 1;
  const heard: string[] = [];
  const seen = new Set<string>();
  for (const word of words) {
    let best = 0;
    let key = '';
    for (const b of baseForms(word, exceptions)) {
      const w = related.get(b) ?? 0;
      if (w > best) [best, key] = [w, b];
    }
    if (!best || seen.has(key)) continue;
    seen.add(key);
    heard.push(word);
    miss *= 1 - best;
  }
  return { score: Math.min(0.6, 1 - miss), heard };
}
