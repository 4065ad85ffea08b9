import { describe, expect, it } from 'vitest';
import { closestIds, didYouMean, editDistance } from '../../src/did-you-mean.js';

const known = [
  { id: '3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e', name: 'interview.mp4' },
  { id: '3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d5f', name: 'broll.mp4' },
  { id: 'a0000000-0000-4000-8000-000000000001', name: 'music.wav' },
];

describe('did you mean', () => {
  it('counts edits', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('abc', 'abd')).toBe(1);
    expect(editDistance('abcdef', 'a', 2)).toBe(3);
  });

  it('names the id one typo away, with its name', () => {
    expect(didYouMean('a0000000-0000-4000-8000-00000000001', known)).toBe(
      'did you mean a0000000-0000-4000-8000-000000000001 (music.wav)?',
    );
    expect(didYouMean('A0000000-0000-4000-8000-000000000002', known)).toContain('music.wav');
  });

  it('names only the closest when several are within two edits', () => {
    expect(closestIds('3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4f', known).map((k) => k.name)).toEqual([
      'interview.mp4',
      'broll.mp4',
    ]);
    expect(closestIds('3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e0', known).map((k) => k.name)).toEqual(['interview.mp4']);
  });

  it('takes a unique prefix of at least 8 characters, and nothing looser', () => {
    expect(didYouMean('a0000000-00', known)).toContain('music.wav');
    expect(didYouMean('3f2b8c1e', known)).toBeUndefined(); // two ids start so
    expect(didYouMean('a000', known)).toBeUndefined();
    expect(didYouMean('ffffffff-0000-4000-8000-000000000001', known)).toBeUndefined();
    expect(didYouMean('', known)).toBeUndefined();
  });
});
