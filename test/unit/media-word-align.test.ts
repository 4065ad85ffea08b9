// The grammar a run of words is aligned with (media/word-align.ts): every word in order, or some of them free to be
// left out where the sound does not hold them.
import { describe, expect, it } from 'vitest';
import { alignDictionary, alignGrammar } from '../../src/media/word-align.js';

const words = [
  { index: 2, pronunciations: ['L EH F T'] },
  { index: 3, pronunciations: ['DH AH', 'DH IY'] },
  { index: 4, pronunciations: ['OW L D'] },
  { index: 5, pronunciations: ['S T EY SH AH N'] },
];

describe('alignGrammar', () => {
  it('holds the engine to every word, in order', () => {
    expect(alignGrammar(words)).toBe('#JSGF V1.0;\ngrammar align;\npublic <s> = w2 w3 w4 w5 ;\n');
  });
  it('lets the words asked about be left out, the others held', () => {
    expect(alignGrammar(words, new Set([3, 4]))).toContain('public <s> = w2 [w3] [w4] w5 ;');
  });
});

describe('alignDictionary', () => {
  it('gives each word its token and every pronunciation', () => {
    expect(alignDictionary(words).split('\n')).toEqual([
      'w2 L EH F T',
      'w3 DH AH',
      'w3(2) DH IY',
      'w4 OW L D',
      'w5 S T EY SH AH N',
      '',
    ]);
  });
});
