import { describe, expect, it } from 'vitest';
import { sliceTranscript } from '../../src/analysis/transcript-span.js';
import { sentencesOf, type TimedWord } from '../../src/edit/words.js';

const words: TimedWord[] = ['a', 'fierce', 'gale.', 'tore', 'the', 'shutters.'].map((word, index) => ({
  index,
  word,
  start_seconds: index,
  end_seconds: index + 0.8,
}));
const whole = {
  from_seconds: 0,
  to_seconds: 6,
  words,
  sentences: sentencesOf(words, [false, false, true, false, false, true]),
  unplaced: [1, 4],
  doubtful: [4],
  corrected: [[1, 3]],
};

describe('a span of a kept transcript', () => {
  it('holds the words whose middle lies inside, numbered from 0, with their true times and what the whole says of them', () => {
    // 1.5 is past the middle of "fierce" (1.4), so it is out; 4.5 is past that of "the" (4.4), so it is in.
    const s = sliceTranscript(whole, 1.5, 4.5);
    expect(s.words.map((w) => [w.index, w.word, w.start_seconds, w.end_seconds])).toEqual([
      [0, 'gale.', 2, 2.8],
      [1, 'tore', 3, 3.8],
      [2, 'the', 4, 4.8],
    ]);
    expect(s.sentences.map((x) => x.text)).toEqual(['gale.', 'tore the']);
    expect([s.from_seconds, s.to_seconds]).toEqual([1.5, 4.5]);
    expect(s.unplaced).toEqual([2]);
    expect(s.doubtful).toEqual([2]);
    // The corrected range keeps its part inside the span.
    expect(s.corrected).toEqual([[0, 1]]);
    const none = sliceTranscript(whole, 0.5, 0.6);
    expect(none.words).toEqual([]);
    expect(none).not.toHaveProperty('corrected');
  });
});
