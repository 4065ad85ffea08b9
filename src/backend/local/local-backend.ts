// The embedded backend: the service's workflow on this machine, with no account. Projects, assets and scripts in
// the service's shapes under a data dir; media imported from allowed folders; edits rendered by local ffmpeg.
// Around it in local/: the records and their lock (store.ts, records.ts), the projects' index (project-index.ts),
// the bounded walk of the allowed folders, each folder and file once (media-files.ts), race-safe and idempotent
// import and asset removal (here), the sweep of crash leftovers (sweep.ts), and each render's folder with the
// progress it shares with other servers (render-files.ts).
import { createHash, randomUUID, type Hash } from 'node:crypto';
import { mkdir, open, readdir, realpath, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ServiceError } from '../../api/errors.js';
import { formatServiceTimestamp, type Asset, type Project, type RenderReceipt, type Script } from '../../api/models.js';
import type { Edit } from '../../edit/model.js';
import { normalizeEdit } from '../../edit/normalize.js';
import { toRenderPlan } from '../../edit/plan.js';
import { UserFacingError, isUuid } from '../../errors.js';
import type { Logger } from '../../log.js';
import { silentLogger } from '../../log.js';
import { INSTALL_HINT } from '../../media/locate.js';
import type { Limiter, MediaProber } from '../../media/probe.js';
import { EtaEstimator } from '../../media/eta.js';
import { finished } from '../../media/measure.js';
import { killOrphans } from '../../media/process.js';
import { renderTimeline, type RenderOutcome, type RenderRequest } from '../../media/render.js';
import { inputSpec, type EncodeSettings, type InputSpec } from '../../media/timeline-args.js';
import { ducks, speechOnTimeline } from '../../media/ducking.js';
import { reframed, reframes } from '../../media/reframe.js';
import type {
  Backend,
  CallOptions,
  CreateProjectInput,
  DeletedAsset,
  ImportedMedia,
  ImportOptions,
  ProjectList,
  ProjectWithProblems,
  RecordProblem,
  RenderOptions,
  RenderProgress,
} from '../types.js';
import { EXAMPLE_INPUTS, EXAMPLE_SCRIPT_NAME, exampleGraph } from './example-script.js';
import { displayPath, isInside, openAllowed, realPathOf } from '../../open-allowed.js';
import { WalkBudget, allowedFolder, listMedia, type ImportTarget, type MediaListing } from './media-files.js';
import { ProjectIndex } from './project-index.js';
import { ProgressSidecar, readProgress, renderDir, renderFileName } from './render-files.js';
import {
  AssetRecordSchema,
  ProjectRecordSchema,
  ScriptRecordSchema,
  type AssetRecord,
  type ProjectRecord,
} from './records.js';
import { keepLease, writerGone, writerTag } from '../../owners.js';
import { CorruptRecordError, diskFullError, isDiskFull, listJson, readRecord, withLock, writeAtomic } from './store.js';
import { sweepLeftovers } from './sweep.js';

/** Delivery quality for local renders: the edit's own size and fps. */
export const RENDER_ENCODE: EncodeSettings = {
  preset: 'fast',
  crf: 20,
  audio: 'aac',
  audioBitrate: '192k',
  container: 'mp4',
};
/** Every local project belongs to this one local user. */
export const LOCAL_OWNER_ID = '00000000-0000-4000-8000-00000000c0de';

export interface LocalRuntime {
  ffmpeg: string;
  limiter: Limiter;
  maxInputs: number;
  /**
   * Renders elsewhere (a worker of the job queue) instead of renderTimeline here; it brings its own ffmpeg and
   * process limit.
   */
  render?: (req: RenderRequest) => Promise<RenderOutcome>;
}

export interface LocalBackendOptions {
  dataDir: string;
  allowedDirs: string[];
  prober?: MediaProber;
  runtime?: LocalRuntime;
  logger?: Logger;
  renderTimeoutMs?: number;
}

/** How often a render's process looks for a cancel asked by another (get_render_status {cancel} on a replica). */
const CANCEL_LOOK_MS = 1000;
/** How long a cancel asked of another process waits for it to stop the render. */
const CANCEL_WAIT_MS = 30_000;
/** Why a cancelled render failed, as get_render_status says it. */
export const RENDER_CANCELLED = 'the render was cancelled before it finished; its partial file was removed';

/** A render this process runs; `eta` from when its ffmpeg starts. */
interface RenderJob {
  projectId: string;
  abort: AbortController;
  /** Stopped by a cancel (not by this server stopping). */
  cancelled?: boolean;
  done: Promise<void>;
  eta?: EtaEstimator;
}

const notFound = (what: string) =>
  new ServiceError({ kind: 'http', status: 404, message: `${what} not found`, detail: `${what} not found` });

/** The asset type imported media becomes, by its streams; none for media with no picture or sound. */
function assetKindOf(facts: {
  isImage: boolean;
  hasVideo: boolean;
  hasAudio: boolean;
}): 'image' | 'video' | 'audio' | undefined {
  if (facts.isImage) return 'image';
  if (facts.hasVideo) return 'video';
  if (facts.hasAudio) return 'audio';
  return undefined;
}

export class LocalBackend implements Backend {
  readonly kind = 'local' as const;
  readonly description: string;
  private readonly log: Logger;
  /** Renders running in this process, by asset id. */
  private readonly active = new Map<string, RenderJob>();
  private allowedReal?: Promise<string[]>;

  private readonly index: ProjectIndex;

  constructor(private readonly opts: LocalBackendOptions) {
    this.description = `local projects in ${opts.dataDir}`;
    this.log = opts.logger ?? silentLogger;
    this.index = new ProjectIndex(opts.dataDir, this.projectsDir, this.log);
  }

  /** Removes what killed writers left behind (staged copies, half-made projects, trash); logs what went. */
  async sweepLeftovers(): Promise<void> {
    try {
      const removed = await sweepLeftovers(this.opts.dataDir);
      if (removed.length)
        this.log.info(
          `removed ${removed.length} leftover(s) of stopped processes from the data dir: ${removed.join(', ')}`,
        );
    } catch (err) {
      this.log.warn(`sweeping leftovers in ${this.opts.dataDir}: ${(err as Error).message}`);
    }
  }

  // ---- paths -----------------------------------------------------------------------------------

  private get projectsDir() {
    return join(this.opts.dataDir, 'projects');
  }
  private projectDir(id: string) {
    // Ids become path segments: only UUIDs get that far.
    if (!isUuid(id)) throw notFound(`project ${id}`);
    return join(this.projectsDir, id);
  }
  private assetPath(projectId: string, assetId: string) {
    return join(this.projectDir(projectId), 'assets', `${assetId}.json`);
  }
  private mediaDir(projectId: string) {
    return join(this.projectDir(projectId), 'media');
  }
  /** Where imports copy to before they are committed: a file only cutroom writes, named with its pid. */
  private get stagingDir() {
    return join(this.opts.dataDir, 'staging');
  }

  /** Runs a change to the data dir; a full disk is named, after the change has undone its own writes. */
  private async writing<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isDiskFull(err)) throw diskFullError(this.opts.dataDir);
      throw err;
    }
  }

  private async ensureLayout(): Promise<void> {
    await mkdir(this.projectsDir, { recursive: true });
  }

  // ---- records -> the service's shapes ------------------------------------------------------------

  private assetView(a: AssetRecord): Asset {
    const url = a.file && a.status === 'uploaded' ? pathToFileURL(a.file).href : null;
    return {
      id: a.id,
      keyname: a.keyname,
      url,
      download_url: url,
      asset_path: a.file,
      asset_type: a.asset_type,
      created_at: a.created_at,
      status: a.status,
      uploaded: a.uploaded,
      ...(a.error ? { error: a.error } : {}),
      ...(a.loudness ? { loudness: a.loudness } : {}),
      ...(a.duration_ms !== undefined ? { duration_ms: a.duration_ms } : {}),
      ...(a.width !== undefined && a.height !== undefined ? { width: a.width, height: a.height } : {}),
      ...(a.has_audio !== undefined ? { has_audio: a.has_audio } : {}),
      ...(a.original_name ? { original_name: a.original_name } : {}),
      ...(a.original_path ? { original_path: a.original_path } : {}),
      // Only a local render makes a generated_video here.
      ...(a.asset_type === 'generated_video' ? { render: true } : {}),
    };
  }

  private async readProject(id: string): Promise<ProjectRecord> {
    const path = join(this.projectDir(id), 'project.json');
    const rec = await readRecord(path, ProjectRecordSchema);
    if (!rec) throw notFound(`project ${id}`);
    if (rec.id !== id)
      throw new CorruptRecordError(
        `the record ${path} is corrupt (its id ${rec.id} is not its folder's); fix it or move it out of the data dir (CUTROOM_DATA_DIR)`,
        path,
        'id',
      );
    return rec;
  }

  /** The project's readable asset records, oldest first; each unreadable one is a problem, not a failure. */
  private async readAssets(
    projectId: string,
  ): Promise<{ assets: AssetRecord[]; problems: RecordProblem[]; records: number }> {
    const dir = join(this.projectDir(projectId), 'assets');
    const assets: AssetRecord[] = [];
    const problems: RecordProblem[] = [];
    const files = await listJson(dir);
    for (const f of files) {
      const path = join(dir, f);
      let a: AssetRecord | undefined;
      try {
        a = await readRecord(path, AssetRecordSchema);
        if (a && `${a.id}.json` !== f)
          throw new CorruptRecordError(
            `the record ${path} is corrupt (its id ${a.id} is not its file's name); fix it or move it out of the data dir (CUTROOM_DATA_DIR)`,
            path,
            'id',
          );
      } catch (err) {
        // Unreadable (a folder by that name, no permission) is as bad as corrupt: reported, never fatal.
        const message =
          err instanceof CorruptRecordError
            ? err.message
            : `the record ${path} cannot be read (${(err as Error).message}); fix it or move it out of the data dir (CUTROOM_DATA_DIR)`;
        problems.push({ path, message });
        continue;
      }
      if (a) assets.push(await this.reconcile(projectId, a));
    }
    return { assets: assets.sort((x, y) => x.created_at.localeCompare(y.created_at)), problems, records: files.length };
  }

  /**
   * A render still marked processing whose renderer is gone (the server was killed, or stopped) is failed,
   * and its partial file removed: no broken file ever poses as uploaded.
   */
  private async reconcile(projectId: string, a: AssetRecord): Promise<AssetRecord> {
    if (a.status !== 'processing' || !a.render) return a;
    if (this.active.has(a.id)) return a;
    // Its renderer keeps the record's mtime fresh (a lease): a renderer in another container is judged by that.
    const touched = await stat(this.assetPath(projectId, a.id)).then(
      (s) => s.mtimeMs,
      () => Date.now(),
    );
    const owner = a.render.owner ?? String(a.render.pid);
    if (!writerGone(owner, touched, { leased: !!a.render.owner })) return a;
    // ffmpeg outlives a killed parent: stop the one still writing this render.
    const killed = await killOrphans(renderDir(this.mediaDir(projectId), a.id) + sep);
    if (killed) this.log.info(`stopped ${killed} orphaned ffmpeg process(es) of interrupted render ${a.id}`);
    return this.finishRender(projectId, a.id, {
      status: 'failed',
      error: 'the render was interrupted: the server rendering it stopped',
    });
  }

  private async project(rec: ProjectRecord): Promise<ProjectWithProblems> {
    const { assets, problems, records } = await this.readAssets(rec.id);
    if (rec.asset_count !== records) await this.repairCount(rec.id);
    // asset_count counts records, as listings do; the unreadable ones are in problems.
    return {
      ...rec,
      asset_count: records,
      assets: assets.map((a) => this.assetView(a)),
      ...(problems.length ? { problems } : {}),
    };
  }

  /**
   * Writes the project's asset count, as counted now, to its record and the index. Called holding the lock
   * after an asset record is written, so the count is derived, never incremented: a crash between the asset
   * and the count leaves it one short until the next asset, or the next get_project, repairs it.
   */
  private async commitCount(projectId: string): Promise<void> {
    const rec = await this.readProject(projectId);
    const count = (await listJson(join(this.projectDir(projectId), 'assets'))).length;
    const next = { ...rec, asset_count: count };
    if (rec.asset_count !== count)
      await writeAtomic(join(this.projectDir(projectId), 'project.json'), JSON.stringify(next, null, 2));
    await this.index.put(next, count);
  }

  /** A stored count that drifted (a crash, an older version's record) is put right; best effort. */
  private async repairCount(projectId: string): Promise<void> {
    await withLock(this.opts.dataDir, () => this.commitCount(projectId)).catch((err) =>
      this.log.debug(`repairing the asset count of ${projectId}: ${(err as Error).message}`),
    );
  }

  // ---- Backend ---------------------------------------------------------------------------------

  async listProjects(limit: number | undefined): Promise<ProjectList> {
    await this.ensureLayout();
    const { projects, problems } = await this.index.list(limit ?? 10);
    return { projects, ...(problems.length ? { problems } : {}) };
  }

  async getProject(projectId: string): Promise<ProjectWithProblems> {
    return this.project(await this.readProject(projectId));
  }

  async createProject(input: CreateProjectInput): Promise<Project> {
    await this.ensureLayout();
    return this.writing(() => this.create(input));
  }

  private async create(input: CreateProjectInput): Promise<Project> {
    const rec: ProjectRecord = {
      id: randomUUID(),
      name: input.name,
      description: input.description,
      data: '',
      created_at: formatServiceTimestamp(new Date()),
      owner_id: LOCAL_OWNER_ID,
      ...(input.prompt_id ? { prompt_id: input.prompt_id } : {}),
      asset_count: 0,
    };
    const dir = this.projectDir(rec.id);
    // Built under a temporary name (with the pid: a server starting after a crash removes it) and renamed
    // into place: a reader sees the whole project or nothing.
    const staging = join(this.projectsDir, `.new-${writerTag()}-${rec.id}`);
    try {
      await this.buildProject(staging, rec);
      await withLock(this.opts.dataDir, async () => {
        await rename(staging, dir);
        await this.index.put(rec, 0);
      });
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
    const { id, name, description, data, created_at, owner_id } = rec;
    return { id, name, description, data, created_at, owner_id, asset_count: 0 };
  }

  private async buildProject(staging: string, rec: ProjectRecord): Promise<void> {
    await mkdir(join(staging, 'assets'), { recursive: true });
    await mkdir(join(staging, 'media'), { recursive: true });
    await mkdir(join(staging, 'scripts'), { recursive: true });
    const script: Script = {
      id: randomUUID(),
      name: EXAMPLE_SCRIPT_NAME,
      project_id: rec.id,
      inputs: EXAMPLE_INPUTS,
      value: exampleGraph(),
      manuscript: null,
      manuscript_persona: null,
      created_at: rec.created_at,
      project: {
        name: rec.name,
        description: rec.description,
        created_at: rec.created_at,
        owner_id: rec.owner_id,
        id: rec.id,
        data: '',
        thumbnail: null,
      },
    };
    await writeAtomic(join(staging, 'scripts', `${script.id}.json`), JSON.stringify(script, null, 2));
    await writeAtomic(join(staging, 'project.json'), JSON.stringify(rec, null, 2));
  }

  async deleteProject(projectId: string): Promise<void> {
    await this.readProject(projectId);
    for (const job of this.active.values()) if (job.projectId === projectId) job.abort.abort();
    // Renamed away first, so no reader meets a half-deleted project; the trash carries the pid for the sweep.
    const trash = join(this.projectsDir, `.deleted-${writerTag()}-${projectId}-${Date.now()}`);
    await withLock(this.opts.dataDir, async () => {
      try {
        await rename(this.projectDir(projectId), trash);
      } catch (err) {
        // Another server deleted it first.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`project ${projectId}`);
        throw err;
      }
      await this.index.remove(projectId);
    });
    await rm(trash, { recursive: true, force: true });
  }

  async listScripts(projectId: string, limit: number | undefined): Promise<Script[]> {
    await this.readProject(projectId);
    const dir = join(this.projectDir(projectId), 'scripts');
    const scripts: Script[] = [];
    for (const f of await listJson(dir)) {
      const s = await readRecord(join(dir, f), ScriptRecordSchema);
      if (s) scripts.push(s as Script);
    }
    return limit === undefined ? scripts : scripts.slice(0, limit);
  }

  // ---- media -----------------------------------------------------------------------------------

  private allowed(): Promise<string[]> {
    this.allowedReal ??= Promise.all(this.opts.allowedDirs.map((d) => realpath(d).catch(() => resolve(d))));
    return this.allowedReal;
  }

  async listMedia(
    folder: string | undefined,
    opts: { recursive: boolean; signal?: AbortSignal },
  ): Promise<MediaListing[]> {
    const allowed = await this.allowed();
    // A folder is walked by the name the tools show (displayPath), which an allowed folder's own name may not be.
    const folders =
      folder === undefined ? allowed.map((d) => displayPath(Buffer.from(d))) : [await allowedFolder(folder, allowed)];
    const budget = new WalkBudget();
    const out: MediaListing[] = [];
    for (const f of folders) out.push(await listMedia(f, allowed, { ...opts, budget }));
    return out;
  }

  async mediaTargets(paths: string[], opts: { recursive: boolean; signal?: AbortSignal }): Promise<ImportTarget[]> {
    const allowed = await this.allowed();
    const budget = new WalkBudget();
    const out: ImportTarget[] = [];
    for (const path of paths) {
      const asked = isAbsolute(path) ? path : resolve(allowed[0] ?? process.cwd(), path);
      // What is not a folder is imported as a file: the import says what is wrong with it.
      const isFolder = await realPathOf(asked)
        .then(stat)
        .then(
          (s) => s.isDirectory(),
          () => false,
        );
      if (!isFolder) {
        out.push({ asked: path });
        continue;
      }
      try {
        out.push({
          asked: path,
          folder: await listMedia(await allowedFolder(path, allowed), allowed, { ...opts, budget }),
        });
      } catch (err) {
        if (!(err instanceof UserFacingError) || opts.signal?.aborted) throw err;
        out.push({ asked: path, error: err.message });
      }
    }
    return out;
  }

  /**
   * One opened file is checked, copied and probed: the copy is read from the descriptor that was checked into
   * a staging file of cutroom's own (no name the user chose ever reaches ffprobe), probed there, and committed
   * under the lock only if the project still exists. Whatever fails, the staged copy is removed.
   * The project already holding this content makes the import a look-up: nothing is copied and the asset imported
   * before comes back (already_imported), unless `again`. Content is compared by size, then by sha256: the file is
   * hashed only when an asset of its size is there; a new file is hashed while it is copied. The decision is made
   * again under the lock, so two servers importing one file at once make one asset.
   */
  async importMedia(projectId: string, path: string, call: ImportOptions = {}): Promise<ImportedMedia> {
    await this.readProject(projectId);
    const prober = this.opts.prober;
    if (!prober) throw new UserFacingError(`importing media needs ffprobe, which was not found; ${INSTALL_HINT}`);
    // A fetched file lies in cutroom's own folder, which alone it may be opened from; it is named by its URL's name.
    const allowed = call.fetched ? [dirname(path)] : await this.allowed();
    const opened = isAbsolute(path) ? path : resolve(allowed[0] ?? process.cwd(), path);
    const asked = call.fetched ? call.fetched.name : opened;
    const { fh, real: openedReal, size } = await openAllowed(opened, allowed);
    const real = call.fetched ? call.fetched.name : openedReal;
    const id = randomUUID();
    const staged = join(this.stagingDir, `${writerTag()}-${id}.part`);
    try {
      let copied: { sha256: string; bytes: number };
      try {
        if (!call.again) {
          const same = await this.sameContent(projectId, fh, size, call.signal);
          if (same) return await this.alreadyImported(projectId, same);
        }
        copied = await this.writing(() => copyInto(fh, staged, call.signal));
      } finally {
        await fh.close();
      }
      let facts;
      try {
        facts = await prober.probe(`staged:${staged}`, { kind: 'file', path: staged }, call.signal);
      } catch (err) {
        throw new UserFacingError(
          `${asked} is not media cutroom can use: ${(err as Error).message.replaceAll(staged, 'it')}`,
        );
      }
      const kind = assetKindOf(facts);
      if (!kind) throw new UserFacingError(`${asked} has no video, audio or image stream`);
      // The copy keeps a plain extension of the original, or a neutral one: names cutroom chose, never patterns.
      const ext = /^\.[a-z0-9]{1,5}$/.exec(extname(real).toLowerCase())?.[0] ?? (kind === 'image' ? '.png' : '.media');
      const target = join(this.mediaDir(projectId), `${id}${ext}`);
      const rec: AssetRecord = {
        id,
        keyname: id,
        asset_type: kind,
        status: 'uploaded',
        uploaded: true,
        created_at: formatServiceTimestamp(new Date()),
        file: target,
        // The name as shown (a backslash in it may be an escape of displayPath, not a folder).
        original_name: real.split('/').pop(),
        original_path: real,
        ...(facts.durationMs !== undefined ? { duration_ms: facts.durationMs } : {}),
        ...(facts.width && facts.height ? { width: facts.width, height: facts.height } : {}),
        has_audio: facts.hasAudio,
        sha256: copied.sha256,
        size_bytes: copied.bytes,
      };
      const kept = await this.writing(() => this.commitAsset(projectId, rec, staged, { dedupe: !call.again }));
      if (kept.id !== rec.id) return await this.alreadyImported(projectId, kept);
      return {
        asset: this.assetView(rec),
        kind,
        ...(facts.durationMs !== undefined ? { duration_ms: facts.durationMs } : {}),
        ...(facts.headerDurationMs !== undefined ? { header_duration_ms: facts.headerDurationMs } : {}),
        ...(facts.width && facts.height ? { width: facts.width, height: facts.height } : {}),
        has_audio: facts.hasAudio,
      };
    } finally {
      await rm(staged, { force: true });
    }
  }

  /** The project's asset records as stored (no reconciling), the unreadable ones left out. */
  private async assetRecords(projectId: string): Promise<AssetRecord[]> {
    const dir = join(this.projectDir(projectId), 'assets');
    const out: AssetRecord[] = [];
    for (const f of await listJson(dir)) {
      const rec = await readRecord(join(dir, f), AssetRecordSchema).catch(() => undefined);
      if (rec && `${rec.id}.json` === f) out.push(rec);
    }
    return out;
  }

  /**
   * An asset's media file, when it is one of the project's own copies in the data dir (a record may be hand-edited).
   */
  private ownMedia(projectId: string, rec: AssetRecord): string | undefined {
    return rec.file && isInside([this.mediaDir(projectId)], resolve(rec.file)) ? rec.file : undefined;
  }

  /**
   * An uploaded asset of the project with the content of `fh` (`size` bytes), if there is one. The file is hashed
   * only when an asset of its size is there. A record from before hashes were kept is hashed now, once: its hash is
   * written to it.
   */
  private async sameContent(
    projectId: string,
    fh: FileHandle,
    size: number,
    signal?: AbortSignal,
  ): Promise<AssetRecord | undefined> {
    const sized: AssetRecord[] = [];
    for (const rec of await this.assetRecords(projectId)) {
      const file = this.ownMedia(projectId, rec);
      if (rec.status !== 'uploaded' || !file) continue;
      const bytes =
        rec.size_bytes ??
        (await stat(file).then(
          (st) => st.size,
          () => undefined,
        ));
      if (bytes === size) sized.push(rec);
    }
    if (!sized.length) return undefined;
    const digest = (await readAll(fh, signal)).sha256;
    for (const rec of sized) {
      let sha = rec.sha256;
      if (!sha) {
        const file = await open(this.ownMedia(projectId, rec)!, 'r').catch(() => undefined);
        if (!file) continue;
        try {
          sha = (await readAll(file, signal)).sha256;
        } finally {
          await file.close();
        }
        await this.recordHash(projectId, rec.id, rec.file!, sha, size);
      }
      if (sha === digest) return rec;
    }
    return undefined;
  }

  /** Writes a hash computed lazily to its record, if the record still names that file; best effort. */
  private async recordHash(
    projectId: string,
    assetId: string,
    file: string,
    sha256: string,
    bytes: number,
  ): Promise<void> {
    await withLock(this.opts.dataDir, async () => {
      const path = this.assetPath(projectId, assetId);
      const cur = await readRecord(path, AssetRecordSchema);
      if (!cur || cur.file !== file || cur.sha256) return;
      await writeAtomic(path, JSON.stringify({ ...cur, sha256, size_bytes: bytes }, null, 2));
    }).catch((err) => this.log.debug(`recording the hash of asset ${assetId}: ${(err as Error).message}`));
  }

  /**
   * An import answered by the asset already there: what its record (or, for an older record, a probe of its copy) says.
   */
  private async alreadyImported(projectId: string, rec: AssetRecord): Promise<ImportedMedia> {
    const kind = rec.asset_type === 'generated_video' ? 'video' : rec.asset_type;
    let facts: { width?: number; height?: number; has_audio: boolean } = {
      ...(rec.width !== undefined && rec.height !== undefined ? { width: rec.width, height: rec.height } : {}),
      has_audio: rec.has_audio ?? false,
    };
    const file = this.ownMedia(projectId, rec);
    if (rec.has_audio === undefined && file && this.opts.prober) {
      const probed = await this.opts.prober.probe(rec.id, { kind: 'file', path: file }).catch(() => undefined);
      if (probed)
        facts = {
          ...(probed.width && probed.height ? { width: probed.width, height: probed.height } : {}),
          has_audio: probed.hasAudio,
        };
    }
    return {
      asset: this.assetView(rec),
      kind,
      ...(rec.duration_ms !== undefined ? { duration_ms: rec.duration_ms } : {}),
      ...facts,
      already_imported: true,
    };
  }

  /**
   * Under the lock: the project must still exist (a delete may have won the race); with `dedupe`, an asset of the
   * same content committed meanwhile (another import of the same file) is kept instead, and returned; else the media
   * moves in, the record is written and the count follows. A failure undoes what was done, so nothing is orphaned.
   */
  private async commitAsset(
    projectId: string,
    rec: AssetRecord,
    staged: string | undefined,
    opts: { dedupe?: boolean } = {},
  ): Promise<AssetRecord> {
    return withLock(this.opts.dataDir, async () => {
      await this.readProject(projectId);
      if (opts.dedupe && rec.sha256) {
        const same = (await this.assetRecords(projectId)).find(
          (a) => a.sha256 === rec.sha256 && a.status === 'uploaded' && this.ownMedia(projectId, a),
        );
        if (same) return same;
      }
      const record = this.assetPath(projectId, rec.id);
      try {
        if (staged && rec.file) {
          await mkdir(this.mediaDir(projectId), { recursive: true });
          await rename(staged, rec.file);
        }
        await writeAtomic(record, JSON.stringify(rec, null, 2));
        await this.commitCount(projectId);
      } catch (err) {
        await rm(record, { force: true });
        if (staged && rec.file) await rm(rec.file, { force: true });
        throw err;
      }
      return rec;
    });
  }

  /**
   * Removes an asset: its record and its media copy in the data dir, under the lock (a file outside the data dir, which
   * only a hand-edited record can name, is never touched). Refused while it is a render still being made, or a source
   * of one. The media is moved to staging first (a name the sweep removes if this process dies), then deleted.
   */
  async deleteAsset(projectId: string, assetId: string): Promise<DeletedAsset> {
    // Reconciled first (outside the lock, which reconciling takes): a render whose server died blocks nothing.
    const { assets } = await this.readAssets(projectId);
    if (!isUuid(assetId) || !assets.some((a) => a.id === assetId)) throw notFound(`asset ${assetId}`);
    const trash = join(this.stagingDir, `${writerTag()}-${assetId}.part`);
    const done = await this.writing(() =>
      withLock(this.opts.dataDir, async () => {
        await this.readProject(projectId);
        const path = this.assetPath(projectId, assetId);
        const rec = await readRecord(path, AssetRecordSchema);
        if (!rec) throw notFound(`asset ${assetId}`);
        const name = rec.original_name ? ` (${rec.original_name})` : '';
        if (rec.status === 'processing')
          throw new UserFacingError(
            `nothing was deleted: asset ${assetId}${name} is a render still being made; wait for it to end (get_render_status), then delete it`,
          );
        const user = (await this.assetRecords(projectId)).find(
          (a) => a.status === 'processing' && a.render?.sources?.includes(assetId),
        );
        if (user)
          throw new UserFacingError(
            `nothing was deleted: asset ${assetId}${name} is a source of render ${user.id}, still being made; wait for it to end (get_render_status), then delete it`,
          );
        const file = this.ownMedia(projectId, rec);
        let moved = false;
        if (file) {
          await mkdir(this.stagingDir, { recursive: true });
          moved = await rename(file, trash).then(
            () => true,
            (err: NodeJS.ErrnoException) => {
              if (err.code === 'ENOENT') return false;
              throw err;
            },
          );
        }
        try {
          await rm(path);
          await this.commitCount(projectId);
        } catch (err) {
          if (moved) await rename(trash, file!).catch(() => {});
          throw err;
        }
        if (rec.file && !file)
          this.log.warn(
            `deleted asset ${assetId}: its record named ${rec.file}, outside the project's media folder, which was left as it is`,
          );
        return { ...(rec.original_name ? { name: rec.original_name } : {}), file_removed: moved };
      }),
    );
    await rm(trash, { force: true });
    return done;
  }

  // ---- renders ---------------------------------------------------------------------------------

  async createEdit(
    projectId: string,
    edit: Edit,
    _call?: CallOptions,
    render: RenderOptions = {},
  ): Promise<RenderReceipt> {
    const project = await this.getProject(projectId);
    const rt = this.opts.runtime;
    const prober = this.opts.prober;
    if (!rt || !prober)
      throw new UserFacingError(`rendering locally needs ffmpeg and ffprobe, which were not found; ${INSTALL_HINT}`);
    const { timeline } = normalizeEdit(edit);
    if (!timeline) throw new UserFacingError('the edit has no playable cut');
    let plan = toRenderPlan(timeline, { fadeMs: render.fadeMs, cues: render.cues });
    const byId = new Map((project.assets ?? []).map((a) => [a.id, a]));
    const spec = async (assetId: string): Promise<InputSpec> => {
      const a = byId.get(assetId);
      if (!a?.asset_path || a.status !== 'uploaded')
        throw new UserFacingError(`asset ${assetId} has no media to render from`);
      const source = { kind: 'file', path: a.asset_path } as const;
      return inputSpec(source, await prober.probe(assetId, source));
    };
    const cutInputs = await Promise.all(plan.cuts.map((c) => spec(c.assetId)));
    const overlayInputs = await Promise.all(plan.overlays.map((o) => spec(o.assetId)));
    if (ducks(timeline))
      plan = toRenderPlan(timeline, {
        fadeMs: render.fadeMs,
        cues: render.cues,
        speech: await speechOnTimeline(rt, timeline, plan, cutInputs, overlayInputs, _call?.signal, render.speechWords),
      });
    if (reframes(timeline)) plan = await reframed(rt, timeline, plan, cutInputs, _call?.signal);

    const id = randomUUID();
    const editId = randomUUID();
    // A folder of its own (made once the record is written), so that two renders of one name never meet.
    const folder = renderDir(this.mediaDir(projectId), id);
    const output = join(folder, renderFileName(edit.video_output_filename));
    const rec: AssetRecord = {
      id,
      keyname: id,
      asset_type: 'generated_video',
      status: 'processing',
      uploaded: false,
      created_at: formatServiceTimestamp(new Date()),
      file: null,
      original_name: edit.video_output_filename,
      render: {
        pid: process.pid,
        owner: writerTag(),
        edit_id: editId,
        started_at: new Date().toISOString(),
        sources: [...new Set([...plan.cuts, ...plan.overlays].map((x) => x.assetId))],
      },
    };
    await this.writing(() => this.commitAsset(projectId, rec, undefined));

    const abort = new AbortController();
    const stopLease = keepLease(this.assetPath(projectId, id));
    const job: RenderJob = { projectId, abort, done: Promise.resolve() };
    const stopWatch = this.watchCancel(projectId, id, job);
    let sidecar: ProgressSidecar | undefined;
    job.done = (async () => {
      try {
        // Not recursive: a project deleted meanwhile is not brought back as an empty folder.
        await this.writing(async () => {
          await mkdir(this.mediaDir(projectId)).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'EEXIST') throw err;
          });
          await mkdir(folder);
        });
        const go = () => {
          // The clock starts when ffmpeg does, not while the render waits for its turn.
          const eta = new EtaEstimator(Date.now());
          job.eta = eta;
          sidecar = new ProgressSidecar(folder, () => ({
            fraction: eta.done,
            ...etaField(eta.etaSeconds(Date.now())),
          }));
          sidecar.changed();
          return (rt.render ?? renderTimeline)({
            ffmpeg: rt.ffmpeg,
            plan,
            cutInputs,
            overlayInputs,
            output,
            encode: RENDER_ENCODE,
            // Measured, so that the render says how loud it came out and its true peak.
            measure: true,
            maxInputs: rt.maxInputs,
            timeoutMs: this.opts.renderTimeoutMs ?? 2 * 3600_000,
            signal: abort.signal,
            onProgress: (fraction) => {
              eta.update(fraction, Date.now());
              sidecar?.changed();
            },
            // Uploaded only when the file has what was asked: its streams, and its length to the frame.
            ...(this.opts.prober ? { verifyWith: this.opts.prober.ffprobe } : {}),
          });
        };
        // (A render on a worker takes a slot of the worker's, not of this server's.)
        const outcome = await (rt.render ? go() : rt.limiter.run(go));
        // What it came to: a loudness target's last pass, else the mix as measured while it was made.
        const f = outcome.finish ?? finished(undefined, 0, outcome.measurements ?? {});
        const loudness =
          f.lufs !== undefined && f.truePeakDb !== undefined
            ? {
                lufs: f.lufs,
                true_peak_db: f.truePeakDb,
                ...(plan.loudness ? { target_lufs: plan.loudness.targetLufs } : {}),
              }
            : undefined;
        await this.finishRender(projectId, id, {
          status: 'uploaded',
          file: output,
          duration_ms: Math.round(plan.totalSec * 1000),
          width: plan.width,
          height: plan.height,
          ...(loudness ? { loudness } : {}),
        });
        // Removed once the record says uploaded: until then a reader still finds where it had got to.
        await sidecar?.close();
        this.log.info(`rendered ${id} (${plan.totalSec} s) in project ${projectId}`);
      } catch (err) {
        const stopped = abort.signal.aborted ? 'the render was stopped before it finished' : undefined;
        const reason = job.cancelled ? RENDER_CANCELLED : (stopped ?? (err as Error).message);
        this.log.warn(`render ${id} failed: ${reason}`);
        await sidecar?.close();
        await this.finishRender(projectId, id, { status: 'failed', error: reason }).catch(() => {});
      } finally {
        stopLease();
        stopWatch();
        this.active.delete(id);
      }
    })();
    this.active.set(id, job);
    return { asset_id: id, edit_id: editId, status: 'processing' };
  }

  /** Stops a render this process runs once another process asks (a mark in its record). */
  private watchCancel(projectId: string, assetId: string, job: RenderJob): () => void {
    const path = this.assetPath(projectId, assetId);
    const timer = setInterval(() => {
      void readRecord(path, AssetRecordSchema).then(
        (rec) => {
          if (!rec?.render?.cancel_asked || job.abort.signal.aborted) return;
          this.log.info(`render ${assetId}: cancelled by another server`);
          job.cancelled = true;
          job.abort.abort();
        },
        () => {},
      );
    }, CANCEL_LOOK_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  async cancelRender(
    projectId: string,
    assetId: string,
    call?: CallOptions,
  ): Promise<'stopped' | 'asked' | 'not running'> {
    const path = this.assetPath(projectId, assetId);
    const status = async () => {
      const rec = await readRecord(path, AssetRecordSchema);
      if (!rec) throw notFound(`asset ${assetId}`);
      return (await this.reconcile(projectId, rec)).status;
    };
    if ((await status()) !== 'processing') return 'not running';
    const job = this.active.get(assetId);
    if (job) {
      job.cancelled = true;
      job.abort.abort();
      // (Settles once its ffmpeg, here or on a worker, stopped and its files are removed.)
      await job.done;
      return 'stopped';
    }
    // Another process runs it (a replica sharing the data dir): asked through its record, which it reads every second.
    await withLock(this.opts.dataDir, async () => {
      const cur = await readRecord(path, AssetRecordSchema);
      if (cur?.status !== 'processing' || !cur.render) return;
      const next = { ...cur, render: { ...cur.render, cancel_asked: new Date().toISOString() } };
      await writeAtomic(path, JSON.stringify(next, null, 2));
    });
    const until = Date.now() + CANCEL_WAIT_MS;
    while (Date.now() < until && !call?.signal?.aborted) {
      if ((await status()) !== 'processing') return 'stopped';
      await new Promise((r) => setTimeout(r, 200));
    }
    return 'asked';
  }

  renderSettled(assetId: string): Promise<void> | undefined {
    return this.active.get(assetId)?.done;
  }

  async renderProgress(projectId: string, assetId: string): Promise<RenderProgress | undefined> {
    const job = this.active.get(assetId);
    if (job?.eta) return { fraction: job.eta.done, ...etaField(job.eta.etaSeconds(Date.now())) };
    if (job || !isUuid(assetId)) return undefined;
    // Another server's render: as its renderer last wrote it, the time since then counted off the estimate.
    const stored = await readProgress(renderDir(this.mediaDir(projectId), assetId));
    if (!stored) return undefined;
    const age = Math.max(0, (Date.now() - Date.parse(stored.updated_at)) / 1000) || 0;
    return {
      fraction: stored.fraction,
      ...etaField(stored.eta_seconds === undefined ? undefined : stored.eta_seconds - age),
    };
  }

  /** Moves a render's record to its final state, and clears partial files on failure. */
  private async finishRender(
    projectId: string,
    assetId: string,
    change: {
      status: 'uploaded' | 'failed';
      file?: string;
      error?: string;
      duration_ms?: number;
      width?: number;
      height?: number;
      loudness?: AssetRecord['loudness'];
    },
  ): Promise<AssetRecord> {
    return withLock(this.opts.dataDir, async () => {
      const path = this.assetPath(projectId, assetId);
      const cur = await readRecord(path, AssetRecordSchema);
      if (!cur) throw notFound(`asset ${assetId}`);
      if (cur.status !== 'processing') return cur;
      const next: AssetRecord = {
        ...cur,
        status: change.status,
        uploaded: change.status === 'uploaded',
        file: change.file ?? null,
      };
      if (change.error) next.error = change.error;
      if (change.duration_ms !== undefined) next.duration_ms = change.duration_ms;
      if (change.loudness) next.loudness = change.loudness;
      // A render that was kept has its picture and its sound (it was verified); its size is the edit's.
      if (change.status === 'uploaded' && change.width && change.height)
        Object.assign(next, { width: change.width, height: change.height, has_audio: true });
      if (change.status === 'failed') {
        const media = this.mediaDir(projectId);
        await rm(renderDir(media, assetId), { recursive: true, force: true });
        // Where earlier versions rendered: media/<id>.mp4, written as .<id>.mp4.<hex>.part.
        for (const f of await readdir(media).catch(() => [] as string[])) {
          if (f.startsWith(`.${assetId}.mp4.`) || f === `${assetId}.mp4`) await rm(join(media, f), { force: true });
        }
      }
      await writeAtomic(path, JSON.stringify(next, null, 2));
      return next;
    });
  }

  async close(): Promise<void> {
    for (const job of this.active.values()) job.abort.abort();
    await Promise.all([...this.active.values()].map((j) => j.done));
  }
}

/** An estimate in whole tenths of a second, never below zero; none when there is none. */
const etaField = (seconds: number | undefined): { eta_seconds?: number } =>
  seconds === undefined || !Number.isFinite(seconds) ? {} : { eta_seconds: Math.max(0, Math.round(seconds * 10) / 10) };

const COPY_CHUNK = 1024 * 1024;

/** Reads what the descriptor holds from its start, chunk by chunk, into `each`; returns its sha256 and length. */
async function readAll(
  from: FileHandle,
  signal: AbortSignal | undefined,
  each?: (chunk: Buffer) => Promise<void>,
): Promise<{ sha256: string; bytes: number }> {
  const hash: Hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(COPY_CHUNK);
  let pos = 0;
  for (;;) {
    if (signal?.aborted) throw new UserFacingError('cancelled; nothing was imported');
    const { bytesRead } = await from.read(buf, 0, COPY_CHUNK, pos);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    hash.update(chunk);
    await each?.(chunk);
    pos += bytesRead;
  }
  return { sha256: hash.digest('hex'), bytes: pos };
}

/**
 * Copies what the descriptor holds, from its start, to a new file, hashing it on the way; flushed, so a crash cannot
 * commit half of it.
 */
async function copyInto(
  from: FileHandle,
  to: string,
  signal?: AbortSignal,
): Promise<{ sha256: string; bytes: number }> {
  await mkdir(dirname(to), { recursive: true });
  const out = await open(to, 'wx', 0o644);
  try {
    const read = await readAll(from, signal, async (chunk) => {
      for (let off = 0; off < chunk.length;) off += (await out.write(chunk, off, chunk.length - off)).bytesWritten;
    });
    await out.sync();
    return read;
  } finally {
    await out.close();
  }
}
