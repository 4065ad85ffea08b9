// Captions as data (issue 33, item 5; issue 47, item 2), pure: the words the output plays, from the transcripts of the
// cuts' sound and of the overlays' speech, mapped through the edit onto the output clock (a word not heard whole, cut
// or muted, never appears; a word two cuts of one source both hold, or said again across their join, once), grouped into cues
// of at most two lines that fit the picture (about 42 characters, fewer where the picture is narrow) lasting 1-7 s,
// never across a cut unless the same sentence runs on from the same source; and how they look and where they sit, in
// the output's pixels. media/ turns them into a filter (libass); interchange/ into SRT/VTT.
import { textEms } from './caption-metrics.js';
import type { CaptionStyle } from './model.js';
import type { Timeline } from './normalize.js';
import type { TimedWord } from './words.js';
import { onFrameMs } from './timecode.js';
import { wordKey } from './words.js';

/** The rules of a readable cue. */
export const CAPTION_RULES = {
  /** Characters a line holds at most (fewer where the picture is narrow: captionLayout's lineWidth). */
  lineChars: 42,
  lines: 2,
  /** Seconds a cue lasts at least (when the next lets it) and at most. */
  minSec: 1,
  maxSec: 7,
  /** A pause this long between words ends a cue. */
  pauseSec: 0.6,
  /**
   * In a stretch without a sentence end longer than a cue may last (maxSec: recognition that heard no punctuation), a
   * pause this long ends a cue: where a captioner breaks, the sentence ends the transcript does not mark.
   */
  unmarkedPauseSec: 0.3,
};

/** A level (0-1) at or under this is silence: a word under it is not heard, so not captioned (-30 dB). */
const MUTED_LEVEL = 10 ** (-30 / 20);
const MUTED_GAIN_DB = -30;
/** A word said again within this (s, on the output clock) across the join of two cuts of one source is a stutter. */
const STUTTER_GAP_SEC = 0.5;
/** Words of one sentence may be left out between two cuts of its source (a filler, a stutter) and it still runs on. */
const RUN_ON_SKIP = 3;

/** A word as the output plays it, seconds on the output clock. */
export interface PlacedWord {
  word: string;
  start: number;
  end: number;
  /** A sentence ends with it (its transcript's sentence, or its text's punctuation). */
  endsSentence: boolean;
  /** What plays it: 'c<n>' for the cut at /video_series_sequential/n, 'o<k>' for an overlay. */
  item: string;
  /** Where that item ends on the output clock: a cue is never held past it. */
  itemEnd: number;
  /** Its source: the asset, its index in the asset's transcript and the sentence it belongs to there. */
  asset?: string;
  source?: number;
  sentence?: number;
  /** Its sentence runs longer than a cue may last (no sentence end marked for a long stretch): pauses end cues there. */
  unmarked?: boolean;
}

export interface Cue {
  /** Seconds on the output clock, to the millisecond. */
  start: number;
  end: number;
  lines: string[];
}

/** An asset's transcript as captions read it: its words, and its sentences' word ranges where known. */
export interface CaptionSource {
  words: TimedWord[];
  sentences?: { first_word: number; last_word: number }[];
  /** A text aligned to the sound (its sentences are the text's): its cues never break at pauses inside a sentence. */
  aligned?: boolean;
}

const ENDS_SENTENCE = /[.!?]["')\]\u201d\u2019]*$/;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
type Levels = { level: number; startMs: number; endMs: number }[];
const levelAt = (levels: Levels, ms: number) => levels.find((l) => ms >= l.startMs && ms < l.endMs)?.level ?? 1;
/** A transcript's word edges err by tens of milliseconds: this much (or a quarter of the word) may lie outside. */
const EDGE_SLACK_MS = 50;

/**
 * Whether a word (ms on its source's clock) is heard whole in [fromMs, toMs) under `levels`: all of it but a slack at
 * each end inside, and heard (over -30 dB) there. A word a cut only grazes (a clip by words reaches a little into its
 * neighbour, a cut by times halves a word) is not captioned.
 */
function heardWhole(startMs: number, endMs: number, fromMs: number, toMs: number, levels: Levels): boolean {
  const slack = Math.min(EDGE_SLACK_MS, (endMs - startMs) / 4);
  const a = startMs + slack;
  const b = endMs - slack;
  if (a < fromMs || b > toMs) return false;
  return [a, (startMs + endMs) / 2, Math.max(a, b - 1)].every((ms) => levelAt(levels, ms) > MUTED_LEVEL);
}

/** Whether [fromMs, toMs) is silent throughout under `levels` (windows at -30 dB or under cover all of it). */
function silentThroughout(levels: Levels, fromMs: number, toMs: number): boolean {
  let at = fromMs;
  const muted = levels.filter((l) => l.level <= MUTED_LEVEL).sort((a, b) => a.startMs - b.startMs);
  for (const l of muted) {
    if (l.startMs > at + 1) break;
    at = Math.max(at, l.endMs);
  }
  return at >= toMs - 1;
}

/**
 * The assets whose speech the output lets be heard: each cut's and each overlay's (not music or effects) whose gain is
 * over -30 dB and whose level windows do not mute all of it. A clip at volume 0 is never heard, so never captioned
 * (nor transcribed for captions).
 */
export function heardAssets(t: Timeline): Set<string> {
  const heard = new Set<string>();
  for (const c of t.cuts)
    if ((c.gainDb ?? 0) > MUTED_GAIN_DB && !silentThroughout(c.levels, c.inMs, c.outMs)) heard.add(c.assetId);
  for (const o of t.overlays)
    if (
      o.role !== 'music' &&
      o.role !== 'effects' &&
      (o.gainDb ?? 0) > MUTED_GAIN_DB &&
      !silentThroughout(o.levels, o.startMs, o.endMs)
    )
      heard.add(o.assetId);
  return heard;
}

/** Each word's sentence (index) and whether it ends one: by the transcript's sentences, else by punctuation. */
function sentencesOfWords(src: CaptionSource): { sentence: number[]; ends: boolean[]; unmarked: boolean[] } {
  const sentence = new Array<number>(src.words.length).fill(0);
  const ends = new Array<boolean>(src.words.length).fill(false);
  if (src.sentences?.length) {
    src.sentences.forEach((s, k) => {
      for (let i = s.first_word; i <= s.last_word && i < sentence.length; i++) sentence[i] = k;
      if (s.last_word < ends.length) ends[s.last_word] = true;
    });
    // Punctuation inside a sentence (an aligned text's "Yes." within a quoted line) still ends a cue.
    src.words.forEach((w, i) => (ends[i] ||= ENDS_SENTENCE.test(w.word)));
  } else {
    let k = 0;
    src.words.forEach((w, i) => {
      sentence[i] = k;
      ends[i] = ENDS_SENTENCE.test(w.word);
      if (ends[i]) k++;
    });
  }
  // A recognised word is in an unmarked stretch where no sentence end falls for longer than a cue may last around it.
  const unmarked = new Array<boolean>(src.words.length).fill(false);
  for (let a = 0; !src.aligned && a < src.words.length;) {
    let b = a;
    while (b + 1 < src.words.length && !ends[b]) b++;
    const long = src.words[b]!.end_seconds - src.words[a]!.start_seconds > CAPTION_RULES.maxSec;
    for (let i = a; i <= b; i++) unmarked[i] = long;
    a = b + 1;
  }
  return { sentence, ends, unmarked };
}

const asSource = (v: TimedWord[] | CaptionSource): CaptionSource => (Array.isArray(v) ? { words: v } : v);

/**
 * The words the output plays, in time order: each cut's words heard whole inside its source range (heardWhole: no
 * level window at -30 dB or under over them, no gain that low), and each overlay's that is not music or effects,
 * likewise (its audio played from `from`). `words` holds each asset's transcript, on its own clock. Where two cuts of one
 * source follow each other, a word both hold (their ranges overlap) is placed once, in the first, and the first word
 * after the join is left out when it is the word the cut before ended with, said again (a stutter across the join).
 */
export function wordsOnTimeline(t: Timeline, words: Map<string, TimedWord[] | CaptionSource>): PlacedWord[] {
  const out: PlacedWord[] = [];
  const sentences = new Map<string, ReturnType<typeof sentencesOfWords>>();
  const sourceOf = (assetId: string) => {
    const raw = words.get(assetId);
    if (!raw) return undefined;
    const src = asSource(raw);
    let s = sentences.get(assetId);
    if (!s) sentences.set(assetId, (s = sentencesOfWords(src)));
    return { src, ...s };
  };
  let before: { asset: string; indices: Set<number>; last?: PlacedWord } | undefined;
  for (const c of t.cuts) {
    const here = { asset: c.assetId, indices: new Set<number>(), last: undefined as PlacedWord | undefined };
    const known = (c.gainDb ?? 0) > MUTED_GAIN_DB ? sourceOf(c.assetId) : undefined;
    // A cut's sound plays from its first output frame to the start of the next cut's (its frame times, as reported).
    const startMs = onFrameMs(c.startMs, t.fps);
    const endMs = onFrameMs(c.endMs, t.fps);
    const joined = before?.asset === c.assetId ? before : undefined;
    let first = true;
    for (const [i, w] of (known?.src.words ?? []).entries()) {
      if (!heardWhole(w.start_seconds * 1000, w.end_seconds * 1000, c.inMs, c.outMs, c.levels)) continue;
      const at = (s: number) => r3(Math.min(endMs, Math.max(startMs, startMs + s * 1000 - c.inMs)) / 1000);
      const placed: PlacedWord = {
        word: w.word,
        start: at(w.start_seconds),
        end: at(w.end_seconds),
        endsSentence: known!.ends[i]!,
        item: `c${c.index}`,
        itemEnd: endMs / 1000,
        asset: c.assetId,
        source: i,
        sentence: known!.sentence[i]!,
        unmarked: known!.unmarked[i]!,
      };
      here.indices.add(i);
      if (joined?.indices.has(i)) continue;
      const stutter =
        first &&
        joined?.last !== undefined &&
        wordKey(joined.last.word) === wordKey(w.word) &&
        placed.start - joined.last.end < STUTTER_GAP_SEC;
      first = false;
      if (stutter) continue;
      out.push(placed);
      here.last = placed;
    }
    before = here;
  }
  for (const o of t.overlays) {
    if (o.role === 'music' || o.role === 'effects' || (o.gainDb ?? 0) <= MUTED_GAIN_DB) continue;
    const known = sourceOf(o.assetId);
    const shift = o.startMs - (o.fromMs ?? 0);
    for (const [i, w] of (known?.src.words ?? []).entries()) {
      if (!heardWhole(w.start_seconds * 1000 + shift, w.end_seconds * 1000 + shift, o.startMs, o.endMs, o.levels))
        continue;
      const at = (s: number) => r3(Math.min(o.endMs, Math.max(o.startMs, s * 1000 + shift)) / 1000);
      out.push({
        word: w.word,
        start: at(w.start_seconds),
        end: at(w.end_seconds),
        endsSentence: known!.ends[i]!,
        item: `o${o.index}`,
        itemEnd: o.endMs / 1000,
        asset: o.assetId,
        source: i,
        sentence: known!.sentence[i]!,
        unmarked: known!.unmarked[i]!,
      });
    }
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}

/** Whether a line of text fits: by default, CAPTION_RULES.lineChars characters. */
export type LineFits = (line: string) => boolean;
const byChars =
  (chars = CAPTION_RULES.lineChars): LineFits =>
  (line) =>
    line.length <= chars;

/**
 * Words laid out in lines that fit: one line when they do, else two balanced ones (the longer as short as it can be;
 * the top one the shorter on a tie), else as many lines as greedy filling takes (only for words too long for two
 * lines, which cuesOf never groups). `fits` is the line's test (a number: at most that many characters).
 */
export function captionLines(words: string[], fits: LineFits | number = CAPTION_RULES.lineChars): string[] {
  const ok = typeof fits === 'number' ? byChars(fits) : fits;
  const text = words.join(' ');
  if (ok(text) || words.length < 2) return [text];
  let best: string[] | undefined;
  for (let i = 1; i < words.length; i++) {
    const a = words.slice(0, i).join(' ');
    const b = words.slice(i).join(' ');
    if (!ok(a) || !ok(b)) continue;
    const worse = (x: string[]) => Math.max(textEms(x[0]!), textEms(x[1]!));
    if (
      !best ||
      worse([a, b]) < worse(best) - 1e-9 ||
      (Math.abs(worse([a, b]) - worse(best)) < 1e-9 && a.length < b.length && best[0]!.length >= best[1]!.length)
    )
      best = [a, b];
  }
  if (best) return best;
  const lines: string[] = [];
  for (const w of words) {
    const last = lines.at(-1);
    if (last !== undefined && ok(`${last} ${w}`)) lines[lines.length - 1] = `${last} ${w}`;
    else lines.push(w);
  }
  return lines;
}

/**
 * A word too long for a line alone, in pieces that each fit one (every piece but the last ending in a hyphen), its
 * time shared among them by their length: never drawn past the picture's edges.
 */
function brokenWord(w: PlacedWord, fits: LineFits): PlacedWord[] {
  if (fits(w.word)) return [w];
  const chars = [...w.word];
  const pieces: string[] = [];
  let at = 0;
  while (at < chars.length) {
    let n = 1;
    while (at + n < chars.length && fits(`${chars.slice(at, at + n + 1).join('')}-`)) n++;
    const last = at + n >= chars.length;
    pieces.push(chars.slice(at, at + n).join('') + (last ? '' : '-'));
    at += n;
  }
  const span = w.end - w.start;
  let t = w.start;
  return pieces.map((p, k) => {
    const d = (span * [...p].length) / (chars.length + pieces.length - 1);
    const piece = {
      ...w,
      word: p,
      start: r3(t),
      end: k + 1 === pieces.length ? w.end : r3(t + d),
      endsSentence: k + 1 === pieces.length && w.endsSentence,
    };
    t += d;
    return piece;
  });
}

/**
 * Whether `next` continues the cue that `last` ends across items: only from a cut to the next cut of the same source,
 * in the same sentence, a few words on at most (the sentence runs on where the edit joins two pieces of it).
 */
function runsOnAcross(last: PlacedWord, next: PlacedWord): boolean {
  if (last.item[0] !== 'c' || next.item[0] !== 'c') return false;
  if (last.asset === undefined || last.asset !== next.asset) return false;
  if (last.source === undefined || next.source === undefined) return false;
  if (next.source <= last.source || next.source - last.source > RUN_ON_SKIP) return false;
  return last.sentence !== undefined && last.sentence === next.sentence;
}

/** Whether `next` may join the cue whose words are `group` (of which `last` is the last). */
function joins(group: PlacedWord[], next: PlacedWord, rules: typeof CAPTION_RULES, fits: LineFits): boolean {
  const last = group.at(-1)!;
  if (last.endsSentence || next.start - last.end >= rules.pauseSec) return false;
  if (last.unmarked && next.unmarked && next.start - last.end >= rules.unmarkedPauseSec - 1e-9) return false;
  if (next.item !== last.item && !runsOnAcross(last, next)) return false;
  if (next.start < last.end - 1e-9) return false;
  if (next.end - group[0]!.start > rules.maxSec) return false;
  return (
    captionLines(
      [...group, next].map((x) => x.word),
      fits,
    ).length <= rules.lines
  );
}

/**
 * In an unmarked stretch, what a cue running across a pause costs: all of this across its longest pause (or one of
 * unmarkedPauseSec), by the square of the pause's share of that; and what each cue costs (so that it is cut only at
 * pauses over about half the longest, where a break saves more than the cue costs).
 */
const UNMARKED_ACROSS = 1000;
const UNMARKED_CUE = 300;
/** How much the evenness of the cues' widths weighs there beside where they break (a pause decides first). */
const UNMARKED_EVEN = 0.05;

/**
 * Cues filled greedily leave the last of a run a stub ("of light." alone after two full lines): each run of cues that
 * ended only for room is laid out again, no cue under minSec where that can be (by its words' times). Where the run has
 * sentence ends marked, in as many cues, their widths as even as they can be (the least sum of squared widths); in an
 * unmarked stretch (recognition without punctuation), in as many as it takes to break at the longest pauses between
 * its words (where the sentences the transcript does not mark end) rather than mid-phrase, then evenly.
 */
function balanced(
  groups: PlacedWord[][],
  full: boolean[],
  rules: typeof CAPTION_RULES,
  fits: LineFits,
): PlacedWord[][] {
  const out: PlacedWord[][] = [];
  for (let a = 0; a < groups.length;) {
    let b = a;
    while (b + 1 < groups.length && full[b]) b++;
    if (b === a) {
      out.push(groups[a]!);
      a++;
      continue;
    }
    const words = groups.slice(a, b + 1).flat();
    const k = b - a + 1;
    const n = words.length;
    const unmarked = words.every((w) => w.unmarked);
    const most = unmarked ? Math.min(n, 2 * k + 2) : k;
    // The longest pause between its words (up to unmarkedPauseSec): the one a cue most should not run across.
    let longest = 1e-3;
    for (let i = 1; i < n; i++) longest = Math.max(longest, words[i]!.start - words[i - 1]!.end);
    longest = Math.min(longest, rules.unmarkedPauseSec);
    const cost = (i: number, j: number): number => {
      const g = words.slice(i, j);
      if (g.at(-1)!.end - g[0]!.start > rules.maxSec) return Infinity;
      if (
        captionLines(
          g.map((w) => w.word),
          fits,
        ).length > rules.lines
      )
        return Infinity;
      const ems = textEms(g.map((w) => w.word).join(' '));
      const short = g.at(-1)!.end - g[0]!.start < rules.minSec - 1e-9 ? 1e6 : 0;
      if (!unmarked) return ems * ems + short;
      let across = 0;
      for (let x = i + 1; x < j; x++) across += Math.min(1, (words[x]!.start - words[x - 1]!.end) / longest) ** 2;
      return UNMARKED_CUE + UNMARKED_EVEN * ems * ems + short + UNMARKED_ACROSS * across;
    };
    // best[m][j]: the least cost of the first j words in m cues; from[m][j] where the last of them starts.
    const best = Array.from({ length: most + 1 }, () => new Array<number>(n + 1).fill(Infinity));
    const from = Array.from({ length: most + 1 }, () => new Array<number>(n + 1).fill(0));
    best[0]![0] = 0;
    for (let m = 1; m <= most; m++)
      for (let j = m; j <= n; j++)
        for (let i = m - 1; i < j; i++) {
          const c = best[m - 1]![i]! + cost(i, j);
          if (c < best[m]![j]!) {
            best[m]![j] = c;
            from[m]![j] = i;
          }
        }
    let count = k;
    for (let m = k + 1; m <= most; m++) if (best[m]![n]! < best[count]![n]!) count = m;
    if (!Number.isFinite(best[count]![n]!)) {
      out.push(...groups.slice(a, b + 1));
    } else {
      const cuts: PlacedWord[][] = [];
      for (let m = count, j = n; m > 0; j = from[m]![j]!, m--) cuts.unshift(words.slice(from[m]![j]!, j));
      out.push(...cuts);
    }
    a = b + 1;
  }
  return out;
}

/**
 * Words grouped into cues: a cue ends at a sentence's end, at a pause of CAPTION_RULES.pauseSec, where the next word
 * would not fit in two lines (`fits`: a line's test) or would take it past maxSec, and where the next word is played by
 * another cut or overlay, unless the same sentence runs on from the same source (runsOnAcross). A cue shows from its
 * first word's start to its last word's end, held to minSec when the next cue and the end of what plays its last word
 * allow; one that cannot be held so long takes in the next cue's words where they may join it.
 */
export function cuesOf(words: PlacedWord[], rules = CAPTION_RULES, fits: LineFits = byChars(rules.lineChars)): Cue[] {
  let groups: PlacedWord[][] = [];
  /** Whether the cue before each group ended only because the next word would not fit it (room or maxSec). */
  const full: boolean[] = [];
  let group: PlacedWord[] = [];
  for (const w of words.flatMap((x) => brokenWord(x, fits))) {
    if (group.length && !joins(group, w, rules, fits)) {
      groups.push(group);
      full.push(joins([group.at(-1)!], w, rules, fits));
      group = [];
    }
    group.push(w);
  }
  if (group.length) groups.push(group);
  groups = balanced(groups, full, rules, fits);
  // A cue that would flash (under minSec, the next too close to hold it longer) takes in the next where it may: the
  // same item (or the sentence running on), within maxSec and two lines; a sentence's end or a pause inside it then.
  // Where the next will not have it (full, or another item's), the cue before takes it in likewise ("Yes." said
  // between two sentences).
  const mergeable = (a: PlacedWord[], b: PlacedWord[]): PlacedWord[] | undefined => {
    const last = a.at(-1)!;
    const first = b[0]!;
    const merged = [...a, ...b];
    const ok =
      (first.item === last.item || runsOnAcross(last, first)) &&
      first.start >= last.end - 1e-9 &&
      merged.at(-1)!.end - a[0]!.start <= rules.maxSec &&
      captionLines(
        merged.map((x) => x.word),
        fits,
      ).length <= rules.lines;
    return ok ? merged : undefined;
  };
  for (let i = 0; i + 1 < groups.length; i++) {
    const g = groups[i]!;
    const next = groups[i + 1]!;
    const start = g[0]!.start;
    const reach = Math.min(start + rules.minSec, next[0]!.start, g.at(-1)!.itemEnd);
    if (reach - start >= rules.minSec - 1e-9) continue;
    const withNext = mergeable(g, next);
    if (withNext) {
      groups.splice(i, 2, withNext);
      i--;
      continue;
    }
    const withBefore = i > 0 ? mergeable(groups[i - 1]!, g) : undefined;
    if (withBefore) {
      groups.splice(i - 1, 2, withBefore);
      i -= 2;
    }
  }
  const cues: Cue[] = [];
  groups.forEach((g, i) => {
    const start = g[0]!.start;
    const last = g.at(-1)!;
    const next = groups[i + 1]?.[0]?.start ?? Infinity;
    let end = Math.min(last.end, start + rules.maxSec);
    if (end - start < rules.minSec) end = Math.max(end, Math.min(start + rules.minSec, next, last.itemEnd));
    if (end <= start) return;
    cues.push({
      start: r3(start),
      end: r3(end),
      lines: captionLines(
        g.map((w) => w.word),
        fits,
      ),
    });
  });
  return cues;
}

export const CAPTION_FONT = 'DejaVu Sans';

/** How captions are drawn on a picture of width x height, in its pixels. */
export interface CaptionLayout {
  width: number;
  height: number;
  font: string;
  fontSize: number;
  /** Text colour RRGGBB; outline black, shadow black at half opacity. */
  color: string;
  outline: number;
  shadow: number;
  /** Where the cues sit, as ASS numbers it: 2 bottom centre, 5 middle, 8 top centre. */
  alignment: 2 | 5 | 8;
  /** Margins: from the left and right (5% each; 15% on the right of a vertical picture) and from the edge they sit at. */
  marginL: number;
  marginR: number;
  marginV: number;
  /** The widest line drawn between the side margins, px (outline included). */
  lineWidth: number;
}

/** Where social apps draw over a vertical picture: their caption and buttons at the bottom, a column at the right. */
const VERTICAL = { bottom: 22, top: 12, right: 0.15 };
const SIDE = 0.05;
const EDGE = 8;
const ALIGNMENT = { bottom: 2, middle: 5, top: 8 } as const;

/** The margin (% of the height) from the edge captions sit at, where none is given. */
function defaultMargin(position: CaptionStyle['position'], vertical: boolean): number {
  if (!vertical) return EDGE;
  return position === 'top' ? VERTICAL.top : VERTICAL.bottom;
}

export function captionLayout(style: CaptionStyle, width: number, height: number): CaptionLayout {
  const fontSize = Math.max(8, Math.round((Math.min(width, height) * style.size) / 100));
  const vertical = height > width;
  const position = style.position ?? 'bottom';
  const edge = style.margin ?? defaultMargin(position, vertical);
  const marginL = Math.round(width * SIDE);
  const marginR = Math.round(width * (vertical ? VERTICAL.right : SIDE));
  return {
    width,
    height,
    font: CAPTION_FONT,
    fontSize,
    color: style.color,
    outline: Math.max(1, Math.round(fontSize * 0.08 * 10) / 10),
    shadow: Math.round(fontSize * 0.04 * 10) / 10,
    alignment: ALIGNMENT[position],
    marginL,
    marginR,
    marginV: position === 'middle' ? 0 : Math.round((height * edge) / 100),
    lineWidth: width - marginL - marginR,
  };
}

/**
 * The test a line of this layout passes: at most CAPTION_RULES.lineChars characters, and no wider than the space
 * between the margins when set at the layout's size (an em taken as the whole font size, which libass draws a little
 * smaller, with the outline on both sides and the shadow), with 3% to spare for a smaller picture's rounding.
 */
export function lineFitsLayout(layout: CaptionLayout, chars = CAPTION_RULES.lineChars): LineFits {
  const room = layout.lineWidth * 0.97 - 2 * layout.outline - layout.shadow;
  return (line) => line.length <= chars && textEms(line) * layout.fontSize <= room;
}

/** Cues within [from, to) of the output clock, their times from `from` (clipped to the span). */
export function cuesWithin(cues: Cue[], from: number, to: number): Cue[] {
  return cues
    .filter((c) => c.end > from + 1e-9 && c.start < to - 1e-9)
    .map((c) => ({ start: r3(Math.max(c.start, from) - from), end: r3(Math.min(c.end, to) - from), lines: c.lines }));
}
