// A render plan -> one ffmpeg argument list with one filter graph (DESIGN.md): input seeking per cut, per-branch
// normalisation, explicit trims and pads instead of -shortest, amix with normalize=0. Every number placed in the
// graph is one cutroom computed; every input is an asset source or a file cutroom wrote.
import type { MediaFacts } from '../edit/lint.js';
import { DUCK_ATTACK, DUCK_RELEASE, type PlanCut, type PlanLevel, type PlanOverlay, type RenderPlan, type Span } from '../edit/plan.js';
import { DEMUXERS, inputArgs, type MediaSource } from './input.js';
import { cutClock } from '../edit/cut-clock.js';

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

export const SAMPLE_RATE = 48_000;

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
  for (const l of [...levels].reverse()) expr = `if(between(${t},${num(l.from - half)},${num(l.to - half)}),${num(l.level)},${expr})`;
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

/** Scale expressions that fit (or cover) a w x h box with the source's display shape (dar: stored size times SAR), even sides. */
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
export function cutSpan(cut: Pick<PlanCut, 'inSec' | 'durationSec'>, spec: Pick<InputSpec, 'frameRate' | 'videoStartSec' | 'videoTimeBase'>): number {
  return cut.inSec + cut.durationSec - cutClock(cut, spec).inSec;
}

/**
 * Which source frames a cut's picture may show, on its own clock (0 = the moved in point): frames stored before
 * `keepBeforeSec` (its range less the slack, and never nothing). Output tick k then shows the latest of them stored
 * at or before k / fps + FRAME_TIME_SLACK, the first one before that, and the last one held after the last.
 */
export function cutPictureWindow(cut: Pick<PlanCut, 'inSec' | 'durationSec'>, spec: Pick<InputSpec, 'frameRate' | 'videoStartSec' | 'videoTimeBase'>): { keepBeforeSec: number } {
  return { keepBeforeSec: Math.max(0.001, cutSpan(cut, spec) - FRAME_TIME_SLACK) };
}

function videoChain(cut: PlanCut, plan: RenderPlan, spec: InputSpec, scaleFlags?: string): string {
  const { width: W, height: H } = plan;
  const rate = `${plan.fpsNum}/${plan.fpsDen}`;
  let frame: string;
  if (cut.crop) {
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
    `tpad=stop_mode=clone:stop_duration=${num(cut.durationSec + 1)},trim=end_frame=${cut.frames},setpts=PTS-STARTPTS,format=yuv420p`
  );
}

/**
 * Samples of a cut's sound: as long as its frames, so that the concat filter (which starts every segment after
 * the longer of its streams) never shifts the next cut's sound off its first frame, and the sound of a timeline
 * lasts what its picture does. Without the rate, the cut's planned length.
 */
export function cutSamples(cut: Pick<PlanCut, 'frames' | 'durationSec'>, rate?: Pick<RenderPlan, 'fpsNum' | 'fpsDen'>): number {
  return rate ? Math.round((cut.frames * rate.fpsDen * SAMPLE_RATE) / rate.fpsNum) : Math.round(cut.durationSec * SAMPLE_RATE);
}

/**
 * Samples of a cut's source sound that play: from its clock's start to its out point at most (no tail of what follows
 * in the source where its frames outrun its range: silence fills the rest of its length).
 */
export function heardSamples(cut: Pick<PlanCut, 'inSec' | 'durationSec' | 'frames'>, spec: Pick<InputSpec, 'frameRate' | 'videoStartSec' | 'videoTimeBase'>, rate?: Pick<RenderPlan, 'fpsNum' | 'fpsDen'>): number {
  return Math.min(cutSamples(cut, rate), Math.max(1, Math.floor(cutSpan(cut, spec) * SAMPLE_RATE + 1e-6)));
}

function cutAudioChain(i: number, cut: PlanCut, spec: InputSpec, rate?: Pick<RenderPlan, 'fpsNum' | 'fpsDen'>): string {
  const samples = cutSamples(cut, rate);
  const trim = `atrim=end_sample=${samples},asetpts=PTS-STARTPTS`;
  if (!spec.hasAudio) return `anullsrc=r=${SAMPLE_RATE}:cl=stereo,${trim}[a${i}]`;
  const clock = cutClock(cut, spec);
  // The source's sound plays inside the cut's range only, with its fades on the edges of what plays.
  const heard = heardSamples(cut, spec, rate);
  // Level windows are on the source clock, whole milliseconds from the planned in point; the stream starts at the
  // moved one. The stream is put `early` samples later (silence before it, trimmed after the envelope), so that the
  // 1 ms frames of the envelope start on the windows' milliseconds.
  const shift = Math.round((clock.inSec - cut.inSec) * SAMPLE_RATE);
  // One level over all of the cut's sound (from the moved in point to the out point at most) is one
  // multiplication: no 1 ms frames, no shift.
  const steady = steadyLevel(cut.levels, (shift + heard) / SAMPLE_RATE);
  const early = cut.levels.length && steady === undefined ? ((shift % LEVEL_FRAME) + LEVEL_FRAME) % LEVEL_FRAME : 0;
  const vol = steady === undefined ? envelope(cut.levels, (shift - early) / SAMPLE_RATE) : undefined;
  const level = steady !== undefined ? `volume=${num(steady)},` : vol ? `${vol},atrim=start_sample=${early},asetpts=PTS-STARTPTS,` : '';
  // Silence follows the sound, then the cut's length is kept: concat rather than apad, which fails on a stream
  // that brings no sample at all (a cut that ends before its source's sound begins).
  return `[${i}:a]${audioNormalise(spec, -early / SAMPLE_RATE)},${level}${mixFilters(cut, heard)}${edgeFades(heard, cut.fadeSec)}[s${i}];anullsrc=r=${SAMPLE_RATE}:cl=stereo[z${i}];[s${i}][z${i}]concat=n=2:v=0:a=1,${trim}[a${i}]`;
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

function overlayChain(inputIndex: number, k: number, o: PlanOverlay, spec: Pick<InputSpec, 'audioChannels'> = {}): string {
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
  const term = (s: Span) => `min(${ramp(`(t-${num(s.from - DUCK_ATTACK)})/${num(DUCK_ATTACK)}`)},${ramp(`(${num(s.to + DUCK_RELEASE)}-t)/${num(DUCK_RELEASE)}`)})`;
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

/** Audio measurement every 100 ms, printed to stderr under the given filter name (see measure.ts). */
const measureAudio = (name: string) =>
  `asetnsamples=n=${SAMPLE_RATE / 10}:p=0,astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=RMS_level+Peak_level,ametadata@${name}=mode=print,anullsink`;
// Black and frozen spans are judged in tenths of a second: 10 fps at 160 px is plenty, and nearly free.
const BLACK = 'd=0.1:pix_th=0.10';
const FREEZE = 'n=-60dB:d=0.5';
const measureVideo = `fps=10,scale=160:-2:flags=fast_bilinear,blackdetect@black=${BLACK},freezedetect@freeze=${FREEZE},nullsink`;
/**
 * The same judgement for one of several cuts in a process: the detectors' own log lines do not say which cut they
 * are about, so their frame metadata is printed under names that do (black/freeze start and end, cut k).
 */
const print = (name: string, key: string) => `metadata@${name}=mode=print:key=lavfi.${key}`;
const measureCutVideo = (k: number) =>
  `fps=10,scale=160:-2:flags=fast_bilinear,blackdetect=${BLACK},${print(`vb_${k}`, 'black_start')},${print(`ve_${k}`, 'black_end')},` +
  `freezedetect=${FREEZE},${print(`fs_${k}`, 'freezedetect.freeze_start')},${print(`fe_${k}`, 'freezedetect.freeze_end')},nullsink`;

/** The sound's encoder options of these settings. */
function audioEncodeArgs(e: EncodeSettings): string[] {
  const codec = e.audio === 'aac' ? ['-c:a', 'aac', ...(e.aacCoder ? ['-aac_coder', e.aacCoder] : []), '-b:a', e.audioBitrate ?? '128k'] : ['-c:a', 'pcm_s16le'];
  return [...codec, '-ar', String(SAMPLE_RATE), '-ac', '2'];
}

const containerArgs = (e: EncodeSettings) => (e.container === 'mp4' ? ['-movflags', '+faststart', '-f', 'mp4'] : ['-f', e.container]);

function encodeArgs(e: EncodeSettings, plan: RenderPlan): string[] {
  return ['-c:v', 'libx264', '-preset', e.preset, '-crf', String(e.crf), '-pix_fmt', 'yuv420p', '-r', `${plan.fpsNum}/${plan.fpsDen}`, ...audioEncodeArgs(e), ...containerArgs(e)];
}

/**
 * A cut's source as an input, seeked: -ss/-t before -i, so the cost follows the cut's length, not the source's. Two
 * frames of margin: the chain pads a short source itself, so reading further only costs decoding. Every process that
 * reads a cut reads it by this, so that they decode the same samples.
 */
function cutInputArgs(cut: PlanCut, plan: RenderPlan, spec: InputSpec): string[] {
  return ['-ss', num(cutClock(cut, spec).seekSec), '-t', num(cut.durationSec + (2 * plan.fpsDen) / plan.fpsNum), ...inputArgs(spec.source)];
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
}

/** One process for the whole timeline (or one chunk of it, with no overlays). */
export function timelineArgs(job: TimelineJob): string[] {
  const { plan } = job;
  const args = [...COMMON];
  plan.cuts.forEach((cut, i) => args.push(...cutInputArgs(cut, plan, job.cutInputs[i]!)));
  args.push(...overlayArgs(plan, job.overlayInputs));

  const g: string[] = [];
  plan.cuts.forEach((cut, i) => {
    g.push(`[${i}:v]${videoChain(cut, plan, job.cutInputs[i]!, job.encode.scaleFlags)}[v${i}]`);
    g.push(cutAudioChain(i, cut, job.cutInputs[i]!, plan));
  });
  const n = plan.cuts.length;
  g.push(`${plan.cuts.map((_, i) => `[v${i}][a${i}]`).join('')}concat=n=${n}:v=1:a=1[vcat][acat]`);
  const branches = ['[vout]', ...(job.measure ? ['[vmeasure]'] : []), ...(job.sheet ? ['[vsheet]'] : [])];
  const videoOut = branches.length > 1 ? '[vout]' : '[vcat]';
  if (branches.length > 1) g.push(`[vcat]split=${branches.length}${branches.join('')}`);
  if (job.measure) g.push(`[vmeasure]${measureVideo}`);
  if (job.sheet) g.push(`[vsheet]${job.sheet.filter}[sheet]`);
  let mix = '[acat]';
  if (job.measure) {
    g.push('[acat]asplit=2[acut][acutmeasure]', `[acutmeasure]${measureAudio('cutlevels')}`);
    mix = '[acut]';
  }
  if (plan.overlays.length) {
    plan.overlays.forEach((o, k) => g.push(overlayChain(n + k, k, o, job.overlayInputs[k])));
    g.push(`${mix}${plan.overlays.map((_, k) => `[o${k}]`).join('')}amix=inputs=${plan.overlays.length + 1}:duration=first:dropout_transition=0:normalize=0[amixed]`);
    mix = '[amixed]';
  }
  let audioOut = mix;
  if (job.measure) {
    g.push(`${mix}asplit=2[aout][amixmeasure]`, `[amixmeasure]${measureAudio('mixlevels')}`);
    audioOut = '[aout]';
  }
  args.push('-filter_complex', g.join(';'), '-map', videoOut, '-map', audioOut, ...encodeArgs(job.encode, plan), job.output);
  if (job.sheet) args.push('-map', '[sheet]', ...job.sheet.outputArgs);
  return args;
}

export interface ConcatJob {
  plan: RenderPlan;
  /** A concat list cutroom wrote, naming the chunk files in order. */
  listFile: string;
  overlayInputs: InputSpec[];
  output: string;
  encode: EncodeSettings;
  measure: boolean;
}

/** A concat list of segment or chunk files as ffmpeg's input (local files only, of the containers cutroom writes). */
const concatInput = (listFile: string) => ['-f', 'concat', '-safe', '0', '-protocol_whitelist', 'file', '-format_whitelist', `concat,nut,${DEMUXERS}`, '-i', `file:${listFile}`];

/**
 * The timeline's sound from `joined` (the cuts' sound end to end, 48 kHz stereo from 0) and the overlays (inputs from
 * `firstOverlay` on): their mix, measured when asked. Returns the graph's chains and the label to encode.
 */
function mixGraph(plan: RenderPlan, joined: string, overlayInputs: InputSpec[], firstOverlay: number, measure: boolean): { chains: string[]; out: string } {
  const chains = [`${joined}${JOINED_AUDIO},atrim=end_sample=${cutSamples({ frames: plan.totalFrames, durationSec: plan.totalSec }, plan)}[acat]`];
  let mix = '[acat]';
  if (plan.overlays.length) {
    plan.overlays.forEach((o, k) => chains.push(overlayChain(firstOverlay + k, k, o, overlayInputs[k])));
    chains.push(`[acat]${plan.overlays.map((_, k) => `[o${k}]`).join('')}amix=inputs=${plan.overlays.length + 1}:duration=first:dropout_transition=0:normalize=0[amixed]`);
    mix = '[amixed]';
  }
  if (!measure) return { chains, out: mix };
  chains.push(`${mix}asplit=2[aout][amixmeasure]`, `[amixmeasure]${measureAudio('mixlevels')}`);
  return { chains, out: '[aout]' };
}

// An overlay's input is read as far as it plays: from its beginning (its `from` is trimmed off in the graph,
// sample-exact) to its end.
const overlayArgs = (plan: RenderPlan, overlayInputs: InputSpec[]) => plan.overlays.flatMap((o, k) => ['-t', num((o.fromSec ?? 0) + o.durationSec + 0.1), ...inputArgs(overlayInputs[k]!.source)]);

/** Joins chunks (video copied, PCM audio sample-exact) and lays the overlays over the whole timeline. */
export function concatArgs(job: ConcatJob): string[] {
  const { plan } = job;
  const args = [...COMMON, ...concatInput(job.listFile), ...overlayArgs(plan, job.overlayInputs)];
  const { chains, out } = mixGraph(plan, '[0:a]', job.overlayInputs, 1, job.measure);
  // The video was encoded by the chunk processes with the same settings: copy it.
  args.push('-filter_complex', chains.join(';'), '-map', '0:v', '-map', out, '-c:v', 'copy', ...audioEncodeArgs(job.encode), ...containerArgs(job.encode), job.output);
  return args;
}

/** One part of a timeline's sound, in timeline order: a run of rendered segments, or a cut whose segment is not yet made. */
export type SoundPart = { listFile: string } | { cut: number; input: InputSpec };

export interface SoundJob {
  plan: RenderPlan;
  parts: SoundPart[];
  overlayInputs: InputSpec[];
  /** An mp4 holding the encoded sound alone. */
  output: string;
  /** AAC settings (the sound of `encode`). */
  encode: EncodeSettings;
}

/**
 * The timeline's sound alone, encoded and measured, while the segments still missing are rendered: their sound is
 * taken from their sources by the chain their segment process uses, made 16-bit as that process stores it, so the
 * samples are those the join of the segments would read (the picture is then joined to it by muxSoundArgs).
 */
export function soundArgs(job: SoundJob): string[] {
  const { plan } = job;
  const args = [...COMMON];
  const g: string[] = [];
  const labels: string[] = [];
  job.parts.forEach((part, i) => {
    if ('listFile' in part) {
      args.push(...concatInput(part.listFile));
      labels.push(`[${i}:a]`);
      return;
    }
    const cut = plan.cuts[part.cut]!;
    // Read as the cut's segment process reads it: the same seek, so the same samples.
    args.push(...cutInputArgs(cut, plan, part.input));
    g.push(cutAudioChain(i, cut, part.input, plan), `[a${i}]aformat=sample_fmts=s16:sample_rates=${SAMPLE_RATE}:channel_layouts=stereo[p${i}]`);
    labels.push(`[p${i}]`);
  });
  args.push(...overlayArgs(plan, job.overlayInputs));
  const joined = labels.length > 1 ? '[joined]' : labels[0]!;
  if (labels.length > 1) g.push(`${labels.join('')}concat=n=${labels.length}:v=0:a=1[joined]`);
  const { chains, out } = mixGraph(plan, joined, job.overlayInputs, job.parts.length, true);
  args.push('-filter_complex', [...g, ...chains].join(';'), '-map', out, ...audioEncodeArgs(job.encode), '-f', 'mp4', job.output);
  return args;
}

/** The segments' pictures joined by stream copy, with the sound soundArgs made (copied): the preview's file. */
export function muxSoundArgs(job: { listFile: string; sound: string; output: string }): string[] {
  return [...COMMON, ...concatInput(job.listFile), '-f', 'mp4', '-i', `file:${job.sound}`, '-map', '0:v', '-map', '1:a', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', job.output];
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
  job.cuts.forEach((c, k) => {
    const cut = plan.cuts[c]!;
    args.push(...one, ...cutInputArgs(cut, plan, job.cutInputs[k]!));
  });
  const g: string[] = [];
  const outs: string[] = [];
  job.cuts.forEach((c, k) => {
    const cut = plan.cuts[c]!;
    const spec = job.cutInputs[k]!;
    const { file, thumbs, thumbFrames } = job.outputs[k]!;
    const edges = cut.frames >= 2 * EDGE_FRAMES;
    g.push(`[${k}:v]${videoChain(cut, plan, spec, job.encode.scaleFlags)},split=${edges ? 4 : 3}[vo${k}][vm${k}][vs${k}]${edges ? `[ve${k}]` : ''}`);
    g.push(`[vm${k}]${measureCutVideo(k)}`);
    if (edges) g.push(`[ve${k}]${edgeDiffs(k, cut.frames)}`);
    g.push(`[vs${k}]select='${thumbFrames.map((f) => `eq(n\\,${f})`).join('+') || '0'}',scale=${job.thumbWidth}:-2,setpts=N/FRAME_RATE/TB[th${k}]`);
    g.push(cutAudioChain(k, cut, spec, plan));
    g.push(`[a${k}]asplit=2[ao${k}][am${k}]`, `[am${k}]${measureAudio(`cutlevels_${k}`)}`);
    outs.push('-map', `[vo${k}]`, '-map', `[ao${k}]`, ...encodeArgs(job.encode, plan), ...one, file);
    outs.push('-map', `[th${k}]`, '-f', 'image2', '-start_number', '0', '-c:v', 'png', thumbs);
  });
  args.push('-filter_complex', g.join(';'), ...outs);
  return args;
}
