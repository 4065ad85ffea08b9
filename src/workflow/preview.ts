// The dry run: render a checked edit small and fast with ffmpeg, measure it, and draw its contact sheet. The same
// edit asked for again while its preview renders joins that preview, and each cut is playable as soon as it is
// made (its clip, from its segment). A preview runs as a job that outlives the tool call which started it, so a
// long one can be followed (preview_edit {preview_id}).
import { createHash } from 'node:crypto';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cutClock } from '../edit/cut-clock.js';
import { summarizeTimeline, toRenderPlan, type RenderPlan } from '../edit/plan.js';
import { formatTimecode } from '../edit/timecode.js';
import { ducks, speechOnTimeline } from '../media/ducking.js';
import { reframed, reframes } from '../media/reframe.js';
import { UserFacingError } from '../errors.js';
import { RESULT_FILE, isPreviewId } from '../media/cache.js';
import {
  MAX_BYTES,
  THUMBS_DIR,
  cutWordLabels,
  labelledTileArgs,
  sheetLabel,
  sheetPlan,
  sizeOf,
  stripChars,
  type SheetFrame,
} from '../media/contact-sheet.js';
import { edgeFlags, judgeCut, mixFlags, mixLoudness, type Measurements } from '../media/measure.js';
import { Limiter } from '../media/probe.js';
import { makeCutClip } from '../media/cut-clip.js';
import { mp4Seconds } from '../media/mp4-duration.js';
import { runProcess, whyFailed } from '../media/process.js';
import { RenderError } from '../media/render.js';
import { renderSegmented } from '../media/segmented-render.js';
import { SegmentStore } from '../media/segments.js';
import { inputSpec, type EncodeSettings, type InputSpec } from '../media/timeline-args.js';
import type { CheckedEdit } from './checked-edit.js';
import { mediaIdentity } from '../media/inspect-cache.js';
import type { MediaRuntime } from './media-runtime.js';
import {
  PreviewSchema,
  type Preview,
  type PreviewJob,
  type PreviewOptions,
  type PreviewResult,
} from './preview-types.js';
import type { PreviewRunner } from './jobs.js';

/** Fetches of this process in flight, by folder: a preview asked for by several reads is fetched once. */
const fetching = new Map<string, Promise<boolean>>();

/**
 * Makes sure a finished preview is in this cache dir: with a store, one this server does not hold (made by a worker,
 * or evicted here) is fetched from it. True when it is here now. A store that fails says so (a UserFacingError).
 */
export async function previewHere(rt: MediaRuntime, id: string): Promise<boolean> {
  if (!isPreviewId(id)) return false;
  const here = () =>
    stat(join(rt.cache.root, id, RESULT_FILE)).then(
      () => true,
      () => false,
    );
  if (await here()) return true;
  if (!rt.store) return false;
  const slot = join(rt.cache.root, id);
  let pending = fetching.get(slot);
  if (!pending) {
    const store = rt.store;
    pending = store.fetch(id).finally(() => fetching.delete(slot));
    fetching.set(slot, pending);
  }
  try {
    return await pending;
  } catch (err) {
    throw new UserFacingError(`preview ${id} could not be read back: ${(err as Error).message}`);
  }
}

const SHEET_QUALITY = [3, 6, 10, 16, 24, 31];

/**
 * A preview is a check, not a deliverable: libx264's fastest preset. At CRF 30 and 640 px its pictures stay
 * readable on the sheet and in the file (ultrafast spends bits, not quality, to save time); measured in bench/.
 */
export const PREVIEW_ENCODE: EncodeSettings = {
  preset: 'ultrafast',
  crf: 30,
  audio: 'aac',
  audioBitrate: '128k',
  aacCoder: 'fast',
  aacMidSide: false,
  container: 'mp4',
  scaleFlags: 'area',
};

/**
 * Bumped whenever what a preview shows for the same edit changes (graph, settings, sheet): older ones are not reused.
 */
const PREVIEW_VERSION = 12;
/** Width of the thumbnails a segment keeps (a sheet's cells are at most 320 px wide). */
const SEGMENT_THUMB_WIDTH = 320;
/** In a preview's folder: the key of the edit it shows (see editKey). */
const EDIT_KEY_FILE = 'edit.key';

/** The ffmpeg inputs of a checked edit: each cut's and overlay's source and whether it has sound. */
export function inputsFor(
  checked: CheckedEdit,
  plan: RenderPlan,
): { cutInputs: InputSpec[]; overlayInputs: InputSpec[] } {
  const spec = (assetId: string): InputSpec => {
    const a = checked.assets.get(assetId);
    if (!a?.source || !a.facts) {
      throw new UserFacingError(
        `asset ${assetId} could not be read${a?.probeError ? ` (${a.probeError})` : ''}; get_project shows its status and link`,
      );
    }
    return inputSpec(a.source, a.facts);
  };
  return { cutInputs: plan.cuts.map((c) => spec(c.assetId)), overlayInputs: plan.overlays.map((o) => spec(o.assetId)) };
}

/** How long the made preview lasts: as its movie header says (what ffprobe would report), else as ffprobe says. */
async function measuredSeconds(ffprobe: string | undefined, path: string): Promise<number | undefined> {
  const said = await mp4Seconds(path);
  if (said !== undefined || !ffprobe) return said;
  const r = await runProcess(
    ffprobe,
    [
      '-v',
      'error',
      '-show_entries',
      'format=duration',
      '-of',
      'csv=p=0',
      '-protocol_whitelist',
      'file',
      `file:${path}`,
    ],
    { timeoutMs: 20_000 },
  );
  const s = Number(r.stdout.toString().trim());
  return r.code === 0 && Number.isFinite(s) ? s : undefined;
}

/** A cut's clip, while its preview renders: cutroom://previews/{id}/cuts/{n}.mp4. */
export const cutClipUri = (id: string, index: number) => `cutroom://previews/${id}/cuts/${index}.mp4`;
export const clipFile = (index: number) => `cut-${index}.mp4`;
/** The per-cut sound levels a view draws (previewLevels), written beside a finished preview. */
const LEVELS_FILE = 'levels.json';
/** Clips made at once for one preview (each a small process outside the ffmpeg slots, which its segments hold). */
const CLIPS_AT_ONCE = 2;

/**
 * Jobs of this process by cache folder and preview id: over HTTP each caller has their own folder, and one caller's
 * job (its progress, its failure) is never another's, whoever learns the id. A finished one is forgotten soon (its
 * result is on disk, and the sheet it holds is up to 640 KiB); a failed one is kept a while, to tell
 * preview_edit {preview_id} why.
 */
const jobs = new Map<string, PreviewJob>();
const jobKey = (rt: MediaRuntime, id: string) => `${rt.cache.root}\0${id}`;
/**
 * Jobs starting or running, by cache folder and edit key: the same edit asked again meanwhile (a view following the
 * call that started it, a retry) joins its job. Set as soon as the key is known, before anything is awaited.
 */
const running = new Map<string, Promise<PreviewJob & { holders: number }>>();
const FORGET_DONE_MS = 60_000;
const FORGET_FAILED_MS = 30 * 60_000;

export const previewJob = (rt: MediaRuntime, id: string): PreviewJob | undefined => jobs.get(jobKey(rt, id));

/** Starts a preview of a checked edit; it runs until done, failed or aborted, whoever waits for it. */
export async function startPreview(rt: MediaRuntime, checked: CheckedEdit, opts: PreviewOptions): Promise<PreviewJob> {
  if (!checked.timeline) throw new UserFacingError('nothing to preview: the edit has no playable cut');
  const cues = opts.captions?.cues;
  const plan = toRenderPlan(checked.timeline, { maxWidth: opts.width, fadeMs: checked.fadeMs, cues });
  const { cutInputs, overlayInputs } = inputsFor(checked, plan);
  // The key is the plan's without the speech music ducks under (that follows from the same edit and media), with
  // each overlay's role and duck (which the plan holds only with the speech).
  const mix = checked.timeline.overlays.map((o) => [o.role ?? null, o.duckDb ?? 0]);
  const key = await editKey(rt, plan, [...cutInputs, ...overlayInputs], mix, opts.sheetWords);
  const slot = jobKey(rt, key);
  for (let pending = running.get(slot); pending; pending = running.get(slot)) {
    const joined = await pending.catch(() => undefined);
    // (A job being stopped is not joined: it ends "cancelled" in a moment, whoever joins it.)
    if (joined && !joined.settled && !joined.stopping) {
      joined.holders++;
      opts.debug?.(`preview ${joined.id}: the same edit is being previewed; joining it`);
      return joined;
    }
    // Settled or stopping meanwhile (or failed to start): another job, unless someone began one while this waited.
    if (running.get(slot) === pending) running.delete(slot);
  }
  // (Nothing is awaited between the look above and this: two calls never both begin one.)
  const begun = beginPreview(rt, checked, opts, plan, { cutInputs, overlayInputs }, key);
  running.set(slot, begun);
  const leave = () => void (running.get(slot) === begun && running.delete(slot));
  begun.then((job) => void job.done.catch(() => {}).finally(leave), leave);
  return begun;
}

/** startPreview's work once the edit's key is known and no job of it runs: reuse, or a new job. */
async function beginPreview(
  rt: MediaRuntime,
  checked: CheckedEdit,
  opts: PreviewOptions,
  first: RenderPlan,
  inputs: { cutInputs: InputSpec[]; overlayInputs: InputSpec[] },
  key: string,
): Promise<PreviewJob & { holders: number }> {
  const { cutInputs, overlayInputs } = inputs;
  const cues = opts.captions?.cues;
  let plan = first;
  const reused = await finishedPreviewOf(rt, key);
  // Music ducks under speech: where speech is heard is read from the dialogue's sound, for a new preview only.
  if (!reused && ducks(checked.timeline!)) {
    const speech = await speechOnTimeline(
      rt,
      checked.timeline!,
      plan,
      cutInputs,
      overlayInputs,
      undefined,
      opts.speechWords,
    );
    plan = toRenderPlan(checked.timeline!, { maxWidth: opts.width, fadeMs: checked.fadeMs, speech, cues });
  }
  // A focus "auto" cut follows its picture: where the action is is read from it, for a new preview only (the key
  // holds "auto"; each segment's key holds the path).
  if (!reused && reframes(checked.timeline!)) plan = await reframed(rt, checked.timeline!, plan, cutInputs);
  if (reused) {
    opts.debug?.(`preview ${reused.preview_id}: the same edit was previewed before; reusing it`);
    const done = Promise.resolve({
      ...reused,
      warnings: [...reused.warnings.filter((w) => !w.startsWith('captions: ')), ...(opts.captions?.warnings ?? [])],
      diagnostics: checked.diagnostics,
    });
    const noClip = () => Promise.reject(new UserFacingError('this preview is done: play its preview.mp4'));
    return {
      id: reused.preview_id,
      progress: 1,
      message: 'done',
      done,
      settled: { result: await done },
      abort: () => false,
      release: () => {},
      listeners: new Set(),
      cuts: plan.cuts.length,
      ready: [],
      clip: noClip,
      holders: 1,
    };
  }
  const { id, dir } = await rt.cache.create().catch((err) => {
    throw noSpace(err) ? fullDisk(rt) : err;
  });
  const ac = new AbortController();
  const clips = new Map<number, Promise<string>>();
  const clipTurns = new Limiter(CLIPS_AT_ONCE);
  // Clips stop with the job, and when it fails: their processes write in its folder, which a failure removes.
  const clipStop = new AbortController();
  ac.signal.addEventListener('abort', () => clipStop.abort(), { once: true });
  const stopClips = async () => {
    clipStop.abort();
    await Promise.allSettled([...clips.values()]);
  };
  const segmentOf: (string | undefined)[] = [];
  const keyOf: (string | undefined)[] = [];
  const clipSeconds = (index: number) => (plan.cuts[index]!.frames * plan.fpsDen) / plan.fpsNum;
  let kept = false;
  const job: PreviewJob & { holders: number } = {
    id,
    progress: 0,
    message: 'waiting for an ffmpeg slot',
    done: undefined as never,
    holders: 1,
    // Holders are the calls waiting on it (each startPreview that returned it). Once one returned without
    // cancelling (a preview handed over to preview_edit {preview_id}, a view's next cuts), it runs to its end.
    abort: () => {
      if (--job.holders > 0 || kept) return false;
      job.stopping = true;
      ac.abort();
      return true;
    },
    release: () => {
      job.holders--;
      kept = true;
    },
    stop: () => {
      if (job.settled || job.stopping) return false;
      job.stopping = true;
      ac.abort();
      return true;
    },
    listeners: new Set(),
    cuts: plan.cuts.length,
    ready: [],
    clip: (index) => {
      const segment = segmentOf[index];
      if (!job.ready.includes(index) || !segment)
        return Promise.reject(new UserFacingError(`cut ${index + 1} is not rendered yet`));
      if (clipStop.signal.aborted)
        return Promise.reject(
          new UserFacingError('this preview was stopped or failed: preview_edit {preview_id} says why'),
        );
      let made = clips.get(index);
      if (!made) {
        const out = join(dir, clipFile(index));
        made = clipTurns
          .run(() => makeCutClip(rt.ffmpeg, segment, clipSeconds(index), out, PREVIEW_ENCODE, clipStop.signal))
          .then(
            () => out,
            (err: unknown) => {
              throw err instanceof RenderError && err.cancelled
                ? new UserFacingError('this preview was stopped or failed: preview_edit {preview_id} says why')
                : err;
            },
          );
        clips.set(index, made);
        // A failure is not kept: the next asking tries again.
        made.catch(() => clips.delete(index));
      }
      return made;
    },
    segment: (index) =>
      job.ready.includes(index) && keyOf[index] ? { key: keyOf[index]!, seconds: clipSeconds(index) } : undefined,
  };
  const report = (fraction: number, message: string) => {
    job.progress = Math.max(job.progress, fraction);
    job.message = message;
    for (const l of job.listeners) l(job.progress, message);
  };
  const onReady = (index: number, key: string, clip?: string) => {
    keyOf[index] = key;
    segmentOf[index] = rt.segments.videoOf(key);
    if (clip && !clips.has(index)) clips.set(index, Promise.resolve(clip));
    if (job.ready.includes(index)) return;
    job.ready.push(index);
    report(
      job.progress,
      `${job.ready.length} of ${job.cuts} cuts ready to play (cut ${index + 1}: ${cutClipUri(id, index)})`,
    );
  };
  job.done = makePreview(rt, checked, plan, { cutInputs, overlayInputs }, id, dir, {
    ...opts,
    key,
    signal: ac.signal,
    onProgress: report,
    onReady,
    beforeCleanup: stopClips,
  }).then(
    (result) => ((job.settled = { result }), result),
    (err: Error) => {
      job.settled = { error: err };
      throw err;
    },
  );
  job.done.catch(() => {});
  const forget = (ms: number) => setTimeout(() => jobs.delete(jobKey(rt, id)), ms).unref();
  job.done.then(
    () => forget(FORGET_DONE_MS),
    () => forget(FORGET_FAILED_MS),
  );
  jobs.set(jobKey(rt, id), job);
  return job;
}

/** What each cell of the sheet says of its cut's words: the first words under its first frame, and so on. */
function sheetCellWords(frames: SheetFrame[], byCut: string[][] | undefined, chars: number): string[] {
  if (!byCut?.length) return [];
  const seen = new Map<number, number>();
  return frames.map((f) => {
    const k = seen.get(f.cut) ?? 0;
    seen.set(f.cut, k + 1);
    return cutWordLabels(byCut[f.cut - 1] ?? [], chars)[k] ?? '';
  });
}

/** Renders, measures and draws the sheet in the preview's folder; on any failure removes the folder. */
async function makePreview(
  rt: MediaRuntime,
  checked: CheckedEdit,
  plan: RenderPlan,
  inputs: { cutInputs: InputSpec[]; overlayInputs: InputSpec[] },
  id: string,
  dir: string,
  opts: PreviewOptions & {
    key: string;
    signal: AbortSignal;
    onProgress: (fraction: number, message: string) => void;
    onReady: (cut: number, segmentKey: string, clip?: string) => void;
    beforeCleanup: () => Promise<void>;
  },
): Promise<PreviewResult> {
  const path = join(dir, 'preview.mp4');
  const sheetPath = join(dir, 'sheet.jpg');
  const { cutInputs, overlayInputs } = inputs;
  const { frames, layout } = sheetPlan(plan);
  try {
    const t1 = performance.now();
    opts.onProgress(0, 'rendering');
    const inputs = [...cutInputs];
    const identities = await Promise.all(inputs.map((spec) => mediaIdentity(spec.source)));
    const keys = plan.cuts.map((cut, i) => {
      const { source: _s, ...spec } = cutInputs[i]!;
      // (Not its place, nor its levelling, nor its sound handles: a segment keeps its range's sound, placed, levelled
      // and crossfaded where it is joined.)
      const { index: _i, timelineStartSec: _t, levelDb: _l, handles: _h, ...shape } = cut;
      return SegmentStore.key({
        v: PREVIEW_VERSION,
        shape,
        media: identities[i],
        spec,
        width: plan.width,
        height: plan.height,
        fps: [plan.fpsNum, plan.fpsDen],
        encode: PREVIEW_ENCODE,
        thumb: SEGMENT_THUMB_WIDTH,
      });
    });
    // The sheet is tiled from the segments' thumbnails while the join makes the sound.
    const tileSheet = async () => {
      const t2 = performance.now();
      const labels = frames.map((f) => sheetLabel(f.cut, f.t));
      const words = sheetCellWords(frames, opts.sheetWords, stripChars(layout));
      // Lower JPEG quality until the sheet fits clients' limit.
      for (const q of SHEET_QUALITY) {
        const { args, script, texts } = labelledTileArgs(layout, labels, rt.font, sheetPath, q, undefined, words);
        if (script) await writeFile(join(dir, script.file), script.text);
        for (const t of texts) await writeFile(join(dir, t.file), t.text);
        const r = await rt.limiter.run(() =>
          runProcess(rt.ffmpeg, args, { timeoutMs: 60_000, signal: opts.signal, cwd: dir }),
        );
        if (r.cancelled) throw new RenderError('cancelled', true);
        if (r.code !== 0)
          throw new RenderError(
            `the contact sheet failed (${whyFailed(r)})`,
            false,
            /No space left on device/i.test(r.stderr),
          );
        if ((await sizeOf(sheetPath)) <= MAX_BYTES) break;
      }
      opts.debug?.(`preview ${id}: tiled the sheet in ${(performance.now() - t2).toFixed(0)} ms`);
    };
    const outcome = await renderSegmented({
      ffmpeg: rt.ffmpeg,
      limiter: rt.limiter,
      store: rt.segments,
      plan,
      cutInputs,
      overlayInputs,
      keys,
      output: path,
      encode: PREVIEW_ENCODE,
      maxInputs: rt.maxInputs,
      thumbWidth: SEGMENT_THUMB_WIDTH,
      timeoutMs: opts.timeoutMs ?? 600_000,
      signal: opts.signal,
      onProgress: (f) => opts.onProgress(f * 0.97, 'rendering'),
      trackRss: opts.trackRss,
      whileJoining: tileSheet,
      onReady: (i, clip) => opts.onReady(i, keys[i]!, clip),
      headClip: (i) => join(dir, clipFile(i)),
      mixKey: SegmentStore.key({
        v: PREVIEW_VERSION,
        plan: { ...plan, cuts: [] },
        overlays: await Promise.all(
          overlayInputs.map(async ({ source, ...spec }) => ({ media: await mediaIdentity(source), spec })),
        ),
      }),
    });
    opts.debug?.(
      `preview ${id}: rendered ${plan.totalSec} s in ${(performance.now() - t1).toFixed(0)} ms: ${outcome.rendered} cut(s) rendered, ${outcome.reused} reused, ${outcome.processes} ffmpeg process(es)${outcome.oneThreadEach ? ', the segments on one thread each' : ''}${outcome.firstAlone ? ', the first alone' : ''}${outcome.soundFirst ? `, the sound made meanwhile${outcome.headOneThread ? ' (the cut on one thread)' : ''}` : ''}, ${outcome.soundMeasuredSec.toFixed(1)} s of its sound measured`,
    );
    const thumbs = (await readdir(join(dir, THUMBS_DIR))).length;
    await rm(join(dir, THUMBS_DIR), { recursive: true, force: true });
    opts.onProgress(0.99, 'measuring the preview');
    const t3 = performance.now();
    const measured = (await measuredSeconds(rt.prober?.ffprobe, path)) ?? plan.totalSec;
    opts.debug?.(`preview ${id}: measured the output in ${(performance.now() - t3).toFixed(0)} ms`);
    const frame = plan.fpsDen / plan.fpsNum;
    const warnings: string[] = [];
    if (Math.abs(measured - plan.totalSec) > frame + 1e-3) {
      warnings.push(
        `the preview lasts ${measured.toFixed(3)} s but the plan says ${plan.totalSec.toFixed(3)} s (more than one frame apart)`,
      );
    }
    if (thumbs !== frames.length) warnings.push(`the contact sheet shows ${thumbs} of its ${frames.length} frames`);
    if (!rt.font) warnings.push('no font found for the contact sheet labels; frames are in cut order, three per cut');
    warnings.push(...(opts.captions?.warnings ?? []));
    const summary = summarizeTimeline(checked.timeline!);
    // Each cut's in point as the frame its picture starts on (cutClock: the next source frame), not the time written:
    // what the person sees and the model is told is what plays.
    const placements = summary.cuts.map((p, i) => {
      const facts = checked.assets.get(p.asset_id.trim())?.facts;
      const inMs = checked.timeline!.cuts[i]!.inMs;
      if (!facts?.frameRate) return p;
      return { ...p, source_in: formatTimecode(Math.round(cutClock({ inSec: inMs / 1000 }, facts).inSec * 1000)) };
    });
    const finish = outcome.finish;
    const gainDb = finish?.gainDb ?? 0;
    // The parts as mixed, moved by the finishing gain; the mix itself as it came out of the limiter.
    const asOutput = (span?: { from: number; to: number }) => {
      const parts = mixLoudness(outcome.measurements, span, gainDb);
      if (!finish) return parts;
      const out = mixLoudness(finish.output, span);
      const { lufs: _l, true_peak_db: _t, ...rest } = parts;
      return {
        ...rest,
        ...(out.lufs !== undefined ? { lufs: out.lufs } : {}),
        ...(out.true_peak_db !== undefined ? { true_peak_db: out.true_peak_db } : {}),
      };
    };
    const cuts = plan.cuts.map((c, i) => {
      const report = judgeCut(c, outcome.measurements, cutInputs[i]!.hasAudio);
      const parts = asOutput({ from: c.timelineStartSec, to: c.timelineStartSec + c.durationSec });
      const level = outcome.levelDb[i] ? { level_db: outcome.levelDb[i]! } : {};
      return {
        ...placements[i]!,
        ...(report.loudness ? { loudness: { ...report.loudness, ...parts, ...level } } : {}),
        flags: [
          ...report.flags,
          ...mixFlags(parts, duckingOver(plan, c.timelineStartSec, c.timelineStartSec + c.durationSec)),
          ...edgeFlags(outcome.edges[i]),
        ],
      };
    });
    const whole = asOutput();
    if (plan.loudness && finish?.lufs === undefined)
      warnings.push(
        `the loudness target (${plan.loudness.targetLufs} LUFS) was not applied: nothing in the mix is loud enough to measure`,
      );
    if (finish?.lufs !== undefined && plan.loudness && Math.abs(finish.lufs - plan.loudness.targetLufs) > 1) {
      warnings.push(
        `the mix is at ${finish.lufs} LUFS, not within 1 LU of the target ${plan.loudness.targetLufs}: its peaks are high for its loudness, and the limiter that holds them under ${plan.loudness.truePeakDb} dBTP took the rest; lower the loudest parts, or ask a lower target`,
      );
    }
    const mix = {
      ...whole,
      ...(finish?.lufs !== undefined ? { target_lufs: plan.loudness!.targetLufs, gain_db: finish.gainDb } : {}),
    };
    const sheetBytes = await readFile(sheetPath);
    const preview: Preview = {
      preview_id: id,
      ...(opts.editId ? { edit_id: opts.editId } : {}),
      path,
      sheet_path: sheetPath,
      resolution: `${plan.width}x${plan.height}`,
      fps: summary.fps,
      planned_seconds: plan.totalSec,
      measured_seconds: Math.round(measured * 1000) / 1000,
      cuts,
      overlays: summary.overlays,
      ...(Object.keys(mix).length ? { mix } : {}),
      warnings,
      diagnostics: checked.diagnostics,
    };
    // Kept beside the video, so that preview_edit {preview_id} can answer from any server sharing the cache dir; the
    // key first, since the result file's presence is what marks a preview finished.
    await writeFile(join(dir, LEVELS_FILE), JSON.stringify(levelsOf(plan, outcome.measurements)));
    await writeFile(join(dir, EDIT_KEY_FILE), opts.key);
    await rt.cache.complete(id, JSON.stringify(preview));
    return { ...preview, sheetBytes, ...(outcome.ffmpegMaxRssKiB ? { ffmpegMaxRssKiB: outcome.ffmpegMaxRssKiB } : {}) };
  } catch (err) {
    // Nothing half-made stays in the cache (the clips' processes stopped first: they write in it). With a queue, a
    // server sharing the cache dir may be making a clip here meanwhile: a file it adds mid-way is removed on a retry.
    await opts.beforeCleanup();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    if (noSpace(err)) throw fullDisk(rt);
    if (err instanceof RenderError)
      throw new UserFacingError(
        err.cancelled ? 'the preview was cancelled; nothing was kept' : `the preview failed: ${err.message}`,
      );
    throw err;
  }
}

const noSpace = (err: unknown) =>
  (err instanceof RenderError && err.noSpace) || (err as NodeJS.ErrnoException)?.code === 'ENOSPC';

const fullDisk = (rt: MediaRuntime) =>
  new UserFacingError(
    `the preview failed: the disk holding the cache dir (CUTROOM_CACHE_DIR=${rt.cache.opts.dir}) is full; nothing was kept. ` +
      'Free space on it (older previews can go: lower CUTROOM_PREVIEW_KEEP or CUTROOM_PREVIEW_MAX_MB) or point CUTROOM_CACHE_DIR at a disk with room, then call preview_edit again',
  );

/**
 * What identifies an edit's preview: the render plan, what identifies each input's media (never a link's signature,
 * which changes on every fetch), how inputs are read, the settings and the label font.
 */
async function editKey(
  rt: MediaRuntime,
  plan: RenderPlan,
  inputs: InputSpec[],
  mix: unknown[],
  sheetWords: string[][] | undefined,
): Promise<string> {
  const media = await Promise.all(
    inputs.map(async ({ source, ...rest }) => ({ media: await mediaIdentity(source), ...rest })),
  );
  // (mix only when an overlay has a role: keys of previews made before roles existed stay the same.)
  const what = {
    v: PREVIEW_VERSION,
    plan,
    media,
    encode: PREVIEW_ENCODE,
    font: rt.font ?? null,
    ...(mix.some((m) => (m as unknown[])[0] !== null) ? { mix } : {}),
    // The sheet's words: a transcript corrected since shows on a new sheet.
    ...(sheetWords?.some((w) => w.length) ? { sheetWords } : {}),
  };
  return createHash('sha256').update(JSON.stringify(what)).digest('hex');
}

/** The newest finished preview (of any server sharing the cache dir) of the edit with this key. */
async function finishedPreviewOf(rt: MediaRuntime, key: string): Promise<PreviewResult | undefined> {
  for (const id of await rt.cache.ids()) {
    const k = await readFile(join(rt.cache.root, id, EDIT_KEY_FILE), 'utf8').catch(() => undefined);
    if (k !== key) continue;
    // Held before it is read: eviction (by any server) must not take it while it is handed out.
    if (
      !(await rt.cache.hold(id).then(
        () => true,
        () => false,
      ))
    )
      continue;
    const found = await readFinishedPreview(rt, id);
    if (found) return found;
  }
  return undefined;
}

/** A finished preview of any server sharing the cache dir, from its folder; undefined when it is not there. */
export async function readFinishedPreview(rt: MediaRuntime, id: string): Promise<PreviewResult | undefined> {
  await previewHere(rt, id);
  const json =
    rt.cache.fileOf(id, 'sheet.jpg') &&
    (await readFile(join(rt.cache.root, id, RESULT_FILE), 'utf8').catch(() => undefined));
  if (!json) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(json);
  } catch {
    return undefined;
  }
  const parsed = PreviewSchema.safeParse(record);
  const sheetBytes = await readFile(rt.cache.fileOf(id, 'sheet.jpg')!).catch(() => undefined);
  if (!parsed.success || !sheetBytes) return undefined;
  return { ...parsed.data, sheetBytes };
}

/** Per cut, its sound's level every 100 ms as it plays in the preview (RMS, whole dB; -99: nothing heard). */
export interface PreviewLevels {
  step: number;
  cuts: number[][];
}

function levelsOf(plan: RenderPlan, m: Measurements): PreviewLevels {
  return {
    step: 0.1,
    cuts: plan.cuts.map((c) => {
      const from = c.timelineStartSec - 1e-6;
      const to = c.timelineStartSec + c.durationSec - 0.05;
      return m.cutLevels.filter((l) => l.t >= from && l.t < to).map((l) => Math.max(-99, Math.round(l.rmsDb)));
    }),
  };
}

/** The sound levels a view draws under each cut, once the preview is done; undefined before, or when gone. */
export async function previewLevels(rt: MediaRuntime, id: string): Promise<PreviewLevels | undefined> {
  if (!isPreviewId(id)) return undefined;
  if (!previewJob(rt, id)) await previewHere(rt, id).catch(() => false);
  const text = await readFile(join(rt.cache.root, id, LEVELS_FILE), 'utf8').catch(() => undefined);
  if (!text) return undefined;
  try {
    return JSON.parse(text) as PreviewLevels;
  } catch {
    return undefined;
  }
}

/**
 * The path of a cut's clip (cutClipUri): made from its segment while its preview renders in this process, or the
 * one made then, kept in the preview's folder. Undefined when there is none (a finished preview plays preview.mp4).
 */
export async function cutClipPath(
  rt: MediaRuntime,
  id: string,
  index: number,
  runner?: PreviewRunner,
): Promise<string | undefined> {
  if (!isPreviewId(id) || !Number.isInteger(index) || index < 0) return undefined;
  const job = previewJob(rt, id);
  if (job && !job.settled && job.ready.includes(index)) return job.clip(index);
  // Rendering on a worker (with a queue): made there or here, on asking, as in this process.
  if (!job) {
    const queued = await runner?.clip?.(rt, id, index);
    if (queued) return queued;
  }
  if (!job || job.settled) await previewHere(rt, id);
  const kept = join(rt.cache.root, id, clipFile(index));
  return (await stat(kept).then(
    (st) => st.isFile(),
    () => false,
  ))
    ? kept
    : undefined;
}

/** The most the music overlays over [from, to) of the timeline duck (role "music"), or undefined when none does. */
function duckingOver(plan: RenderPlan, from: number, to: number): number | undefined {
  const dbs = plan.overlays
    .filter((o) => o.duck && o.startSec < to && o.startSec + o.durationSec > from)
    .map((o) => o.duck!.db);
  return dbs.length ? Math.max(...dbs) : undefined;
}
