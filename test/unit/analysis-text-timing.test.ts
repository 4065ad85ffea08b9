// A known text's word times from a forced alignment and the speech measured in the sound (src/analysis/text-timing.ts).
// The cases are the ones met on flite's voices under a chord bed (bench/README.md, "Aligned to the sound").
import { describe, expect, it } from 'vitest';
import { alignChunks, timesBySound, type PlacedTime } from '../../src/analysis/text-timing.js';
import type { TimedWord } from '../../src/edit/words.js';

const guideOf = (times: [string, number, number][]): TimedWord[] =>
  times.map(([word, start_seconds, end_seconds], index) => ({ index, word, start_seconds, end_seconds }));
const placedOf = (times: [number, number][]) =>
  new Map<number, PlacedTime>(times.map(([start, end], i) => [i, { start, end }]));
const spans = (w: TimedWord[]) => w.map((x) => [x.start_seconds, x.end_seconds]);

describe('timesBySound', () => {
  it('takes a word the engine put in the pause before it to the speech no word was given', () => {
    // "morning. | Rain fell": Rain placed over the pause, its own sound (19.50-19.69) given to no word.
    const guide = guideOf([
      ['morning.', 17.86, 18.22],
      ['Rain', 18.22, 18.23],
      ['fell', 18.23, 18.23],
    ]);
    const placed = placedOf([
      [17.9, 18.323],
      [18.323, 19.293],
      [19.843, 20.043],
    ]);
    const speech = [
      { from: 18.03, to: 18.35 },
      { from: 19.5, to: 19.69 },
      { from: 19.885, to: 20.24 },
    ];
    expect(spans(timesBySound(guide, placed, speech))).toEqual([
      [17.9, 18.323],
      [19.5, 19.843],
      [19.843, 20.043],
    ]);
  });

  it('takes off a long pause a word was run over, and leaves a soft onset the speech measure missed', () => {
    // The silence before a text's first word (0.92 s), and "came" run over the pause after the sentence; "keeper"'s
    // soft k is not measured as speech for 0.33 s, but the engine's time is right.
    const guide = guideOf([
      ['The', 0, 0.94],
      ['keeper', 1.52, 1.88],
      ['came', 3.5, 3.9],
      ['She', 4.9, 5.2],
    ]);
    const placed = placedOf([
      [0, 0.98],
      [1.73, 2.21],
      [3.58, 4.87],
      [4.9, 5.2],
    ]);
    const speech = [
      { from: 0.92, to: 1.0 },
      { from: 2.06, to: 2.2 },
      { from: 3.6, to: 4.0 },
      { from: 4.9, to: 5.2 },
    ];
    expect(spans(timesBySound(guide, placed, speech))).toEqual([
      [0.92, 0.98],
      [1.73, 2.21],
      [3.58, 4.0],
      [4.9, 5.2],
    ]);
  });

  it('does not move a word with speech of its own to a stray run of speech beside it', () => {
    // "midnight." at a recording's end: 0.13 s of it measured as speech, a bed's swell after it measured as speech.
    const guide = guideOf([
      ['at', 28.9, 29.2],
      ['midnight.', 29.2, 29.7],
    ]);
    const placed = placedOf([
      [28.98, 29.27],
      [29.27, 29.7],
    ]);
    const speech = [
      { from: 29.115, to: 29.256 },
      { from: 29.47, to: 29.601 },
      { from: 30.005, to: 30.291 },
    ];
    expect(spans(timesBySound(guide, placed, speech))).toEqual([
      [28.98, 29.27],
      [29.27, 29.7],
    ]);
  });

  it("keeps recognition's time for a word it heard near where the sound puts it, not one it put far off", () => {
    // "on" matched to an earlier "on" 1.85 s away (kal under a bed); "the" heard 40 ms from the forced boundary.
    const guide = guideOf([
      ['on', 18.23, 18.71],
      ['the', 20.22, 20.36],
      ['roof', 20.4, 20.7],
    ]);
    const placed = placedOf([
      [20.08, 20.26],
      [20.26, 20.4],
      [20.4, 20.75],
    ]);
    const speech = [{ from: 20.05, to: 20.8 }];
    expect(spans(timesBySound(guide, placed, speech, new Set([0, 1, 2])))).toEqual([
      [20.08, 20.26],
      [20.26, 20.36],
      [20.4, 20.7],
    ]);
    // Not heard as itself: the sound's time.
    expect(spans(timesBySound(guide, placed, speech, new Set([0])))).toEqual([
      [20.08, 20.26],
      [20.26, 20.4],
      [20.4, 20.75],
    ]);
  });

  it("gives a sentence's last word put on the next sentence's onset back to the end of the word before it", () => {
    // kal under a bed 10 dB down: "came" run over the pause after "came up." (trimmed to its speech), "up." put on the
    // first 70 ms of "She" (true: came 3.55-3.82, up 3.82-4.00, She 4.92).
    const guide = guideOf([
      ['sun', 3.3, 3.58],
      ['came', 3.58, 3.92],
      ['up.', 4.8, 4.87],
      ['She', 4.87, 5.2],
    ]);
    const placed = placedOf([
      [3.3, 3.58],
      [3.58, 4.87],
      [4.87, 4.94],
      [4.94, 5.23],
    ]);
    const speech = [
      { from: 2.6, to: 4.0 },
      { from: 4.88, to: 5.6 },
    ];
    const ends = [false, false, true, false];
    // "came" 3.58-4.0 by the sound; "up" the last third of it (two letters of six).
    expect(spans(timesBySound(guide, placed, speech, new Set(), ends))).toEqual([
      [3.3, 3.58],
      [3.58, 3.86],
      [3.86, 4.0],
      [4.94, 5.23],
    ]);
    // Where speech after the word before was given to no word, that is the last word's.
    const untrimmed = placedOf([
      [3.3, 3.58],
      [3.58, 3.85],
      [4.87, 4.94],
      [4.94, 5.23],
    ]);
    expect(spans(timesBySound(guide, untrimmed, speech, new Set(), ends))).toEqual([
      [3.3, 3.58],
      [3.58, 3.85],
      [3.85, 4.0],
      [4.94, 5.23],
    ]);
    // A sentence's first word after a pause, running into the next, is where it is said.
    expect(spans(timesBySound(guide, untrimmed, speech, new Set(), [false, true, false, false]))).toEqual([
      [3.3, 3.58],
      [3.58, 3.85],
      [4.87, 4.94],
      [4.94, 5.23],
    ]);
  });

  it("keeps the guide's time for a word the alignment did not place, never running backwards", () => {
    const guide = guideOf([
      ['one', 1, 1.4],
      ['two', 1.2, 1.6],
      ['three', 2, 2.4],
    ]);
    const placed = new Map<number, PlacedTime>([
      [0, { start: 1.1, end: 1.5 }],
      [2, { start: 2.05, end: 2.4 }],
    ]);
    expect(spans(timesBySound(guide, placed, [{ from: 1, to: 2.5 }]))).toEqual([
      [1.1, 1.5],
      [1.5, 1.6],
      [2.05, 2.4],
    ]);
  });
});

describe('alignChunks', () => {
  it('groups whole sentences up to the length, each with the next sentence as context', () => {
    // Four sentences of 20 s each (by the guide), words of 5 s; runs of at most 45 s.
    const guide = guideOf(
      Array.from({ length: 16 }, (_, i) => [`w${i}`, i * 5, i * 5 + 5] as [string, number, number]),
    );
    const ends = guide.map((_, i) => i % 4 === 3);
    expect(alignChunks(guide, ends, 45)).toEqual([
      { first: 0, last: 7, through: 11 },
      { first: 8, last: 15, through: 15 },
    ]);
    // A sentence longer than a run is a run of its own.
    expect(alignChunks(guide, ends, 10)).toEqual([
      { first: 0, last: 3, through: 7 },
      { first: 4, last: 7, through: 11 },
      { first: 8, last: 11, through: 15 },
      { first: 12, last: 15, through: 15 },
    ]);
  });
});
