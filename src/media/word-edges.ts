// Where a cut's first word starts and its last word ends, heard in the sound itself: a recogniser's word times are
// not sample-true (a word may start a third of a second before or after where it says, or swallow the silence
// before it). A second or two around each edge is decoded (16 kHz mono, small enough to hold), split into 16 ms
// frames every 5 ms, and each frame's energy in 16 bands of 500 Hz compared with the quietest tenth of the frames
// in that window (the pause's floor: silence, room tone or a steady music bed, band by band). A frame is speech where
// its bands rise clearly above their floors; the pause is the longest run of frames that do not.
import { fft } from '../analysis/fft.js';
import { hissBegunBefore, sibilantOnset } from '../analysis/join-landmarks.js';
import { monoSoundArgs, type MediaSource } from './input.js';
import type { Limiter } from './probe.js';
import { runProcess } from './process.js';

const RATE = 16_000;
const FRAME = 256;
const HOP = 80;
const BANDS = 16;
/** dB above a band's floor that counts as sound in it, and the mean rise over all bands that makes a frame speech. */
const BAND_MARGIN_DB = 6;
const ACTIVE_DB = 1.5;
/** dB under the loudest frame of the window under which a frame is quiet, whatever its floor. */
const QUIET_BELOW_PEAK_DB = 55;
/** The share of the window's strong rises (its 95th percentile) a frame's rise must reach to be speech. */
const RELATIVE_ACTIVE = 0.25;
/** An inactive run this long (s) is a pause between words; shorter ones are closures inside words. */
const MIN_PAUSE = 0.03;

/** A pause beside a word, on the asset's clock: its extent and its quietest moment. */
export interface Pause {
  from: number;
  to: number;
  quietest: number;
}

/**
 * A cut's first word's onset and last word's end as the sound has them, with the pauses beside them. Where the words
 * run into their neighbour with no pause (`runOnBefore`, `runOnAfter`), the edge is the boundary between them, and
 * the neighbour's part beside it is faded out (edit/words.ts cutAroundEdges).
 */
export interface HeardEdges {
  onset: number;
  before: Pause;
  end: number;
  after: Pause;
  runOnBefore?: boolean;
  runOnAfter?: boolean;
  /**
   * Where the edge was placed at a sibilant's onset heard in the sound (`hissBefore`, `hissAfter`), the neighbour's
   * part beside it is faded over this long (s), not the default run-on fade.
   */
  runOnFadeBefore?: number;
  runOnFadeAfter?: number;
}

/** Words' times as the transcript has them: the first and last of a cut, and their neighbours when there are. */
export interface EdgeWords {
  prevEnd?: number;
  start: number;
  firstEnd: number;
  lastStart: number;
  end: number;
  nextStart?: number;
  duration: number;
  /** The cut's first word starts a sentence, its last ends one: a pause is expected there even where none was heard. */
  sentenceStart?: boolean;
  sentenceEnd?: boolean;
  /**
   * The times come from a forced alignment of the words around each edge (word-align.ts), not from a transcript:
   * within a few tens of milliseconds, pauses included. A boundary between words that run together is taken as it
   * is (no lean into the neighbour), and the windows are held to the words (no reach past them).
   */
  tight?: boolean;
  /**
   * Where the words run together at the head (tail), the boundary two alignments agree on (the transcript's and a
   * forced alignment of the words around it, analysis/word-joins.ts), taken at its side that keeps more of the cut's
   * word. The cut goes CLOSE_LEAN beyond it rather than up to RUN_ON_REACH: a shorter fragment of the neighbour.
   */
  agreedBefore?: number;
  agreedAfter?: number;
  /**
   * The agreed join before (after) is a sibilant's onset (analysis/join-landmarks.ts): it is searched for in the sound
   * within HISS_SEARCH of the agreed boundary, and the cut goes HISS_LEAN beyond it, faded over HISS_FADE.
   */
  hissBefore?: boolean;
  hissAfter?: boolean;
  /**
   * The cut's first word starts (its last word ends) with a sibilant, out of (into) a neighbour sound that is no
   * obstruent: where the words run together, an edge that falls inside that hiss (a boundary put late, the s given to
   * the word before) is moved to the hiss's onset (end), HISS_LEAN beyond it.
   */
  sibilantHead?: boolean;
  sibilantTail?: boolean;
}

export interface EdgeDeps {
  ffmpeg: string;
  limiter: Limiter;
}

async function decode(
  deps: EdgeDeps,
  source: MediaSource,
  from: number,
  to: number,
  signal?: AbortSignal,
): Promise<Float32Array> {
  const args = monoSoundArgs(source, { from, seconds: to - from }, RATE);
  const r = await deps.limiter.run(() =>
    runProcess(deps.ffmpeg, args, { timeoutMs: 60_000, ...(signal ? { signal } : {}), maxStdout: 4 * RATE * 2 * 10 }),
  );
  if (r.code !== 0)
    throw new Error(
      r.cancelled
        ? 'cancelled'
        : `ffmpeg could not decode the sound around the words (${r.stderr.trim().split('\n').pop() ?? r.code})`,
    );
  const b = r.stdout;
  const pcm = new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1)));
  return Float32Array.from(pcm, (v) => v / 32768);
}

/**
 * Per frame (centred every HOP samples): how far its bands rise above their floors (mean dB), its energy (dB), and
 * its energy above HIGH_HZ (dB), where a stop's burst shows over a bed whose sound is all lower.
 */
export function frameActivity(samples: Float32Array): Frames {
  const count = Math.max(0, Math.floor((samples.length - FRAME) / HOP) + 1);
  const bands: Float64Array[] = [];
  const energy: number[] = [];
  const high: number[] = [];
  const window = Float64Array.from({ length: FRAME }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (FRAME - 1)));
  const re = new Float64Array(FRAME);
  const im = new Float64Array(FRAME);
  const per = FRAME / 2 / BANDS;
  for (let f = 0; f < count; f++) {
    let sum = 0;
    for (let i = 0; i < FRAME; i++) {
      const v = samples[f * HOP + i]!;
      sum += v * v;
      re[i] = v * window[i]!;
      im[i] = 0;
    }
    fft(re, im);
    const b = new Float64Array(BANDS);
    for (let k = 0; k < BANDS; k++) {
      let e = 0;
      for (let x = k * per + (k === 0 ? 1 : 0); x < (k + 1) * per; x++) e += re[x]! * re[x]! + im[x]! * im[x]!;
      b[k] = 10 * Math.log10(e + 1e-9);
    }
    bands.push(b);
    energy.push(10 * Math.log10(sum / FRAME + 1e-12));
    let above = 0;
    for (let k = HIGH_BAND; k < BANDS; k++) above += 10 ** (b[k]! / 10);
    high.push(10 * Math.log10(above + 1e-12));
  }
  // A band's floor is its quietest tenth, but never more than QUIET_BELOW_PEAK_DB under the loudest band of the
  // window: a synthesiser's hiss where a bed leaves a band empty is not speech.
  let loudest = -Infinity;
  for (const b of bands) for (let k = 0; k < BANDS; k++) loudest = Math.max(loudest, b[k]!);
  const floors = Array.from({ length: BANDS }, (_, k) => {
    const v = bands.map((b) => b[k]!).sort((x, y) => x - y);
    return Math.max(v[Math.floor(v.length * 0.1)] ?? 0, loudest - QUIET_BELOW_PEAK_DB);
  });
  const peak = Math.max(...energy);
  const activity = bands.map((b, f) => {
    // Far below the window's loudest frame is silence whatever its bands do (a synthesiser's or a room's hiss).
    if (energy[f]! < peak - QUIET_BELOW_PEAK_DB) return 0;
    let rise = 0;
    for (let k = 0; k < BANDS; k++) rise += Math.max(0, b[k]! - floors[k]! - BAND_MARGIN_DB);
    return rise / BANDS;
  });
  return { activity, energy, high };
}
/** The bands from this one up (500 Hz each) are above HIGH_HZ = 2 kHz. */
const HIGH_BAND = 4;

/** The time (s, from the decoded window's start) of frame f's centre. */
const frameTime = (f: number) => (f * HOP + FRAME / 2) / RATE;

interface Run {
  first: number;
  last: number;
}

/** Runs of frames where `on` holds (or does not). */
function runsOf(on: boolean[], value: boolean): Run[] {
  const out: Run[] = [];
  for (let f = 0; f < on.length;) {
    if (on[f] !== value) {
      f++;
      continue;
    }
    let g = f;
    while (g + 1 < on.length && on[g + 1] === value) g++;
    out.push({ first: f, last: g });
    f = g + 1;
  }
  return out;
}

/**
 * Runs of quiet frames at least MIN_PAUSE long. A frame is speech where its rise is at least ACTIVE_DB and a quarter
 * of the window's strong rises (a bed's own swells stay under that beside speech). A stop's burst after its closure
 * is speech however short: the closure is a pause inside the word, shorter than the one beside it.
 */
function pauses(activity: number[]): Run[] {
  const min = Math.ceil((MIN_PAUSE * RATE) / HOP);
  return runsOf(speechFrames(activity), false).filter((r) => r.last - r.first + 1 >= min);
}

/** Which frames are speech (see pauses). */
function speechFrames(activity: number[]): boolean[] {
  const sorted = [...activity].sort((x, y) => x - y);
  const strong = sorted[Math.floor(sorted.length * 0.95)] ?? 0;
  return activity.map((a) => a >= Math.max(ACTIVE_DB, strong * RELATIVE_ACTIVE));
}

/**
 * Seconds of [from, to] (on the asset's clock) the sound has as speech, outside pauses of MIN_PAUSE or more: whether
 * words a recogniser did not place can lie there. Half a second either side is read as reference.
 */
export async function speechSeconds(
  deps: EdgeDeps,
  source: MediaSource,
  from: number,
  to: number,
  duration: number,
  signal?: AbortSignal,
): Promise<number> {
  if (!(to > from)) return 0;
  const origin = Math.max(0, from - 0.5);
  const a = frameActivity(await decode(deps, source, origin, Math.min(duration, to + 0.5), signal));
  const quiet = new Set<number>();
  for (const r of pauses(a.activity)) for (let f = r.first; f <= r.last; f++) quiet.add(f);
  let spoken = 0;
  for (let f = 0; f < a.activity.length; f++) {
    const t = origin + frameTime(f);
    if (t >= from && t <= to && !quiet.has(f)) spoken++;
  }
  return (spoken * HOP) / RATE;
}

/**
 * Where speech is heard in [from, to] of a source (s, on its clock): the runs between pauses (MIN_PAUSE or more),
 * each at least MIN_SPEECH long. Read in pieces of SPEECH_PIECE seconds, each against its own floors.
 */
export async function speechRuns(
  deps: EdgeDeps,
  source: MediaSource,
  from: number,
  to: number,
  signal?: AbortSignal,
): Promise<{ from: number; to: number }[]> {
  const out: { from: number; to: number }[] = [];
  for (let at = Math.max(0, from); at < to - 0.05; at += SPEECH_PIECE) {
    const end = Math.min(to, at + SPEECH_PIECE);
    const samples = await decode(deps, source, at, end, signal);
    if (samples.length < FRAME) continue;
    const speech = speechFrames(frameActivity(samples).activity);
    for (const r of runsOf(speech, true)) {
      const a = at + frameTime(r.first) - HOP / 2 / RATE;
      const b = at + frameTime(r.last) + HOP / 2 / RATE;
      if (b - a < MIN_SPEECH) continue;
      const last = out.at(-1);
      // A run cut by the piece's edge goes on in the next piece.
      if (last && a - last.to < MIN_PAUSE) last.to = b;
      else out.push({ from: a, to: b });
    }
  }
  return out;
}
const SPEECH_PIECE = 30;
const MIN_SPEECH = 0.08;

function quietestFrame(energy: number[], first: number, last: number): number {
  let q = first;
  for (let f = first; f <= last; f++) if (energy[f]! < energy[q]!) q = f;
  return q;
}

/**
 * The pause before a word (side "before", returning the word's onset) or after it ("after", returning its end), in
 * a window of frames: the long quiet run nearest the transcript's boundary; failing one, where the transcript hears
 * a pause, the longest quiet run; where it hears the words run together, a point just beyond its boundary (the cut
 * goes there, `runOn`: the neighbour's part beside it is faded, not switched on or off in running speech).
 */
function edgeIn(
  a: Frames,
  side: 'before' | 'after',
  boundary: number,
  heardPause: boolean,
  origin: number,
  tight = false,
  agreed?: number,
  hiss?: { samples: Float32Array; from: number },
): { edge: number; pause: Pause; open: boolean; runOn?: boolean; fade?: number } {
  const t = (f: number) => origin + frameTime(f);
  const runs = pauses(a.activity);
  const near = (r: Run) =>
    t(r.first) <= boundary && boundary <= t(r.last)
      ? 0
      : Math.min(Math.abs(t(r.first) - boundary), Math.abs(t(r.last) - boundary));
  const length = (r: Run) => ((r.last - r.first + 1) * HOP) / RATE;
  // A long quiet run is a pause even where the transcript ran the words together: at its boundary (it may have
  // swallowed the pause), or anywhere in the window when very long (a word put a second late). A shorter one away
  // from the boundary is a word's own fading end ("afternoon, and"). Of several (a filler stretched over the pause
  // before it has another after it), the one nearest the transcript's boundary.
  const atFarEdge = (r: Run) => (side === 'before' ? r.last >= a.activity.length - 1 : r.first === 0);
  // (One running on past the window's far edge may be longer: it is taken, and the window widened to see it whole.)
  const long = (r: Run) =>
    length(r) >= LONG_PAUSE && (heardPause || near(r) <= 0.1 || length(r) >= SWALLOWED_PAUSE || atFarEdge(r));
  let run: Run | undefined;
  for (const r of runs) if (long(r) && (!run || near(r) < near(run))) run = r;
  // A short quiet run that ends before the transcript's boundary (on the kept word's side of it) is a stop's
  // closure inside the word ("ship|in": the closure of its p, then the burst the recogniser counts in the word), not
  // the pause: the words run together there. So is a run further than RUN_ON_REACH from it (another word's end).
  const reaches = (r: Run) =>
    near(r) <= RUN_ON_REACH &&
    (side === 'before' ? t(r.first) <= boundary + CLOSURE_SLACK : t(r.last) >= boundary - CLOSURE_SLACK);
  if (!run && heardPause)
    for (const r of runs) if (reaches(r) && (!run || r.last - r.first > run.last - run.first)) run = r;
  if (run) {
    if (side === 'after') run = afterRelease(a, run);
    // The word starts where the pause's last quiet frame ends (half a hop on), and ends where its first one begins.
    const edge = side === 'before' ? t(run.last) + HOP / 2 / RATE : t(run.first) - HOP / 2 / RATE;
    // A pause that runs to the window's far edge (past where the transcript put the word) says the word lies beyond.
    const open = atFarEdge(run);
    return {
      edge,
      pause: { from: t(run.first), to: t(run.last), quietest: t(quietestFrame(a.energy, run.first, run.last)) },
      open,
    };
  }
  // No pause, and two alignments agree where the words meet: the cut goes CLOSE_LEAN beyond that boundary
  // (bench/README.md, "cut by words": no kept word clipped on flite's voices, clean or under a bed, at this lean).
  if (agreed !== undefined) {
    // Where the join is a sibilant's onset, the sound places it to a few milliseconds: HISS_LEAN beyond it.
    const found = hiss ? hissOnset(hiss, agreed) : undefined;
    if (found !== undefined) {
      const q = side === 'before' ? found - HISS_LEAN : found + HISS_LEAN;
      return { edge: q, pause: { from: q, to: q, quietest: q }, open: false, runOn: true, fade: HISS_FADE };
    }
    const q = side === 'before' ? agreed - CLOSE_LEAN : agreed + CLOSE_LEAN;
    return { edge: q, pause: { from: q, to: q, quietest: q }, open: false, runOn: true };
  }
  // No pause: the words run together. A recogniser's boundary between them errs by tens of milliseconds either way
  // (more under a bed), and the quietest point near it is as often a stop's closure inside the cut's own word as the
  // join: cut on the neighbour's side only, at least RUN_ON_LEAN and at most RUN_ON_REACH beyond the boundary, at the
  // neighbour's end of the quietest stretch there (a little of the neighbour is heard, the word is not clipped). A
  // boundary aligned to the words (tight) errs less: TIGHT_LEAN and TIGHT_REACH.
  const lean = tight ? TIGHT_LEAN : RUN_ON_LEAN;
  const reach = tight ? TIGHT_REACH : RUN_ON_REACH;
  const lo = side === 'before' ? boundary - reach : boundary + lean;
  const hi = side === 'before' ? boundary - lean : boundary + reach;
  let first = a.activity.length;
  let last = -1;
  for (let f = 0; f < a.activity.length; f++) {
    if (t(f) >= lo && t(f) <= hi) {
      first = Math.min(first, f);
      last = Math.max(last, f);
    }
  }
  // A frame is quiet over all of its 16 ms, and the next one out is not: the neighbour starts within the hop beyond
  // the quiet frame's outer end. The cut goes in the middle of that hop, not at the quiet frame's centre.
  const outer = ((side === 'before' ? -1 : 1) * (FRAME / 2 + HOP / 2)) / RATE;
  const quiet = first <= last ? t(quietStretchEnd(a.energy, first, last, side)) + outer : boundary;
  const q = side === 'before' ? Math.min(quiet, boundary - lean) : Math.max(quiet, boundary + lean);
  // The neighbour's sound goes on at the edge: it is faded out beside it (cutAroundEdges), never stepped off.
  return { edge: q, pause: { from: q, to: q, quietest: q }, open: false, runOn: true };
}

/**
 * Where words run together, the quietest stretch between them, and its end on the neighbour's side: the frames next
 * to the quietest one within FLOOR_DB of it, followed towards the neighbour (before the cut's first word, earlier;
 * after its last, later). The kept word's fading end is as quiet as the join ("roses|and": the z fades 4 dB under
 * the join), so the quietest frame alone is often inside it; where the stretch is flat (a glide, "knew|where"), this
 * reaches the window's far edge: no sign of a join, the most of the neighbour allowed is kept instead of the word cut.
 */
function quietStretchEnd(energy: number[], first: number, last: number, side: 'before' | 'after'): number {
  const q = quietestFrame(energy, first, last);
  const step = side === 'before' ? -1 : 1;
  let f = q;
  while (f + step >= first && f + step <= last && energy[f + step]! <= energy[q]! + FLOOR_DB) f += step;
  return f;
}

/**
 * A final stop's release: after the word's last vowel the pause starts with the stop's closure, then a burst rises
 * out of it ("up": 60 ms of closure, then a burst 30 dB under the vowel), which the band test beside a loud vowel calls
 * quiet. It is the word's own, so the pause starts after it. A burst is a frame at most RELEASE_AFTER into the pause
 * that rises RELEASE_RISE dB over the quietest frame before it, within RELEASE_UNDER_PEAK dB of the window's loudest
 * frame and RELEASE_OVER_FLOOR dB over the pause's median (under a bed, the bed: its slow swells do not rise so), or
 * that rises so above 2 kHz alone, RELEASE_HIGH_RISE over the closure (a bed whose sound is all lower hides the burst
 * from the whole band's energy, not from the ear). A word's fading end does not rise, and is left to the handle.
 */
function afterRelease(a: Frames, run: Run): Run {
  const { energy, high } = a;
  const peak = Math.max(...energy);
  const median = (v: number[]) => v.slice(run.first, run.last + 1).sort((x, y) => x - y)[(run.last - run.first) >> 1];
  const floor = median(energy) ?? -Infinity;
  const highFloor = median(high) ?? -Infinity;
  const most = Math.min(run.last - 1, run.first + Math.round((RELEASE_AFTER * RATE) / HOP));
  let low = Infinity;
  let lowHigh = Infinity;
  let burst: number | undefined;
  for (let f = run.first; f <= most; f++) {
    const e = energy[f]!;
    const h = high[f]!;
    if (e >= peak - RELEASE_UNDER_PEAK) {
      if (e >= low + RELEASE_RISE && e >= floor + RELEASE_OVER_FLOOR) burst = f;
      // Under a bed whose sound is all lower (a chord, a pad), the burst is heard above 2 kHz alone.
      else if (h >= lowHigh + RELEASE_HIGH_RISE && h >= highFloor + RELEASE_OVER_FLOOR) burst = f;
    }
    low = Math.min(low, e);
    lowHigh = Math.min(lowHigh, h);
  }
  return burst === undefined ? run : { first: burst + 1, last: run.last };
}

const RELEASE_AFTER = 0.16;
const RELEASE_RISE = 6;
const RELEASE_UNDER_PEAK = 35;
const RELEASE_OVER_FLOOR = 12;
/** Above 2 kHz a burst rises this far (dB) over the closure before it (rms's "up." under a bed: 35 dB). */
const RELEASE_HIGH_RISE = 20;

/** dB above the quietest frame that still belongs to the quiet stretch where words run together. */
const FLOOR_DB = 4;
/** How far (s) a short pause may end short of the transcript's boundary and still be the pause, not a closure. */
const CLOSURE_SLACK = 0.01;
/** Where words run together, a cut goes this far (s) at least, and at most, beyond the transcript's boundary. */
const RUN_ON_LEAN = 0.04;
const RUN_ON_REACH = 0.12;

/**
 * Where aligned words run together, the cut goes this far (s) at least, and at most TIGHT_REACH, past their boundary:
 * the alignment's boundary errs by ±10 ms for half of them and by more than 20 ms for one in ten, and a clipped word
 * is worse than a few milliseconds of its neighbour.
 */
const TIGHT_LEAN = 0.025;
const TIGHT_REACH = 0.06;

/**
 * Where two alignments agree on a boundary between words that run together, the cut goes this far (s) beyond it: each
 * errs by up to 60 ms alone; agreeing at a join a stop or a hiss marks, by at most 25 ms into the kept word on flite's
 * four voices, clean and under a bed (bench/README.md): the cut lands at the true boundary or beyond it.
 */
export const CLOSE_LEAN = 0.03;

/**
 * At a sibilant's onset (analysis/join-landmarks.ts), the onset is searched for within HISS_SEARCH (s) of the agreed
 * boundary (which errs by up to 25 ms), and the cut goes HISS_LEAN beyond it, the neighbour's part faded over
 * HISS_FADE: the onset found lies within -12..+10 ms of the true one on flite's four voices, clean and under a bed
 * (bench/README.md), so no word is clipped and at most about 25 ms of the neighbour is heard.
 */
const HISS_SEARCH = 0.03;
export const HISS_LEAN = 0.008;
const HISS_FADE = 0.005;

/** The sibilant's onset near `agreed` (s, on the asset's clock) in decoded sound starting at `from`, if heard. */
function hissOnset(sound: { samples: Float32Array; from: number }, agreed: number): number | undefined {
  const lo = Math.max(0, Math.floor((agreed - HISS_SEARCH - HISS_CONTEXT - sound.from) * RATE));
  const hi = Math.min(sound.samples.length, Math.ceil((agreed + HISS_SEARCH + HISS_CONTEXT - sound.from) * RATE));
  if (hi - lo < RATE * 2 * HISS_SEARCH) return undefined;
  const at = sibilantOnset(sound.samples.subarray(lo, hi), RATE, agreed - sound.from - lo / RATE, HISS_SEARCH);
  return at === undefined ? undefined : sound.from + lo / RATE + at;
}
/**
 * A run-on edge that falls inside the kept word's sibilant (analysis/join-landmarks.ts hissBegunBefore; the tail's
 * read on the sound reversed, where the hiss's end is an onset) moved to that hiss's onset (end), HISS_LEAN beyond it,
 * the neighbour's part faded over HISS_FADE. Any other edge as it is.
 */
function wholeHiss<E extends { edge: number; runOn?: boolean; fade?: number; pause: Pause; open: boolean }>(
  r: E,
  samples: Float32Array,
  from: number,
  side: 'before' | 'after',
): E {
  if (!r.runOn) return r;
  const length = samples.length / RATE;
  const at = side === 'before' ? r.edge - from : length - (r.edge - from);
  const sound = side === 'before' ? samples : samples.slice().reverse();
  const onset = hissBegunBefore(sound, RATE, at, HISS_BEGUN_REACH);
  if (onset === undefined) return r;
  const q = side === 'before' ? from + onset - HISS_LEAN : from + length - onset + HISS_LEAN;
  return { ...r, edge: q, pause: { from: q, to: q, quietest: q }, fade: HISS_FADE };
}
/** How far back (s) from an edge inside a hiss its onset is looked for: longer than a sibilant lasts. */
const HISS_BEGUN_REACH = 0.25;

/** Sound read beyond the search on each side (s): the measure's frames and the hiss's hold after the onset. */
const HISS_CONTEXT = 0.06;

/** A quiet run this long (s) is a pause near where the transcript puts the words, and this long anywhere. */
const LONG_PAUSE = 0.15;
const SWALLOWED_PAUSE = 0.3;
/** The transcript hears a pause between two words when they are this far apart (s). */
const HEARD_PAUSE = 0.08;

/**
 * A cut's edges heard in the sound: the first word's onset and the last word's end, each from a window reaching from
 * well inside the neighbouring word (or up to a second of what precedes or follows) to well inside the cut's own word.
 */
export async function hearEdges(
  deps: EdgeDeps,
  source: MediaSource,
  w: EdgeWords,
  signal?: AbortSignal,
): Promise<HeardEdges> {
  const heardGap = w.tight ? TIGHT_HEARD_PAUSE : HEARD_PAUSE;
  const heardBefore = w.prevEnd === undefined || w.start - w.prevEnd >= heardGap;
  const heardAfter = w.nextStart === undefined || w.nextStart - w.end >= heardGap;
  // Between sentences the recogniser that hears no pause has swallowed it into a word on one side (a sentence's last
  // word run over it, or its first put early in it): look a second to each side for it. (Aligned words do not.)
  const swallowedBefore = !w.tight && !heardBefore && !!w.sentenceStart;
  const swallowedAfter = !w.tight && !heardAfter && !!w.sentenceEnd;
  const headFrom = Math.max(
    0,
    w.prevEnd !== undefined && !swallowedBefore ? Math.min(w.prevEnd - 0.3, w.start - 0.3) : w.start - 1,
  );
  const tailTo = Math.min(
    w.duration,
    w.nextStart !== undefined && !swallowedAfter ? Math.max(w.nextStart + 0.3, w.end + 0.3) : w.end + 1,
  );
  // The head's edge is never searched past the middle of the cut's words, nor the tail's back before it: a short cut
  // (one word) would otherwise find the pause after its word as the one before it, or the other way round, and end
  // before it starts. (The windows themselves are not narrowed: a band's floor is measured over the whole window, and
  // a narrower one moves every edge heard in it.)
  const middle = (w.start + w.end) / 2;
  // Where the pause runs on to the window's far edge, the transcript put the word inside the pause (it swallowed
  // the silence): look further, up to REACH seconds past the transcript's times, within the cut's own words.
  const head = async () => {
    let headTo = Math.min(
      w.duration,
      Math.max(w.firstEnd, w.start + (swallowedBefore ? 0.8 : 0.3)) + (w.tight ? 0.05 : 0.2),
    );
    for (;;) {
      const samples = await decode(deps, source, headFrom, headTo, signal);
      let r = edgeIn(
        framesUpTo(frameActivity(samples), headFrom, middle),
        'before',
        w.start,
        heardBefore,
        headFrom,
        w.tight,
        w.agreedBefore,
        w.hissBefore ? { samples, from: headFrom } : undefined,
      );
      if (w.sibilantHead) r = wholeHiss(r, samples, headFrom, 'before');
      const further = Math.min(w.duration, w.end, headTo + 1);
      if (w.tight || !r.open || headTo >= middle || further <= headTo + 0.05 || headTo - w.start >= REACH) return r;
      headTo = further;
    }
  };
  const tail = async () => {
    let tailFrom = Math.max(0, Math.min(w.lastStart, w.end - (swallowedAfter ? 0.8 : 0.3)) - (w.tight ? 0.05 : 0.2));
    for (;;) {
      const samples = await decode(deps, source, tailFrom, tailTo, signal);
      const from = framesFrom(frameActivity(samples), tailFrom, middle);
      const hiss = w.hissAfter ? { samples, from: tailFrom } : undefined;
      let r = edgeIn(from.frames, 'after', w.end, heardAfter, from.origin, w.tight, w.agreedAfter, hiss);
      if (w.sibilantTail) r = wholeHiss(r, samples, tailFrom, 'after');
      const further = Math.max(0, w.start, tailFrom - 1);
      if (w.tight || !r.open || tailFrom <= middle || further >= tailFrom - 0.05 || w.end - tailFrom >= REACH) return r;
      tailFrom = further;
    }
  };
  const [before, after] = await Promise.all([head(), tail()]);
  return {
    onset: before.edge,
    before: before.pause,
    end: after.edge,
    after: after.pause,
    ...(before.runOn ? { runOnBefore: true } : {}),
    ...(after.runOn ? { runOnAfter: true } : {}),
    ...(before.fade !== undefined ? { runOnFadeBefore: before.fade } : {}),
    ...(after.fade !== undefined ? { runOnFadeAfter: after.fade } : {}),
  };
}

type Frames = { activity: number[]; energy: number[]; high: number[] };

/** A window's frames whose centres lie at or before `limit` (s); `origin` is the window's start. */
function framesUpTo(a: Frames, origin: number, limit: number): Frames {
  let n = a.activity.length;
  while (n > 1 && origin + frameTime(n - 1) > limit) n--;
  return n === a.activity.length
    ? a
    : { activity: a.activity.slice(0, n), energy: a.energy.slice(0, n), high: a.high.slice(0, n) };
}

/** A window's frames whose centres lie at or after `limit` (s), with the time their first frame starts from. */
function framesFrom(a: Frames, origin: number, limit: number): { frames: Frames; origin: number } {
  let k = 0;
  while (k < a.activity.length - 1 && origin + frameTime(k) < limit) k++;
  if (!k) return { frames: a, origin };
  return {
    frames: { activity: a.activity.slice(k), energy: a.energy.slice(k), high: a.high.slice(k) },
    origin: origin + (k * HOP) / RATE,
  };
}

/** Aligned words this far apart (s) have a pause between them (the engine's shortest silence is 30 ms). */
const TIGHT_HEARD_PAUSE = 0.03;

/** How far past the transcript's time of an edge the sound is searched for it, at most (s). */
const REACH = 3;
