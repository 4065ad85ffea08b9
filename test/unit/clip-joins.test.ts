// Where clips by words meet (src/edit/clip-joins.ts): a sentence split over two clips plays no sample twice (one cut,
// or the second trimmed to start where the first ends), and the muted frames beyond a clip's sound at a join are
// heard where they are pause, so a bed never drops to digital silence there.
import { describe, expect, it } from 'vitest';
import { joinClips, type HeardClip } from '../../src/edit/clip-joins.js';
import type { ComposeClip } from '../../src/edit/compose.js';

/** A clip by words as check-edit.ts makes it: muted beyond its sound, full level over it. */
function byWords(asset: string, start: number, end: number, soundIn: number, soundOut: number): ComposeClip {
  return {
    asset_id: asset,
    start,
    end,
    levels: [
      { level: 0, from: start, to: soundIn },
      { level: 1, from: soundIn, to: soundOut },
      { level: 0, from: soundOut, to: end },
    ].filter((l) => l.to > l.from),
  } as ComposeClip;
}
const heard = (soundIn: number, soundOut: number, cleanFrom: number, cleanTo: number, first: number, last: number) =>
  ({ soundIn, soundOut, cleanFrom, cleanTo, first, last }) satisfies HeardClip;

describe('joinClips', () => {
  it('joins two clips of one source whose sound overlaps into one cut, said in a note', () => {
    const clips = [byWords('a', 1.0, 2.04, 1.01, 2.03), byWords('a', 1.96, 3.0, 1.97, 2.99)];
    const r = joinClips(
      clips,
      new Map([
        [0, heard(1.01, 2.03, 0.9, 2.03, 0, 4)],
        [1, heard(1.97, 2.99, 1.97, 3.1, 5, 9)],
      ]),
    );
    expect(r.clips).toHaveLength(1);
    expect(r.clips[0]).toMatchObject({ start: 1.0, end: 3.0 });
    expect(r.placeOf).toEqual([0, 0]);
    expect(r.notes.join('\n')).toMatch(/clips 1 and 2 .*overlapped by 0\.06 s.*one cut.*nothing plays twice/);
    // Full level from the first clip's sound to the second's end of sound: nothing muted in the middle.
    const levels = r.clips[0]!.levels!;
    expect(levels.filter((l) => l.level === 0 && l.from > 1.5 && l.to < 2.5)).toEqual([]);
  });

  it('trims the second clip to start where the first ends when they differ otherwise (a gain)', () => {
    const clips = [byWords('a', 1.0, 2.04, 1.01, 2.03), { ...byWords('a', 1.96, 3.0, 1.97, 2.99), gain_db: -3 }];
    const r = joinClips(
      clips,
      new Map([
        [0, heard(1.01, 2.03, 0.9, 2.03, 0, 4)],
        [1, heard(1.97, 2.99, 1.97, 3.1, 5, 9)],
      ]),
    );
    expect(r.clips).toHaveLength(2);
    expect(r.clips[1]!.start).toBe(2.04);
    expect(r.notes.join('\n')).toMatch(/clip 2 now starts where the one before ends \(2\.04 s\)/);
  });

  it('leaves clips of other sources, or apart, as they are, and fills the muted frames at a join where they are pause', () => {
    const clips = [byWords('a', 1.0, 2.04, 1.01, 2.02), byWords('b', 0.96, 2.0, 0.99, 1.99)];
    const r = joinClips(
      clips,
      new Map([
        [0, heard(1.01, 2.02, 0.9, 2.3, 0, 4)],
        [1, heard(0.99, 1.99, 0.7, 2.2, 0, 3)],
      ]),
    );
    expect(r.clips).toHaveLength(2);
    expect(r.notes).toEqual([]);
    // At the join, the pause beyond each clip's sound (to 2.3 s after the first, from 0.7 s before the second) is
    // heard: no level 0 there. The timeline's own start and end stay muted beyond the sound.
    expect(r.clips[0]!.levels!.filter((l) => l.level === 0 && l.to > 2.02)).toEqual([]);
    expect(r.clips[1]!.levels!.filter((l) => l.level === 0 && l.from < 0.99)).toEqual([]);
    expect(r.clips[0]!.levels![0]).toEqual({ level: 0, from: 1, to: 1.01 });
  });

  it('gives each side of a join the pause beyond it as a sound handle (at most 20 ms), and none where a word is beside it', () => {
    const clips = [
      byWords('a', 1.0, 2.04, 1.01, 2.02),
      byWords('b', 0.96, 2.0, 0.99, 1.99),
      byWords('c', 3.0, 4.0, 3.01, 3.99),
    ];
    const r = joinClips(
      clips,
      new Map([
        // Pause to 2.3 s after the first clip; before the second from 0.7 s.
        [0, heard(1.01, 2.02, 0.9, 2.3, 0, 4)],
        // The word after the second starts 2 ms past its out point (a run-on edge); the pause before the third is 8 ms.
        [1, heard(0.99, 1.99, 0.7, 2.002, 0, 3)],
        [2, heard(3.01, 3.99, 2.992, 4.5, 0, 3)],
      ]),
    );
    expect(r.clips.map((c) => c.sound_handles)).toEqual([
      { after: 0.02 },
      { before: 0.02 },
      // (8 ms of pause before it, less the 3 ms kept off the word before; too short for a crossfade, said as it is.)
      { before: 0.005 },
    ]);
    // A side with a handle plays at full level up to its edge: the crossfade is its fade.
    expect(r.clips[0]!.levels!.at(-1)).toMatchObject({ level: 1, to: 2.04 });
    expect(r.clips[1]!.levels![0]).toMatchObject({ level: 1, from: 0.96 });
  });
});
