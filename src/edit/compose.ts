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
  resolvePreset,
  EDIT_VERSION,
  MAX_FPS,
  MAX_HEIGHT,
  MAX_WIDTH,
  MIN_FPS,
  OUTPUT_FORMAT,
  TimeInputSchema as TimeInput,
} from './model.js';
import { parseTimecode } from './timecode.js';

export const ClipInputSchema = z.object({
  asset_id: z.string().describe('A video asset'),
  start: TimeInput.optional().describe('In point (source time); default 0'),
  end: TimeInput.optional().describe("Out point; default the source's end"),
  shot: z.number().int().min(1).optional().describe('A shot number (inspect_asset); start/end then offsets in it'),
  phrase: z.string().optional().describe('Instead of start/end: cut where this is said (transcript)'),
  occurrence: z.number().int().min(1).optional().describe('Which time phrase is said; default 1'),
  words: z
    .array(z.number().int().min(0))
    .min(2)
    .max(2)
    .optional()
    .describe('Instead of start/end: [first, last] transcript word indices'),
  handle: z.number().min(0).max(2).optional().describe('By words: seconds of pause kept around them; default 0.15'),
  volume: z.number().optional().describe('0-1; default 1'),
  crop: CropSchema.partial().optional().describe('Fill the frame: zoom (1 fills), position_x/y -1..1'),
  focus: FocusSchema.optional().describe('Fill the frame around x,y (0-1 of the picture), or "auto"'),
  ...MixFields,
});
export const OverlayInputSchema = z.object({
  asset_id: z.string().describe('An audio asset'),
  at: TimeInput.describe('Start on the output timeline'),
  until: TimeInput.optional().describe('End on the output timeline; default the end'),
  volume: z.number().optional().describe('0-1; default 1'),
  from: TimeInput.optional().describe('Start in the audio; default 0'),
  ...MixFields,
  ...RoleFields,
});
export type ClipInput = z.infer<typeof ClipInputSchema>;
/**
 * A clip as composed: a clip cut by words carries the level windows that mute what its picture holds beyond the words,
 * and at a join, the pause its source holds beyond it (the edit's sound_handles: the join may be crossfaded there).
 */
export type ComposeClip = ClipInput & {
  levels?: { level: number; from: number; to: number }[];
  sound_handles?: { before?: number; after?: number };
};
export type OverlayInput = z.infer<typeof OverlayInputSchema>;

export { resolvePreset };

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

/** What the output defaults need of a cut's source (lint.ts's MediaFacts has it). */
export interface OutputSource {
  hasVideo: boolean;
  width?: number;
  height?: number;
  fps?: number;
  frameRate?: { num: number; den: number };
}

/** The frame rates a variable-rate source is counted as, when its average is near one (a phone's 29.87 is 29.97). */
const COMMON_RATES = [23.976, 24, 25, 29.97, 30, 48, 50, 59.94, 60];

/** A source's frame rate as an output fps: its constant rate (29.97 for 30000/1001), else the common one nearest. */
function outputFpsOf(f: OutputSource): number | undefined {
  if (f.frameRate && f.frameRate.num > 0 && f.frameRate.den > 0) {
    const fps = Math.round((f.frameRate.num / f.frameRate.den) * 1000) / 1000;
    return fps >= MIN_FPS && fps <= MAX_FPS ? fps : undefined;
  }
  if (!f.fps) return undefined;
  const near = COMMON_RATES.reduce((a, b) => (Math.abs(b - f.fps!) < Math.abs(a - f.fps!) ? b : a));
  return Math.abs(near - f.fps) / near < 0.03 ? near : undefined;
}

/** A display size as an output size: even sides, scaled down to fit 8K if it is larger. */
function outputSizeOf(f: OutputSource): string | undefined {
  if (!f.width || !f.height) return undefined;
  const scale = Math.min(1, MAX_WIDTH / f.width, MAX_HEIGHT / f.height);
  const even = (n: number) => Math.max(2, Math.floor((n * scale) / 2) * 2);
  return `${even(f.width)}x${even(f.height)}`;
}

/** The value most of the list has; a tie goes to the one met first (the earlier cut). */
function mostCommon(values: (string | number | undefined)[]): string | number | undefined {
  const counts = new Map<string | number, number>();
  for (const v of values) if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | number | undefined;
  for (const [v, n] of counts) if (best === undefined || n > counts.get(best)!) best = v;
  return best;
}

/**
 * The output an edit of these cuts' sources gets where the call names none: the display size and the frame rate most
 * of the cuts have (a cut counts once per cut, not per second). Undefined where no cut's source says: the defaults
 * (1920x1080, 30 fps) then hold.
 */
export function sourceOutput(cutSources: (OutputSource | undefined)[]): { resolution?: string; fps?: number } {
  const known = cutSources.filter((f): f is OutputSource => !!f?.hasVideo);
  const resolution = mostCommon(known.map(outputSizeOf)) as string | undefined;
  const fps = mostCommon(known.map(outputFpsOf)) as number | undefined;
  return { ...(resolution ? { resolution } : {}), ...(fps ? { fps } : {}) };
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
    if (c.sound_handles) seg.sound_handles = c.sound_handles;
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

/**
 * A clip given without an in or out point plays from the source's start or to its end (durationSec, when known):
 * the agent that names only an asset means all of it. `said` tells which end was filled, for a note.
 */
export function wholeSourceDefaults(
  clip: ComposeClip,
  durationSec: number | undefined,
): { clip: ComposeClip; said?: string } {
  if (clip.start !== undefined && clip.end !== undefined) return { clip };
  const start = clip.start ?? 0;
  const end = clip.end ?? durationSec;
  if (end === undefined) return { clip: { ...clip, start } };
  let said = "from the source's start: no start given";
  if (clip.end === undefined)
    said =
      clip.start === undefined
        ? `the whole source (0-${end} s): no start or end given`
        : `to the source's end (${end} s): no end given`;
  return { clip: { ...clip, start, end }, said };
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
