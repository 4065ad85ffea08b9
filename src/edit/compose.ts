// Building an edit definition from a short list of clips and overlays, the way an agent thinks of a cut.
// Pure: the result goes through normalizeEdit/lintEdit like any edit written by hand.
import { z } from 'zod';
import {
  CropSchema,
  FocusSchema,
  MixFields,
  type Captions,
  RoleFields,
  DEFAULT_FILENAME,
  DEFAULT_FPS,
  DEFAULT_RESOLUTION,
  OUTPUT_PRESETS,
  EDIT_VERSION,
  OUTPUT_FORMAT,
  TimeInputSchema as TimeInput,
} from './model.js';
import { parseTimecode } from './timecode.js';

export const ClipInputSchema = z.object({
  asset_id: z.string().describe('A video asset'),
  start: TimeInput.optional().describe('In point (source time)'),
  end: TimeInput.optional().describe('Out point (source time)'),
  shot: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('A shot as inspect_asset numbers them; start/end then offsets in it'),
  phrase: z.string().optional().describe("Instead of start/end: cut where this is said (the asset's transcript)"),
  occurrence: z.number().int().min(1).optional().describe('Which time phrase is said; default 1'),
  words: z
    .array(z.number().int().min(0))
    .min(2)
    .max(2)
    .optional()
    .describe('Instead of start/end: [first, last] word indices of its transcript'),
  handle: z.number().min(0).max(2).optional().describe('By words: seconds of pause kept around them; default 0.15'),
  volume: z.number().optional().describe('0-1; default 1'),
  crop: CropSchema.partial().optional().describe('Fill the frame: zoom (1 fills), position_x/y -1..1'),
  focus: FocusSchema.optional().describe('Fill the frame around x,y (0-1 of the picture), or "auto"'),
  ...MixFields,
});
export const OverlayInputSchema = z.object({
  asset_id: z.string().describe('An audio asset'),
  at: TimeInput.describe('Start on the output timeline'),
  until: TimeInput.optional().describe("End on the output timeline; default the timeline's or the audio's end"),
  volume: z.number().optional().describe('0-1; default 1'),
  from: TimeInput.optional().describe('Start in the audio; default 0'),
  ...MixFields,
  ...RoleFields,
});
export type ClipInput = z.infer<typeof ClipInputSchema>;
/**
 * A clip as composed: a clip cut by words carries the level windows that mute what its picture holds beyond the words.
 */
export type ComposeClip = ClipInput & { levels?: { level: number; from: number; to: number }[] };
export type OverlayInput = z.infer<typeof OverlayInputSchema>;

export interface ComposeInput {
  clips: ComposeClip[];
  overlays?: OverlayInput[];
  resolution?: string;
  fps?: number;
  filename?: string;
  name?: string;
  description?: string;
  captions?: Captions;
}

const PRESET_SIZES = new Map(OUTPUT_PRESETS.flatMap((p) => p.names.map((name) => [name, p.size] as const)));

/**
 * A preset's size (OUTPUT_PRESETS), else the resolution as given (WIDTHxHEIGHT, or anything for the linter to judge).
 */
export function resolvePreset(resolution: string | undefined): string {
  if (resolution === undefined) return DEFAULT_RESOLUTION;
  return PRESET_SIZES.get(resolution.trim().toLowerCase()) ?? resolution;
}

const seconds = (v: string | number | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const r = parseTimecode(v);
  return r.ok ? r.ms / 1000 : undefined;
};

/** The mix fields given, passed on as they are (normalizeEdit checks them). */
const mixOf = (m: { gain_db?: number; fade_in?: number; fade_out?: number }) => ({
  ...(m.gain_db !== undefined ? { gain_db: m.gain_db } : {}),
  ...(m.fade_in !== undefined ? { fade_in: m.fade_in } : {}),
  ...(m.fade_out !== undefined ? { fade_out: m.fade_out } : {}),
});

/** A clip's audio_levels: its level windows times its volume, else its volume over the whole clip, else none. */
function audioLevelsOf(c: ComposeClip) {
  if (c.levels)
    return c.levels.map((l) => ({
      audio_level: Math.round(l.level * (c.volume ?? 1) * 1000) / 1000,
      start_time: l.from,
      end_time: l.to,
    }));
  if (c.volume === undefined) return [];
  return [{ audio_level: c.volume, start_time: c.start, end_time: c.end }];
}

/** audioDurations: measured lengths (seconds) of audio assets, when known, to end overlays with their audio. */
export function composeEdit(
  input: ComposeInput,
  audioDurations: Map<string, number> = new Map(),
): Record<string, unknown> {
  const clips = input.clips.map((c) => {
    const seg: Record<string, unknown> = {
      video_id: c.asset_id,
      type: 'videofile',
      video_start_time: c.start,
      video_end_time: c.end,
      audio_levels: audioLevelsOf(c),
    };
    if (c.crop) seg.crop = { zoom: 1, position_x: 0, position_y: 0, ...c.crop };
    if (c.focus !== undefined) seg.focus = c.focus;
    return { ...seg, ...mixOf(c) };
  });
  // The timeline's length, where the clip times parse; a bad time is reported by the linter, not here.
  let totalSeconds = 0;
  for (const c of input.clips) {
    const s = seconds(c.start);
    const e = seconds(c.end);
    if (s !== undefined && e !== undefined && e > s) totalSeconds += e - s;
  }
  const overlays = (input.overlays ?? []).map((o) => {
    let until: string | number | undefined = o.until;
    if (until === undefined) {
      const at = seconds(o.at) ?? 0;
      const audio = audioDurations.get(o.asset_id);
      // What is left of the audio after `from` (a from past its end is the linter's to say).
      const left = audio === undefined ? Infinity : Math.max(0.001, audio - (seconds(o.from) ?? 0));
      until = +Math.min(totalSeconds, at + left).toFixed(3);
    }
    return {
      audio_id: o.asset_id,
      type: 'audio',
      audio_start_time: o.at,
      audio_end_time: until,
      audio_levels: o.volume === undefined ? [] : [{ audio_level: o.volume, start_time: o.at, end_time: until }],
      ...(o.from !== undefined ? { from: o.from } : {}),
      ...(o.role !== undefined ? { role: o.role } : {}),
      ...(o.duck_db !== undefined ? { duck_db: o.duck_db } : {}),
      ...mixOf(o),
    };
  });
  return {
    video_edit_version: EDIT_VERSION,
    video_output_format: OUTPUT_FORMAT,
    video_output_resolution: resolvePreset(input.resolution),
    video_output_fps: input.fps ?? DEFAULT_FPS,
    video_output_filename: input.filename ?? DEFAULT_FILENAME,
    video_series_sequential: clips,
    audio_overlay: overlays,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.captions !== undefined ? { captions: input.captions } : {}),
  };
}

export interface ShotSpan {
  index: number;
  start_seconds: number;
  end_seconds: number;
}

/**
 * A clip given as a shot ({asset_id, shot, start?, end?}) as plain in and out points in the source: start/end are
 * offsets from the shot's start (default: the whole shot). `problem` says what is off, for a diagnostic.
 */
export function clipFromShot(clip: ClipInput, shot: ShotSpan): { clip: ClipInput; problem?: string } {
  const length = Math.round((shot.end_seconds - shot.start_seconds) * 1000) / 1000;
  const from = clip.start === undefined ? 0 : seconds(clip.start);
  const to = clip.end === undefined ? length : seconds(clip.end);
  const at = (offset: number) => Math.round((shot.start_seconds + offset) * 1000) / 1000;
  // An offset that does not parse is left for the linter to report in the usual way.
  const resolved: ClipInput = {
    ...clip,
    shot: undefined,
    start: from === undefined ? clip.start : at(from),
    end: to === undefined ? clip.end : at(to),
  };
  delete resolved.shot;
  let problem: string | undefined;
  if (from !== undefined && from >= length)
    problem = `start offset ${from} s is not inside shot ${shot.index}, which lasts ${length} s`;
  else if (to !== undefined && to > length + 0.001)
    problem = `end offset ${to} s is past the end of shot ${shot.index} (it lasts ${length} s): the clip runs into the next shot`;
  return { clip: resolved, ...(problem ? { problem } : {}) };
}
