// What an inspection is: the shots, silences and loudness inspect_asset finds in an asset (its schema, which the
// tool's result extends), and what is cached of it per asset (StoredInspection, what the media runtime's
// inspections hold). Finding one is inspect.ts.
import { z } from 'zod';
import { LOUDNESS_POINTS, SILENCE_DB, SILENCE_MIN_SECONDS, type PictureChange } from '../media/inspect.js';

export const ShotSchema = z.object({
  index: z.number().int().describe('1-based, in source order; compose_edit clips take it as shot'),
  start_seconds: z.number().describe('First frame of the shot (source time; in point rounded down to the ms)'),
  end_seconds: z.number().describe('Where the next shot starts, or the end of the source (exclusive)'),
  start: z.string().describe('start_seconds as HH:MM:SS.mmm'),
  end: z.string().describe('end_seconds as HH:MM:SS.mmm'),
});
export type Shot = z.infer<typeof ShotSchema>;

export const InspectionSchema = z.object({
  asset_id: z.string(),
  kind: z.enum(['video', 'audio', 'image']),
  duration_seconds: z.number().describe('0 for an image'),
  width: z.number().optional(),
  height: z.number().optional(),
  fps: z.number().optional(),
  has_audio: z.boolean(),
  shots: z
    .array(ShotSchema)
    .describe('Hard cuts found to the frame; one shot for a video without cuts; none for audio or an image'),
  silences: z
    .array(z.object({ start_seconds: z.number(), end_seconds: z.number() }))
    .describe(`Stretches of at least ${SILENCE_MIN_SECONDS} s below ${SILENCE_DB} dBFS`),
  loudness: z
    .array(z.object({ start_seconds: z.number(), mean_db: z.number(), peak_db: z.number() }))
    .describe(`The sound's level per window (RMS and peak, dBFS; -100 is silence), at most ${LOUDNESS_POINTS} windows`),
  scan: z
    .object({
      shots: z
        .enum(['keyframes', 'full_decode', 'none'])
        .describe(
          'keyframes: candidates from keyframes and packet sizes, refined on full frames; full_decode: every frame decoded',
        ),
      scene_threshold: z.number().describe("ffmpeg scdet's threshold (0-100) a frame must reach to start a shot"),
      frames_decoded: z.number().optional().describe('Frames decoded at full size to place the cuts'),
      frames_total: z.number().optional(),
      silence_threshold_db: z.number(),
      silence_min_seconds: z.number(),
      loudness_window_seconds: z.number().optional(),
      note: z.string().optional(),
    })
    .describe('How it was measured'),
});
export type Inspection = z.infer<typeof InspectionSchema>;

/** What is cached: the inspection and what later sheets need. */
/** The key an asset's inspection is kept under; the version is bumped when what a scan finds changes (shot times of
 * AVI files, a frame late before 2) so that older inspections are made again. */
export const inspectionKey = (assetId: string, identity: string) => `${assetId}|${identity}|2`;

export interface StoredInspection {
  inspection: Inspection;
  startTime: number;
  keyframes: number[];
  /** A thumbnail of every keyframe was kept (beside the stored inspection). */
  thumbs?: boolean;
  /** Per cut (shot n starts at cut n - 2), the index of its first frame's thumbnail (-1: none kept). */
  cutThumbs?: number[];
  /** Videos: how much the picture changes per window (null: the source has no frames coded from others). */
  motion?: PictureChange | null;
}
