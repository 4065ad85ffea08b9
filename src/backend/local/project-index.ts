// What list_projects needs of every project (its fields and asset count), in one file beside the projects, so
// that a listing reads one file instead of one record per project and one per asset.
//
// The index is a cache of the project records, never their source. It is written under the data dir's lock
// with every change to a project's record. Listing checks it cheaply: the project folders on disk must be the
// ones it names (else it is rebuilt from the records: a crash between a change and its index write, an older
// cutroom, a hand edit), and each project listed is checked against its record's identity (inode, size,
// mtime) and read again if its record changed since.
import { readFileSync, statSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isUuid } from '../../errors.js';
import type { Logger } from '../../log.js';
import { ProjectRecordSchema, type ProjectRecord, type RecordProblem } from './records.js';
import { CorruptRecordError, listJson, readRecord, withLock, writeAtomic } from './store.js';

export type Listed = ProjectRecord & { asset_count: number };

interface Entry {
  rec: ProjectRecord;
  asset_count: number;
  sig: string;
}
interface Bad {
  id: string;
  problem: RecordProblem;
  sig: string;
}
interface IndexData {
  version: 1;
  projects: Entry[];
  bad: Bad[];
}

const str = (v: unknown) => typeof v === 'string';
/** The index's shape, checked by hand: zod over a thousand entries costs more than the rest of a listing. */
function isIndex(v: unknown): v is IndexData {
  const d = v as IndexData;
  if (!d || d.version !== 1 || !Array.isArray(d.projects) || !Array.isArray(d.bad)) return false;
  const fields = ['id', 'name', 'description', 'data', 'created_at', 'owner_id'] as const;
  return (
    d.projects.every(
      (e) =>
        e &&
        str(e.sig) &&
        Number.isInteger(e.asset_count) &&
        e.rec &&
        fields.every((f) => str(e.rec[f])) &&
        isUuid(e.rec.id),
    ) && d.bad.every((b) => b && str(b.id) && str(b.sig) && b.problem && str(b.problem.path) && str(b.problem.message))
  );
}

/** A file's identity: a rewrite (always by rename) or an edit in place changes it. "none" when there is no file. */
function sigOf(path: string): string {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return 'none';
  }
}

export class ProjectIndex {
  private readonly file: string;
  /** The parsed index, the identity of the file it was read from, and its entries newest first. */
  private cached?: { sig: string; data: IndexData; sorted: Entry[] };
  /** The identities of the index and of the projects folder when the index was last found to match the folders. */
  private verified?: { index: string; folder: string };

  constructor(
    private readonly dataDir: string,
    private readonly projectsDir: string,
    private readonly log: Logger,
  ) {
    this.file = join(dataDir, 'index.json');
  }

  private recordPath(id: string) {
    return join(this.projectsDir, id, 'project.json');
  }

  async list(limit: number): Promise<{ projects: Listed[]; problems: RecordProblem[] }> {
    let data = this.load();
    // Folders come and go by rename inside the projects folder, which changes its mtime: while neither it nor
    // the index changed, the last check still holds. Its identity is taken before reading it, so a change
    // that races the read is seen by the next listing.
    const folderSig = sigOf(this.projectsDir);
    const indexSig = this.cached?.sig ?? 'none';
    const fresh =
      !!data && this.verified?.index === indexSig && this.verified.folder === folderSig && data.bad.length === 0;
    if (!fresh || !data) {
      const folders = (await readdir(this.projectsDir)).filter(isUuid);
      if (!data || !this.matches(data, folders)) data = await this.rebuild();
      else this.verified = { index: indexSig, folder: folderSig };
    }
    const sorted = this.cached?.data === data ? this.cached.sorted : sortEntries(data.projects);
    const projects: Listed[] = [];
    const problems: RecordProblem[] = data.bad.map((b) => b.problem);
    // Synchronous stats: ~100 of them cost well under a millisecond, less than scheduling them would.
    for (const e of sorted.slice(0, limit)) {
      const path = this.recordPath(e.rec.id);
      if (sigOf(path) === e.sig) {
        projects.push({ ...e.rec, asset_count: e.asset_count });
        continue;
      }
      // Changed since the index was written (by hand, or by a writer that crashed before updating the index).
      try {
        const rec = await readRecord(path, ProjectRecordSchema);
        if (!rec) continue; // deleted meanwhile
        projects.push({
          ...rec,
          asset_count: rec.asset_count ?? (await listJson(join(this.projectsDir, e.rec.id, 'assets'))).length,
        });
      } catch (err) {
        problems.push(problemOf(err, path));
      }
    }
    return { projects, problems };
  }

  /** Records a project's new state; call holding the data dir's lock, after writing its record. */
  async put(rec: ProjectRecord, assetCount: number): Promise<void> {
    await this.update((d) => {
      const entry = { rec, asset_count: assetCount, sig: sigOf(this.recordPath(rec.id)) };
      return {
        ...d,
        projects: [...d.projects.filter((e) => e.rec.id !== rec.id), entry],
        bad: d.bad.filter((b) => b.id !== rec.id),
      };
    });
  }

  /** Forgets a project; call holding the data dir's lock, after moving its folder away. */
  async remove(id: string): Promise<void> {
    await this.update((d) => ({
      ...d,
      projects: d.projects.filter((e) => e.rec.id !== id),
      bad: d.bad.filter((b) => b.id !== id),
    }));
  }

  /**
   * Changes the index, if there is a readable one (without one, the next listing rebuilds it). The index is
   * only a cache: when it cannot be written (a full disk) it is removed, so that no stale index is trusted.
   */
  private async update(change: (d: IndexData) => IndexData): Promise<void> {
    const data = this.load();
    if (!data) return;
    try {
      await writeAtomic(this.file, JSON.stringify(change(data)));
    } catch (err) {
      this.log.warn(`could not update the project index ${this.file} (${(err as Error).message}); it will be rebuilt`);
      await this.discard();
    }
  }

  private async discard(): Promise<void> {
    await rm(this.file, { force: true }).catch(() => {});
    this.cached = undefined;
  }

  /** The index as on disk, from memory when the file has not changed; undefined if missing or unreadable. */
  private load(): IndexData | undefined {
    const sig = sigOf(this.file);
    if (this.cached?.sig === sig) return this.cached.data;
    if (sig === 'none') return undefined;
    try {
      const data: unknown = JSON.parse(readFileSync(this.file, 'utf8'));
      if (!isIndex(data)) return undefined;
      this.cached = { sig, data, sorted: sortEntries(data.projects) };
      return data;
    } catch {
      return undefined;
    }
  }

  /** The index names exactly the project folders on disk, and no bad record it remembers has changed. */
  private matches(data: IndexData, folders: string[]): boolean {
    const named = new Set([...data.projects.map((e) => e.rec.id), ...data.bad.map((b) => b.id)]);
    if (named.size !== folders.length || !folders.every((f) => named.has(f))) return false;
    return data.bad.every((b) => sigOf(this.recordPath(b.id)) === b.sig);
  }

  /** Reads every project record; writes the result as the new index when the lock can be had. */
  private async rebuild(): Promise<IndexData> {
    const build = async (): Promise<IndexData> => {
      const data: IndexData = { version: 1, projects: [], bad: [] };
      const readOne = async (id: string) => {
        const path = this.recordPath(id);
        const sig = sigOf(path);
        try {
          const rec = await readRecord(path, ProjectRecordSchema);
          if (!rec)
            throw new CorruptRecordError(
              `the project folder ${join(this.projectsDir, id)} has no project.json (left by an interrupted write?); move it out of the data dir (CUTROOM_DATA_DIR)`,
              path,
              'missing',
            );
          if (rec.id !== id)
            throw new CorruptRecordError(
              `the record ${path} is corrupt (its id ${rec.id} is not its folder's); fix it or move it out of the data dir (CUTROOM_DATA_DIR)`,
              path,
              'id',
            );
          data.projects.push({ rec, asset_count: (await listJson(join(this.projectsDir, id, 'assets'))).length, sig });
        } catch (err) {
          data.bad.push({ id, problem: problemOf(err, path), sig });
        }
      };
      const ids = (await readdir(this.projectsDir)).filter(isUuid);
      // A few at a time: one by one, a thousand small reads take a second.
      for (let i = 0; i < ids.length; i += 32) await Promise.all(ids.slice(i, i + 32).map(readOne));
      return data;
    };
    try {
      return await withLock(this.dataDir, async () => {
        const data = await build();
        try {
          await writeAtomic(this.file, JSON.stringify(data));
        } catch (err) {
          this.log.warn(`could not write the project index ${this.file}: ${(err as Error).message}`);
        }
        return data;
      });
    } catch (err) {
      // The lock could not be had (a full disk cannot hold its owner file): list from the records all the same.
      this.log.debug(`listing without the lock: ${(err as Error).message}`);
      return build();
    }
  }
}

/** Plain code-unit order (timestamps and ids are ASCII): localeCompare costs milliseconds over a thousand. */
function compareCodeUnits(x: string, y: string): number {
  if (x < y) return -1;
  if (x > y) return 1;
  return 0;
}

function sortEntries(entries: Entry[]): Entry[] {
  return [...entries].sort(
    (a, b) => compareCodeUnits(b.rec.created_at, a.rec.created_at) || compareCodeUnits(a.rec.id, b.rec.id),
  );
}

function problemOf(err: unknown, path: string): RecordProblem {
  if (err instanceof CorruptRecordError) return { path: err.path, message: err.message };
  return { path, message: `cannot read ${path}: ${(err as Error).message}` };
}
