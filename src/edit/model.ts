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
  zoom: z.number().min(0.1).max(10),
  position_x: z.number().min(-1).max(1),
  position_y: z.number().min(-1).max(1),
});
export type Crop = z.infer<typeof CropSchema>;

/**
 * Where a cut's picture is framed when the output has another shape than its source (cutroom's own field): a point
 * {x, y} (0-1 of the source picture) kept as near the frame's centre as the picture allows, or "auto", which follows
 * the picture's motion and detail. The frame is covered (zoom 1), never letterboxed. x and y are checked (0-1) in
 * normalize.ts, which reports them by path, as the mix fields are.
 */
export const FocusSchema = z.union([z.object({ x: z.number(), y: z.number() }), z.literal('auto')]);
export type Focus = z.infer<typeof FocusSchema>;

/**
 * The mix of a cut or an overlay beyond its 0-1 level windows: cutroom's own fields, rendered locally; the service's
 * edit format carries a gain of 0 dB or less (folded into audio_levels) and none of the rest (said in warnings).
 */
export const MixFields = {
  gain_db: z.number().optional().describe('dB, -60 to 24; default 0'),
  fade_in: z.number().optional().describe('Seconds, from silence'),
  fade_out: z.number().optional().describe('Seconds, to silence'),
};
/** What an overlay is in the mix: music is lowered under speech by duck_db (cutroom's own, rendered locally). */
export const ROLES = ['dialogue', 'music', 'effects'] as const;
export const RoleFields = {
  role: z.enum(ROLES).optional(),
  duck_db: z.number().optional().describe('Music: dB under speech; default 12'),
};
export const DEFAULT_DUCK_DB = 12;
export const MAX_DUCK_DB = 40;
export const MIN_GAIN_DB = -60;
export const MAX_GAIN_DB = 24;

/**
 * A cut's sound handles (cutroom's own field, rendered locally): seconds of pause (no word) in its source before its
 * in point and after its out point. Where two cuts meet and each has half a crossfade there, their sound is
 * crossfaded across the join (media/sound-plan.ts crossfadeJoins); compose_edit sets them on cuts by words.
 */
export const SoundHandlesSchema = z.object({ before: z.number().optional(), after: z.number().optional() });
export type SoundHandles = z.infer<typeof SoundHandlesSchema>;
/** The longest sound handle an edit keeps (s): more than any crossfade needs. */
export const MAX_SOUND_HANDLE = 1;

export const VideoSegmentSchema = z.object({
  video_id: z.string().describe('Asset id of a video in the project'),
  type: z.literal('videofile'),
  video_start_time: Timecode.describe('In point in the source clip'),
  video_end_time: Timecode.describe('Out point in the source clip'),
  audio_levels: z
    .array(AudioLevelSchema)
    .describe("Volume windows, on the source clip's clock; 1.0 outside every window"),
  crop: CropSchema.optional(),
  focus: FocusSchema.optional(),
  sound_handles: SoundHandlesSchema.optional(),
  ...MixFields,
});
export type VideoSegment = z.infer<typeof VideoSegmentSchema>;

export const AudioSegmentSchema = z.object({
  audio_id: z.string().describe('Asset id of an audio asset in the project'),
  type: z.literal('audio'),
  audio_start_time: Timecode.describe('Where the overlay starts on the output timeline'),
  audio_end_time: Timecode.describe('Where the overlay ends on the output timeline'),
  audio_levels: z.array(AudioLevelSchema).describe('Volume windows, on the output timeline clock'),
  from: Timecode.optional().describe('Where in the audio it starts playing; default its beginning'),
  ...MixFields,
  ...RoleFields,
});
export type AudioSegment = z.infer<typeof AudioSegmentSchema>;

/**
 * Loudness targets an edit may ask for by name: integrated loudness (LUFS) and the true peak's ceiling (dBTP).
 * web: the streaming services' -14; podcast: the -16 the podcast platforms ask; broadcast: EBU R128's -23.
 */
export const LOUDNESS_PRESETS = {
  web: { target_lufs: -14, true_peak_db: -1 },
  podcast: { target_lufs: -16, true_peak_db: -1 },
  broadcast: { target_lufs: -23, true_peak_db: -1 },
} as const;
export const LoudnessSchema = z.object({ target_lufs: z.number(), true_peak_db: z.number() });
export type Loudness = z.infer<typeof LoudnessSchema>;
export const MIN_TARGET_LUFS = -40;
export const MAX_TARGET_LUFS = -5;
export const MIN_TRUE_PEAK_DB = -12;
export const MAX_TRUE_PEAK_DB = 0;
/** Every mix's true peak is held under this (dBTP) by a limiter, unless the edit's loudness asks another ceiling. */
export const DEFAULT_TRUE_PEAK_DB = -1;
/**
 * Captions from the transcripts (edit/captions.ts): burned into local renders and previews; export_edit writes srt/vtt.
 */
// (Its fields are said in one line where a tool takes it: tools/list is paid in every chat.)
export const CAPTION_POSITIONS = ['bottom', 'middle', 'top'] as const;
export type CaptionPosition = (typeof CAPTION_POSITIONS)[number];
export const CaptionsSchema = z.object({
  burn: z.boolean().optional(),
  style: z
    .object({
      size: z.number().optional(),
      color: z.string().optional(),
      position: z.enum(CAPTION_POSITIONS).optional(),
      margin: z.number().optional(),
    })
    .optional(),
});
export type Captions = z.infer<typeof CaptionsSchema>;
/** The captions' look as asked (CaptionsSchema's style): checked in normalize.ts. */
export interface CaptionStyle {
  /** Text height, % of the picture's shorter side (its height, or its width when it is taller than wide). */
  size: number;
  /** Text colour, RRGGBB. */
  color: string;
  /** Where the cues sit: bottom, middle or top of the picture. */
  position: CaptionPosition;
  /** % of the picture's height between the cues and the edge they sit at (bottom or top); absent: by the shape. */
  margin?: number;
}
export const DEFAULT_CAPTION_STYLE: CaptionStyle = { size: 5, color: 'FFFFFF', position: 'bottom' };
export const MIN_CAPTION_SIZE = 2;
export const MAX_CAPTION_SIZE = 15;
/** A margin is at most this % of the picture's height. */
export const MAX_CAPTION_MARGIN = 45;

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
  // cutroom's own, rendered locally (the service is told nothing of them; render_edit says so in warnings).
  loudness: LoudnessSchema.optional(),
  level_dialogue: z.boolean().optional(),
  captions: CaptionsSchema.optional(),
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
/**
 * Output sizes an edit may name instead of WxH (any case, spaces around ignored). The first name of each is its own;
 * the others are aliases that mean the same. Descriptions list the `listed` ones, in this order (tools/list is paid in
 * every chat); docs/editing.md lists them all (a unit test holds it to this table).
 */
export const OUTPUT_PRESETS: readonly { names: readonly [string, ...string[]]; size: string; listed?: true }[] = [
  { names: ['1080p', 'hd', 'full hd', '16:9'], size: '1920x1080', listed: true },
  { names: ['720p'], size: '1280x720', listed: true },
  { names: ['vertical', 'portrait', '9:16'], size: '1080x1920', listed: true },
  { names: ['square', '1:1'], size: '1080x1080', listed: true },
  { names: ['4k', '2160p', 'uhd'], size: '3840x2160', listed: true },
  { names: ['1440p'], size: '2560x1440' },
  { names: ['480p'], size: '854x480' },
  { names: ['4:5'], size: '1080x1350' },
];
const PRESET_SIZES = new Map(OUTPUT_PRESETS.flatMap((p) => p.names.map((name) => [name, p.size] as const)));

/**
 * A preset's size (OUTPUT_PRESETS), else the resolution as given (WIDTHxHEIGHT, or anything for the linter to judge).
 */
export function resolvePreset(resolution: string | undefined): string {
  if (resolution === undefined) return DEFAULT_RESOLUTION;
  return PRESET_SIZES.get(resolution.trim().toLowerCase()) ?? resolution;
}
/** The largest output: 8K. */
export const MAX_WIDTH = 7680;
export const MAX_HEIGHT = 4320;
/** Every name a resolution may be given as, for a refusal: "1080p, hd, full hd, 16:9, 720p, …". */
export const OUTPUT_PRESET_NAMES = OUTPUT_PRESETS.flatMap((p) => p.names).join(', ');
/** The presets descriptions name: "1080p, 720p, vertical, square, 4k". */
export const LISTED_OUTPUT_PRESETS = OUTPUT_PRESETS.filter((p) => p.listed)
  .map((p) => p.names[0])
  .join(', ');
export const DEFAULT_FPS = 30;
/** The frame rates an edit may ask for. */
export const MIN_FPS = 1;
export const MAX_FPS = 120;
export const DEFAULT_FILENAME = 'cutroom-edit.mp4';

/**
 * A time as tools accept it: HH:MM:SS(.mmm) or seconds (as a number or a numeric string). Said once, in the
 * instructions.
 */
export const TimeInputSchema = z.union([z.string(), z.number()]);

/**
 * An edit as a tool accepts it whole: the service's edit definition, any field left out taking its default and times
 * in any accepted form. Declared loosely (its fields are read by normalizeEdit, which turns it into the canonical
 * EditSchema and reports every problem by path), so that tools/list does not carry a second edit schema beside the
 * short form of clips and overlays.
 */
export const EditDraftSchema = z.looseObject({});
