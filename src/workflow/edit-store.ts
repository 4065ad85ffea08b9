// Checked edits kept by id, so that preview_edit, render_edit and export_edit take a short edit_id instead of the
// whole edit again (the edit's schema is then paid for once in tools/list, and never resent). The id is the
// content's hash: the same edit in the same project with the same options always gets the same id, on any server,
// so composing again after a restart or on another replica gives back an id that works. Kept as one JSON file per
// edit under the data dir (per caller over HTTP), written whole or not at all; for a team, mirrored in its shared
// store (kept.ts), so an id composed on one replica works on every other.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { EditSchema } from '../edit/model.js';
import type { KeptFiles } from '../kept.js';

const EDIT_ID = /^edit-[0-9a-f]{16}$/;
export const isEditId = (id: string) => EDIT_ID.test(id);
export const editUri = (id: string) => `cutroom://edits/${id}`;

export const StoredEditSchema = z.object({
  edit_id: z.string(),
  project_id: z.string(),
  edit: EditSchema,
  /** How cutroom renders it itself (previews, local renders): part of what the id names. */
  options: z.object({ audio_fade_ms: z.number() }),
  /** How the edit was resolved when composed (which shot, which words): said by compose_edit; later results point to them. */
  notes: z.array(z.string()),
  created_at: z.string(),
});
export type StoredEdit = z.infer<typeof StoredEditSchema>;

/** The id an edit gets: the hash of what makes it this edit (never of its notes or when it was made). */
export function editIdOf(projectId: string, edit: z.infer<typeof EditSchema>, options: StoredEdit['options']): string {
  const what = JSON.stringify({ v: 1, project_id: projectId, edit, options });
  return `edit-${createHash('sha256').update(what).digest('hex').slice(0, 16)}`;
}

export class EditStore {
  constructor(
    readonly dir: string,
    /** Edits kept: beyond this many, the least recently used go (an agent composes again to get one back). */
    private readonly keep = 1000,
    /** A team's shared store (kept.ts), when there is one. */
    private readonly kept?: KeptFiles,
  ) {}

  private fileOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  /** Stores a checked edit and returns its id; storing the same edit again only marks it used. */
  async put(record: Omit<StoredEdit, 'edit_id' | 'created_at'>): Promise<StoredEdit> {
    const edit_id = editIdOf(record.project_id, record.edit, record.options);
    // A team's store that cannot be read this moment (another replica writing this very id: a store that writes in
    // place serves it half-written) is no reason not to keep it: equal bytes are written again below, and a store
    // that is down says so there.
    const existing = await this.get(edit_id).catch(() => undefined);
    if (existing) return existing;
    const stored: StoredEdit = { ...record, edit_id, created_at: new Date().toISOString() };
    await mkdir(this.dir, { recursive: true });
    const text = JSON.stringify(stored);
    const tmp = `${this.fileOf(edit_id)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, text);
      await rename(tmp, this.fileOf(edit_id));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    // The same id names the same content wherever it is written: two replicas putting it at once put equal bytes.
    await this.kept?.wrote(this.fileOf(edit_id), text);
    await this.trim().catch(() => {});
    return stored;
  }

  /**
   * The edit with this id, marked used; undefined when there is none (or its file is not one of ours, or not this
   * edit).
   */
  async get(id: string): Promise<StoredEdit | undefined> {
    if (!isEditId(id)) return undefined;
    let text: string;
    try {
      text = await readFile(this.fileOf(id), 'utf8');
    } catch {
      // Composed on another replica: fetched from the team's store (a store that does not answer says so).
      if (!(await this.kept?.fetch(this.fileOf(id)))) return undefined;
      text = await readFile(this.fileOf(id), 'utf8').catch(() => '');
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = StoredEditSchema.safeParse(raw);
    if (!parsed.success || parsed.data.edit_id !== id) return undefined;
    // The id names the content: a file edited by hand (another edit, another project) is not this edit. Hashed as
    // written, before zod's parse could reorder or drop a field.
    const written = raw as StoredEdit;
    if (editIdOf(written.project_id, written.edit, written.options) !== id) return undefined;
    const now = new Date();
    await utimes(this.fileOf(id), now, now).catch(() => {});
    return parsed.data;
  }

  /** Every stored id with its project, most recently used first (for "did you mean"). */
  async ids(): Promise<{ id: string }[]> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter(
      (n) => EDIT_ID.test(n.replace(/\.json$/, '')) && n.endsWith('.json'),
    );
    const withTimes = await Promise.all(
      names.map(async (n) => ({
        id: n.slice(0, -5),
        mtime: (await stat(join(this.dir, n)).catch(() => undefined))?.mtimeMs ?? 0,
      })),
    );
    return withTimes.sort((a, b) => b.mtime - a.mtime).map(({ id }) => ({ id }));
  }

  /** Keeps the `keep` most recently used edits. */
  private async trim(): Promise<void> {
    const all = await this.ids();
    for (const { id } of all.slice(this.keep)) await rm(this.fileOf(id), { force: true });
  }
}
