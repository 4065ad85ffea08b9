// What listening found merged with the transcript's hits (src/analysis/heard.ts), and keyword spotting's files and
// output (src/media/keywords.ts).
import { describe, expect, it } from 'vitest';
import { parseCmudict } from '../../src/analysis/dictionary.js';
import {
  CONTEST_MARGIN,
  HEARD_RULES,
  MIN_SECONDS_PER_PHONE,
  PACE_CONFIDENCE,
  PACE_SHARE,
  contestsOf,
  joinDetections,
  mergeHeard,
  minSecondsPerPhone,
  rivalWords,
  spotThreshold,
  vetoRivals,
  type Detection,
  type FoundHit,
} from '../../src/analysis/heard.js';
import { createPronouncer, searchBySound } from '../../src/analysis/sound-search.js';
import type { TimedWord } from '../../src/edit/words.js';
import { dictionaryOf, kwsFileOf, parseSpotted } from '../../src/media/keywords.js';
import { cmudictText } from '../helpers/sound-corpus.js';

const text = cmudictText();
const pronouncer = createPronouncer(text ? parseCmudict(text) : undefined);

/** Words at given times: [word, start, end, confidence?]. */
const words = (...ws: [string, number, number, number?][]): TimedWord[] =>
  ws.map(([word, start_seconds, end_seconds, confidence], index) => ({
    index,
    word,
    start_seconds,
    end_seconds,
    ...(confidence !== undefined ? { confidence } : {}),
  }));

/** A detection the spotter scored `confidence` (a likely one unless told). */
const at = (start: number, end: number, confidence = HEARD_RULES.likely): Detection => ({ start, end, confidence });

describe('keyword spotting thresholds and detections', () => {
  it('asks a smaller threshold of a longer query', () => {
    expect(spotThreshold(6)).toBe(1e-24);
    expect(spotThreshold(3)).toBe(1e-12);
    expect(spotThreshold(10)).toBeLessThan(spotThreshold(6));
  });

  it('joins detections of one word that overlap or nearly touch', () => {
    expect(joinDetections([at(3, 3.4, 0.8), at(1, 1.5, 0.84), at(1.55, 1.7, 0.86)])).toEqual([
      at(1, 1.7, 0.86),
      at(3, 3.4, 0.8),
    ]);
  });
});

describe('merging what was heard with the transcript', () => {
  const query = 'lighthouse';
  const phones = 6;
  const t = words(
    ['we', 0.2, 0.4, 0.9],
    ['walked', 0.45, 0.8, 0.9],
    ['to', 0.85, 0.95, 0.9],
    ['the', 1.0, 1.1, 0.9],
    ['light', 1.15, 1.4, 0.3],
    ['towns', 1.45, 1.8, 0.2],
    ['at', 1.9, 2.0, 0.9],
    ['what', 3.0, 3.2, 0.4],
    ['op', 3.2, 3.5, 0.3],
    ['the', 4.0, 4.1, 0.9],
    ['lighthouse', 4.2, 4.8, 0.9],
    ['ran', 6.0, 6.3, 0.9],
  );

  it('adds nothing where a hit already is, and keeps the transcript hits as they were', () => {
    const found = searchBySound(t, query, pronouncer);
    const merged = mergeHeard(t, found, [at(4.2, 4.75), at(1.2, 1.75)], query, phones, pronouncer);
    expect(merged.hits.map((h) => [h.match, h.words])).toEqual([
      ['sounds_like', [4, 5]],
      ['exact', [10, 10]],
    ]);
  });

  it('makes a detection where recognition heard other words a heard hit, cuttable in the pauses around it', () => {
    const found = searchBySound(t, query, pronouncer);
    const merged = mergeHeard(t, found, [at(3.0, 3.5)], query, phones, pronouncer);
    const heard = merged.hits.find((h) => h.match === 'heard')!;
    expect(heard).toMatchObject({ start_seconds: 3, end_seconds: 3.5, text: 'what op', words: [7, 8] });
    expect(heard.score).toBeGreaterThanOrEqual(HEARD_RULES.likeness);
    // a handle each side of the detection and the words heard over it
    expect(heard.cut).toEqual([2.85, 3.65]);
  });

  it('keeps a likely detection too short for the query, or over words nothing like it, as a near miss', () => {
    const found = searchBySound(t, query, pronouncer);
    const short = mergeHeard(
      t,
      found,
      [at(3.0, 3.0 + MIN_SECONDS_PER_PHONE * phones - 0.05)],
      query,
      phones,
      pronouncer,
    );
    expect(short.hits.some((h) => h.match === 'heard')).toBe(false);
    expect(short.near_misses.map((h) => h.match)).toContain('heard');
    // a sure one, short or not, is a hit
    const sure = mergeHeard(
      t,
      found,
      [at(3.0, 3.0 + MIN_SECONDS_PER_PHONE * phones - 0.05, HEARD_RULES.sure)],
      query,
      phones,
      pronouncer,
    );
    expect(sure.hits.find((h) => h.match === 'heard')).toMatchObject({ text: 'what op' });
    const unlike = mergeHeard(t, found, [at(5.95, 6.4)], query, phones, pronouncer);
    expect(unlike.hits.some((h) => h.match === 'heard')).toBe(false);
    expect(unlike.near_misses.find((h) => h.match === 'heard')).toMatchObject({ text: 'ran' });
  });

  it('overrules words recognition was sure of only when the spotter was sure', () => {
    const sure = t.map((w) => (w.index === 7 || w.index === 8 ? { ...w, confidence: 0.8 } : w));
    const likely = mergeHeard(sure, searchBySound(sure, query, pronouncer), [at(3.0, 3.5)], query, phones, pronouncer);
    expect(likely.hits.some((h) => h.match === 'heard')).toBe(false);
    expect(likely.near_misses.find((h) => h.match === 'heard')).toMatchObject({ text: 'what op' });
    const overruled = mergeHeard(
      sure,
      searchBySound(sure, query, pronouncer),
      [at(3.0, 3.5, HEARD_RULES.sure)],
      query,
      phones,
      pronouncer,
    );
    expect(overruled.hits.find((h) => h.match === 'heard')).toMatchObject({ text: 'what op' });
  });

  it('contests a likely detection over words recognition was sure of, and keeps it only where the query wins', () => {
    const sure = t.map((w) => (w.index === 7 || w.index === 8 ? { ...w, confidence: 0.8 } : w));
    const found = searchBySound(sure, query, pronouncer);
    // Over unsure words ("light towns") or a hit of the transcript there is nothing to contest.
    const contests = contestsOf(sure, found, [at(3.0, 3.5), at(1.2, 1.75), at(4.2, 4.75)]);
    expect(contests).toEqual([
      { detection: at(3.0, 3.5), heard: 'what op', from: 3.0 - CONTEST_MARGIN, to: 3.5 + CONTEST_MARGIN },
    ]);
    const judged = (query_: number, heard: number) =>
      mergeHeard(sure, found, [{ ...at(3.0, 3.5), rival: { query: query_, heard } }], query, phones, pronouncer);
    expect(judged(0.85, 0.82).hits.find((h) => h.match === 'heard')).toMatchObject({
      text: 'what op',
      start_seconds: 3,
    });
    expect(judged(0.85, 0.845).hits.some((h) => h.match === 'heard')).toBe(false);
    // A reading the contest did not spot at all loses where the query scored likely there (kal's "keeper" under a
    // bed, recognised surely as "where"), and settles nothing where the query scored less.
    expect(judged(HEARD_RULES.likely, 0).hits.find((h) => h.match === 'heard')).toMatchObject({ text: 'what op' });
    expect(judged(HEARD_RULES.likely - 0.01, 0).hits.some((h) => h.match === 'heard')).toBe(false);
  });

  it('contests a likely detection over unsure words where it would be a hit, and refuses it where they win', () => {
    const found = searchBySound(t, query, pronouncer);
    const unsure = { query, phones, pronouncer };
    // "what op" (unsure) is contested, not a detection too short to be a hit anyway.
    const contests = contestsOf(t, found, [at(3.0, 3.5)], HEARD_RULES, unsure);
    expect(contests).toEqual([
      { detection: at(3.0, 3.5), heard: 'what op', from: 3.0 - CONTEST_MARGIN, to: 3.5 + CONTEST_MARGIN },
    ]);
    expect(contestsOf(t, found, [at(3.0, 3.2)], HEARD_RULES, unsure)).toEqual([]);
    // Without the query's phones, over unsure words nothing is contested (as before).
    expect(contestsOf(t, found, [at(3.0, 3.5)])).toEqual([]);
    const judged = (query_: number, heard: number) =>
      mergeHeard(t, found, [{ ...at(3.0, 3.5), rival: { query: query_, heard } }], query, phones, pronouncer);
    // The heard words outscore the query there by the margin: refused, offered as a near miss.
    expect(judged(0.837, 0.907).hits.some((h) => h.match === 'heard')).toBe(false);
    expect(judged(0.837, 0.907).near_misses.find((h) => h.match === 'heard')).toMatchObject({ text: 'what op' });
    // Within the margin, or the query ahead, or the words not spotted: it stands as before.
    for (const [q, h] of [
      [0.877, 0.881],
      [0.85, 0.82],
      [0.85, 0],
    ] as const)
      expect(
        judged(q, h).hits.find((x) => x.match === 'heard'),
        `${q} against ${h}`,
      ).toMatchObject({
        text: 'what op',
      });
    // Not over unsure words nothing like the query ("ran"), nor where a word heard there is said inside the query
    // ("light times" for "lighthouse": "light" fits its sound and outscores it there).
    const unsureRan = t.map((w) => (w.word === 'ran' ? { ...w, confidence: 0.3 } : w));
    expect(
      contestsOf(unsureRan, searchBySound(unsureRan, query, pronouncer), [at(5.95, 6.4)], HEARD_RULES, unsure),
    ).toEqual([]);
    const light = t.map((w) =>
      w.word === 'what' ? { ...w, word: 'light' } : w.word === 'op' ? { ...w, word: 'times' } : w,
    );
    expect(contestsOf(light, searchBySound(light, query, pronouncer), [at(3.0, 3.5)], HEARD_RULES, unsure)).toEqual([]);
  });

  it('lets a word said inside the query spare a detection its contest only where it lies where the query says it', () => {
    // awb under the bed: "island" (AY L AH N D) spotted at 3.87-4.28 s over "and" (AH N D, 3.87-4.11 s, unsure):
    // the query says "and" in its last three fifths, but the word is heard from the detection's very start.
    const island = words(['little', 3.49, 3.86, 0.29], ['and', 3.87, 4.11, 0.05], ['nobody', 4.36, 4.97, 0.65]);
    const unsure = { query: 'island', phones: 5, pronouncer };
    const contested = (ws: TimedWord[], d: Detection) =>
      contestsOf(ws, searchBySound(ws, 'island', pronouncer), [d], HEARD_RULES, unsure).map((c) => c.heard);
    expect(contested(island, at(3.87, 4.28, 0.84))).toEqual(['and']);
    // Where the query would say it (the word's middle in the detection's last three fifths), it is the query's sound.
    const late = words(['little', 3.49, 3.86, 0.29], ['and', 4.05, 4.28, 0.05], ['nobody', 4.36, 4.97, 0.65]);
    expect(contested(late, at(3.87, 4.28, 0.84))).toEqual([]);
    // awb's true "lighthouse" at 8.83-9.21 s, heard as "light times": "light" (8.79-9.00 s) where the query says it.
    const lighthouse = words(['the', 8.7, 8.78, 0.67], ['light', 8.79, 9.0, 0.53], ['times', 9.01, 9.57, 0.19]);
    expect(
      contestsOf(lighthouse, searchBySound(lighthouse, query, pronouncer), [at(8.83, 9.21, 0.844)], HEARD_RULES, {
        query,
        phones,
        pronouncer,
      }),
    ).toEqual([]);
  });

  it('ignores detections the spotter scored under likely', () => {
    const found = searchBySound(t, query, pronouncer);
    const merged = mergeHeard(
      t,
      found,
      [at(3.0, 3.5, HEARD_RULES.likely - 0.01), at(1.2, 1.75, HEARD_RULES.likely - 0.01)],
      query,
      phones,
      pronouncer,
    );
    expect([...merged.hits, ...merged.near_misses].some((h) => h.match === 'heard')).toBe(false);
  });

  it('lets a sound-alike or unsure exact hit stand only where the spotter heard the query over it', () => {
    const found = searchBySound(t, query, pronouncer);
    // no detection: "light towns" (sounds_like) becomes a near miss; "lighthouse", recognised with confidence, stays
    const unheard = mergeHeard(t, found, [], query, phones, pronouncer);
    expect(unheard.hits.map((h) => [h.match, h.words])).toEqual([['exact', [10, 10]]]);
    expect(unheard.near_misses.map((h) => [h.match, h.words])).toContainEqual(['sounds_like', [4, 5]]);
    // an exact hit of words recognition was unsure of needs a detection too
    const unsure = t.map((w) => (w.index === 10 ? { ...w, confidence: 0.3 } : w));
    const merged = mergeHeard(
      unsure,
      searchBySound(unsure, query, pronouncer),
      [at(1.2, 1.75)],
      query,
      phones,
      pronouncer,
    );
    expect(merged.hits.map((h) => [h.match, h.words])).toEqual([['sounds_like', [4, 5]]]);
    expect(merged.near_misses.map((h) => [h.match, h.words])).toContainEqual(['exact', [10, 10]]);
  });

  it('lets a likely detection vouch for a sound-alike only where it lasts long enough for the query, as a heard hit', () => {
    const found = searchBySound(t, query, pronouncer);
    const short = 1.15 + 0.9 * MIN_SECONDS_PER_PHONE * phones;
    const refused = mergeHeard(t, found, [at(1.15, short)], query, phones, pronouncer);
    expect(refused.hits.map((h) => [h.match, h.words])).toEqual([['exact', [10, 10]]]);
    expect(refused.near_misses.map((h) => [h.match, h.words])).toContainEqual(['sounds_like', [4, 5]]);
    // as long, but scored sure: it stands
    const sure = mergeHeard(t, found, [at(1.15, short, HEARD_RULES.sure)], query, phones, pronouncer);
    expect(sure.hits.map((h) => [h.match, h.words])).toContainEqual(['sounds_like', [4, 5]]);
  });

  it('makes a near miss that listening heard too a heard hit', () => {
    const u = words(['the', 0, 0.2, 0.9], ['white', 0.3, 0.6, 0.4], ['horse', 0.6, 1.0, 0.4], ['ran', 1.2, 1.5, 0.9]);
    const found = searchBySound(u, query, pronouncer);
    expect(found.near_misses.map((h) => h.text)).toEqual(['white horse']);
    const merged = mergeHeard(u, found, [at(0.3, 1.0)], query, phones, pronouncer);
    expect(merged.hits.map((h) => [h.match, h.text, h.words])).toEqual([['heard', 'white horse', [1, 2]]]);
    expect(merged.near_misses).toEqual([]);
  });

  it('gives a heard hit no word range where the words there do not coincide with it, only its cut', () => {
    const u = words(['a', 0, 0.1, 0.9], ['what', 1.0, 2.5, 0.3], ['is', 3.0, 3.2, 0.9]);
    const merged = mergeHeard(u, { hits: [], near_misses: [] }, [at(1.8, 2.4)], 'what', 3, pronouncer);
    const h = [...merged.hits, ...merged.near_misses][0]!;
    expect(h.words).toBeUndefined();
    expect(h.cut).toEqual([0.85, 2.65]); // a handle around the detection and the word heard over it
  });
});

describe("a detection's length, against the speaker's own pace", () => {
  const query = 'lighthouse';
  const phones = 6;
  /** "what op" heard unsure at 3.0 s, then 24 words ("sat", 3 phones) said surely at `perPhone` seconds a phone. */
  const spoken = (perPhone: number) =>
    words(
      ['what', 3.0, 3.15, 0.4],
      ['op', 3.15, 3.3, 0.3],
      ...Array.from({ length: 24 }, (_, i): [string, number, number, number] => [
        'sat',
        5 + i,
        5 + i + 3 * perPhone,
        0.9,
      ]),
    );
  // kal's heron: 0.054 s a phone, 0.865, its contest held (0.856 against the words' 0.858); kal says every word quickly
  const short = (confidence = 0.865): Detection => at(3.0, 3.0 + 0.045 * phones, confidence);
  const held = (d: Detection): Detection => ({ ...d, rival: { query: 0.856, heard: 0.858 } });
  const heardHits = (ws: TimedWord[], d: Detection) =>
    mergeHeard(ws, searchBySound(ws, query, pronouncer), [d], query, phones, pronouncer).hits.map((h) => [
      h.match,
      h.text,
    ]);

  it('asks a quick speaker for a share of their pace, never more than the fixed minimum', () => {
    expect(minSecondsPerPhone(spoken(0.07), pronouncer)).toBeCloseTo(PACE_SHARE * 0.07, 5);
    expect(minSecondsPerPhone(spoken(0.12), pronouncer)).toBe(MIN_SECONDS_PER_PHONE);
    // too few sure words to measure a pace on
    expect(minSecondsPerPhone(spoken(0.07).slice(0, 12), pronouncer)).toBe(MIN_SECONDS_PER_PHONE);
  });

  it("makes a detection long enough for a quick speaker's pace a heard hit where it is heard well and holds its contest", () => {
    const quick = spoken(0.07);
    expect(heardHits(quick, held(short()))).toEqual([['heard', 'what op']]);
    // it is contested (only a detection scored PACE_CONFIDENCE or more, short of the fixed minimum)
    const found = searchBySound(quick, query, pronouncer);
    const unsure = { query, phones, pronouncer };
    expect(contestsOf(quick, found, [short()], HEARD_RULES, unsure).map((c) => c.heard)).toEqual(['what op']);
    expect(contestsOf(quick, found, [short(PACE_CONFIDENCE - 0.01)], HEARD_RULES, unsure)).toEqual([]);
    // not contested, scored under PACE_CONFIDENCE (awb's "mountain" over "brought a bottle", 0.844), or lost
    expect(heardHits(quick, short())).toEqual([]);
    expect(heardHits(quick, held(short(PACE_CONFIDENCE - 0.01)))).toEqual([]);
    expect(heardHits(quick, { ...short(), rival: { query: 0.84, heard: 0.87 } })).toEqual([]);
    // the same detection, as long, from a slower speaker: too short
    expect(heardHits(spoken(0.12), held(short()))).toEqual([]);
    // over words recognition was sure of, winning its contest, it is still too short (a real voice's "cold" over
    // "the oldest")
    const sure = quick.map((w) => (w.index < 2 ? { ...w, confidence: 0.9 } : w));
    expect(heardHits(sure, { ...short(), rival: { query: 0.9, heard: 0.8 } })).toEqual([]);
    expect(heardHits(sure, { ...at(3.0, 3.4), rival: { query: 0.9, heard: 0.8 } })).toEqual([['heard', 'what op']]);
  });

  it("does not let a detection vouch for a sound-alike by a quick speaker's pace", () => {
    // slt's "her in", a sound-alike of "heron", vouched for by a detection 0.042 s a phone: not "heron"
    const quick = [...spoken(0.07).slice(2), ...words(['light', 1.15, 1.3, 0.3], ['towns', 1.3, 1.45, 0.2])];
    const found = searchBySound(quick, query, pronouncer);
    expect(found.hits.map((h) => h.text)).toEqual(['light towns']);
    const merged = mergeHeard(quick, found, [held(at(1.15, 1.15 + 0.045 * phones, 0.865))], query, phones, pronouncer);
    expect(merged.hits).toEqual([]);
  });
});

describe("rival words: what the asset's own speech says that sounds like the query", () => {
  // slt's recording: "keeper" recognised surely once, heard as "teacher" (unsure) and "keep her" elsewhere.
  const t = words(
    ['the', 2.4, 2.55, 0.9],
    ['keep', 2.6, 2.8, 0.07],
    ['her', 2.8, 3.0, 0.08],
    ['teacher', 12.67, 13.04, 0.35],
    ['lighthouse', 17.0, 17.45, 1],
    ['keeper', 17.47, 17.93, 1],
    ['best', 25.5, 25.7, 0.9],
    ['harbor', 16.0, 16.5, 0.9],
  );

  it('are words heard surely that sound like the query, not the query, nor shorter than it by two phones', () => {
    expect(rivalWords(t, 'teacher', 4, pronouncer)).toEqual(['keeper']);
    // "teacher" is unsure and "keep" is short: no rival for "keeper".
    expect(rivalWords(t, 'keeper', 4, pronouncer)).toEqual([]);
    // "harbor" is said as "harbour": the query's own sound is no rival of it; "best" is too short for "postman".
    expect(rivalWords(t, 'harbour', 5, pronouncer)).not.toContain('harbor');
    expect(rivalWords(t, 'postman', 7, pronouncer)).not.toContain('best');
  });

  it('refuse a hit a rival outscores where it lies, but not a sure exact hit', () => {
    const hit = (start: number, end: number, match: FoundHit['match'], w?: [number, number]): FoundHit => ({
      start_seconds: start,
      end_seconds: end,
      text: '',
      match,
      score: 1,
      ...(w ? { words: w } : {}),
    });
    const found = {
      hits: [hit(2.63, 2.99, 'heard'), hit(12.67, 13.04, 'exact', [3, 3]), hit(17.47, 17.93, 'heard')],
      near_misses: [],
    };
    const query = [at(2.63, 2.99, 0.873), at(12.67, 13.02, 0.866), at(17.47, 17.93, 0.878)];
    const rivals = [at(2.6, 3.0, 0.897), at(12.67, 13.0, 0.89), at(17.5, 17.9, 0.884)];
    const judged = vetoRivals(t, found, query, rivals);
    expect(judged.hits).toEqual([]);
    expect(judged.near_misses.map((h) => h.start_seconds)).toEqual([2.63, 12.67, 17.47]);
    // Where the query scores higher, or the rival lies elsewhere, the hit stands.
    expect(vetoRivals(t, found, query, [at(2.6, 3.0, 0.86), at(5, 6, 0.99)]).hits).toHaveLength(3);
    // A hit recognition was sure of and spelled as the query is not judged.
    const sure = { hits: [hit(17.47, 17.93, 'exact', [5, 5])], near_misses: [] };
    expect(vetoRivals(t, sure, [at(17.47, 17.93, 0.8)], [at(17.47, 17.93, 0.9)]).hits).toHaveLength(1);
  });
});

describe('keyword spotting files', () => {
  it('writes a dictionary of the phrase words with their variants, and a kws line per phrase', () => {
    expect(
      dictionaryOf(
        new Map([
          ['light', ['L AY T']],
          ['house', ['HH AW S', 'HH AW Z']],
        ]),
      ),
    ).toBe('house HH AW S\nhouse(2) HH AW Z\nlight L AY T\n');
    expect(kwsFileOf([{ text: 'light house', threshold: 1e-24 }])).toBe('light house /1e-24/\n');
  });

  it("reads 0.8's detections, phrases with spaces too, on the asset's clock", () => {
    const out =
      'keep her  light house\nkeep her  18.340 18.700 0.875277\nlight house  1.190 1.510 0.819367\nINFO: x 1 2 3\n';
    expect(parseSpotted(out, ['light house', 'keep her'], 10)).toEqual([
      { phrase: 'keep her', start: 28.34, end: 28.7, confidence: 0.875277 },
      { phrase: 'light house', start: 11.19, end: 11.51, confidence: 0.819367 },
    ]);
  });
});
