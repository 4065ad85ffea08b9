// Speech under a music bed or noise, cleaned before recognition. A bed is steady where speech pauses and between a
// word's syllables: its spectrum is learned continuously (per frequency bin, the lowest smoothed power within
// ±0.26 s: speech moves between bins within that, a held chord stays; a longer window reaches into the previous or
// next chord of a bed that changes every second or two) and taken off with a Wiener-style gain per bin (spectral
// subtraction). Works on the 16 kHz mono PCM file recognition decodes to, streamed through small buffers: memory
// stays flat whatever the length. Measured with PocketSphinx (bench/speech-noise.mjs): it lowers WER under a bed or
// noise and raises it a little on clean speech, so it runs only where the pauses are loud against the speech
// (speechNeedsCleaning).
import { open, type FileHandle } from 'node:fs/promises';

const RATE = 16_000;
/**
 * 128 ms frames every 16 ms (a square-root Hann window on both sides, the overlap divided out): fine enough (8 Hz)
 * to take a bed's notes off between speech's harmonics.
 */
const N = 2048;
const HOP = 256;
const BINS = N / 2 + 1;
const OVERLAP_GAIN = N / (2 * HOP);
/** Frames either side whose minimum is the bed's level (±0.26 s: longer than a syllable, shorter than a chord). */
const HALF_WINDOW = 16;
/** The minimum of a noisy power underestimates its mean: raised by this. */
const MIN_BIAS = 1.5;
/** Over-subtraction, and the least gain a bin keeps (-26 dB: no bin is silenced, which the engine hears worse). */
const ALPHA = 3;
const FLOOR = 0.05;

/**
 * Clean when the pauses are within this many dB of the speech: a bed 10 or 20 dB under measures 14-25, noise 20 dB
 * under about 24; flite's clean speech has digital silence between sentences (a quiet room's hum is usually 40 or
 * more under; not measured here).
 */
export const CLEAN_BELOW_DB = 30;

/**
 * Levels of a sound, from its 20 ms frames: speech (95th percentile) and pauses (10th), in dBFS; and how flat what
 * lies under the speech is (0-1): per second, each 8 Hz bin's lowest power over eight 128 ms frames (the bed, speech
 * moving away), its spectral flatness from 60 Hz to 2 kHz, the median over the seconds. Held notes are lines (a
 * flatness near 0), noise is flat.
 */
export interface SoundLevels {
  speechDb: number;
  pauseDb: number;
  bedFlatness: number;
}

const CHUNK = 1 << 16;

/** Reads a raw s16le file from the start in chunks, calling `each` with the samples (one reused buffer). */
async function eachChunk(fh: FileHandle, each: (pcm: Int16Array) => void): Promise<void> {
  const buf = Buffer.allocUnsafeSlow(CHUNK * 2);
  for (let pos = 0; ;) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead < 2) return;
    pos += bytesRead & ~1;
    each(new Int16Array(buf.buffer, buf.byteOffset, bytesRead >> 1));
  }
}

const FLAT_FRAMES = 8;
const FLAT_BINS = [8, 256] as const; // 62 Hz - 2 kHz

/** The flatness of a sound's bed (see SoundLevels), fed its samples in order. */
function bedFlatnessMeter() {
  const { fft, window } = fftOf(N);
  const re = new Float64Array(N);
  const im = new Float64Array(N);
  const lowest = new Float64Array(N / 2 + 1).fill(Infinity);
  const flatness: number[] = [];
  let filled = 0;
  let frames = 0;
  return {
    add(v: number) {
      re[filled++] = v;
      if (filled < N) return;
      filled = 0;
      for (let i = 0; i < N; i++) re[i] = re[i]! * window[i]! * window[i]!;
      im.fill(0);
      fft(re, im, false);
      for (let b = FLAT_BINS[0]; b <= FLAT_BINS[1]; b++) lowest[b] = Math.min(lowest[b]!, re[b]! ** 2 + im[b]! ** 2);
      if (++frames % FLAT_FRAMES) return;
      let logSum = 0;
      let sum = 0;
      for (let b = FLAT_BINS[0]; b <= FLAT_BINS[1]; b++) {
        logSum += Math.log(lowest[b]! + 1);
        sum += lowest[b]! + 1;
      }
      const bins = FLAT_BINS[1] - FLAT_BINS[0] + 1;
      flatness.push(Math.exp(logSum / bins) / (sum / bins));
      lowest.fill(Infinity);
    },
    median: () => (flatness.length ? flatness.sort((a, b) => a - b)[flatness.length >> 1]! : 1),
  };
}

/** The speech and pause levels of a raw 16 kHz s16le file, read in chunks (a histogram of 0.5 dB steps). */
export async function soundLevels(file: string): Promise<SoundLevels> {
  const FRAME = RATE / 50;
  const histogram = new Float64Array(281); // -140..0 dBFS
  const flat = bedFlatnessMeter();
  let frames = 0;
  let sum = 0;
  let filled = 0;
  const fh = await open(file, 'r');
  try {
    await eachChunk(fh, (pcm) => {
      for (const s of pcm) {
        flat.add(s);
        sum += s * s;
        if (++filled === FRAME) {
          const db = 10 * Math.log10(sum / FRAME / 32768 ** 2 + 1e-14);
          histogram[Math.max(0, Math.min(280, Math.round((db + 140) * 2)))]!++;
          frames++;
          sum = filled = 0;
        }
      }
    });
  } finally {
    await fh.close();
  }
  const percentile = (p: number) => {
    let seen = 0;
    for (let i = 0; i < histogram.length; i++) if ((seen += histogram[i]!) >= p * frames) return i / 2 - 140;
    return 0;
  };
  return frames
    ? { speechDb: percentile(0.95), pauseDb: percentile(0.1), bedFlatness: flat.median() }
    : { speechDb: -140, pauseDb: -140, bedFlatness: 1 };
}

/**
 * What lies under the speech: held notes when its flatness is under this (flite voices under a tonal bed measure
 * 0.000-0.03), else noise (white and low-passed noise measure 0.28-0.35). The engine's own noise removal is left on
 * for noise only (bench/).
 */
const TONAL_BELOW = 0.1;
export const bedKind = (l: SoundLevels): 'tonal' | 'noise' => (l.bedFlatness < TONAL_BELOW ? 'tonal' : 'noise');

/** Whether a sound's pauses are loud enough against its speech (a bed or noise under it) to clean it. */
export const speechNeedsCleaning = (l: SoundLevels) => l.speechDb > -60 && l.speechDb - l.pauseDb < CLEAN_BELOW_DB;

/** An in-place radix-2 FFT of n points, and the square-root Hann window of that length. */
function fftOf(n: number) {
  const bits = Math.log2(n);
  const bitReversed = new Uint32Array(n).map((_, i) => {
    let r = 0;
    for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    return r;
  });
  const cosines = Float64Array.from({ length: n / 2 }, (_, i) => Math.cos((2 * Math.PI * i) / n));
  const sines = Float64Array.from({ length: n / 2 }, (_, i) => Math.sin((2 * Math.PI * i) / n));
  const fft = (re: Float64Array, im: Float64Array, inverse: boolean): void => {
    for (let i = 0; i < n; i++) {
      const j = bitReversed[i]!;
      if (j > i) {
        [re[i], re[j]] = [re[j]!, re[i]!];
        [im[i], im[j]] = [im[j]!, im[i]!];
      }
    }
    for (let size = 2; size <= n; size <<= 1) {
      const half = size >> 1;
      const step = n / size;
      for (let s = 0; s < n; s += size) {
        for (let k = 0; k < half; k++) {
          const c = cosines[k * step]!;
          const sn = inverse ? sines[k * step]! : -sines[k * step]!;
          const a = s + k;
          const b = a + half;
          const tr = re[b]! * c - im[b]! * sn;
          const ti = re[b]! * sn + im[b]! * c;
          re[b] = re[a]! - tr;
          im[b] = im[a]! - ti;
          re[a] = re[a]! + tr;
          im[a] = im[a]! + ti;
        }
      }
    }
  };
  const window = Float64Array.from({ length: n }, (_, i) => Math.sqrt(0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n)));
  return { fft, window };
}

/**
 * Writes `input` (raw 16 kHz s16le) cleaned to `output`, the same length. Frames are held only as far as the bed's
 * window looks ahead (about 0.6 s of spectra); the sound passes through two small buffers.
 */
export async function cleanSpeech(input: string, output: string): Promise<void> {
  const { fft, window } = fftOf(N);
  const RING = 2 * HALF_WINDOW + 3;
  const re = Array.from({ length: RING }, () => new Float64Array(N));
  const im = Array.from({ length: RING }, () => new Float64Array(N));
  const power = Array.from({ length: RING }, () => new Float64Array(BINS));
  const smooth = Array.from({ length: RING }, () => new Float64Array(BINS));
  const level = new Float64Array(BINS);
  const history = new Float64Array(N); // the last N samples read
  const overlap = new Float64Array(N); // the output from the emitted frame's start on
  const out = Buffer.allocUnsafeSlow((CHUNK + 4 * N) * 2);
  let outFill = 0;
  let frames = 0; // analysed
  let emitted = 0;
  let samplesOut = 0;
  let fresh = 0; // samples read since the last frame

  // Frame f holds samples [(f + 1) * HOP - N, (f + 1) * HOP).
  const analyse = () => {
    const k = frames % RING;
    for (let i = 0; i < N; i++) {
      re[k]![i] = history[i]! * window[i]!;
      im[k]![i] = 0;
    }
    fft(re[k]!, im[k]!, false);
    for (let b = 0; b < BINS; b++) power[k]![b] = re[k]![b]! ** 2 + im[k]![b]! ** 2;
    frames++;
    if (frames > 1) smoothAt(frames - 2, frames);
  };
  // Power smoothed over three frames (a lone quiet frame inside a word is not taken for the bed).
  const smoothAt = (f: number, total: number) => {
    const p = power[f % RING]!;
    const before = f > 0 ? power[(f - 1) % RING]! : p;
    const after = f + 1 < total ? power[(f + 1) % RING]! : p;
    const s = smooth[f % RING]!;
    for (let b = 0; b < BINS; b++) s[b] = (before[b]! + p[b]! + after[b]!) / 3;
  };
  // Frame f with the bed taken off, added into the output; its first HOP samples are final then (frame f + 1 starts
  // after them) and are written, up to `wanted` samples in all.
  const emit = (wanted: number) => {
    const f = emitted++;
    level.fill(Infinity);
    for (let g = Math.max(0, f - HALF_WINDOW); g <= Math.min(frames - 1, f + HALF_WINDOW); g++) {
      const s = smooth[g % RING]!;
      for (let b = 0; b < BINS; b++) if (s[b]! < level[b]!) level[b] = s[b]!;
    }
    const k = f % RING;
    const r = re[k]!;
    const m = im[k]!;
    for (let b = 0; b < BINS; b++) {
      const gain = Math.max(FLOOR, 1 - (ALPHA * MIN_BIAS * level[b]!) / (power[k]![b]! + 1e-9));
      r[b] = r[b]! * gain;
      m[b] = m[b]! * gain;
      if (b > 0 && b < N / 2) {
        r[N - b] = r[b]!;
        m[N - b] = -m[b]!;
      }
    }
    fft(r, m, true);
    for (let i = 0; i < N; i++) overlap[i] = overlap[i]! + (r[i]! / N / OVERLAP_GAIN) * window[i]!;
    const start = (f + 1) * HOP - N;
    for (let i = 0; i < HOP && samplesOut < wanted; i++) {
      if (start + i < 0) continue;
      out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(overlap[i]!))), outFill);
      outFill += 2;
      samplesOut++;
    }
    overlap.copyWithin(0, HOP);
    overlap.fill(0, N - HOP);
  };
  const push = (pcm: ArrayLike<number>, wanted: number) => {
    for (let i = 0; i < pcm.length; i++) {
      history[N - HOP + fresh] = pcm[i]!;
      if (++fresh < HOP) continue;
      fresh = 0;
      analyse();
      // A frame is emitted once every frame its window looks at is smoothed.
      while (frames - emitted > HALF_WINDOW + 1) emit(wanted);
      history.copyWithin(0, HOP);
    }
  };

  const inFh = await open(input, 'r');
  const outFh = await open(output, 'w');
  const flush = async () => {
    if (outFill) await outFh.write(out, 0, outFill);
    outFill = 0;
  };
  try {
    let samplesIn = 0;
    const buf = Buffer.allocUnsafeSlow(CHUNK * 2);
    for (;;) {
      const { bytesRead } = await inFh.read(buf, 0, buf.length, samplesIn * 2);
      if (bytesRead < 2) break;
      samplesIn += bytesRead >> 1;
      push(new Int16Array(buf.buffer, buf.byteOffset, bytesRead >> 1), Infinity);
      await flush();
    }
    // Silence after the end, until the last sample read lies in a frame's finished half.
    push(new Float64Array(N + HOP - fresh), samplesIn);
    await flush();
    if (frames) smoothAt(frames - 1, frames);
    while (emitted < frames && samplesOut < samplesIn) {
      emit(samplesIn);
      if (outFill > out.length - 4 * HOP) await flush();
    }
    await flush();
  } finally {
    await inFh.close();
    await outFh.close();
  }
}
