// A known text's word times taken from the sound itself. Recognition held to the text's vocabulary, matched to the
// text word by word, places each word it heard as itself; under a music bed it mishears a third of the words, and
// those are spread between their neighbours by their letters, up to two seconds from where they are said
// (bench/README.md, "Aligned to the sound"). Held to the whole sequence instead (a forced alignment), the engine puts
// every word within a few tens of milliseconds of where it is said, except where it runs a word over a pause it hears
// as speech (a bed's chord, the silence before the first word). The pure rules of that: which words are aligned in one
// run, and which times stand.
import type { TimedWord } from '../edit/words.js';

/** Words aligned in one run of the engine: `first`..`last` are kept; up to `through`, the rest is context. */
export interface AlignChunk {
  first: number;
  last: number;
  through: number;
}

/**
 * The text cut into runs of whole sentences, each at most `maxSeconds` long by the guide's times (a sentence longer
 * than that is a run alone). Each run is aligned with the sentence after it as context, so that the sound past its
 * last word up to the window's end is given to that sentence, not stretched over the run's last word.
 */
export function alignChunks(guide: TimedWord[], ends: boolean[], maxSeconds: number): AlignChunk[] {
  const sentences: [number, number][] = [];
  let start = 0;
  for (let i = 0; i < guide.length; i++)
    if (ends[i] || i === guide.length - 1) {
      sentences.push([start, i]);
      start = i + 1;
    }
  const chunks: AlignChunk[] = [];
  let s = 0;
  while (s < sentences.length) {
    let e = s;
    while (
      e + 1 < sentences.length &&
      guide[sentences[e + 1]![1]]!.end_seconds - guide[sentences[s]![0]]!.start_seconds <= maxSeconds
    )
      e++;
    chunks.push({
      first: sentences[s]![0],
      last: sentences[e]![1],
      through: sentences[e + 1]?.[1] ?? sentences[e]![1],
    });
    s = e + 1;
  }
  return chunks;
}

/** A word placed by the forced alignment (s, on the source's clock). */
export interface PlacedTime {
  start: number;
  end: number;
}

/**
 * A placed word that starts (or ends) this long (s) before the first (after the last) speech it overlaps was run over
 * a pause: the silence before a text's first word, a pause under a bed the engine hears as speech (0.6-0.9 s on
 * flite's voices). Shorter stretches are left: under a bed the measure of speech misses a word's soft onset by up to
 * 0.35 s (rms's "keeper"), where the engine's time is right.
 */
const LONG_PAUSE = 0.4;

/** Recognition's time for a word it heard stands within this much (s) of the forced alignment's. */
const AGREE = 0.12;
/** Speech (s) a word must share with a run for the run to count as its sound (not a neighbour's last frames). */
const MIN_OVERLAP = 0.05;

/** A word this close (s) to the next one runs into it. */
const GLUED = 0.02;
const letters = (word: string) => Math.max(1, word.replace(/[^\p{L}\p{N}]/gu, '').length);

const overlap = (t: PlacedTime, r: { from: number; to: number }) =>
  Math.max(0, Math.min(t.end, r.to) - Math.max(t.start, r.from));

/**
 * The text's times: each word where the forced alignment placed it, with two repairs measured on the sound. A word
 * put in a pause (under a bed the engine may place a word in the pause before it and take its sound for silence) goes
 * to the speech no word was given between its neighbours; a word run over a long pause at either end loses that
 * pause. The guide's time where the alignment placed none, and for a word recognition heard (`heard`) that the sound
 * puts within AGREE of it. A sentence's last word (`ends`) the engine put on the next sentence's onset, after a long
 * pause, goes back to the end of the word before it. Times never run backwards: a word starts no earlier than
 * the word before it ends.
 */
export function timesBySound(
  guide: TimedWord[],
  placed: Map<number, PlacedTime>,
  speech: { from: number; to: number }[],
  heard: Set<number> = new Set(),
  ends: boolean[] = [],
): TimedWord[] {
  const times = guide.map((w) => {
    const p = placed.get(w.index);
    return p ? { start: p.start, end: p.end } : undefined;
  });
  for (let i = 0; i < times.length; i++) {
    const t = times[i];
    if (!t) continue;
    // Put in a pause: no speech of its own (the measure of speech misses soft sounds, so less is no sign).
    if (!speech.some((r) => overlap(t, r) >= MIN_OVERLAP)) {
      const before = times.slice(0, i).findLast((x) => x)?.end ?? -Infinity;
      const after = times.slice(i + 1).find((x) => x)?.start ?? Infinity;
      const orphans = speech.filter((r) => r.from >= before && r.to <= after && overlap(t, r) < MIN_OVERLAP);
      if (orphans.length) {
        const last = orphans.at(-1)!.to;
        times[i] = { start: orphans[0]!.from, end: after - last < LONG_PAUSE ? after : last };
        continue;
      }
    }
    const inside = speech.filter((r) => overlap(t, r) > 0);
    if (inside.length) {
      if (inside[0]!.from - t.start > LONG_PAUSE) t.start = inside[0]!.from;
      if (t.end - inside.at(-1)!.to > LONG_PAUSE) t.end = inside.at(-1)!.to;
    }
  }
  // A sentence's last word put on the next sentence's first frames, after a long pause from the word before it: the
  // engine ran that word over its sound and the pause (trimmed above), so the sound it was given is the next
  // sentence's onset (rms's and kal's "came | up." under a bed). It goes back to the end of the word before: to the
  // speech after it that no word was given, else a share of the word's time by letters.
  for (let i = 1; i + 1 < times.length; i++) {
    const [prev, t, next] = [times[i - 1], times[i], times[i + 1]];
    if (!prev || !t || !next || !ends[i] || ends[i - 1]) continue;
    if (t.start - prev.end <= LONG_PAUSE || next.start - t.end > GLUED) continue;
    // (Speech of its own in the pause is another case: a word put in a pause, above.)
    if (speech.some((r) => r.from > prev.end && r.to < t.start)) continue;
    const tail = speech.find((r) => r.from <= prev.end && r.to > prev.end);
    if (tail && tail.to - prev.end >= MIN_OVERLAP) times[i] = { start: prev.end, end: tail.to };
    else {
      const [a, b] = [letters(guide[i - 1]!.word), letters(guide[i]!.word)];
      const at = prev.end - ((prev.end - prev.start) * b) / (a + b);
      times[i] = { start: at, end: prev.end };
      prev.end = at;
    }
  }
  // A word recognition heard as itself, within AGREE of where the sound puts it, keeps recognition's time: the edges
  // of a cut test it against a second alignment, which is evidence only while the two are made apart.
  for (const [i, w] of guide.entries()) {
    const t = times[i];
    if (
      t &&
      heard.has(w.index) &&
      Math.abs(t.start - w.start_seconds) <= AGREE &&
      Math.abs(t.end - w.end_seconds) <= AGREE
    )
      times[i] = { start: w.start_seconds, end: w.end_seconds };
  }
  const out: TimedWord[] = [];
  let floor = -Infinity;
  for (const [i, w] of guide.entries()) {
    const start = Math.max(floor, times[i]?.start ?? w.start_seconds);
    const end = Math.max(start, times[i]?.end ?? w.end_seconds);
    out.push({ ...w, start_seconds: round(start), end_seconds: round(end) });
    floor = end;
  }
  return out;
}

const round = (s: number) => Math.round(s * 1000) / 1000;
