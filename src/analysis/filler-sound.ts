// Fillers heard in the sound itself, pure (samples in, spans out; media/filler-sound.ts decodes them): a recogniser
// writes "um" as "and" and "uh" as "at", so the transcript's words cannot be trusted to name a filler. What an
// editor hears as a filler is an island of sound between two pauses that is one sustained, steady voiced sound:
// voiced throughout, its pitch held, its spectrum changing slowly (no consonant's burst, closure or frication), 0.1 to
// 0.9 s long. A content word between pauses ("yes", "and", "the tower") has a consonant's transition in it; a
// syllable inside running speech has no pause each side. The frames: 25 ms every 10 ms; pauses are frames whose 16
// bands do not rise above their floors (the quietest tenth of the window, band by band: silence, room tone or a bed).
import { fft } from './fft.js';

const FRAME_S = 0.025;
const HOP_S = 0.01;
const BANDS = 16;
/** Mean dB rise over the bands' floors that makes a frame sound, at least, and as a share of the window's strong rises. */
const ACTIVE_DB = 3;
const RELATIVE_ACTIVE = 0.3;
/** The same share for the rise in the bands within reach of their loud frames (see soundFrames): lower, since a
 *  vowel's upper bands lie far under a fricative's. */
const HEARD_RELATIVE_ACTIVE = 0.2;
/** dB under the window's loud frames (its 98th percentile) under which a frame is quiet. */
const QUIET_BELOW_LOUD_DB = 35;
/** A quiet run this long (s) is a pause; shorter ones are closures inside words. */
const MIN_PAUSE_S = 0.08;
/** The pause (s) a filler has each side at least: a hesitation's, longer than those between a phrase's words. */
const MIN_FILLER_PAUSE_S = 0.15;
/** An island's length (s) a filler can have. */
const MIN_FILLER_S = 0.09;
const MAX_FILLER_S = 0.9;
/** A filler is voiced in at least this share of its frames, its pitch within this spread (semitones, see
 *  robustSpread), its spectrum moving by at most this much frame to frame (mean dB over the bands). */
const MIN_VOICED = 0.8;
const MAX_PITCH_SPREAD = 3;
const MAX_FLUX_DB = 3.2;
/** A run of unvoiced frames this long (s) inside an island is a consonant: not a filler. */
const MAX_UNVOICED_RUN_S = 0.04;
/** dB under an island's loudest frame at which the frames at its ends are its onset or its fade, not its body. */
const FADE_BELOW_PEAK_DB = 25;
/** Voicing: normalised autocorrelation peak over this, pitch MIN_PITCH_HZ to 400 Hz. */
const VOICED_CORR = 0.5;
/** The lowest pitch heard as voicing: a hesitation's "uh" often sinks into creak at its end (flite's rms voice from
 *  75 Hz to 63 Hz within one "uh"), below a speaking voice's usual floor of 70 Hz. */
const MIN_PITCH_HZ = 50;
/** A lag correlating within this share of the best one is taken as the period when it is shorter. */
const OCTAVE_SHARE = 0.9;

/** One island of sound between two pauses and how it measures. */
export interface SoundIsland {
  /** Seconds from the samples' start. */
  from: number;
  to: number;
  /** Share of its frames that are voiced. */
  voiced: number;
  /** Spread of its pitch, in semitones (a standard deviation's worth, from the median absolute deviation). */
  pitchSpread: number;
  /** Mean frame-to-frame change of its spectrum, dB over the bands. */
  flux: number;
  /** Mean change (dB, bands under 4 kHz) between the spectra of its first and second thirds. */
  drift: number;
  /** The longest run of unvoiced frames inside it (s). */
  unvoicedRun: number;
  /** It measures as a filler. */
  filler: boolean;
}

/** Each frame's energy in BANDS equal bands up to the Nyquist frequency, dB. */
function bandEnergies(samples: Float32Array, rate: number): Float64Array[] {
  const frame = Math.round(FRAME_S * rate);
  const hop = Math.round(HOP_S * rate);
  let n = 1;
  while (n < frame) n <<= 1;
  const out: Float64Array[] = [];
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let at = 0; at + frame <= samples.length; at += hop) {
    re.fill(0);
    im.fill(0);
    for (let i = 0; i < frame; i++) re[i] = samples[at + i]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (frame - 1)));
    fft(re, im);
    const bands = new Float64Array(BANDS);
    const per = n / 2 / BANDS;
    for (let k = 1; k < n / 2; k++) {
      const b = Math.min(BANDS - 1, Math.floor(k / per));
      bands[b] = bands[b]! + re[k]! * re[k]! + im[k]! * im[k]!;
    }
    for (let b = 0; b < BANDS; b++) bands[b] = 10 * Math.log10(bands[b]! + 1e-12);
    out.push(bands);
  }
  return out;
}

/** A frame's total energy, dB. */
const frameDb = (e: Float64Array) => 10 * Math.log10(e.reduce((a, b) => a + 10 ** (b / 10), 0) + 1e-12);

/** A frame's pitch (Hz) by normalised autocorrelation, or undefined when it is not voiced. */
function pitchOf(samples: Float32Array, at: number, frame: number, rate: number): number | undefined {
  const minLag = Math.floor(rate / 400);
  const maxLag = Math.ceil(rate / MIN_PITCH_HZ);
  const len = frame + maxLag <= samples.length - at ? frame : samples.length - at - maxLag;
  if (len < frame / 2) return undefined;
  let best = 0;
  let e0 = 0;
  for (let i = 0; i < len; i++) e0 += samples[at + i]! ** 2;
  if (e0 <= 1e-9) return undefined;
  const corr = new Float64Array(maxLag + 2);
  for (let lag = minLag; lag <= maxLag + 1; lag++) {
    let c = 0;
    let e1 = 0;
    for (let i = 0; i < len; i++) {
      c += samples[at + i]! * samples[at + i + lag]!;
      e1 += samples[at + i + lag]! ** 2;
    }
    corr[lag] = c / Math.sqrt(e0 * e1 + 1e-12);
    if (lag <= maxLag) best = Math.max(best, corr[lag]!);
  }
  if (best < VOICED_CORR) return undefined;
  // The period is the shortest lag that correlates nearly as well as the best: twice the period correlates as well
  // as the period itself, and a music bed under the voice often tips the balance to it (an octave's jump in pitch).
  for (let lag = minLag + 1; lag <= maxLag; lag++) {
    const r = corr[lag]!;
    if (r >= best * OCTAVE_SHARE && r >= corr[lag - 1]! && r >= corr[lag + 1]!) return rate / lag;
  }
  return undefined;
}

/**
 * The spread of values as a standard deviation would give it for a normal spread, from their median absolute
 * deviation: a few frames whose pitch a music bed threw off (an octave, or the bed's own) do not make a held pitch
 * look moving. Infinity when there are none.
 */
function robustSpread(values: number[]): number {
  if (!values.length) return Infinity;
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const centre = median(values);
  return 1.4826 * median(values.map((v) => Math.abs(v - centre)));
}

/** Which frames hold sound: their bands' mean rise over the bands' floors. */
function soundFrames(energies: Float64Array[]): boolean[] {
  const floors = new Float64Array(BANDS);
  const bandLoud = new Float64Array(BANDS);
  for (let b = 0; b < BANDS; b++) {
    const sorted = energies.map((e) => e[b]!).sort((x, y) => x - y);
    floors[b] = sorted[Math.floor(sorted.length * 0.1)] ?? 0;
    bandLoud[b] = sorted[Math.floor(sorted.length * 0.98)] ?? 0;
  }
  const rise = energies.map((e) => {
    let s = 0;
    for (let b = 0; b < BANDS; b++) s += Math.max(0, e[b]! - floors[b]!);
    return s / BANDS;
  });
  // The same rise counting only the bands within QUIET_BELOW_LOUD_DB of their own loud frames. Under a music bed the
  // floors are the bed's: a pause's faint hiss rises far over them in the bands the bed leaves empty, though it is
  // far under speech there, while the bed's swell holds the frame's total near the loud frames'. Such a frame rises
  // only where the bed swells, in a band or two.
  const heardRise = energies.map((e) => {
    let s = 0;
    for (let b = 0; b < BANDS; b++)
      if (e[b]! >= bandLoud[b]! - QUIET_BELOW_LOUD_DB) s += Math.max(0, e[b]! - floors[b]!);
    return s / BANDS;
  });
  const strongOf = (rises: number[]) => [...rises].sort((x, y) => x - y)[Math.floor(rises.length * 0.95)] ?? 0;
  const strong = strongOf(rise);
  const heardStrong = strongOf(heardRise);
  // Over digital silence every band's floor is nothing, and a breath or a fading tail rises far above it: a frame
  // far under the window's loud frames (their 98th percentile) is quiet whatever its floor.
  const total = energies.map(frameDb);
  const loud = [...total].sort((x, y) => x - y)[Math.floor(total.length * 0.98)] ?? 0;
  return rise.map(
    (r, f) =>
      r >= Math.max(ACTIVE_DB, strong * RELATIVE_ACTIVE) &&
      heardRise[f]! >= Math.max(ACTIVE_DB, heardStrong * HEARD_RELATIVE_ACTIVE) &&
      total[f]! >= loud - QUIET_BELOW_LOUD_DB,
  );
}

/**
 * The islands of sound in `samples` (mono, at `rate`) that have a pause on each side, each measured; those that
 * measure as a filler have `filler`. Islands touching the window's edges are left out (their pause is not heard).
 */
export function soundIslands(samples: Float32Array, rate: number): SoundIsland[] {
  const energies = bandEnergies(samples, rate);
  if (energies.length < 3) return [];
  const sound = soundFrames(energies);
  const minPause = Math.round(MIN_PAUSE_S / HOP_S);
  // Runs of sound, joined across quiet runs shorter than a pause.
  const runs: { first: number; last: number }[] = [];
  for (let f = 0; f < sound.length; f++) {
    if (!sound[f]) continue;
    const last = runs.at(-1);
    if (last && f - last.last - 1 < minPause) last.last = f;
    else runs.push({ first: f, last: f });
  }
  const frame = Math.round(FRAME_S * rate);
  const hop = Math.round(HOP_S * rate);
  const out: SoundIsland[] = [];
  const hesitation = Math.round(MIN_FILLER_PAUSE_S / HOP_S);
  runs.forEach((r, k) => {
    if (r.first < minPause || r.last > sound.length - 1 - minPause) return;
    // The pauses each side, frames: a filler is a hesitation, with a longer pause each side than words of a phrase.
    const before = r.first - (runs[k - 1]?.last ?? -1) - 1;
    const after = (runs[k + 1]?.first ?? sound.length) - r.last - 1;
    const from = (r.first * hop + frame / 2) / rate;
    const to = (r.last * hop + frame / 2) / rate;
    const seconds = to - from + HOP_S;
    // Judged on its body: the first and last two frames are the onset and the fade of any sound.
    const body: number[] = [];
    for (let f = r.first + 2; f <= r.last - 2; f++) body.push(f);
    if (body.length < 3) return;
    // Its voicing, on the body without the frames at either end far under its loudest: a voice fading into a pause's
    // hiss or a bed is not a consonant (flite's rms trails 40 ms of it after an "uh").
    const peak = Math.max(...body.map((f) => frameDb(energies[f]!)));
    const loud = body.slice();
    while (loud.length > 3 && frameDb(energies[loud[0]!]!) < peak - FADE_BELOW_PEAK_DB) loud.shift();
    while (loud.length > 3 && frameDb(energies[loud.at(-1)!]!) < peak - FADE_BELOW_PEAK_DB) loud.pop();
    const pitches = loud.map((f) => pitchOf(samples, f * hop, frame, rate));
    const voicedPitches = pitches.filter((p): p is number => p !== undefined);
    const voiced = voicedPitches.length / loud.length;
    // A consonant inside (a stop's closure and burst, a fricative) breaks the voicing for a run of frames.
    let gap = 0;
    let longest = 0;
    for (const p of pitches) {
      gap = p === undefined ? gap + 1 : 0;
      longest = Math.max(longest, gap);
    }
    const unvoicedRun = longest * HOP_S;
    const pitchSpread = robustSpread(voicedPitches.map((p) => 12 * Math.log2(p)));
    let flux = 0;
    for (let k = 1; k < body.length; k++) {
      const a = energies[body[k - 1]!]!;
      const b = energies[body[k]!]!;
      let d = 0;
      for (let i = 0; i < BANDS; i++) d += Math.abs(b[i]! - a[i]!);
      flux += d / BANDS;
    }
    flux /= body.length - 1;
    // How far the sound moves from its first part to its second (a diphthong or a glide moves, "uh" does not;
    // "um" closes to a nasal only in its last part): mean spectra of the first and second thirds, bands under 4 kHz.
    const third = Math.max(1, Math.floor(body.length / 3));
    const low = Math.max(1, Math.round((BANDS * 4000) / (rate / 2)));
    const meanOf = (fs: number[]) =>
      Array.from({ length: low }, (_, b) => fs.reduce((a, f) => a + energies[f]![b]!, 0) / fs.length);
    const m1 = meanOf(body.slice(0, third));
    const m2 = meanOf(body.slice(third, 2 * third));
    const drift = m1.reduce((a, v, b) => a + Math.abs(v - m2[b]!), 0) / low;
    out.push({
      from,
      to,
      voiced,
      pitchSpread,
      flux,
      drift,
      unvoicedRun,
      filler:
        Math.min(before, after) >= hesitation &&
        seconds >= MIN_FILLER_S &&
        seconds <= MAX_FILLER_S &&
        voiced >= MIN_VOICED &&
        unvoicedRun < MAX_UNVOICED_RUN_S &&
        pitchSpread <= MAX_PITCH_SPREAD &&
        flux <= MAX_FLUX_DB,
    });
  });
  return out;
}
