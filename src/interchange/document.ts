// The timeline as the interchange formats see it, both ways. Exports are made from a checked edit's timeline and
// its media (what each cut reads, at which source frame); imports are read into ImportedTimeline and turned back
// into an edit draft by to-edit.ts. Pure: no I/O.
import { toRenderPlan } from '../edit/plan.js';
import { DEFAULT_DUCK_DB } from '../edit/model.js';
import type { LevelWindow, Timeline } from '../edit/normalize.js';
import { cutClock, exactRate } from '../edit/cut-clock.js';

/** An exact time in seconds: n/d, both integers, d > 0. */
export interface Rational {
  n: number;
  d: number;
}

/** Greatest common divisor, iteratively (a huge or non-finite number from a file must not run the stack out). */
function gcd(a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return 1;
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}
export const rational = (n: number, d: number): Rational => {
  const g = gcd(n, d) || 1;
  return { n: n / g, d: d / g };
};
export const seconds = (r: Rational) => r.n / r.d;
export const addR = (a: Rational, b: Rational) => rational(a.n * b.d + b.n * a.d, a.d * b.d);

/**
 * The largest time, in seconds, a timeline file may give: 2^30 s (34 years; timecode stops at 100 hours). Up to it a
 * double holds a time to a tenth of a microsecond, which frame arithmetic needs; past it the difference of two times
 * (an in point on its media's own clock) comes out wrong: 1e300 frames less 1e300 frames is 0.
 */
export const MAX_FILE_SEC = 2 ** 30;
/** Whether a time from a file is held exactly: its count (frames, or a fraction's numerator) and its seconds. */
export const heldExactly = (count: number, sec: number) =>
  Math.abs(count) <= Number.MAX_SAFE_INTEGER && Math.abs(sec) <= MAX_FILE_SEC;

/** The most clips (cuts and overlays) a reader takes from one file: import_edit refuses a file with more. */
export const MAX_IMPORT_ITEMS = 5000;
/** The most notes a reader keeps; beyond, it counts them (a file of junk must not fill memory with notes). */
export const MAX_READ_NOTES = 1000;

/** A list of notes that keeps the first MAX_READ_NOTES and counts the rest in `dropped`. */
export function noteList(): ImportNote[] & { dropped: number } {
  const list = [] as unknown as ImportNote[] & { dropped: number };
  list.dropped = 0;
  list.push = (...items: ImportNote[]) => {
    for (const n of items) {
      if (list.length < MAX_READ_NOTES) Array.prototype.push.call(list, n);
      else list.dropped++;
    }
    return list.length;
  };
  return list;
}

/** How many notes a reader counted beyond those it kept. */
export const droppedOf = (notes: ImportNote[]) => (notes as Partial<{ dropped: number }>).dropped ?? 0;

/** Text from the file as a note shows it: at most `max` characters (a name may be megabytes long). */
export const quoteOf = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** What an export says about one asset: where its media is, and what it holds. */
export interface ExchangeMedia {
  assetId: string;
  /** A readable name (the asset's name or file name), used for clip and reel names. */
  name: string;
  /** file:// URL of a local file, or the link as the export points at it. */
  url: string;
  /** Constant video frame rate, when the source has one. */
  rate?: { num: number; den: number };
  videoStartSec?: number;
  videoTimeBase?: { num: number; den: number };
  durationMs?: number;
  hasVideo: boolean;
  hasAudio: boolean;
  width?: number;
  height?: number;
  audioChannels?: number;
  /** Its start timecode as a frame count at `rate` (camera and NLE media): its first frame's label. */
  timecodeFrame?: number;
  /** Its timecode counts drop-frame (29.97 or 59.94, labelled HH:MM:SS;FF). */
  timecodeDrop?: boolean;
}

/** The seconds a media's start timecode stands for (0 without one). */
export const timecodeSeconds = (m: Pick<ExchangeMedia, 'timecodeFrame' | 'rate'> | undefined) =>
  m?.timecodeFrame && m.rate ? (m.timecodeFrame * m.rate.den) / m.rate.num : 0;

/** A level window in ms, normalised: within its stream's span, no overlap, no level of 1, in order. */
export interface SpanLevel {
  level: number;
  fromMs: number;
  toMs: number;
}

/** cutroom's mix of a cut or overlay in the edit's own units (model.ts MixFields), where a format can carry it. */
export interface ExchangeMix {
  gain_db?: number;
  fade_in?: number;
  fade_out?: number;
  /** An overlay's role, and a music overlay's duck when set (the edit's own fields). */
  role?: 'dialogue' | 'music' | 'effects';
  duck_db?: number;
}

/** The mix fields a timeline item has, in the edit's units; undefined when none. */
export function mixOf(m: {
  gainDb?: number;
  fadeInMs?: number;
  fadeOutMs?: number;
  role?: ExchangeMix['role'];
  duckDb?: number;
}): ExchangeMix | undefined {
  const mix: ExchangeMix = {
    ...(m.role ? { role: m.role } : {}),
    // A music overlay's duck as the edit says it: the default (12 dB) left out, 0 (no duck) kept.
    ...(m.role === 'music' && m.duckDb !== DEFAULT_DUCK_DB ? { duck_db: m.duckDb ?? 0 } : {}),
    ...(m.gainDb ? { gain_db: m.gainDb } : {}),
    ...(m.fadeInMs ? { fade_in: m.fadeInMs / 1000 } : {}),
    ...(m.fadeOutMs ? { fade_out: m.fadeOutMs / 1000 } : {}),
  };
  return Object.keys(mix).length ? mix : undefined;
}

export interface ExportClip {
  assetId: string;
  /** Where the cut reads its source: the frame its picture starts on (cutroom's clock, see cutClock). */
  sourceIn: Rational;
  /** The source frame that starts it, at `rate`, when the source has a constant rate. */
  sourceInFrame?: number;
  /** Its place on the output timeline, in output frames. */
  recordFrame: number;
  frames: number;
  /** On the source clock (ms), as the edit has them, normalised to the cut's span. */
  levels: SpanLevel[];
  /** The edit's own in and out points (ms), kept in cutroom metadata where the format has room. */
  inMs: number;
  outMs: number;
  crop?: { zoom: number; position_x: number; position_y: number };
  /** cutroom's framing of another shape (model.ts FocusSchema), kept in cutroom metadata where the format has room. */
  focus?: { x: number; y: number } | 'auto';
  mix?: ExchangeMix;
  /** The edit's sound_handles (s; the pause beyond its in and out points), kept in cutroom metadata where it has room. */
  soundHandles?: SoundHandles;
}

/** A cut's sound handles as a file carries them: seconds of pause before its in point and after its out point. */
export interface SoundHandles {
  before: number;
  after: number;
}

export interface ExportOverlay {
  assetId: string;
  startMs: number;
  endMs: number;
  /** On the output timeline (ms), normalised to the overlay's span. */
  levels: SpanLevel[];
  /** Where in its audio it starts playing (ms), when not at 0. */
  fromMs?: number;
  mix?: ExchangeMix;
}

export interface ExportDocument {
  name: string;
  filename: string;
  width: number;
  height: number;
  fps: { num: number; den: number };
  totalFrames: number;
  clips: ExportClip[];
  overlays: ExportOverlay[];
  media: Map<string, ExchangeMedia>;
  /** What an editor opening the file would see differently from cutroom's render, one line per cut. */
  warnings: string[];
}

/** An out point written to the millisecond may lie this far after the frame start it means. */
const OUT_POINT_ROUNDING = 0.0005 + 1e-6;

/**
 * Whether an editor would show, on a clip's last frame, a source frame that starts at or after the cut's out point
 * (the next shot's first frame: a flash). That happens where the cut's frames on the timeline outrun its range by part
 * of a frame (a source at another rate than the edit's, times rounded to the millisecond); cutroom's render holds
 * the last frame inside the range there, which a timeline file cannot say.
 */
function lastFrameOutruns(
  sourceInSec: number,
  frames: number,
  fps: { num: number; den: number },
  outSec: number,
  rate?: { num: number; den: number },
): boolean {
  const last = sourceInSec + ((frames - 1) * fps.den) / fps.num;
  const shown = rate ? (Math.floor((last * rate.num) / rate.den + 1e-6) * rate.den) / rate.num : last;
  return frames > 0 && shown >= outSec - OUT_POINT_ROUNDING;
}

/**
 * The level in force over a stream's span [fromMs, toMs): the first window containing a time wins, 1 elsewhere
 * (the edit's rule). Returned as ordered, non-overlapping spans whose level is not 1, equal neighbours merged.
 */
export function normaliseLevels(windows: LevelWindow[], fromMs: number, toMs: number): SpanLevel[] {
  const edges = new Set<number>([fromMs, toMs]);
  for (const w of windows) {
    if (w.startMs > fromMs && w.startMs < toMs) edges.add(w.startMs);
    if (w.endMs > fromMs && w.endMs < toMs) edges.add(w.endMs);
  }
  const points = [...edges].sort((a, b) => a - b);
  const out: SpanLevel[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    const level = windows.find((w) => a >= w.startMs && a < w.endMs)?.level ?? 1;
    const last = out.at(-1);
    if (last && last.toMs === a && last.level === level) last.toMs = b;
    else out.push({ level, fromMs: a, toMs: b });
  }
  return out.filter((s) => s.level !== 1);
}

export function exportDocument(name: string, timeline: Timeline, media: Map<string, ExchangeMedia>): ExportDocument {
  const plan = toRenderPlan(timeline);
  let record = 0;
  const clips = timeline.cuts.map((c, i): ExportClip => {
    const m = media.get(c.assetId);
    const frames = plan.cuts[i]!.frames;
    const clip: ExportClip = {
      assetId: c.assetId,
      sourceIn: rational(c.inMs, 1000),
      recordFrame: record,
      frames,
      levels: normaliseLevels(c.levels, c.inMs, c.outMs),
      inMs: c.inMs,
      outMs: c.outMs,
      ...(c.crop ? { crop: c.crop } : {}),
      ...(c.focus ? { focus: c.focus } : {}),
      ...(c.soundHandles
        ? { soundHandles: { before: c.soundHandles.beforeMs / 1000, after: c.soundHandles.afterMs / 1000 } }
        : {}),
    };
    const mix = mixOf(c);
    if (mix) clip.mix = mix;
    record += frames;
    const r = m?.rate;
    if (r && r.num > 0 && r.den > 0) {
      // The frame the render starts the cut on: the in point moved to the next frame start (cutClock).
      const moved = cutClock(
        { inSec: c.inMs / 1000 },
        { frameRate: r, videoStartSec: m.videoStartSec, videoTimeBase: m.videoTimeBase },
      ).inSec;
      const start = m.videoStartSec ?? 0;
      const k = Math.round(((moved - start) * r.num) / r.den);
      if (!start && Math.abs(moved - (k * r.den) / r.num) < 1e-6) {
        clip.sourceIn = rational(k * r.den, r.num);
        clip.sourceInFrame = k;
      } else {
        clip.sourceIn = rational(Math.round(moved * 1e6), 1e6);
      }
    }
    return clip;
  });
  const warnings = clips.flatMap((c, i) =>
    lastFrameOutruns(seconds(c.sourceIn), c.frames, timeline.fps, c.outMs / 1000, media.get(c.assetId)?.rate)
      ? [
          `cut ${i + 1}: its ${c.frames} frames at ${+(timeline.fps.num / timeline.fps.den).toFixed(3)} fps outrun its source range by part of a frame: an editor shows the source frame at its out point (the first of what follows it) as its last frame, where cutroom's render holds the frame before; in the editor, hold that clip's last frame for that one frame, or trim the clip by one frame`,
        ]
      : [],
  );
  const overlays = timeline.overlays.map((o): ExportOverlay => {
    const mix = mixOf(o);
    return {
      assetId: o.assetId,
      startMs: o.startMs,
      endMs: o.endMs,
      levels: normaliseLevels(o.levels, o.startMs, o.endMs),
      ...(o.fromMs ? { fromMs: o.fromMs } : {}),
      ...(mix ? { mix } : {}),
    };
  });
  return {
    name,
    filename: timeline.filename,
    width: timeline.width,
    height: timeline.height,
    fps: { num: timeline.fps.num, den: timeline.fps.den },
    totalFrames: plan.totalFrames,
    clips,
    overlays,
    media,
    warnings,
  };
}

/**
 * A cut's sound handles from cutroom's metadata in a file ({before, after} in seconds, and the in and out points in
 * ms they were measured from); undefined where there are none or they are not numbers (normalizeEdit bounds them).
 */
export function soundHandlesFrom(raw: unknown, inMs: unknown, outMs: unknown): ImportedCut['soundHandles'] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const side = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  const before = side((raw as Record<string, unknown>).before);
  const after = side((raw as Record<string, unknown>).after);
  if (!(before || after) || typeof inMs !== 'number' || typeof outMs !== 'number' || !(outMs > inMs)) return undefined;
  if (!Number.isFinite(inMs) || !Number.isFinite(outMs)) return undefined;
  return { before, after, inSec: inMs / 1000, outSec: outMs / 1000 };
}

/** Output frames as exact seconds. */
export const framesToR = (frames: number, fps: { num: number; den: number }) => rational(frames * fps.den, fps.num);

// ---- Imports ----

/** Whatever a file says about a clip's media, for mapping it back to an asset of the project. */
export interface MediaHints {
  /** cutroom's own asset id, when the file carries it (metadata, uid, comment). */
  assetId?: string;
  /** A path or URL the file points at. */
  url?: string;
  /** Clip, asset, file or reel names. */
  names: string[];
}

/** Where in the imported file something is, for diagnostics: "track V1, item 3", "event 004 (line 12)". */
export type Place = string;

export interface ImportedCut {
  media: MediaHints;
  /** Source time of the first frame, seconds. */
  sourceInSec: number;
  /** Length on the timeline, seconds. */
  durationSec: number;
  /** Level windows on the source clock, seconds (absolute source times). */
  levels: { level: number; fromSec: number; toSec: number }[];
  /**
   * The span the level windows were written against, when the file says (cutroom's OTIO metadata): an edge there is the
   * clip's edge, wherever an editor moved it.
   */
  levelSpan?: { fromSec: number; toSec: number };
  crop?: { zoom: number; position_x: number; position_y: number };
  focus?: { x: number; y: number } | 'auto';
  place: Place;
  /** cutroom's mix, where the file carries it (cutroom's OTIO metadata). */
  mix?: ExchangeMix;
  /**
   * The cut's sound handles, where the file carries them (cutroom's metadata), with the in and out points (s) they
   * were measured from: an edge an editor moved has another pause beyond it (to-edit.ts).
   */
  soundHandles?: SoundHandles & { inSec: number; outSec: number };
  /** From an EDL: its source timecodes as written (read at the source's rate once known) and its record length. */
  edlSource?: { tc: [string, string]; drop: boolean; recordFrames: number };
  /**
   * The file gives no range for it (OTIO: no source_range, no available_range): it plays its whole asset, as long as
   * that is measured.
   */
  wholeMedia?: boolean;
}

export interface ImportedOverlay {
  media: MediaHints;
  startSec: number;
  durationSec: number;
  /** Where in its source the overlay starts playing (the edit's `from`). */
  sourceInSec: number;
  mix?: ExchangeMix;
  /** On the timeline clock, seconds. */
  levels: { level: number; fromSec: number; toSec: number }[];
  levelSpan?: { fromSec: number; toSec: number };
  place: Place;
}

export interface ImportNote {
  severity: 'error' | 'warning';
  place: Place;
  message: string;
  /** Index of the cut or overlay of the resulting edit it is about, when there is one. */
  cut?: number;
  overlay?: number;
}

export interface ImportedTimeline {
  format: 'otio' | 'fcpxml' | 'edl';
  name?: string;
  filename?: string;
  fps?: { num: number; den: number };
  width?: number;
  height?: number;
  cuts: ImportedCut[];
  overlays: ImportedOverlay[];
  notes: ImportNote[];
}

/** A frame rate given as a number (29.97, 23.976, 30) as an exact fraction: NTSC rates become n*1000/1001. */
export const rateFromNumber = exactRate;
