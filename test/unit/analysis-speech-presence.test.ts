// The speech detector that gates recognition (analysis/speech-presence.ts), on sounds made here at 8 kHz: a held chord
// and noise hold no speech; voiced bursts in a syllable rhythm do. (Real speech, noise and music through the built
// server: test/integration/moments-publishable.test.ts.)
import { describe, expect, it } from 'vitest';
import { PRESENCE_RATE, speechPresence } from '../../src/analysis/speech-presence.js';

const seconds = 10;
const make = (f: (t: number, i: number) => number) =>
  Float32Array.from({ length: seconds * PRESENCE_RATE }, (_, i) => f(i / PRESENCE_RATE, i));
/** A fixed pseudo-random sequence (the test is the same every run). */
let seed = 7;
const noise = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;

describe('speech presence', () => {
  it('a held chord is not speech', () => {
    const chord = make((t) => 0.1 * (Math.sin(2 * Math.PI * 220 * t) + Math.sin(2 * Math.PI * 277 * t)));
    expect(speechPresence(chord).speechSeconds).toBe(0);
  });

  it('noise whose level drifts is not speech', () => {
    const wind = make((t) => 0.3 * (0.6 + 0.4 * Math.sin(2 * Math.PI * 0.3 * t)) * noise());
    expect(speechPresence(wind).speechSeconds).toBe(0);
  });

  it('voiced bursts four times a second, with quiet between, are speech', () => {
    // 150 ms of a 140 Hz voice (a fundamental and two harmonics), then 100 ms of faint breath.
    const talk = make((t) =>
      t % 0.25 < 0.15
        ? 0.2 *
          (Math.sin(2 * Math.PI * 140 * t) +
            0.5 * Math.sin(2 * Math.PI * 280 * t) +
            0.3 * Math.sin(2 * Math.PI * 420 * t))
        : 0.005 * noise(),
    );
    expect(speechPresence(talk).speechSeconds).toBeGreaterThan(seconds * 0.8);
  });
});
