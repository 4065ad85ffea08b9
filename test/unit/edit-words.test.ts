// Words as data (src/edit/words.ts): a text split into words, aligned to what was heard, sentences, phrase search,
// and clips whose in and out points fall in the pauses around words.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WORD_HANDLE_SECONDS, alignText, clipAroundWords, findPhrase, heardWords, matchWords, sentencesOf, textWords, wordKey, type TimedWord } from '../../src/edit/words.js';
import { grammarOf, parseEngineOutput, splitPoints } from '../../src/media/speech.js';

const heard = (...ws: [string, number, number][]) => ws.map(([word, start, end]) => ({ word, start, end }));

describe('a known text', () => {
  it('splits into words as written, with keys for matching and its sentence ends', () => {
    const w = textWords('"Don\u2019t stop," she said \u2014 the well-known ship (at 9). Done!');
    expect(w.map((x) => x.word)).toEqual(['Don\u2019t', 'stop', 'she', 'said', 'the', 'well', 'known', 'ship', 'at', '9).', 'Done!']);
    expect(w.map((x) => x.key)).toEqual(["don't", 'stop', 'she', 'said', 'the', 'well', 'known', 'ship', 'at', '9', 'done']);
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
    // Nothing heard: the whole span shared out.
    const none = alignText(textWords('a bb'), [], { from: 3, to: 6 });
    expect(none.words.map((w) => [w.start_seconds, w.end_seconds])).toEqual([[3, 4], [4, 6]]);
  });

  it('groups sentences at the text\'s ends, or at pauses when there is no text', () => {
    const text = textWords('Hello there. Go now!');
    const { words } = alignText(text, heard(['hello', 0, 0.3], ['there', 0.35, 0.6], ['go', 0.7, 0.9], ['now', 0.95, 1.2]), { from: 0, to: 2 });
    expect(sentencesOf(words, text.map((w) => w.endsSentence)).map((s) => [s.text, s.first_word, s.last_word])).toEqual([
      ['Hello there.', 0, 1],
      ['Go now!', 2, 3],
    ]);
    const free = heardWords(heard(['a', 0, 0.2], ['b', 0.3, 0.5], ['c', 1.5, 1.7]));
    expect(sentencesOf(free).map((s) => s.text)).toEqual(['a b', 'c']);
  });
});

describe('phrases and clips', () => {
  const words: TimedWord[] = heardWords(heard(['The', 0.5, 0.7], ['storm,', 0.72, 1.1], ['the', 2, 2.1], ['STORM', 2.15, 2.6], ['ended', 2.6, 3]));

  it('finds every occurrence, case and punctuation ignored', () => {
    expect(findPhrase(words, 'the storm')).toEqual([[0, 1], [2, 3]]);
    expect(findPhrase(words, 'Storm the!')).toEqual([[1, 2]]);
    expect(findPhrase(words, '  ')).toEqual([]);
  });

  it('cuts in the pauses: a handle where there is room, half the pause where there is not, nothing when words touch', () => {
    expect(clipAroundWords(words, 2, 3, 4)).toEqual({ start: 2 - WORD_HANDLE_SECONDS, end: 2.6 });
    expect(clipAroundWords(words, 0, 1, 4)).toEqual({ start: 0.35, end: 1.25 });
    expect(clipAroundWords(words, 4, 4, 3.05)).toEqual({ start: 2.6, end: 3.05 });
  });

  it('never reaches into a neighbouring word (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0.01, max: 1, noNaN: true })), { minLength: 1, maxLength: 30 }), fc.nat(), fc.nat(), (gaps, a, b) => {
        let t = 0;
        const ws = heardWords(gaps.map(([gap, len], i) => ({ word: `w${i}`, start: (t += gap), end: (t += len) })));
        const first = a % ws.length;
        const last = first + (b % (ws.length - first));
        const duration = t + 1;
        const { start, end } = clipAroundWords(ws, first, last, duration);
        expect(start).toBeLessThanOrEqual(ws[first]!.start_seconds);
        expect(start).toBeGreaterThanOrEqual(first ? ws[first - 1]!.end_seconds - 0.0005 : 0);
        expect(end).toBeGreaterThanOrEqual(ws[last]!.end_seconds);
        expect(end).toBeLessThanOrEqual(last + 1 < ws.length ? ws[last + 1]!.start_seconds + 0.0005 : duration);
      }),
    );
  });
});

describe('the engine\'s side', () => {
  it('reads 0.8\'s word lines and 5.x\'s JSON, without fillers, on the asset\'s clock', () => {
    const out08 = 'the storm\n<s> 0.110 0.200 0.999900\nthe 0.21 0.4 0.9\n<sil> 0.4 0.5 1\nstorm(2) 0.5 0.9 0.7\n[NOISE] 0.9 1 1\n</s> 1.0 1.1 1\n';
    expect(parseEngineOutput('0.8', out08, 10)).toEqual([
      { word: 'the', start: 10.21, end: 10.4, confidence: 0.9 },
      { word: 'storm', start: 10.5, end: 10.9, confidence: 0.7 },
    ]);
    const out5 = '{"b":0.0,"d":1.1,"p":1,"t":"the storm","w":[{"t":"<sil>","b":0,"d":0.2,"p":1},{"t":"the","b":0.21,"d":0.19,"p":0.9},{"t":"storm","b":0.5,"d":0.4,"p":0.7}]}\n';
    expect(parseEngineOutput('5', out5, 0).map((w) => w.word)).toEqual(['the', 'storm']);
  });

  it('holds recognition to a text\'s words with a grammar of them, each once', () => {
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
