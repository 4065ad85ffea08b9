// The shapes of the local backend's records on disk, checked on every read: a record of the wrong shape (a
// hand edit, a disk error, another program) is reported with its path, never half-used.
import { z } from 'zod';
import { ScriptSchema } from '../../api/models.js';
import { isUuid } from '../../errors.js';

const uuid = z.string().refine(isUuid, 'must be a UUID');

export const ProjectRecordSchema = z.looseObject({
  id: uuid,
  name: z.string(),
  description: z.string(),
  data: z.string(),
  created_at: z.string(),
  owner_id: z.string(),
  prompt_id: z.string().optional(),
  /** How many asset records the project has; set under the data dir's lock with every asset written. */
  asset_count: z.number().int().min(0).optional(),
});
export type ProjectRecord = z.infer<typeof ProjectRecordSchema>;

export const AssetRecordSchema = z.looseObject({
  id: uuid,
  keyname: z.string(),
  asset_type: z.enum(['video', 'audio', 'image', 'generated_video']),
  status: z.enum(['uploaded', 'processing', 'failed']),
  uploaded: z.boolean(),
  created_at: z.string(),
  /** Absolute path of the media inside the data dir, once there is media. */
  file: z.string().nullable(),
  original_name: z.string().optional(),
  /** Where the file was imported from (absolute, real): an export points an editor's application at it. */
  original_path: z.string().optional(),
  duration_ms: z.number().optional(),
  /** What the probe found, recorded at import (records of older versions lack them; has_audio says they are there). */
  width: z.number().optional(),
  height: z.number().optional(),
  has_audio: z.boolean().optional(),
  /**
   * The media's content (sha256, hex) and size: an import of the same content finds it. Older records get it lazily.
   */
  sha256: z.string().optional(),
  size_bytes: z.number().optional(),
  error: z.string().optional(),
  /** A render's sound as measured: the loudness asked of it (target_lufs) and what it came to. */
  loudness: z.object({ lufs: z.number(), true_peak_db: z.number(), target_lufs: z.number().optional() }).optional(),
  /** The server process rendering it, and the assets it reads (which may not be deleted meanwhile). */
  render: z
    .object({
      pid: z.number().int(),
      owner: z.string().optional(),
      edit_id: z.string(),
      started_at: z.string(),
      sources: z.array(z.string()).optional(),
      /** When another process asked it stopped (get_render_status {cancel}): its renderer looks every second. */
      cancel_asked: z.string().optional(),
    })
    .optional(),
});
export type AssetRecord = z.infer<typeof AssetRecordSchema>;

export const ScriptRecordSchema = ScriptSchema;

export type { RecordProblem } from '../types.js';

/** The first thing wrong with a value, as "name: expected string, received number". */
export function firstIssue(error: z.ZodError): string {
  const i = error.issues[0];
  if (!i) return 'not a valid record';
  const at = i.path.length ? `${i.path.join('.')}: ` : '';
  return `${at}${i.message}`;
}
