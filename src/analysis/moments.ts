// find_moments' candidates, signals and rank, pure: spans of a source snapped to its units (whole sentences where
// there are words, else whole shots, else stretches of sound between silences), each measured by numbers an agent
// can weigh (the words against `about`, speech density, loudness and peaks, motion, cut rate) and ranked by a fixed
// weighted sum of them. Deterministic: the same inputs give the same moments in the same order.
import { clipAroundWords, textWords, type Sentence, type TimedWord } from '../edit/words.js';
import { baseForms, cooccurring, relatedness, type Related } from './related-words.js';
import { searchBySound, type Pronouncer } from './sound-search.js';

/** What is known of one source: its transcript and its inspection, either possibly missing. */
export interface MomentSource {
  asset_id: string;
  duration: number;
  words?: TimedWord[];
  sentences?: Sentence[];
  /** Shot starts and ends (videos; empty for audio or when not inspected). */
  shots?: { start_seconds: number; end_seconds: number }[];
  silences?: { start_seconds: number; end_seconds: number }[];
  loudness?: { start_seconds: number; mean_db: number; peak_db: number }[];
  loudnessWindow?: number;
  /** Bits per pixel per window of frames coded from their neighbours (null: no such frame there). */
  motion?: { windowSeconds: number; bitsPerPixel: (number | null)[] } | null;
}

export interface MomentSignals {
  /** How well the words match `about`, 0-1 (1: said as spelled; else how alike the sounds are). */
  about?: number;
  /** The words matched, as heard. */
  about_heard?: string;
  /** Sentences inside whole, and sentences the span cuts. */
  sentences?: number;
  sentences_cut?: number;
  /** Words per second. */
  words_per_second?: number;
  /** RMS level (dBFS) over the span, and against the source's median window. */
  loudness_db?: number;
  louder_than_source_db?: number;
  peak_db?: number;
  /** Picture change over the span as a multiple of the source's median window (1: typical for it). */
  motion?: number;
  /** Hard cuts inside the span, and per minute. */
  cuts?: number;
  cuts_per_minute?: number;
}

export interface Moment {
  asset_id: string;
  start_seconds: number;
  end_seconds: number;
  score: number;
  signals: MomentSignals;
  reason: string;
  /** For compose_edit: by words where there are words (cut in the pauses), else by times. */
  clip: { asset_id: string; words?: [number, number]; start?: number; end?: number };
  /** The words said, clipped. */
  text?: string;
}

export interface MomentOptions {
  about?: string;
  minSeconds: number;
  maxSeconds: number;
  pronouncer?: Pronouncer;
  /** Words related to `about` (WordNet's, analysis/related-words.ts); without them, words said beside it. */
  related?: Related;
  exceptions?: Map<string, string[]>;
}

/**
 * How much each signal weighs (normalised 0-1 first; see `parts`). Only the signals a span has count, divided by the
 * weight they add up to, so a source without a picture or without words is not ranked down for it.
 */
export const WEIGHTS = { about: 3, whole: 1, speech: 1, loud: 1.5, peak: 0.5, motion: 1, cuts: 1 } as const;

const round = (v: number, d = 3) => Math.round(v * 10 ** d) / 10 ** d;
const clamp01 = (v: number) => Math.min(1, Math.max(0, v));
const toDb = (power: number) => (power > 0 ? 10 * Math.log10(power) : -100);

const STOP = new Set(
  'a an and are as at be but by for from has have he her his i in is it its me my of on or our she so that the their them they this to was we were what when where which who will with you your'.split(
    ' ',
  ),
);

/** The words of a subject that carry its meaning ("the storm": storm). */
export const aboutTerms = (about: string): string[] => [
  ...new Set(
    textWords(about)
      .map((w) => w.key)
      .filter((k) => !STOP.has(k)),
  ),
];

/** A unit spans are built from: a sentence, a shot or a stretch of sound. */
interface Unit {
  start: number;
  end: number;
  /** Word range, for sentences. */
  words?: [number, number];
}

function median(values: number[]): number | undefined {
  if (!values.length) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The units of a source: its sentences; without words, its shots; without shots, its sound between silences. Word
 * ranges are indices into `words`, which are the transcript's own (`index` equals the place). */
function unitsOf(src: MomentSource, maxSeconds: number): Unit[] {
  if (src.words?.length && src.sentences?.length) {
    const words = src.words;
    // A sentence longer than the longest moment (free recognition may hear no pause long enough to end one) is split,
    // then at its longest pauses between words until its pieces fit: never inside a word.
    const split = (first: number, last: number): Unit[] => {
      const unit = {
        start: words[first]!.start_seconds,
        end: words[last]!.end_seconds,
        words: [first, last] as [number, number],
      };
      if (last === first || unit.end - unit.start <= maxSeconds) return [unit];
      let at = first;
      for (let i = first + 1; i < last; i++) {
        if (words[i + 1]!.start_seconds - words[i]!.end_seconds > words[at + 1]!.start_seconds - words[at]!.end_seconds)
          at = i;
      }
      return [...split(first, at), ...split(at + 1, last)];
    };
    // First at the silences the sound holds inside it (where free recognition heard words in a pause, its words'
    // times show none): each splits before the first word that starts past its middle.
    const atSilences = (first: number, last: number): [number, number][] => {
      const cuts = (src.silences ?? [])
        .map((q) => (q.start_seconds + q.end_seconds) / 2)
        .filter((mid) => mid > words[first]!.end_seconds && mid < words[last]!.start_seconds)
        .map((mid) => words.findIndex((w, i) => i > first && i <= last && w.start_seconds >= mid))
        .filter((k) => k > first);
      const bounds = [...new Set(cuts)].sort((a, b) => a - b);
      return [first, ...bounds].map((a, k) => [a, (bounds[k] ?? last + 1) - 1]);
    };
    return src.sentences.flatMap((s) =>
      s.end_seconds - s.start_seconds > maxSeconds
        ? atSilences(s.first_word, s.last_word).flatMap(([a, b]) => split(a, b))
        : split(s.first_word, s.last_word),
    );
  }
  let spans: { start: number; end: number }[];
  if (src.shots?.length) spans = src.shots.map((s) => ({ start: s.start_seconds, end: s.end_seconds }));
  else {
    spans = [];
    let at = 0;
    for (const s of src.silences ?? []) {
      if (s.start_seconds > at) spans.push({ start: at, end: s.start_seconds });
      at = Math.max(at, s.end_seconds);
    }
    if (src.duration > at) spans.push({ start: at, end: src.duration });
    // Nothing but silence: nothing worth a moment.
    if (src.loudness?.length && src.loudness.every((l) => l.mean_db <= -90)) spans = [];
  }
  // A unit longer than the longest moment is cut into pieces that fit (a long shot, a long stretch of sound).
  return spans.flatMap((u) => {
    const n = Math.ceil((u.end - u.start) / maxSeconds - 1e-9);
    if (n <= 1) return [u];
    const d = (u.end - u.start) / n;
    return Array.from({ length: n }, (_, k) => ({
      start: round(u.start + k * d),
      end: round(k + 1 === n ? u.end : u.start + (k + 1) * d),
    }));
  });
}

/** Sums over windows of a curve, for the mean over any span in constant time. */
class Curve {
  private readonly sum: Float64Array;
  private readonly count: Uint32Array;
  constructor(
    readonly window: number,
    values: (number | null)[],
  ) {
    this.sum = new Float64Array(values.length + 1);
    this.count = new Uint32Array(values.length + 1);
    values.forEach((v, i) => {
      this.sum[i + 1] = this.sum[i]! + (v ?? 0);
      this.count[i + 1] = this.count[i]! + (v === null ? 0 : 1);
    });
  }
  /** Windows that overlap [start, end) by at least half a window (at least one). */
  private range(start: number, end: number): [number, number] {
    const n = this.sum.length - 1;
    const a = Math.min(n - 1, Math.max(0, Math.round(start / this.window)));
    const b = Math.min(n, Math.max(a + 1, Math.round(end / this.window)));
    return [a, b];
  }
  mean(start: number, end: number): number | undefined {
    const [a, b] = this.range(start, end);
    const c = this.count[b]! - this.count[a]!;
    return c ? (this.sum[b]! - this.sum[a]!) / c : undefined;
  }
}

/** What is measured once per source: the about hits, the curves, the medians the spans are compared with. */
interface Measured {
  src: MomentSource;
  aboutHits: { first: number; last: number; score: number; text: string }[][];
  aboutTerms: number;
  related?: Related;
  power?: Curve;
  peaks?: { start: number; peak: number }[];
  medianDb?: number;
  motion?: Curve;
  medianMotion?: number;
  cuts: number[];
}

function measure(src: MomentSource, opts: MomentOptions): Measured {
  const words = src.words ?? [];
  // The whole phrase, and each word of it that carries meaning, matched by spelling and by sound.
  const aboutHits: Measured['aboutHits'] = [];
  let aboutTerms = 0;
  if (opts.about && opts.pronouncer) {
    const all = textWords(opts.about).map((w) => w.key);
    const terms = [...new Set(all.filter((k) => !STOP.has(k)))];
    aboutTerms = terms.length || 1;
    // "the storm": its one word that means something is searched on its own too (the phrase may not be heard as such).
    const queries = all.length > 1 && terms.length ? [opts.about, ...terms] : [opts.about];
    for (const q of queries) {
      aboutHits.push(
        words.length
          ? searchBySound(words, q, opts.pronouncer).hits.map((h) => ({
              first: h.words[0],
              last: h.words[1],
              score: h.score,
              text: h.text,
            }))
          : [],
      );
    }
  }
  // Related words: WordNet's, else those said in the subject's own sentences in this transcript.
  let related = opts.related;
  if (opts.about && !related && words.length) {
    const subject = new Set(textWords(opts.about).flatMap((w) => (STOP.has(w.key) ? [] : baseForms(w.key))));
    related = cooccurring(
      (src.sentences ?? []).map((s) => words.slice(s.first_word, s.last_word + 1).map((w) => w.word)),
      (w) => baseForms(w).some((b) => subject.has(b)),
    );
  }
  const loud = src.loudness ?? [];
  const window = src.loudnessWindow ?? (loud.length > 1 ? loud[1]!.start_seconds - loud[0]!.start_seconds : 0);
  const measured: Measured = {
    src,
    aboutHits,
    aboutTerms,
    ...(related ? { related } : {}),
    cuts: (src.shots ?? []).slice(1).map((s) => s.start_seconds),
  };
  if (loud.length && window > 0) {
    measured.power = new Curve(
      window,
      loud.map((l) => 10 ** (l.mean_db / 10)),
    );
    measured.peaks = loud.map((l) => ({ start: l.start_seconds, peak: l.peak_db }));
    measured.medianDb = median(loud.filter((l) => l.mean_db > -90).map((l) => l.mean_db));
  }
  if (src.motion) {
    measured.motion = new Curve(src.motion.windowSeconds, src.motion.bitsPerPixel);
    const m = median(src.motion.bitsPerPixel.filter((v): v is number => v !== null));
    if (m && m > 0) measured.medianMotion = m;
  }
  return measured;
}

/** How much words wf..wl say of the subject: the subject heard (by spelling or sound), else its related words. */
function aboutOf(m: Measured, wf: number, wl: number, opts: MomentOptions): { score: number; heard: string[] } {
  const best = (hits: Measured['aboutHits'][number]) =>
    hits.filter((h) => h.first >= wf && h.last <= wl).sort((a, b) => b.score - a.score || a.first - b.first)[0];
  const phrase = m.aboutHits[0] ? best(m.aboutHits[0]) : undefined;
  const terms = m.aboutHits.slice(1).map(best);
  const termScore = terms.length ? terms.reduce((s, h) => s + (h?.score ?? 0), 0) / m.aboutTerms : 0;
  const score = Math.max(phrase?.score ?? 0, termScore);
  const heard = phrase && phrase.score >= termScore ? [phrase.text] : terms.flatMap((h) => (h ? [h.text] : []));
  const words = (m.src.words ?? []).slice(wf, wl + 1).map((w) => w.word);
  const near = m.related && wl >= wf ? relatedness(words, m.related, opts.exceptions) : undefined;
  if (near && near.score > score) return { score: near.score, heard: near.heard };
  return { score, heard: score > 0 ? heard : [] };
}

/**
 * A unit this much on the subject is on it: a word of the subject's definition (wind, 0.6) is enough, a word of a
 * definition that mentions it (sea, 0.4: "a stormy state of the sea") is not on its own, since such words are often
 * loose ("a lighthouse built on the island of Pharos" put "They built a bridge" beside a lighthouse's sentence).
 */
const ON_SUBJECT = 0.45;

/**
 * The subject of a run of units (i..j) as a passage: consecutive units on the subject make one passage (one unit
 * off it between two on it too), and a span scores its best unit's about times the share of its units in a passage,
 * less up to a fifth for the share of the passages it touches that it leaves out: the three sentences about a storm
 * beat the one that names it (which stays on the subject), and a passage with an unrelated sentence added does not.
 */
function passageAbout(
  topics: { score: number; heard: string[] }[],
  passage: number[],
  i: number,
  j: number,
): { score: number; heard: string[] } {
  let peak = 0;
  let on = 0;
  const heard: string[] = [];
  const touched = new Set<number>();
  for (let k = i; k <= j; k++) {
    peak = Math.max(peak, topics[k]!.score);
    heard.push(...topics[k]!.heard);
    if (passage[k]! >= 0) {
      on++;
      touched.add(passage[k]!);
    }
  }
  if (!on) return { score: peak, heard };
  const whole = passage.filter((p) => touched.has(p)).length;
  return { score: peak * (on / (j - i + 1)) * (0.8 + (0.2 * on) / whole), heard };
}

/** Each unit's passage (an index; -1: off the subject). */
function passagesOf(topics: { score: number }[]): number[] {
  const on = topics.map((t) => t.score >= ON_SUBJECT);
  const bridged = on.map((v, k) => v || (k > 0 && k + 1 < on.length && !!on[k - 1] && !!on[k + 1]));
  let id = -1;
  return bridged.map((v, k) => {
    if (!v) return -1;
    if (!bridged[k - 1]) id++;
    return id;
  });
}

/** A span measured: its signals and the 0-1 part each contributes. */
function signalsOf(
  m: Measured,
  start: number,
  end: number,
  wordRange: [number, number] | undefined,
  opts: MomentOptions,
  about: { score: number; heard: string[] } | undefined,
): { signals: MomentSignals; parts: Partial<Record<keyof typeof WEIGHTS, number>> } {
  const { src } = m;
  const signals: MomentSignals = {};
  const parts: Partial<Record<keyof typeof WEIGHTS, number>> = {};
  const seconds = Math.max(1e-3, end - start);
  const words = src.words ?? [];
  // Words inside the span: by their range when the span is one, else by their times.
  const [wf, wl] =
    wordRange ??
    (() => {
      const inside = words.filter((w) => w.start_seconds >= start - 1e-6 && w.end_seconds <= end + 1e-6);
      return inside.length ? [inside[0]!.index, inside.at(-1)!.index] : [0, -1];
    })();
  if (opts.about && opts.pronouncer) {
    const { score, heard } = about ?? aboutOf(m, wf, wl, opts);
    signals.about = round(score);
    if (heard.length && score > 0) signals.about_heard = [...new Set(heard)].join(', ');
    parts.about = score;
  }
  if (words.length) {
    const count = Math.max(0, wl - wf + 1);
    signals.words_per_second = round(count / seconds, 2);
    // Speech density: about 2.5 words a second is steady talk.
    parts.speech = clamp01(count / seconds / 2.5);
    const sentences = src.sentences ?? [];
    const inside = sentences.filter((s) => s.start_seconds >= start - 1e-6 && s.end_seconds <= end + 1e-6).length;
    const cut = sentences.filter(
      (s) =>
        s.end_seconds > start + 1e-6 &&
        s.start_seconds < end - 1e-6 &&
        !(s.start_seconds >= start - 1e-6 && s.end_seconds <= end + 1e-6),
    ).length;
    signals.sentences = inside;
    signals.sentences_cut = cut;
    parts.whole = inside + cut ? inside / (inside + cut) : 0;
  }
  if (m.power) {
    const p = m.power.mean(start, end);
    if (p !== undefined) {
      const db = toDb(p);
      signals.loudness_db = round(db, 1);
      if (m.medianDb !== undefined) {
        signals.louder_than_source_db = round(db - m.medianDb, 1);
        // Against the source's own median: +10 dB is as loud as it gets, -10 dB as quiet.
        parts.loud = clamp01(0.5 + (db - m.medianDb) / 20);
      } else parts.loud = 0;
      const peaks = m.peaks!.filter((w) => w.start >= start - 1e-6 && w.start < end).map((w) => w.peak);
      if (peaks.length) {
        const peak = Math.max(...peaks);
        signals.peak_db = round(peak, 1);
        // Peaks near full scale are what a listener notices: -30 dBFS counts nothing, 0 dBFS everything.
        parts.peak = clamp01((peak + 30) / 30);
      }
    }
  }
  if (m.motion && m.medianMotion) {
    const v = m.motion.mean(start, end);
    if (v !== undefined) {
      const ratio = v / m.medianMotion;
      signals.motion = round(ratio, 2);
      // Twice the source's typical change counts 0.75, four times 1, a quarter 0.
      parts.motion = clamp01(0.5 + Math.log2(Math.max(1e-3, ratio)) / 4);
    }
  }
  if (src.shots?.length) {
    const cuts = m.cuts.filter((c) => c > start + 1e-6 && c < end - 1e-6).length;
    signals.cuts = cuts;
    signals.cuts_per_minute = round((cuts * 60) / seconds, 1);
    // A cut every 2 s (30 a minute) is as busy as it gets.
    parts.cuts = clamp01((cuts * 60) / seconds / 30);
  }
  return { signals, parts };
}

function scoreOf(parts: Partial<Record<keyof typeof WEIGHTS, number>>, about: boolean): number {
  let sum = 0;
  let weight = 0;
  for (const [k, w] of Object.entries(WEIGHTS) as [keyof typeof WEIGHTS, number][]) {
    const v = parts[k];
    // With `about`, a span without words (about 0) still counts the weight: it says nothing of the subject.
    if (v === undefined && !(k === 'about' && about)) continue;
    sum += w * (v ?? 0);
    weight += w;
  }
  return weight ? sum / weight : 0;
}

/** The one line that says why: the signals that lifted it most, in words. */
function reasonOf(s: MomentSignals, parts: Partial<Record<keyof typeof WEIGHTS, number>>): string {
  const said: [number, string][] = [];
  if (s.about !== undefined)
    said.push([
      WEIGHTS.about * (parts.about ?? 0) + 1,
      s.about > 0 ? `says ${s.about === 1 ? '' : 'something like '}"${s.about_heard}"` : 'does not mention the subject',
    ]);
  if (s.sentences !== undefined)
    said.push([
      WEIGHTS.whole * (parts.whole ?? 0),
      `${s.sentences} whole sentence${s.sentences === 1 ? '' : 's'}${s.sentences_cut ? `, ${s.sentences_cut} cut` : ''}, ${s.words_per_second} words/s`,
    ]);
  if (s.louder_than_source_db !== undefined)
    said.push([
      WEIGHTS.loud * (parts.loud ?? 0),
      `${Math.abs(s.louder_than_source_db)} dB ${s.louder_than_source_db >= 0 ? 'louder' : 'quieter'} than the source's median (peak ${s.peak_db} dBFS)`,
    ]);
  if (s.motion !== undefined)
    said.push([WEIGHTS.motion * (parts.motion ?? 0), `motion ${s.motion}x the source's median`]);
  if (s.cuts !== undefined)
    said.push([WEIGHTS.cuts * (parts.cuts ?? 0), `${s.cuts} cut${s.cuts === 1 ? '' : 's'} (${s.cuts_per_minute}/min)`]);
  return said
    .sort((a, b) => b[0] - a[0])
    .slice(0, 4)
    .map(([, t]) => t)
    .join('; ');
}

/** A span's end this close past a shot change (or its start this close before one) is pulled onto it. */
const SHOT_SNAP = 0.5;

/**
 * A span of words with its ends on the shot changes near them: an end that runs a little past a cut (the pause after
 * the last word crossing into the next shot) is pulled back onto the cut, a start a little before one forward, where
 * no word of the span is cut by it (issue 47: spans ran 1 and 5 frames past a shot change).
 */
function onShotBounds(
  span: { start: number; end: number },
  words: TimedWord[],
  [first, last]: [number, number],
  cuts: number[],
): { start: number; end: number } {
  let { start, end } = span;
  const firstStart = words[first]!.start_seconds;
  const lastEnd = words[last]!.end_seconds;
  for (const c of cuts) {
    if (c < end && end - c <= SHOT_SNAP && lastEnd <= c + 1e-6 && c > start) end = c;
    if (c > start && c - start <= SHOT_SNAP && firstStart >= c - 1e-6 && c < end) start = c;
  }
  return { start, end };
}

/**
 * Every candidate of every source, scored, and the best `count` that do not overlap, best first. Candidates are runs
 * of consecutive units (sentences, shots or stretches of sound) from minSeconds to maxSeconds long (a single unit
 * longer than maxSeconds stands alone only where it is one word: unitsOf splits longer sentences between words).
 */
export function findMoments(
  sources: MomentSource[],
  count: number,
  opts: MomentOptions,
): { moments: Moment[]; candidates: number } {
  const all: Moment[] = [];
  for (const src of sources) {
    const m = measure(src, opts);
    const units = unitsOf(src, opts.maxSeconds);
    const words = src.words ?? [];
    const topics =
      opts.about && opts.pronouncer && units.every((u) => u.words)
        ? units.map((u) => aboutOf(m, u.words![0], u.words![1], opts))
        : undefined;
    const passage = topics ? passagesOf(topics) : [];
    for (let i = 0; i < units.length; i++) {
      for (let j = i; j < units.length; j++) {
        const a = units[i]!;
        const b = units[j]!;
        const long = b.end - a.start;
        if (long > opts.maxSeconds && j > i) break;
        const range: [number, number] | undefined = a.words && b.words ? [a.words[0], b.words[1]] : undefined;
        const padded = range
          ? clipAroundWords(words, range[0], range[1], src.duration)
          : { start: a.start, end: b.end };
        const span = range ? onShotBounds(padded, words, range, m.cuts) : padded;
        // A span shorter than min_seconds is never a moment (issue 47: a 0.81 s "sentence" ranked first with 5 asked).
        if (span.end - span.start < opts.minSeconds - 1e-6) continue;
        const byTimes = span.start !== padded.start || span.end !== padded.end;
        const about = topics ? passageAbout(topics, passage, i, j) : undefined;
        const { signals, parts } = signalsOf(m, span.start, span.end, range, opts, about);
        const score = round(scoreOf(parts, !!opts.about));
        const text = range
          ? words
              .slice(range[0], range[1] + 1)
              .map((w) => w.word)
              .join(' ')
          : undefined;
        all.push({
          asset_id: src.asset_id,
          start_seconds: round(span.start),
          end_seconds: round(span.end),
          score,
          signals,
          reason: reasonOf(signals, parts),
          clip:
            range && !byTimes
              ? { asset_id: src.asset_id, words: range }
              : { asset_id: src.asset_id, start: round(span.start), end: round(span.end) },
          ...(text ? { text: text.length > 160 ? `${text.slice(0, 159)}…` : text } : {}),
        });
      }
    }
  }
  const order = new Map(sources.map((s, i) => [s.asset_id, i]));
  // Best first; equal scores: the longer (more of a good thing), then source order, then time.
  all.sort(
    (x, y) =>
      y.score - x.score ||
      y.end_seconds - y.start_seconds - (x.end_seconds - x.start_seconds) ||
      order.get(x.asset_id)! - order.get(y.asset_id)! ||
      x.start_seconds - y.start_seconds,
  );
  const chosen: Moment[] = [];
  for (const c of all) {
    if (chosen.length >= count) break;
    if (
      chosen.some(
        (k) => k.asset_id === c.asset_id && k.start_seconds < c.end_seconds && c.start_seconds < k.end_seconds,
      )
    )
      continue;
    chosen.push(c);
  }
  return { moments: chosen, candidates: all.length };
}
