// The summary an agent reads: every cut with its place on the output timeline, and the total length.
import { z } from 'zod';
import type { Timeline } from './normalize.js';
import { formatTimecode } from './timecode.js';

export const TimelineSummarySchema = z.object({
  total_duration: z.string().describe('HH:MM:SS.mmm'),
  total_seconds: z.number(),
  resolution: z.string(),
  fps: z.number(),
  cuts: z.array(
    z.object({
      index: z.number(),
      asset_id: z.string(),
      source_in: z.string(),
      source_out: z.string(),
      timeline_start: z.string(),
      timeline_end: z.string(),
      seconds: z.number(),
    }),
  ),
  overlays: z.array(z.object({ index: z.number(), asset_id: z.string(), timeline_start: z.string(), timeline_end: z.string() })),
});
export type TimelineSummary = z.infer<typeof TimelineSummarySchema>;

export function summarizeTimeline(t: Timeline): TimelineSummary {
  return {
    total_duration: formatTimecode(t.totalMs),
    total_seconds: t.totalMs / 1000,
    resolution: `${t.width}x${t.height}`,
    fps: t.fps.value,
    cuts: t.cuts.map((c) => ({
      index: c.index,
      asset_id: c.assetId,
      source_in: formatTimecode(c.inMs),
      source_out: formatTimecode(c.outMs),
      timeline_start: formatTimecode(c.startMs),
      timeline_end: formatTimecode(c.endMs),
      seconds: (c.outMs - c.inMs) / 1000,
    })),
    overlays: t.overlays.map((o) => ({ index: o.index, asset_id: o.assetId, timeline_start: formatTimecode(o.startMs), timeline_end: formatTimecode(o.endMs) })),
  };
}
