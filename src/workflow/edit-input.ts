// The input every edit tool takes (compose_edit, render_edit, preview_edit): a project, and either a whole edit
// definition or the short compose form. One schema, so the tools cannot drift apart.
import { z } from 'zod';
import { ClipInputSchema, OverlayInputSchema } from '../edit/compose.js';
import { EditDraftSchema } from '../edit/model.js';
import { DEFAULT_FADE_MS, MAX_FADE_MS } from '../edit/plan.js';

export const EditInputShape = {
  project_id: z.string().describe('Project id (a UUID); the assets named in the edit must belong to it'),
  edit: EditDraftSchema.optional()
    .describe(
      'A whole edit definition as the service takes it: video_series_sequential [{video_id, video_start_time, video_end_time, audio_levels?}], ' +
        'audio_overlay [{audio_id, audio_start_time, audio_end_time, audio_levels?}], video_output_resolution, video_output_fps, video_output_filename. ' +
        'Times may be HH:MM:SS, HH:MM:SS.mmm or seconds. Give this or clips, not both.',
    ),
  clips: z.array(ClipInputSchema).optional().describe('The cuts, in playing order (the short form; give this or edit)'),
  overlays: z.array(OverlayInputSchema).optional().describe('Audio laid over the timeline, e.g. a voiceover or music (with clips)'),
  resolution: z.string().optional().describe('Output size: "1920x1080", "1080p", "720p", "vertical" (1080x1920), "square"; default 1920x1080 (with clips)'),
  fps: z.number().optional().describe('Output frames per second, e.g. 24, 25, 29.97, 30; default 30 (with clips)'),
  filename: z.string().optional().describe('Output file name, a plain name ending in .mp4; default cutroom-edit.mp4 (with clips)'),
  audio_fade_ms: z
    .number()
    .optional()
    .describe(
      `Milliseconds of fade in and out at every edit of the sound (each cut's and overlay's start and end), so that no edit clicks; ` +
        `default ${DEFAULT_FADE_MS}, 0 for hard cuts, at most ${MAX_FADE_MS}. Previews and the local backend's renders apply it; a service renders by its own rules`,
    ),
};

const EditInputObject = z.object(EditInputShape);
export type EditInput = z.infer<typeof EditInputObject>;
