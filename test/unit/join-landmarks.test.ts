// A sibilant's onset found in the sound (src/analysis/join-landmarks.ts): a voiced sound (a 120 Hz pulse train
// through a low resonance, like a vowel) running into a hiss (white noise, high-passed), the join at a known sample.
import { describe, expect, it } from 'vitest';
import { hissBegunBefore, sibilantJoin, sibilantOnset } from '../../src/analysis/join-landmarks.js';

const RATE = 16_000;

/** `vowel` s of a vowel-like sound, then `hiss` s of hiss at `hissDb` under it (or none), seeded. */
function vowelThenHiss(vowel: number, hiss: number, hissDb = -6): Float32Array {
  const out = new Float32Array(Math.round((vowel + hiss) * RATE));
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  let y1 = 0;
  let y2 = 0;
  let prev = 0;
  const join = Math.round(vowel * RATE);
  for (let i = 0; i < out.length; i++) {
    if (i < join) {
      // A pulse each 1/120 s through a two-pole resonance at 500 Hz.
      const x = i % Math.round(RATE / 120) === 0 ? 1 : 0;
      const r = 0.97;
      const y = x + 2 * r * Math.cos((2 * Math.PI * 500) / RATE) * y1 - r * r * y2;
      y2 = y1;
      y1 = y;
      out[i] = 0.05 * y;
    } else {
      const n = noise();
      out[i] = 10 ** (hissDb / 20) * 0.3 * (n - prev); // a first difference: the noise's high part
      prev = n;
    }
  }
  return out;
}

describe('sibilantOnset', () => {
  it("finds a hiss's onset within 8 ms, searched for around a boundary up to 25 ms off", () => {
    // (A step this sharp is found up to 6 ms early: the rise is read across 10 ms and taken back to half its steepest.
    // Speech turns to a hiss over several milliseconds: on flite's voices the onset is found -12..+10 ms off.)
    const s = vowelThenHiss(0.3, 0.15);
    for (const off of [-0.025, -0.01, 0, 0.01, 0.025]) {
      const at = sibilantOnset(s, RATE, 0.3 + off, 0.03);
      expect(at, `searched around ${off * 1000} ms off`).toBeDefined();
      expect(Math.abs(at! - 0.3)).toBeLessThanOrEqual(0.008);
    }
  });

  it('finds none where the sound does not turn to a hiss, or the hiss does not hold', () => {
    expect(sibilantOnset(vowelThenHiss(0.45, 0), RATE, 0.3, 0.03)).toBeUndefined();
    // A click of hiss 8 ms long, then the vowel again: no sibilant.
    const s = vowelThenHiss(0.3, 0.15);
    s.set(vowelThenHiss(0.142, 0).subarray(0, Math.round(0.142 * RATE)), Math.round(0.308 * RATE));
    expect(sibilantOnset(s, RATE, 0.3, 0.03)).toBeUndefined();
  });
});

describe('hissBegunBefore', () => {
  it('gives the onset of the hiss an instant lies inside, and none for an instant before it or after it ends', () => {
    // A vowel, 0.15 s of hiss, the vowel again; a weak hiss too (26 dB under, like kal's band-limited s).
    for (const db of [-6, -26]) {
      const s = vowelThenHiss(0.3, 0.15, db);
      const after = vowelThenHiss(0.2, 0);
      const all = new Float32Array(s.length + after.length);
      all.set(s);
      all.set(after, s.length);
      for (const at of [0.33, 0.38, 0.44]) {
        const onset = hissBegunBefore(all, RATE, at, 0.25);
        expect(onset, `${db} dB, at ${at} s`).toBeDefined();
        // (As sibilantOnset's: a step this sharp is found a few ms early; a weak hiss up to 8 ms.)
        expect(Math.abs(onset! - 0.3), `${db} dB, at ${at} s`).toBeLessThan(0.0085);
      }
      // In the vowel before it, in its first milliseconds, and in the vowel after it: none.
      for (const at of [0.2, 0.299, 0.5])
        expect(hissBegunBefore(all, RATE, at, 0.25), `${db} dB, at ${at} s`).toBeUndefined();
    }
  });

  it('finds none where a vowel lies between the hiss and the instant', () => {
    // A hiss (0.3-0.36 s), 0.1 s of vowel, then the instant: the hiss before the vowel is another word's.
    const s = vowelThenHiss(0.3, 0.06);
    const all = new Float32Array(s.length + 0.2 * RATE);
    all.set(s);
    all.set(vowelThenHiss(0.2, 0), s.length);
    expect(hissBegunBefore(all, RATE, 0.46, 0.25)).toBeUndefined();
  });
});

describe('sibilantJoin', () => {
  it('holds where every pronunciation of the word after starts with a sibilant and none before ends in an obstruent', () => {
    expect(sibilantJoin(['AH', 'IY'], ['S'])).toBe(true); // the|sun
    expect(sibilantJoin(['AH', 'EY'], ['SH'])).toBe(true); // a|ship
    expect(sibilantJoin(['N'], ['Z'])).toBe(true);
    expect(sibilantJoin(['AH'], ['CH'])).toBe(false); // an affricate starts with a closure
    expect(sibilantJoin(['T'], ['S'])).toBe(false); // a stop's release runs into the hiss
    expect(sibilantJoin(['Z'], ['S'])).toBe(false);
    expect(sibilantJoin(['AH'], ['S', 'Z'])).toBe(true);
    expect(sibilantJoin(['AH'], ['S', 'TH'])).toBe(false);
    expect(sibilantJoin(undefined, ['S'])).toBe(false);
  });
});
