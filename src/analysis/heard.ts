// What listening found, merged with what the transcript says, pure: keyword spotting's detections of a query
// (media/keywords.ts), each scored by the spotter against a free phone loop, verify the transcript's hits that
// recognition was unsure of or found only by sound, and become hits where the transcript has none, judged by that
// score, by how long they last for the query's phones, by how much the words heard there sound like the query and by
// whether recognition was sure of them. So a word free recognition misheard ("what op" for "lighthouse") is still
// found while the spotter's false alarms and sound-alike runs ("capture" for "captain") stay out; and a hit is
// weighed against the words the asset's own speech says surely elsewhere that sound like the query (rivalWords), so
// slt's "keeper" is not found as "teacher". Measured in bench/search.mjs, checked on a real voice (search-real.mjs).
import { phoneNames } from './dictionary.js';
import { textWords, type TimedWord } from '../edit/words.js';
import {
  DOUBTFUL_CONFIDENCE,
  searchBySound,
  type Pronouncer,
  type SoundHit,
  type SoundSearch,
} from './sound-search.js';

/**
 * Keyword spotting's threshold for a query of this many phones: 1e-(4 x phones), so 1e-24 for "lighthouse". A
 * longer phrase's score is a product over more frames and needs a smaller one; measured on four voices, 3 x phones
 * missed a few planted words and 5 x phones doubled the false alarms (bench/README.md).
 */
export const SPOT_THRESHOLD_PER_PHONE = 4;
export const spotThreshold = (phones: number): number =>
  Number(`1e-${Math.max(1, Math.round(SPOT_THRESHOLD_PER_PHONE * phones))}`);

/** A detection the spotter was not sure of, lasting under this per phone of the query, is too short to be it. */
export const MIN_SECONDS_PER_PHONE = 0.06;
/**
 * Unless the asset's speaker is quicker: then this share of their own pace (the median seconds per phone of the
 * words recognition was sure of) can be enough (kal's "heron", 0.054 s a phone, as quick as kal says everything),
 * over words recognition was unsure of, where the detection is better evidence otherwise: it held its contest
 * against those words (contestsOf) and the spotter scored it PACE_CONFIDENCE or more, midway from `likely` to `sure`.
 * By length alone five false hits came in on the bench (0.834-0.845, two uncontested: kal's "window" over "in the
 * harbor"); kal's heron is 0.865. Over sure words it is not enough: on a real voice "cold" won a contest over "the
 * oldest" (bench/README.md, search).
 */
export const PACE_SHARE = 0.6;
export const PACE_CONFIDENCE = 0.85;
/** Sure words the pace is measured on, at least; with fewer the fixed minimum holds. */
const PACE_WORDS = 20;

/**
 * The seconds per phone a detection must last, at least: MIN_SECONDS_PER_PHONE, or PACE_SHARE of the speaker's own
 * pace where that is shorter.
 */
export function minSecondsPerPhone(words: TimedWord[], pronouncer: Pronouncer): number {
  const paces: number[] = [];
  for (const w of words) {
    if (w.confidence === undefined || w.confidence < DOUBTFUL_CONFIDENCE) continue;
    const key = textWords(w.word)[0]?.key;
    const phones = key ? pronouncer.pronounce(key)[0]?.length : undefined;
    if (phones) paces.push((w.end_seconds - w.start_seconds) / phones);
  }
  if (paces.length < PACE_WORDS) return MIN_SECONDS_PER_PHONE;
  paces.sort((a, b) => a - b);
  return Math.min(MIN_SECONDS_PER_PHONE, PACE_SHARE * paces[Math.floor(paces.length / 2)]!);
}

/** Handle around a heard word for its cut. */
const HANDLE = 0.15;
/** Transcript words whose edges lie this close to a detection's are the words heard there. */
const COINCIDE = 0.15;

export interface Detection {
  start: number;
  end: number;
  /** The spotter's own score of the query against a free phone loop there, 0-1 (0.8's kws prints it). */
  confidence: number;
  /** The query and the words recognition heard there, spotted against each other on that span alone (contestsOf). */
  rival?: Rival;
}

/** Each reading's best score (0-1, 0 where not spotted) in one pass over a contested detection's span. */
export interface Rival {
  query: number;
  heard: number;
}

export type SearchMatch = SoundHit['match'] | 'heard';

/** A hit of a search: the transcript's, or one heard only by listening. */
export interface FoundHit extends Omit<SoundHit, 'words' | 'match'> {
  match: SearchMatch;
  /** The transcript's words there (`index` of first and last); a heard hit has them only where they coincide. */
  words?: [number, number];
  /** A heard hit's in and out points, in the pauses around it: a clip {asset_id, start, end}. */
  cut?: [number, number];
}

/**
 * How listening judges a detection, by the spotter's score (0-1) of the query against a free phone loop there:
 * from `sure` a detection is a hit alone; from `likely` it is one where it lasts long enough and either recognition
 * was unsure of the words there and they sound like the query (`likeness`, 0-1), or, spotted against them on that
 * span, the query outscores them by `margin` (contestsOf); and it lets a hit of the transcript stand
 * that recognition was unsure of or found only by sound. Tuned on bench/search.mjs's clean and music 10 dB under
 * recordings, checked on music 20 dB and noise 25 dB under (bench/README.md).
 */
export const HEARD_RULES = { sure: 0.87, likely: 0.83, likeness: 0.4, margin: 0.01 };
export type HeardRules = typeof HEARD_RULES;

const round = (s: number) => Math.round(s * 1000) / 1000;

/**
 * Detections of one phrase that overlap or nearly touch (the spotter fires more than once on a word) are one, scored by
 * its best.
 */
export function joinDetections(detections: Detection[]): Detection[] {
  const out: Detection[] = [];
  for (const d of [...detections].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last && d.start <= last.end + 0.1) {
      last.end = Math.max(last.end, d.end);
      last.confidence = Math.max(last.confidence, d.confidence);
    } else out.push({ ...d });
  }
  return out;
}

const unsureOf = (ws: TimedWord[]) => ws.some((w) => w.confidence === undefined || w.confidence < DOUBTFUL_CONFIDENCE);
const overlaps = (a: { start_seconds: number; end_seconds: number }, d: Detection) =>
  a.start_seconds < d.end && a.end_seconds > d.start;
const wordsOver = (words: TimedWord[], d: Detection) =>
  words.filter((w) => w.end_seconds > d.start && w.start_seconds < d.end);

/** A detection to settle by spotting, on `from`-`to` (seconds) only, the query against the words `heard` there. */
export interface Contest {
  detection: Detection;
  heard: string;
  from: number;
  to: number;
}

/** Seconds either side of a contested detection that its contest hears. */
export const CONTEST_MARGIN = 0.3;

/**
 * The detections that only a competing reading can settle, each with the words heard there to spot against the query
 * on that span alone (media/keywords.ts spotContests): those scored `likely` but not `sure` and not over a hit of the
 * transcript, (1) over words recognition was sure of (mergeHeard keeps one whose query outscores them by `margin`, or
 * that is spotted where they are not at all) and, given the query, (2) over unsure words where it would be a hit:
 * long enough for the query's `phones` (for a quick speaker's pace, PACE_SHARE) and sounding like it, or over a near
 * miss (mergeHeard refuses one the words outscore by `margin`: kal's "doctor" over "talk", 0.846 against 0.888
 * there). Not where a word heard there is said inside the query, and heard where the query says it (saidInside): it
 * fits the query's own sound and outscores it there (awb's "lighthouse" heard as "light times", 0.845 against 0.941).
 */
export function contestsOf(
  words: TimedWord[],
  found: SoundSearch,
  detections: Detection[],
  rules: HeardRules = HEARD_RULES,
  unsure?: { query: string; phones: number; pronouncer: Pronouncer },
): Contest[] {
  const out: Contest[] = [];
  const paced = unsure ? minSecondsPerPhone(words, unsure.pronouncer) : MIN_SECONDS_PER_PHONE;
  // A detection shorter than the fixed minimum is a hit only if heard well enough (PACE_CONFIDENCE) as well.
  const minimum = (d: Detection) => (d.confidence >= PACE_CONFIDENCE ? paced : MIN_SECONDS_PER_PHONE);
  for (const d of joinDetections(detections.filter((x) => x.confidence >= rules.likely && x.confidence < rules.sure))) {
    if (found.hits.some((h) => overlaps(h, d))) continue;
    const inside = wordsOver(words, d);
    if (!inside.length) continue;
    if (unsureOf(inside)) {
      if (!unsure || d.end - d.start < minimum(d) * unsure.phones) continue;
      if (inside.some((w) => saidInside(w, d, unsure.query, unsure.pronouncer))) continue;
      const nearMiss = found.near_misses.some((h) => overlaps(h, d));
      if (!nearMiss && likenessThere(words, d, unsure.query, unsure.pronouncer) < rules.likeness) continue;
    }
    const from = Math.max(0, Math.min(d.start, inside[0]!.start_seconds) - CONTEST_MARGIN);
    out.push({
      detection: d,
      heard: inside.map((w) => w.word).join(' '),
      from,
      to: Math.max(d.end, inside.at(-1)!.end_seconds) + CONTEST_MARGIN,
    });
  }
  return out;
}

/**
 * Whether `w` (two phones or more) is said as a run of the query's phones, in any of their pronunciations, and heard
 * where the query says that run in the detection `d`: the word's middle within the run's share of the detection (its
 * phones taken as evenly long). So "light" heard at the start of a "lighthouse" detection is the query's own sound
 * there; "and" heard from the very start of an "island" detection, where the query says "i l", is not (awb under the
 * bed: "island" spotted over "and").
 */
function saidInside(w: TimedWord, d: Detection, query: string, pronouncer: Pronouncer): boolean {
  const key = textWords(w.word)[0]?.key;
  if (!key) return false;
  const wholes = textWords(query)
    .map((q) => pronouncer.pronounce(q.key).map(phoneNames))
    .reduce<string[]>((heads, vs) => heads.flatMap((h) => vs.map((v) => (h ? `${h} ${v}` : v))).slice(0, 16), ['']);
  const middle = (w.start_seconds + w.end_seconds) / 2;
  const there = (from: number, to: number, of: number) =>
    middle >= d.start + ((d.end - d.start) * from) / of && middle <= d.start + ((d.end - d.start) * to) / of;
  return pronouncer
    .pronounce(key)
    .map((p) => phoneNames(p).split(' '))
    .some(
      (run) =>
        run.length >= 2 &&
        wholes.some((q) => {
          const phones = q.split(' ');
          for (let k = 0; k + run.length <= phones.length; k++)
            if (run.every((ph, j) => phones[k + j] === ph) && there(k, k + run.length, phones.length)) return true;
          return false;
        }),
    );
}

/** How much the words heard around a detection sound like the query (searchBySound's best score there, 0-1). */
function likenessThere(words: TimedWord[], d: Detection, query: string, pronouncer: Pronouncer): number {
  const there = words.filter((w) => w.end_seconds > d.start - 0.1 && w.start_seconds < d.end + 0.1);
  return Math.max(
    0,
    ...searchBySound(there, query, pronouncer, { accept: () => 0, nearBand: 0 }).hits.map((h) => h.score),
  );
}

/**
 * The search's hits and near misses with what listening heard. A hit of the transcript stands when recognition was
 * sure of its words and spelled the query; otherwise (unsure words, or a match by sound) only when the spotter
 * heard the query over it (a detection scored `sure`, or `likely` and lasting long enough): else it becomes a near
 * miss. Elsewhere a detection
 * is a `heard` hit when the spotter was sure, or when it lasts long enough for the query's phones and recognition was
 * unsure of the words there and they sound like the query (a near miss there always does), or the query won its
 * contest against the words recognition was sure of there (`rival`); else a `heard` near miss.
 */
export function mergeHeard(
  words: TimedWord[],
  found: SoundSearch,
  detections: Detection[],
  query: string,
  queryPhones: number,
  pronouncer: Pronouncer,
  rules: HeardRules = HEARD_RULES,
): { hits: FoundHit[]; near_misses: FoundHit[] } {
  const over = (h: { start_seconds: number; end_seconds: number }, d: Detection) =>
    h.start_seconds < d.end && h.end_seconds > d.start;
  const heard = joinDetections(detections.filter((d) => d.confidence >= rules.likely));
  const wordsOf = (h: FoundHit) =>
    h.words ? words.filter((w) => w.index >= h.words![0] && w.index <= h.words![1]) : [];
  const hits: FoundHit[] = [];
  const nearMisses: FoundHit[] = [...found.near_misses];
  // A detection vouches for the transcript's hit: sure, or likely and long enough for the query's phones by the
  // fixed minimum (slt's "her in" is not "heron": 0.85, but 0.042 s a phone, which slt's pace would allow).
  const minimum = minSecondsPerPhone(words, pronouncer);
  const full = (d: Detection) => d.end - d.start >= MIN_SECONDS_PER_PHONE * queryPhones;
  const vouches = (d: Detection) => d.confidence >= rules.sure || full(d);
  for (const h of found.hits) {
    const stands = (h.match === 'exact' && !unsureOf(wordsOf(h))) || heard.some((d) => over(h, d) && vouches(d));
    (stands ? hits : nearMisses).push(h);
  }
  const near: FoundHit[] = [];
  for (const d of heard) {
    if (hits.some((h) => over(h, d))) continue;
    const inside = wordsOver(words, d);
    // Over words recognition was sure of, the query must outscore them there by `margin`, or be spotted where they
    // are not at all (kal's first "keeper" under a bed, recognised surely as "where": 0.859 against nothing); over
    // unsure words, they must not outscore the query by `margin` (contestsOf).
    const wins =
      d.rival !== undefined &&
      d.rival.query >= d.rival.heard + rules.margin &&
      (d.rival.heard > 0 || d.rival.query >= rules.likely);
    const lost = d.rival !== undefined && d.rival.heard >= d.rival.query + rules.margin;
    const sure = d.confidence >= rules.sure;
    const unsure = unsureOf(inside);
    const missed = nearMisses.findIndex((h) => over(h, d));
    if (missed >= 0) {
      // A near miss (or a sound-alike not vouched for) is heard only by the fixed minimum, as vouching asks.
      if (sure || (full(d) && ((unsure && !lost) || wins)))
        hits.push({ ...nearMisses.splice(missed, 1)[0]!, match: 'heard', cut: cutAround(d, inside) });
      continue;
    }
    const likeness = likenessThere(words, d, query, pronouncer);
    // Long enough for the query's phones, or for a quick speaker's pace and better heard (PACE_SHARE).
    const long =
      full(d) ||
      (d.end - d.start >= minimum * queryPhones &&
        unsure &&
        d.rival !== undefined &&
        !lost &&
        d.confidence >= PACE_CONFIDENCE);
    const coincide =
      inside.length > 0 &&
      Math.abs(inside[0]!.start_seconds - d.start) <= COINCIDE &&
      Math.abs(inside.at(-1)!.end_seconds - d.end) <= COINCIDE;
    const hit: FoundHit = {
      ...(coincide ? { words: [inside[0]!.index, inside.at(-1)!.index] as [number, number] } : {}),
      start_seconds: round(d.start),
      end_seconds: round(d.end),
      text: inside.map((w) => w.word).join(' '),
      match: 'heard',
      score: round(likeness),
      cut: cutAround(d, inside),
    };
    (sure || (long && ((unsure && likeness >= rules.likeness && !lost) || wins)) ? hits : near).push(hit);
  }
  const inTime = (a: FoundHit, b: FoundHit) => a.start_seconds - b.start_seconds;
  return { hits: hits.sort(inTime), near_misses: [...nearMisses, ...near].sort(inTime) };
}

/** Rival words a query is spotted against, at most (the likeliest first): each one more phrase in the same pass. */
export const MAX_RIVAL_WORDS = 6;
/** How much a word of the asset must sound like the query (searchBySound's score, 0-1) to be its rival. */
export const RIVAL_LIKENESS = 0.5;

/**
 * The words the asset's own transcript holds, heard surely somewhere in it, that sound like the query without being
 * said as it: the readings a detection of the query most likely stands for instead (slt's "keeper", recognised surely
 * at 17.5 s, is what the spotter heard as "teacher" there and twice elsewhere). Spotted beside the query in the same
 * pass (the same sound and context, so their scores compare), they refuse a hit one of them outscores (vetoRivals).
 * Only words of at least the query's phones less one: a shorter word fits inside the query's sound and outscores
 * it there ("best" in "postman", "light" in "lighthouse").
 */
export function rivalWords(words: TimedWord[], query: string, queryPhones: number, pronouncer: Pronouncer): string[] {
  const queryKeys = new Set(textWords(query).map((w) => w.key));
  const said = new Set(textWords(query).flatMap((w) => pronouncer.pronounce(w.key).map(phoneNames)));
  const seen = new Map<string, number>();
  for (const w of words) {
    if (w.confidence === undefined || w.confidence < DOUBTFUL_CONFIDENCE) continue;
    const key = textWords(w.word)[0]?.key;
    if (!key || !/^[a-z']+$/.test(key) || queryKeys.has(key) || seen.has(key)) continue;
    const variants = pronouncer.pronounce(key);
    if (!variants.length || variants[0]!.length < queryPhones - 1) continue;
    if (variants.some((v) => said.has(phoneNames(v)))) continue;
    const likeness = Math.max(
      0,
      ...searchBySound([{ ...w, word: key }], query, pronouncer, { accept: () => 0, nearBand: 0 }).hits.map(
        (h) => h.score,
      ),
    );
    if (likeness >= RIVAL_LIKENESS) seen.set(key, likeness);
  }
  return [...seen]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_RIVAL_WORDS)
    .map(([k]) => k);
}

/**
 * The hits listening stands behind that a rival word (rivalWords) outscores where it lies: the best detection of a
 * rival over at least half of the hit (or of itself) scoring above the query's own best there. Such a hit becomes a
 * near miss. A hit of the transcript recognition was sure of and spelled as the query is not judged.
 */
export function vetoRivals(
  words: TimedWord[],
  found: { hits: FoundHit[]; near_misses: FoundHit[] },
  detections: Detection[],
  rivals: Detection[],
): { hits: FoundHit[]; near_misses: FoundHit[] } {
  if (!rivals.length) return found;
  const overHalf = (d: Detection, h: FoundHit) =>
    Math.min(d.end, h.end_seconds) - Math.max(d.start, h.start_seconds) >=
    0.5 * Math.min(d.end - d.start, h.end_seconds - h.start_seconds);
  const hits: FoundHit[] = [];
  const near: FoundHit[] = [];
  for (const h of found.hits) {
    const inside = h.words ? words.filter((w) => w.index >= h.words![0] && w.index <= h.words![1]) : [];
    const sureExact = h.match === 'exact' && inside.length > 0 && !unsureOf(inside);
    const own = Math.max(0, ...detections.filter((d) => overHalf(d, h)).map((d) => d.confidence));
    const rival = Math.max(0, ...rivals.filter((d) => overHalf(d, h)).map((d) => d.confidence));
    (sureExact || rival <= own ? hits : near).push(h);
  }
  return { hits, near_misses: [...found.near_misses, ...near].sort((a, b) => a.start_seconds - b.start_seconds) };
}

/**
 * In and out points for a detection: a handle each side of it and of the words recognised over it. The spotter's
 * edges can fall inside the word (measured: an end 0.3 s early), and so can misheard words' edges; together they
 * hold it.
 */
function cutAround(d: Detection, inside: TimedWord[]): [number, number] {
  const from = Math.min(d.start, ...inside.map((w) => w.start_seconds));
  const to = Math.max(d.end, ...inside.map((w) => w.end_seconds));
  return [round(Math.max(0, from - HANDLE)), round(to + HANDLE)];
}
