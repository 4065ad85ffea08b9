// Where a cut by words may go close to a neighbour it runs into (src/analysis/word-joins.ts): only where the
// transcript hears no pause and a forced alignment of the words around the edge agrees with it on the boundary, and
// then at the side of the two boundaries that keeps more of the cut's word.
import { describe, expect, it } from 'vitest';
import { agreedBoundaries, runsOn, type Realigned } from '../../src/analysis/word-joins.js';
import type { TimedWord } from '../../src/edit/words.js';

const word = (index: number, start: number, end: number): TimedWord => ({
  index,
  word: `w${index}`,
  start_seconds: start,
  end_seconds: end,
});
// Four words running together (the 0.8 engine prints a word's last frame: 10 ms before the next one starts).
const words = [word(0, 1.0, 1.29), word(1, 1.3, 1.59), word(2, 1.6, 1.89), word(3, 1.9, 2.2)];

describe('agreedBoundaries', () => {
  it('takes the earlier boundary before the first word and the later one after the last, where they agree', () => {
    // "the|sun kept|a": the s's hiss marks the first join, the t's release into the vowel the second.
    const forced: Realigned = new Map([
      [0, { start: 1.0, end: 1.288, firstPhones: ['DH'], lastPhones: ['AH'] }],
      [1, { start: 1.288, end: 1.602, firstPhones: ['S'], lastPhones: ['N'] }],
      [2, { start: 1.602, end: 1.905, firstPhones: ['K'], lastPhones: ['T'] }],
      [3, { start: 1.905, end: 2.2, firstPhones: ['AH', 'EY'], lastPhones: ['AH', 'EY'] }],
    ]);
    const b = agreedBoundaries(words, forced, 1, 2);
    expect(b.before).toBeCloseTo(1.288, 6); // transcript 1.295, aligned 1.288
    expect(b.after).toBeCloseTo(1.905, 6); // transcript 1.895, aligned 1.905
    // The s's onset is one the sound places closer (join-landmarks.ts); the t's release is not.
    expect(b.hissBefore).toBe(true);
    expect(b.hissAfter).toBeUndefined();
  });

  it('leaves a join no phone marks alone ("saw|a": a vowel into a vowel; "market|to"), however well the two agree', () => {
    const forced: Realigned = new Map([
      [0, { start: 1.0, end: 1.295, firstPhones: ['S'], lastPhones: ['AO'] }],
      [1, { start: 1.295, end: 1.595, firstPhones: ['AH', 'EY'], lastPhones: ['AH', 'EY'] }],
      [2, { start: 1.595, end: 1.895, firstPhones: ['SH', 'W'], lastPhones: ['P'] }],
    ]);
    expect(agreedBoundaries(words, forced, 1, 1)).toEqual({}); // a|SH or a|W: not every pronunciation marks it
    const stops: Realigned = new Map([
      [0, { start: 1.0, end: 1.295, firstPhones: ['M'], lastPhones: ['T'] }],
      [1, { start: 1.295, end: 1.595, firstPhones: ['T'], lastPhones: ['UW'] }],
    ]);
    expect(agreedBoundaries(words, stops, 1, 1)).toEqual({}); // one closure running into the next
    const fading: Realigned = new Map([
      [0, { start: 1.0, end: 1.295, firstPhones: ['R'], lastPhones: ['Z'] }],
      [1, { start: 1.295, end: 1.595, firstPhones: ['AH', 'AE'], lastPhones: ['D'] }],
    ]);
    expect(agreedBoundaries(words, fading, 1, 1)).toEqual({}); // "roses|and": a z fading into a vowel
  });

  it('leaves an edge alone where the two lie apart, a word was not aligned, or the transcript hears a pause', () => {
    const forced: Realigned = new Map([
      [0, { start: 1.0, end: 1.25, firstPhones: ['S'], lastPhones: ['T'] }],
      [1, { start: 1.25, end: 1.6, firstPhones: ['S'], lastPhones: ['T'] }],
      [2, { start: 1.6, end: 1.9, firstPhones: ['S'], lastPhones: ['T'] }],
    ]);
    expect(agreedBoundaries(words, forced, 1, 2)).toEqual({}); // 45 ms apart before; word 3 not aligned after
    const paused = [word(0, 1.0, 1.2), word(1, 1.3, 1.59), word(2, 1.6, 1.89)];
    const aligned: Realigned = new Map([
      [0, { start: 1.0, end: 1.25, firstPhones: ['S'], lastPhones: ['T'] }],
      [1, { start: 1.25, end: 1.6, firstPhones: ['S'], lastPhones: ['T'] }],
    ]);
    expect(agreedBoundaries(paused, aligned, 1, 1)).toEqual({});
  });
});

describe('runsOn', () => {
  it('says whether a cut runs into a neighbour word at either edge', () => {
    expect(runsOn(words, 1, 2)).toBe(true);
    expect(runsOn(words, 0, 3)).toBe(false);
    const paused = [word(0, 1.0, 1.2), word(1, 1.3, 1.59), word(2, 1.7, 1.9)];
    expect(runsOn(paused, 1, 1)).toBe(false);
  });
});
