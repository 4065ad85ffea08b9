// Rendering a timeline with ffmpeg: one process when the inputs are few, else chunks of cuts rendered one after
// another (each input costs ffmpeg tens of MB) and joined with their overlays in a last pass. Output goes to a
// temporary name in the target's folder and is renamed on success; a failure or cancellation removes it.
import { randomBytes } from 'node:crypto';
import { rm, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { RenderPlan } from '../edit/plan.js';
import { MeasureParser, progressSeconds, type Measurements } from './measure.js';
import { MediaJobError, whyFailed, runProcess } from './process.js';
import { concatArgs, num, timelineArgs, type EncodeSettings, type TimelineJob } from './timeline-args.js';

/** A timeline job (its output is the final path, written as a temporary sibling first), plus how to run it. */
export interface RenderRequest extends Omit<TimelineJob, 'sheet'> {
  ffmpeg: string;
  /** Inputs per ffmpeg process before the timeline is cut into chunks. */
  maxInputs: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** 0..1 of the whole render. */
  onProgress?: (fraction: number) => void;
  trackRss?: boolean;
  /**
   * Also draw the contact sheet's thumbnails from the decoded frames, in every process (chunks included): the
   * chain and output options for a part of the timeline (its first cut's index, its start on the timeline).
   * The processes run in the output's folder, so the output options may name files relative to it.
   */
  sheetFor?: (part: RenderPlan, firstCut: number, offsetSec: number) => { filter: string; outputArgs: string[] };
  /** With ffprobe: the output is checked before it takes its name (verifyOutput); one that fails is not kept. */
  verifyWith?: string;
}

export interface RenderOutcome {
  path: string;
  measurements: Measurements;
  processes: number;
  /** Peak RSS of the largest ffmpeg process, KiB (when tracked). */
  ffmpegMaxRssKiB?: number;
}

export class RenderError extends MediaJobError {
  override name = 'RenderError';
  constructor(
    message: string,
    cancelled = false,
    /** The disk filled up (ENOSPC): said as such, not as ffmpeg's last line. */
    readonly noSpace = false,
  ) {
    super(message, cancelled);
  }
}

/** Splits the cuts into groups of at most `max` inputs. */
export function chunkCuts(plan: RenderPlan, max: number): RenderPlan[] {
  const size = Math.max(1, max);
  const chunks: RenderPlan[] = [];
  for (let i = 0; i < plan.cuts.length; i += size) {
    const cuts = plan.cuts.slice(i, i + size);
    const start = cuts[0]!.timelineStartSec;
    const totalFrames = cuts.reduce((s, c) => s + c.frames, 0);
    const totalSec = cuts.reduce((s, c) => s + c.durationSec, 0);
    chunks.push({ ...plan, cuts: cuts.map((c) => ({ ...c, timelineStartSec: c.timelineStartSec - start })), overlays: [], totalSec, totalFrames });
  }
  return chunks;
}

export async function renderTimeline(req: RenderRequest): Promise<RenderOutcome> {
  const dir = dirname(req.output);
  const tag = randomBytes(4).toString('hex');
  const tmp = join(dir, `.${basename(req.output)}.${tag}.part`);
  const scratch: string[] = [tmp];
  const parser = new MeasureParser();
  let processes = 0;
  let peak: number | undefined;
  const deadline = Date.now() + req.timeoutMs;

  /** Runs one process; its own output seconds map to the whole render's progress as `toFraction`. */
  const run = async (args: string[], toFraction: (seconds: number) => number) => {
    processes++;
    const r = await runProcess(req.ffmpeg, args, {
      timeoutMs: Math.max(1000, deadline - Date.now()),
      signal: req.signal,
      onStderr: (c) => parser.push(c),
      onStdout: (c) => {
        const s = progressSeconds(c);
        if (s !== undefined && req.plan.totalSec > 0) req.onProgress?.(Math.min(1, Math.max(0, toFraction(s))));
      },
      trackRss: req.trackRss,
      maxStderr: 16 * 1024,
      cwd: dir,
    });
    if (r.maxRssKiB) peak = Math.max(peak ?? 0, r.maxRssKiB);
    if (r.cancelled) throw new RenderError('cancelled', true);
    if (r.timedOut) throw new RenderError(`ffmpeg did not finish within ${Math.round(req.timeoutMs / 1000)} s`);
    if (r.code !== 0) throw new RenderError(`ffmpeg failed (${whyFailed(r)})`, false, /No space left on device/i.test(r.stderr));
  };

  try {
    const inputs = req.plan.cuts.length + req.plan.overlays.length;
    const single = inputs <= req.maxInputs;
    if (single) {
      const sheet = req.sheetFor?.(req.plan, 0, 0);
      await run(timelineArgs({ plan: req.plan, cutInputs: req.cutInputs, overlayInputs: req.overlayInputs, output: tmp, encode: req.encode, measure: req.measure, ...(sheet ? { sheet } : {}) }), (s) => s / req.plan.totalSec);
      parser.finishFreeze(req.plan.totalSec);
    } else {
      const chunks = chunkCuts(req.plan, req.maxInputs);
      const files: string[] = [];
      let offset = 0;
      let first = 0;
      const chunkEncode: EncodeSettings = { ...req.encode, audio: 'pcm', container: 'nut' };
      for (const [i, chunk] of chunks.entries()) {
        const file = join(dir, `.${basename(req.output)}.${tag}.chunk${i}.nut`);
        scratch.push(file);
        files.push(file);
        parser.setOffset(offset);
        const cutInputs = req.cutInputs.slice(first, first + chunk.cuts.length);
        // Chunks measure the cuts' own sound and pictures; the mix is measured in the last pass.
        const sheet = req.sheetFor?.(chunk, first, offset);
        await run(timelineArgs({ plan: chunk, cutInputs, overlayInputs: [], output: file, encode: chunkEncode, measure: req.measure, ...(sheet ? { sheet } : {}) }), (s) => ((offset + Math.min(s, chunk.totalSec)) / req.plan.totalSec) * 0.9);
        parser.finishFreeze(chunk.totalSec);
        parser.result.mixLevels.length = 0;
        offset += chunk.totalSec;
        first += chunk.cuts.length;
      }
      const list = join(dir, `.${basename(req.output)}.${tag}.concat.txt`);
      scratch.push(list);
      // Each chunk lasts its frames exactly: said in the list, so the join does not take a container's idea of
      // its length (NUT's counts the B-frame delay), and the next chunk's first frame lands on its tick.
      const entries = files.map((f, i) => `file '${f.replace(/'/g, "'\\''")}'\nduration ${num((chunks[i]!.totalFrames * req.plan.fpsDen) / req.plan.fpsNum)}`);
      await writeFile(list, `ffconcat version 1.0\n${entries.join('\n')}\n`);
      parser.setOffset(0);
      await run(concatArgs({ plan: req.plan, listFile: list, overlayInputs: req.overlayInputs, output: tmp, encode: req.encode, measure: req.measure }), (s) => 0.9 + (s / req.plan.totalSec) * 0.1);
    }
    if (req.verifyWith) {
      const problem = await verifyOutput(req.verifyWith, tmp, req.plan, req.signal);
      if (problem) throw new RenderError(`the output is not what was asked: ${problem}; nothing was kept`);
    }
    await rename(tmp, req.output);
    scratch.shift();
    return { path: req.output, measurements: parser.result, processes, ...(peak ? { ffmpegMaxRssKiB: peak } : {}) };
  } finally {
    await Promise.all(scratch.map((f) => rm(f, { force: true })));
  }
}

/**
 * Whether a rendered file has what its plan asked for: a picture and a sound stream, the picture within a frame of
 * the planned length and the sound within a frame and 50 ms (AAC's priming). A description of what is wrong, or
 * undefined. ffmpeg can exit 0 with less (a source whose header lies about its length, a stream that ended early).
 */
export async function verifyOutput(ffprobe: string, file: string, plan: RenderPlan, signal?: AbortSignal): Promise<string | undefined> {
  const r = await runProcess(ffprobe, ['-v', 'error', '-hide_banner', '-show_entries', 'stream=codec_type,duration:format=duration', '-of', 'json', 'file:' + file], { timeoutMs: 30_000, signal });
  if (r.cancelled) throw new RenderError('cancelled', true);
  if (r.code !== 0) return `ffprobe cannot read it (${whyFailed(r)})`;
  let out: { streams?: { codec_type?: string; duration?: string }[]; format?: { duration?: string } };
  try {
    out = JSON.parse(r.stdout.toString('utf8'));
  } catch {
    return 'ffprobe gave no readable answer';
  }
  const frame = plan.fpsDen / plan.fpsNum;
  const lengthOf = (type: string) => {
    const st = out.streams?.find((x) => x.codec_type === type);
    if (!st) return undefined;
    const d = Number(st.duration ?? out.format?.duration);
    return Number.isFinite(d) ? d : NaN;
  };
  const video = lengthOf('video');
  const audio = lengthOf('audio');
  if (video === undefined) return 'it has no picture';
  if (audio === undefined) return 'it has no sound';
  if (!(Math.abs(video - plan.totalSec) <= frame + 1e-3)) return `its picture lasts ${video.toFixed(3)} s, not the planned ${plan.totalSec.toFixed(3)} s`;
  if (!(Math.abs(audio - plan.totalSec) <= frame + 0.05)) return `its sound lasts ${audio.toFixed(3)} s, not the planned ${plan.totalSec.toFixed(3)} s`;
  return undefined;
}
