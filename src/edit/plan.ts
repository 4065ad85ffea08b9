// The summary an agent reads: every cut with its place on the output timeline, and the total length; and the render
// plan (toRenderPlan), what media/ renders, decided here as data.
import { z } from 'zod';
import type { Mix, Timeline } from './normalize.js';
import type { FocusKey } from './framing.js';
import { formatTimecode, onFrameMs, outputFrameAt } from './timecode.js';
import { captionLayout, cuesWithin, type CaptionLayout, type Cue } from './captions.js';

/** Where one cut comes from and where it lands: shared by compose's summary and the preview's report. */
export const CutPlacementSchema = z.object({
  index: z.number(),
  asset_id: z.string(),
  source_in: z.string(),
  source_out: z.string(),
  timeline_start: z.string(),
  timeline_end: z.string(),
  seconds: z.number(),
});

export const TimelineSummarySchema = z.object({
  total_duration: z.string(),
  total_seconds: z.number(),
  resolution: z.string(),
  fps: z.number(),
  cuts: z.array(CutPlacementSchema),
  overlays: z.array(
    z.object({ index: z.number(), asset_id: z.string(), timeline_start: z.string(), timeline_end: z.string() }),
  ),
  cuts_total: z.number().int().optional().describe('When only the first cuts are listed: how many there are'),
  overlays_total: z.number().int().optional(),
});
export type TimelineSummary = z.infer<typeof TimelineSummarySchema>;

/**
 * Cuts are placed where their first output frame starts (onFrameMs), the total is where the last frame ends: seeking to
 * a cut's timeline_start shows its first frame, never the previous cut's last.
 */
export function summarizeTimeline(t: Timeline): TimelineSummary {
  const at = (ms: number) => onFrameMs(ms, t.fps);
  return {
    total_duration: formatTimecode(at(t.totalMs)),
    total_seconds: at(t.totalMs) / 1000,
    resolution: `${t.width}x${t.height}`,
    fps: t.fps.value,
    cuts: t.cuts.map((c) => ({
      index: c.index,
      asset_id: c.assetId,
      source_in: formatTimecode(c.inMs),
      source_out: formatTimecode(c.outMs),
      timeline_start: formatTimecode(at(c.startMs)),
      timeline_end: formatTimecode(at(c.endMs)),
      seconds: (c.outMs - c.inMs) / 1000,
    })),
    overlays: t.overlays.map((o) => ({
      index: o.index,
      asset_id: o.assetId,
      timeline_start: formatTimecode(o.startMs),
      timeline_end: formatTimecode(o.endMs),
    })),
  };
}

/** A volume window relative to the start of its stream, in seconds. */
export interface PlanLevel {
  level: number;
  from: number;
  to: number;
}

export interface PlanCut {
  index: number;
  assetId: string;
  /** Seek point in the source and length, in seconds. */
  inSec: number;
  durationSec: number;
  /** Frames this cut contributes: cumulative rounding on the timeline, so the total stays within one frame. */
  frames: number;
  timelineStartSec: number;
  levels: PlanLevel[];
  crop?: { zoom: number; position_x: number; position_y: number };
  /**
   * A frame of the output's shape covering the source (zoom 1), its centre at these points of the source picture
   * (0-1; t from the cut's start, piecewise-linear, held after the last), kept inside the picture. "auto" until the
   * picture is read (media/reframe.ts reframed gives the path).
   */
  focus?: FocusKey[] | 'auto';
  /** Fade in and out of the cut's sound (declick), seconds; 0 for hard edges. */
  fadeSec: number;
  /** The edit's mix: gain in dB, fades from and to silence (seconds), when asked for. */
  gainDb?: number;
  fadeInSec?: number;
  fadeOutSec?: number;
  /** Levelling (level_dialogue): dB this cut's own sound is brought up or down by, once measured (levelGains). */
  levelDb?: number;
  /** Captions burned into the cut's picture: their look, and the cues it shows, times from its first frame. */
  captions?: { layout: CaptionLayout; cues: Cue[] };
  /**
   * Pause in its source before its in point and after its out point (s; the edit's sound_handles): a join whose two
   * sides have enough is crossfaded (media/sound-plan.ts crossfadeJoins).
   */
  handles?: { before: number; after: number };
  /**
   * The crossfaded join before it is equal-gain (linear), not equal-power: its sound and the cut before's are alike
   * there (a steady tone in phase), so their amplitudes add (media/crossfade-shape.ts).
   */
  equalGainJoin?: boolean;
  /**
   * Samples its sound plays later than its picture (at most ~10 ms), so that at the crossfaded join before it a steady
   * tone meets the cut before's in phase rather than cancelling it (media/crossfade-shape.ts).
   */
  soundDelay?: number;
}

export interface PlanOverlay {
  index: number;
  assetId: string;
  startSec: number;
  durationSec: number;
  /** Relative to the overlay's own start. */
  levels: PlanLevel[];
  /** Fade in and out of the overlay's sound, seconds. */
  fadeSec: number;
  gainDb?: number;
  fadeInSec?: number;
  fadeOutSec?: number;
  /** Where in its audio the overlay starts playing (s). */
  fromSec?: number;
  /** Music lowered by `db` under speech: the spans (s, from the overlay's start) where speech is heard (duckSpans). */
  duck?: { db: number; speech: Span[] };
  /** Its part of the mix (dialogue when not said): the loudness of each part is measured apart. */
  role?: 'dialogue' | 'music' | 'effects';
}

export interface RenderPlan {
  width: number;
  height: number;
  fpsNum: number;
  fpsDen: number;
  totalSec: number;
  totalFrames: number;
  cuts: PlanCut[];
  overlays: PlanOverlay[];
  /** The cuts' own sound levelled to one loudness (their levelDb, once measured). */
  levelDialogue?: boolean;
  /** The output brought to this integrated loudness (LUFS), its true peak under this ceiling (dBTP). */
  loudness?: { targetLufs: number; truePeakDb: number };
}

const evenDown = (n: number) => Math.max(2, Math.floor(n / 2) * 2);

/**
 * Milliseconds of fade at both ends of every cut's and overlay's sound by default: a hard edit is a step in the
 * waveform (a click); a few milliseconds of fade is what editors put on every edit, and too short to hear as a fade.
 */
export const DEFAULT_FADE_MS = 5;
/** The longest fade an edit may ask for. */
export const MAX_FADE_MS = 100;

/** A fade never takes more than a quarter of the sound it shapes. */
const fadeFor = (fadeMs: number, lengthSec: number) => Math.max(0, Math.min(fadeMs / 1000, lengthSec / 4));

export interface PlanOptions {
  /** Scale the output down to this width (previews), keeping its shape. */
  maxWidth?: number;
  /** Fade at every edit of the sound, ms (DEFAULT_FADE_MS; 0 for hard cuts). */
  fadeMs?: number;
  /** Where speech is heard on the output timeline (s): music overlays duck under it. */
  speech?: Span[];
  /** Captions to burn in (the output clock, s), when the timeline asks for them burned. */
  cues?: Cue[];
}

/**
 * What ffmpeg must do for a timeline, decided without media: per-cut seek/length/frames, level windows
 * relative to each stream, overlays on the timeline, the fades at every edit of the sound.
 */
/** A span of time, seconds. */
export interface Span {
  from: number;
  to: number;
}

/** Spans in order, those apart by `gap` or less joined into one. */
export function joinSpans(spans: Span[], gap: number): Span[] {
  const out: Span[] = [];
  for (const s of [...spans].sort((a, b) => a.from - b.from)) {
    const last = out.at(-1);
    if (last && s.from - last.to <= gap) last.to = Math.max(last.to, s.to);
    else out.push({ ...s });
  }
  return out;
}

/** At most `max` spans: the two separated by the shortest gap joined, again and again. */
function fewestSpans(spans: Span[], max: number): Span[] {
  const out = spans.map((s) => ({ ...s }));
  while (out.length > max) {
    let k = 0;
    for (let i = 1; i + 1 < out.length; i++) if (out[i + 1]!.from - out[i]!.to < out[k + 1]!.from - out[k]!.to) k = i;
    out[k]!.to = Math.max(out[k]!.to, out[k + 1]!.to);
    out.splice(k + 1, 1);
  }
  return out;
}

/** How long (s) music takes to go down before speech, and to come back after it. */
export const DUCK_ATTACK = 0.15;
export const DUCK_RELEASE = 0.4;
/** At most this many speech spans shape one duck (its expression is evaluated every millisecond). */
export const DUCK_MAX_SPANS = 200;

/**
 * A duck holds through a pause shorter than this (s): the bed swelling back between sentences pumps. It comes back
 * only in longer pauses.
 */
export const DUCK_HOLD = 1.5;

/**
 * The speech a music bed ducks under, as the render shapes it: spans closer than the hold (and than attack and
 * release together) joined (the music stays down across them, and at any time at most one span's ramps are under
 * way), then past DUCK_MAX_SPANS the shortest gaps joined first (the music still comes back in the long ones).
 */
export function duckSpans(speech: Span[], holdSec = DUCK_HOLD): Span[] {
  return fewestSpans(joinSpans(speech, Math.max(holdSec, DUCK_ATTACK + DUCK_RELEASE)), DUCK_MAX_SPANS);
}

/** Speech spans (timeline s) that touch [from, to], from `from`, with a second either side (a duck ramps there). */
function speechWithin(speech: Span[], from: number, to: number): Span[] {
  return speech
    .filter((s) => s.to > from - 1 && s.from < to + 1)
    .map((s) => ({ from: +(s.from - from).toFixed(3), to: +(s.to - from).toFixed(3) }));
}

/** The mix fields a cut or overlay has (none present when none asked: a plan, and a segment's key, as before). */
function planMix(m: Mix): { gainDb?: number; fadeInSec?: number; fadeOutSec?: number } {
  return {
    ...(m.gainDb ? { gainDb: m.gainDb } : {}),
    ...(m.fadeInMs ? { fadeInSec: m.fadeInMs / 1000 } : {}),
    ...(m.fadeOutMs ? { fadeOutSec: m.fadeOutMs / 1000 } : {}),
  };
}

export function toRenderPlan(t: Timeline, opts: PlanOptions = {}): RenderPlan {
  const { maxWidth, fadeMs = DEFAULT_FADE_MS } = opts;
  const scale = maxWidth && maxWidth < t.width ? maxWidth / t.width : 1;
  const width = scale === 1 ? t.width : evenDown(t.width * scale);
  const height = scale === 1 ? t.height : evenDown(t.height * scale);
  const fps = t.fps.num / t.fps.den;
  const frameAt = (ms: number) => outputFrameAt(ms, t.fps);
  const layout = t.captions?.burn && opts.cues?.length ? captionLayout(t.captions.style, width, height) : undefined;
  /** The cues a cut shows: those over its frames, from its first frame's time. */
  const captionsOf = (c: { startMs: number; endMs: number }) => {
    if (!layout) return {};
    const from = frameAt(c.startMs) / fps;
    const cues = cuesWithin(opts.cues!, from, frameAt(c.endMs) / fps);
    return cues.length ? { captions: { layout, cues } } : {};
  };
  const cuts = t.cuts.map((c) => ({
    index: c.index,
    assetId: c.assetId,
    inSec: c.inMs / 1000,
    durationSec: (c.outMs - c.inMs) / 1000,
    frames: frameAt(c.endMs) - frameAt(c.startMs),
    timelineStartSec: c.startMs / 1000,
    levels: c.levels.map((l) => ({ level: l.level, from: (l.startMs - c.inMs) / 1000, to: (l.endMs - c.inMs) / 1000 })),
    ...(c.crop ? { crop: c.crop } : {}),
    ...(c.focus ? { focus: c.focus === 'auto' ? ('auto' as const) : [{ t: 0, x: c.focus.x, y: c.focus.y }] } : {}),
    fadeSec: fadeFor(fadeMs, (c.outMs - c.inMs) / 1000),
    ...planMix(c),
    ...captionsOf(c),
    ...(c.soundHandles
      ? { handles: { before: c.soundHandles.beforeMs / 1000, after: c.soundHandles.afterMs / 1000 } }
      : {}),
  }));
  const overlays = t.overlays.map((o) => ({
    index: o.index,
    assetId: o.assetId,
    startSec: o.startMs / 1000,
    durationSec: (o.endMs - o.startMs) / 1000,
    levels: o.levels.map((l) => ({
      level: l.level,
      from: (l.startMs - o.startMs) / 1000,
      to: (l.endMs - o.startMs) / 1000,
    })),
    fadeSec: fadeFor(fadeMs, (o.endMs - o.startMs) / 1000),
    ...planMix(o),
    ...(o.fromMs ? { fromSec: o.fromMs / 1000 } : {}),
    ...(o.role && o.role !== 'dialogue' ? { role: o.role } : {}),
    ...(o.duckDb && opts.speech
      ? { duck: { db: o.duckDb, speech: duckSpans(speechWithin(opts.speech, o.startMs / 1000, o.endMs / 1000)) } }
      : {}),
  }));
  return {
    width,
    height,
    fpsNum: t.fps.num,
    fpsDen: t.fps.den,
    totalSec: t.totalMs / 1000,
    totalFrames: frameAt(t.totalMs),
    cuts,
    overlays,
    ...(t.levelDialogue ? { levelDialogue: true } : {}),
    ...(t.loudness ? { loudness: t.loudness } : {}),
  };
}

/** How far levelling may move a cut: beyond this, a cut is too far from the others to be the same kind of sound. */
export const LEVEL_MAX_DB = 12;
/**
 * The level (dB) a cut's own level windows ask of its sound at their top (a clip's volume, or its loudest audio_level):
 * taken off its measured loudness before levelling, so that levelling evens out the cuts' own sound and the level
 * asked then applies on top (a clip at volume 0.5 plays 6 dB under its levelled neighbours). 0 without windows.
 */
export function askedLevelDb(cut: { levels: { level: number }[] }): number {
  const top = Math.max(0, ...cut.levels.map((l) => l.level));
  return cut.levels.length && top > 0 ? 20 * Math.log10(top) : 0;
}

/** Cuts quieter than the loudest by more than this are ambience or silence, not speech to level: left as they are. */
export const LEVEL_RANGE_LU = 20;

/** The loudness cuts are levelled to is their median on this grid (LU). */
export const LEVEL_REFERENCE_STEP = 0.5;

/**
 * Levelling (level_dialogue): the gain (dB) that brings each cut's own sound to the median loudness of the cuts
 * levelled, given each cut's integrated loudness (LUFS; undefined where nothing is loud enough to measure). A cut more
 * than LEVEL_RANGE_LU under the loudest, or unmeasured, is left as it is; no gain goes past ±LEVEL_MAX_DB. Cuts of one
 * speaker already within 0.5 LU of the median are left alone (no change to hear). The median is taken to the nearest
 * LEVEL_REFERENCE_STEP (at most 0.25 LU off, not heard): changing one cut then seldom moves the others' gains, so
 * the rest of the timeline's sound stays as it was and a re-preview measures only around the change.
 */
export function levelGains(lufs: (number | undefined)[]): number[] {
  const loudest = Math.max(-Infinity, ...lufs.filter((l): l is number => l !== undefined));
  const levelled = lufs.map((l) => l !== undefined && l >= loudest - LEVEL_RANGE_LU);
  const sorted = lufs.filter((l, i): l is number => levelled[i]! && l !== undefined).sort((a, b) => a - b);
  if (sorted.length < 2) return lufs.map(() => 0);
  const mid = sorted.length >> 1;
  const exact = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const median = Math.round(exact / LEVEL_REFERENCE_STEP) * LEVEL_REFERENCE_STEP;
  return lufs.map((l, i) => {
    if (!levelled[i] || l === undefined || Math.abs(median - l) < 0.5) return 0;
    return Math.round(Math.max(-LEVEL_MAX_DB, Math.min(LEVEL_MAX_DB, median - l)) * 10) / 10;
  });
}
