// Words as data (src/edit/words.ts): a text split into words, aligned to what was heard, sentences, phrase search,
// and clips whose in and out points fall in the pauses around words.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  alignText,
  cutAroundEdges,
  RUN_ON_FADE,
  unheardRuns,
  unheardSpan,
  unheardWords,
  findPhrase,
  heardWords,
  matchWords,
  sentencesOf,
  textWords,
  wordKey,
  type TimedWord,
} from '../../src/edit/words.js';
import { grammarOf, parseEngineOutput, splitPoints } from '../../src/media/speech.js';

const heard = (...ws: [string, number, number][]) => ws.map(([word, start, end]) => ({ word, start, end }));

describe('a known text', () => {
  it('splits into words as written, with keys for matching and its sentence ends', () => {
    const w = textWords('"Don\u2019t stop," she said \u2014 the well-known ship (at 9). Done!');
    expect(w.map((x) => x.word)).toEqual([
      'Don\u2019t',
      'stop',
      'she',
      'said',
      'the',
      'well',
      'known',
      'ship',
      'at',
      '9).',
      'Done!',
    ]);
    expect(w.map((x) => x.key)).toEqual([
      "don't",
      'stop',
      'she',
      'said',
      'the',
      'well',
      'known',
      'ship',
      'at',
      '9',
      'done',
    ]);
    expect(w.filter((x) => x.endsSentence).map((x) => x.key)).toEqual(['9', 'done']);
    expect(wordKey('...')).toBe('');
  });

  it('matches the longest common run of words, so a missed or misheard word does not shift the rest', () => {
    expect(matchWords(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd'])).toEqual([0, -1, 2, 3]);
    expect(matchWords(['a', 'b', 'c'], ['b', 'c', 'c'])).toEqual([-1, 0, 1]);
    expect(matchWords(['a', 'b'], [])).toEqual([-1, -1]);
  });

  it('places every word: heard ones at their times, the others between their neighbours by length', () => {
    const text = textWords('one two three four.');
    const { words, unplaced } = alignText(text, heard(['one', 1, 1.2], ['four', 2, 2.4]), { from: 0, to: 5 });
    expect(unplaced).toEqual([1, 2]);
    expect(words.map((w) => [w.word, w.start_seconds, w.end_seconds])).toEqual([
      ['one', 1, 1.2],
      ['two', 1.2, 1.5],
      ['three', 1.5, 2],
      ['four.', 2, 2.4],
    ]);
    // Missed at the span's ends: beside the placed word, as long as they take to say, not across the silence there.
    const edges = alignText(textWords('A heron stood up'), heard(['heron', 4.9, 5.2], ['stood', 5.2, 5.5]), {
      from: 3.5,
      to: 8,
    });
    expect(edges.words.map((w) => [w.word, w.start_seconds, w.end_seconds])).toEqual([
      ['A', 4.78, 4.9],
      ['heron', 4.9, 5.2],
      ['stood', 5.2, 5.5],
      ['up', 5.5, 5.64],
    ]);
    // Nothing heard: the whole span shared out.
    const none = alignText(textWords('a bb'), [], { from: 3, to: 6 });
    expect(none.words.map((w) => [w.start_seconds, w.end_seconds])).toEqual([
      [3, 4],
      [4, 6],
    ]);
  });

  it("groups sentences at the text's ends, or at pauses when there is no text", () => {
    const text = textWords('Hello there. Go now!');
    const { words } = alignText(
      text,
      heard(['hello', 0, 0.3], ['there', 0.35, 0.6], ['go', 0.7, 0.9], ['now', 0.95, 1.2]),
      { from: 0, to: 2 },
    );
    expect(
      sentencesOf(
        words,
        text.map((w) => w.endsSentence),
      ).map((s) => [s.text, s.first_word, s.last_word]),
    ).toEqual([
      ['Hello there.', 0, 1],
      ['Go now!', 2, 3],
    ]);
    const free = heardWords(heard(['a', 0, 0.2], ['b', 0.3, 0.5], ['c', 1.5, 1.7]));
    expect(sentencesOf(free).map((s) => s.text)).toEqual(['a b', 'c']);
  });
});

describe('phrases and clips', () => {
  const words: TimedWord[] = heardWords(
    heard(['The', 0.5, 0.7], ['storm,', 0.72, 1.1], ['the', 2, 2.1], ['STORM', 2.15, 2.6], ['ended', 2.6, 3]),
  );

  it('finds every occurrence, case and punctuation ignored', () => {
    expect(findPhrase(words, 'the storm')).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(findPhrase(words, 'Storm the!')).toEqual([[1, 2]]);
    expect(findPhrase(words, '  ')).toEqual([]);
  });
});

describe('cuts around words heard in the sound', () => {
  const pause = (from: number, to: number, quietest = (from + to) / 2) => ({ from, to, quietest });
  const at = (levels: { level: number; from: number; to: number }[], t: number) =>
    levels.find((l) => t >= l.from && t < l.to)?.level ?? 1;

  it('keeps a handle of pause where there is room, and cuts at the quietest point of a shorter pause', () => {
    const c = cutAroundEdges(
      { onset: 2, before: pause(1, 2), end: 3, after: pause(3, 3.05, 3.02) },
      { handle: 0.15, fadeSec: 0.005, duration: 10 },
    );
    expect([c.soundIn, c.soundOut, c.shortBefore, c.shortAfter]).toEqual([1.85, 3.02, false, true]);
    // No frame grid: the cut is the sound; it rises over 5 ms inside the handle and is whole over the words.
    expect([c.start, c.end]).toEqual([1.85, 3.02]);
    expect(at(c.levels, 1.851)).toBeLessThan(1);
    expect(at(c.levels, 1.855)).toBe(1);
    expect(at(c.levels, 3.0)).toBe(1);
  });

  it("where the words run into their neighbours, fades the neighbour's part in and out beside the edges, no step", () => {
    // (The edge lies in running speech: a level switched from 0 to 1 there is a click.)
    const c = cutAroundEdges(
      {
        onset: 2,
        before: pause(2, 2, 2),
        end: 3,
        after: pause(3, 3, 3),
        runOnBefore: true,
        runOnAfter: true,
      },
      { handle: 0.15, fadeSec: 0.005, duration: 10 },
    );
    expect([c.soundIn, c.soundOut, c.runOnBefore, c.runOnAfter]).toEqual([
      2 - RUN_ON_FADE,
      3 + RUN_ON_FADE,
      true,
      true,
    ]);
    expect(at(c.levels, 2)).toBe(1);
    expect(at(c.levels, 2.999)).toBe(1);
    // From silence at the cut's ends to full level over the words, in steps of at most 0.2.
    const steps = [0];
    for (let t = c.start + 0.0005; t < c.end; t += 0.001) steps.push(at(c.levels, t));
    steps.push(0);
    expect(Math.max(...steps.slice(1).map((l, k) => Math.abs(l - steps[k]!)))).toBeLessThanOrEqual(0.2);
  });

  it('fades an edge placed at a hiss heard in the sound over its own, shorter fade, still in steps of at most 0.2', () => {
    const c = cutAroundEdges(
      {
        onset: 2,
        before: pause(2, 2, 2),
        end: 3,
        after: pause(3, 3, 3),
        runOnBefore: true,
        runOnAfter: true,
        runOnFadeBefore: 0.005,
      },
      { handle: 0.15, fadeSec: 0.005, duration: 10 },
    );
    expect([c.soundIn, c.soundOut]).toEqual([1.995, 3 + RUN_ON_FADE]);
    const steps = [0];
    for (let t = c.start + 0.0005; t < 2.001; t += 0.001) steps.push(at(c.levels, t));
    expect(steps.at(-1)).toBe(1);
    expect(Math.max(...steps.slice(1).map((l, k) => Math.abs(l - steps[k]!)))).toBeLessThanOrEqual(0.2 + 1e-9);
  });

  it('takes the whole frames around the sound, muted beyond it, and the handle is settable', () => {
    const frameSec = 1 / 25;
    const grid = {
      clock: (s: number) => Math.ceil((s - 0.0005 - 1e-6) / frameSec) * frameSec,
      frameSec,
      firstSec: 0,
      tailMarginSec: 0,
    };
    const c = cutAroundEdges(
      { onset: 2.013, before: pause(1.5, 2.013), end: 3.111, after: pause(3.111, 4) },
      { handle: 0.05, fadeSec: 0.005, duration: 10, grid },
    );
    expect([c.soundIn, c.soundOut]).toEqual([1.963, 3.161]);
    expect([c.start, c.end]).toEqual([1.96, 3.2]);
    expect(at(c.levels, 1.961)).toBe(0);
    expect(at(c.levels, 3.17)).toBe(0);
    expect(at(c.levels, 2.013)).toBe(1);
  });

  it('never cuts into the words it was given, nor keeps more than the handle of sound beside them (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.double({ min: 0.05, max: 3, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.constantFrom(undefined, 24, 25, 30000 / 1001, 50),
        (onset, length, gapBefore, gapAfter, handle, fps) => {
          const end = onset + length;
          const duration = end + gapAfter + 0.5;
          const frameSec = fps ? 1 / fps : 0;
          const grid = fps
            ? {
                clock: (s: number) => Math.max(s, Math.ceil((s - 0.0005 - 1e-6) / frameSec) * frameSec),
                frameSec,
                firstSec: 0,
                tailMarginSec: 0,
              }
            : undefined;
          const before = pause(Math.max(0, onset - gapBefore), onset, Math.max(0, onset - gapBefore / 3));
          const after = pause(end, end + gapAfter, end + gapAfter / 3);
          const c = cutAroundEdges(
            { onset, before, end, after },
            { handle, fadeSec: 0.005, duration, ...(grid ? { grid } : {}) },
          );
          // Whole over the words (to the millisecond they are written in), heard no further than the handle.
          for (let t = Math.ceil(onset * 1000) / 1000; t < end - 0.001; t += Math.max(0.001, length / 50))
            expect(at(c.levels, t)).toBe(1);
          expect(c.soundIn).toBeGreaterThanOrEqual(Math.floor((onset - handle) * 1000) / 1000 - 1e-9);
          expect(c.soundOut).toBeLessThanOrEqual(Math.ceil((end + handle) * 1000) / 1000 + 1e-9);
          expect(c.soundIn).toBeLessThanOrEqual(onset + 1e-9);
          expect(c.soundOut).toBeGreaterThanOrEqual(Math.min(duration, end) - 1e-9);
          // The picture starts on a frame the clock keeps, at or before the sound; silent outside the sound.
          if (grid) expect(grid.clock(c.start)).toBeLessThanOrEqual(c.soundIn + 1e-6);
          expect(c.start).toBeLessThanOrEqual(c.soundIn);
          expect(c.end).toBeGreaterThanOrEqual(c.soundOut);
          if (c.start < c.soundIn) expect(at(c.levels, c.start)).toBe(0);
          const sorted = [...c.levels].sort((x, y) => x.from - y.from);
          sorted.forEach((l, i) => {
            expect(l.to).toBeGreaterThan(l.from);
            expect(l.from).toBeGreaterThanOrEqual(c.start);
            expect(l.to).toBeLessThanOrEqual(c.end);
            if (i) expect(l.from).toBeGreaterThanOrEqual(sorted[i - 1]!.to);
          });
        },
      ),
      // The example: a handle of 1e-9 s once added a millisecond to an out point already rounded up to one.
      { numRuns: 60, examples: [[0, 0.050000001, 0, 0.000999998999999998, 1.0000000029430911e-9, undefined]] },
    );
  }, 30_000);
});

describe("the engine's side", () => {
  it("reads 0.8's word lines and 5.x's JSON, without fillers, on the asset's clock", () => {
    const out08 =
      'the storm\n<s> 0.110 0.200 0.999900\nthe 0.21 0.4 0.9\n<sil> 0.4 0.5 1\nstorm(2) 0.5 0.9 0.7\n[NOISE] 0.9 1 1\n</s> 1.0 1.1 1\n';
    expect(parseEngineOutput('0.8', out08, 10)).toEqual([
      { word: 'the', start: 10.21, end: 10.4, confidence: 0.9 },
      { word: 'storm', start: 10.5, end: 10.9, confidence: 0.7 },
    ]);
    const out5 =
      '{"b":0.0,"d":1.1,"p":1,"t":"the storm","w":[{"t":"<sil>","b":0,"d":0.2,"p":1},{"t":"the","b":0.21,"d":0.19,"p":0.9},{"t":"storm","b":0.5,"d":0.4,"p":0.7}]}\n';
    expect(parseEngineOutput('5', out5, 0).map((w) => w.word)).toEqual(['the', 'storm']);
  });

  it("keeps confidences in 0-1 where the engine's integer log arithmetic gives a posterior a little over 1", () => {
    // PocketSphinx 0.8 printed "1.0010" for a word heard for sure (1.0001^10); read as 1.001 before.
    expect(parseEngineOutput('0.8', 'the 0.21 0.4 1.0010\n', 0)[0]!.confidence).toBe(1);
    const out5 = '{"w":[{"t":"the","b":0.21,"d":0.19,"p":1.001}]}\n';
    expect(parseEngineOutput('5', out5, 0)[0]!.confidence).toBe(1);
  });

  it("holds recognition to a text's words with a grammar of them, each once", () => {
    expect(grammarOf(['the', 'storm', 'the'])).toBe('#JSGF V1.0;\ngrammar text;\npublic <text> = ( storm | the )* ;\n');
  });

  it('splits long sound where it is quietest near each even boundary, reading only the seconds around it', async () => {
    const pcm = new Int16Array(16000 * 60).fill(1000);
    pcm.fill(0, 16000 * 28, 16000 * 28 + 3200); // a pause at 28.0-28.2 s
    const reads: number[] = [];
    const points = await splitPoints(pcm.length, 2, async (start, count) => {
      reads.push(count);
      return pcm.slice(start, start + count);
    });
    expect(points).toHaveLength(3);
    expect(points[1]! / 16000).toBeGreaterThanOrEqual(28);
    expect(points[1]! / 16000).toBeLessThanOrEqual(28.2);
    // The sound held to find a split: the 6 s around the boundary, not the minute.
    expect(reads).toEqual([16000 * 6]);
  });

  it('reads 6 s around each boundary of an hour, however many pieces', async () => {
    const hour = 16000 * 3600;
    const reads: number[] = [];
    const points = await splitPoints(hour, 4, async (_start, count) => {
      reads.push(count);
      return new Int16Array(count).fill(500);
    });
    expect(points).toHaveLength(5);
    expect(points[0]).toBe(0);
    expect(points[4]).toBe(hour);
    expect(Math.max(...reads)).toBeLessThanOrEqual(16000 * 6);
    expect(reads).toHaveLength(3);
  });
});

describe('words a text holds that were never said', () => {
  it('marks placed words squeezed beside unheard ones as doubtful, and refuses a span whose edges were not heard', () => {
    const text = textWords('We ate lunch. It was sunny and warm. He put the box down.');
    // The engine heard the first and last sentences; "It" was pulled onto 70 ms of the junction.
    const heardWs = heard(
      ['we', 0.1, 0.3],
      ['ate', 0.31, 0.6],
      ['lunch', 0.61, 1],
      ['it', 1.0, 1.07],
      ['he', 1.3, 1.45],
      ['put', 1.46, 1.7],
      ['box', 1.77, 2.1],
      ['down', 2.11, 2.5],
    );
    const a = alignText(text, heardWs, { from: 0, to: 3 });
    expect(a.unplaced).toEqual([4, 5, 6, 7, 10]);
    expect(a.doubtful).toEqual([3]);
    const unheard = unheardWords(a.words, a.unplaced, a.doubtful);
    expect([...unheard].sort((x, y) => x - y)).toEqual([3, 4, 5, 6, 7]);
    expect(unheardSpan(a.words, 5, 7, unheard)).toMatch(
      /^not heard: "sunny and warm\." .*nearest heard words are "lunch\." \(word 2, 0\.61-1 s\) and "He" \(word 8/,
    );
    expect(unheardSpan(a.words, 3, 8, unheard)).toMatch(/^not heard/);
    // "the", missed alone between heard words, is placed between them and cut by; so is a span whose edges were heard.
    expect(unheardSpan(a.words, 8, 12, unheard)).toBeUndefined();
    expect(unheardSpan(a.words, 10, 11, unheard)).toBeUndefined();
    // The run a span touches, whole, with the time between its heard neighbours ("lunch." ends at 1, "He" starts at
    // 1.3).
    expect(unheardRuns(a.words, 5, 9, unheard)).toEqual([{ first: 3, last: 7, from: 1, to: 1.3 }]);
    expect(unheardRuns(a.words, 8, 12, unheard)).toEqual([]);
  });
});
