// Seeing inside a source: hard cuts to the frame, silences and a coarse loudness curve.
//
// Hard cuts are placed by ffmpeg's own scdet filter (threshold SCENE_THRESHOLD) on full-size frames, so they equal a
// full-decode scdet pass; what is saved is the decoding of stretches where nothing changed:
//   1. the demuxer's packet list (no decoding): every frame's time and size, and which are keyframes;
//   2. pass 1 decodes only keyframes, tiny (64x36 yuv420p), and compares neighbours with scdet's own measure
//      (mean absolute difference over all planes, in percent);
//   3. a GOP is a candidate when its two keyframes differ, or when one of its packets is an outlier in size (a hard cut
//      inside a GOP makes an encoder spend bits: this catches a cut-and-back between similar keyframes);
//   4. the candidate GOPs are decoded fully (seek to the keyframe, up to the next keyframe inclusive), contiguous ones
//      as one run, several runs per ffmpeg process, and scdet places the cut on its frame.
// scdet scores a frame by its difference to the previous frame minus the previous frame's own difference, so a run's
// second frame lacks context; a cut found there is confirmed by decoding the run again from one keyframe earlier.
// Sources whose keyframes are too sparse to help, or whose candidates cover most of the file, get one full pass.
// Gradual transitions (fades, dissolves) are not hard cuts and are not found.
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm } from 'node:fs/promises';
import { writeFileAtomic } from './inspect-cache.js';
export { mafd } from './inspect-locate.js';
import { splitJpegs } from './jpeg.js';
import type { Limiter } from './probe.js';
import { inputArgs, type MediaSource } from './input.js';
import type { FramePacket, Run } from './inspect-frames.js';
import {
  LOCATE_SHARE,
  hasReordering,
  mafd,
  runsForStretches,
  suspiciousStretches,
  type Located,
} from './inspect-locate.js';
import { MeasureParser } from './measure.js';
import { MediaJobError, whyFailed, runProcess } from './process.js';

/** scdet's score threshold (0-100; scdet's default). */
export const SCENE_THRESHOLD = 10;
/** Silence: below this level for at least SILENCE_MIN_SECONDS. */
export const SILENCE_DB = -50;
export const SILENCE_MIN_SECONDS = 0.5;
/** At most this many points in the loudness curve, for any length. */
export const LOUDNESS_POINTS = 200;
/** The window of the loudness and motion curves for a source of this length: at most LOUDNESS_POINTS of them. */
export const curveWindowSeconds = (duration: number) =>
  Math.max(0.5, Math.ceil((duration / LOUDNESS_POINTS) * 10) / 10);

const TINY_W = 64;
const TINY_H = 36;
const TINY_BYTES = TINY_W * TINY_H * 1.5;
/** Width of the keyframe thumbnails kept for sheets (a sheet's cells are at most 320 px wide). */
const THUMB_W = 320;
/** Area averaging: the right filter for a large reduction (no aliasing), and cheaper than bicubic here. */
const THUMB_SCALE = `scale=${THUMB_W}:-2:flags=area`;
/** Tiny frames are always made from the thumbnail's scale, so every tiny frame compares with every other. */
const TINY_SCALE = `scale=${TINY_W}:${TINY_H}:flags=area,format=yuv420p`;
/** A tiny frame as pass 1 makes them (for comparing with its keyframes). */
const TINY_CHAIN = `${THUMB_SCALE},${TINY_SCALE}`;
/** Neighbouring keyframes at least this different (scdet's measure on tiny frames) make their GOP a candidate. */
const KEY_DIFF = SCENE_THRESHOLD / 2;
/** A packet this many times larger than the largest of its 4 neighbours on one side is an outlier. */
const SIZE_RATIO = 2;
/** ... and at least this share of the smaller keyframe around it. */
const KEY_SHARE = 0.5;
/** Keyframes further apart than this on average do not help: one full pass instead. */
const MAX_MEAN_GOP_SECONDS = 5;
/** Candidates covering more than this share of the frames: one full pass instead. */
const MAX_CANDIDATE_SHARE = 0.5;
/** Decode runs per ffmpeg process (each input holds a decoder). */
const RUNS_PER_PROCESS = 8;

export class InspectError extends MediaJobError {
  override name = 'InspectError';
}

export interface PassContext {
  ffmpeg: string;
  ffprobe: string;
  src: MediaSource;
  limiter: Limiter;
  signal?: AbortSignal;
  /** Wall-clock limit per process. */
  timeoutMs: number;
  /** Where pass 1 may keep a thumbnail of every keyframe (an MJPEG stream), for sheets. */
  thumbsPath?: string;
  /** Where the refinement may keep a thumbnail of every cut's first frame (an MJPEG stream), for sheets. */
  cutThumbsPath?: string;
  onProgress?: (fraction: number, message: string) => void;
  debug?: (msg: string) => void;
}

export interface StreamFacts {
  /** The format's start time: every time this module returns is relative to it (the clock -ss uses). */
  startTime: number;
  durationSeconds?: number;
  sampleRate?: number;
}

export interface ShotScan {
  /** Times (relative seconds) of the first frame of every shot after the first. */
  cuts: number[];
  method: 'keyframes' | 'full';
  /** Why the full pass was chosen, when it was. */
  reason?: string;
  /** Keyframe times (relative seconds), for cheap frame grabs. */
  keyframes: number[];
  /** True when pass 1 kept a thumbnail of every keyframe at PassContext.thumbsPath. */
  thumbs?: boolean;
  /** Per cut, the index of its first frame's thumbnail at PassContext.cutThumbsPath (-1: none kept). */
  cutThumbs?: number[];
  /** Frames decoded at full size (refinement runs or the full pass), and all frames. */
  decodedFrames: number;
  totalFrames: number;
  /** How much the picture changes, per window (pictureChange). */
  motion?: PictureChange;
}

/**
 * How much the picture changes, per window of the loudness curve's length: the bits the encoder spent per pixel on
 * each frame coded from its neighbours (keyframes left out), averaged over the window; null where a window has no
 * such frame. Read from the packet list the shot scan lists anyway: no decoding. It rises with movement and also
 * with grain and noise, and a constant-bitrate encode flattens it; a source coded in keyframes only has none.
 */
export interface PictureChange {
  windowSeconds: number;
  bitsPerPixel: (number | null)[];
}

export function pictureChange(frames: FramePacket[], duration: number, pixels: number): PictureChange | undefined {
  const inter = frames.filter((f) => !f.key);
  if (!(pixels > 0) || !(duration > 0) || inter.length < frames.length / 2) return undefined;
  const windowSeconds = curveWindowSeconds(duration);
  const count = Math.max(1, Math.ceil(duration / windowSeconds - 1e-9));
  const bytes = new Float64Array(count);
  const n = new Uint32Array(count);
  for (const f of inter) {
    const w = Math.min(count - 1, Math.max(0, Math.floor(f.t / windowSeconds)));
    bytes[w] = bytes[w]! + f.size;
    n[w] = n[w]! + 1;
  }
  const bitsPerPixel = Array.from(bytes, (b, w) => (n[w] ? Math.round(((b * 8) / n[w]! / pixels) * 1e5) / 1e5 : null));
  return { windowSeconds, bitsPerPixel };
}

async function run(
  ctx: PassContext,
  command: string,
  args: string[],
  opts: { maxStdout?: number; onStderr?: (s: string) => void } = {},
) {
  const r = await ctx.limiter.run(() =>
    runProcess(command, args, {
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      maxStdout: opts.maxStdout,
      onStderr: opts.onStderr,
    }),
  );
  if (r.cancelled) throw new InspectError('cancelled', true);
  if (r.timedOut)
    throw new InspectError(`${command.split('/').pop()} did not finish within ${Math.round(ctx.timeoutMs / 1000)} s`);
  if (r.code !== 0) throw new InspectError(`${command.split('/').pop()} failed (${whyFailed(r)})`);
  return r;
}

/** Input options for ffmpeg: `extra` options go before the input's own (e.g. -ss, -skip_frame). */
const input = (src: MediaSource, extra: string[] = []) => {
  const a = inputArgs(src);
  return [...a.slice(0, -2), ...extra, ...a.slice(-2)];
};
const FFMPEG_HEAD = ['-hide_banner', '-nostdin', '-nostats', '-y'];
/**
 * One decoder thread for short decodes (keyframes, GOP runs): frame threading pays off only over long stretches;
 * on a run of one GOP it cost 40% more CPU here (its pipeline fills and drains every run). Parallelism comes from
 * the processes running side by side instead. Decoded pictures are the same either way.
 */
const ONE_THREAD = ['-threads', '1'];

export async function streamFacts(ctx: PassContext): Promise<StreamFacts> {
  const a = inputArgs(ctx.src);
  const r = await run(ctx, ctx.ffprobe, [
    '-v',
    'error',
    '-hide_banner',
    ...a.slice(0, -2),
    '-show_entries',
    'format=start_time,duration:stream=codec_type,sample_rate',
    '-of',
    'json',
    ...a.slice(-2),
  ]);
  const j = JSON.parse(r.stdout.toString('utf8')) as {
    format?: { start_time?: string; duration?: string };
    streams?: { codec_type?: string; sample_rate?: string }[];
  };
  const start = Number(j.format?.start_time);
  const duration = Number(j.format?.duration);
  const rate = Number(j.streams?.find((s) => s.codec_type === 'audio')?.sample_rate);
  return {
    startTime: Number.isFinite(start) ? start : 0,
    ...(Number.isFinite(duration) && duration > 0 ? { durationSeconds: duration } : {}),
    ...(Number.isFinite(rate) && rate > 0 ? { sampleRate: rate } : {}),
  };
}

/** The first video stream's packets (demuxing only, no decoding), sorted by presentation time. */
export async function videoPackets(ctx: PassContext, startTime: number): Promise<FramePacket[]> {
  const a = inputArgs(ctx.src);
  const r = await run(
    ctx,
    ctx.ffprobe,
    [
      '-v',
      'error',
      '-hide_banner',
      ...a.slice(0, -2),
      '-select_streams',
      'v:0',
      '-show_entries',
      'packet=pts_time,dts_time,size,flags',
      '-of',
      'csv=p=0',
      ...a.slice(-2),
    ],
    {
      maxStdout: 256 * 1024 * 1024,
    },
  );
  return parsePackets(r.stdout.toString('utf8'), startTime);
}

export function parsePackets(csv: string, startTime: number): FramePacket[] {
  const out: FramePacket[] = [];
  let n = 0;
  for (const line of csv.split('\n')) {
    const [pts, dts, size, flags] = line.trim().split(',');
    // AVI gives most packets no presentation time, only a decode time: without it here the list held one frame in
    // several, and cuts snapped to it fell a frame or more late (Megamind.avi: 4.170 s for a shot from 4.129 s).
    const fromDts = !pts || pts === 'N/A';
    const t = Number(fromDts ? dts : pts);
    if (!Number.isFinite(t) || (fromDts && (!dts || dts === 'N/A'))) continue;
    // A discarded packet (D flag) is not shown.
    if (flags?.includes('D')) continue;
    out.push({
      t: t - startTime,
      size: Number(size) || 0,
      key: !!flags?.includes('K'),
      dts: n++,
      ...(fromDts ? { fromDts } : {}),
    });
  }
  return out.sort((x, y) => x.t - y.t);
}

/**
 * Packets much larger than their neighbours (keyframes aside) and at least half the size of the smaller keyframe
 * around them: where an encoder met new content inside a GOP and coded it nearly as a picture of its own. (The
 * first P-frame after a keyframe, or motion, makes packets larger than their neighbours too, but far smaller.)
 */
export function sizeOutliers(frames: FramePacket[], minBytes: number): Set<number> {
  const inter = frames.map((f, i) => ({ ...f, i })).filter((f) => !f.key);
  const keySizeAround: number[] = [];
  let before = Infinity;
  frames.forEach((f, i) => {
    if (f.key) before = f.size;
    keySizeAround[i] = before;
  });
  let after = Infinity;
  for (let i = frames.length - 1; i >= 0; i--) {
    if (frames[i]!.key) after = frames[i]!.size;
    keySizeAround[i] = Math.min(keySizeAround[i]!, after);
  }
  const out = new Set<number>();
  const W = 4;
  inter.forEach((f, j) => {
    if (f.size < minBytes || f.size < KEY_SHARE * keySizeAround[f.i]!) return;
    const next = inter.slice(j + 1, j + 1 + W).map((p) => p.size);
    const prev = inter.slice(Math.max(0, j - W), j).map((p) => p.size);
    // Only full windows: a short one at the end of the list may hold only B-frames, which a P-frame dwarfs.
    const big = (side: number[]) => side.length === W && f.size >= SIZE_RATIO * Math.max(...side);
    if (big(next) || big(prev)) out.add(f.i);
  });
  return out;
}

/**
 * The runs to decode: each candidate GOP from its keyframe to the next keyframe inclusive, contiguous ones merged.
 * `keys` are frame indices of keyframes; GOP g spans keys[g]..keys[g+1] (the last one, to the last frame).
 */
export function planRuns(keys: number[], frameCount: number, candidates: Set<number>): Run[] {
  const runs: Run[] = [];
  for (const g of [...candidates].sort((a, b) => a - b)) {
    const from = keys[g]!;
    const to = g + 1 < keys.length ? keys[g + 1]! : frameCount - 1;
    const last = runs.at(-1);
    if (last && from <= last.to) last.to = Math.max(last.to, to);
    else runs.push({ from, to });
  }
  return runs;
}

/**
 * The last packet of the GOP opened by keyframe `key` (before frame `end`) whose size jumps: up to twice the largest
 * of the (up to 4) inter packets before it in the GOP (or, first after the keyframe, half the keyframe's size), or
 * down to a quarter of the smallest of the 4 before it. A cut into new content costs bits its predecessors did not
 * need; a cut from busy footage to something calm makes every packet cheap. Only a hint of where the GOP's last cut
 * lies: the caller checks what follows.
 */
export function lastJump(frames: FramePacket[], key: number, end: number, minBytes: number): number | undefined {
  let last: number | undefined;
  const prev: number[] = [];
  for (let i = key + 1; i < end; i++) {
    const f = frames[i]!;
    if (f.key) return undefined;
    const up = prev.length ? f.size >= SIZE_RATIO * Math.max(...prev) : f.size >= KEY_SHARE * frames[key]!.size;
    const down = prev.length === 4 && SIZE_RATIO * SIZE_RATIO * f.size <= Math.min(...prev);
    if ((up && f.size >= minBytes) || (down && Math.min(...prev) >= minBytes)) last = i;
    prev.push(f.size);
    if (prev.length > 4) prev.shift();
  }
  return last;
}

/** Fewer frames than this left after a jump: not worth a check, decode to the keyframe. */
const MIN_TAIL_FRAMES = 6;

/**
 * Runs that may stop early: a run whose last GOP is closed by a keyframe stops at that GOP's last size jump (where
 * its last cut most likely is), when that leaves enough frames undecoded to be worth it.
 */
export function stopEarly(frames: FramePacket[], runs: Run[], minBytes: number): Run[] {
  return runs.map((r) => {
    if (!frames[r.to]?.key || r.to <= r.from) return r;
    let key = r.to - 1;
    while (key > r.from && !frames[key]!.key) key--;
    const j = lastJump(frames, key, r.to, minBytes);
    if (j === undefined || j < r.from + 2 || r.to - j < MIN_TAIL_FRAMES) return r;
    return { ...r, to: j, closes: r.to };
  });
}

/**
 * Candidate GOPs: neighbouring keyframes that differ, GOPs holding a size outlier, and the last GOP (no keyframe closes
 * it).
 */
export function candidateGops(
  keys: number[],
  frameCount: number,
  keyDiffs: number[],
  outliers: Set<number>,
): Set<number> {
  const c = new Set<number>();
  keyDiffs.forEach((d, g) => d >= KEY_DIFF && c.add(g));
  let g = 0;
  for (const i of [...outliers].sort((a, b) => a - b)) {
    while (g + 1 < keys.length && keys[g + 1]! <= i) g++;
    c.add(g);
  }
  if (keys.length && keys.at(-1)! < frameCount - 1) c.add(keys.length - 1);
  return c;
}

const STDERR_METADATA = /^\[metadata@r(\d+) @ [^\]]+\] frame:\d+\s+pts:\S+\s+pts_time:(\S+)/;

/** Splits runs into `count` batches of about equal frames (longest first onto the lightest). */
function balance(runs: Run[], count: number): number[][] {
  const batches = Array.from({ length: count }, () => ({ frames: 0, runs: [] as number[] }));
  const order = runs.map((r, i) => ({ i, n: r.to - r.from + 1 })).sort((a, b) => b.n - a.n);
  for (const { i, n } of order) {
    const b = batches.reduce((m, x) => (x.frames < m.frames ? x : m));
    b.frames += n;
    b.runs.push(i);
  }
  return batches.filter((b) => b.runs.length).map((b) => b.runs.sort((x, y) => x - y));
}

interface RunResult {
  /** Times (relative) of the frames scdet marked. */
  cuts: number[];
  /** For a run that stops early: its last frame, tiny. */
  tail?: Uint8Array;
  /** With PassContext.cutThumbsPath: a JPEG of each marked frame, in the order of `cuts`. */
  thumbs?: Buffer[];
}

/**
 * How far before a run's first frame and after its last its trim reaches. trim rounds its times to the stream's time
 * base: where that is the frame's own length (AVI: 1/25 s), a millisecond past the last frame rounded back onto it and
 * dropped it, so a cut on a run's last frame (a keyframe) went unseen. The end reaches 0.6 of a frame on: in time-base
 * units past the last frame, short of the next.
 */
export function trimMargins(frames: FramePacket[], r: Run): { half: number; endPad: number } {
  const step = (i: number) => {
    const next = frames[i + 1]?.t ?? frames[i]!.t + (frames[i]!.t - (frames[i - 1]?.t ?? frames[i]!.t - 0.04));
    return next - frames[i]!.t;
  };
  return { half: Math.min(0.001, step(r.from) / 4), endPad: 0.6 * step(r.to) };
}

/** Decodes runs fully with scdet; returns per run the times (relative) of the frames scdet marked. */
async function scdetRuns(
  ctx: PassContext,
  frames: FramePacket[],
  runs: Run[],
  startTime: number,
  onRunDone: () => void,
): Promise<RunResult[]> {
  const results: RunResult[] = runs.map(() => ({ cuts: [] }));
  // An even number of processes (at least two when there are two runs): the shared limit lets two run side by side.
  let count = Math.ceil(runs.length / RUNS_PER_PROCESS);
  if (count % 2 && runs.length > count) count++;
  await Promise.all(
    balance(runs, count).map(async (batch) => {
      const args = [...FFMPEG_HEAD, '-v', 'info', '-copyts'];
      const graph: string[] = [];
      const outs: string[] = [];
      const tails: number[] = [];
      const thumbsFile = ctx.cutThumbsPath
        ? `${ctx.cutThumbsPath}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
        : undefined;
      batch.forEach((ri, k) => {
        const r = runs[ri]!;
        const a = frames[r.from]!.t + startTime;
        const b = frames[r.to]!.t + startTime;
        const { half, endPad } = trimMargins(frames, r);
        // Seek to the keyframe itself (no accurate seek: nothing is dropped), keep its frames up to the run's last.
        args.push(...input(ctx.src, [...ONE_THREAD, '-noaccurate_seek', '-ss', (a + half).toFixed(6)]));
        let chain = `[${k}:v:0]trim=start=${(a - half).toFixed(6)}:end=${(b + endPad).toFixed(6)},scdet=threshold=${SCENE_THRESHOLD},metadata@r${ri}=mode=print:key=lavfi.scd.time`;
        if (thumbsFile) {
          // The marked frames, small, for sheets: a short shot has no keyframe to show, and this is its first frame.
          graph.push(
            `${chain},split[s${k}][m${k}]`,
            `[m${k}]metadata=mode=select:key=lavfi.scd.time,${THUMB_SCALE},format=yuvj420p[j${k}]`,
          );
          chain = `[s${k}]null`;
        }
        if (r.closes === undefined) {
          graph.push(`${chain}[o${k}]`);
          outs.push('-map', `[o${k}]`, '-f', 'null', '-');
        } else {
          // Only the run's last frame goes on, tiny, to be compared with the keyframe that closes the GOP.
          graph.push(`${chain},trim=start=${(b - half).toFixed(6)},${TINY_CHAIN}[t${k}]`);
          tails.push(ri);
        }
      });
      // Streams of disjoint runs, merged by time: tails and thumbnails come out in time order.
      const merge = (labels: string[], out: string) =>
        graph.push(
          labels.length > 1
            ? `${labels.join('')}interleave=nb_inputs=${labels.length}${out}`
            : `${labels[0]}null${out}`,
        );
      if (tails.length) {
        tails.sort((x, y) => runs[x]!.from - runs[y]!.from);
        merge(
          batch.flatMap((ri, k) => (runs[ri]!.closes === undefined ? [] : [`[t${k}]`])),
          '[tails]',
        );
        outs.push('-map', '[tails]', '-fps_mode', 'passthrough', '-f', 'rawvideo', 'pipe:1');
      }
      if (thumbsFile) {
        merge(
          batch.map((_, k) => `[j${k}]`),
          '[thumbs]',
        );
        outs.push(
          '-map',
          '[thumbs]',
          '-fps_mode',
          'passthrough',
          '-c:v',
          'mjpeg',
          '-q:v',
          '4',
          '-f',
          'mjpeg',
          `file:${thumbsFile}`,
        );
      }
      args.push('-filter_complex', graph.join(';'), ...outs);
      let buf = '';
      let out;
      try {
        out = await run(ctx, ctx.ffmpeg, args, {
          maxStdout: (tails.length + 1) * TINY_BYTES,
          onStderr: (chunk) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const m = STDERR_METADATA.exec(buf.slice(0, nl));
              buf = buf.slice(nl + 1);
              if (m) results[Number(m[1])]!.cuts.push(Number(m[2]) - startTime);
            }
          },
        });
        if (thumbsFile) {
          // One JPEG per marked frame, in time order; if they do not pair up, the sheet seeks instead.
          const jpegs = splitJpegs(await readFile(thumbsFile).catch(() => Buffer.alloc(0)));
          const marks = batch
            .flatMap((ri) => results[ri]!.cuts.map((t, i) => ({ ri, i, t })))
            .sort((x, y) => x.t - y.t);
          if (jpegs.length !== marks.length)
            ctx.debug?.(
              `inspect: ${jpegs.length} thumbnails came out for ${marks.length} cuts; the sheet will seek to them`,
            );
          else {
            for (const ri of batch) results[ri]!.thumbs = [];
            marks.forEach((m, n) => (results[m.ri]!.thumbs![m.i] = jpegs[n]!));
          }
        }
      } finally {
        if (thumbsFile) await rm(thumbsFile, { force: true });
      }
      // A tail that did not come out (fewer frames than listed) leaves its run unchecked: it is decoded to the end.
      if (out.stdout.length === tails.length * TINY_BYTES) {
        tails.forEach((ri, k) => (results[ri]!.tail = out.stdout.subarray(k * TINY_BYTES, (k + 1) * TINY_BYTES)));
      }
      for (let k = 0; k < batch.length; k++) onRunDone();
    }),
  );
  return results;
}

const STDERR_SHOWINFO = /^\[showinfo@l(\d+) @ [^\]]+\] n:\s*\d+\s+pts:\s*\S+\s+pts_time:(\S+)/;

/**
 * Decodes the reference frames of runs (B-frames skipped, no loop filter: a picture good enough to see a cut, not
 * to place it), tiny; per run, the frames that came out. Several runs per process, as scdetRuns.
 */
async function locateRuns(
  ctx: PassContext,
  frames: FramePacket[],
  runs: Run[],
  startTime: number,
  onRunDone: () => void,
): Promise<Located[]> {
  const results: Located[] = runs.map(() => ({ indices: [], tiny: [] }));
  let count = Math.ceil(runs.length / RUNS_PER_PROCESS);
  if (count % 2 && runs.length > count) count++;
  await Promise.all(
    balance(runs, count).map(async (batch) => {
      const args = [...FFMPEG_HEAD, '-v', 'info', '-copyts'];
      const graph: string[] = [];
      batch.forEach((ri, k) => {
        const r = runs[ri]!;
        const a = frames[r.from]!.t + startTime;
        const b = frames[r.to]!.t + startTime;
        const { half, endPad } = trimMargins(frames, r);
        args.push(
          ...input(ctx.src, [
            ...ONE_THREAD,
            '-skip_frame',
            'bidir',
            '-skip_loop_filter',
            'all',
            '-noaccurate_seek',
            '-ss',
            (a + half).toFixed(6),
          ]),
        );
        graph.push(
          `[${k}:v:0]trim=start=${(a - half).toFixed(6)}:end=${(b + endPad).toFixed(6)},${TINY_CHAIN},showinfo@l${ri}[l${k}]`,
        );
      });
      const labels = batch.map((_, k) => `[l${k}]`);
      graph.push(
        labels.length > 1 ? `${labels.join('')}interleave=nb_inputs=${labels.length}[all]` : `${labels[0]}null[all]`,
      );
      const maxFrames = batch.reduce((s, ri) => s + runs[ri]!.to - runs[ri]!.from + 1, 0);
      const shown: { ri: number; t: number }[] = [];
      let buf = '';
      const out = await run(
        ctx,
        ctx.ffmpeg,
        [
          ...args,
          '-filter_complex',
          graph.join(';'),
          '-map',
          '[all]',
          '-fps_mode',
          'passthrough',
          '-f',
          'rawvideo',
          'pipe:1',
        ],
        {
          maxStdout: (maxFrames + 1) * TINY_BYTES,
          onStderr: (chunk) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const m = STDERR_SHOWINFO.exec(buf.slice(0, nl));
              buf = buf.slice(nl + 1);
              if (m) shown.push({ ri: Number(m[1]), t: Number(m[2]) - startTime });
            }
          },
        },
      );
      // Disjoint runs interleaved by time: the pictures come out in the order of their times.
      shown.sort((x, y) => x.t - y.t);
      if (out.stdout.length === shown.length * TINY_BYTES) {
        shown.forEach(({ ri, t }, n) => {
          const i = frameAt(frames, t);
          const res = results[ri]!;
          if (res.indices.at(-1) === i) return;
          res.indices.push(i);
          res.tiny.push(out.stdout.subarray(n * TINY_BYTES, (n + 1) * TINY_BYTES));
        });
      } else
        ctx.debug?.(
          `inspect: the locator gave ${out.stdout.length / TINY_BYTES} pictures for ${shown.length} frames; its runs are decoded fully`,
        );
      for (let k = 0; k < batch.length; k++) onRunDone();
    }),
  );
  return results;
}

/** The index of the frame nearest to t. */
function frameAt(frames: FramePacket[], t: number): number {
  let lo = 0;
  let hi = frames.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid]!.t < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(frames[lo - 1]!.t - t) < Math.abs(frames[lo]!.t - t)) return lo - 1;
  return lo;
}

/** One full decode with scdet: the reference, and the fallback. */
async function fullPass(ctx: PassContext, startTime: number, duration: number | undefined): Promise<number[]> {
  const cuts: number[] = [];
  let buf = '';
  await run(
    ctx,
    ctx.ffmpeg,
    [
      ...FFMPEG_HEAD,
      '-v',
      'info',
      '-copyts',
      ...input(ctx.src),
      '-map',
      '0:v:0',
      '-vf',
      `scdet=threshold=${SCENE_THRESHOLD},metadata@r0=mode=print:key=lavfi.scd.time`,
      '-progress',
      'pipe:2',
      '-f',
      'null',
      '-',
    ],
    {
      onStderr: (chunk) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const m = STDERR_METADATA.exec(line);
          if (m) cuts.push(Number(m[2]) - startTime);
          const p = /^out_time_us=(\d+)/.exec(line);
          if (p && duration)
            ctx.onProgress?.(Math.min(1, Number(p[1]) / 1e6 / duration), 'decoding every frame for cuts');
        }
      },
    },
  );
  return cuts;
}

/** What pass 1 decoded: every keyframe tiny, in order, and its thumbnails not yet in place. */
interface KeyframePass {
  tiny: Buffer;
  count: number;
  /** Puts the thumbnails where sheets read them (once the count is known to match the packet list). */
  keep(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Pass 1: every keyframe, tiny (at most `maxKeys` are kept). With `thumbs`, every keyframe is also kept as a small
 * JPEG in one MJPEG stream there (for sheets: a keyframe is then never decoded again).
 */
async function keyframePass(
  ctx: PassContext,
  maxKeys: number,
  duration: number | undefined,
  thumbs?: string,
): Promise<KeyframePass> {
  let buf = '';
  const tmp = thumbs ? `${thumbs}.${process.pid}.${randomBytes(4).toString('hex')}.tmp` : undefined;
  const outputs = tmp
    ? [
        '-filter_complex',
        `[0:v:0]${THUMB_SCALE},split[a][b];[a]${TINY_SCALE}[tiny];[b]format=yuvj420p[th]`,
        '-map',
        '[tiny]',
        '-fps_mode',
        'passthrough',
        '-f',
        'rawvideo',
        'pipe:1',
        '-map',
        '[th]',
        '-fps_mode',
        'passthrough',
        '-c:v',
        'mjpeg',
        '-q:v',
        '4',
        '-f',
        'mjpeg',
        `file:${tmp}`,
      ]
    : ['-map', '0:v:0', '-vf', TINY_CHAIN, '-fps_mode', 'passthrough', '-f', 'rawvideo', 'pipe:1'];
  const discard = async () => void (tmp && (await rm(tmp, { force: true })));
  try {
    const r = await run(
      ctx,
      ctx.ffmpeg,
      [
        ...FFMPEG_HEAD,
        '-v',
        'error',
        ...input(ctx.src, [...ONE_THREAD, '-skip_frame', 'nokey']),
        '-progress',
        'pipe:2',
        ...outputs,
      ],
      {
        maxStdout: (maxKeys + 1) * TINY_BYTES,
        onStderr: (chunk) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const p = /^out_time_us=(\d+)/.exec(buf.slice(0, nl));
            buf = buf.slice(nl + 1);
            if (p && duration) ctx.onProgress?.(Math.min(1, Number(p[1]) / 1e6 / duration), 'comparing keyframes');
          }
        },
      },
    );
    return {
      tiny: r.stdout,
      count: Math.floor(r.stdout.length / TINY_BYTES),
      keep: async () => void (tmp && thumbs && (await rename(tmp, thumbs))),
      discard,
    };
  } catch (err) {
    await discard();
    throw err;
  }
}

/** Differences between neighbouring tiny frames (scdet's measure). */
function neighbourDiffs(tiny: Buffer, count: number): number[] {
  const at = (i: number) => tiny.subarray(i * TINY_BYTES, (i + 1) * TINY_BYTES);
  const diffs: number[] = [];
  for (let i = 0; i + 1 < count; i++) diffs.push(mafd(at(i), at(i + 1)));
  return diffs;
}

/** Hard cuts of the source's first video stream, to the frame. */
export async function scanShots(
  ctx: PassContext,
  facts: StreamFacts,
  size: { width?: number; height?: number; fps?: number },
): Promise<ShotScan> {
  const t0 = performance.now();
  const elapsed = () => `${(performance.now() - t0).toFixed(0)} ms`;
  ctx.onProgress?.(0, 'comparing keyframes');
  // Pass 1 runs beside the packet list: it needs the list only to check its count. Sized for every frame being a
  // keyframe; a source that turns out to have more is scanned by a full pass.
  const maxKeys = Math.min(200_000, Math.ceil((facts.durationSeconds ?? 3600) * Math.min(size.fps ?? 120, 240)) + 16);
  const pass1Run = keyframePass(ctx, maxKeys, facts.durationSeconds, ctx.thumbsPath).then(
    (pass) => ({ pass }),
    (error: unknown) => ({ error }),
  );
  let frames: FramePacket[];
  try {
    frames = await videoPackets(ctx, facts.startTime);
  } catch (err) {
    const p = await pass1Run;
    if ('pass' in p) await p.pass.discard();
    throw err;
  }
  ctx.debug?.(`inspect: ${frames.length} video packets listed at ${elapsed()}`);
  const keys = frames.flatMap((f, i) => (f.key ? [i] : []));
  const keyframes = keys.map((i) => frames[i]!.t);
  const duration = facts.durationSeconds ?? frames.at(-1)?.t;
  const motion = pictureChange(frames, duration ?? 0, (size.width ?? 0) * (size.height ?? 0));
  const p1 = await pass1Run;
  // Every keyframe must have come out, in order, or the pairing with the packet list would be wrong.
  const pass1 = 'pass' in p1 && p1.pass.count === keys.length ? p1.pass : undefined;
  if (pass1) await pass1.keep();
  else if ('pass' in p1) await p1.pass.discard();
  const full = async (reason: string): Promise<ShotScan> => {
    ctx.debug?.(`inspect: full pass (${reason})`);
    const cuts = await fullPass(ctx, facts.startTime, duration);
    return {
      cuts: snap(frames, cuts),
      method: 'full',
      reason,
      keyframes,
      ...(pass1 && ctx.thumbsPath ? { thumbs: true } : {}),
      decodedFrames: frames.length,
      totalFrames: frames.length,
      ...(motion ? { motion } : {}),
    };
  };
  if (frames.length < 3)
    return {
      cuts: [],
      method: 'full',
      reason: 'fewer than 3 frames',
      keyframes,
      decodedFrames: frames.length,
      totalFrames: frames.length,
    };
  // Decode times pair with seeks' frames only up to the decoder's delay: decode every frame, and snap scdet's times
  // to the list (the same grid of frames, whatever that delay).
  if (frames.some((f) => f.fromDts)) return full('the container gives decode times only');
  const span = frames.at(-1)!.t - frames[0]!.t;
  if (keys.length < 2 || keys[0] !== 0 || span / keys.length > MAX_MEAN_GOP_SECONDS)
    return full(`keyframes every ${(span / Math.max(1, keys.length)).toFixed(1)} s on average: too sparse to help`);
  if ('error' in p1 && p1.error instanceof InspectError && p1.error.cancelled) throw p1.error;
  if (!pass1) return full('the keyframes did not all decode');
  ctx.debug?.(`inspect: ${keys.length} keyframes compared at ${elapsed()}`);
  const diffs = neighbourDiffs(pass1.tiny, pass1.count);
  const minBytes = Math.max(64, Math.round(((size.width ?? 320) * (size.height ?? 180)) / 2000));
  const outliers = sizeOutliers(frames, minBytes);
  const candidates = candidateGops(keys, frames.length, diffs, outliers);
  const planned = planRuns(keys, frames.length, candidates);
  const share = planned.reduce((s, r) => s + r.to - r.from + 1, 0) / frames.length;
  ctx.debug?.(
    `inspect: ${keys.length} keyframes, ${candidates.size} candidate GOPs in ${planned.length} runs (${(share * 100).toFixed(0)}% of the frames)`,
  );
  // Footage that moves makes most GOPs candidates: with B-frames, its references are looked at first.
  const locate = share > LOCATE_SHARE && hasReordering(frames);
  if (share > MAX_CANDIDATE_SHARE && !locate)
    return full(`candidates cover ${(share * 100).toFixed(0)}% of the frames`);

  const keyIndex = new Map(keys.map((k, g) => [k, g]));
  const tinyKey = (i: number) =>
    pass1.tiny.subarray(keyIndex.get(i)! * TINY_BYTES, (keyIndex.get(i)! + 1) * TINY_BYTES);
  const cuts = new Set<number>();
  const cutJpegs = new Map<number, Buffer>();
  let decoded = 0;
  let done = 0;
  let runs: Run[];
  let located: [number, number][] | undefined;
  if (locate) {
    const seen = await locateRuns(ctx, frames, planned, facts.startTime, () =>
      ctx.onProgress?.(Math.min(0.5, ++done / planned.length / 2), 'looking for cuts between reference frames'),
    );
    const stretches = planned.flatMap((r, k) => suspiciousStretches(r, seen[k]!, outliers));
    runs = runsForStretches(keys, stretches);
    located = stretches;
    const looked = seen.reduce((s, l) => s + l.indices.length, 0);
    decoded += looked;
    const exact = runs.reduce((s, r) => s + r.to - r.from + 1, 0);
    ctx.debug?.(
      `inspect: ${looked} reference frames of ${planned.length} runs looked at; ${stretches.length} stretches to place cuts in, ${runs.length} runs (${exact} frames) at ${elapsed()}`,
    );
    done = 0;
  } else runs = stopEarly(frames, planned, minBytes);
  let total = runs.length;
  const base = locate ? 0.5 : 0;
  let finished = 0;
  let unfinished = 0;
  // Second looks: a cut on a run's second frame was scored without its context (decode again from one keyframe
  // earlier); a run that stopped early whose last frame does not look like the closing keyframe (decode to it).
  for (let round = 0; runs.length && round < 6; round++) {
    const found = await scdetRuns(ctx, frames, runs, facts.startTime, () =>
      ctx.onProgress?.(base + ((1 - base) * ++done) / Math.max(total, done), 'placing cuts on their frames'),
    );
    const again: Run[] = [];
    runs.forEach((r, k) => {
      decoded += r.to - r.from + 1;
      const { cuts: marked, thumbs } = found[k]!;
      marked.forEach((t, n) => {
        const i = frameAt(frames, t);
        // Any decode of a frame shows the same picture: keep the first thumbnail of it.
        if (thumbs?.[n] && !cutJpegs.has(i)) cutJpegs.set(i, thumbs[n]!);
        if (i === r.from + 1 && r.from > 0 && !r.seen) {
          // Where the locator saw no step, a mark without context is the motion's own difference, not a cut.
          if (located && !located.some(([lo, hi]) => i > lo && i <= hi)) return;
          const g = keyIndex.get(r.from)!;
          again.push({ from: keys[g - 1]!, to: r.from + 1 });
        } else if (i > r.from) cuts.add(i);
      });
      if (r.closes === undefined) return;
      const tail = found[k]!.tail;
      let quiet = !!tail && mafd(tail, tinyKey(r.closes)) < KEY_DIFF;
      for (let i = r.to + 1; quiet && i < r.closes; i++) if (outliers.has(i)) quiet = false;
      if (quiet) finished++;
      else {
        unfinished++;
        let key = r.to;
        while (key > r.from && !frames[key]!.key) key--;
        again.push({ from: key, to: r.closes, seen: true });
      }
    });
    ctx.debug?.(
      `inspect: round ${round + 1}: ${runs.length} runs (${runs.reduce((s, r) => s + r.to - r.from + 1, 0)} frames) decoded by ${elapsed()}`,
    );
    runs = again;
    total += again.length;
  }
  ctx.debug?.(
    `inspect: ${finished} runs stopped early at their last jump in packet size, ${unfinished} decoded on to their keyframe`,
  );
  ctx.debug?.(`inspect: ${decoded} frames decoded in runs, cuts placed at ${elapsed()}`);
  const sorted = [...cuts].sort((a, b) => a - b);
  let cutThumbs: number[] | undefined;
  if (ctx.cutThumbsPath && cutJpegs.size) {
    const kept = sorted.filter((i) => cutJpegs.has(i));
    await writeFileAtomic(ctx.cutThumbsPath, Buffer.concat(kept.map((i) => cutJpegs.get(i)!)));
    cutThumbs = sorted.map((i) => kept.indexOf(i));
  }
  return {
    cuts: sorted.map((i) => frames[i]!.t),
    method: 'keyframes',
    keyframes,
    thumbs: !!ctx.thumbsPath,
    ...(cutThumbs ? { cutThumbs } : {}),
    decodedFrames: decoded,
    totalFrames: frames.length,
    ...(motion ? { motion } : {}),
  };
}

/** Times as printed (rounded) back to the demuxer's frame times. */
function snap(frames: FramePacket[], times: number[]): number[] {
  if (!frames.length) return times;
  return [...new Set(times.map((t) => frames[frameAt(frames, t)]!.t))].sort((a, b) => a - b);
}

export interface AudioScan {
  silences: { from: number; to: number }[];
  loudness: { t: number; meanDb: number; peakDb: number }[];
  windowSeconds: number;
}

/** One audio-only decode: silencedetect, and astats per window for the loudness curve. */
export async function scanAudio(ctx: PassContext, facts: StreamFacts, duration: number): Promise<AudioScan> {
  const t0 = performance.now();
  const windowSeconds = curveWindowSeconds(duration);
  const rate = facts.sampleRate ?? 48_000;
  const resample = facts.sampleRate ? '' : `aresample=${rate},`;
  // The astats branch is printed under the name MeasureParser reads (cutlevels).
  const af =
    `${resample}silencedetect=n=${SILENCE_DB}dB:d=${SILENCE_MIN_SECONDS},asetnsamples=n=${Math.round(windowSeconds * rate)}:p=0,` +
    'astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=RMS_level+Peak_level,ametadata@cutlevels=mode=print';
  const parser = new MeasureParser();
  const silences: { from: number; to: number }[] = [];
  let open: number | undefined;
  let buf = '';
  await run(
    ctx,
    ctx.ffmpeg,
    [
      ...FFMPEG_HEAD,
      '-v',
      'info',
      ...input(ctx.src),
      '-map',
      '0:a:0',
      '-vn',
      '-sn',
      '-dn',
      '-af',
      af,
      '-progress',
      'pipe:2',
      '-f',
      'null',
      '-',
    ],
    {
      onStderr: (chunk) => {
        parser.push(chunk);
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const s = /silence_start: (-?[\d.]+)/.exec(line);
          if (s) open = Math.max(0, Number(s[1]));
          const e = /silence_end: (-?[\d.]+)/.exec(line);
          if (e && open !== undefined) {
            silences.push({ from: open, to: Number(e[1]) });
            open = undefined;
          }
          const p = /^out_time_us=(\d+)/.exec(line);
          if (p) ctx.onProgress?.(Math.min(1, Number(p[1]) / 1e6 / duration), 'measuring the sound');
        }
      },
    },
  );
  if (open !== undefined && duration - open >= SILENCE_MIN_SECONDS) silences.push({ from: open, to: duration });
  ctx.debug?.(`inspect: sound measured in ${(performance.now() - t0).toFixed(0)} ms`);
  const loudness = parser.result.cutLevels.map((s) => ({ t: s.t, meanDb: s.rmsDb, peakDb: s.peakDb }));
  return { silences, loudness, windowSeconds };
}

/** The reference for tests and benchmarks: cut times of one full-decode scdet pass. */
export async function referenceCuts(ctx: PassContext): Promise<number[]> {
  const facts = await streamFacts(ctx);
  return fullPass(ctx, facts.startTime, facts.durationSeconds);
}
