// Rendering a timeline with ffmpeg: one process when the inputs are few, else chunks of cuts rendered one after
// another (each input costs ffmpeg tens of MB) and joined with their overlays in a last pass (their sounds crossfaded
// where the join between them is, as inside one). Output goes to a temporary name in the target's folder and is
// renamed on success; a failure or cancellation removes it.
import { randomBytes } from 'node:crypto';
import { rm, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { RenderPlan } from '../edit/plan.js';
import { cutLoudness, levelled } from './cut-loudness.js';
import {
  MeasureParser,
  finished,
  integratedLoudness,
  progressSeconds,
  type LoudnessFinish,
  type Measurements,
} from './measure.js';
import { Limiter } from './probe.js';
import { whyFailed, runProcess } from './process.js';
import { writeCaptionScripts } from './captions.js';
import { RenderError } from './render-error.js';
import { SAMPLE_RATE, crossfadeJoins, soundPlan } from './sound-plan.js';
import { shapeCrossfades } from './crossfade-shape.js';
import {
  chunkSoundSpan,
  concatArgs,
  finishArgs,
  num,
  timelineArgs,
  type EncodeSettings,
  type TimelineJob,
} from './timeline-args.js';

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
  /** A loudness target's last pass: the mix as made, the gain given, the output as measured. */
  finish?: LoudnessFinish;
  /** Per cut: the levelling gain given to its sound (level_dialogue), dB. */
  levelDb: number[];
  processes: number;
  /** Peak RSS of the largest ffmpeg process, KiB (when tracked). */
  ffmpegMaxRssKiB?: number;
}

export { RenderError };

/** ffmpeg processes reading the crossfades' sound at once (crossfade-shape.ts). */
const SHAPE_READS = 4;

/** Splits the cuts into groups of at most `max` inputs. */
export function chunkCuts(plan: RenderPlan, max: number): RenderPlan[] {
  const size = Math.max(1, max);
  const chunks: RenderPlan[] = [];
  for (let i = 0; i < plan.cuts.length; i += size) {
    const cuts = plan.cuts.slice(i, i + size);
    const start = cuts[0]!.timelineStartSec;
    const totalFrames = cuts.reduce((s, c) => s + c.frames, 0);
    const totalSec = cuts.reduce((s, c) => s + c.durationSec, 0);
    chunks.push({
      ...plan,
      cuts: cuts.map((c) => ({ ...c, timelineStartSec: c.timelineStartSec - start })),
      overlays: [],
      totalSec,
      totalFrames,
    });
  }
  return chunks;
}

export async function renderTimeline(req: RenderRequest): Promise<RenderOutcome> {
  const dir = dirname(req.output);
  const tag = randomBytes(4).toString('hex');
  let plan = req.plan;
  // With a loudness target the timeline is made with PCM sound first (no second lossy encoding), then finished.
  const target = plan.loudness;
  const tmp = join(dir, `.${basename(req.output)}.${tag}.part`);
  const made = target ? `${tmp}.nut` : tmp;
  const scratch: string[] = [tmp, ...(target ? [made] : [])];
  // (NUT, as for chunks: it keeps the frames' exact times, where Matroska rounds them to the millisecond.)
  const encode: EncodeSettings = target ? { ...req.encode, audio: 'pcm', container: 'nut' } : req.encode;
  const measure = req.measure || !!target;
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
        if (s !== undefined && plan.totalSec > 0) req.onProgress?.(Math.min(1, Math.max(0, toFraction(s))));
      },
      trackRss: req.trackRss,
      maxStderr: 16 * 1024,
      cwd: dir,
    });
    if (r.maxRssKiB) peak = Math.max(peak ?? 0, r.maxRssKiB);
    if (r.cancelled) throw new RenderError('cancelled', true);
    if (r.timedOut) throw new RenderError(`ffmpeg did not finish within ${Math.round(req.timeoutMs / 1000)} s`);
    if (r.code !== 0)
      throw new RenderError(`ffmpeg failed (${whyFailed(r)})`, false, /No space left on device/i.test(r.stderr));
  };

  try {
    // Levelling: each cut's own loudness measured from its source (sound only), the gains that even them out.
    if (plan.levelDialogue)
      plan = levelled(
        plan,
        await cutLoudness({
          ffmpeg: req.ffmpeg,
          plan,
          cutInputs: req.cutInputs,
          maxInputs: req.maxInputs,
          timeoutMs: Math.max(1000, deadline - Date.now()),
          signal: req.signal,
        }),
      );
    const inputs = plan.cuts.length + plan.overlays.length;
    const single = inputs <= req.maxInputs;
    // Where every cut's sound goes and which joins are crossfaded, decided over the whole timeline (a join between
    // chunks is a join like any); each crossfade's shape, from the sound it overlaps (crossfade-shape.ts).
    const sounds = soundPlan(plan, req.cutInputs);
    const crossfades = crossfadeJoins(plan, sounds, req.cutInputs);
    // (Two short reads of the sources per join, up to maxInputs a process: a few processes at a time.)
    const reads = new Limiter(SHAPE_READS);
    plan = await shapeCrossfades(req.ffmpeg, plan, sounds, crossfades, req.cutInputs, {
      ...(req.signal ? { signal: req.signal } : {}),
      turn: (work) => reads.run(work),
      maxInputs: req.maxInputs,
    });
    // Captions burned in: each cut's script beside the output, where the processes run.
    const captions = await writeCaptionScripts(dir, plan.cuts, `.captions.${tag}`);
    scratch.push(...captions.paths);
    const captionFiles = captions.files.size ? { captionFiles: captions.files } : {};
    if (single) {
      const sheet = req.sheetFor?.(plan, 0, 0);
      await run(
        timelineArgs({
          plan: plan,
          cutInputs: req.cutInputs,
          overlayInputs: req.overlayInputs,
          output: made,
          encode,
          measure,
          ...(sheet ? { sheet } : {}),
          ...captionFiles,
        }),
        (s) => s / plan.totalSec,
      );
      parser.finishFreeze(plan.totalSec);
    } else {
      const chunks = chunkCuts(plan, req.maxInputs);
      let taken = 0;
      const chunkSounds = chunks.map((c) => sounds.slice(taken, (taken += c.cuts.length)));
      // Each chunk's joins and the two at its ends (with the chunks beside it): its first and last cut play on into
      // half of a crossfade there, and the join of the chunks' sound overlaps them (concatArgs).
      taken = 0;
      const chunkCrossfades = chunks.map((c) => {
        const first = taken;
        taken += c.cuts.length;
        return Array.from({ length: c.cuts.length + 1 }, (_, k) => crossfades[first + k] ?? 0);
      });
      const spans = chunks.map((_, i) => chunkSoundSpan(chunkSounds[i]!, chunkCrossfades[i]!));
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
        await run(
          timelineArgs({
            plan: chunk,
            cutInputs,
            overlayInputs: [],
            output: file,
            encode: chunkEncode,
            measure,
            chunkSound: chunkSounds[i],
            chunkCrossfades: chunkCrossfades[i],
            ...(sheet ? { sheet } : {}),
            ...captionFiles,
          }),
          (s) => ((offset + Math.min(s, chunk.totalSec)) / plan.totalSec) * 0.9,
        );
        parser.finishFreeze(chunk.totalSec);
        parser.result.mixLevels.length = 0;
        offset += chunk.totalSec;
        first += chunk.cuts.length;
      }
      // Each chunk lasts its frames exactly: said in the list, so the join does not take a container's idea of
      // its length (NUT's counts the B-frame delay), and the next chunk's first frame lands on its tick. Its sound
      // lasts its cuts' slots, end to end, and the crossfades' halves beyond them: joined from a list of its own
      // saying so, then crossfaded where they overlap.
      const writeList = async (what: string, seconds: (chunk: RenderPlan, i: number) => number) => {
        const list = join(dir, `.${basename(req.output)}.${tag}.${what}`);
        scratch.push(list);
        const entries = files.map(
          (f, i) => `file '${f.replace(/'/g, "'\\''")}'\nduration ${num(seconds(chunks[i]!, i))}`,
        );
        await writeFile(list, `ffconcat version 1.0\n${entries.join('\n')}\n`);
        return list;
      };
      const list = await writeList('concat.txt', (c) => (c.totalFrames * plan.fpsDen) / plan.fpsNum);
      const soundList = await writeList('concat-sound.txt', (_, i) => spans[i]!.samples / SAMPLE_RATE);
      parser.setOffset(0);
      await run(
        concatArgs({
          plan: plan,
          listFile: list,
          sound: {
            listFile: soundList,
            spans,
            // (The shape of a join between chunks: the cut after it says, as inside a chunk.)
            equalGain: chunks.map((c) => !!c.cuts[0]!.equalGainJoin),
          },
          overlayInputs: req.overlayInputs,
          output: made,
          encode,
          measure,
        }),
        (s) => 0.9 + (s / plan.totalSec) * 0.1,
      );
    }
    let finish: LoudnessFinish | undefined;
    if (target) {
      // The mix's measured loudness asks a gain; once more if the limiter took it more than half a LU off.
      const measured = integratedLoudness(parser.result.blocks?.mix);
      let gainDb = measured === undefined ? 0 : target.targetLufs - measured;
      for (let pass = 0; pass < 2; pass++) {
        const final = new MeasureParser();
        const r = await runProcess(
          req.ffmpeg,
          finishArgs({ input: made, output: tmp, gainDb, truePeakDb: target.truePeakDb, encode: req.encode }),
          {
            timeoutMs: Math.max(1000, deadline - Date.now()),
            signal: req.signal,
            onStderr: (c) => final.push(c),
            maxStderr: 16 * 1024,
            cwd: dir,
          },
        );
        processes++;
        if (r.cancelled) throw new RenderError('cancelled', true);
        if (r.timedOut) throw new RenderError(`ffmpeg did not finish within ${Math.round(req.timeoutMs / 1000)} s`);
        if (r.code !== 0)
          throw new RenderError(
            `ffmpeg failed bringing the sound to its loudness (${whyFailed(r)})`,
            false,
            /No space left on device/i.test(r.stderr),
          );
        finish = finished(measured, gainDb, final.result);
        if (measured === undefined || finish.lufs === undefined || Math.abs(finish.lufs - target.targetLufs) <= 0.5)
          break;
        gainDb += target.targetLufs - finish.lufs;
      }
    }
    if (req.verifyWith) {
      const problem = await verifyOutput(req.verifyWith, tmp, plan, req.signal);
      if (problem) throw new RenderError(`the output is not what was asked: ${problem}; nothing was kept`);
    }
    await rename(tmp, req.output);
    scratch.shift();
    return {
      path: req.output,
      measurements: parser.result,
      ...(finish ? { finish } : {}),
      levelDb: plan.cuts.map((c) => c.levelDb ?? 0),
      processes,
      ...(peak ? { ffmpegMaxRssKiB: peak } : {}),
    };
  } finally {
    await Promise.all(scratch.map((f) => rm(f, { force: true })));
  }
}

/**
 * Whether a rendered file has what its plan asked for: a picture and a sound stream, the picture within a frame of
 * the planned length and the sound within a frame and 50 ms (AAC's priming). A description of what is wrong, or
 * undefined. ffmpeg can exit 0 with less (a source whose header lies about its length, a stream that ended early).
 */
export async function verifyOutput(
  ffprobe: string,
  file: string,
  plan: RenderPlan,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const r = await runProcess(
    ffprobe,
    [
      '-v',
      'error',
      '-hide_banner',
      '-show_entries',
      'stream=codec_type,duration:format=duration',
      '-of',
      'json',
      'file:' + file,
    ],
    { timeoutMs: 30_000, signal },
  );
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
  if (!(Math.abs(video - plan.totalSec) <= frame + 1e-3))
    return `its picture lasts ${video.toFixed(3)} s, not the planned ${plan.totalSec.toFixed(3)} s`;
  if (!(Math.abs(audio - plan.totalSec) <= frame + 0.05))
    return `its sound lasts ${audio.toFixed(3)} s, not the planned ${plan.totalSec.toFixed(3)} s`;
  return undefined;
}
