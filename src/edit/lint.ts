// Checks of an edit against the project's assets and their measured media facts. Pure: the facts are gathered
// elsewhere (media/ probes them) and handed in.
import type { Diagnostic, Edit } from './model.js';
import { normalizeEdit, type Timeline } from './normalize.js';
import { formatShort, formatTimecode } from './timecode.js';
import { didYouMean } from '../did-you-mean.js';
import { shown } from '../errors.js';

export type AssetKind = 'video' | 'audio' | 'image' | 'unknown';

export interface MediaFacts {
  /** How long the media lasts: the header's length, or where its last packet ends when the header claims more. */
  durationMs?: number;
  /** What the header claimed, when the media ends well before it (a lying or truncated file). */
  headerDurationMs?: number;
  hasVideo: boolean;
  hasAudio: boolean;
  /** Display size (rotation and sample aspect applied). */
  width?: number;
  height?: number;
  fps?: number;
  /** The video's frame rate as a fraction, when it is constant (avg_frame_rate equals r_frame_rate). */
  frameRate?: { num: number; den: number };
  /** Where the first video frame sits on the file's clock (stream start minus the file's start), seconds. */
  videoStartSec?: number;
  /** The video stream's time base (frame times are multiples of it). */
  videoTimeBase?: { num: number; den: number };
  /** Channels of the first audio stream. */
  audioChannels?: number;
  /** The media's start timecode as it is tagged (HH:MM:SS:FF, or ;FF for drop-frame), when it has one. */
  timecode?: string;
}

export interface AssetInfo {
  id: string;
  /** What a person calls it (its file name), for messages. */
  name?: string;
  kind: AssetKind;
  facts?: MediaFacts;
  /** Why the facts are missing, when a probe was tried and failed. */
  probeError?: string;
}

/** The kind of an asset: from the service's asset_type first, then from what a probe found. */
export function classifyAsset(assetType: string | null | undefined, facts?: MediaFacts): AssetKind {
  const t = (assetType ?? '').toLowerCase();
  if (t.includes('audio') || t.includes('voice') || t.includes('music')) return 'audio';
  if (t.includes('image') || t.includes('photo') || t.includes('thumbnail')) return 'image';
  if (t.includes('video')) return 'video';
  if (facts) {
    if (facts.hasVideo && (facts.durationMs ?? 0) > 0 && (facts.fps ?? 0) > 0) return 'video';
    if (facts.hasVideo) return 'image';
    if (facts.hasAudio) return 'audio';
  }
  return 'unknown';
}

const TOLERANCE_MS = 1;

function idsOfKind(assets: Map<string, AssetInfo>, kind: AssetKind): string {
  const of = [...assets.values()].filter((a) => a.kind === kind);
  if (!of.length) return `the project has no ${kind} assets`;
  const listed = of.slice(0, 5).map((a) => (a.name ? `${a.id} (${shown(a.name)})` : a.id));
  return `${kind} assets: ${listed.join(', ')}${of.length > 5 ? `, … (${of.length} in all)` : ''}`;
}

/**
 * Why an asset cannot play where the edit puts it (a cut needs a video, an overlay an audio asset), or undefined
 * when it can. Clips given by shot or by words are checked with it before anything else, so their one problem is
 * said once, in the same words as for clips given by time.
 */
export function assetProblem(
  id: string,
  assets: Map<string, AssetInfo>,
  needs: 'video' | 'audio',
): { message: string; hint: string } | undefined {
  const asset = assets.get(id);
  if (!asset) {
    const close = didYouMean(
      id,
      [...assets.values()].map((a) => ({ id: a.id, ...(a.name ? { name: a.name } : {}) })),
    );
    return {
      message: `no asset ${shown(id)} in this project${close ? `; ${close}` : ''}`,
      hint: `get_project lists the assets; ${idsOfKind(assets, needs)}`,
    };
  }
  if (needs === 'video' && (asset.kind === 'audio' || asset.kind === 'image')) {
    return {
      message: `asset ${id} is ${asset.kind === 'audio' ? 'audio' : 'an image'}; a cut needs a video`,
      hint: asset.kind === 'audio' ? 'lay audio over the timeline as an overlay' : idsOfKind(assets, 'video'),
    };
  }
  if (needs === 'audio' && (asset.kind === 'video' || asset.kind === 'image')) {
    return {
      message: `asset ${id} is ${asset.kind === 'video' ? 'a video' : 'an image'}; an overlay needs an audio asset`,
      hint:
        asset.kind === 'video' ? 'put videos in the cuts; their own sound plays with them' : idsOfKind(assets, 'audio'),
    };
  }
  return undefined;
}

function aspectLabel(w: number, h: number): string {
  const g = (a: number, b: number): number => (b ? g(b, a % b) : a);
  const d = g(w, h);
  return `${w / d}:${h / d}`;
}

export function lintAgainstAssets(timeline: Timeline, assets: Map<string, AssetInfo>): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (path: string, message: string, hint?: string) =>
    out.push({ severity: 'error', path, message, ...(hint ? { hint } : {}) });
  const warn = (path: string, message: string, hint?: string) =>
    out.push({ severity: 'warning', path, message, ...(hint ? { hint } : {}) });
  const outAspect = timeline.width / timeline.height;
  const aspectWarned = new Set<string>();

  for (const cut of timeline.cuts) {
    const p = `/video_series_sequential/${cut.index}`;
    const problem = assetProblem(cut.assetId, assets, 'video');
    if (problem) {
      err(`${p}/video_id`, problem.message, problem.hint);
      continue;
    }
    const asset = assets.get(cut.assetId)!;
    if (asset.probeError)
      warn(`${p}/video_id`, `could not measure asset ${cut.assetId}: ${asset.probeError}; its length was not checked`);
    const f = asset.facts;
    if (!f) continue;
    if (!f.hasVideo) {
      err(`${p}/video_id`, `asset ${cut.assetId} has no video stream`, idsOfKind(assets, 'video'));
      continue;
    }
    if (f.durationMs !== undefined) {
      if (cut.inMs >= f.durationMs)
        err(
          `${p}/video_start_time`,
          `the in point ${formatShort(cut.inMs)} is past the end of the clip (it lasts ${formatShort(f.durationMs)})`,
          `in and out points are source times within 00:00:00.000-${formatTimecode(f.durationMs)}`,
        );
      else if (cut.outMs > f.durationMs + TOLERANCE_MS)
        err(
          `${p}/video_end_time`,
          `the out point ${formatShort(cut.outMs)} is past the end of the clip (it lasts ${formatShort(f.durationMs)})`,
          `end the cut by ${formatTimecode(f.durationMs)}`,
        );
    }
    if (!cut.crop && !cut.focus && f.width && f.height) {
      const srcAspect = f.width / f.height;
      const key = `${f.width}x${f.height}`;
      if (Math.abs(srcAspect - outAspect) / outAspect > 0.01 && !aspectWarned.has(key)) {
        aspectWarned.add(key);
        warn(
          '/video_output_resolution',
          `the output is ${aspectLabel(timeline.width, timeline.height)} but cut ${cut.index + 1} (and any other ${key} source) is ${aspectLabel(f.width, f.height)}: it will be letterboxed or pillarboxed`,
          'pick a resolution of the sources\' shape, or give the cut a focus ({x, y} or "auto") to fill the frame',
        );
      }
    }
  }

  // An output larger than every source it shows is upscaled: softer pictures, and a bigger file, for nothing.
  const sizes = timeline.cuts
    .map((c) => assets.get(c.assetId))
    .filter((a) => a?.kind === 'video')
    .map((a) => a!.facts)
    .filter((f): f is MediaFacts => !!f?.hasVideo && !!f.width && !!f.height);
  if (
    sizes.length &&
    sizes.length === timeline.cuts.length &&
    sizes.every((f) => timeline.width > f.width! && timeline.height > f.height!)
  ) {
    const largest = sizes.reduce((m, f) => (f.width! * f.height! > m.width! * m.height! ? f : m));
    // The output's own shape at the largest source's scale: cuts that fill the frame (a crop or focus) show the
    // largest part of the source of that shape (a vertical cut of 768x576 is 324x576, where "768x576" would undo the
    // 9:16 frame); cuts that fit inside it show the whole source with bars (1024x576 for a 16:9 output).
    const fill = timeline.cuts.some((c) => c.crop || c.focus);
    const pick = fill ? Math.min : Math.max;
    const scale = pick(largest.width! / timeline.width, largest.height! / timeline.height);
    const even = (v: number) => Math.max(2, 2 * Math.floor((v * scale) / 2));
    warn(
      '/video_output_resolution',
      `the output is ${timeline.width}x${timeline.height}, larger than every source (the largest is ${largest.width}x${largest.height}): it upscales them`,
      `resolution "${even(timeline.width)}x${even(timeline.height)}" (this shape at the sources' scale) keeps their own sharpness`,
    );
  }

  for (const ov of timeline.overlays) {
    const p = `/audio_overlay/${ov.index}`;
    const problem = assetProblem(ov.assetId, assets, 'audio');
    if (problem) {
      err(`${p}/audio_id`, problem.message, problem.hint);
      continue;
    }
    const asset = assets.get(ov.assetId)!;
    if (asset.probeError)
      warn(`${p}/audio_id`, `could not measure asset ${ov.assetId}: ${asset.probeError}; its length was not checked`);
    const f = asset.facts;
    if (!f) continue;
    if (!f.hasAudio) {
      err(`${p}/audio_id`, `asset ${ov.assetId} has no audio stream`, idsOfKind(assets, 'audio'));
      continue;
    }
    const window = ov.endMs - ov.startMs;
    const from = ov.fromMs ?? 0;
    if (f.durationMs !== undefined && from >= f.durationMs) {
      err(
        `${p}/from`,
        `from (${formatShort(from)}) is past the end of the audio (${formatShort(f.durationMs)})`,
        `give a time under ${formatShort(f.durationMs)}`,
      );
    } else if (f.durationMs !== undefined && f.durationMs - from + TOLERANCE_MS < window) {
      const left = f.durationMs - from;
      warn(
        `${p}/audio_end_time`,
        `the audio lasts ${formatShort(left)}${from ? ` from ${formatShort(from)}` : ''} but its window is ${formatShort(window)}: silence from ${formatShort(ov.startMs + left)}`,
        `overlays play from ${from ? 'from' : "the audio's beginning"}; shorten the window or pick a longer audio`,
      );
    }
  }
  return out;
}

export interface LintResult {
  edit?: Edit;
  timeline?: Timeline;
  diagnostics: Diagnostic[];
  /** True when there is no error: the edit can be sent. */
  ready: boolean;
}

/** Errors before warnings: the sort is stable, so each keeps its order among its kind. */
function errorsFirst(a: Diagnostic, b: Diagnostic): number {
  if (a.severity === b.severity) return 0;
  if (a.severity === 'error') return -1;
  return 1;
}

/** Normalises an edit and checks it against the assets; errors first, then warnings, each in path order. */
export function lintEdit(raw: unknown, assets?: Map<string, AssetInfo>): LintResult {
  const n = normalizeEdit(raw);
  const diagnostics = [...n.diagnostics, ...(n.timeline && assets ? lintAgainstAssets(n.timeline, assets) : [])];
  diagnostics.sort(errorsFirst);
  const ready = !diagnostics.some((d) => d.severity === 'error') && !!n.edit;
  return {
    ...(n.edit && ready ? { edit: n.edit } : {}),
    ...(n.timeline ? { timeline: n.timeline } : {}),
    diagnostics,
    ready,
  };
}
