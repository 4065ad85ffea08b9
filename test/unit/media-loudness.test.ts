// Levelling's gains and BS.1770's gating, as data (edit/plan.ts levelGains, media/measure.ts integratedLoudness).
import { describe, expect, it } from 'vitest';
import { LEVEL_MAX_DB, levelGains } from '../../src/edit/plan.js';
import { integratedLoudness, mixFlags, truePeak } from '../../src/media/measure.js';

describe('levelGains', () => {
  it('brings the cuts to their median loudness', () => {
    expect(levelGains([-20, -30])).toEqual([-5, 5]);
    expect(levelGains([-20, -24, -30])).toEqual([-4, 0, 6]);
  });
  it('leaves alone what is not speech to level: silence, ambience 20 LU under the loudest, a lone cut, a cut already within 0.5 LU', () => {
    expect(levelGains([-20, undefined, -45])).toEqual([0, 0, 0]);
    expect(levelGains([-20])).toEqual([0]);
    expect(levelGains([-20, -20.4])).toEqual([0, 0]);
  });
  it("levels to the median on a 0.5 LU grid: one cut changed a little leaves the others' gains as they were", () => {
    // Median -23.65 (-23.5 on the grid): the loudest down 3.5, the quietest up 2.5, one 0.2 LU off left alone.
    expect(levelGains([-20, -23.3, -26, -24])).toEqual([-3.5, 0, 2.5, 0.5]);
    // The last cut 0.2 LU quieter: the median moves 0.1 LU, the grid's does not; only that cut's gain follows it.
    expect(levelGains([-20, -23.3, -26, -24.2])).toEqual([-3.5, 0, 2.5, 0.7]);
    // (Off the grid, the loudest would have had -3.6 dB, then -3.7: every gain moved by the change of one cut.)
  });
  it(`never moves a cut by more than ${LEVEL_MAX_DB} dB`, () => {
    expect(levelGains([-10, -10, -28])).toEqual([0, 0, LEVEL_MAX_DB]);
  });
});

describe('integratedLoudness (BS.1770-4)', () => {
  const blocks = (lufs: number[], from = 0) => lufs.map((l, i) => ({ end: from + 0.4 + i * 0.1, lufs: l }));
  it('averages energy, not decibels, over the blocks over both gates', () => {
    expect(integratedLoudness(blocks([-20, -20, -20]))).toBe(-20);
    // -120 is silence (under -70); -35 is under the ungated loudness less 10 LU: both left out.
    expect(integratedLoudness(blocks([-20, -120, -20, -35]))).toBe(-20);
    // Two blocks 6 LU apart: the energy mean, 1 LU under the louder plus 10*log10((1+10^-0.6)/2)... about -21.0.
    expect(integratedLoudness(blocks([-20, -26]))).toBeCloseTo(-22.0, 0);
    expect(integratedLoudness(blocks([-120, -90]))).toBeUndefined();
  });
  it('takes only the blocks that lie within a span', () => {
    const b = [...blocks([-10, -10], 0), ...blocks([-30, -30], 2)];
    expect(integratedLoudness(b, { from: 2, to: 3 })).toBe(-30);
    expect(integratedLoudness(b, { from: 0.05, to: 0.45 })).toBeUndefined(); // no whole block inside
    expect(
      truePeak(
        [
          { t: 0, db: -3 },
          { t: 2, db: -1 },
        ],
        { from: 0, to: 1 },
      ),
    ).toBe(-3);
  });
});

describe('mixFlags', () => {
  it('flags music within 10 dB of the dialogue, and music over it, where there is dialogue to hear', () => {
    expect(mixFlags({ dialogue_lufs: -20, music_lufs: -25 })[0]).toMatch(/music only 5\.0 dB under the dialogue/);
    expect(mixFlags({ dialogue_lufs: -20, music_lufs: -18 })[0]).toMatch(
      /dialogue inaudible: the music is 2\.0 dB over it/,
    );
    expect(mixFlags({ dialogue_lufs: -20, music_lufs: -31 })).toEqual([]);
    // A bed that already ducks is not told to duck: to duck deeper, or be lowered.
    const ducked = mixFlags({ dialogue_lufs: -20, music_lufs: -25 }, 12)[0]!;
    expect(ducked).toMatch(/lower it \(gain_db\) or duck it deeper \(duck_db over 12\)$/);
    expect(ducked).not.toMatch(/role "music"/);
    expect(mixFlags({ dialogue_lufs: -20, music_lufs: -18 }, 12)[0]).toMatch(/or duck it deeper \(duck_db over 12\)$/);
    expect(mixFlags({ dialogue_lufs: -50, music_lufs: -20 })).toEqual([]); // ambience under music: no dialogue to keep clear
  });
});
