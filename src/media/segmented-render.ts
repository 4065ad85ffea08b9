// A preview made of segments (segments.ts): the cuts not yet in the store are rendered, several to a process, each
// to its own file; then every segment is joined by stream copy with sample-exact PCM sound, the overlays are laid
// over the joined sound, and the mix is measured. The sheet's thumbnails and each cut's measurements come from the
// segments, so a cut already rendered costs nothing but its share of the join.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { RenderPlan } from '../edit/plan.js';
import { THUMBS_DIR, sheetFrames } from './contact-sheet.js';
import { cutLoudness, levelled } from './cut-loudness.js';
import { MeasureParser, finished, integratedLoudness, progressSeconds, type LoudnessFinish, type Measurements, type Span } from './measure.js';
import type { Limiter } from './probe.js';
import { whyFailed, runProcess } from './process.js';
import { RenderError } from './render.js';
import { SegmentStore, type SegmentRecord } from './segments.js';
import { SAMPLE_RATE, soundPlan } from './sound-plan.js';
import { concatArgs, finishArgs, muxSoundArgs, num, segmentsArgs, soundArgs, type EncodeSettings, type InputSpec, type SoundPart } from './timeline-args.js';
import { writeCaptionScripts } from './captions.js';

export interface SegmentedRequest {
  ffmpeg: string;
  limiter: Limiter;
  store: SegmentStore;
  plan: RenderPlan;
  cutInputs: InputSpec[];
  overlayInputs: InputSpec[];
  /** Per cut: what identifies its segment (see SegmentStore.key). */
  keys: string[];
  /** The joined preview; its folder also receives THUMBS_DIR (the sheet's thumbnails, in sheet order). */
  output: string;
  encode: EncodeSettings;
  /** Cuts per ffmpeg process. */
  maxInputs: number;
  thumbWidth: number;
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
  trackRss?: boolean;
  /** Run beside the join, once the sheet's thumbnails are in THUMBS_DIR (and awaited with it). */
  whileJoining?: () => Promise<void>;
}

export interface SegmentedOutcome {
  measurements: Measurements;
  finish?: LoudnessFinish;
  /** Per cut: the levelling gain given to its sound (level_dialogue), dB. */
  levelDb: number[];
  /** Per cut: the luma differences at its ends, when it is long enough to have them (see edgeDiffs). */
  edges: (number[] | undefined)[];
  processes: number;
  rendered: number;
  /** The timeline's sound was made beside the segments (one process of them left a slot free), the join only copied. */
  soundAhead: boolean;
  /** The segment processes ran on one thread each (they filled the ffmpeg slots). */
  oneThreadEach: boolean;
  reused: number;
  ffmpegMaxRssKiB?: number;
}

/** The cut's own frames to keep as thumbnails: first, middle and last (as the sheet shows them). */
function localSheetFrames(plan: RenderPlan, cut: number): number[] {
  const first = plan.cuts.slice(0, cut).reduce((s, c) => s + c.frames, 0);
  return sheetFrames(plan).filter((f) => f.cut === cut + 1).map((f) => f.frame - first);
}

/** One cut's measurements as a segments process prints them (see segmentsArgs). */
class CutMeasurements {
  readonly levels = new MeasureParser();
  readonly black: Span[] = [];
  readonly frozen: Span[] = [];
  /** Luma differences at the cut's ends (see edgeDiffs in timeline-args.ts). */
  readonly edges: number[] = [];
  private open: { black?: number; freeze?: number } = {};

  mark(kind: string, value: number): void {
    if (kind === 'ed') this.edges.push(value);
    else if (kind === 'vb') this.open.black = value;
    else if (kind === 'fs') this.open.freeze = value;
    else if (kind === 've' && this.open.black !== undefined) {
      this.black.push({ from: this.open.black, to: value });
      this.open.black = undefined;
    } else if (kind === 'fe' && this.open.freeze !== undefined) {
      this.frozen.push({ from: this.open.freeze, to: value });
      this.open.freeze = undefined;
    }
  }

  /** Spans still open when the cut ended last to its end. */
  finish(durationSec: number): void {
    if (this.open.black !== undefined) this.black.push({ from: this.open.black, to: durationSec });
    if (this.open.freeze !== undefined) this.frozen.push({ from: this.open.freeze, to: durationSec });
    this.open = {};
  }
}

/** Routes one process's measurement lines to each cut's measurements, by the names that carry its place. */
function routeMeasurements(cuts: CutMeasurements[]): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl + 1);
      buf = buf.slice(nl + 1);
      const level = /^\[(?:ametadata@)?cutlevels_(\d+) @/.exec(line);
      if (level) {
        cuts[Number(level[1])]?.levels.push(line.replace(`cutlevels_${level[1]}`, 'cutlevels'));
        continue;
      }
      const mark = /^\[metadata@(vb|ve|fs|fe|ed)_(\d+) @ [^\]]+\] lavfi\.[\w.]+=(-?[\d.]+)/.exec(line);
      if (mark) cuts[Number(mark[2])]?.mark(mark[1]!, Number(mark[3]));
    }
  };
}

export async function renderSegmented(req: SegmentedRequest): Promise<SegmentedOutcome> {
  const { store } = req;
  let plan = req.plan;
  await mkdir(store.dir, { recursive: true });
  const deadline = Date.now() + req.timeoutMs;
  let processes = 0;
  let peak: number | undefined;
  const run = async (args: string[], cwd: string, onStderr: (c: string) => void, onSeconds: (s: number) => void, signal = req.signal) => {
    const r = await req.limiter.run(() => {
      processes++;
      return runProcess(req.ffmpeg, args, {
        timeoutMs: Math.max(1000, deadline - Date.now()),
        signal,
        onStderr,
        onStdout: (c) => {
          const s = progressSeconds(c);
          if (s !== undefined) onSeconds(s);
        },
        trackRss: req.trackRss,
        maxStderr: 16 * 1024,
        cwd,
      });
    });
    if (r.maxRssKiB) peak = Math.max(peak ?? 0, r.maxRssKiB);
    if (r.cancelled) throw new RenderError('cancelled', true);
    if (r.timedOut) throw new RenderError(`ffmpeg did not finish within ${Math.round(req.timeoutMs / 1000)} s`);
    if (r.code !== 0) throw new RenderError(`ffmpeg failed (${whyFailed(r)})`, false, /No space left on device/i.test(r.stderr));
  };

  // 1. The segments there are; the rest rendered, batches side by side within the ffmpeg limit.
  const records: (SegmentRecord | undefined)[] = await Promise.all(req.keys.map((k) => store.get(k)));
  // Levelling: each cut's loudness (kept with its segment, else measured from its source, sound only), then the
  // gains that even the cuts out, applied where their sound is placed (the segments keep their own).
  let lufs: (number | null)[] | undefined;
  if (plan.levelDialogue) {
    lufs = await cutLoudness({ ffmpeg: req.ffmpeg, plan, cutInputs: req.cutInputs, known: records.map((r) => r?.lufs), maxInputs: req.maxInputs, timeoutMs: Math.max(1000, deadline - Date.now()), signal: req.signal, turn: (work) => req.limiter.run(work) });
    plan = levelled(plan, lufs);
  }
  // A cut that appears twice (the same shot used again) is rendered once.
  const missing = records.flatMap((r, i) => (r || req.keys.indexOf(req.keys[i]!) !== i ? [] : [i]));
  const missingSec = missing.reduce((s, i) => s + plan.cuts[i]!.durationSec, 0);
  const done = new Map<number, number>();
  const report = () => req.onProgress?.(missingSec ? Math.min(1, [...done.values()].reduce((a, b) => a + b, 0) / missingSec) * 0.85 : 0.85);
  // Spread over as many processes as may run at once: one process's filter graph runs on one thread, so twelve
  // cuts in one process leave the other core half idle (bench/README.md: 8 s as two processes of six, 9.6 s as one).
  const perProcess = Math.max(1, Math.min(req.maxInputs, Math.ceil(missing.length / Math.max(1, req.limiter.limit))));
  const batches: number[][] = [];
  for (let i = 0; i < missing.length; i += perProcess) batches.push(missing.slice(i, i + perProcess));
  // A lone segment process leaves an ffmpeg slot free: the timeline's sound (the join's sound work, about half of
  // what a one-cut re-preview waited for) is made in it meanwhile, and the join then only copies (bench/README.md).
  const soundBeside = batches.length > 0 && batches.length < req.limiter.limit;
  // Processes that fill the ffmpeg slots run single-threaded: side by side, each one's threads for every core
  // contend (bench/README.md: 6.1 s -> 4.6 s for 12 cuts in two). The sound made beside fills a slot only when it is
  // about as much work as the cuts, i.e. when they are a small part of the timeline it spans: a lone cut of a quarter
  // of it or less is made on one thread beside it (2.2 s -> 2.0 s, 5 s of 60), a longer one keeps its threads (30 s
  // of 60: 6.3 s on one thread, 4.9 s with them; a lone 45 s cut at 1080p: 13.2 s, 9.3 s).
  const oneThreadEach = batches.length >= req.limiter.limit || (soundBeside && missingSec <= plan.totalSec / 4);
  const renderBatches = () => Promise.all(batches.map(async (batch, b) => {
    const made = batch.map((i) => ({ i, scratch: store.scratch(req.keys[i]!), thumbFrames: localSheetFrames(plan, i) }));
    const parsers = batch.map(() => new CutMeasurements());
    // Captions burned into a segment: its script in the store's folder (the process's), named like its scratch.
    const captionFiles = new Map<number, string>();
    const captionPaths: string[] = [];
    for (const m of made) {
      const prefix = basename(m.scratch.video).replace(/\.nut$/, '');
      const written = await writeCaptionScripts(store.dir, [plan.cuts[m.i]!], prefix);
      for (const [index, file] of written.files) captionFiles.set(index, file);
      captionPaths.push(...written.paths);
    }
    const args = segmentsArgs({
      plan,
      cuts: batch,
      cutInputs: batch.map((i) => req.cutInputs[i]!),
      outputs: made.map((m) => ({ file: m.scratch.video, thumbs: m.scratch.thumbPattern, thumbFrames: m.thumbFrames })),
      encode: { ...req.encode, audio: 'pcm', container: 'nut' },
      thumbWidth: req.thumbWidth,
      oneThread: oneThreadEach,
      ...(captionFiles.size ? { captionFiles } : {}),
    });
    const batchSec = batch.reduce((s, i) => s + plan.cuts[i]!.durationSec, 0);
    try {
      // Progress from each cut's sound measured so far (every 100 ms of it): ffmpeg's own -progress follows its
      // slowest output, and the thumbnails' outputs get a frame only at a cut's start, middle and end.
      const route = routeMeasurements(parsers);
      const onStderr = (c: string) => {
        route(c);
        done.set(b, batch.reduce((sum, i, k) => sum + Math.min(plan.cuts[i]!.durationSec, (parsers[k]!.levels.result.cutLevels.at(-1)?.t ?? 0) + 0.1), 0));
        report();
      };
      await run(args, store.dir, onStderr, () => {});
      for (const [k, m] of made.entries()) {
        const cut = plan.cuts[m.i]!;
        // ffmpeg may exit 0 having written nothing for a cut (a source that ends before it, whatever its header says).
        if (!(await stat(m.scratch.video).then((st) => st.size > 0, () => false))) {
          throw new RenderError(`ffmpeg made nothing for cut ${m.i + 1}: its source holds no media in [${cut.inSec.toFixed(3)}, ${(cut.inSec + cut.durationSec).toFixed(3)}) s (it may be shorter than it says)`);
        }
        const measured = parsers[k]!;
        measured.finish(cut.durationSec);
        const record: SegmentRecord = {
          frames: cut.frames,
          ...(lufs ? { lufs: lufs[m.i]! } : {}),
          thumbs: m.thumbFrames.length,
          cutLevels: measured.levels.result.cutLevels,
          black: measured.black,
          frozen: measured.frozen,
          ...(measured.edges.length ? { edges: measured.edges } : {}),
        };
        await store.put(req.keys[m.i]!, m.scratch, record);
        records[m.i] = record;
      }
      done.set(b, batchSec);
      report();
    } catch (err) {
      await Promise.all(made.map((m) => store.discard(m.scratch)));
      throw err;
    } finally {
      await Promise.all(captionPaths.map((f) => rm(f, { force: true })));
    }
  }));

  const dir = dirname(req.output);
  const tag = randomBytes(4).toString('hex');
  const scratch = (what: string) => join(dir, `.${basename(req.output)}.${tag}.${what}`);
  const temps: string[] = [];
  /** A concat list of these cuts' segments, each lasting its frames exactly (for the join of their pictures). */
  const writeList = async (what: string, cuts: number[]) => {
    const file = scratch(what);
    temps.push(file);
    const entries = cuts.map((i) => `file '${store.videoOf(req.keys[i]!).replace(/'/g, "'\\''")}'\nduration ${num((plan.cuts[i]!.frames * plan.fpsDen) / plan.fpsNum)}`);
    await writeFile(file, `ffconcat version 1.0\n${entries.join('\n')}\n`);
    return file;
  };
  // Where each cut's sound plays (the join places each segment's sound in its slot).
  const sounds = soundPlan(plan, req.cutInputs);
  const parser = new MeasureParser();
  try {
    const sound = soundBeside ? soundAhead(soundParts(records)) : undefined;
    try {
      await renderBatches();
    } catch (err) {
      sound?.stop();
      await sound?.ended;
      throw err;
    }

    // Repeated cuts take their first occurrence's segment.
    records.forEach((r, i) => (records[i] = r ?? records[req.keys.indexOf(req.keys[i]!)]));

    // 2. The sheet's thumbnails, in sheet order, and each cut's measurements placed on the timeline.
    await mkdir(join(dir, THUMBS_DIR), { recursive: true });
    let n = 0;
    const measurements: Measurements = { cutLevels: [], mixLevels: [], black: [], frozen: [] };
    let frames = 0;
    for (const [i, cut] of plan.cuts.entries()) {
      const r = records[i]!;
      for (let k = 0; k < r.thumbs; k++) await copyFile(store.thumbOf(req.keys[i]!, k), join(dir, THUMBS_DIR, `t${String(n++).padStart(5, '0')}.png`));
      // Where the join put it: after the frames of the cuts before.
      const at = (frames * plan.fpsDen) / plan.fpsNum;
      frames += cut.frames;
      // Its sound where the join put it: its range's first sample, where its slot's first played sample would be.
      const s = sounds[i]!;
      const rangeAt = (s.slotStart + s.lead - s.skip) / SAMPLE_RATE;
      measurements.cutLevels.push(...r.cutLevels.map((l) => ({ ...l, t: l.t + rangeAt })));
      measurements.black.push(...r.black.map((s) => ({ from: s.from + at, to: s.to + at })));
      measurements.frozen.push(...r.frozen.map((s) => ({ from: s.from + at, to: s.to + at })));
    }

    // 3. The join: segments in order by stream copy; overlays over the joined sound; the mix measured (or all of the
    // sound taken as made ahead).
    const list = await writeList('concat.txt', plan.cuts.map((_, i) => i));
    const tmp = scratch('part');
    temps.push(tmp);
    const onSeconds = (s: number) => req.onProgress?.(0.85 + 0.12 * Math.min(1, s / plan.totalSec));
    const joining = async () => {
      if (sound) {
        const failed = await sound.ended;
        if (failed) throw failed;
        return run(muxSoundArgs({ listFile: list, sound: sound.file, output: tmp }), dir, () => {}, onSeconds);
      }
      return run(concatArgs({ plan, listFile: list, sound: { parts: soundParts(records), plan: sounds }, overlayInputs: req.overlayInputs, output: tmp, encode: req.encode, measure: true }), dir, (c) => parser.push(c), onSeconds);
    };
    // The caller's work on the thumbnails (the sheet) runs beside the join.
    const settled = await Promise.allSettled([joining(), req.whileJoining?.()]);
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    // A loudness target: the sound brought to it in a last pass (the picture copied).
    const finish = plan.loudness ? await finishLoudness(tmp) : undefined;
    await rename(finish?.file ?? tmp, req.output);

    measurements.mixLevels = parser.result.mixLevels;
    measurements.blocks = parser.result.blocks;
    measurements.truePeaks = parser.result.truePeaks;
    void store.evict().catch(() => {});
    return { measurements, ...(finish ? { finish: finish.report } : {}), levelDb: plan.cuts.map((c) => c.levelDb ?? 0), edges: records.map((r) => r?.edges), processes, rendered: missing.length, soundAhead: !!sound, oneThreadEach, reused: plan.cuts.length - missing.length, ...(peak ? { ffmpegMaxRssKiB: peak } : {}) };
  } finally {
    await Promise.all(temps.map((f) => rm(f, { force: true })));
  }

  /** The timeline's sound in order: the segments there are, and the cuts still to render, from their sources. */
  function soundParts(have: (SegmentRecord | undefined)[]): SoundPart[] {
    return have.map((r, i) => (r ? { cut: i, segment: store.videoOf(req.keys[i]!) } : { cut: i, input: req.cutInputs[i]! }));
  }

  /**
   * Brings the joined preview to the plan's loudness target: the gain its mix's measured loudness asks, its peaks
   * limited; once more if the limiter took it more than half a LU off (peaks high for its loudness).
   */
  async function finishLoudness(joined: string): Promise<{ file: string; report: LoudnessFinish } | undefined> {
    const target = plan.loudness!;
    const measured = integratedLoudness(parser.result.blocks?.mix);
    if (measured === undefined) return undefined;
    const file = scratch('finished');
    temps.push(file);
    let gainDb = target.targetLufs - measured;
    let report: LoudnessFinish | undefined;
    for (let pass = 0; pass < 2; pass++) {
      const final = new MeasureParser();
      await run(finishArgs({ input: joined, output: file, gainDb, truePeakDb: target.truePeakDb, encode: req.encode }), dir, (c) => final.push(c), () => {});
      report = finished(measured, gainDb, final.result);
      if (report.lufs === undefined || Math.abs(report.lufs - target.targetLufs) <= 0.5) break;
      gainDb += target.targetLufs - report.lufs;
    }
    return { file, report: report! };
  }

  /** Starts the sound's process; `ended` settles with its error, or undefined when the sound is made. */
  function soundAhead(parts: SoundPart[]): { file: string; ended: Promise<unknown>; stop: () => void } {
    const file = scratch('sound.m4a');
    temps.push(file);
    const stopper = new AbortController();
    const stop = () => stopper.abort();
    if (req.signal?.aborted) stop();
    req.signal?.addEventListener('abort', stop, { once: true });
    const ended = run(soundArgs({ plan, parts, sounds, overlayInputs: req.overlayInputs, output: file, encode: req.encode }), dir, (c) => parser.push(c), () => {}, stopper.signal).then(
      () => undefined,
      (err: unknown) => err ?? new RenderError('the sound process failed'),
    );
    void ended.finally(() => req.signal?.removeEventListener('abort', stop));
    return { file, ended, stop };
  }
}
