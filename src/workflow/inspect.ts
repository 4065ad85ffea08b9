// inspect_asset's workflow, shared by the tool, the inspection resource and the edit tools (clips given by shot):
// find the asset's media, scan it once (shots, silences, loudness; cached per asset), and draw a sheet.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Asset } from '../api/models.js';
import type { JobRunner } from './jobs.js';
import type { Backend } from '../backend/types.js';
import { classifyAsset } from '../edit/lint.js';
import { formatTimecode, parseTimecode } from '../edit/timecode.js';
import { UserFacingError, cacheDiskFull, isDiskFull, shown } from '../errors.js';
import { mediaIdentity, type InspectionCache } from '../media/inspect-cache.js';
import { SheetError, drawSheet, type SheetPick } from '../media/inspect-sheet.js';
import {
  InspectError,
  SCENE_THRESHOLD,
  SILENCE_DB,
  SILENCE_MIN_SECONDS,
  pictureChange,
  scanAudio,
  scanShots,
  streamFacts,
  videoPackets,
  type PassContext,
} from '../media/inspect.js';
import { sourceFromUrl, type MediaSource } from '../media/input.js';
import { INSTALL_HINT } from '../media/locate.js';
import type { MediaProber } from '../media/probe.js';
import type { MediaRuntime } from './media-runtime.js';
import { InspectionSchema, inspectionKey, type Inspection, type Shot, type StoredInspection } from './inspection.js';
import { projectOrSuggestion, suggestAsset } from './suggest.js';

/** Frames on one sheet, at most. */
export const MAX_SHEET_FRAMES = 48;
export const DEFAULT_ZOOM_FRAMES = 12;

const ms = (s: number) => Math.round(s * 1000) / 1000;
/** A frame's time as an in point: rounded down to the millisecond, so seeking to it never skips the frame. */
const floorMs = (s: number) => Math.floor(s * 1000 + 1e-6) / 1000;

export const FrameShownSchema = z.object({
  seconds: z.number().describe('Source time of the frame shown'),
  shot: z.number().int().optional().describe('The shot it belongs to'),
});

export const InspectResultSchema = InspectionSchema.extend({
  frames: z
    .array(FrameShownSchema)
    .describe('Exactly the frames on the sheet, in order (left to right, top to bottom)'),
  sheet: z
    .object({
      mode: z
        .enum(['shots', 'zoom', 'image', 'none'])
        .describe('shots: one frame per shot; zoom: frames evenly spaced in from-to'),
      from_seconds: z.number().optional(),
      to_seconds: z.number().optional(),
      first_shot: z.number().int().optional(),
      last_shot: z.number().int().optional(),
      more: z.string().optional().describe('When shots were left off the sheet: how to see them'),
    })
    .describe('What the image shows'),
  cached: z.boolean().describe('True when the scan was reused (asked before) rather than run now'),
});
export type InspectResult = z.infer<typeof InspectResultSchema>;

export interface InspectDeps {
  backend: Backend;
  prober?: MediaProber;
  runtime?: MediaRuntime;
  /** The job queue: scans run on its workers (scanJob). */
  jobs?: JobRunner;
}

export interface InspectOptions {
  signal?: AbortSignal;
  onProgress?: (fraction: number, message: string) => void;
  debug?: (msg: string) => void;
}

export const inspectionUri = (projectId: string, assetId: string) =>
  `vj://projects/${projectId}/assets/${assetId}/inspection`;

interface Located {
  asset: Asset;
  src: MediaSource;
  key: string;
}

/** The asset and its media source, under the input rules (file: links only from the local backend). */
export async function locateAsset(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  signal?: AbortSignal,
): Promise<Located> {
  const pid = projectId.trim();
  const aid = assetId.trim();
  const project = await projectOrSuggestion(deps.backend, pid, signal);
  // Found by exact match among the project's own assets (never used as a path): a mistyped id gets a suggestion.
  const asset = project.assets?.find((a) => a.id === aid);
  if (!asset) {
    const hint = suggestAsset(project, aid);
    throw new UserFacingError(
      `no asset ${shown(aid)} in project ${pid}; ${hint ? `${hint} Else ` : ''}get_project lists its assets`,
    );
  }
  const src = sourceFromUrl(asset.url, { allowFile: deps.backend.kind === 'local' });
  if ('error' in src)
    throw new UserFacingError(`asset ${aid} cannot be read: ${src.error}; get_project shows its status and link`);
  return { asset, src, key: inspectionKey(aid, await mediaIdentity(src)) };
}

function tools(deps: InspectDeps): {
  rt: MediaRuntime & { inspections: InspectionCache<StoredInspection> };
  ffprobe: string;
  prober: MediaProber;
} {
  const rt = deps.runtime;
  if (!rt?.inspections || !deps.prober)
    throw new UserFacingError(`inspect_asset needs ffmpeg and ffprobe, which were not found; ${INSTALL_HINT}`);
  return {
    rt: rt as MediaRuntime & { inspections: InspectionCache<StoredInspection> },
    ffprobe: deps.prober.ffprobe,
    prober: deps.prober,
  };
}

/** The stored inspection of an asset, if it was inspected (no scan). */
export async function storedInspection(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  signal?: AbortSignal,
): Promise<StoredInspection | undefined> {
  const { rt } = tools(deps);
  const { key } = await locateAsset(deps, projectId, assetId, signal);
  return rt.inspections.get(key);
}

/** The asset's inspection: from the cache, or scanned now (and cached). */
export async function inspect(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  opts: InspectOptions = {},
): Promise<{ stored: StoredInspection; cached: boolean; src: MediaSource; key: string }> {
  const { rt } = tools(deps);
  const { asset, src, key } = await locateAsset(deps, projectId, assetId, opts.signal);
  const hit = await rt.inspections.get(key);
  if (hit) {
    opts.debug?.(`inspect ${asset.id}: reusing the inspection cached for ${key.split('|')[0]}`);
    return { stored: await withMotion(deps, hit, src, key, opts.signal), cached: true, src, key };
  }
  // With a job queue the scan runs on a worker (scanJob there), its result in the cache dir both share.
  const jobs = deps.jobs;
  const stored = await joinScan(key, opts, (signal, onProgress) =>
    jobs
      ? jobs.run<StoredInspection>('inspect', rt.cache.opts.dir, { asset, src, key } satisfies ScanWork, {
          signal,
          onProgress,
        })
      : scanAsset(deps, asset, src, key, { signal, onProgress, debug: opts.debug }),
  );
  // The worker's cache dir may be its own: the result is kept here too, for the next call and the inspection resource,
  // and so in the team's store for every replica.
  if (jobs) await rt.inspections.set(key, stored).catch(() => {});
  return { stored, cached: false, src, key };
}

/** A video inspected before the motion curve was kept gets it now, from the packet list alone (no decoding). */
async function withMotion(
  deps: InspectDeps,
  stored: StoredInspection,
  src: MediaSource,
  key: string,
  signal?: AbortSignal,
): Promise<StoredInspection> {
  const ins = stored.inspection;
  if (ins.kind !== 'video' || stored.motion !== undefined) return stored;
  const { rt, ffprobe } = tools(deps);
  let frames;
  try {
    frames = await videoPackets(
      {
        ffmpeg: rt.ffmpeg,
        ffprobe,
        src,
        limiter: rt.limiter,
        signal,
        timeoutMs: 120_000 + ins.duration_seconds * 1000,
      },
      stored.startTime,
    );
  } catch (err) {
    if (signal?.aborted) throw new UserFacingError('the inspection was cancelled');
    return stored;
  }
  const updated: StoredInspection = {
    ...stored,
    motion: pictureChange(frames, ins.duration_seconds, (ins.width ?? 0) * (ins.height ?? 0)) ?? null,
  };
  await rt.inspections.set(key, updated).catch(() => {});
  return updated;
}

/** A scan under way in this process, shared by every caller that asks for the same media meanwhile. */
interface SharedScan {
  done: Promise<StoredInspection>;
  callers: Set<InspectOptions>;
  controller: AbortController;
}
const scansUnderWay = new Map<string, SharedScan>();

/**
 * Joins the scan of `key` under way, or starts one. Every caller gets its progress; a caller that cancels leaves at
 * once, and the scan (and its ffmpeg processes) stops when the last caller has left.
 */
function joinScan(
  key: string,
  opts: InspectOptions,
  start: (signal: AbortSignal, onProgress: (f: number, m: string) => void) => Promise<StoredInspection>,
): Promise<StoredInspection> {
  let scan = scansUnderWay.get(key);
  if (!scan || scan.controller.signal.aborted) {
    const controller = new AbortController();
    const callers = new Set<InspectOptions>();
    const done = start(controller.signal, (f, m) => callers.forEach((c) => c.onProgress?.(f, m))).finally(() => {
      if (scansUnderWay.get(key)?.done === done) scansUnderWay.delete(key);
    });
    // Its failure reaches every caller still waiting; a scan every caller left fails unheard.
    done.catch(() => {});
    scan = { done, callers, controller };
    scansUnderWay.set(key, scan);
  }
  const shared = scan;
  return new Promise<StoredInspection>((resolve, reject) => {
    const leave = () => {
      opts.signal?.removeEventListener('abort', onAbort);
      shared.callers.delete(opts);
    };
    const onAbort = () => {
      leave();
      if (!shared.callers.size) shared.controller.abort();
      reject(new UserFacingError('the inspection was cancelled'));
    };
    if (opts.signal?.aborted) return onAbort();
    shared.callers.add(opts);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    shared.done.then(
      (v) => (leave(), resolve(v)),
      (e: unknown) => (leave(), reject(e)),
    );
  });
}

/** An asset's scan as a job's work: what scanAsset is given besides the runtime. */
export interface ScanWork {
  asset: Asset;
  src: MediaSource;
  key: string;
}

/** The scan of an inspection, run by a worker of the job queue (on the cache dir the server shares). */
export const scanJob = (
  deps: Omit<InspectDeps, 'backend' | 'jobs'>,
  work: ScanWork,
  opts: InspectOptions,
): Promise<StoredInspection> => scanAsset(deps as InspectDeps, work.asset, work.src, work.key, opts);

/** How the shots were found, as an inspection says it: every frame decoded, keyframes only, or not looked for. */
function shotScanName(scan: { method: 'keyframes' | 'full' } | undefined): 'full_decode' | 'keyframes' | 'none' {
  if (!scan) return 'none';
  if (scan.method === 'full') return 'full_decode';
  return 'keyframes';
}

/** Scans an asset's media now (shots, silences, loudness) and caches what it found. */
async function scanAsset(
  deps: InspectDeps,
  asset: Asset,
  src: MediaSource,
  key: string,
  opts: InspectOptions,
): Promise<StoredInspection> {
  const { rt, ffprobe, prober } = tools(deps);
  let facts;
  try {
    facts = await prober.probe(asset.id, src, opts.signal);
  } catch (err) {
    if (opts.signal?.aborted) throw new UserFacingError('the inspection was cancelled');
    throw new UserFacingError(
      `asset ${asset.id} could not be read (${(err as Error).message}); get_project shows its status and link`,
    );
  }
  let kind = classifyAsset(asset.asset_type, facts);
  if (facts.isImage) kind = 'image';
  if (kind === 'unknown') kind = facts.hasVideo ? 'video' : 'audio';
  const duration = (facts.durationMs ?? 0) / 1000;
  const started = performance.now();
  const progress = (from: number, to: number) => (f: number, m: string) => opts.onProgress?.(from + (to - from) * f, m);
  const ctx: PassContext = {
    ffmpeg: rt.ffmpeg,
    ffprobe,
    src,
    limiter: rt.limiter,
    signal: opts.signal,
    timeoutMs: 120_000 + 2 * duration * 1000,
    debug: opts.debug,
    thumbsPath: await rt.inspections.thumbsPathOf(key),
    cutThumbsPath: await rt.inspections.cutThumbsPathOf(key),
  };
  try {
    opts.onProgress?.(0, 'reading the stream list');
    const sf = await streamFacts(ctx);
    const video = kind === 'video' && facts.hasVideo;
    const [scan, audio] = await Promise.all([
      video ? scanShots({ ...ctx, onProgress: progress(0.02, 0.9) }, sf, facts) : undefined,
      facts.hasAudio && duration > 0
        ? scanAudio({ ...ctx, onProgress: video ? undefined : progress(0.02, 0.9) }, sf, duration)
        : undefined,
    ]);
    const bounds = scan ? [0, ...scan.cuts.filter((c) => c > 0 && c < duration), duration] : [];
    const shots: Shot[] = [];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const s = floorMs(bounds[i]!);
      const e = i + 2 === bounds.length ? ms(bounds[i + 1]!) : floorMs(bounds[i + 1]!);
      shots.push({
        index: i + 1,
        start_seconds: s,
        end_seconds: e,
        start: formatTimecode(s * 1000),
        end: formatTimecode(e * 1000),
      });
    }
    const inspection: Inspection = {
      asset_id: asset.id,
      kind,
      duration_seconds: kind === 'image' ? 0 : ms(duration),
      ...(facts.width && facts.height ? { width: facts.width, height: facts.height } : {}),
      ...(facts.fps && kind === 'video' ? { fps: Math.round(facts.fps * 1000) / 1000 } : {}),
      has_audio: facts.hasAudio,
      shots,
      silences: (audio?.silences ?? []).map((s) => ({
        start_seconds: ms(s.from),
        end_seconds: ms(Math.min(s.to, duration)),
      })),
      loudness: (audio?.loudness ?? []).map((l) => ({
        start_seconds: ms(l.t),
        mean_db: Math.round(l.meanDb * 10) / 10,
        peak_db: Math.round(l.peakDb * 10) / 10,
      })),
      scan: {
        shots: shotScanName(scan),
        scene_threshold: SCENE_THRESHOLD,
        ...(scan ? { frames_decoded: scan.decodedFrames, frames_total: scan.totalFrames } : {}),
        silence_threshold_db: SILENCE_DB,
        silence_min_seconds: SILENCE_MIN_SECONDS,
        ...(audio ? { loudness_window_seconds: audio.windowSeconds } : {}),
        ...(scan?.reason ? { note: `every frame was decoded: ${scan.reason}` } : {}),
      },
    };
    // Cuts at or past the end are not shot starts: their thumbnails are not indexed by shot.
    const cutThumbs = scan?.cutThumbs?.filter((_, k) => scan.cuts[k]! > 0 && scan.cuts[k]! < duration);
    const stored: StoredInspection = {
      inspection,
      startTime: sf.startTime,
      keyframes: scan?.keyframes ?? [],
      ...(scan?.thumbs ? { thumbs: true } : {}),
      ...(cutThumbs?.length ? { cutThumbs } : {}),
      ...(video ? { motion: scan?.motion ?? null } : {}),
    };
    opts.debug?.(
      `inspect ${asset.id}: scanned ${duration} s in ${(performance.now() - started).toFixed(0)} ms (${inspection.scan.shots}, ${scan?.decodedFrames ?? 0}/${scan?.totalFrames ?? 0} frames decoded)`,
    );
    await rt.inspections.set(key, stored);
    return stored;
  } catch (err) {
    if (isDiskFull(err) && !(err instanceof InspectError && err.cancelled)) {
      // Thumbnails cut short by the full disk are not kept for a later scan to trust.
      await rt.inspections.delete(key).catch(() => {});
      throw cacheDiskFull('the inspection', rt.inspections.dir);
    }
    if (err instanceof InspectError)
      throw new UserFacingError(
        err.cancelled ? 'the inspection was cancelled' : `the inspection failed: ${err.message}`,
      );
    throw err;
  }
}

export interface SheetArgs {
  from?: string | number;
  to?: string | number;
  frames?: number;
}

function parseTime(v: string | number | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const r = parseTimecode(v);
  if (!r.ok) throw new UserFacingError(`${name} ${r.reason}`);
  return r.ms / 1000;
}

const shotAt = (shots: Shot[], t: number) =>
  shots.find((s) => t >= s.start_seconds && t < s.end_seconds)?.index ?? shots.at(-1)?.index;

/** inspect_asset whole: the inspection plus a sheet (one frame per shot, or a zoom into from-to). */
export async function inspectWithSheet(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  args: SheetArgs,
  opts: InspectOptions = {},
): Promise<InspectResult & { jpeg?: Buffer }> {
  const { rt } = tools(deps);
  let from = parseTime(args.from, 'from');
  let to = parseTime(args.to, 'to');
  const { stored, cached, src, key } = await inspect(deps, projectId, assetId, opts);
  const exists = (path: string) =>
    stat(path).then(
      () => true,
      () => false,
    );
  const thumbsPath = await rt.inspections.thumbsPathOf(key);
  const thumbs = stored.thumbs && (await exists(thumbsPath)) ? thumbsPath : undefined;
  const cutThumbsPath = await rt.inspections.cutThumbsPathOf(key);
  const cutThumbs = stored.cutThumbs && (await exists(cutThumbsPath)) ? stored.cutThumbs : undefined;
  const ins = stored.inspection;
  const base = { ...ins, cached };
  if (ins.kind === 'audio') return { ...base, frames: [], sheet: { mode: 'none' } };

  const dims = { width: ins.width ?? 320, height: ins.height ?? 180 };
  const draw = async (picks: SheetPick[]) => {
    opts.onProgress?.(0.92, 'drawing the sheet');
    const t0 = performance.now();
    try {
      const sheet = await drawSheet({
        ffmpeg: rt.ffmpeg,
        src,
        limiter: rt.limiter,
        startTime: stored.startTime,
        ...dims,
        picks,
        font: rt.font,
        workDir: join(rt.inspections.root, 'tmp'),
        signal: opts.signal,
        timeoutMs: 120_000,
        maxInputs: Math.min(rt.maxInputs, 16),
      });
      opts.debug?.(
        `inspect ${assetId}: sheet of ${picks.length} frames (${picks.filter((p) => p.thumb).length} from kept thumbnails) drawn in ${(performance.now() - t0).toFixed(0)} ms`,
      );
      return sheet;
    } catch (err) {
      if (isDiskFull(err) && !(err instanceof SheetError && err.cancelled)) {
        // Its thumbnails may have been cut short by the same full disk: scan again next time, with room.
        await rt.inspections.delete(key).catch(() => {});
        throw cacheDiskFull('the sheet', rt.inspections.dir);
      }
      if (err instanceof SheetError)
        throw new UserFacingError(err.cancelled ? 'the inspection was cancelled' : `the sheet failed: ${err.message}`);
      throw err;
    }
  };

  if (ins.kind === 'image') {
    const sheet = await draw([{ t: 0, keyframe: false, label: () => 'image' }]);
    return { ...base, frames: [{ seconds: 0 }], sheet: { mode: 'image' }, jpeg: sheet.jpeg };
  }

  const duration = ins.duration_seconds;
  if (from !== undefined && from >= duration)
    throw new UserFacingError(`from (${from} s) is past the end of the asset (it lasts ${duration} s)`);
  if (to !== undefined && from !== undefined && to <= from)
    throw new UserFacingError(`to (${to} s) must be after from (${from} s)`);
  const span = from !== undefined || to !== undefined;
  const paging = from !== undefined && to === undefined;
  from = from ?? 0;
  to = Math.min(to ?? duration, duration);
  const inSpan = ins.shots.filter((s) => s.end_seconds > from! && s.start_seconds < to!);
  const wanted = Math.min(MAX_SHEET_FRAMES, Math.max(1, args.frames ?? DEFAULT_ZOOM_FRAMES));

  // One frame per shot without a span, with from alone (paging), or when the span holds more shots than frames.
  if (!span || paging || inSpan.length > wanted) {
    // One frame per shot: a keyframe inside the shot nearest its middle (one decoded frame), else its first frame.
    // Either may have been kept as a thumbnail by the scan (every keyframe; the first frame of every cut).
    const page = inSpan.slice(0, MAX_SHEET_FRAMES);
    const picks = page.map((s): SheetPick => {
      const mid = (s.start_seconds + s.end_seconds) / 2;
      const inside = stored.keyframes.filter((k) => k >= s.start_seconds && k < s.end_seconds);
      const key = inside.sort((a, b) => Math.abs(a - mid) - Math.abs(b - mid))[0];
      const label = () => `#${s.index} ${s.start}-${s.end}`;
      if (key !== undefined)
        return {
          t: key,
          keyframe: true,
          ...(thumbs ? { thumb: { file: thumbsPath, index: stored.keyframes.indexOf(key) } } : {}),
          label,
        };
      // Shot n starts at cut n - 2 (shot 1 starts at 0).
      const cutThumb = cutThumbs?.[s.index - 2] ?? -1;
      return {
        t: s.start_seconds,
        keyframe: false,
        ...(cutThumb >= 0 ? { thumb: { file: cutThumbsPath, index: cutThumb } } : {}),
        label,
      };
    });
    const sheet = await draw(picks);
    const rest = inSpan.length - page.length;
    const next = inSpan[page.length];
    return {
      ...base,
      frames: sheet.shown.map((t, i) => ({ seconds: ms(t), shot: page[i]!.index })),
      sheet: {
        mode: 'shots',
        ...(span ? { from_seconds: ms(from), to_seconds: ms(to) } : {}),
        ...(page.length ? { first_shot: page[0]!.index, last_shot: page.at(-1)!.index } : {}),
        ...(rest > 0 && next
          ? {
              more: `${rest} more shot${rest === 1 ? '' : 's'} not shown: call again with from: "${next.start}" to see them`,
            }
          : {}),
      },
      jpeg: sheet.jpeg,
    };
  }

  // A zoom: frames evenly spaced inside the span (centres of equal slices), at most one per source frame.
  const frameSeconds = 1 / (ins.fps ?? 25);
  const n = Math.max(1, Math.min(wanted, Math.floor((to - from) / frameSeconds)));
  // No frame starts after the last one: a pick past it shows the last frame (the one on screen at the source's end).
  const lastFrameStart = Math.max(0, duration - frameSeconds);
  const picks = Array.from({ length: n }, (_, i): SheetPick => ({
    t: Math.min(from! + ((i + 0.5) * (to! - from!)) / n, lastFrameStart),
    keyframe: false,
    label: (t) => `${formatTimecode(Math.round(t * 1000))}  #${shotAt(ins.shots, t) ?? '?'}`,
  }));
  const sheet = await draw(picks);
  return {
    ...base,
    frames: sheet.shown.map((t) => ({
      seconds: ms(t),
      ...(shotAt(ins.shots, t) ? { shot: shotAt(ins.shots, t)! } : {}),
    })),
    sheet: { mode: 'zoom', from_seconds: ms(from), to_seconds: ms(to) },
    jpeg: sheet.jpeg,
  };
}
