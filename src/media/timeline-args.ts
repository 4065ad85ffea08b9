// A render plan -> one ffmpeg argument list with one filter graph (DESIGN.md): input seeking per cut, per-branch
// normalisation, explicit trims and pads instead of -shortest, amix with normalize=0. Every number placed in the
// graph is one cutroom computed; every input is an asset source or a file cutroom wrote. The mix (gain, fades, an
// overlay's `from`, ducking) is decided in edit/ as data and turned into the filter graph here; a focus "auto" cut's
// path (analysis/reframe.ts) is drawn as the crop's x and y over t.
import type { MediaFacts } from '../edit/lint.js';
import {
  DUCK_ATTACK,
  DUCK_RELEASE,
  type PlanCut,
  type PlanLevel,
  type PlanOverlay,
  type RenderPlan,
  type Span,
} from '../edit/plan.js';
import { DEFAULT_TRUE_PEAK_DB } from '../edit/model.js';
import { DEMUXERS, inputArgs, type MediaSource } from './input.js';
import { cutClock } from '../edit/cut-clock.js';
import {
  DECODED_AFTER_SEC,
  SAMPLE_RATE,
  crossfadeJoins,
  rangeSamples,
  soundPlan,
  type CutSound,
} from './sound-plan.js';
import { captionFilter } from './captions.js';
import type { FocusKey } from '../edit/framing.js';

export interface InputSpec {
  source: MediaSource;
  hasAudio: boolean;
  /** Display size (sample aspect applied), when measured: a source of the output's shape is scaled without padding. */
  width?: number;
  height?: number;
  /** Constant frame rate of the video, when known: a cut's in point moves to the next frame start (cutClock). */
  frameRate?: { num: number; den: number };
  /** The first video frame's time on the file's clock, seconds (default 0). */
  videoStartSec?: number;
  /** The video stream's time base: a coarse one (1/1000) rounds the frame times. */
  videoTimeBase?: { num: number; den: number };
  /** Channels of the sound: a mono source plays at its own level on both channels. */
  audioChannels?: number;
}

/** The InputSpec of a probed asset. */
export function inputSpec(source: MediaSource, facts: MediaFacts): InputSpec {
  return {
    source,
    hasAudio: facts.hasAudio,
    ...(facts.width && facts.height ? { width: facts.width, height: facts.height } : {}),
    ...(facts.frameRate ? { frameRate: facts.frameRate } : {}),
    ...(facts.videoStartSec !== undefined ? { videoStartSec: facts.videoStartSec } : {}),
    ...(facts.videoTimeBase ? { videoTimeBase: facts.videoTimeBase } : {}),
    ...(facts.audioChannels ? { audioChannels: facts.audioChannels } : {}),
  };
}

export interface EncodeSettings {
  /** libx264 preset and quality. */
  preset: string;
  crf: number;
  /** aac for delivery; pcm for intermediate chunks, which must join sample-exact. */
  audio: 'aac' | 'pcm';
  audioBitrate?: string;
  /** ffmpeg's AAC coder: 'fast' takes half the time of the default on busy sound (bench/README.md), for previews. */
  aacCoder?: 'fast' | 'twoloop';
  /**
   * false: no mid/side stereo (-aac_ms 0). ffmpeg's search for it is about half the encoder's time; a preview turns
   * it off and takes a higher bitrate instead (bench/README.md: the mix benchmark's sound, SNR 36 -> 43 dB at 128k).
   */
  aacMidSide?: false;
  /**
   * mp4 for delivery; nut for intermediate chunks: it keeps each stream's own time base (1001/30000 at 29.97),
   * where matroska rounds every timestamp to the millisecond.
   */
  container: 'mp4' | 'nut' | 'matroska';
  /**
   * swscale's filter for the picture's resize. Unset: its default (bicubic), for delivery. 'area' for previews: it
   * averages the pixels each output pixel covers, which is what a large reduction needs, at about half the cost of
   * bicubic from 1080p to 360p (bench/README.md).
   */
  scaleFlags?: 'area';
}

export { SAMPLE_RATE };

/** Fixed-point text for the graph: never exponent notation, never more digits than needed. */
export const num = (n: number): string => {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  return n.toFixed(6).replace(/\.?0+$/, '') || '0';
};

/** Level changes are applied on frames of one millisecond of samples, so a window's edge lands on its sample. */
const LEVEL_FRAME = SAMPLE_RATE / 1000;

/** The level of a stream whose first window covers all of it, [0, endSec) on its windows' clock; else undefined. */
function steadyLevel(levels: PlanLevel[], endSec: number): number | undefined {
  const first = levels[0];
  return first && first.from <= 0 && first.to >= endSec - 1e-9 ? first.level : undefined;
}

/**
 * The level of the first window containing t (plus an offset), else 1. Windows are half-open [from, to) and their
 * edges are whole milliseconds of the stream's clock: the volume is evaluated per 1 ms frame of samples, and each
 * edge is compared half a frame early, so the frame starting on an edge takes the new level whatever the rounding
 * of t. Large frames are restored after it (fewer frames for the filters downstream).
 */
export function envelope(levels: PlanLevel[], offsetSec = 0): string | undefined {
  if (!levels.length) return undefined;
  const t = offsetSec ? `(t${offsetSec > 0 ? '+' : '-'}${num(Math.abs(offsetSec))})` : 't';
  const half = 0.5 / 1000;
  let expr = '1';
  for (const l of [...levels].reverse())
    expr = `if(between(${t},${num(l.from - half)},${num(l.to - half)}),${num(l.level)},${expr})`;
  return `asetnsamples=n=${LEVEL_FRAME}:p=0,volume='${expr}':eval=frame,asetnsamples=n=1024:p=0`;
}

/**
 * Sound to 48 kHz stereo float on a clock that starts at 0: a late start is padded with silence and anything
 * before 0 is dropped (aresample's first_pts with async, which also fills gaps of over 0.1 s). A mono source
 * plays at its own level on both channels; any other layout folds down with coefficients normalised so that no
 * output channel sums to more than 1 (rematrix_maxval; LFE is left out, as swresample does by default).
 */
function audioNormalise(spec: Pick<InputSpec, 'audioChannels'>, restampSec = 0): string {
  const restamp = restampSec ? `asetpts=PTS${restampSec > 0 ? '-' : '+'}${num(Math.abs(restampSec))}/TB,` : '';
  const mono = spec.audioChannels === 1 ? 'pan=stereo|c0=c0|c1=c0,' : '';
  return `${restamp}${mono}aresample=${SAMPLE_RATE}:async=1:first_pts=0:rematrix_maxval=1,aformat=sample_fmts=fltp:channel_layouts=stereo`;
}

/**
 * Scale expressions that fit (or cover) a w x h box with the source's display shape (dar: stored size times SAR), even
 * sides.
 */
function fitTo(w: number, h: number, mode: 'fit' | 'cover', flags?: string): string {
  const wider = `gt(dar,${w}/${h})`;
  const [byWidth, byHeight] = mode === 'fit' ? [wider, `not(${wider})`] : [`not(${wider})`, wider];
  return `scale=w='if(${byWidth},${w},2*round(${h}*dar/2))':h='if(${byHeight},${h},2*round(${w}/dar/2))'${flags ? `:flags=${flags}` : ''}`;
}

/**
 * How far a frame's stored time may be off its true time (a muxer's rounding, Matroska's millisecond, an out point
 * written to the millisecond after a frame start): a frame this close after an output tick is taken as on it, and a
 * frame starting this close before an out point is left out.
 */
export const FRAME_TIME_SLACK = 0.002;

/**
 * Seconds of the cut's source range [in, out) on its own clock, which starts at the moved in point (cutClock): the
 * picture and sound of a cut come from inside this span only.
 */
export function cutSpan(
  cut: Pick<PlanCut, 'inSec' | 'durationSec'>,
  spec: Pick<InputSpec, 'frameRate' | 'videoStartSec' | 'videoTimeBase'>,
): number {
  return cut.inSec + cut.durationSec - cutClock(cut, spec).inSec;
}

/**
 * Which source frames a cut's picture may show, on its own clock (0 = the moved in point): frames stored before
 * `keepBeforeSec` (its range less the slack, and never nothing). Output tick k then shows the latest of them stored
 * at or before k / fps + FRAME_TIME_SLACK, the first one before that, and the last one held after the last.
 */
export function cutPictureWindow(
  cut: Pick<PlanCut, 'inSec' | 'durationSec'>,
  spec: Pick<InputSpec, 'frameRate' | 'videoStartSec' | 'videoTimeBase'>,
): { keepBeforeSec: number } {
  return { keepBeforeSec: Math.max(0.001, cutSpan(cut, spec) - FRAME_TIME_SLACK) };
}

/** captionFile: the cut's caption script (media/captions.ts), drawn on its frames at the output's size, last. */
function videoChain(
  cut: PlanCut,
  plan: RenderPlan,
  spec: InputSpec,
  scaleFlags?: string,
  captionFile?: string,
): string {
  const { width: W, height: H } = plan;
  const rate = `${plan.fpsNum}/${plan.fpsDen}`;
  let frame: string;
  if (cut.focus) {
    // Cover the frame (zoom 1) and cut it out with its centre on the focus, as near as the picture allows: the
    // window never leaves the picture. A path's x and y follow t (the crop filter evaluates them per frame).
    const keys = cut.focus === 'auto' ? [{ t: 0, x: 0.5, y: 0.5 }] : cut.focus;
    frame =
      `${fitTo(W, H, 'cover', scaleFlags)},setsar=1,` +
      `crop=w='min(iw,${W})':h='min(ih,${H})':x='clip(${focusExpr(keys, 'x')}*iw-ow/2,0,iw-ow)':y='clip(${focusExpr(keys, 'y')}*ih-oh/2,0,ih-oh)'`;
  } else if (cut.crop) {
    // Cover the frame, times zoom; cut the window at the position; pad if zoomed out below the frame.
    const z = cut.crop.zoom;
    const sw = Math.max(2, Math.ceil((W * z) / 2) * 2);
    const sh = Math.max(2, Math.ceil((H * z) / 2) * 2);
    const fx = num((cut.crop.position_x + 1) / 2);
    const fy = num((cut.crop.position_y + 1) / 2);
    frame =
      `${fitTo(sw, sh, 'cover', scaleFlags)},setsar=1,` +
      `crop=w='min(iw,${W})':h='min(ih,${H})':x='(iw-min(iw,${W}))*${fx}':y='(ih-min(ih,${H}))*${fy}',` +
      `pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2:color=black`;
  } else if (spec.width && spec.height && Math.abs(spec.width / spec.height - W / H) < 0.002) {
    // Already the output's shape (display size): no bars to add, so no padding pass over every frame.
    frame = `scale=${W}:${H}${scaleFlags ? `:flags=${scaleFlags}` : ''}`;
  } else {
    frame = `${fitTo(W, H, 'fit', scaleFlags)},setsar=1,pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2:color=black`;
  }
  // On the clock 0 = the cut's in point (cutClock). Frames that start at or after the out point are dropped first
  // (a cut's frames may outrun its range by part of a frame: the next shot's first frame is the classic flash).
  // fps from 0 then gives each output tick the frame on screen at that tick (round=up: the latest frame starting
  // at or before it, never the nearest, which may be a later one), a first frame a little after 0 held from 0;
  // tpad holds the last frame inside the range where the frames outrun it; trim keeps exactly the planned frame
  // count. fps comes before the scaling: frames it drops are never scaled.
  return (
    `trim=end=${num(cutPictureWindow(cut, spec).keepBeforeSec)},setpts=PTS-${num(FRAME_TIME_SLACK)}/TB,fps=${rate}:start_time=0:round=up,${frame},setsar=1,` +
    `tpad=stop_mode=clone:stop_duration=${num(cut.durationSec + 1)},trim=end_frame=${cut.frames},setpts=PTS-STARTPTS,format=yuv420p` +
    (captionFile ? `,${captionFilter(captionFile)}` : '')
  );
}

/**
 * One axis of a focus path as an expression of t: the line between the two keys around t, found by halving (a tree
 * of `if(lt(t,…))`, log2 of the keys deep, as duckFilter's), held before the first key and after the last.
 */
export function focusExpr(keys: FocusKey[], axis: 'x' | 'y'): string {
  if (keys.every((k) => k[axis] === keys[0]![axis])) return num(keys[0]![axis]);
  const leg = (i: number) => {
    const a = keys[i]!;
    const b = keys[i + 1]!;
    if (a[axis] === b[axis]) return num(a[axis]);
    return `(${num(a[axis])}+${num(b[axis] - a[axis])}*clip((t-${num(a.t)})/${num(Math.max(1e-6, b.t - a.t))},0,1))`;
  };
  const tree = (lo: number, hi: number): string => {
    if (lo === hi) return leg(lo);
    const mid = (lo + hi) >> 1;
    return `if(lt(t,${num(keys[mid + 1]!.t)}),${tree(lo, mid)},${tree(mid + 1, hi)})`;
  };
  return tree(0, keys.length - 2);
}

/**
 * Samples of a cut's picture on the timeline (its frames' length at the output rate; without the rate, its planned
 * length): what the whole timeline's sound is fitted to at the end.
 */
export function cutSamples(
  cut: Pick<PlanCut, 'frames' | 'durationSec'>,
  rate?: Pick<RenderPlan, 'fpsNum' | 'fpsDen'>,
): number {
  return rate
    ? Math.round((cut.frames * rate.fpsDen * SAMPLE_RATE) / rate.fpsNum)
    : Math.round(cut.durationSec * SAMPLE_RATE);
}

/**
 * A cut's sound as its own input, seeked to its planned in point: the picture's input is seeked to the frame it
 * starts on (cutClock), up to a frame later, and the sound of that gap is the cut's too. `-vn`: nothing of its
 * picture is decoded.
 */
function cutSoundInputArgs(cut: PlanCut, spec: InputSpec, beforeSamples = 0): string[] {
  // (From `beforeSamples` before the in point: a crossfade's handle, see crossfadeJoins.)
  const before = beforeSamples / SAMPLE_RATE;
  return [
    '-ss',
    num(cut.inSec - before),
    '-t',
    num(cut.durationSec + before + DECODED_AFTER_SEC),
    '-vn',
    '-sn',
    '-dn',
    ...inputArgs(spec.source),
  ];
}

/** Samples a cut's sound plays beyond its range at each end: half of each crossfade it takes part in. */
interface Handles {
  before: number;
  after: number;
}
const NO_HANDLES: Handles = { before: 0, after: 0 };

/**
 * What of a crossfaded cut's source is read: its handles, and before them its sound's delay (soundDelay), so that
 * where its placed sound starts (half a crossfade before its slot, crossfadedPlaceChain) the source is that much
 * earlier: its sound plays that much late.
 */
const decoded = (cut: PlanCut, h: Handles): Handles =>
  h.before && cut.soundDelay ? { before: h.before + cut.soundDelay, after: h.after } : h;

/** The filter (and its comma) that applies a cut's level windows to its range, or '' when they leave it as it is. */
function rangeLevelFilter(cut: PlanCut, handles: Handles = NO_HANDLES): string {
  // One level over all of it is one multiplication.
  const steady = steadyLevel(cut.levels, cut.durationSec);
  if (steady === 1) return '';
  if (steady !== undefined) return `volume=${num(steady)},`;
  // Level windows are whole milliseconds of the source clock from the in point, where this stream starts (or a
  // handle before it): the 1 ms frames of the envelope start on them. The windows at the range's edges are held
  // over its handles.
  const beforeSec = handles.before / SAMPLE_RATE;
  const held =
    handles.before || handles.after
      ? cut.levels.map((l) => ({
          ...l,
          from: l.from <= 1e-9 ? -1 : l.from,
          to: l.to >= cut.durationSec - 1e-9 ? cut.durationSec + 1 : l.to,
        }))
      : cut.levels;
  const vol = envelope(held, -beforeSec);
  if (vol) return `${vol},`;
  return '';
}

/**
 * A cut's range [in, out) of sound from input `input` (its sound input; unused without sound) to `[label]`: its level
 * windows and gain applied, rangeSamples long (silence after a source that ends early). No fades: they belong to
 * the part of it that plays, decided where it is placed (placeChain). What a preview's segment keeps of its sound.
 */
function rangeChain(
  input: number,
  label: string,
  cut: PlanCut,
  spec: InputSpec,
  handles: Handles = NO_HANDLES,
): string {
  const samples = handles.before + rangeSamples(cut) + handles.after;
  const trim = `atrim=end_sample=${samples},asetpts=PTS-STARTPTS`;
  if (!spec.hasAudio) return `anullsrc=r=${SAMPLE_RATE}:cl=stereo,${trim}[${label}]`;
  const level = rangeLevelFilter(cut, handles);
  const gain = cut.gainDb ? `volume=${num(cut.gainDb)}dB,` : '';
  // Silence follows the sound (a source shorter than it says), then the range's length is kept: concat rather than
  // apad, which fails on a stream that brings no sample at all (a cut that ends before its source's sound begins).
  return `[${input}:a]${audioNormalise(spec)},${level}${gain}atrim=end_sample=${samples}[${label}s];anullsrc=r=${SAMPLE_RATE}:cl=stereo[${label}z];[${label}s][${label}z]concat=n=2:v=0:a=1,${trim}[${label}]`;
}

/**
 * A cut's range sound (the chain `head` ends in it, ready for a filter) placed in its slot of the timeline's sound
 * (soundPlan): the part that plays, levelled, with its fades (the edit's, and the declick at both edges), after its
 * lead and in silence to the slot's length, to `[label]`.
 */
function placeChain(head: string, label: string, cut: PlanCut, s: CutSound, handles: Handles = NO_HANDLES): string {
  const silence = `anullsrc=r=${SAMPLE_RATE}:cl=stereo`;
  if (handles.before || handles.after) return crossfadedPlaceChain(head, label, cut, s, handles);
  // (A cut none of whose sound plays, a one-frame cut whose in point moved past its out: its sound is discarded,
  // every output of a graph must lead somewhere, and its slot is silence.)
  if (s.samples <= 0) return `${head}anullsink;${silence},atrim=end_sample=${s.slot}[${label}]`;
  const level = cut.levelDb ? `volume=${num(cut.levelDb)}dB,` : '';
  const lead = s.lead ? `,adelay=delays=${s.lead}S:all=1` : '';
  return (
    `${head}atrim=start_sample=${s.skip}:end_sample=${s.skip + s.samples},asetpts=PTS-STARTPTS,${level}` +
    `${mixFilters({ fadeInSec: cut.fadeInSec, fadeOutSec: cut.fadeOutSec }, s.samples)}${edgeFades(s.samples, cut.fadeSec)}${lead}[${label}p];` +
    `${silence}[${label}z];[${label}p][${label}z]concat=n=2:v=0:a=1,atrim=end_sample=${s.slot},asetpts=PTS-STARTPTS[${label}]`
  );
}

/**
 * placeChain for a cut that takes part in a crossfade (crossfadeJoins): its range's sound, read with its handles
 * (rangeChain), plays from half a crossfade before its slot and/or on for half a crossfade after it; an edge that is
 * crossfaded has no declick fade (the crossfade is its fade), nor a lead (crossfadeJoins asks for none).
 */
function crossfadedPlaceChain(head: string, label: string, cut: PlanCut, s: CutSound, h: Handles): string {
  const silence = `anullsrc=r=${SAMPLE_RATE}:cl=stereo`;
  const level = cut.levelDb ? `volume=${num(cut.levelDb)}dB,` : '';
  // (The stream starts `h.before` before the in point: playing from `skip - h.before` of the range is `skip` of it.)
  const from = s.skip;
  const plays = h.before + s.samples + h.after;
  const n = Math.min(Math.floor(s.samples / 2), Math.round(cut.fadeSec * SAMPLE_RATE));
  const fades = [
    ...(n > 0 && !h.before ? [`afade=t=in:ss=0:ns=${n}`] : []),
    ...(n > 0 && !h.after ? [`afade=t=out:ss=${plays - n}:ns=${n}`] : []),
  ];
  const lead = s.lead ? `adelay=delays=${s.lead}S:all=1,` : '';
  return (
    `${head}atrim=start_sample=${from}:end_sample=${from + plays},asetpts=PTS-STARTPTS,${level}` +
    `${mixFilters({ fadeInSec: cut.fadeInSec, fadeOutSec: cut.fadeOutSec }, plays)}${fades.map((f) => `${f},`).join('')}${lead}anull[${label}p];` +
    `${silence}[${label}z];[${label}p][${label}z]concat=n=2:v=0:a=1,atrim=end_sample=${h.before + s.slot + h.after},asetpts=PTS-STARTPTS[${label}]`
  );
}

/**
 * The placed sounds of cuts (labels, in order) end to end, to `[out]`; a cut with no slot has nothing to add
 * (discarded). A join with a crossfade (crossfadeJoins: `xfade[k]` samples between cut k-1 and cut k, whose placed
 * sounds run on half of it into each other's slot) overlaps them by its length with an equal-power crossfade (qsin:
 * the two gains' squares sum to 1), or an equal-gain one (tri: they sum to 1) where the cut after it says its sound
 * is alike the one before's there (equalGain, crossfade-shape.ts), so the timeline's length is the slots' sum still.
 */
function joinSlots(
  labels: string[],
  sounds: CutSound[],
  out: string,
  xfade: number[] = [],
  equalGain: (boolean | undefined)[] = [],
): string {
  if (!xfade.some((n) => n > 0)) {
    const kept = labels.filter((_, i) => sounds[i]!.slot > 0);
    const dropped = labels.filter((_, i) => sounds[i]!.slot <= 0).map((l) => `${l}anullsink;`);
    return `${dropped.join('')}${kept.join('')}concat=n=${kept.length}:v=0:a=1[${out}]`;
  }
  const chains: string[] = [];
  let acc: string | undefined;
  labels.forEach((l, i) => {
    if (sounds[i]!.slot <= 0) {
      chains.push(`${l}anullsink`);
      return;
    }
    if (!acc) {
      acc = l;
      return;
    }
    const joined = `[${out}j${i}]`;
    const n = xfade[i] ?? 0;
    const curve = equalGain[i] ? 'tri' : 'qsin';
    chains.push(
      n > 0
        ? `${acc}${l}acrossfade=ns=${n}:o=1:c1=${curve}:c2=${curve}${joined}`
        : `${acc}${l}concat=n=2:v=0:a=1${joined}`,
    );
    acc = joined;
  });
  // (Stamped by its samples: acrossfade's timestamps drift by tens of microseconds from them, and the measurements'
  // times with them.)
  chains.push(`${acc ?? ''}asetpts=N/SR/TB[${out}]`);
  return chains.join(';');
}

/** The inputs of cuts, from input index `first`: each cut's picture, then its sound when it has one. */
function cutInputsOf(
  cuts: PlanCut[],
  plan: RenderPlan,
  specs: InputSpec[],
  first: number,
  oneThread: string[] = [],
  soundBefore: number[] = [],
): { args: string[]; picture: number[]; sound: number[]; next: number } {
  const args: string[] = [];
  const picture: number[] = [];
  const sound: number[] = [];
  let next = first;
  cuts.forEach((cut, k) => {
    const spec = specs[k]!;
    args.push(...oneThread, ...cutInputArgs(cut, plan, spec));
    picture.push(next++);
    if (spec.hasAudio) {
      args.push(...oneThread, ...cutSoundInputArgs(cut, spec, soundBefore[k] ?? 0));
      sound.push(next++);
    } else sound.push(-1);
  });
  return { args, picture, sound, next };
}

/**
 * The first `samples` of a stream from 0, faded in over its first `fadeSec` and out over its last (a fade out
 * silences what follows): an edit in the sound is a step in the waveform, heard as a click, unless it is faded.
 */
function edgeFades(samples: number, fadeSec: number): string {
  const n = Math.min(Math.floor(samples / 2), Math.round(fadeSec * SAMPLE_RATE));
  const trim = `atrim=end_sample=${samples}`;
  return n > 0 ? `${trim},afade=t=in:ss=0:ns=${n},afade=t=out:ss=${samples - n}:ns=${n}` : trim;
}

function overlayChain(
  inputIndex: number,
  k: number,
  o: PlanOverlay,
  spec: Pick<InputSpec, 'audioChannels'> = {},
): string {
  const steady = steadyLevel(o.levels, o.durationSec);
  const vol = steady === undefined ? envelope(o.levels) : `volume=${num(steady)}`;
  const delayMs = Math.round(o.startSec * 1000);
  const samples = Math.max(1, Math.round(o.durationSec * SAMPLE_RATE));
  // Played from `from` in its audio: what comes before is dropped, sample-exact, once the sound is at 48 kHz.
  const from = o.fromSec ? `atrim=start_sample=${Math.round(o.fromSec * SAMPLE_RATE)},asetpts=PTS-STARTPTS,` : '';
  const duck = o.duck?.speech.length ? `${duckFilter(o.duck.db, o.duck.speech)},` : '';
  return `[${inputIndex}:a]${audioNormalise(spec)},${from}apad,${vol ? `${vol},` : ''}${duck}${mixFilters(o, samples)}${edgeFades(samples, o.fadeSec)},adelay=delays=${delayMs}:all=1[o${k}]`;
}

/**
 * Music lowered by `db` while speech is heard (spans in s from the stream's start, as duckSpans shapes them: apart
 * by more than attack and release): it goes down over DUCK_ATTACK before each span and comes back over DUCK_RELEASE
 * after it, along a half-sine. One volume expression evaluated per 1 ms frame; at any t at most one span's ramps are
 * under way, and the expression finds it by halving (a tree of `if(lt(t,…))` between spans, log2 of their number
 * deep: ffmpeg refuses an expression nested ~92 deep) and evaluates that one alone.
 */
export function duckFilter(db: number, spans: Span[]): string {
  const depth = 1 - 10 ** (-db / 20);
  const ramp = (x: string) => `(0.5-0.5*cos(PI*clip(${x},0,1)))`;
  const term = (s: Span) =>
    `min(${ramp(`(t-${num(s.from - DUCK_ATTACK)})/${num(DUCK_ATTACK)}`)},${ramp(`(${num(s.to + DUCK_RELEASE)}-t)/${num(DUCK_RELEASE)}`)})`;
  const tree = (lo: number, hi: number): string => {
    if (lo === hi) return term(spans[lo]!);
    const mid = (lo + hi) >> 1;
    // Between span mid's release and span mid+1's attack nothing is under way: split there.
    const split = (spans[mid]!.to + DUCK_RELEASE + spans[mid + 1]!.from - DUCK_ATTACK) / 2;
    return `if(lt(t,${num(split)}),${tree(lo, mid)},${tree(mid + 1, hi)})`;
  };
  return `asetnsamples=n=${LEVEL_FRAME}:p=0,volume='1-${num(depth)}*${tree(0, spans.length - 1)}':eval=frame,asetnsamples=n=1024:p=0`;
}

/**
 * The mix asked of a cut or overlay whose sound is `samples` long from 0: its gain, and fades from and to silence
 * along a half-sine (smooth at both ends: no kink in the slope, as a long linear fade has), the fade out ending on
 * its last sample. Empty when none was asked. The numbers are the edit's, checked in normalize.ts.
 */
function mixFilters(m: { gainDb?: number; fadeInSec?: number; fadeOutSec?: number }, samples: number): string {
  const out: string[] = [];
  if (m.gainDb) out.push(`volume=${num(m.gainDb)}dB`);
  const fadeIn = Math.min(samples, Math.round((m.fadeInSec ?? 0) * SAMPLE_RATE));
  const fadeOut = Math.min(samples, Math.round((m.fadeOutSec ?? 0) * SAMPLE_RATE));
  if (fadeIn > 0) out.push(`afade=t=in:ss=0:ns=${fadeIn}:curve=hsin`);
  if (fadeOut > 0) out.push(`afade=t=out:ss=${samples - fadeOut}:ns=${fadeOut}:curve=hsin`);
  return out.length ? `${out.join(',')},` : '';
}

/** The joined chunks' sound is already 48 kHz stereo PCM from 0: only the format is pinned. */
const JOINED_AUDIO = `aresample=${SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=stereo,asetpts=PTS-STARTPTS`;

/**
 * The timeline's sound (its cuts' ranges end to end) fitted to its picture: cut or padded with silence to its frames'
 * length.
 */
function fitToPicture(plan: RenderPlan): string {
  const samples = cutSamples({ frames: plan.totalFrames, durationSec: plan.totalSec }, plan);
  return `apad=whole_len=${samples},atrim=end_sample=${samples}`;
}

/** Audio measurement every 100 ms, printed to stderr under the given filter name (see measure.ts). */
const measureAudio = (name: string) =>
  `asetnsamples=n=${SAMPLE_RATE / 10}:p=0,astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=RMS_level+Peak_level,ametadata@${name}=mode=print,anullsink`;
/**
 * K-weighted loudness (ebur128, BS.1770) of a stream: each 100 ms, the 400 ms block ending there, printed under
 * loud_<name> (MeasureParser keeps them as blocks; integratedLoudness gates them, for the whole or any span).
 */
const loudnessBranch = (name: string) =>
  `asetnsamples=n=${SAMPLE_RATE / 10}:p=0,ebur128=metadata=1,ametadata@loud_${name}=mode=print:key=lavfi.r128.M,anullsink`;
/** The true peak (BS.1770: the sample peak at 4x the rate) per 100 ms, printed under tpeak. */
const truePeakBranch = `aresample=${4 * SAMPLE_RATE},asetnsamples=n=${(4 * SAMPLE_RATE) / 10}:p=0,astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=Peak_level,ametadata@tpeak=mode=print:key=lavfi.astats.Overall.Peak_level,anullsink`;

// Black and frozen spans are judged in tenths of a second, on the output's own pictures (up to 640 px wide, averaged
// down beyond): a talking head that sways and moves its mouth changes in its fine detail, which a picture sampled down
// to 160 px loses, and was taken for frozen there (issue 47, item 5). Nearly free beside the decode either way.
const BLACK = 'd=0.1:pix_th=0.10';
const FREEZE = 'n=-60dB:d=0.5';
const MEASURED_PICTURE = "fps=10,scale='min(640,iw)':-2:flags=area";
const measureVideo = `${MEASURED_PICTURE},blackdetect@black=${BLACK},freezedetect@freeze=${FREEZE},nullsink`;
/**
 * The same judgement for one of several cuts in a process: the detectors' own log lines do not say which cut they
 * are about, so their frame metadata is printed under names that do (black/freeze start and end, cut k).
 */
const print = (name: string, key: string) => `metadata@${name}=mode=print:key=lavfi.${key}`;
const measureCutVideo = (k: number) =>
  `${MEASURED_PICTURE},blackdetect=${BLACK},${print(`vb_${k}`, 'black_start')},${print(`ve_${k}`, 'black_end')},` +
  `freezedetect=${FREEZE},${print(`fs_${k}`, 'freezedetect.freeze_start')},${print(`fe_${k}`, 'freezedetect.freeze_end')},nullsink`;

/** The sound's encoder options of these settings. */
/** The AAC encoder's options of these settings, for the audio streams `spec` selects ('' for all, ':a:1'...). */
export function aacArgs(e: EncodeSettings, spec = ''): string[] {
  return [
    `-c:a${spec}`,
    'aac',
    ...(e.aacCoder ? [`-aac_coder${spec}`, e.aacCoder] : []),
    ...(e.aacMidSide === false ? [`-aac_ms${spec}`, '0'] : []),
    `-b:a${spec}`,
    e.audioBitrate ?? '128k',
  ];
}

function audioEncodeArgs(e: EncodeSettings): string[] {
  const codec = e.audio === 'aac' ? aacArgs(e) : ['-c:a', 'pcm_s16le'];
  return [...codec, '-ar', String(SAMPLE_RATE), '-ac', '2'];
}

const containerArgs = (e: EncodeSettings) =>
  e.container === 'mp4' ? ['-movflags', '+faststart', '-f', 'mp4'] : ['-f', e.container];

const videoEncodeArgs = (e: EncodeSettings, plan: RenderPlan) => [
  '-c:v',
  'libx264',
  '-preset',
  e.preset,
  '-crf',
  String(e.crf),
  '-pix_fmt',
  'yuv420p',
  '-r',
  `${plan.fpsNum}/${plan.fpsDen}`,
];

function encodeArgs(e: EncodeSettings, plan: RenderPlan): string[] {
  return [...videoEncodeArgs(e, plan), ...audioEncodeArgs(e), ...containerArgs(e)];
}

/**
 * A cut's source as an input, seeked: -ss/-t before -i, so the cost follows the cut's length, not the source's. Two
 * frames of margin: the chain pads a short source itself, so reading further only costs decoding. Every process that
 * reads a cut reads it by this, so that they decode the same samples.
 */
function cutInputArgs(cut: PlanCut, plan: RenderPlan, spec: InputSpec): string[] {
  return [
    '-ss',
    num(cutClock(cut, spec).seekSec),
    '-t',
    num(cut.durationSec + (2 * plan.fpsDen) / plan.fpsNum),
    ...inputArgs(spec.source),
  ];
}

const COMMON = ['-hide_banner', '-nostdin', '-nostats', '-v', 'info', '-progress', 'pipe:1', '-y'];

export interface TimelineJob {
  plan: RenderPlan;
  cutInputs: InputSpec[];
  overlayInputs: InputSpec[];
  output: string;
  encode: EncodeSettings;
  /** Add the measurement branches (audio levels of the cuts and of the mix, black and frozen video). */
  measure: boolean;
  /** Also draw the contact sheet's thumbnails from the same decoded frames: their chain and output options. */
  sheet?: { filter: string; outputArgs: string[] };
  /**
   * A chunk of a longer timeline: where its cuts' sound goes, from the whole timeline's soundPlan. Its sound is its
   * cuts' slots end to end (the join lays the chunks' sound end to end: chunkSoundSpan), not fitted to its picture,
   * and not mixed.
   */
  chunkSound?: CutSound[];
  /**
   * A chunk's crossfades (crossfadeJoins of the whole timeline), one per join of its cuts and one more: [k] the join
   * before its cut k ([0]: the join with the chunk before), [cuts] the join after its last cut (with the chunk
   * after). A join between chunks is crossfaded at the join of their sounds (concatArgs): each chunk's sound runs
   * on into half of it beyond its first and last slot.
   */
  chunkCrossfades?: number[];
  /** Caption scripts (in the process's working directory) by cut index, for the cuts that show captions. */
  captionFiles?: Map<number, string>;
  /**
   * By cut index: a clip to write beside its segment (mp4, AAC: what a browser plays). Its name and the segment's
   * must be plain names in the working directory (the tee muxer parses them).
   */
  clips?: Map<number, string>;
}

/** One process for the whole timeline (or one chunk of it, with no overlays). */
export function timelineArgs(job: TimelineJob): string[] {
  const { plan } = job;
  const sounds = job.chunkSound ?? soundPlan(plan, job.cutInputs);
  // Joins between cuts made by words are crossfaded (a chunk's first and last cut play half of the crossfade with
  // the chunk beside it beyond their slot: the join of the chunks overlaps them).
  const xfade = job.chunkSound ? (job.chunkCrossfades ?? []) : crossfadeJoins(plan, sounds, job.cutInputs);
  const handles = plan.cuts.map((_, i) => ({ before: (xfade[i] ?? 0) / 2, after: (xfade[i + 1] ?? 0) / 2 }));
  const read = plan.cuts.map((c, i) => decoded(c, handles[i]!));
  const inputs = cutInputsOf(
    plan.cuts,
    plan,
    job.cutInputs,
    0,
    [],
    read.map((h) => h.before),
  );
  const args = [...COMMON, ...inputs.args, ...overlayArgs(plan, job.overlayInputs)];

  const g: string[] = [];
  plan.cuts.forEach((cut, i) => {
    g.push(
      `[${inputs.picture[i]}:v]${videoChain(cut, plan, job.cutInputs[i]!, job.encode.scaleFlags, job.captionFiles?.get(cut.index))}[v${i}]`,
    );
    g.push(
      rangeChain(inputs.sound[i]!, `r${i}`, cut, job.cutInputs[i]!, read[i]),
      placeChain(`[r${i}]`, `a${i}`, cut, sounds[i]!, handles[i]),
    );
  });
  // Picture and sound are joined apart: each cut's picture lasts its frames, its sound its slot (soundPlan).
  g.push(`${plan.cuts.map((_, i) => `[v${i}]`).join('')}concat=n=${plan.cuts.length}:v=1:a=0[vcat]`);
  g.push(
    joinSlots(
      plan.cuts.map((_, i) => `[a${i}]`),
      sounds,
      'acat',
      xfade,
      plan.cuts.map((c) => c.equalGainJoin),
    ),
  );
  const branches = ['[vout]', ...(job.measure ? ['[vmeasure]'] : []), ...(job.sheet ? ['[vsheet]'] : [])];
  const videoOut = branches.length > 1 ? '[vout]' : '[vcat]';
  if (branches.length > 1) g.push(`[vcat]split=${branches.length}${branches.join('')}`);
  if (job.measure) g.push(`[vmeasure]${measureVideo}`);
  if (job.sheet) g.push(`[vsheet]${job.sheet.filter}[sheet]`);
  let cutSound = '[acat]';
  if (job.measure) {
    // (A chunk's cuts measured on their slots, not on the handles it plays beyond them.)
    const span = job.chunkSound ? chunkSoundSpan(sounds, xfade) : undefined;
    const slots =
      span?.before || span?.after
        ? `atrim=start_sample=${span.before}:end_sample=${span.samples - span.after},asetpts=PTS-STARTPTS,`
        : '';
    g.push('[acat]asplit=2[acut][acutmeasure]', `[acutmeasure]${slots}${measureAudio('cutlevels')}`);
    cutSound = '[acut]';
  }
  let audioOut = cutSound;
  if (!job.chunkSound) {
    const { chains, out } = mixGraph(plan, cutSound, job.overlayInputs, inputs.next, job.measure);
    g.push(...chains);
    audioOut = out;
  }
  args.push(
    '-filter_complex',
    g.join(';'),
    '-map',
    videoOut,
    '-map',
    audioOut,
    ...encodeArgs(job.encode, plan),
    job.output,
  );
  if (job.sheet) args.push('-map', '[sheet]', ...job.sheet.outputArgs);
  return args;
}

/**
 * What a chunk's sound holds: `samples` in all, of which the first `before` and the last `after` are its first and
 * last cut playing on into half of the crossfade with the chunk beside it (0 where that join is not crossfaded).
 */
export interface ChunkSoundSpan {
  samples: number;
  before: number;
  after: number;
}

/** The span of a chunk's sound (its sounds and chunkCrossfades, as TimelineJob takes them). */
export function chunkSoundSpan(sounds: CutSound[], crossfades: number[]): ChunkSoundSpan {
  const before = (crossfades[0] ?? 0) / 2;
  const after = (crossfades[sounds.length] ?? 0) / 2;
  return { samples: before + sounds.reduce((n, s) => n + s.slot, 0) + after, before, after };
}

/**
 * The chunks' sounds (`joined`: laid end to end, as their concat list gives them) joined to `[out]`: each taken
 * apart by its samples, and where two overlap (a join between chunks that is crossfaded: the first plays on
 * `after` into the second's, the second from `before` into the first's) crossfaded as joinSlots does inside a
 * process, equal-gain where the cut after the join says so. The timeline's length is the slots' sum still.
 */
function joinChunkSounds(joined: string, spans: ChunkSoundSpan[], equalGain: boolean[], out: string): string {
  if (spans.every((s) => !s.before && !s.after)) return `${joined}anull[${out}]`;
  const chains = [
    `${joined}aformat=sample_fmts=fltp,asplit=${spans.length}${spans.map((_, i) => `[${out}c${i}]`).join('')}`,
  ];
  let at = 0;
  let acc = '';
  spans.forEach((s, i) => {
    chains.push(`[${out}c${i}]atrim=start_sample=${at}:end_sample=${at + s.samples},asetpts=PTS-STARTPTS[${out}t${i}]`);
    at += s.samples;
    if (i === 0) {
      acc = `[${out}t0]`;
      return;
    }
    const n = spans[i - 1]!.after + s.before;
    const curve = equalGain[i] ? 'tri' : 'qsin';
    chains.push(
      n > 0
        ? `${acc}[${out}t${i}]acrossfade=ns=${n}:o=1:c1=${curve}:c2=${curve}[${out}j${i}]`
        : `${acc}[${out}t${i}]concat=n=2:v=0:a=1[${out}j${i}]`,
    );
    acc = `[${out}j${i}]`;
  });
  // (Stamped by its samples, as joinSlots does.)
  chains.push(`${acc}asetpts=N/SR/TB[${out}]`);
  return chains.join(';');
}

/** A concat list of segment or chunk files as ffmpeg's input (local files only, of the containers cutroom writes). */
const concatInput = (listFile: string) => [
  '-f',
  'concat',
  '-safe',
  '0',
  '-protocol_whitelist',
  'file',
  '-format_whitelist',
  `concat,nut,${DEMUXERS}`,
  '-i',
  `file:${listFile}`,
];
/** A segment file's sound as an input (a file cutroom wrote; its picture not decoded). */
const segmentSoundInput = (file: string) => ['-f', 'nut', '-protocol_whitelist', 'file', '-vn', '-i', `file:${file}`];

/**
 * The timeline's sound from `joined` (the cuts' sound end to end, 48 kHz stereo from 0) and the overlays (inputs from
 * `firstOverlay` on): their mix, measured when asked: its levels, and the loudness of each part of it apart
 * (dialogue: the cuts' own sound and the overlays of no other role; music; effects) and of the mix, with its true
 * peak. Returns the graph's chains and the label to encode.
 */
function mixGraph(
  plan: RenderPlan,
  joined: string,
  overlayInputs: InputSpec[],
  firstOverlay: number,
  measure: boolean,
  span?: SampleSpan,
): { chains: string[]; out: string } {
  // A span: the sound made whole (each part's samples as in the whole mix), then only [from, to) of it mixed and
  // measured.
  const trim = span ? `,atrim=start_sample=${span.from}:end_sample=${span.to}` : '';
  const chains = [`${joined}${JOINED_AUDIO},${fitToPicture(plan)}${trim}[amixin]`];
  const stems: Record<string, string[]> = { dialogue: [], music: [], effects: [] };
  let cutSound = '[amixin]';
  if (measure && plan.overlays.length) {
    chains.push('[amixin]asplit=2[amixcut][stemcut]');
    cutSound = '[amixcut]';
    stems.dialogue!.push('[stemcut]');
  }
  let mix = cutSound;
  if (plan.overlays.length) {
    const inMix = plan.overlays.map((o, k) => {
      chains.push(overlayChain(firstOverlay + k, k, o, overlayInputs[k]));
      let label = `[o${k}]`;
      if (span) {
        chains.push(`${label}${trim.slice(1)}[o${k}t]`);
        label = `[o${k}t]`;
      }
      if (!measure) return label;
      chains.push(`${label}asplit=2[o${k}m][o${k}s]`);
      stems[o.role ?? 'dialogue']!.push(`[o${k}s]`);
      return `[o${k}m]`;
    });
    chains.push(
      `${cutSound}${inMix.join('')}amix=inputs=${plan.overlays.length + 1}:duration=first:dropout_transition=0:normalize=0[amixed]`,
    );
    mix = '[amixed]';
    for (const [part, inputs] of Object.entries(stems)) {
      if (inputs.length === 1) chains.push(`${inputs[0]}${loudnessBranch(part)}`);
      else if (inputs.length > 1)
        chains.push(
          `${inputs.join('')}amix=inputs=${inputs.length}:duration=longest:dropout_transition=0:normalize=0,${loudnessBranch(part)}`,
        );
    }
  }
  // The mix's peaks held under the ceiling (the edit's true_peak_db, else DEFAULT_TRUE_PEAK_DB): levelling, gains
  // and a bed can push a mix over 0 dBTP.
  // (A whole dB under it: a limited sine's harmonics come out of AAC 0.7 dB over the limit.)
  const limiter = truePeakLimiter(plan.loudness?.truePeakDb ?? DEFAULT_TRUE_PEAK_DB, 1);
  if (!measure) {
    chains.push(`${mix}${limiter}[alimited]`);
    return { chains, out: '[alimited]' };
  }
  // (Without overlays, the mix is the dialogue: measured once.) Its levels as the cuts bring them, before the limiter
  // (a cut that reaches full scale is flagged); its loudness and true peak as it goes out.
  chains.push(
    `${mix}asplit=2[amixlimit][amixmeasure]`,
    `[amixmeasure]${measureAudio('mixlevels')}`,
    `[amixlimit]${limiter},asplit=3[aout][amixloud][amixpeak]`,
    `[amixloud]${loudnessBranch('mix')}`,
    `[amixpeak]${truePeakBranch}`,
  );
  return { chains, out: '[aout]' };
}

/**
 * A limiter that holds a sound's true peak under `truePeakDb`: at 4x the rate (where the peaks between samples are),
 * delay compensated so that it stays in sync, a little under the ceiling for the encoder's own overshoot (AAC adds a
 * few tenths of a dB to a limited peak). Leaves a sound under the ceiling as it is.
 */
export function truePeakLimiter(truePeakDb: number, marginDb = 0.5): string {
  const limit = Math.min(1, Math.max(0.0625, 10 ** ((truePeakDb - marginDb) / 20)));
  return `aresample=${4 * SAMPLE_RATE},alimiter=limit=${num(limit)}:attack=5:release=50:level=false:latency=true,aresample=${SAMPLE_RATE}`;
}

/**
 * The finishing pass of a loudness target: the picture copied, the sound raised or lowered by `gainDb` and its peaks
 * held under `truePeakDb` by a limiter at 4x the rate (where the peaks between samples are), delay compensated so
 * that it stays in sync; its loudness and true peak measured on what is encoded.
 */
export function finishArgs(job: {
  input: string;
  output: string;
  gainDb: number;
  truePeakDb: number;
  encode: EncodeSettings;
}): string[] {
  const graph =
    `[0:a]volume=${num(job.gainDb)}dB,${truePeakLimiter(job.truePeakDb)},` +
    `asplit=3[aout][aloud][apeak];[aloud]${loudnessBranch('mix')};[apeak]${truePeakBranch}`;
  return [
    ...COMMON,
    '-i',
    `file:${job.input}`,
    '-filter_complex',
    graph,
    '-map',
    '0:v',
    '-map',
    '[aout]',
    '-c:v',
    'copy',
    ...audioEncodeArgs(job.encode),
    ...containerArgs(job.encode),
    job.output,
  ];
}

// An overlay's input is read as far as it plays: from its beginning (its `from` is trimmed off in the graph,
// sample-exact) to its end.
const overlayArgs = (plan: RenderPlan, overlayInputs: InputSpec[]) =>
  plan.overlays.flatMap((o, k) => [
    '-t',
    num((o.fromSec ?? 0) + o.durationSec + 0.1),
    ...inputArgs(overlayInputs[k]!.source),
  ]);

/**
 * One part of a timeline's sound, in timeline order: a cut's rendered segment (its range's sound, 16-bit PCM), or a
 * cut whose segment is not yet made (read from its source by the chain its segment process uses).
 */
export type SoundPart =
  { cut: number; segment: string } | { cut: number; input: InputSpec } | { cut: number; silent: true };

/**
 * The inputs and chains that make the timeline's sound from its parts, each placed in its slot (soundPlan), to
 * `[joined]`; overlays' inputs follow, from the index returned.
 */
function soundFromParts(
  plan: RenderPlan,
  parts: SoundPart[],
  sounds: CutSound[],
  first: number,
  crossfades: number[] = [],
): { args: string[]; chains: string[]; next: number } {
  const args: string[] = [];
  const chains: string[] = [];
  let input = first;
  // A join is crossfaded as in the one-graph render where both its cuts are read from their sources (a segment keeps
  // its range's sound only, no handle beyond it: the caller reads a crossfaded cut from its source).
  const read = (i: number) =>
    !!parts[i] && 'input' in parts[i]! && (i === 0 || parts[i - 1]!.cut === parts[i]!.cut - 1);
  const xfade = parts.map((p, i) => (i > 0 && read(i - 1) && read(i) ? (crossfades[p.cut] ?? 0) : 0));
  const handles = parts.map((_, i) => ({ before: (xfade[i] ?? 0) / 2, after: (xfade[i + 1] ?? 0) / 2 }));
  parts.forEach((part, i) => {
    const cut = plan.cuts[part.cut]!;
    if ('silent' in part) {
      // (Its slot left silent: a span measured apart from it, see mix-memory.ts.)
      chains.push(
        `anullsrc=r=${SAMPLE_RATE}:cl=stereo,aformat=sample_fmts=fltp,atrim=end_sample=${sounds[part.cut]!.slot}[a${i}]`,
      );
      return;
    }
    if ('segment' in part) {
      args.push(...segmentSoundInput(part.segment));
      chains.push(placeChain(`[${input++}:a]${JOINED_AUDIO},`, `a${i}`, cut, sounds[part.cut]!));
      return;
    }
    // Read as the cut's segment process reads its sound (the same seek, so the same samples), made 16-bit as that
    // process stores it: the samples the segment would give.
    const read = decoded(cut, handles[i]!);
    if (part.input.hasAudio) args.push(...cutSoundInputArgs(cut, part.input, read.before));
    chains.push(
      rangeChain(part.input.hasAudio ? input++ : -1, `r${i}`, cut, part.input, read),
      placeChain(
        `[r${i}]aformat=sample_fmts=s16:sample_rates=${SAMPLE_RATE}:channel_layouts=stereo,aformat=sample_fmts=fltp,`,
        `a${i}`,
        cut,
        sounds[part.cut]!,
        handles[i],
      ),
    );
  });
  chains.push(
    joinSlots(
      parts.map((_, i) => `[a${i}]`),
      parts.map((p) => sounds[p.cut]!),
      'joined',
      xfade,
      parts.map((p) => plan.cuts[p.cut]!.equalGainJoin),
    ),
  );
  return { args, chains, next: input };
}

export interface ConcatJob {
  plan: RenderPlan;
  /** A concat list cutroom wrote, naming the segment or chunk files in order, each lasting its picture. */
  listFile: string;
  /**
   * The sound: the chunks' (a concat list of the same files, each lasting its sound: `spans`, joined by
   * joinChunkSounds, equal-gain at the join before chunk i where `equalGain[i]`), or each cut's segment placed in its
   * slot (soundPlan).
   */
  sound:
    | { listFile: string; spans?: ChunkSoundSpan[]; equalGain?: boolean[] }
    | { parts: SoundPart[]; plan: CutSound[]; crossfades?: number[] };
  overlayInputs: InputSpec[];
  output: string;
  encode: EncodeSettings;
  measure: boolean;
}

/** Joins chunks or segments (video copied, PCM audio sample-exact) and lays the overlays over the whole timeline. */
export function concatArgs(job: ConcatJob): string[] {
  const { plan } = job;
  const args = [...COMMON, ...concatInput(job.listFile)];
  const g: string[] = [];
  let joined = '[1:a]';
  let next = 2;
  if ('listFile' in job.sound) {
    args.push(...concatInput(job.sound.listFile));
    if (job.sound.spans) {
      g.push(joinChunkSounds('[1:a]', job.sound.spans, job.sound.equalGain ?? [], 'chunked'));
      joined = '[chunked]';
    }
  } else {
    const made = soundFromParts(plan, job.sound.parts, job.sound.plan, 1, job.sound.crossfades);
    args.push(...made.args);
    g.push(...made.chains);
    joined = '[joined]';
    next = made.next;
  }
  args.push(...overlayArgs(plan, job.overlayInputs));
  const { chains, out } = mixGraph(plan, joined, job.overlayInputs, next, job.measure);
  // The video was encoded by the chunk processes with the same settings: copy it.
  args.push(
    '-filter_complex',
    [...g, ...chains].join(';'),
    '-map',
    '0:v',
    '-map',
    out,
    '-c:v',
    'copy',
    ...audioEncodeArgs(job.encode),
    ...containerArgs(job.encode),
    job.output,
  );
  return args;
}

export interface SoundJob {
  plan: RenderPlan;
  parts: SoundPart[];
  /** Where each cut's sound goes (soundPlan of the whole timeline). */
  sounds: CutSound[];
  /** Its joins' crossfades (crossfadeJoins), made where both cuts are read from their sources. */
  crossfades?: number[];
  overlayInputs: InputSpec[];
  /** Encoded (AAC, the sound of `encode`) to this mp4; none: measured only. */
  output?: { file: string; encode: EncodeSettings };
  /** Measured only: just these samples of the timeline (see mix-memory.ts), on 100 ms window bounds. */
  span?: SampleSpan;
}

/** Samples [from, to) of a timeline's sound. */
export interface SampleSpan {
  from: number;
  to: number;
}

/**
 * The timeline's sound alone, from the segments (or a cut's source, by the chain its segment process uses, so the
 * samples are those its segment holds): measured (mixGraph's measurements), beside the join that encodes the same
 * sound; or, while a changed cut still renders, encoded (the pictures are then joined to it by muxSoundArgs).
 */
export function soundArgs(job: SoundJob): string[] {
  const { plan } = job;
  const made = soundFromParts(plan, job.parts, job.sounds, 0, job.crossfades);
  const args = [...COMMON, ...made.args, ...overlayArgs(plan, job.overlayInputs)];
  const { chains, out } = mixGraph(
    plan,
    '[joined]',
    job.overlayInputs,
    made.next,
    !job.output,
    job.output ? undefined : job.span,
  );
  const output = job.output
    ? [...audioEncodeArgs(job.output.encode), '-f', 'mp4', job.output.file]
    : ['-c:a', 'pcm_f32le', '-f', 'null', '-'];
  args.push('-filter_complex', [...made.chains, ...chains].join(';'), '-map', out, ...output);
  return args;
}

/** The segments' pictures joined by stream copy, with the sound soundArgs encoded (copied): the preview's file. */
export function muxSoundArgs(job: { listFile: string; sound: string; output: string }): string[] {
  return [
    ...COMMON,
    ...concatInput(job.listFile),
    '-f',
    'mp4',
    '-i',
    `file:${job.sound}`,
    '-map',
    '0:v',
    '-map',
    '1:a',
    '-c',
    'copy',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    job.output,
  ];
}

/**
 * The loudness of cuts' own sound, for levelling: each cut's range as it plays (its level windows applied, not its
 * gain), measured in blocks printed under loud_cut<index in the plan> (MeasureParser; integratedLoudness gates them).
 * Sound only: no picture is decoded.
 */
export function cutLoudnessArgs(plan: RenderPlan, cuts: number[], specs: InputSpec[]): string[] {
  const args = [...COMMON];
  const g: string[] = [];
  const maps: string[] = [];
  let input = 0;
  cuts.forEach((c, k) => {
    const cut = plan.cuts[c]!;
    const spec = specs[k]!;
    if (!spec.hasAudio) return;
    args.push(...cutSoundInputArgs(cut, spec));
    g.push(
      rangeChain(input++, `r${k}`, { ...cut, gainDb: undefined }, spec),
      `[r${k}]asetnsamples=n=${SAMPLE_RATE / 10}:p=0,ebur128=metadata=1,ametadata@loud_cut${c}=mode=print:key=lavfi.r128.M[l${k}]`,
    );
    maps.push('-map', `[l${k}]`);
  });
  if (!maps.length) return [];
  return [...args, '-filter_complex', g.join(';'), ...maps, '-f', 'null', '-'];
}

/** Frames compared at each end of a cut for a flash frame (see edgeDiffs). */
export const EDGE_FRAMES = 3;

/**
 * The mean luma difference (0-255, at 64 px) between neighbouring frames among a cut's first and last EDGE_FRAMES,
 * printed under ed_k in order: [first->second, second->third, third->last-2, last-2->last-1, last-1->last]. A first
 * or last frame far from its neighbour while that neighbour is close to the next is a flash frame in the source.
 */
const edgeDiffs = (k: number, frames: number) =>
  `select='lt(n\\,${EDGE_FRAMES})+gte(n\\,${frames - EDGE_FRAMES})',scale=64:36:flags=area,format=gray,tblend=all_mode=difference,signalstats,${print(`ed_${k}`, 'signalstats.YAVG')},nullsink`;

export interface SegmentsJob {
  plan: RenderPlan;
  /** Which cuts of the plan to render, each to its own file. */
  cuts: number[];
  cutInputs: InputSpec[];
  /** Per cut (same order): the segment file, and the pattern its thumbnails are written to (relative to the cwd). */
  outputs: { file: string; thumbs: string; thumbFrames: number[] }[];
  /** PCM audio in a container that keeps exact frame times (see EncodeSettings). */
  encode: EncodeSettings;
  /** Width of the thumbnails (unlabelled; labels depend on where the cut lands on a timeline). */
  thumbWidth: number;
  /**
   * One thread for the decoders, the encoders and the filter graph: right when as many such processes run side by
   * side as there are cores (each would otherwise start threads for every core, and they contend).
   */
  oneThread?: boolean;
  /** Caption scripts (in the process's working directory) by cut index, for the cuts that show captions. */
  captionFiles?: Map<number, string>;
  /**
   * By cut index: a clip to write beside its segment (mp4, AAC: what a browser plays). Its name and the segment's
   * must be plain names in the working directory (the tee muxer parses them).
   */
  clips?: Map<number, string>;
}

/**
 * One process that renders several cuts, each to a file of its own (its picture and sound exactly as the one-graph
 * timeline would make them), with its measurements printed under names carrying its place in `cuts`
 * (cutlevels_k; vb_k, ve_k, fs_k, fe_k: black and frozen spans) and its sheet frames written as thumbnails.
 */
export function segmentsArgs(job: SegmentsJob): string[] {
  const { plan } = job;
  const one = job.oneThread ? ['-threads', '1'] : [];
  const args = [...COMMON, ...(job.oneThread ? ['-filter_complex_threads', '1'] : [])];
  const inputs = cutInputsOf(
    job.cuts.map((c) => plan.cuts[c]!),
    plan,
    job.cutInputs,
    0,
    one,
  );
  args.push(...inputs.args);
  const g: string[] = [];
  const outs: string[] = [];
  job.cuts.forEach((c, k) => {
    const cut = plan.cuts[c]!;
    const spec = job.cutInputs[k]!;
    const { file, thumbs, thumbFrames } = job.outputs[k]!;
    const edges = cut.frames >= 2 * EDGE_FRAMES;
    g.push(
      `[${inputs.picture[k]}:v]${videoChain(cut, plan, spec, job.encode.scaleFlags, job.captionFiles?.get(cut.index))},split=${edges ? 4 : 3}[vo${k}][vm${k}][vs${k}]${edges ? `[ve${k}]` : ''}`,
    );
    g.push(`[vm${k}]${measureCutVideo(k)}`);
    if (edges) g.push(`[ve${k}]${edgeDiffs(k, cut.frames)}`);
    g.push(
      `[vs${k}]select='${thumbFrames.map((f) => `eq(n\\,${f})`).join('+') || '0'}',scale=${job.thumbWidth}:-2,setpts=N/FRAME_RATE/TB[th${k}]`,
    );
    // Its range's sound, whole: where it plays on a timeline is decided where the segments are joined (soundPlan).
    g.push(rangeChain(inputs.sound[k]!, `a${k}`, cut, spec));
    // Its loudness too (loud_seg_k), for levelling: no pass over the sources before the segments.
    const clip = job.clips?.get(c);
    g.push(
      `[a${k}]asplit=${clip ? 4 : 3}[ao${k}][am${k}][al${k}]${clip ? `[ac${k}]` : ''}`,
      `[am${k}]${measureAudio(`cutlevels_${k}`)}`,
      `[al${k}]${loudnessBranch(`seg_${k}`)}`,
    );
    if (clip) {
      // Its clip too, for a person to watch at once: the same encoded picture (the tee muxer writes it to both
      // files), its sound as AAC from the cut's first frame for as long as its picture.
      const samples = Math.round((cut.frames * plan.fpsDen * SAMPLE_RATE) / plan.fpsNum);
      g.push(`[ac${k}]atrim=end_sample=${samples}[acc${k}]`);
      outs.push(
        '-map',
        `[vo${k}]`,
        '-map',
        `[ao${k}]`,
        '-map',
        `[acc${k}]`,
        ...videoEncodeArgs(job.encode, plan),
        '-c:a:0',
        'pcm_s16le',
        ...aacArgs(job.encode, ':a:1'),
        '-ar',
        String(SAMPLE_RATE),
        '-ac',
        '2',
        ...one,
      );
      outs.push(
        '-f',
        'tee',
        `[f=nut:select=\\'v:0,a:0\\']${file}|[f=mp4:movflags=+faststart:select=\\'v:0,a:1\\']${clip}`,
      );
    } else outs.push('-map', `[vo${k}]`, '-map', `[ao${k}]`, ...encodeArgs(job.encode, plan), ...one, file);
    outs.push('-map', `[th${k}]`, '-f', 'image2', '-start_number', '0', '-c:v', 'png', thumbs);
  });
  args.push('-filter_complex', g.join(';'), ...outs);
  return args;
}
