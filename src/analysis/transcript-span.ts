// A span of a kept transcript (issue 47, item 1), pure: the words whose middle lies inside [from, to] (as corrections
// take words), numbered from 0 as a span's own transcript is, with their times on the asset's clock as the whole has
// them (a word that starts before the span keeps its true start, never one cut mid-word), and the whole's sentence
// ends, unplaced, doubtful and corrected ranges that fall inside. So a span read agrees with the whole.
import { sentencesOf, type Sentence, type TimedWord } from '../edit/words.js';

/** The parts of a transcript a span keeps. */
export interface SpannableTranscript {
  from_seconds: number;
  to_seconds: number;
  words: TimedWord[];
  sentences: Sentence[];
  unplaced?: number[];
  doubtful?: number[];
  corrected?: number[][];
}

const middle = (w: TimedWord) => (w.start_seconds + w.end_seconds) / 2;
const ms = (s: number) => Math.round(s * 1000) / 1000;

/** `t` over [from, to] only: its words there, numbered from 0, and what it says of them. */
export function sliceTranscript<T extends SpannableTranscript>(t: T, from: number, to: number): T {
  const inside = t.words.filter((w) => middle(w) >= from && middle(w) <= to);
  const at = new Map(inside.map((w, i) => [w.index, i]));
  const local = (indices: number[] | undefined) => (indices ?? []).flatMap((i) => (at.has(i) ? [at.get(i)!] : []));
  const endsAt = new Set(t.sentences.map((s) => s.last_word));
  const words = inside.map((w, i) => ({ ...w, index: i }));
  const unplaced = local(t.unplaced);
  const doubtful = local(t.doubtful);
  // A corrected range keeps the part of it inside the span.
  const corrected = (t.corrected ?? []).flatMap(([a = 0, b = -1]) => {
    const held = local(Array.from({ length: Math.max(0, b - a + 1) }, (_, k) => a + k));
    return held.length ? [[held[0]!, held.at(-1)!]] : [];
  });
  const { unplaced: _u, doubtful: _d, corrected: _c, ...rest } = t;
  return {
    ...rest,
    from_seconds: ms(from),
    to_seconds: ms(to),
    words,
    sentences: sentencesOf(
      words,
      inside.map((w) => endsAt.has(w.index)),
    ),
    ...(t.unplaced ? { unplaced } : {}),
    ...(doubtful.length ? { doubtful } : {}),
    ...(corrected.length ? { corrected } : {}),
  } as T;
}
