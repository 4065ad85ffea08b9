// A tighter cut, pure: in each cut of an edit whose source has a transcript, the pauses longer than a limit and the
// fillers ("um", "uh", "er", a word said twice in a row) are taken out by splitting the cut around them. Every new
// in and out point falls in the pause around a kept word (clipAroundWords, as every clip by words), so no word is
// clipped; a cut's own first in point and last out point stay where they were. Cuts without a transcript are left
// as they are, and said so.
import { formatTimecode, parseTimecode } from '../edit/timecode.js';
import { DEFAULT_WORD_HANDLE, LOW_CONFIDENCE, clipAroundWords, wordKey, type TimedWord } from '../edit/words.js';
import type { AudioLevel, Edit, VideoSegment } from '../edit/model.js';

export const DEFAULT_MAX_PAUSE_SECONDS = 0.8;
export const DEFAULT_FILLERS = ['um', 'uh', 'er', 'erm', 'uhm', 'hmm', 'mm'];

export interface Removal {
  /** The cut it was taken from (index into the edit's video cuts, before tightening). */
  cut: number;
  asset_id: string;
  /** What was taken out, source time. */
  start_seconds: number;
  end_seconds: number;
  reason: string;
}

/** What was looked for as fillers, and what of it the sound holds. */
export interface FillerCount {
  /** The filler words looked for. */
  looked_for: string[];
  /** Fillers the transcripts place in the cuts, and those removed. */
  found: number;
  removed: number;
  /**
   * Fillers the transcript placed where the sound is silence (an aligner may put a word in the pause beside its
   * sound): not removed, since the removal would hold only silence.
   */
  in_silence: { cut: number; asset_id: string; word: string; start_seconds: number; end_seconds: number }[];
  /**
   * Fillers heard in the sound (analysis/filler-sound.ts) where the transcript wrote another word (a recogniser
   * writes "um" as "and"): removed with the rest. Undefined when the sound was not heard.
   */
  heard?: { cut: number; asset_id: string; word: string; start_seconds: number; end_seconds: number }[];
  /** Every transcript is aligned to its text: the words said are known, so fillers are found by their words. */
  by_text?: true;
}

export interface TightenPlan {
  edit: Edit;
  removals: Removal[];
  fillers: FillerCount;
  /** Cuts left as they were because their source has no transcript. */
  untranscribed: number[];
  /** Seconds the edit got shorter. */
  saved_seconds: number;
}

export interface TightenOptions {
  maxPauseSeconds?: number;
  /** Words taken out wherever they stand alone as words (matched as transcripts' words are). */
  fillers?: string[];
  /** Take out the first of a word said twice in a row (default true). */
  repeats?: boolean;
}

const sec = (t: string) => {
  const r = parseTimecode(t);
  return r.ok ? r.ms / 1000 : NaN;
};
const tc = (s: number) => formatTimecode(Math.round(s * 1000));
const ms = (s: number) => Math.round(s * 1000) / 1000;

/** The volume windows of a cut that touch [from, to], held to it. */
function levelsWithin(levels: AudioLevel[], from: number, to: number): AudioLevel[] {
  return levels.flatMap((l) => {
    const a = Math.max(sec(l.start_time), from);
    const b = Math.min(sec(l.end_time), to);
    return b > a ? [{ ...l, start_time: tc(a), end_time: tc(b) }] : [];
  });
}

export interface TightenSource {
  /** The transcript's words, in time order (`index` their place). */
  words: TimedWord[];
  duration: number;
  /** Silences the inspection measured, when known: where the sound itself says no one speaks. */
  silences?: { start_seconds: number; end_seconds: number }[];
  /**
   * Words the transcript did not place (or doubted): their times are a guess, so the gaps beside them say nothing
   * of a pause (a run of them said leaves a false gap between its placed neighbours).
   */
  unplaced?: Set<number>;
  /**
   * Islands of sound between pauses that measure as a filler (one steady voiced sound), when the sound was heard:
   * the one word the transcript places in such an island is a filler, whatever it was written as.
   */
  heardFillers?: { from: number; to: number }[];
  /** The transcript is aligned to a known text (its words are the words said). */
  aligned?: boolean;
}

/**
 * Words people say alone between pauses (answers, interjections): one steady voiced sound like a filler, so a word
 * recognition wrote as one of these is kept even where the sound measures as a filler (a lone "no" is not an "um").
 */
const SAID_ALONE = new Set([
  'yes',
  'yeah',
  'no',
  'nope',
  'oh',
  'ok',
  'okay',
  'well',
  'right',
  'so',
  'now',
  'why',
  'what',
  'who',
  'wow',
  'hi',
  'hey',
  'sure',
  'fine',
  'good',
  'great',
  'thanks',
  'i',
  'a',
  'me',
  'you',
  'mine',
  'yours',
  'wait',
  'stop',
  'go',
]);

/** A filler whose time holds less than this (s) of sound outside measured silences is not where its sound is. */
const MIN_FILLER_SOUND = 0.06;

/** Seconds of [from, to] that no measured silence covers. */
function soundingSeconds(from: number, to: number, silences: { start_seconds: number; end_seconds: number }[]): number {
  let quiet = 0;
  for (const q of silences) quiet += Math.max(0, Math.min(to, q.end_seconds) - Math.max(from, q.start_seconds));
  return Math.max(0, to - from - quiet);
}

/**
 * The pause between words `a` and `b` (s): the gap in their times, none beside a word the transcript did not place
 * (its time is a guess: a run of such words said leaves a false gap between their placed neighbours, and the speech
 * there would go as a pause).
 */
function pauseBetween(src: TightenSource, a: number, b: number): number {
  for (let i = a; i <= b; i++) if (src.unplaced?.has(i)) return 0;
  return src.words[b]!.start_seconds - src.words[a]!.end_seconds;
}

/** How far (s) a cut point keeps from the sound of what goes: an island's measured edge may lie a frame inside it. */
const DROPPED_MARGIN = 0.03;

/**
 * An out point after kept word `last` and an in point before kept word `next` (the words between them go, their
 * sound within `dropped` when any go): in a measured silence between them when there is one (an aligner stretches a
 * filler over the pause around it, so the words' times may abut there: the silence is what the sound says), else in
 * the pause around the words (clipAroundWords, as every clip by words). What goes is never kept: the out point is
 * in a silence before its sound, the in point in one after it (a silence on its far side would keep it: under a
 * bed the inspection may find the pause on one side only), and neither inside it.
 */
function cutPoints(
  src: TightenSource,
  last: number,
  next: number,
  around: (first: number, last: number) => { start: number; end: number },
  dropped?: { from: number; to: number },
): { out: number; in: number } {
  const { words } = src;
  let out = around(last, last).end;
  let inn = around(next, next).start;
  const between = (src.silences ?? []).filter(
    (q) =>
      q.end_seconds > words[last]!.start_seconds &&
      q.start_seconds < words[next]!.end_seconds &&
      q.start_seconds > words[last]!.start_seconds &&
      (dropped ? q.start_seconds < words[next]!.start_seconds : q.end_seconds < words[next]!.end_seconds),
  );
  const before = dropped ? between.filter((q) => q.start_seconds < dropped.from) : between;
  const after = dropped ? between.filter((q) => q.end_seconds > dropped.to) : between;
  const first = before[0];
  const final = after.at(-1);
  const handle = (q: { start_seconds: number; end_seconds: number }) =>
    Math.min(DEFAULT_WORD_HANDLE, (q.end_seconds - q.start_seconds) / 2);
  // The later of the two out points and the earlier of the two in points: each is after the word's true end (before
  // its true start) by one of the two measures, and never inside the silence's far side.
  if (first) out = Math.min(Math.max(out, first.start_seconds + handle(first)), first.end_seconds);
  if (final) inn = Math.max(Math.min(inn, final.end_seconds - handle(final)), final.start_seconds);
  if (dropped) {
    out = Math.min(out, Math.max(dropped.from - DROPPED_MARGIN, words[last]!.end_seconds));
    inn = Math.max(inn, Math.min(dropped.to + DROPPED_MARGIN, words[next]!.start_seconds));
  }
  return { out: ms(out), in: ms(inn) };
}

/**
 * The edit with each transcribed cut split around what is taken out. `sources` maps an asset id to its transcript's
 * words (in time order; `index` their place) and its duration.
 */
export function planTighten(edit: Edit, sources: Map<string, TightenSource>, opts: TightenOptions = {}): TightenPlan {
  const maxPause = opts.maxPauseSeconds ?? DEFAULT_MAX_PAUSE_SECONDS;
  const fillers = new Set((opts.fillers ?? DEFAULT_FILLERS).map(wordKey).filter(Boolean));
  const repeats = opts.repeats ?? true;
  const removals: Removal[] = [];
  const fillerCount: FillerCount = {
    looked_for: [...fillers],
    found: 0,
    removed: 0,
    in_silence: [],
    ...([...sources.values()].some((s) => s.heardFillers) ? { heard: [] } : {}),
    ...(sources.size && [...sources.values()].every((s) => s.aligned) ? { by_text: true as const } : {}),
  };
  const untranscribed: number[] = [];
  const out: VideoSegment[] = [];
  let saved = 0;
  edit.video_series_sequential.forEach((seg, cut) => {
    const src = sources.get(seg.video_id);
    if (!src) {
      untranscribed.push(cut);
      out.push(seg);
      return;
    }
    const from = sec(seg.video_start_time);
    const to = sec(seg.video_end_time);
    const { words, duration } = src;
    // The words the cut holds, by their place in the transcript: by the middle of where each sounds, since a cut by
    // words is placed by the edges heard in the sound, which may lie inside a word's looser transcript times (an
    // aligner stretches a filler over the pause beside it).
    const inside = words
      .filter((w) => {
        const m = soundingMiddle(w, src.silences);
        return m >= from - 1e-6 && m <= to + 1e-6;
      })
      .map((w) => w.index);
    const drop = new Map<number, string>();
    inside.forEach((i, k) => {
      const key = wordKey(words[i]!.word);
      if (fillers.has(key)) {
        const w = words[i]!;
        fillerCount.found++;
        // A filler placed where the sound is silence is not removed: the removal would hold only the silence.
        if (src.silences && soundingSeconds(w.start_seconds, w.end_seconds, src.silences) < MIN_FILLER_SOUND)
          fillerCount.in_silence.push({
            cut,
            asset_id: seg.video_id,
            word: w.word,
            start_seconds: w.start_seconds,
            end_seconds: w.end_seconds,
          });
        else drop.set(i, `filler "${w.word}"`);
      } else if (heardIsland(src, i)) {
        const w = words[i]!;
        fillerCount.found++;
        fillerCount.heard?.push({
          cut,
          asset_id: seg.video_id,
          word: w.word,
          start_seconds: w.start_seconds,
          end_seconds: w.end_seconds,
        });
        drop.set(i, `filler heard (written "${w.word}")`);
      } else if (
        repeats &&
        k + 1 < inside.length &&
        inside[k + 1] === i + 1 &&
        wordKey(words[i + 1]!.word) === key &&
        surelyHeard(src, i) &&
        surelyHeard(src, i + 1)
      )
        drop.set(i, `"${words[i]!.word}" said twice`);
    });
    // Runs of kept words, split where words are dropped or a pause is too long.
    const runs: [number, number][] = [];
    let split = false;
    for (const i of inside) {
      if (drop.has(i)) continue;
      const run = runs.at(-1);
      if (run && !anyDropped(drop, run[1], i)) {
        if (pauseBetween(src, run[1], i) > maxPause) {
          split = true;
          runs.push([i, i]);
        } else run[1] = i;
      } else runs.push([i, i]);
    }
    if (!drop.size && !split) {
      out.push(seg);
      return;
    }
    if (!runs.length) {
      // Nothing but fillers: the cut goes.
      fillerCount.removed += [...drop.values()].filter((r) => r.startsWith('filler')).length;
      removals.push({
        cut,
        asset_id: seg.video_id,
        start_seconds: ms(from),
        end_seconds: ms(to),
        reason: `only fillers (${[...drop.values()].join(', ')})`,
      });
      saved += to - from;
      return;
    }
    const around = (a: number, b: number) => clipAroundWords(words, a, b, duration);
    const pointsAt = (last: number, next: number) =>
      cutPoints(src, last, next, around, droppedSound(src, drop, last, next));
    const pieces = runs.map(([a, b], k) => ({
      start: k === 0 && a === inside[0] ? from : pointsAt(runs[k - 1]?.[1] ?? a - 1, a).in,
      end: k === runs.length - 1 && b === inside.at(-1) ? to : pointsAt(b, runs[k + 1]?.[0] ?? b + 1).out,
    }));
    // What lies between the pieces (and before the first, after the last) is what was taken out: say why.
    // Each gap with the words between its two runs (the dropped ones among them say why).
    const gaps = [
      { start: from, end: pieces[0]!.start, after: inside[0]! - 1, before: runs[0]![0] },
      ...pieces
        .slice(1)
        .map((p, k) => ({ start: pieces[k]!.end, end: p.start, after: runs[k]![1], before: runs[k + 1]![0] })),
      { start: pieces.at(-1)!.end, end: to, after: runs.at(-1)![1], before: inside.at(-1)! + 1 },
    ];
    for (const g of gaps) {
      if (g.end - g.start <= 1e-6) continue;
      const why = [...drop.entries()]
        .filter(([i]) => i > g.after && i < g.before)
        .sort(([a], [b]) => a - b)
        .map(([, r]) => r);
      // Long silences it takes out: measured where the inspection found them, else between the words' times.
      const silences =
        src.silences ??
        inside
          .slice(1)
          .map((i) => ({ start_seconds: words[i - 1]!.end_seconds, end_seconds: words[i]!.start_seconds }));
      for (const q of silences) {
        const long = q.end_seconds - q.start_seconds;
        const within = Math.min(q.end_seconds, g.end) - Math.max(q.start_seconds, g.start);
        if (long > maxPause && within > long / 2) why.push(`pause of ${long.toFixed(2)} s`);
      }
      // A run split by a pause the words' times show (its measured silence mostly kept as the handles around it).
      if (!why.length && g.after >= 0 && g.before < src.words.length) {
        const pause = pauseBetween(src, g.after, g.before);
        if (pause > maxPause) why.push(`pause of ${pause.toFixed(2)} s`);
      }
      if (!why.length) why.push(`silence between kept words (${(g.end - g.start).toFixed(2)} s)`);
      removals.push({
        cut,
        asset_id: seg.video_id,
        start_seconds: ms(g.start),
        end_seconds: ms(g.end),
        reason: why.join(', '),
      });
      saved += g.end - g.start;
    }
    // A filler is removed when no piece holds where it sounds (the cut points may fall on its far side): a filler
    // heard in the sound, none of its island beyond a frame.
    for (const [i, r] of drop) {
      if (!r.startsWith('filler')) continue;
      const island = heardIsland(src, i);
      const m = soundingMiddle(words[i]!, src.silences);
      const kept = island
        ? pieces.some((p) => Math.min(p.end, island.to) - Math.max(p.start, island.from) > HOP_TOLERANCE)
        : pieces.some((p) => m >= p.start && m <= p.end);
      if (!kept) fillerCount.removed++;
    }
    for (const p of pieces) {
      out.push({
        ...seg,
        video_start_time: tc(p.start),
        video_end_time: tc(p.end),
        audio_levels: levelsWithin(seg.audio_levels, p.start, p.end),
      });
    }
  });
  return {
    edit: { ...edit, video_series_sequential: out },
    removals,
    fillers: fillerCount,
    untranscribed,
    saved_seconds: ms(saved),
  };
}

/** A removed filler's island may be held by a piece for up to this long (s, a frame of the measure). */
const HOP_TOLERANCE = 0.01;

/**
 * Where the words dropped between kept words `last` and `next` sound: each one's longest part outside measured
 * silences, and the whole island a heard filler is in (recognition may place it short of its sound); undefined
 * when none is dropped (a split at a pause).
 */
function droppedSound(
  src: TightenSource,
  drop: Map<number, string>,
  last: number,
  next: number,
): { from: number; to: number } | undefined {
  let span: { from: number; to: number } | undefined;
  for (let i = last + 1; i < next; i++) {
    if (!drop.has(i)) continue;
    const [a, b] = soundingPart(src.words[i]!, src.silences);
    const island = heardIsland(src, i);
    const from = Math.min(a, island?.from ?? a);
    const to = Math.max(b, island?.to ?? b);
    span = span ? { from: Math.min(span.from, from), to: Math.max(span.to, to) } : { from, to };
  }
  return span;
}

/** The longest part of a word's time that no measured silence covers (its whole time without any). */
function soundingPart(w: TimedWord, silences: { start_seconds: number; end_seconds: number }[] = []): [number, number] {
  let parts: [number, number][] = [[w.start_seconds, w.end_seconds]];
  for (const q of silences) {
    if (q.end_seconds <= w.start_seconds || q.start_seconds >= w.end_seconds) continue;
    parts = parts.flatMap(([a, b]): [number, number][] => [
      ...(q.start_seconds > a ? [[a, Math.min(b, q.start_seconds)] as [number, number]] : []),
      ...(q.end_seconds < b ? [[Math.max(a, q.end_seconds), b] as [number, number]] : []),
    ]);
  }
  return (
    parts.filter(([x, y]) => y > x).sort((p, q) => q[1] - q[0] - (p[1] - p[0]))[0] ?? [w.start_seconds, w.end_seconds]
  );
}

/** The middle of a word's longest part that no measured silence covers (soundingPart). */
function soundingMiddle(w: TimedWord, silences?: { start_seconds: number; end_seconds: number }[]): number {
  const [a, b] = soundingPart(w, silences);
  return (a + b) / 2;
}

/**
 * A word heard for sure: placed, not doubted, and (from recognition) not unsure. A word said twice is only taken out
 * when both are: recognition writes a word it half heard as its neighbour ("to see you" as "just you you"), and
 * taking the first out would cut real speech.
 */
function surelyHeard(src: TightenSource, i: number): boolean {
  const c = src.words[i]!.confidence;
  return !src.unplaced?.has(i) && (c === undefined || c >= LOW_CONFIDENCE);
}

/**
 * The island of sound that measures as a filler in which word `i` is the one word the transcript places (by where
 * it sounds), when it was placed (a guessed time says nothing of which island holds it); undefined when there is none.
 */
function heardIsland(src: TightenSource, i: number): { from: number; to: number } | undefined {
  if (!src.heardFillers?.length || src.unplaced?.has(i) || SAID_ALONE.has(wordKey(src.words[i]!.word)))
    return undefined;
  const island = src.heardFillers.find((q) => inIsland(src.words[i]!, q, src.silences));
  if (!island) return undefined;
  return src.words.filter((w) => inIsland(w, island, src.silences)).length === 1 ? island : undefined;
}

/**
 * A word sounds in an island when its sounding middle is inside it, or when it covers at least half of the island:
 * under a music bed no silence bounds a word, and recognition stretches one said alone into the pause after it
 * (an "um" of 0.26 s written as "am" over 0.7 s), which moves its middle out of the island it was said in.
 */
function inIsland(
  w: TimedWord,
  island: { from: number; to: number },
  silences?: { start_seconds: number; end_seconds: number }[],
): boolean {
  const m = soundingMiddle(w, silences);
  if (m >= island.from && m <= island.to) return true;
  const covered = Math.min(w.end_seconds, island.to) - Math.max(w.start_seconds, island.from);
  return covered >= (island.to - island.from) / 2;
}

const anyDropped = (drop: Map<number, string>, after: number, before: number) => {
  for (let i = after + 1; i < before; i++) if (drop.has(i)) return true;
  return false;
};
