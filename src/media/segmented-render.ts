// A preview made of segments (segments.ts): the cuts not yet in the store are rendered, the first of them alone and
// first (a person watches it while the rest render: onReady; its clip written beside its segment by the tee muxer),
// the others several to a process, each to its own file;
// then the timeline's sound is made from the segments' sound (placed, levelled, the overlays laid over it) and
// encoded in one process while another measures it, and the pictures are joined to it by stream copy. The sheet's
// thumbnails and each cut's measurements (its loudness too) come from the segments, so a cut already rendered costs
// nothing but its share of the sound.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { askedLevelDb, type RenderPlan } from '../edit/plan.js';
import { THUMBS_DIR, sheetFrames } from './contact-sheet.js';
import { cutLoudness, levelled } from './cut-loudness.js';
import {
  MeasureParser,
  finished,
  integratedLoudness,
  progressSeconds,
  type LoudnessFinish,
  type Measurements,
  type Span,
} from './measure.js';
import type { Limiter } from './probe.js';
import { whyFailed, runProcess } from './process.js';
import { RenderError } from './render.js';
import { SegmentStore, type SegmentRecord } from './segments.js';
import { SAMPLE_RATE, crossfadeJoins, soundPlan } from './sound-plan.js';
import { shapeCrossfades } from './crossfade-shape.js';
import {
  concatArgs,
  finishArgs,
  muxSoundArgs,
  num,
  segmentsArgs,
  soundArgs,
  type EncodeSettings,
  type InputSpec,
  type SoundJob,
  type SoundPart,
} from './timeline-args.js';
import { writeCaptionScripts } from './captions.js';
import { mergeMeasured, mixIdentity, spanJob, type MixIdentity, type MixReuse } from './mix-memory.js';

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
  /**
   * A cut's segment is made (or was there): a clip of it can be played (cutClipArgs), or is made already (`clip`,
   * at headClip's path). Each cut once, in no set order.
   */
  onReady?: (cut: number, clip?: string) => void;
  /** Where the clip of the first cut rendered goes: its process writes it beside the segment (no process after). */
  headClip?: (cut: number) => string;
  /**
   * What the timeline's sound is besides its cuts (its overlays' media and the plan but its cuts): given, its
   * measurements are remembered, and a later timeline that differs in some cuts measures only around them
   * (mix-memory.ts).
   */
  mixKey?: string;
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
  /** The first cut to render was rendered alone and first (before the rest), to be watched while they render. */
  firstAlone: boolean;
  /** The timeline's sound was made while the lone cut to render rendered; the join only copied. */
  soundFirst: boolean;
  /** That cut rendered on one thread (short against the timeline: the sound's encode is the longer). */
  headOneThread: boolean;
  /** Seconds of the timeline's sound measured (the rest taken from an earlier timeline's measurements). */
  soundMeasuredSec: number;
  /** The segment processes ran on one thread each (they filled the ffmpeg slots). */
  oneThreadEach: boolean;
  reused: number;
  ffmpegMaxRssKiB?: number;
}

/** The cut's own frames to keep as thumbnails: first, middle and last (as the sheet shows them). */
function localSheetFrames(plan: RenderPlan, cut: number): number[] {
  const first = plan.cuts.slice(0, cut).reduce((s, c) => s + c.frames, 0);
  return sheetFrames(plan)
    .filter((f) => f.cut === cut + 1)
    .map((f) => f.frame - first);
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
      const loud = /^\[ametadata@loud_seg_(\d+) @/.exec(line);
      if (loud) {
        cuts[Number(loud[1])]?.levels.push(line.replace(`loud_seg_${loud[1]}`, 'loud_seg'));
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
  const run = async (
    args: string[],
    cwd: string,
    onStderr: (c: string) => void,
    onSeconds: (s: number) => void,
    signal = req.signal,
  ) => {
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
    if (r.code !== 0)
      throw new RenderError(`ffmpeg failed (${whyFailed(r)})`, false, /No space left on device/i.test(r.stderr));
  };

  // 1. The segments there are (each cut playing one is ready at once); the rest rendered within the ffmpeg limit.
  const records: (SegmentRecord | undefined)[] = await Promise.all(req.keys.map((k) => store.get(k)));
  /** Every cut playing this key's segment is ready (the same shot used twice is rendered once). */
  const ready = (key: string) => req.keys.forEach((k, i) => k === key && req.onReady?.(i));
  for (const [i, r] of records.entries()) if (r) req.onReady?.(i);
  const missing = records.flatMap((r, i) => (r || req.keys.indexOf(req.keys[i]!) !== i ? [] : [i]));
  const missingSec = missing.reduce((s, i) => s + plan.cuts[i]!.durationSec, 0);
  const done = new Map<number, number>();
  const report = () =>
    req.onProgress?.(
      missingSec ? Math.min(1, [...done.values()].reduce((a, b) => a + b, 0) / missingSec) * 0.85 : 0.85,
    );
  // The first cut to render goes alone and first, with every thread (but see headOneThread): it is what a person
  // watching sees first (a
  // clip of it plays while the rest render). The rest, in timeline order, spread over as many processes as may run
  // at once: one process's filter graph runs on one thread, so twelve cuts in one process leave the other core half
  // idle (bench/README.md: 8 s as two processes of six, 9.6 s as one).
  const head = missing.slice(0, 1);
  const rest = missing.slice(head.length);
  const perProcess = Math.max(1, Math.min(req.maxInputs, Math.ceil(rest.length / Math.max(1, req.limiter.limit))));
  const batches: number[][] = [];
  for (let i = 0; i < rest.length; i += perProcess) batches.push(rest.slice(i, i + perProcess));
  // Processes that fill the ffmpeg slots run single-threaded: side by side, each one's threads for every core
  // contend (bench/README.md: 6.1 s -> 4.6 s for 12 cuts in two).
  const oneThreadEach = batches.length >= req.limiter.limit;
  const renderBatch = async (batch: number[], b: number, oneThread: boolean, withClip = false) => {
    const made = batch.map((i) => ({
      i,
      scratch: store.scratch(req.keys[i]!),
      thumbFrames: localSheetFrames(plan, i),
    }));
    // A clip written beside the first segment, under a scratch name in the store's folder (the process's).
    const clips = new Map(
      withClip && req.headClip
        ? made.map((m) => [m.i, `${basename(m.scratch.video).replace(/\.nut$/, '')}.clip.mp4`] as const)
        : [],
    );
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
      outputs: made.map((m) => ({
        file: clips.has(m.i) ? basename(m.scratch.video) : m.scratch.video,
        thumbs: m.scratch.thumbPattern,
        thumbFrames: m.thumbFrames,
      })),
      encode: { ...req.encode, audio: 'pcm', container: 'nut' },
      thumbWidth: req.thumbWidth,
      oneThread,
      ...(captionFiles.size ? { captionFiles } : {}),
      ...(clips.size ? { clips } : {}),
    });
    const batchSec = batch.reduce((s, i) => s + plan.cuts[i]!.durationSec, 0);
    try {
      // Progress from each cut's sound measured so far (every 100 ms of it): ffmpeg's own -progress follows its
      // slowest output, and the thumbnails' outputs get a frame only at a cut's start, middle and end.
      const route = routeMeasurements(parsers);
      const onStderr = (c: string) => {
        route(c);
        done.set(
          b,
          batch.reduce(
            (sum, i, k) =>
              sum + Math.min(plan.cuts[i]!.durationSec, (parsers[k]!.levels.result.cutLevels.at(-1)?.t ?? 0) + 0.1),
            0,
          ),
        );
        report();
      };
      await run(args, store.dir, onStderr, () => {});
      for (const [k, m] of made.entries()) {
        const cut = plan.cuts[m.i]!;
        // ffmpeg may exit 0 having written nothing for a cut (a source that ends before it, whatever its header says).
        if (
          !(await stat(m.scratch.video).then(
            (st) => st.size > 0,
            () => false,
          ))
        ) {
          throw new RenderError(
            `ffmpeg made nothing for cut ${m.i + 1}: its source holds no media in [${cut.inSec.toFixed(3)}, ${(cut.inSec + cut.durationSec).toFixed(3)}) s (it may be shorter than it says)`,
          );
        }
        const measured = parsers[k]!;
        measured.finish(cut.durationSec);
        // Its loudness as it plays without its own gain or asked level (what levelling compares: see cutLoudness).
        const loud = integratedLoudness(measured.levels.result.blocks?.seg);
        const record: SegmentRecord = {
          frames: cut.frames,
          lufs: loud === undefined ? null : Math.round((loud - (cut.gainDb ?? 0) - askedLevelDb(cut)) * 100) / 100,
          thumbs: m.thumbFrames.length,
          cutLevels: measured.levels.result.cutLevels,
          black: measured.black,
          frozen: measured.frozen,
          ...(measured.edges.length ? { edges: measured.edges } : {}),
        };
        await store.put(req.keys[m.i]!, m.scratch, record);
        records[m.i] = record;
        const clip = clips.get(m.i);
        if (clip) {
          const to = req.headClip!(m.i);
          await rename(join(store.dir, clip), to);
          req.onReady?.(m.i, to);
        }
        ready(req.keys[m.i]!);
      }
      done.set(b, batchSec);
      report();
    } catch (err) {
      await Promise.all(made.map((m) => store.discard(m.scratch)));
      throw err;
    } finally {
      await Promise.all(
        [...captionPaths, ...[...clips.values()].map((c) => join(store.dir, c))].map((f) => rm(f, { force: true })),
      );
    }
  };

  const dir = dirname(req.output);
  const tag = randomBytes(4).toString('hex');
  const scratch = (what: string) => join(dir, `.${basename(req.output)}.${tag}.${what}`);
  const temps: string[] = [];
  /** A concat list of these cuts' segments, each lasting its frames exactly (for the join of their pictures). */
  const writeList = async (what: string, cuts: number[]) => {
    const file = scratch(what);
    temps.push(file);
    const entries = cuts.map(
      (i) =>
        `file '${store.videoOf(req.keys[i]!).replace(/'/g, "'\\''")}'\nduration ${num((plan.cuts[i]!.frames * plan.fpsDen) / plan.fpsNum)}`,
    );
    await writeFile(file, `ffconcat version 1.0\n${entries.join('\n')}\n`);
    return file;
  };
  const parser = new MeasureParser();
  /** Processes side by side: one failing stops the others, and so does `also` (or the caller's cancelling). */
  const together = async (
    work: ((signal: AbortSignal) => Promise<unknown>)[],
    beside?: Promise<unknown>,
    also?: AbortSignal,
  ) => {
    const stopper = new AbortController();
    const stop = () => stopper.abort();
    if (req.signal?.aborted || also?.aborted) stop();
    req.signal?.addEventListener('abort', stop, { once: true });
    also?.addEventListener('abort', stop, { once: true });
    try {
      const settled = await Promise.allSettled([
        ...work.map((w) => w(stopper.signal).catch((err: unknown) => (stop(), Promise.reject(err)))),
        beside,
      ]);
      // The first failure that is not another's being stopped.
      const failures = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      const failure = failures.find((e) => !(e instanceof RenderError && e.cancelled)) ?? failures[0];
      if (failure) throw req.signal?.aborted ? new RenderError('cancelled', true) : failure;
    } finally {
      req.signal?.removeEventListener('abort', stop);
      also?.removeEventListener('abort', stop);
    }
  };
  // Levelling: each cut's loudness (measured as its segment was made; a segment kept by an older version, or a cut
  // whose sound is made before its segment, is measured from its source, sound only), and the gains that even the
  // cuts out, applied where the sound is placed (the segments keep their own).
  let sounds = soundPlan(plan, req.cutInputs);
  let crossfades: number[] = [];
  let identity: MixIdentity | undefined;
  let reuse: MixReuse | undefined;
  const level = async () => {
    if (plan.levelDialogue) {
      const lufs = await cutLoudness({
        ffmpeg: req.ffmpeg,
        plan,
        cutInputs: req.cutInputs,
        known: records.map((r) => r?.lufs),
        maxInputs: req.maxInputs,
        timeoutMs: Math.max(1000, deadline - Date.now()),
        signal: req.signal,
        turn: (work) => req.limiter.run(work),
      });
      plan = levelled(plan, lufs);
    }
    // Where each cut's sound plays (the join places each segment's sound in its slot).
    sounds = soundPlan(plan, req.cutInputs);
    crossfades = crossfadeJoins(plan, sounds, req.cutInputs);
    // Each crossfade's shape, from the sound it overlaps (crossfade-shape.ts).
    plan = await shapeCrossfades(req.ffmpeg, plan, sounds, crossfades, req.cutInputs, {
      ...(req.signal ? { signal: req.signal } : {}),
      turn: (work) => req.limiter.run(work),
      maxInputs: req.maxInputs,
    });
    // What of it an earlier timeline's measurements give (mix-memory.ts).
    if (req.mixKey) {
      identity = mixIdentity(req.mixKey, plan, req.keys, sounds);
      reuse = store.mixes.reuse(identity);
    }
  };
  /**
   * Where the join reads each cut's sound: its segment, or its source (by the chain its segment process uses, the
   * same samples) while the segment is not made, or where a join of it is crossfaded (a segment keeps its range's
   * sound only; the crossfade plays half of it beyond the range, as the one-graph render does).
   */
  const soundParts = (): SoundPart[] =>
    records.map((r, i) =>
      r && !crossfades[i] && !crossfades[i + 1]
        ? { cut: i, segment: store.videoOf(req.keys[i]!) }
        : { cut: i, input: req.cutInputs[i]! },
    );
  /** The measuring process's job: the span to measure, or none when nothing changed (see mix-memory.ts). */
  const measuring = (job: SoundJob): SoundJob | undefined => {
    if (!reuse) return job;
    return reuse.span.to > reuse.span.from ? spanJob(job, reuse.span) : undefined;
  };
  // A lone cut to render (one cut changed): the timeline's sound is encoded and measured while it renders (its own
  // sound read from its source by the chain its segment process uses, the same samples), and the join only copies
  // (bench/README.md). Otherwise the segments fill the ffmpeg slots, and the sound follows them.
  const soundFirst = missing.length === 1 && plan.cuts.length > 1;
  // A short lone cut renders on one thread, leaving the other core to the sound's encode, which is then the longer
  // (bench/README.md, first-frame); a long one keeps its threads (it is the longer: "A lone long cut").
  const headOneThread = soundFirst && plan.cuts[missing[0]!]!.durationSec * 4 <= plan.totalSec;
  const soundFile = scratch('sound.m4a');
  const stopEarly = new AbortController();
  try {
    let early: Promise<void> | undefined;
    let levelling: Promise<void> | undefined;
    if (soundFirst) {
      temps.push(soundFile);
      levelling = level();
      levelling.catch(() => {});
      early = (async () => {
        await levelling;
        const job = { plan, parts: soundParts(), sounds, crossfades, overlayInputs: req.overlayInputs };
        const measure = measuring(job);
        await together(
          [
            (signal) =>
              run(
                soundArgs({ ...job, output: { file: soundFile, encode: req.encode } }),
                dir,
                () => {},
                () => {},
                signal,
              ),
            ...(measure
              ? [
                  (signal: AbortSignal) =>
                    run(
                      soundArgs(measure),
                      dir,
                      (c) => parser.push(c),
                      () => {},
                      signal,
                    ),
                ]
              : []),
          ],
          undefined,
          stopEarly.signal,
        );
      })();
      early.catch(() => {});
    }
    try {
      if (head.length) await renderBatch(head, -1, headOneThread, true);
      await Promise.all(batches.map((batch, b) => renderBatch(batch, b, oneThreadEach)));
    } catch (err) {
      stopEarly.abort();
      await early?.catch(() => {});
      throw err;
    }

    // Repeated cuts take their first occurrence's segment.
    records.forEach((r, i) => (records[i] = r ?? records[req.keys.indexOf(req.keys[i]!)]));
    await (levelling ?? level());

    // 2. The sheet's thumbnails, in sheet order, and each cut's measurements placed on the timeline.
    await mkdir(join(dir, THUMBS_DIR), { recursive: true });
    let n = 0;
    const measurements: Measurements = { cutLevels: [], mixLevels: [], black: [], frozen: [] };
    let frames = 0;
    for (const [i, cut] of plan.cuts.entries()) {
      const r = records[i]!;
      for (let k = 0; k < r.thumbs; k++)
        await copyFile(store.thumbOf(req.keys[i]!, k), join(dir, THUMBS_DIR, `t${String(n++).padStart(5, '0')}.png`));
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

    // 3. The join: the segments' pictures by stream copy and their sound placed, the overlays laid over it, encoded,
    // in one process; the same sound measured in another beside it (the AAC encode is about as much work as the
    // measurements); the sheet tiled meanwhile. (Or, the sound made already, the pictures joined to it.)
    const list = await writeList(
      'concat.txt',
      plan.cuts.map((_, i) => i),
    );
    const tmp = scratch('part');
    temps.push(tmp);
    const onSeconds = (s: number) => req.onProgress?.(0.85 + 0.12 * Math.min(1, s / plan.totalSec));
    if (early) {
      await early;
      await together(
        [
          (signal) =>
            run(muxSoundArgs({ listFile: list, sound: soundFile, output: tmp }), dir, () => {}, onSeconds, signal),
        ],
        req.whileJoining?.(),
      );
    } else {
      const parts = soundParts();
      const measure = measuring({ plan, parts, sounds, crossfades, overlayInputs: req.overlayInputs });
      await together(
        [
          (signal) =>
            run(
              concatArgs({
                plan,
                listFile: list,
                sound: { parts, plan: sounds, crossfades },
                overlayInputs: req.overlayInputs,
                output: tmp,
                encode: req.encode,
                measure: false,
              }),
              dir,
              () => {},
              onSeconds,
              signal,
            ),
          ...(measure
            ? [
                (signal: AbortSignal) =>
                  run(
                    soundArgs(measure),
                    dir,
                    (c) => parser.push(c),
                    () => {},
                    signal,
                  ),
              ]
            : []),
        ],
        req.whileJoining?.(),
      );
    }
    // The whole timeline's sound measurements (what was measured, the rest from the earlier timeline), remembered.
    if (reuse) Object.assign(parser.result, mergeMeasured(reuse, parser.result));
    if (identity)
      store.mixes.remember(identity, {
        mixLevels: parser.result.mixLevels,
        blocks: parser.result.blocks,
        truePeaks: parser.result.truePeaks,
      });
    const soundMeasuredSec = reuse ? (reuse.span.to - reuse.span.from) / SAMPLE_RATE : plan.totalSec;
    // A loudness target: the sound brought to it in a last pass (the picture copied).
    const finish = plan.loudness ? await finishLoudness(tmp) : undefined;
    await rename(finish?.file ?? tmp, req.output);

    measurements.mixLevels = parser.result.mixLevels;
    measurements.blocks = parser.result.blocks;
    measurements.truePeaks = parser.result.truePeaks;
    void store.evict().catch(() => {});
    return {
      measurements,
      ...(finish ? { finish: finish.report } : {}),
      levelDb: plan.cuts.map((c) => c.levelDb ?? 0),
      edges: records.map((r) => r?.edges),
      processes,
      rendered: missing.length,
      firstAlone: head.length > 0 && rest.length > 0,
      soundFirst,
      headOneThread,
      soundMeasuredSec,
      oneThreadEach,
      reused: plan.cuts.length - missing.length,
      ...(peak ? { ffmpegMaxRssKiB: peak } : {}),
    };
  } finally {
    await Promise.all(temps.map((f) => rm(f, { force: true })));
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
      await run(
        finishArgs({ input: joined, output: file, gainDb, truePeakDb: target.truePeakDb, encode: req.encode }),
        dir,
        (c) => final.push(c),
        () => {},
      );
      report = finished(measured, gainDb, final.result);
      if (report.lufs === undefined || Math.abs(report.lufs - target.targetLufs) <= 0.5) break;
      gainDb += target.targetLufs - report.lufs;
    }
    return { file, report: report! };
  }
}
