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
  /**
   * Loudness blocks (BS.1770: 400 ms, every 100 ms) by what was measured: a part of the mix (dialogue, music,
   * effects), the mix, a cut's own sound (cut_k)... as ebur128 printed them (see loudnessBranch).
   */
  blocks?: Record<string, LoudnessBlock[]>;
  /** The mix's true peak (4x oversampled) per 100 ms, dBTP. */
  truePeaks?: { t: number; db: number }[];
}

/** A 400 ms block of K-weighted loudness ending at `end` (s on the timeline), LUFS. */
export interface LoudnessBlock {
  end: number;
  lufs: number;
}

const FLOOR_DB = -100;
const dB = (s: string) => (s.includes('inf') ? FLOOR_DB : Math.max(FLOOR_DB, Number(s)));

/** A streaming parser of ffmpeg's stderr; `offsetSec` shifts times (a chunk's place on the timeline). */
export class MeasureParser {
  readonly result: Measurements = { cutLevels: [], mixLevels: [], black: [], frozen: [] };
  private buffer = '';
  private current: { list: LevelSample[]; sample: LevelSample } | undefined;
  private freezeStart: number | undefined;
  private at: { name: string; t: number } | undefined;

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
    if (this.freezeStart !== undefined && endSec !== undefined)
      this.result.frozen.push({ from: this.freezeStart, to: endSec + this.offsetSec });
    this.freezeStart = undefined;
  }

  private line(l: string): void {
    const block = /^\[ametadata@(loud_\w+|tpeak) @ [^\]]+\] (.*)$/.exec(l);
    if (block) {
      const name = block[1]!;
      const rest = block[2]!;
      const frame = /pts_time:([\d.]+)/.exec(rest);
      if (frame) {
        this.at = { name, t: Number(frame[1]) + this.offsetSec };
        return;
      }
      const kv = /lavfi\.(?:r128\.M|astats\.Overall\.Peak_level)=(\S+)/.exec(rest);
      if (kv && this.at?.name === name) {
        if (name === 'tpeak') (this.result.truePeaks ??= []).push({ t: this.at.t, db: dB(kv[1]!) });
        // ebur128 gives a block on each 100 ms frame: the 400 ms that end with that frame.
        else
          ((this.result.blocks ??= {})[name.slice(5)] ??= []).push({
            end: +(this.at.t + 0.1).toFixed(6),
            lufs: dB(kv[1]!),
          });
      }
      return;
    }
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

/** BS.1770's gates: blocks under -70 LUFS are silence; under the ungated loudness less 10 LU, pauses. */
const ABSOLUTE_GATE = -70;
const RELATIVE_GATE = 10;
const energy = (lufs: number) => 10 ** ((lufs + 0.691) / 10);
const lufsOf = (e: number) => -0.691 + 10 * Math.log10(e);

/**
 * Integrated loudness (BS.1770-4, EBU R128) of the blocks that lie within [from, to] (all of them without a span),
 * rounded to 0.1 LU; undefined where no block is over the absolute gate (silence, or shorter than a block).
 */
export function integratedLoudness(blocks: LoudnessBlock[] | undefined, span?: Span): number | undefined {
  const inside = (blocks ?? []).filter((b) => !span || (b.end - 0.4 >= span.from - 1e-6 && b.end <= span.to + 1e-6));
  const heard = inside.filter((b) => b.lufs > ABSOLUTE_GATE);
  if (!heard.length) return undefined;
  const gate = lufsOf(heard.reduce((s, b) => s + energy(b.lufs), 0) / heard.length) - RELATIVE_GATE;
  const kept = heard.filter((b) => b.lufs > gate);
  return Math.round(lufsOf(kept.reduce((s, b) => s + energy(b.lufs), 0) / kept.length) * 10) / 10;
}

/** The highest true peak within [from, to) (all without a span), dBTP to 0.1. */
export function truePeak(peaks: { t: number; db: number }[] | undefined, span?: Span): number | undefined {
  const inside = (peaks ?? []).filter((p) => !span || (p.t >= span.from - 1e-6 && p.t + 0.1 <= span.to + 1e-6));
  return inside.length ? Math.round(Math.max(...inside.map((p) => p.db)) * 10) / 10 : undefined;
}

const overlap = (a: Span, b: Span) => Math.max(0, Math.min(a.to, b.to) - Math.max(a.from, b.from));

/** Mean (power average) and peak over the samples whose 100 ms window lies within [from, to). */
export function loudness(samples: LevelSample[], span: Span): { meanDb: number; peakDb: number } | undefined {
  const inside = samples.filter((s) => s.t >= span.from - 1e-6 && s.t + 0.1 <= span.to + 1e-6);
  if (!inside.length) return undefined;
  const power = inside.reduce((sum, s) => sum + 10 ** (s.rmsDb / 10), 0) / inside.length;
  const meanDb = Math.max(FLOOR_DB, 10 * Math.log10(power || 10 ** (FLOOR_DB / 10)));
  return {
    meanDb: Math.round(meanDb * 10) / 10,
    peakDb: Math.round(Math.max(...inside.map((s) => s.peakDb)) * 10) / 10,
  };
}

/** The loudness of the mix and of each part of it (LUFS), and the mix's true peak (dBTP), over a span or all. */
export interface MixLoudness {
  lufs?: number;
  true_peak_db?: number;
  dialogue_lufs?: number;
  music_lufs?: number;
  effects_lufs?: number;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/**
 * The mix's parts measured apart (mixGraph): over `span` or the whole, moved by `gainDb` (a loudness target's last
 * pass). Without overlays the mix is the dialogue. Parts not in the edit are left out.
 */
export function mixLoudness(m: Pick<Measurements, 'blocks' | 'truePeaks'>, span?: Span, gainDb = 0): MixLoudness {
  const b = m.blocks ?? {};
  const dialogueBlocks = b.dialogue ?? (b.music || b.effects ? undefined : b.mix);
  const at = (blocks: LoudnessBlock[] | undefined) => {
    const v = integratedLoudness(blocks, span);
    return v === undefined ? undefined : round1(v + gainDb);
  };
  const out: MixLoudness = {};
  const put = (k: keyof MixLoudness, v: number | undefined) => v !== undefined && (out[k] = v);
  put('lufs', at(b.mix));
  const tp = truePeak(m.truePeaks, span);
  put('true_peak_db', tp === undefined ? undefined : round1(tp + gainDb));
  // (Without overlays the dialogue is the mix: said once, as lufs.)
  if (b.dialogue || b.music || b.effects) put('dialogue_lufs', at(dialogueBlocks));
  put('music_lufs', at(b.music));
  put('effects_lufs', at(b.effects));
  return out;
}

/**
 * What a loudness target's last pass did: the mix as joined (undefined: nothing over the gate), the gain given, and
 * the output as measured (its blocks and peaks too, for the figures per cut); undefined where nothing was heard.
 */
export interface LoudnessFinish {
  measuredLufs?: number;
  gainDb: number;
  lufs?: number;
  truePeakDb?: number;
  output: Pick<Measurements, 'blocks' | 'truePeaks'>;
}

/** A finish pass's report from what it measured. */
export function finished(
  measuredLufs: number | undefined,
  gainDb: number,
  m: Pick<Measurements, 'blocks' | 'truePeaks'>,
): LoudnessFinish {
  const lufs = integratedLoudness(m.blocks?.mix);
  const tp = truePeak(m.truePeaks);
  return {
    ...(measuredLufs !== undefined ? { measuredLufs } : {}),
    gainDb: Math.round(gainDb * 10) / 10,
    ...(lufs !== undefined ? { lufs } : {}),
    ...(tp !== undefined ? { truePeakDb: tp } : {}),
    output: { blocks: m.blocks, truePeaks: m.truePeaks },
  };
}

/** Dialogue this loud or more is speech to keep clear (quieter is ambience, or nothing). */
export const SPEECH_LUFS = -40;
/** Music sits at least this far under the dialogue it plays with (a mixer's rule of thumb for a bed). */
export const MUSIC_UNDER_DB = 10;

/**
 * What a cut's parts say of its mix: music that crowds or covers the dialogue. `duckingDb`: the most the music under
 * the cut already ducks (role "music"), when it does: the advice is then to duck it deeper, not to make it duck.
 */
export function mixFlags(l: MixLoudness, duckingDb?: number): string[] {
  const { dialogue_lufs: d, music_lufs: music } = l;
  if (d === undefined || music === undefined || d < SPEECH_LUFS) return [];
  const duck =
    duckingDb === undefined
      ? 'give it role "music" to duck under speech'
      : `duck it deeper (duck_db over ${duckingDb})`;
  if (music >= d)
    return [
      `dialogue inaudible: the music is ${round1(music - d).toFixed(1)} dB over it; lower the music (gain_db) or ${duck}`,
    ];
  if (d - music < MUSIC_UNDER_DB)
    return [
      `music only ${round1(d - music).toFixed(1)} dB under the dialogue (${MUSIC_UNDER_DB} dB or more keeps speech clear); lower it (gain_db) or ${duckingDb === undefined ? 'duck it (role "music", duck_db)' : duck}`,
    ];
  return [];
}

export const SILENT_DB = -60;
export const AUDIBLE_DB = -45;
/**
 * A sample peak at or above this is full scale: 16-bit full scale is -0.0003 dBFS; float sound above 0 clips on output.
 */
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
  // A source with no sound, its level never asked, is a picture laid under other sound (b-roll): its silence is known
  // (inspect_asset says it has no audio) and not worth a flag on every cut.
  const soundAsked = sourceHasAudio || cut.levels.some((l) => l.level > 0);
  for (const a of (soundAsked ? audible : []).map(inner).filter((s): s is Span => !!s)) {
    const l = loudness(m.cutLevels, a);
    if (l && l.peakDb < SILENT_DB) {
      flags.push(
        `silent ${a.from.toFixed(1)}-${a.to.toFixed(1)} s where its sound was asked at a level above 0${sourceHasAudio ? '' : ' (the source has no audio track)'}`,
      );
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
    flags.push(
      `sound reaches full scale (peak ${shown > 0 ? '+' : ''}${shown.toFixed(1)} dBFS), so it clips: lower the levels of this cut or of the overlays over it`,
    );
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
  if (sharp(first, second))
    flags.push(
      `its first frame differs sharply from the next (a flash frame: mean difference ${first.toFixed(0)} of 255); move its in point one frame later`,
    );
  if (sharp(last, beforeLast))
    flags.push(
      `its last frame differs sharply from the one before (a flash frame: mean difference ${last.toFixed(0)} of 255); move its out point one frame earlier`,
    );
  return flags;
}
