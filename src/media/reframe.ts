// The picture's interest over a focus "auto" cut (issue 33, item 6): its source range decoded small and slow (gray,
// SCAN_WIDTH px wide, a few pictures a second), each picture's motion (its difference from the one before) and detail
// (its gradient) summed per column and row; analysis/reframe.ts turns them into the frame's path. Read when a preview
// or a local render is made, and kept per media and range (in memory, and beside the inspections when a cache is
// given).
import { interests, reframePath, shotChanges, type Interest, type PictureSample } from '../analysis/reframe.js';
import { stillPresence } from '../analysis/still-background.js';
import { frameWindow, type FocusKey } from '../edit/framing.js';
import type { Timeline } from '../edit/normalize.js';
import type { RenderPlan } from '../edit/plan.js';
import { UserFacingError } from '../errors.js';
import { inputArgs, monoSoundArgs, type MediaSource } from './input.js';
import { mediaIdentity, type InspectionCache } from './inspect-cache.js';
import type { Limiter } from './probe.js';
import { runProcess } from './process.js';
import type { InputSpec } from './timeline-args.js';

export interface ReframeDeps {
  ffmpeg: string;
  limiter: Limiter;
  /** Where scans are kept on disk (the inspections' folder), when there is one. */
  reframes?: InspectionCache<StoredScan>;
}

export interface StoredScan {
  v: number;
  samples: Interest[];
}

/** Bumped when what a scan measures changes: older scans are read again. */
const SCAN_VERSION = 6;
const SCAN_WIDTH = 128;
/** Pictures a second, fewer for long cuts: at most MAX_PICTURES in one scan. */
const SCAN_FPS = 6;
const MAX_PICTURES = 2400;

/** Whether any cut of the timeline follows its picture (focus "auto"). */
export const reframes = (t: Timeline) => t.cuts.some((c) => c.focus === 'auto');

const memory = new Map<string, Interest[]>();
const MEMORY_KEEP = 200;

/** Motion and detail per column and row of one gray picture (w x h bytes), against the picture before it. */
function profileOf(
  cur: Uint8Array,
  prev: Uint8Array,
  w: number,
  h: number,
): PictureSample['profile'] & { change: number } {
  const motionCols = new Array<number>(w).fill(0);
  const motionRows = new Array<number>(h).fill(0);
  const detailCols = new Array<number>(w).fill(0);
  const detailRows = new Array<number>(h).fill(0);
  let change = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const m = Math.abs(cur[i]! - prev[i]!);
      const d = x + 1 < w && y + 1 < h ? Math.abs(cur[i]! - cur[i + 1]!) + Math.abs(cur[i]! - cur[i + w]!) : 0;
      motionCols[x]! += m;
      motionRows[y]! += m;
      detailCols[x]! += d;
      detailRows[y]! += d;
      change += m;
    }
  }
  const per = (v: number[], n: number) => v.map((s) => Math.round((s / n) * 100) / 100);
  return {
    motionCols: per(motionCols, h),
    motionRows: per(motionRows, w),
    detailCols: per(detailCols, h),
    detailRows: per(detailRows, w),
    change: change / (w * h),
  };
}

/**
 * The sampled interest of `source` from `inSec` for `durationSec` (times from inSec), read once per media and range.
 */
export async function scanInterest(
  deps: ReframeDeps,
  source: MediaSource,
  display: { width?: number; height?: number },
  inSec: number,
  durationSec: number,
  signal?: AbortSignal,
): Promise<Interest[]> {
  const aspect = display.width && display.height ? display.width / display.height : 16 / 9;
  const w = SCAN_WIDTH;
  const h = Math.max(2, Math.round(w / aspect / 2) * 2);
  const fps = Math.min(SCAN_FPS, MAX_PICTURES / Math.max(durationSec, 0.001));
  const key = JSON.stringify({
    v: SCAN_VERSION,
    media: await mediaIdentity(source),
    inSec,
    durationSec,
    w,
    h,
    fps: +fps.toFixed(4),
  });
  const hit = memory.get(key) ?? (await deps.reframes?.get(key))?.samples;
  if (hit) return hit;
  const args = [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-ss',
    inSec.toFixed(3),
    '-t',
    durationSec.toFixed(3),
    ...inputArgs(source),
    '-map',
    '0:v:0',
    '-vf',
    `fps=${fps.toFixed(4)},scale=${w}:${h}:flags=area,format=gray`,
    '-f',
    'rawvideo',
    'pipe:1',
  ];
  const size = w * h;
  const r = await deps.limiter.run(() =>
    runProcess(deps.ffmpeg, args, {
      timeoutMs: 600_000,
      ...(signal ? { signal } : {}),
      maxStdout: size * (MAX_PICTURES + 16),
    }),
  );
  if (r.code !== 0) {
    throw new UserFacingError(
      r.cancelled
        ? 'cancelled'
        : `ffmpeg could not read the picture of a focus "auto" cut to follow its action (${r.stderr.trim().split('\n').pop() ?? r.code}); give it focus {x, y} instead`,
    );
  }
  const pictures: Uint8Array[] = [];
  for (let at = 0; at + size <= r.stdout.length; at += size)
    pictures.push(new Uint8Array(r.stdout.buffer, r.stdout.byteOffset + at, size));
  const samples: PictureSample[] = pictures.map((cur, i) => {
    // The first picture's motion is its difference from the second (it has no picture before it in the cut).
    const prev = i > 0 ? pictures[i - 1]! : (pictures[1] ?? cur);
    const { change, ...profile } = profileOf(cur, prev, w, h);
    // A difference shows where things were between two pictures: it is dated halfway between them.
    return { t: Math.round((Math.max(0, i - 0.5) / fps) * 1000) / 1000, profile, change: i > 0 ? change : 0 };
  });
  // Where the camera holds still, who is there (moving or not) against the shot's background.
  stillPresence(pictures, w, h, shotChanges(samples), fps).forEach((p, i) => {
    if (p) samples[i]!.presence = p;
  });
  const found = interests(
    samples,
    await soundAround(
      deps,
      source,
      inSec,
      durationSec,
      samples.map((s) => s.t),
      1 / fps,
      signal,
    ),
  );
  memory.set(key, found);
  if (memory.size > MEMORY_KEEP) memory.delete(memory.keys().next().value!);
  await deps.reframes?.set(key, { v: SCAN_VERSION, samples: found }).catch(() => {});
  return found;
}

const SOUND_RATE = 8000;

/**
 * The cut's sound (its first audio stream, mono at 8 kHz) around each time, as RMS over `window` s (0-1 of full
 * scale): what tells the one speaking (analysis/reframe.ts). Undefined where the source has no sound or it cannot be
 * read (the frame then follows motion alone).
 */
async function soundAround(
  deps: ReframeDeps,
  source: MediaSource,
  inSec: number,
  durationSec: number,
  times: number[],
  window: number,
  signal?: AbortSignal,
): Promise<number[] | undefined> {
  const args = monoSoundArgs(source, { from: inSec, seconds: durationSec }, SOUND_RATE);
  const r = await deps.limiter.run(() =>
    runProcess(deps.ffmpeg, args, {
      timeoutMs: 600_000,
      ...(signal ? { signal } : {}),
      maxStdout: 2 * SOUND_RATE * (durationSec + 1),
    }),
  );
  if (r.code !== 0 || r.stdout.length < 2) return undefined;
  // Copied: a Buffer's offset in its pool need not be even, as an Int16Array's must.
  const pcm = new Int16Array(Uint8Array.from(r.stdout.subarray(0, r.stdout.length & ~1)).buffer);
  return times.map((t) => {
    const a = Math.max(0, Math.round((t - window / 2) * SOUND_RATE));
    const b = Math.min(pcm.length, Math.round((t + window / 2) * SOUND_RATE));
    let sum = 0;
    for (let i = a; i < b; i++) sum += (pcm[i]! / 32768) ** 2;
    return b > a ? Math.sqrt(sum / (b - a)) : 0;
  });
}

/**
 * The plan with each focus "auto" cut's path read from its picture (the window: the output's shape in the cut's
 * source, by its display size); the other cuts as they are.
 */
export async function reframed(
  deps: ReframeDeps,
  t: Timeline,
  plan: RenderPlan,
  cutInputs: InputSpec[],
  signal?: AbortSignal,
): Promise<RenderPlan> {
  const paths = await Promise.all(
    plan.cuts.map(async (c, i): Promise<FocusKey[] | undefined> => {
      if (t.cuts[i]?.focus !== 'auto') return undefined;
      const spec = cutInputs[i]!;
      const source = spec.width && spec.height ? { width: spec.width, height: spec.height } : { width: 16, height: 9 };
      const win = frameWindow(source, { width: t.width, height: t.height });
      // A source of the output's shape fills the frame as it is: nothing to follow, nothing to read.
      if (win.w >= 1 - 1e-9 && win.h >= 1 - 1e-9) return [{ t: 0, x: 0.5, y: 0.5 }];
      const samples = await scanInterest(deps, spec.source, spec, c.inSec, c.durationSec, signal);
      return reframePath(samples, win, c.durationSec);
    }),
  );
  return { ...plan, cuts: plan.cuts.map((c, i) => (paths[i] ? { ...c, focus: paths[i] } : c)) };
}
