// What a preview is to whoever starts or follows one (preview_edit, the jobs seam, the queue): what it reports
// (PreviewSchema), what it is made with (PreviewOptions), and a preview being made (PreviewJob). Making one is
// preview.ts.
import { z } from 'zod';
import type { Cue } from '../edit/captions.js';
import { DiagnosticSchema } from '../edit/model.js';
import { CutPlacementSchema } from '../edit/plan.js';

const MixLoudnessShape = {
  lufs: z.number().optional(),
  true_peak_db: z.number().optional(),
  dialogue_lufs: z.number().optional(),
  music_lufs: z.number().optional(),
  effects_lufs: z.number().optional(),
};

export const PreviewCutSchema = CutPlacementSchema.extend({
  loudness: z
    .object({ mean_db: z.number(), peak_db: z.number(), ...MixLoudnessShape, level_db: z.number().optional() })
    .optional()
    .describe('Of what plays during the cut: the mix (dBFS, LUFS, dBTP) and each part apart; level_db: levelling'),
  flags: z
    .array(z.string())
    .describe(
      'Black or frozen picture; silence where sound was asked; sound where level 0 was asked; sound reaching full scale (it clips); a first or last frame unlike its neighbours (a flash frame)',
    ),
});

export const PreviewSchema = z.object({
  preview_id: z.string(),
  edit_id: z.string().optional(),
  path: z
    .string()
    .describe('The preview video: a path on the machine cutroom runs on (over HTTP, its cutroom:// resource URI)'),
  sheet_path: z.string().describe('The contact sheet (JPEG): a path, or over HTTP its resource URI'),
  link: z.string().optional().describe('Over HTTP: a signed link to the video for a person; it expires'),
  links_expire_at: z.string().optional(),
  resolution: z.string(),
  fps: z.number(),
  planned_seconds: z.number(),
  measured_seconds: z.number(),
  cuts: z.array(PreviewCutSchema),
  overlays: z
    .array(z.object({ index: z.number(), asset_id: z.string(), timeline_start: z.string(), timeline_end: z.string() }))
    .optional()
    .describe('The audio laid over the timeline, where it plays'),
  mix: z
    .object({ ...MixLoudnessShape, target_lufs: z.number().optional(), gain_db: z.number().optional() })
    .optional()
    .describe('The whole edit: integrated loudness of the mix and each part, true peak; a target met by gain_db'),
  warnings: z.array(z.string()),
  diagnostics: z.array(DiagnosticSchema).describe('Warnings from the checks'),
});
export type Preview = z.infer<typeof PreviewSchema>;

export interface PreviewOptions {
  width: number;
  timeoutMs?: number;
  trackRss?: boolean;
  /** Phase timings, for CUTROOM_LOG_LEVEL=debug. */
  debug?: (msg: string) => void;
  /** The id of the edit previewed, kept with the result. */
  editId?: string;
  /** The dialogue's transcripts' words by asset: where music ducks, speech is taken from them (dialogueWords). */
  speechWords?: Map<string, { start: number; end: number }[]>;
  /**
   * Captions to burn in (workflow/captions.ts), when the edit asks for them burned; and what they could not caption.
   */
  captions?: { cues: Cue[]; warnings: string[] };
  /** The words each cut holds (by cut, from the transcripts there are), written on the contact sheet under its frames. */
  sheetWords?: string[][];
}

export type PreviewResult = Preview & { sheetBytes: Buffer; ffmpegMaxRssKiB?: number };

/** A preview being made in this process. */
export interface PreviewJob {
  id: string;
  /** 0..1, and what is being done. */
  progress: number;
  message: string;
  /** Settles when the preview is made (or failed: a UserFacingError); never rejects unobserved. */
  done: Promise<PreviewResult>;
  settled?: { result: PreviewResult } | { error: Error };
  /**
   * The caller no longer wants it (a cancelled call). It is stopped (ffmpeg killed, nothing kept) when no other
   * caller that joined it still does; true when it was.
   */
  abort(): boolean;
  /** The caller's call returned without cancelling: it no longer holds the job, which runs to its end. */
  release(): void;
  /** Stops it whoever holds it (preview_edit {preview_id, cancel}); false when it had settled or was stopping. */
  stop?(): boolean;
  /** Every caller let it go cancelling: it is being stopped (not settled yet), and nobody may join it. */
  stopping?: boolean;
  /** Called on every progress step, and when a cut becomes ready to play. */
  listeners: Set<(fraction: number, message: string) => void>;
  /** How many cuts the edit has. */
  cuts: number;
  /** The cuts whose clip can be played now (cutClipUri), in the order they became ready. */
  ready: number[];
  /** The path of a ready cut's clip (an mp4 of its picture and its own sound), made on first asking. */
  clip(index: number): Promise<string>;
  /**
   * A ready cut's segment (its key in the segment store) and the clip's length: what a worker passes on, so that a
   * server sharing its cache dir makes the clip itself (jobs/queue-clips.ts).
   */
  segment?(index: number): { key: string; seconds: number } | undefined;
}
