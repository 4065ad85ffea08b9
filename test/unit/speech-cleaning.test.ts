// The bed taken off speech (src/media/speech-cleaning.ts), on raw 16 kHz PCM files made here: a steady tone (the
// bed) under bursts of another tone (stand-ins for words) with pauses between.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bedKind,
  CLEAN_BELOW_DB,
  cleanSpeech,
  soundLevels,
  speechNeedsCleaning,
} from '../../src/media/speech-cleaning.js';

const RATE = 16_000;
const dir = mkdtempSync(join(tmpdir(), 'cutroom-cleaning-'));
const write = (name: string, x: Float64Array) => {
  const file = join(dir, name);
  writeFileSync(file, Buffer.from(Int16Array.from(x, (v) => Math.round(v * 32767)).buffer));
  return file;
};
const read = (file: string) => {
  const b = readFileSync(file);
  return Float64Array.from(new Int16Array(b.buffer, b.byteOffset, b.length >> 1), (v) => v / 32767);
};
const energy = (x: Float64Array, from: number, to: number) => {
  let e = 0;
  for (let i = Math.round(from * RATE); i < Math.round(to * RATE); i++) e += x[i]! ** 2;
  return e;
};
/**
 * 6 s: a 440 Hz bed at `bedLevel` throughout; 1 s bursts at 0.3 from 1-2 s and 3.5-4.5 s, gliding from 1200 to
 * 1800 Hz as a voice's pitch moves (or `held`: a steady 1500 Hz, as a sung note).
 */
function bedUnderBursts(bedLevel: number, held = false): Float64Array {
  const burst = (s: number) => (held ? 2 * Math.PI * 1500 * s : 2 * Math.PI * (1200 * s + 300 * s * s));
  return Float64Array.from({ length: 6 * RATE }, (_, i) => {
    const t = i / RATE;
    const b = t >= 1 && t < 2 ? 0.3 * Math.sin(burst(t - 1)) : t >= 3.5 && t < 4.5 ? 0.3 * Math.sin(burst(t - 3.5)) : 0;
    return bedLevel * Math.sin(2 * Math.PI * 440 * t) + b;
  });
}

describe('cleanSpeech', () => {
  it('writes exactly as many samples as it reads', async () => {
    for (const n of [0, 1, 300, RATE + 37, 3 * 65_536 + 5]) {
      const x = Float64Array.from({ length: n }, (_, i) => 0.1 * Math.sin(i / 7));
      const out = join(dir, `out-${n}.pcm`);
      await cleanSpeech(write(`in-${n}.pcm`, x), out);
      expect(readFileSync(out).length).toBe(n * 2);
    }
  });

  it('takes a steady bed off in the pauses and keeps the bursts', async () => {
    const x = bedUnderBursts(0.05);
    const out = join(dir, 'bed-clean.pcm');
    await cleanSpeech(write('bed.pcm', x), out);
    const y = read(out);
    // The pause between bursts (away from their edges): the bed down by more than 20 dB.
    expect(10 * Math.log10(energy(y, 2.5, 3.2) / energy(x, 2.5, 3.2))).toBeLessThan(-20);
    // The bursts: within 1 dB of what they were.
    const kept = energy(y, 1.1, 1.9) + energy(y, 3.6, 4.4);
    const was = energy(x, 1.1, 1.9) + energy(x, 3.6, 4.4);
    expect(Math.abs(10 * Math.log10(kept / was))).toBeLessThan(1);
  });

  it('takes a tone held longer than half a second for the bed (its limit: a sung note is lost)', async () => {
    const x = bedUnderBursts(0.05, true);
    const out = join(dir, 'held-clean.pcm');
    await cleanSpeech(write('held.pcm', x), out);
    const y = read(out);
    expect(10 * Math.log10(energy(y, 1.4, 1.6) / energy(x, 1.4, 1.6))).toBeLessThan(-10);
  });
});

describe('speechNeedsCleaning', () => {
  it('is true for a bed under the bursts, false for bursts with silent pauses', async () => {
    const under = await soundLevels(write('levels-bed.pcm', bedUnderBursts(0.05)));
    expect(under.speechDb - under.pauseDb).toBeLessThan(CLEAN_BELOW_DB);
    expect(speechNeedsCleaning(under)).toBe(true);
    const silent = await soundLevels(write('levels-silent.pcm', bedUnderBursts(0)));
    expect(speechNeedsCleaning(silent)).toBe(false);
    // A faint room (60 dB under) is left alone too.
    expect(speechNeedsCleaning(await soundLevels(write('levels-room.pcm', bedUnderBursts(0.0003))))).toBe(false);
  });
});

describe('bedKind', () => {
  it('tells held notes (a tone under the bursts) from noise (seeded white noise under them)', async () => {
    expect(bedKind(await soundLevels(write('kind-tone.pcm', bedUnderBursts(0.05))))).toBe('tonal');
    let seed = 1;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const noisy = bedUnderBursts(0).map((v) => v + 0.05 * rand());
    expect(bedKind(await soundLevels(write('kind-noise.pcm', noisy)))).toBe('noise');
  });
});
