// The edit definition of the service (service-interface.md, section 4.5) in its canonical form: what cutroom
// sends. One zod model serves as the tool output schema, the check before sending, and the docs.
import { z } from 'zod';

const TIME = /^\d{2}:[0-5]\d:[0-5]\d\.\d{3}$/;
export const Timecode = z.string().regex(TIME).describe('HH:MM:SS.mmm');

export const AudioLevelSchema = z.object({
  audio_level: z.number().min(0).max(1).describe('Volume factor, 0 (silent) to 1 (as recorded)'),
  start_time: Timecode,
  end_time: Timecode,
});
export type AudioLevel = z.infer<typeof AudioLevelSchema>;

export const CropSchema = z.object({
  zoom: z.number().min(0.1).max(10).describe('1 fills the frame; above 1 zooms in'),
  position_x: z.number().min(-1).max(1).describe('-1 left edge, 0 centre, 1 right edge'),
  position_y: z.number().min(-1).max(1).describe('-1 top edge, 0 centre, 1 bottom edge'),
});
export type Crop = z.infer<typeof CropSchema>;

export const VideoSegmentSchema = z.object({
  video_id: z.string().describe('Asset id of a video in the project'),
  type: z.literal('videofile'),
  video_start_time: Timecode.describe('In point in the source clip'),
  video_end_time: Timecode.describe('Out point in the source clip'),
  audio_levels: z.array(AudioLevelSchema).describe('Volume windows, on the source clip\'s clock; 1.0 outside every window'),
  crop: CropSchema.optional(),
});
export type VideoSegment = z.infer<typeof VideoSegmentSchema>;

export const AudioSegmentSchema = z.object({
  audio_id: z.string().describe('Asset id of an audio asset in the project'),
  type: z.literal('audio'),
  audio_start_time: Timecode.describe('Where the overlay starts on the output timeline'),
  audio_end_time: Timecode.describe('Where the overlay ends on the output timeline; the audio plays from its own beginning'),
  audio_levels: z.array(AudioLevelSchema).describe('Volume windows, on the output timeline clock'),
});
export type AudioSegment = z.infer<typeof AudioSegmentSchema>;

export const EditSchema = z.object({
  video_edit_version: z.string().describe('Edit format version: "1.0"'),
  video_output_format: z.string().describe('Container: "mp4"'),
  video_output_resolution: z.string().describe('WIDTHxHEIGHT, even numbers, e.g. 1920x1080'),
  video_output_fps: z.number().describe('Frames per second, may be fractional (29.97)'),
  video_output_filename: z.string().describe('A plain file name ending in .mp4'),
  video_series_sequential: z.array(VideoSegmentSchema).describe('Video cuts, played one after the other'),
  audio_overlay: z.array(AudioSegmentSchema).describe('Audio laid over the timeline'),
  name: z.string().optional(),
  description: z.string().optional(),
  skip_rendering: z.boolean().optional(),
  subtitle_from_audio_overlay: z.boolean().optional(),
});
export type Edit = z.infer<typeof EditSchema>;

export const DiagnosticSchema = z.object({
  severity: z.enum(['error', 'warning']),
  path: z.string().describe('JSON pointer into the canonical edit, e.g. /video_series_sequential/2/video_end_time'),
  message: z.string(),
  hint: z.string().optional().describe('How to fix it'),
});
export type Diagnostic = z.infer<typeof DiagnosticSchema>;

export const EDIT_VERSION = '1.0';
export const OUTPUT_FORMAT = 'mp4';
export const DEFAULT_RESOLUTION = '1920x1080';
export const DEFAULT_FPS = 30;
/** The frame rates an edit may ask for. */
export const MIN_FPS = 1;
export const MAX_FPS = 120;
export const DEFAULT_FILENAME = 'cutroom-edit.mp4';

/** A time as tools accept it: HH:MM:SS(.mmm) or seconds (as a number or a numeric string). */
export const TimeInputSchema = z.union([
  z.string().describe('HH:MM:SS, HH:MM:SS.mmm or seconds as text, e.g. "00:01:05.250" or "65.25"'),
  z.number().describe('seconds, e.g. 65.25'),
]);

const LevelDraft = z.object({
  audio_level: z.number().describe('0 (silent) to 1 (as recorded)'),
  start_time: TimeInputSchema,
  end_time: TimeInputSchema,
});

/**
 * An edit as a tool accepts it: the shape of EditSchema, every field optional but the cuts, and times in any
 * accepted form. normalizeEdit turns it into the canonical EditSchema and reports what is wrong, by path.
 */
export const EditDraftSchema = z.object({
  video_edit_version: z.string().optional().describe('"1.0" (the default)'),
  video_output_format: z.string().optional().describe('"mp4" (the default)'),
  video_output_resolution: z.string().optional().describe('WIDTHxHEIGHT with even numbers, e.g. "1920x1080" (the default)'),
  video_output_fps: z.number().optional().describe('Frames per second, above 0 and at most 120; default 30'),
  video_output_filename: z.string().optional().describe('A plain file name ending in .mp4; default cutroom-edit.mp4'),
  video_series_sequential: z
    .array(
      z.object({
        video_id: z.string().describe('Id of a video asset of the project'),
        type: z.string().optional().describe('"videofile"'),
        video_start_time: TimeInputSchema.describe('In point in the source clip'),
        video_end_time: TimeInputSchema.describe('Out point in the source clip'),
        audio_levels: z.array(LevelDraft).optional().describe("Volume windows on the source clip's clock; 1.0 outside every window"),
        crop: CropSchema.partial().optional(),
      }),
    )
    .describe('Video cuts in playing order'),
  audio_overlay: z
    .array(
      z.object({
        audio_id: z.string().describe('Id of an audio asset of the project'),
        type: z.string().optional().describe('"audio"'),
        audio_start_time: TimeInputSchema.describe('Start on the output timeline'),
        audio_end_time: TimeInputSchema.describe('End on the output timeline; the audio plays from its own beginning'),
        audio_levels: z.array(LevelDraft).optional().describe('Volume windows on the output timeline clock'),
      }),
    )
    .optional()
    .describe('Audio laid over the timeline'),
  name: z.string().optional(),
  description: z.string().optional(),
  skip_rendering: z.boolean().optional(),
  subtitle_from_audio_overlay: z.boolean().optional(),
});
