// A render plan -> one ffmpeg argument list with one filter graph (DESIGN.md): input seeking per cut, per-branch
// normalisation, explicit trims and pads instead of -shortest, amix with normalize=0. Every number placed in the
// graph is one cutroom computed; every input is an asset source or a file cutroom wrote.
import type { PlanCut, PlanLevel, PlanOverlay, RenderPlan } from '../edit/plan.js';
import { DEMUXERS, inputArgs, type MediaSource } from './input.js';

export interface InputSpec {
  source: MediaSource;
  hasAudio: boolean;
  /** Display size, when measured: a source of the output's shape is scaled without padding. */
  width?: number;
  height?: number;
}

export interface EncodeSettings {
  /** libx264 preset and quality. */
  preset: string;
  crf: number;
  /** aac for delivery; pcm for intermediate chunks, which must join sample-exact. */
  audio: 'aac' | 'pcm';
  audioBitrate?: string;
  container: 'mp4' | 'matroska';
}

export const SAMPLE_RATE = 48_000;

/** Fixed-point text for the graph: never exponent notation, never more digits than needed. */
export const num = (n: number): string => {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  return n.toFixed(6).replace(/\.?0+$/, '') || '0';
};

/** volume='…' expression: the level of the first window containing t (plus an offset), else 1. */
export function envelope(levels: PlanLevel[], offsetSec = 0): string | undefined {
  if (!levels.length) return undefined;
  const t = offsetSec ? `(t+${num(offsetSec)})` : 't';
  let expr = '1';
  for (const l of [...levels].reverse()) expr = `if(between(${t},${num(l.from)},${num(l.to)}),${num(l.level)},${expr})`;
  return `volume='${expr}':eval=frame`;
}

const AUDIO_NORMALISE = `aresample=${SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=stereo,asetpts=PTS-STARTPTS`;

function videoChain(cut: PlanCut, plan: RenderPlan, spec: InputSpec): string {
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
      `scale=${sw}:${sh}:force_original_aspect_ratio=increase,` +
      `crop=w='min(iw,${W})':h='min(ih,${H})':x='(iw-min(iw,${W}))*${fx}':y='(ih-min(ih,${H}))*${fy}',` +
      `pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2:color=black`;
  } else if (spec.width && spec.height && Math.abs(spec.width / spec.height - W / H) < 0.002) {
    // Already the output's shape: no bars to add, so no padding pass over every frame.
    frame = `scale=${W}:${H}`;
  } else {
    frame = `scale=${W}:${H}:force_original_aspect_ratio=decrease:force_divisible_by=2,pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2:color=black`;
  }
  // fps first gives frames on the output's ticks; tpad clones the last frame if the source runs short; trim
  // keeps exactly the planned frame count.
  return `setpts=PTS-STARTPTS,${frame},setsar=1,fps=${rate},tpad=stop_mode=clone:stop_duration=${num(cut.durationSec + 1)},trim=end_frame=${cut.frames},setpts=PTS-STARTPTS,format=yuv420p`;
}

function cutAudioChain(i: number, cut: PlanCut, spec: InputSpec): string {
  const vol = envelope(cut.levels);
  const trim = `apad,atrim=end_sample=${Math.round(cut.durationSec * SAMPLE_RATE)},asetpts=PTS-STARTPTS`;
  if (!spec.hasAudio) return `anullsrc=r=${SAMPLE_RATE}:cl=stereo,${trim}[a${i}]`;
  return `[${i}:a]${AUDIO_NORMALISE},${vol ? `${vol},` : ''}${trim}[a${i}]`;
}

function overlayChain(inputIndex: number, k: number, o: PlanOverlay): string {
  const vol = envelope(o.levels);
  const delayMs = Math.round(o.startSec * 1000);
  return `[${inputIndex}:a]${AUDIO_NORMALISE},apad,atrim=end_sample=${Math.round(o.durationSec * SAMPLE_RATE)},${vol ? `${vol},` : ''}adelay=delays=${delayMs}:all=1[o${k}]`;
}

/** Audio measurement every 100 ms, printed to stderr under the given filter name (see measure.ts). */
const measureAudio = (name: string) =>
  `asetnsamples=n=${SAMPLE_RATE / 10}:p=0,astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=RMS_level+Peak_level,ametadata@${name}=mode=print,anullsink`;
// Black and frozen spans are judged in tenths of a second: 10 fps at 160 px is plenty, and nearly free.
const measureVideo = 'fps=10,scale=160:-2:flags=fast_bilinear,blackdetect@black=d=0.1:pix_th=0.10,freezedetect@freeze=n=-60dB:d=0.5,nullsink';

function encodeArgs(e: EncodeSettings, plan: RenderPlan): string[] {
  const audio = e.audio === 'aac' ? ['-c:a', 'aac', '-b:a', e.audioBitrate ?? '128k'] : ['-c:a', 'pcm_s16le'];
  const container = e.container === 'mp4' ? ['-movflags', '+faststart', '-f', 'mp4'] : ['-f', 'matroska'];
  return ['-c:v', 'libx264', '-preset', e.preset, '-crf', String(e.crf), '-pix_fmt', 'yuv420p', '-r', `${plan.fpsNum}/${plan.fpsDen}`, ...audio, '-ar', String(SAMPLE_RATE), '-ac', '2', ...container];
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
  plan.cuts.forEach((cut, i) => {
    const src = inputArgs(job.cutInputs[i]!.source);
    // -ss/-t before -i: the input is seeked, so the cost follows the output's length, not the source's.
    // Two frames of margin: the chain pads a short source itself, so reading further only costs decoding.
    args.push('-ss', num(cut.inSec), '-t', num(cut.durationSec + (2 * plan.fpsDen) / plan.fpsNum), ...src);
  });
  plan.overlays.forEach((o, k) => args.push('-t', num(o.durationSec + 0.1), ...inputArgs(job.overlayInputs[k]!.source)));

  const g: string[] = [];
  plan.cuts.forEach((cut, i) => {
    g.push(`[${i}:v]${videoChain(cut, plan, job.cutInputs[i]!)}[v${i}]`);
    g.push(cutAudioChain(i, cut, job.cutInputs[i]!));
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
    plan.overlays.forEach((o, k) => g.push(overlayChain(n + k, k, o)));
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

/** Joins chunks (video copied, PCM audio sample-exact) and lays the overlays over the whole timeline. */
export function concatArgs(job: ConcatJob): string[] {
  const { plan } = job;
  const args = [...COMMON, '-f', 'concat', '-safe', '0', '-protocol_whitelist', 'file', '-format_whitelist', `concat,${DEMUXERS}`, '-i', `file:${job.listFile}`];
  plan.overlays.forEach((o, k) => args.push('-t', num(o.durationSec + 0.1), ...inputArgs(job.overlayInputs[k]!.source)));
  const g: string[] = [`[0:a]${AUDIO_NORMALISE},atrim=end_sample=${Math.round(plan.totalSec * SAMPLE_RATE)}[acat]`];
  let mix = '[acat]';
  if (plan.overlays.length) {
    plan.overlays.forEach((o, k) => g.push(overlayChain(1 + k, k, o)));
    g.push(`[acat]${plan.overlays.map((_, k) => `[o${k}]`).join('')}amix=inputs=${plan.overlays.length + 1}:duration=first:dropout_transition=0:normalize=0[amixed]`);
    mix = '[amixed]';
  }
  let audioOut = mix;
  if (job.measure) {
    g.push(`${mix}asplit=2[aout][amixmeasure]`, `[amixmeasure]${measureAudio('mixlevels')}`);
    audioOut = '[aout]';
  }
  const enc = encodeArgs(job.encode, plan);
  // The video was encoded by the chunk processes with the same settings: copy it.
  const audioEnc = enc.slice(enc.indexOf('-c:a'));
  args.push('-filter_complex', g.join(';'), '-map', '0:v', '-map', audioOut, '-c:v', 'copy', ...audioEnc, job.output);
  return args;
}
