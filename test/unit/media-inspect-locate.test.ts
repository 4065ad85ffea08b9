// Locating cuts in footage that moves: which stretches between reference frames are decoded fully, and from where.
import { describe, expect, it } from 'vitest';
import {
  LOCATE_STEP,
  LOCATE_WINDOW,
  MAX_LOCATE_GAP,
  hasReordering,
  runsForStretches,
  suspiciousStretches,
  type Located,
} from '../../src/media/inspect-locate.js';
import type { FramePacket } from '../../src/media/inspect-frames.js';

/** Tiny frames whose neighbours differ by the given mafd steps: frame k is flat grey at a level, one byte per pixel. */
function seen(indices: number[], levels: number[]): Located {
  // mafd of two flat frames is |a - b| * 100 / 256: a level step of 2.56 is a difference of 1.
  return { indices, tiny: levels.map((l) => new Uint8Array(16).fill(Math.round(l * 2.56))) };
}

/**
 * References every 4 frames from 0, the picture drifting by `motion` per stretch, plus jumps at the given stretches.
 */
function moving(stretches: number, motion: number, jumps: Record<number, number> = {}): Located {
  const levels = [10];
  for (let k = 0; k < stretches; k++) levels.push(levels.at(-1)! + (k % 2 ? motion : -motion) + (jumps[k] ?? 0));
  return seen(
    levels.map((_, k) => k * 4),
    levels,
  );
}

describe('suspicious stretches', () => {
  const run = { from: 0, to: 40 };

  it('flags only the stretch whose difference steps above the motion around it', () => {
    // Motion makes a difference of 3 everywhere; a cut in stretch 5 (frames 21-24) makes it 3 + 20.
    expect(suspiciousStretches(run, moving(10, 3, { 5: 20 }), new Set())).toEqual([[20, 24]]);
  });

  it('flags nothing where the picture only moves, however fast', () => {
    expect(suspiciousStretches(run, moving(10, 9), new Set())).toEqual([]);
  });

  it('still flags cuts in several stretches in a row (no calm neighbour right beside the middle one)', () => {
    const jumps = { 4: 20, 5: -25, 6: 30 };
    expect(suspiciousStretches(run, moving(10, 2, jumps), new Set())).toEqual([
      [16, 20],
      [20, 24],
      [24, 28],
    ]);
    expect(LOCATE_WINDOW).toBeGreaterThanOrEqual(2);
  });

  it('flags a step just at the threshold and not one just under it', () => {
    const at = suspiciousStretches(run, moving(10, 1, { 5: LOCATE_STEP + 0.5 }), new Set());
    expect(at).toEqual([[20, 24]]);
    expect(suspiciousStretches(run, moving(10, 1, { 5: LOCATE_STEP - 2.5 }), new Set())).toEqual([]);
  });

  it('flags a stretch holding a packet that stands out (a flash between two references that look alike)', () => {
    expect(suspiciousStretches(run, moving(10, 2), new Set([22]))).toEqual([[20, 24]]);
  });

  it('flags references too far apart, and the frames before the first and after the last decoded', () => {
    const s = seen([2, 4, 4 + MAX_LOCATE_GAP + 1, 4 + MAX_LOCATE_GAP + 5, 36], [10, 11, 10, 11, 10]);
    expect(suspiciousStretches(run, s, new Set())).toEqual([
      [0, 2],
      [4, 4 + MAX_LOCATE_GAP + 1],
      [4 + MAX_LOCATE_GAP + 5, 36],
      [36, 40],
    ]);
  });

  it('takes the whole run when the locator saw nothing of it', () => {
    expect(suspiciousStretches(run, { indices: [], tiny: [] }, new Set())).toEqual([[0, 40]]);
  });

  it('looks at any difference in a run of one stretch (nothing beside it to compare with)', () => {
    expect(suspiciousStretches({ from: 0, to: 4 }, seen([0, 4], [10, 10 + LOCATE_STEP + 1]), new Set())).toEqual([
      [0, 4],
    ]);
    expect(suspiciousStretches({ from: 0, to: 4 }, seen([0, 4], [10, 10]), new Set())).toEqual([]);
  });
});

describe('runs for the suspicious stretches', () => {
  const keys = [0, 60, 120, 180];

  it('decodes each from the keyframe at or before it, merging runs that overlap', () => {
    expect(
      runsForStretches(keys, [
        [64, 68],
        [100, 104],
        [128, 132],
        [60, 64],
      ]),
    ).toEqual([
      { from: 60, to: 104 },
      { from: 120, to: 132 },
    ]);
  });

  it('starts a stretch that begins on a keyframe at that keyframe, and one before the first keyframe at it', () => {
    expect(runsForStretches(keys, [[120, 124]])).toEqual([{ from: 120, to: 124 }]);
    expect(runsForStretches([0], [[0, 3]])).toEqual([{ from: 0, to: 3 }]);
  });

  it('reaches across a keyframe when a stretch spans it', () => {
    expect(runsForStretches(keys, [[116, 124]])).toEqual([{ from: 60, to: 124 }]);
  });
});

describe('reordering', () => {
  const f = (t: number, dts?: number): FramePacket => ({
    t,
    size: 1,
    key: false,
    ...(dts === undefined ? {} : { dts }),
  });

  it('is seen when frames are shown in another order than decoded (B-frames)', () => {
    expect(hasReordering([f(0, 0), f(1, 3), f(2, 1), f(3, 2)])).toBe(true);
  });

  it('is not seen in a stream shown in decode order, or without decode order', () => {
    expect(hasReordering([f(0, 0), f(1, 1), f(2, 2)])).toBe(false);
    expect(hasReordering([f(0), f(1)])).toBe(false);
  });
});
