// Reading what the measurement branches of the render graph printed (timeline-args.ts), and judging each cut:
// loudness of what plays, black or frozen pictures, and sound that contradicts the levels asked for.
import type { PlanCut } from '../edit/plan.js';

export interface LevelSample {
  /** Start of the 100 ms window on the timeline, seconds. */
  t: number;
  rmsDb: number;
  peakDb: number;
}

export interface Span {
  from: number;
  to: number;
}

export interface Measurements {
  cutLevels: LevelSample[];
  mixLevels: LevelSample[];
  black: Span[];
  frozen: Span[];
}

const FLOOR_DB = -100;
const dB = (s: string) => (s.includes('inf') ? FLOOR_DB : Math.max(FLOOR_DB, Number(s)));

/** A streaming parser of ffmpeg's stderr; `offsetSec` shifts times (a chunk's place on the timeline). */
export class MeasureParser {
  readonly result: Measurements = { cutLevels: [], mixLevels: [], black: [], frozen: [] };
  private buffer = '';
  private current: { list: LevelSample[]; sample: LevelSample } | undefined;
  private freezeStart: number | undefined;

  constructor(private offsetSec = 0) {}

  setOffset(offsetSec: number): void {
    this.finishFreeze();
    this.offsetSec = offsetSec;
  }

  push(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      this.line(this.buffer.slice(0, nl).replace(/\r$/, ''));
      this.buffer = this.buffer.slice(nl + 1);
    }
  }

  /** Closes a freeze still open at the end of a process's output. */
  finishFreeze(endSec?: number): void {
    if (this.freezeStart !== undefined && endSec !== undefined) this.result.frozen.push({ from: this.freezeStart, to: endSec + this.offsetSec });
    this.freezeStart = undefined;
  }

  private line(l: string): void {
    const level = /^\[(?:ametadata@)?(cutlevels|mixlevels) @ [^\]]+\] (.*)$/.exec(l);
    if (level) {
      const [, which, rest] = level;
      const frame = /pts_time:([\d.]+)/.exec(rest!);
      if (frame) {
        const list = which === 'cutlevels' ? this.result.cutLevels : this.result.mixLevels;
        this.current = { list, sample: { t: Number(frame[1]) + this.offsetSec, rmsDb: FLOOR_DB, peakDb: FLOOR_DB } };
        list.push(this.current.sample);
        return;
      }
      const kv = /lavfi\.astats\.Overall\.(RMS_level|Peak_level)=(\S+)/.exec(rest!);
      if (kv && this.current) {
        if (kv[1] === 'RMS_level') this.current.sample.rmsDb = dB(kv[2]!);
        else this.current.sample.peakDb = dB(kv[2]!);
      }
      return;
    }
    const black = /black_start:([\d.]+) black_end:([\d.]+)/.exec(l);
    if (black) {
      this.result.black.push({ from: Number(black[1]) + this.offsetSec, to: Number(black[2]) + this.offsetSec });
      return;
    }
    const fs = /freezedetect\.freeze_start: ([\d.]+)/.exec(l);
    if (fs) {
      this.freezeStart = Number(fs[1]) + this.offsetSec;
      return;
    }
    const fe = /freezedetect\.freeze_end: ([\d.]+)/.exec(l);
    if (fe && this.freezeStart !== undefined) {
      this.result.frozen.push({ from: this.freezeStart, to: Number(fe[1]) + this.offsetSec });
      this.freezeStart = undefined;
    }
  }
}

const overlap = (a: Span, b: Span) => Math.max(0, Math.min(a.to, b.to) - Math.max(a.from, b.from));

/** Mean (power average) and peak over the samples whose 100 ms window lies within [from, to). */
export function loudness(samples: LevelSample[], span: Span): { meanDb: number; peakDb: number } | undefined {
  const inside = samples.filter((s) => s.t >= span.from - 1e-6 && s.t + 0.1 <= span.to + 1e-6);
  if (!inside.length) return undefined;
  const power = inside.reduce((sum, s) => sum + 10 ** (s.rmsDb / 10), 0) / inside.length;
  const meanDb = Math.max(FLOOR_DB, 10 * Math.log10(power || 10 ** (FLOOR_DB / 10)));
  return { meanDb: Math.round(meanDb * 10) / 10, peakDb: Math.round(Math.max(...inside.map((s) => s.peakDb)) * 10) / 10 };
}

export const SILENT_DB = -60;
export const AUDIBLE_DB = -45;
/** A sample peak at or above this is full scale: 16-bit full scale is -0.0003 dBFS; float sound above 0 clips on output. */
export const FULL_SCALE_DB = -0.05;

export interface CutReport {
  loudness?: { mean_db: number; peak_db: number };
  flags: string[];
}

/** Spans of a cut (timeline clock) where its own sound was asked at level 0, and where above 0. */
function levelSpans(cut: PlanCut): { muted: Span[]; audible: Span[] } {
  const start = cut.timelineStartSec;
  const end = start + cut.durationSec;
  const muted = cut.levels.filter((l) => l.level === 0).map((l) => ({ from: start + l.from, to: start + l.to }));
  const audible: Span[] = [];
  let cursor = start;
  for (const m of [...muted].sort((a, b) => a.from - b.from)) {
    if (m.from > cursor) audible.push({ from: cursor, to: m.from });
    cursor = Math.max(cursor, m.to);
  }
  if (cursor < end) audible.push({ from: cursor, to: end });
  return { muted, audible };
}

/** Trims 100 ms off each end so that a window straddling a boundary does not blur the verdict. */
const inner = (s: Span): Span | undefined => (s.to - s.from > 0.3 ? { from: s.from + 0.1, to: s.to - 0.1 } : undefined);

export function judgeCut(cut: PlanCut, m: Measurements, sourceHasAudio: boolean): CutReport {
  const span = { from: cut.timelineStartSec, to: cut.timelineStartSec + cut.durationSec };
  const flags: string[] = [];
  const mix = loudness(m.mixLevels, span);
  const blackFor = m.black.reduce((s, b) => s + overlap(b, span), 0);
  if (blackFor >= Math.min(0.5, cut.durationSec / 2)) flags.push(`black picture for ${blackFor.toFixed(1)} s`);
  const frozenFor = m.frozen.reduce((s, f) => s + overlap(f, span), 0);
  if (frozenFor >= Math.min(1, cut.durationSec * 0.8)) flags.push(`frozen picture for ${frozenFor.toFixed(1)} s`);
  const { muted, audible } = levelSpans(cut);
  for (const a of audible.map(inner).filter((s): s is Span => !!s)) {
    const l = loudness(m.cutLevels, a);
    if (l && l.peakDb < SILENT_DB) {
      flags.push(`silent ${a.from.toFixed(1)}-${a.to.toFixed(1)} s where its sound was asked at a level above 0${sourceHasAudio ? '' : ' (the source has no audio track)'}`);
      break;
    }
  }
  for (const z of muted.map(inner).filter((s): s is Span => !!s)) {
    const l = loudness(m.cutLevels, z);
    if (l && l.peakDb > AUDIBLE_DB) {
      flags.push(`audible ${z.from.toFixed(1)}-${z.to.toFixed(1)} s where level 0 was asked`);
      break;
    }
  }
  const inside = m.mixLevels.filter((s) => s.t >= span.from - 1e-6 && s.t + 0.1 <= span.to + 1e-6);
  const peak = Math.max(FLOOR_DB, ...inside.map((s) => s.peakDb));
  if (peak >= FULL_SCALE_DB) {
    const shown = Math.round(peak * 10) / 10 || 0;
    flags.push(`sound reaches full scale (peak ${shown > 0 ? '+' : ''}${shown.toFixed(1)} dBFS), so it clips: lower the levels of this cut or of the overlays over it`);
  }
  return { ...(mix ? { loudness: { mean_db: mix.meanDb, peak_db: mix.peakDb } } : {}), flags };
}

/** The progress line ffmpeg writes with -progress: out_time_us in microseconds. */
export function progressSeconds(chunk: string): number | undefined {
  let last: number | undefined;
  for (const m of chunk.matchAll(/out_time_us=(\d+)/g)) last = Number(m[1]) / 1e6;
  return last;
}


/** A difference (mean luma, 0-255) from a neighbour that reads as another picture, not motion. */
const FLASH_DIFF = 12;

/**
 * A cut's first or last frame that differs sharply from its neighbour inside the cut while that neighbour is close
 * to the next one: a flash frame in the source (a shot change one frame inside the cut, a stray frame). `diffs` are
 * the five differences edgeDiffs measures; fewer (a short cut) judge nothing.
 */
export function edgeFlags(diffs: number[] | undefined): string[] {
  if (!diffs || diffs.length !== 5) return [];
  const [first, second, , beforeLast, last] = diffs as [number, number, number, number, number];
  const sharp = (edge: number, inner: number) => edge >= FLASH_DIFF && edge >= 3 * inner + 3;
  const flags: string[] = [];
  if (sharp(first, second)) flags.push(`its first frame differs sharply from the next (a flash frame: mean difference ${first.toFixed(0)} of 255); move its in point one frame later`);
  if (sharp(last, beforeLast)) flags.push(`its last frame differs sharply from the one before (a flash frame: mean difference ${last.toFixed(0)} of 255); move its out point one frame earlier`);
  return flags;
}
