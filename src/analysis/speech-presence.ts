// Whether a sound holds speech (issue 47, item 4), pure: an energy and pitch detector that gates recognition, so noise
// and music are never transcribed, ranked as speech or paid for in a search's time. Speech has a syllable rhythm:
// voiced stretches (a pitch of 70-400 Hz) a few times a second, broken by unvoiced sounds and short pauses, and its
// level swings with them. Noise has no pitch; a music bed's tones hold their pitch and level for far longer than a
// syllable. Works on 8 kHz mono samples (media/speech-presence.ts decodes them). No I/O.

export const PRESENCE_RATE = 8000;
/** Frames of 20 ms, 10 ms apart. */
const FRAME = 160;
const HOP = 80;
/** Pitch lags: 400 Hz down to 70 Hz. */
const MIN_LAG = Math.floor(PRESENCE_RATE / 400);
const MAX_LAG = Math.ceil(PRESENCE_RATE / 70);
/** A frame is voiced when its normalised autocorrelation at some pitch lag is at least this. */
const VOICED = 0.6;
/** Judged over windows of this many seconds, half a window apart. */
const WINDOW_SEC = 1.5;
/** Speech says about 2-8 syllables a second: voiced stretches per second within this range. */
const SYLLABLES = { min: 1.5, max: 9 };
/** A voiced stretch longer than this is a held tone, not a syllable. */
const LONGEST_SYLLABLE_SEC = 0.6;
/** Voiced share of a speech window: pauses and unvoiced sounds between syllables leave this much at most. */
const MAX_VOICED_SHARE = 0.8;
/** A sound with less speech than this (s) holds none worth transcribing. */
export const MIN_SPEECH_SEC = 1;

export interface SpeechPresence {
  /** Seconds judged speech. */
  speechSeconds: number;
  /** The spans judged speech, merged, in seconds. */
  spans: { start: number; end: number }[];
}

/** Per 10 ms frame: its level (dB). */
function levels(samples: Float32Array): number[] {
  const db: number[] = [];
  for (let at = 0; at + FRAME + MAX_LAG <= samples.length; at += HOP) {
    let mean = 0;
    for (let i = 0; i < FRAME; i++) mean += samples[at + i]!;
    mean /= FRAME;
    let energy = 0;
    for (let i = 0; i < FRAME; i++) energy += (samples[at + i]! - mean) ** 2;
    db.push(10 * Math.log10(energy / FRAME + 1e-10));
  }
  return db;
}

/** Whether the frame at `at` is voiced: its normalised autocorrelation at some pitch lag is high. */
function isVoiced(samples: Float32Array, at: number): boolean {
  let mean = 0;
  for (let i = 0; i < FRAME; i++) mean += samples[at + i]!;
  mean /= FRAME;
  let xx = 0;
  for (let i = 0; i < FRAME; i++) xx += (samples[at + i]! - mean) ** 2;
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    let xy = 0;
    let yy = 0;
    for (let i = 0; i < FRAME; i++) {
      const y = samples[at + i + lag]! - mean;
      xy += (samples[at + i]! - mean) * y;
      yy += y * y;
    }
    if (xy / Math.sqrt(xx * yy + 1e-12) >= VOICED) return true;
  }
  return false;
}

/** Where a sound (8 kHz mono, -1..1) holds speech. */
export function speechPresence(samples: Float32Array): SpeechPresence {
  const db = levels(samples);
  const perSec = PRESENCE_RATE / HOP;
  // Quiet frames (near the sound's floor) are never voiced: a pitch in hum or hiss is not a voice. Only the others are
  // looked at for a pitch (the costly part).
  const sorted = [...db].sort((a, b) => a - b);
  const floor = sorted[Math.floor(sorted.length * 0.1)] ?? -100;
  const on = db.map((d, i) => d > floor + 6 && d > -60 && isVoiced(samples, i * HOP));
  const win = Math.round(WINDOW_SEC * perSec);
  const speech: boolean[] = new Array<boolean>(on.length).fill(false);
  for (let a = 0; a + win <= on.length || (a === 0 && on.length); a += Math.max(1, win >> 1)) {
    const b = Math.min(on.length, a + win);
    let runs = 0;
    let longest = 0;
    let run = 0;
    let count = 0;
    for (let i = a; i < b; i++) {
      if (on[i]) {
        count++;
        run++;
        if (run === 3) runs++; // a syllable is at least 30 ms voiced
      } else run = 0;
      longest = Math.max(longest, run);
    }
    const seconds = (b - a) / perSec;
    const rate = runs / seconds;
    const isSpeech =
      rate >= SYLLABLES.min &&
      rate <= SYLLABLES.max &&
      longest / perSec <= LONGEST_SYLLABLE_SEC &&
      count / (b - a) <= MAX_VOICED_SHARE;
    if (isSpeech) for (let i = a; i < b; i++) speech[i] = true;
    if (b === on.length) break;
  }
  const spans: SpeechPresence['spans'] = [];
  speech.forEach((s, i) => {
    if (!s) return;
    const t = (i * HOP) / PRESENCE_RATE;
    const last = spans.at(-1);
    if (last && t - last.end <= 0.02) last.end = t + HOP / PRESENCE_RATE;
    else spans.push({ start: t, end: t + HOP / PRESENCE_RATE });
  });
  const r = (v: number) => Math.round(v * 100) / 100;
  return {
    speechSeconds: r(spans.reduce((s, p) => s + p.end - p.start, 0)),
    spans: spans.map((p) => ({ start: r(p.start), end: r(p.end) })),
  };
}
