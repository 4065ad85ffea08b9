// The dry run: render a checked edit small and fast with ffmpeg, measure it, and draw its contact sheet.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CutPlacementSchema, summarizeTimeline, toRenderPlan, type RenderPlan } from '../edit/plan.js';
import { UserFacingError } from '../errors.js';
import type { PreviewCache } from '../media/cache.js';
import { MAX_BYTES, contactSheetArgs, sheetFilter, sheetOutputArgs, sizeOf } from '../media/contact-sheet.js';
import { judgeCut } from '../media/measure.js';
import type { Limiter, MediaProber } from '../media/probe.js';
import { lastErrorLine, runProcess } from '../media/process.js';
import { RenderError, renderTimeline } from '../media/render.js';
import type { EncodeSettings, InputSpec } from '../media/timeline-args.js';
import type { CheckedEdit } from './check-edit.js';
import type { InspectionCache } from '../media/inspect-cache.js';
import type { StoredInspection } from './inspect.js';

export interface MediaRuntime {
  ffmpeg: string;
  /** At most this many ffmpeg processes at once (previews and local renders). */
  limiter: Limiter;
  cache: PreviewCache;
  maxInputs: number;
  font?: string;
  prober?: MediaProber;
  /** What inspect_asset found, per asset (memory and CUTROOM_CACHE_DIR/inspections). */
  inspections?: InspectionCache<StoredInspection>;
}

const SHEET_QUALITY = [3, 6, 10, 16, 24, 31];

export const PREVIEW_ENCODE: EncodeSettings = { preset: 'veryfast', crf: 30, audio: 'aac', audioBitrate: '96k', container: 'mp4' };

export const PreviewCutSchema = CutPlacementSchema.extend({
  loudness: z.object({ mean_db: z.number(), peak_db: z.number() }).optional().describe('Of what plays during the cut (the mix), dBFS'),
  flags: z.array(z.string()).describe('Black or frozen picture; silence where sound was asked; sound where level 0 was asked'),
});

export const PreviewSchema = z.object({
  preview_id: z.string(),
  path: z.string().describe('The preview video on this machine'),
  sheet_path: z.string().describe('The contact sheet (JPEG) on this machine'),
  resolution: z.string(),
  planned_seconds: z.number(),
  measured_seconds: z.number(),
  cuts: z.array(PreviewCutSchema),
  warnings: z.array(z.string()),
});
export type Preview = z.infer<typeof PreviewSchema>;

/** The ffmpeg inputs of a checked edit: each cut's and overlay's source and whether it has sound. */
export function inputsFor(checked: CheckedEdit, plan: RenderPlan): { cutInputs: InputSpec[]; overlayInputs: InputSpec[] } {
  const spec = (assetId: string): InputSpec => {
    const a = checked.assets.get(assetId);
    if (!a?.source || !a.facts) {
      throw new UserFacingError(`asset ${assetId} could not be read${a?.probeError ? ` (${a.probeError})` : ''}; get_project shows its status and link`);
    }
    return { source: a.source, hasAudio: a.facts.hasAudio, ...(a.facts.width && a.facts.height ? { width: a.facts.width, height: a.facts.height } : {}) };
  };
  return { cutInputs: plan.cuts.map((c) => spec(c.assetId)), overlayInputs: plan.overlays.map((o) => spec(o.assetId)) };
}

async function measuredSeconds(ffprobe: string | undefined, path: string): Promise<number | undefined> {
  if (!ffprobe) return undefined;
  const r = await runProcess(ffprobe, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', '-protocol_whitelist', 'file', `file:${path}`], { timeoutMs: 20_000 });
  const s = Number(r.stdout.toString().trim());
  return r.code === 0 && Number.isFinite(s) ? s : undefined;
}

export interface PreviewOptions {
  width: number;
  signal?: AbortSignal;
  onProgress?: (fraction: number, message: string) => void;
  timeoutMs?: number;
  trackRss?: boolean;
  /** Phase timings, for CUTROOM_LOG_LEVEL=debug. */
  debug?: (msg: string) => void;
}

export async function previewEdit(rt: MediaRuntime, checked: CheckedEdit, opts: PreviewOptions): Promise<Preview & { sheetBytes: Buffer; ffmpegMaxRssKiB?: number }> {
  if (!checked.timeline) throw new UserFacingError('nothing to preview: the edit has no playable cut');
  const plan = toRenderPlan(checked.timeline, opts.width);
  const { cutInputs, overlayInputs } = inputsFor(checked, plan);
  const { id, dir } = await rt.cache.create();
  const path = join(dir, 'preview.mp4');
  const sheetPath = join(dir, 'sheet.jpg');
  try {
    const t0 = performance.now();
    const outcome = await rt.limiter.run(async () => {
      opts.debug?.(`preview ${id}: waited ${(performance.now() - t0).toFixed(0)} ms for an ffmpeg slot`);
      const t1 = performance.now();
      opts.onProgress?.(0, 'rendering');
      const o = await renderTimeline({
        ffmpeg: rt.ffmpeg,
        plan,
        cutInputs,
        overlayInputs,
        output: path,
        encode: PREVIEW_ENCODE,
        measure: true,
        maxInputs: rt.maxInputs,
        timeoutMs: opts.timeoutMs ?? 600_000,
        signal: opts.signal,
        onProgress: (f) => opts.onProgress?.(f * 0.95, 'rendering'),
        trackRss: opts.trackRss,
        sheet: { filter: sheetFilter(plan, rt.font).filter, outputArgs: sheetOutputArgs(sheetPath, SHEET_QUALITY[0]!) },
      });
      opts.debug?.(`preview ${id}: rendered ${plan.totalSec} s in ${(performance.now() - t1).toFixed(0)} ms, ${o.processes} ffmpeg process(es)`);
      if (o.sheetDrawn && (await sizeOf(sheetPath)) <= MAX_BYTES) return o;
      opts.onProgress?.(0.95, 'drawing the contact sheet');
      // A pass of its own (after a chunked render), lowering JPEG quality until the sheet fits clients' limit.
      for (const q of SHEET_QUALITY.slice(o.sheetDrawn ? 1 : 0)) {
        const { args } = contactSheetArgs(path, plan, sheetPath, rt.font, q);
        const r = await runProcess(rt.ffmpeg, args, { timeoutMs: 60_000, signal: opts.signal });
        if (r.cancelled) throw new RenderError('cancelled', true);
        if (r.code !== 0) throw new RenderError(`the contact sheet failed (${lastErrorLine(r.stderr)})`);
        if ((await sizeOf(sheetPath)) <= MAX_BYTES) break;
      }
      return o;
    });
    const t2 = performance.now();
    const measured = (await measuredSeconds(rt.prober?.ffprobe, path)) ?? plan.totalSec;
    opts.debug?.(`preview ${id}: measured the output in ${(performance.now() - t2).toFixed(0)} ms`);
    const frame = plan.fpsDen / plan.fpsNum;
    const warnings: string[] = [];
    if (Math.abs(measured - plan.totalSec) > frame + 1e-3) {
      warnings.push(`the preview lasts ${measured.toFixed(3)} s but the plan says ${plan.totalSec.toFixed(3)} s (more than one frame apart)`);
    }
    if (!rt.font) warnings.push('no font found for the contact sheet labels; frames are in cut order, three per cut');
    const placements = summarizeTimeline(checked.timeline).cuts;
    const cuts = plan.cuts.map((c, i) => {
      const report = judgeCut(c, outcome.measurements, cutInputs[i]!.hasAudio);
      return { ...placements[i]!, ...(report.loudness ? { loudness: report.loudness } : {}), flags: report.flags };
    });
    const sheetBytes = await readFile(sheetPath);
    await rt.cache.evict(id);
    return {
      preview_id: id,
      path,
      sheet_path: sheetPath,
      resolution: `${plan.width}x${plan.height}`,
      planned_seconds: plan.totalSec,
      measured_seconds: Math.round(measured * 1000) / 1000,
      cuts,
      warnings,
      sheetBytes,
      ...(outcome.ffmpegMaxRssKiB ? { ffmpegMaxRssKiB: outcome.ffmpegMaxRssKiB } : {}),
    };
  } catch (err) {
    // Nothing half-made stays in the cache.
    await rm(dir, { recursive: true, force: true });
    if (err instanceof RenderError) throw new UserFacingError(err.cancelled ? 'the preview was cancelled; nothing was kept' : `the preview failed: ${err.message}`);
    throw err;
  }
}
