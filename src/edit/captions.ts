// Captions as data (issue 33, item 5), pure: the words the output plays, from the transcripts of the cuts' sound and
// of the overlays' speech, mapped through the edit onto the output clock (a word cut away, or muted, never appears),
// grouped into cues of at most two lines of 42 characters lasting 1-7 s, never across a cut unless the sentence runs
// on; and how they look, in the output's pixels. media/ turns them into a filter (libass); interchange/ into SRT/VTT.
import type { CaptionStyle } from './model.js';
import type { Timeline } from './normalize.js';
import type { TimedWord } from './words.js';
import { onFrameMs } from './timecode.js';

/** The rules of a readable cue. */
export const CAPTION_RULES = {
  /** Characters a line holds at most. */
  lineChars: 42,
  lines: 2,
  /** Seconds a cue lasts at least (when the next lets it) and at most. */
  minSec: 1,
  maxSec: 7,
  /** A pause this long between words ends a cue. */
  pauseSec: 0.6,
};

/** A level (0-1) at or under this is silence: a word under it is not heard, so not captioned (-30 dB). */
const MUTED_LEVEL = 10 ** (-30 / 20);
const MUTED_GAIN_DB = -30;

/** A word as the output plays it, seconds on the output clock. */
export interface PlacedWord {
  word: string;
  start: number;
  end: number;
  /** A sentence ends with it (its text's punctuation). */
  endsSentence: boolean;
  /** What plays it: 'c<n>' for the cut at /video_series_sequential/n, 'o<k>' for an overlay. */
  item: string;
  /** Where that item ends on the output clock: a cue is never held past it. */
  itemEnd: number;
}

export interface Cue {
  /** Seconds on the output clock, to the millisecond. */
  start: number;
  end: number;
  lines: string[];
}

const ENDS_SENTENCE = /[.!?]["')\]\u201d\u2019]*$/;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const levelAt = (levels: { level: number; startMs: number; endMs: number }[], ms: number) =>
  levels.find((l) => ms >= l.startMs && ms < l.endMs)?.level ?? 1;

/**
 * The words the output plays, in time order: each cut's words whose middle lies inside its source range and is heard
 * (no level window at -30 dB or under, no gain that low), and each overlay's that is not music or effects, likewise
 * (its audio played from `from`). `words` holds each asset's transcript, on its own clock.
 */
export function wordsOnTimeline(t: Timeline, words: Map<string, TimedWord[]>): PlacedWord[] {
  const out: PlacedWord[] = [];
  for (const c of t.cuts) {
    if ((c.gainDb ?? 0) <= MUTED_GAIN_DB) continue;
    // A cut's sound plays from its first output frame to the start of the next cut's (its frame times, as reported).
    const startMs = onFrameMs(c.startMs, t.fps);
    const endMs = onFrameMs(c.endMs, t.fps);
    for (const w of words.get(c.assetId) ?? []) {
      const mid = ((w.start_seconds + w.end_seconds) / 2) * 1000;
      if (mid < c.inMs || mid >= c.outMs || levelAt(c.levels, mid) <= MUTED_LEVEL) continue;
      const at = (s: number) => r3(Math.min(endMs, Math.max(startMs, startMs + s * 1000 - c.inMs)) / 1000);
      out.push({
        word: w.word,
        start: at(w.start_seconds),
        end: at(w.end_seconds),
        endsSentence: ENDS_SENTENCE.test(w.word),
        item: `c${c.index}`,
        itemEnd: endMs / 1000,
      });
    }
  }
  for (const o of t.overlays) {
    if (o.role === 'music' || o.role === 'effects' || (o.gainDb ?? 0) <= MUTED_GAIN_DB) continue;
    const shift = o.startMs - (o.fromMs ?? 0);
    for (const w of words.get(o.assetId) ?? []) {
      const mid = ((w.start_seconds + w.end_seconds) / 2) * 1000 + shift;
      if (mid < o.startMs || mid >= o.endMs || levelAt(o.levels, mid) <= MUTED_LEVEL) continue;
      const at = (s: number) => r3(Math.min(o.endMs, Math.max(o.startMs, s * 1000 + shift)) / 1000);
      out.push({
        word: w.word,
        start: at(w.start_seconds),
        end: at(w.end_seconds),
        endsSentence: ENDS_SENTENCE.test(w.word),
        item: `o${o.index}`,
        itemEnd: o.endMs / 1000,
      });
    }
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}

/**
 * Words laid out in lines of at most `lineChars`: one line when they fit, else two balanced ones (the longer as short
 * as it can be; the top one the shorter on a tie), else as many lines as greedy filling takes (only for words too long
 * for two lines, which cuesOf never groups).
 */
export function captionLines(words: string[], lineChars = CAPTION_RULES.lineChars): string[] {
  const text = words.join(' ');
  if (text.length <= lineChars || words.length < 2) return [text];
  let best: string[] | undefined;
  for (let i = 1; i < words.length; i++) {
    const a = words.slice(0, i).join(' ');
    const b = words.slice(i).join(' ');
    if (a.length > lineChars || b.length > lineChars) continue;
    const worse = (x: string[]) => Math.max(x[0]!.length, x[1]!.length);
    if (
      !best ||
      worse([a, b]) < worse(best) ||
      (worse([a, b]) === worse(best) && a.length < b.length && best[0]!.length >= best[1]!.length)
    )
      best = [a, b];
  }
  if (best) return best;
  const lines: string[] = [];
  for (const w of words) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + w.length <= lineChars) lines[lines.length - 1] = `${last} ${w}`;
    else lines.push(w);
  }
  return lines;
}

/**
 * Words grouped into cues: a cue ends at a sentence's end, at a pause of CAPTION_RULES.pauseSec, where the next word
 * would not fit in two lines or would take it past maxSec, and where the next word is played by another cut or
 * overlay, unless the sentence runs on (no sentence end, no pause, cut to cut). A cue shows from its first word's
 * start to its last word's end, held to minSec when the next cue and the end of what plays its last word allow.
 */
export function cuesOf(words: PlacedWord[], rules = CAPTION_RULES): Cue[] {
  const groups: PlacedWord[][] = [];
  let group: PlacedWord[] = [];
  for (const w of words) {
    const last = group.at(-1);
    if (last) {
      const runsOn = !last.endsSentence && w.start - last.end < rules.pauseSec;
      const otherItem = w.item !== last.item && !(runsOn && w.item[0] === 'c' && last.item[0] === 'c');
      const tooLong =
        captionLines(
          [...group, w].map((x) => x.word),
          rules.lineChars,
        ).length > rules.lines || w.end - group[0]!.start > rules.maxSec;
      if (!runsOn || otherItem || tooLong || w.start < last.end - 1e-9) {
        groups.push(group);
        group = [];
      }
    }
    group.push(w);
  }
  if (group.length) groups.push(group);
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
        rules.lineChars,
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
  /** Safe margins: from the sides (5% each, inside the 90% action-safe area) and from the bottom (8% of the height). */
  marginH: number;
  marginV: number;
}

export function captionLayout(style: CaptionStyle, width: number, height: number): CaptionLayout {
  const fontSize = Math.max(8, Math.round((height * style.size) / 100));
  return {
    width,
    height,
    font: CAPTION_FONT,
    fontSize,
    color: style.color,
    outline: Math.max(1, Math.round(fontSize * 0.08 * 10) / 10),
    shadow: Math.round(fontSize * 0.04 * 10) / 10,
    marginH: Math.round(width * 0.05),
    marginV: Math.round(height * 0.08),
  };
}

/** Cues within [from, to) of the output clock, their times from `from` (clipped to the span). */
export function cuesWithin(cues: Cue[], from: number, to: number): Cue[] {
  return cues
    .filter((c) => c.end > from + 1e-9 && c.start < to - 1e-9)
    .map((c) => ({ start: r3(Math.max(c.start, from) - from), end: r3(Math.min(c.end, to) - from), lines: c.lines }));
}
