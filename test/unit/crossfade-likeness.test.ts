// Which crossfade a join takes (analysis/crossfade-likeness.ts): equal-gain where its two sides are one steady tone in
// phase, equal-power where they are unrelated, room tone's rumble included; and the delay that brings a tone meeting
// itself out of phase into phase.
import { describe, expect, it } from 'vitest';
import { ALIGN_BELOW, EQUAL_GAIN_FROM, bestDelay, likeness } from '../../src/analysis/crossfade-likeness.js';

const RATE = 48_000;
const N = 960;
const tone = (hz: number, phase: number) =>
  Float32Array.from({ length: N }, (_, i) => 0.1 * Math.sin((2 * Math.PI * hz * i) / RATE + phase));
/** Pink-ish noise (white noise through a leaky integrator: its power lies low, as a room's rumble). */
function rumble(seed: number): Float32Array {
  let s = seed;
  let y = 0;
  return Float32Array.from({ length: N }, () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    y = 0.995 * y + (s / 2 ** 31 - 0.5) * 0.05;
    return y;
  });
}

describe('likeness of the two sides of a join', () => {
  it('is high for one tone in phase (equal gain), low for unrelated sound (equal power)', () => {
    expect(likeness(tone(500, 0), tone(500, 0.05))).toBeGreaterThan(0.99);
    expect(likeness(tone(50, 0), tone(50, 0.3))).toBeGreaterThan(EQUAL_GAIN_FROM);
    expect(likeness(tone(500, 0), tone(500, Math.PI / 2))).toBeLessThan(EQUAL_GAIN_FROM);
    expect(likeness(tone(500, 0), tone(500, Math.PI))).toBeLessThan(-0.99);
    // Two stretches of a rumble can look alike over 20 ms; their first differences do not.
    for (const seed of [1, 2, 3, 4, 5]) expect(Math.abs(likeness(rumble(seed), rumble(seed + 100)))).toBeLessThan(0.2);
    expect(likeness(new Float32Array(N), tone(500, 0))).toBe(0);
  });
});

describe('the delay of the later side', () => {
  it('brings a tone out of phase into phase, the least late that does', () => {
    const most = 480;
    const a = tone(510, 0);
    // b's window starts `most` samples before its undelayed overlap; its tone there is half a period off.
    const b = Float32Array.from(
      { length: N + most },
      (_, i) => 0.1 * Math.sin((2 * Math.PI * 510 * (i - most)) / RATE + Math.PI),
    );
    expect(likeness(a, b.subarray(most, most + N))).toBeLessThan(ALIGN_BELOW);
    const found = bestDelay(a, b, most);
    expect(found.likeness).toBeGreaterThan(0.99);
    // Half a period of 510 Hz: 47 samples (a whole one later would do as well; the first is taken).
    expect(found.delay).toBeGreaterThanOrEqual(46);
    expect(found.delay).toBeLessThanOrEqual(48);
  });
});
