// The input of the edit tools. compose_edit takes an edit in full (the short form of clips and overlays, or the
// service's edit definition) and stores it under an edit_id; preview_edit, render_edit and export_edit take that
// edit_id, or the same arguments as compose_edit inline. The full schema is declared once (compose_edit's); the others
// declare the inline fields loosely and check them here against the same schema, so the tools cannot drift apart
// and tools/list carries the edit's shape once.
import { z } from 'zod';
import { ClipInputSchema, OverlayInputSchema } from '../edit/compose.js';
import { CaptionsSchema, EditDraftSchema, LISTED_OUTPUT_PRESETS, LOUDNESS_PRESETS } from '../edit/model.js';
import { DEFAULT_FADE_MS, MAX_FADE_MS } from '../edit/plan.js';
import { didYouMean } from '../did-you-mean.js';
import { UserFacingError, isUuid } from '../errors.js';
import { unknownFieldMessage, unknownFields } from '../unknown-fields.js';
import { editUri, isEditId, type EditStore, type StoredEdit } from './edit-store.js';

export const EditInputShape = {
  project_id: z.string().describe("The project of the edit's assets"),
  clips: z.array(ClipInputSchema).optional().describe('The cuts, in playing order'),
  overlays: z.array(OverlayInputSchema).optional().describe('Audio over the timeline: voiceover, music'),
  edit: EditDraftSchema.optional().describe(
    "Instead of clips/overlays: a whole edit in the service's form (cutroom://edits/{edit_id} shows one)",
  ),
  resolution: z.string().optional().describe(`WxH or ${LISTED_OUTPUT_PRESETS}; default the sources' size`),
  fps: z.number().optional().describe("Default the sources' rate; 29.97 etc. allowed"),
  filename: z.string().optional().describe('Output file name (.mp4); default cutroom-edit.mp4'),
  audio_fade_ms: z
    .number()
    .optional()
    .describe(`Fade at every sound edit, 0-${MAX_FADE_MS}; default ${DEFAULT_FADE_MS}`),
  loudness: z
    // (A name is checked by the linter, which lists the presets: a bad one is a diagnostic, not an invalid call.)
    .union([z.string(), z.looseObject({})])
    .optional()
    .describe(
      `${Object.entries(LOUDNESS_PRESETS)
        .map(([k, v]) => `${k} ${v.target_lufs}`)
        .join(', ')} LUFS (-1 dBTP), or {target_lufs, true_peak_db}`,
    ),
  level_dialogue: z.boolean().optional().describe("Even the cuts' loudness; default true"),
  captions: CaptionsSchema.optional().describe(
    'From transcripts; burn default true; style: size, margin % of height, color #RRGGBB, position',
  ),
};

const EditInputObject = z.object(EditInputShape);
export type EditInput = z.infer<typeof EditInputObject>;

/** A field of the full shape as the other tools declare it: its type only (objects of any shape), undescribed. */
function loosely(field: z.ZodType): z.ZodType {
  let inner = field;
  if (inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  if (inner instanceof z.ZodArray) return z.array(z.unknown()).optional();
  if (inner instanceof z.ZodObject) return z.looseObject({}).optional();
  if (inner instanceof z.ZodNumber) return z.number().optional();
  if (inner instanceof z.ZodBoolean) return z.boolean().optional();
  // (A preset's name or an object: both said, so that the schema constrains something, as strict clients ask.)
  if (inner instanceof z.ZodUnion) return z.union([z.string(), z.looseObject({})]).optional();
  return z.string().optional();
}

/**
 * What preview_edit, render_edit and export_edit take: an edit_id, or compose_edit's arguments inline (each field
 * declared by its type only; its shape is compose_edit's, checked here).
 */
export const EditRefShape = {
  edit_id: z.string().optional().describe("From compose_edit/import_edit; or compose_edit's arguments inline"),
  ...Object.fromEntries(Object.entries(EditInputShape).map(([k, v]) => [k, loosely(v)])),
} as { edit_id: z.ZodOptional<z.ZodString> } & { [K in keyof typeof EditInputShape]: z.ZodType };

export type EditRefInput = { edit_id?: string } & Record<string, unknown>;

/** One line per problem zod found, with the field's path: what an agent needs to fix its call. */
export function describeIssues(error: z.ZodError, max = 5): string {
  const lines = error.issues
    .slice(0, max)
    .map((i) => `${i.path.length ? i.path.join('.') : '(the arguments)'}: ${i.message}`);
  if (error.issues.length > max) lines.push(`… ${error.issues.length - max} more`);
  return lines.join('; ');
}

export interface ResolvedEdit {
  input: EditInput;
  /** The stored edit the call named, when it named one. */
  stored?: StoredEdit;
}

/** The edit a call means: the stored one its edit_id names, or its inline arguments checked against compose_edit's. */
export async function resolveEditInput(store: EditStore | undefined, raw: EditRefInput): Promise<ResolvedEdit> {
  const { edit_id, ...inline } = raw;
  // A client that fills every optional field sends edit_id "" beside the edit it means: no edit_id.
  const blank =
    edit_id !== undefined &&
    !edit_id.trim() &&
    Object.entries(inline).some(([k, v]) => v !== undefined && k !== 'project_id');
  if (edit_id === undefined || blank) {
    const parsed = EditInputObject.safeParse(inline);
    if (!parsed.success)
      throw new UserFacingError(
        `the edit's arguments are not as compose_edit takes them: ${describeIssues(parsed.error)}`,
      );
    const unknown = unknownFields(EditInputObject, inline);
    if (unknown.length)
      throw new UserFacingError(
        `the edit's arguments are not as compose_edit takes them: ${unknown.map(unknownFieldMessage).join('; ')}`,
      );
    return { input: parsed.data };
  }
  const id = edit_id.trim();
  const given = Object.entries(inline)
    .filter(([k, v]) => v !== undefined && k !== 'project_id')
    .map(([k]) => k);
  if (given.length)
    throw new UserFacingError(
      `give edit_id or the edit's arguments (${given.join(', ')}), not both: to change the edit, call compose_edit with the new one and use the edit_id it returns`,
    );
  if (!store)
    throw new UserFacingError(
      "this cutroom keeps no edits (no data dir): give the edit's arguments inline, as compose_edit takes them",
    );
  const stored = await store.get(id);
  if (!stored) {
    // Not the id itself: a file of that name whose content is not the edit it names is no suggestion.
    const known = (await store.ids()).filter((k) => k.id !== id);
    const hint = didYouMean(id, known);
    const what = isEditId(id)
      ? `no edit ${id} is kept here`
      : `edit_id "${id.slice(0, 40)}" is not an edit id (like edit-3f2b8c1e4d5a4b6c)`;
    throw new UserFacingError(
      `${what}${hint ? `; ${hint}` : ''}: compose_edit returns edit ids (composing the same edit again gives back its id)`,
    );
  }
  const projectId = typeof inline.project_id === 'string' ? inline.project_id.trim() : undefined;
  if (projectId && projectId !== stored.project_id) {
    throw new UserFacingError(
      `edit ${id} belongs to project ${stored.project_id}, not ${isUuid(projectId) ? projectId : `"${projectId.slice(0, 40)}"`}; leave project_id out, or compose the edit in that project`,
    );
  }
  return {
    input: { project_id: stored.project_id, edit: stored.edit, audio_fade_ms: stored.options.audio_fade_ms },
    stored,
  };
}

export { editUri };
