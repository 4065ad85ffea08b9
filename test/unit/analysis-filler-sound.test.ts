// analysis/filler-sound.ts on sound made here: a sustained voiced sound between pauses (a glottal pulse train through
// one fixed vowel's resonances, as "uh" is) measures as a filler; the same voice gliding through a word's vowels and
// closed by a stop's burst does not, nor does sound with no pause each side.
import { describe, expect, it } from 'vitest';
import { soundIslands } from '../../src/analysis/filler-sound.js';

const RATE = 16_000;

/** A voiced sound: pulses at `f0` through resonances `formants(t)` (Hz at time t), `seconds` long. */
function voiced(seconds: number, f0: number, formants: (t: number) => number[]): Float32Array {
  const out = new Float32Array(Math.round(seconds * RATE));
  const state = [0, 0, 0, 0, 0, 0];
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const t = i / RATE;
    phase += f0 / RATE;
    let x = 0;
    if (phase >= 1) {
      phase -= 1;
      x = 1;
    }
    let y = x;
    formants(t).forEach((f, k) => {
      // A two-pole resonator per formant, 80 Hz wide.
      const r = Math.exp((-Math.PI * 80) / RATE);
      const c = 2 * r * Math.cos((2 * Math.PI * f) / RATE);
      const v = y + c * state[2 * k]! - r * r * state[2 * k + 1]!;
      state[2 * k + 1] = state[2 * k]!;
      state[2 * k] = v;
      y = v * (1 - r);
    });
    out[i] = y;
  }
  const peak = out.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
  return out.map((v) => (v / peak) * 0.3);
}
/** Noise from a fixed seed, so every run hears the same sound. */
let seed = 1;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
const noise = (seconds: number, level: number) =>
  Float32Array.from({ length: Math.round(seconds * RATE) }, () => random() * level);
const join = (...parts: Float32Array[]) => {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const room = (s: number) => noise(s, 0.0005);

describe('soundIslands', () => {
  it('measures a sustained vowel between pauses as a filler, where it is', () => {
    const uh = voiced(0.35, 120, () => [600, 1200, 2500]);
    const islands = soundIslands(join(room(0.5), uh, room(0.5)), RATE);
    expect(islands).toHaveLength(1);
    expect(islands[0]!.filler).toBe(true);
    expect(islands[0]!.from).toBeGreaterThan(0.45);
    expect(islands[0]!.to).toBeLessThan(0.9);
  });

  it('does not call a word with gliding vowels and a stop a filler, nor a vowel run into speech', () => {
    const glide = voiced(0.3, 120, (t) => [300 + t * 1500, 800 + t * 5000, 2500]);
    const word = join(glide, room(0.04), noise(0.05, 0.2));
    expect(soundIslands(join(room(0.5), word, room(0.5)), RATE).map((i) => i.filler)).toEqual([false]);
    // Voiced sound with no pause before it: the window's edge, not a pause, bounds it.
    expect(
      soundIslands(
        join(
          voiced(0.35, 120, () => [600, 1200, 2500]),
          room(0.5),
        ),
        RATE,
      ),
    ).toEqual([]);
  });
});
