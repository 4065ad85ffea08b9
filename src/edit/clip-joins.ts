// Where clips meet, pure: decided once every clip's in and out points are known (check-edit.ts), before the edit is
// composed. Two things an editor would not let through:
//  - a stutter: consecutive clips by words of one source whose sound ranges touch or overlap (a sentence split over
//    two clips: the pause or the run-on join between them is in both) play some of it twice ("to the | -o the old").
//    They become one continuous cut when nothing else tells them apart, else the later one starts where the earlier
//    ends, so that no sample plays twice. Said in a note each.
//  - a hole: a clip by words mutes the whole frames its picture holds beyond its sound, so at a join the sound drops
//    to digital silence for up to a frame on each side (under a bed or room tone, a drop-out). There the pause beside
//    the words is heard instead, where it is pause; where the neighbouring word's sound lies within those frames, its
//    part is faded out across them rather than muted; where pause lies beyond the clip too, the clip carries it as a
//    sound handle, and the join is crossfaded over it (media/sound-plan.ts) rather than faded out and in.
import type { ComposeClip } from './compose.js';
import { parseTimecode } from './timecode.js';

/** A clip cut by words, as check-edit.ts made it: where its sound is heard, and how far beyond that is pause. */
export interface HeardClip {
  /** Where its sound is heard (s, source clock): a handle beyond its words, or their edge where they run on. */
  soundIn: number;
  soundOut: number;
  /** The pause around its words as heard: from where the word before it ends, to where the word after starts. */
  cleanFrom: number;
  cleanTo: number;
  /** Its words (transcript indices), for notes. */
  first: number;
  last: number;
}

export interface JoinResult {
  clips: ComposeClip[];
  /** Per clip given, the clip it became part of (its index in `clips`). */
  placeOf: number[];
  /** What was joined or trimmed, one line each. */
  notes: string[];
}

type Level = { level: number; from: number; to: number };

const ms = (s: number) => Math.round(s * 1000) / 1000;
const sec = (v: string | number | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const r = parseTimecode(v);
  return r.ok ? r.ms / 1000 : undefined;
};

/** Sound ranges this close (s) touch: a millisecond, the precision of an edit's times. */
const TOUCH = 0.001;
/** The pause is taken to end this far (s) before the next word's onset as heard: no part of that word is heard. */
const PAUSE_SAFETY = 0.003;

/** What tells two clips apart besides their times: the same for both, and they may be one cut. */
function sameTreatment(a: ComposeClip, b: ComposeClip): boolean {
  const key = (c: ComposeClip) =>
    JSON.stringify([c.volume ?? 1, c.crop ?? null, c.focus ?? null, c.gain_db ?? 0, c.handle ?? null]);
  return key(a) === key(b) && a.fade_out === undefined && b.fade_in === undefined;
}

interface Placed {
  clip: ComposeClip;
  start: number;
  end: number;
  heard?: HeardClip;
  /** Clip numbers given (1-based) that it holds. */
  from: number[];
}

/** Where a clip's sound is heard: its words' sound, or its whole range. */
const soundOf = (p: Placed) =>
  p.heard ? { from: p.heard.soundIn, to: p.heard.soundOut } : { from: p.start, to: p.end };

/** Its level windows, or one at full level over its range (outside every window the level is 1). */
const levelsOf = (p: Placed): Level[] => p.clip.levels ?? [{ level: 1, from: p.start, to: p.end }];

/**
 * Joins and trims consecutive clips of one source whose sound ranges touch or overlap, then fills the holes at the
 * joins of clips by words. `heard` holds the clips cut by words (by their index); `unresolved` the clips that could not
 * be resolved (left as they are, never joined).
 */
export function joinClips(
  clips: ComposeClip[],
  heard: Map<number, HeardClip>,
  unresolved: Set<number> = new Set(),
): JoinResult {
  const notes: string[] = [];
  const out: Placed[] = [];
  const placeOf: number[] = [];
  clips.forEach((clip, i) => {
    const start = sec(clip.start);
    const end = sec(clip.end);
    const here: Placed | undefined =
      start !== undefined && end !== undefined && end > start && !unresolved.has(i)
        ? { clip, start, end, ...(heard.has(i) ? { heard: heard.get(i)! } : {}), from: [i + 1] }
        : undefined;
    const prev = out.at(-1);
    if (!here || !prev || prev.clip.asset_id !== here.clip.asset_id || unresolved.has(i - 1) || !prev.end) {
      out.push(here ?? { clip, start: NaN, end: NaN, from: [i + 1] });
      placeOf.push(out.length - 1);
      return;
    }
    // Clips given by their times are cut as asked (touching ranges play no sample twice; an overlap may be meant).
    if (!prev.heard || !here.heard) {
      out.push(here);
      placeOf.push(out.length - 1);
      return;
    }
    const a = soundOf(prev);
    const b = soundOf(here);
    // The later clip's sound begins within (or right at the end of) the earlier's, and goes on past it; one that
    // starts before the earlier's (a repeat, played again on purpose) is left alone.
    if (!(b.from <= a.to + TOUCH && b.from >= a.from && b.to > a.to)) {
      out.push(here);
      placeOf.push(out.length - 1);
      return;
    }
    const overlap = a.to - b.from;
    const how = overlap > TOUCH ? `overlapped by ${ms(overlap)} s` : 'touched';
    const names = `clips ${prev.from.join(', ')} and ${i + 1} of asset ${here.clip.asset_id}`;
    if (sameTreatment(prev.clip, here.clip)) {
      out[out.length - 1] = joined(prev, here);
      placeOf.push(out.length - 1);
      notes.push(
        `${names}: their sound ${how}${wordsOf(prev, here)}, so they are one cut, ${ms(prev.start)}-${ms(here.end)} s: nothing plays twice`,
      );
      return;
    }
    const [p, n] = trimmed(prev, here);
    out[out.length - 1] = p;
    out.push(n);
    placeOf.push(out.length - 1);
    notes.push(
      `${names}: their sound ${how}${wordsOf(prev, here)}; clip ${i + 1} now starts where the one before ends (${ms(n.start)} s), so nothing plays twice`,
    );
  });
  for (let k = 1; k < out.length; k++) fillJoin(out[k - 1]!, out[k]!);
  return { clips: out.map((p) => p.clip), placeOf, notes };
}

const wordsOf = (a: Placed, b: Placed) =>
  a.heard && b.heard ? ` (words ${a.heard.first}-${a.heard.last} and ${b.heard.first}-${b.heard.last})` : '';

/** Two clips as one: the first's head, full level between, the second's tail. */
function joined(a: Placed, b: Placed): Placed {
  const la = levelsOf(a);
  const lb = levelsOf(b);
  // The first's windows up to where its sound reaches full level, the second's from where its sound leaves it.
  const fullFrom = a.heard ? fullStart(la, a.heard.soundIn) : a.start;
  const fullTo = b.heard ? fullEnd(lb, b.heard.soundOut) : b.end;
  const levels =
    a.clip.levels || b.clip.levels
      ? [
          ...la.filter((l) => l.to <= fullFrom + 1e-9),
          { level: 1, from: fullFrom, to: fullTo },
          ...lb.filter((l) => l.from >= fullTo - 1e-9),
        ]
      : undefined;
  const { levels: _l, ...clip } = a.clip;
  return {
    clip: { ...clip, start: a.clip.start, end: b.clip.end, ...(levels ? { levels } : {}) },
    start: a.start,
    end: b.end,
    ...(a.heard && b.heard
      ? {
          heard: {
            soundIn: a.heard.soundIn,
            soundOut: b.heard.soundOut,
            cleanFrom: a.heard.cleanFrom,
            cleanTo: b.heard.cleanTo,
            first: a.heard.first,
            last: b.heard.last,
          },
        }
      : {}),
    from: [...a.from, ...b.from],
  };
}

/** The second clip starting where the first ends: the first plays to its out point, the second from there. */
function trimmed(a: Placed, b: Placed): [Placed, Placed] {
  const at = a.end;
  const la = levelsOf(a);
  const lb = levelsOf(b);
  const fullFrom = a.heard ? fullStart(la, a.heard.soundIn) : a.start;
  const bFullTo = b.heard ? fullEnd(lb, b.heard.soundOut) : b.end;
  const first: Placed = {
    ...a,
    clip: a.clip.levels
      ? { ...a.clip, levels: [...la.filter((l) => l.to <= fullFrom + 1e-9), { level: 1, from: fullFrom, to: a.end }] }
      : a.clip,
    ...(a.heard ? { heard: { ...a.heard, soundOut: a.end, cleanTo: Math.max(a.heard.cleanTo, a.end) } } : {}),
  };
  const second: Placed = {
    ...b,
    start: at,
    clip: {
      ...b.clip,
      start: ms(at),
      ...(b.clip.levels
        ? {
            levels: [
              { level: 1, from: ms(at), to: Math.max(ms(at), bFullTo) },
              ...lb.filter((l) => l.from >= bFullTo - 1e-9),
            ].filter((l) => l.to > l.from),
          }
        : {}),
    },
    ...(b.heard ? { heard: { ...b.heard, soundIn: at, cleanFrom: Math.min(b.heard.cleanFrom, at) } } : {}),
  };
  return [first, second];
}

/** Where a clip's level windows first reach their top (its words' sound at full level), from its sound's start. */
function fullStart(levels: Level[], soundIn: number): number {
  const top = Math.max(...levels.map((l) => l.level));
  return levels.find((l) => l.from >= soundIn - 1e-9 && l.level >= top - 1e-9)?.from ?? soundIn;
}
/** Where they last leave it, before its sound's end. */
function fullEnd(levels: Level[], soundOut: number): number {
  const top = Math.max(...levels.map((l) => l.level));
  return levels.findLast((l) => l.to <= soundOut + 1e-9 && l.level >= top - 1e-9)?.to ?? soundOut;
}

/**
 * At the join of `a` and `b`, the frames beyond a clip's sound are heard rather than muted: at full level where they
 * are pause, else the word beyond faded out across them (steps of at most 2 ms down to 0 at the picture's cut).
 * Where the pause goes on beyond the clip's out point (or before its in point), the clip says so (its sound_handles,
 * up to HANDLE_CLAIMED): the render crossfades the join over that pause where both sides have enough
 * (media/sound-plan.ts crossfadeJoins), instead of fading each side out and in (a dip at every join). Its sound is
 * then at full level up to its edge: the crossfade is its fade.
 */
function fillJoin(a: Placed, b: Placed): void {
  const after = a.heard ? handle(a.heard.cleanTo - PAUSE_SAFETY - a.end) : 0;
  if (a.heard && a.clip.levels && (a.end > a.heard.soundOut + 1e-9 || after)) {
    const levels = a.clip.levels;
    const top = Math.max(...levels.map((l) => l.level));
    const from = fullEnd(levels, a.heard.soundOut);
    const clean = Math.min(a.end, Math.max(from, a.heard.cleanTo - PAUSE_SAFETY));
    a.clip = {
      ...a.clip,
      levels: [
        ...levels.filter((l) => l.to <= from + 1e-9),
        { level: top, from, to: ms(clean) },
        ...fade(ms(clean), a.end, top, false),
      ].filter((l) => l.to > l.from),
      ...(after ? { sound_handles: { ...a.clip.sound_handles, after } } : {}),
    };
    a.heard = { ...a.heard, soundOut: a.end };
  }
  const before = b.heard ? handle(b.start - (b.heard.cleanFrom + PAUSE_SAFETY)) : 0;
  if (b.heard && b.clip.levels && (b.start < b.heard.soundIn - 1e-9 || before)) {
    const levels = b.clip.levels;
    const top = Math.max(...levels.map((l) => l.level));
    const to = fullStart(levels, b.heard.soundIn);
    const clean = Math.max(b.start, Math.min(to, b.heard.cleanFrom + PAUSE_SAFETY));
    b.clip = {
      ...b.clip,
      levels: [
        ...fade(b.start, ms(clean), top, true),
        { level: top, from: ms(clean), to },
        ...levels.filter((l) => l.from >= to - 1e-9),
      ].filter((l) => l.to > l.from),
      ...(before ? { sound_handles: { before, ...b.clip.sound_handles } } : {}),
    };
    b.heard = { ...b.heard, soundIn: b.start };
  }
}

/**
 * The most of the pause beyond a clip's edge it claims as a sound handle (s): twice what a crossfade plays beyond it
 * (10 ms). The pause's far end as heard is not sample-true (a soft onset, the "sh" of "she", is heard as pause
 * under room tone, 100 ms and more), so a longer measured pause is not trusted further.
 */
const HANDLE_CLAIMED = 0.02;

/** Pause beyond a clip's edge (s) as a sound handle: whole milliseconds, at most HANDLE_CLAIMED; 0 for none. */
const handle = (pause: number) => Math.min(HANDLE_CLAIMED, Math.max(0, Math.floor(pause * 1000 + 1e-6) / 1000));

/** Steps from `top` down to 0 (or up from 0) over [from, to), 2 ms each at least (whole milliseconds). */
function fade(from: number, to: number, top: number, up: boolean): Level[] {
  const span = Math.round((to - from) * 1000);
  if (span <= 0) return [];
  const n = Math.max(1, Math.min(20, Math.floor(span / 2)));
  const out: Level[] = [];
  for (let i = 0; i < n; i++) {
    const a = ms(from + Math.floor((span * i) / n) / 1000);
    const b = ms(from + Math.floor((span * (i + 1)) / n) / 1000);
    const level = Math.round(top * ((up ? i + 1 : n - i) / (n + 1)) * 1000) / 1000;
    if (b > a) out.push({ level, from: a, to: b });
  }
  return out;
}
