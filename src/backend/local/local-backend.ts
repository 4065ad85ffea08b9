// The embedded backend: the service's workflow on this machine, with no account. Projects, assets and scripts in
// the service's shapes under a data dir; media imported from allowed folders; edits rendered by local ffmpeg.
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve } from 'node:path';
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
import { killOrphans } from '../../media/process.js';
import { renderTimeline } from '../../media/render.js';
import type { EncodeSettings, InputSpec } from '../../media/timeline-args.js';
import type { Backend, CallOptions, CreateProjectInput, ImportedMedia } from '../types.js';
import { EXAMPLE_INPUTS, EXAMPLE_SCRIPT_NAME, exampleGraph } from './example-script.js';
import { listJson, processAlive, readRecord, withLock, writeAtomic } from './store.js';

/** Delivery quality for local renders: the edit's own size and fps. */
export const RENDER_ENCODE: EncodeSettings = { preset: 'fast', crf: 20, audio: 'aac', audioBitrate: '192k', container: 'mp4' };
/** Every local project belongs to this one local user. */
export const LOCAL_OWNER_ID = '00000000-0000-4000-8000-00000000c0de';

interface ProjectRecord {
  id: string;
  name: string;
  description: string;
  data: string;
  created_at: string;
  owner_id: string;
  prompt_id?: string;
}

interface AssetRecord {
  id: string;
  keyname: string;
  asset_type: 'video' | 'audio' | 'image' | 'generated_video';
  status: 'uploaded' | 'processing' | 'failed';
  uploaded: boolean;
  created_at: string;
  /** Absolute path of the media inside the data dir, once there is media. */
  file: string | null;
  original_name?: string;
  duration_ms?: number;
  error?: string;
  /** The server process rendering it. */
  render?: { pid: number; edit_id: string; started_at: string };
}

export interface LocalRuntime {
  ffmpeg: string;
  limiter: Limiter;
  maxInputs: number;
}

export interface LocalBackendOptions {
  dataDir: string;
  allowedDirs: string[];
  prober?: MediaProber;
  runtime?: LocalRuntime;
  logger?: Logger;
  renderTimeoutMs?: number;
}

const notFound = (what: string) => new ServiceError({ kind: 'http', status: 404, message: `${what} not found`, detail: `${what} not found` });

export class LocalBackend implements Backend {
  readonly kind = 'local' as const;
  readonly description: string;
  private readonly log: Logger;
  /** Renders running in this process, by asset id. */
  private readonly active = new Map<string, { projectId: string; abort: AbortController; done: Promise<void> }>();
  private allowedReal?: Promise<string[]>;

  constructor(private readonly opts: LocalBackendOptions) {
    this.description = `local projects in ${opts.dataDir}`;
    this.log = opts.logger ?? silentLogger;
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
      ...(a.duration_ms !== undefined ? { duration_ms: a.duration_ms } : {}),
      ...(a.original_name ? { original_name: a.original_name } : {}),
    };
  }

  private async readProject(id: string): Promise<ProjectRecord> {
    const rec = await readRecord<ProjectRecord>(join(this.projectDir(id), 'project.json'));
    if (!rec) throw notFound(`project ${id}`);
    return rec;
  }

  private async readAssets(projectId: string): Promise<AssetRecord[]> {
    const dir = join(this.projectDir(projectId), 'assets');
    const assets: AssetRecord[] = [];
    for (const f of await listJson(dir)) {
      const a = await readRecord<AssetRecord>(join(dir, f));
      if (a) assets.push(await this.reconcile(projectId, a));
    }
    return assets.sort((x, y) => x.created_at.localeCompare(y.created_at));
  }

  /**
   * A render still marked processing whose renderer is gone (the server was killed, or stopped) is failed,
   * and its partial file removed: no broken file ever poses as uploaded.
   */
  private async reconcile(projectId: string, a: AssetRecord): Promise<AssetRecord> {
    if (a.status !== 'processing' || !a.render) return a;
    const ours = a.render.pid === process.pid;
    if ((ours && this.active.has(a.id)) || (!ours && processAlive(a.render.pid))) return a;
    // ffmpeg outlives a killed parent: stop the one still writing this render.
    const killed = await killOrphans(a.id);
    if (killed) this.log.info(`stopped ${killed} orphaned ffmpeg process(es) of interrupted render ${a.id}`);
    return this.finishRender(projectId, a.id, { status: 'failed', error: 'the render was interrupted: the server rendering it stopped' });
  }

  private async project(rec: ProjectRecord): Promise<Project> {
    const assets = (await this.readAssets(rec.id)).map((a) => this.assetView(a));
    return { ...rec, asset_count: assets.length, assets };
  }

  // ---- Backend ---------------------------------------------------------------------------------

  async listProjects(limit: number | undefined): Promise<Project[]> {
    await this.ensureLayout();
    const ids = (await readdir(this.projectsDir)).filter(isUuid);
    const recs: ProjectRecord[] = [];
    for (const id of ids) {
      const rec = await readRecord<ProjectRecord>(join(this.projectsDir, id, 'project.json'));
      if (rec) recs.push(rec);
    }
    recs.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
    return Promise.all(recs.slice(0, limit ?? 10).map((r) => this.project(r)));
  }

  async getProject(projectId: string): Promise<Project> {
    return this.project(await this.readProject(projectId));
  }

  async createProject(input: CreateProjectInput): Promise<Project> {
    await this.ensureLayout();
    const rec: ProjectRecord = {
      id: randomUUID(),
      name: input.name,
      description: input.description,
      data: '',
      created_at: formatServiceTimestamp(new Date()),
      owner_id: LOCAL_OWNER_ID,
      ...(input.prompt_id ? { prompt_id: input.prompt_id } : {}),
    };
    const dir = this.projectDir(rec.id);
    // Built under a temporary name and renamed into place: a reader sees the whole project or nothing.
    const staging = join(this.projectsDir, `.new-${rec.id}`);
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
      project: { name: rec.name, description: rec.description, created_at: rec.created_at, owner_id: rec.owner_id, id: rec.id, data: '', thumbnail: null },
    };
    await writeAtomic(join(staging, 'scripts', `${script.id}.json`), JSON.stringify(script, null, 2));
    await writeAtomic(join(staging, 'project.json'), JSON.stringify(rec, null, 2));
    await withLock(this.opts.dataDir, () => rename(staging, dir));
    const { id, name, description, data, created_at, owner_id } = rec;
    return { id, name, description, data, created_at, owner_id, asset_count: 0 };
  }

  async deleteProject(projectId: string): Promise<void> {
    await this.readProject(projectId);
    for (const job of this.active.values()) if (job.projectId === projectId) job.abort.abort();
    // Renamed away first, so no reader meets a half-deleted project.
    const trash = join(this.projectsDir, `.deleted-${projectId}-${Date.now()}`);
    await withLock(this.opts.dataDir, () => rename(this.projectDir(projectId), trash));
    await rm(trash, { recursive: true, force: true });
  }

  async listScripts(projectId: string, limit: number | undefined): Promise<Script[]> {
    await this.readProject(projectId);
    const dir = join(this.projectDir(projectId), 'scripts');
    const scripts: Script[] = [];
    for (const f of await listJson(dir)) {
      const s = await readRecord<Script>(join(dir, f));
      if (s) scripts.push(s);
    }
    return limit === undefined ? scripts : scripts.slice(0, limit);
  }

  // ---- media -----------------------------------------------------------------------------------

  private allowed(): Promise<string[]> {
    this.allowedReal ??= Promise.all(this.opts.allowedDirs.map((d) => realpath(d).catch(() => resolve(d))));
    return this.allowedReal;
  }

  async importMedia(projectId: string, path: string, call?: CallOptions): Promise<ImportedMedia> {
    await this.readProject(projectId);
    if (!this.opts.prober) throw new UserFacingError(`importing media needs ffprobe, which was not found; ${INSTALL_HINT}`);
    const allowed = await this.allowed();
    const asked = isAbsolute(path) ? path : resolve(allowed[0] ?? process.cwd(), path);
    let real: string;
    try {
      // Symlinks and .. are resolved before the check: a link inside an allowed folder cannot lead out of it.
      real = await realpath(asked);
    } catch {
      throw new UserFacingError(`no file at ${asked}`);
    }
    const inside = allowed.some((dir) => {
      const rel = relative(dir, real);
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    });
    if (!inside) {
      throw new UserFacingError(`${asked}${real !== asked ? ` (which is ${real})` : ''} is outside the folders cutroom may read (${allowed.join(', ')}); move it there or add its folder to CUTROOM_ALLOWED_DIRS`);
    }
    const st = await stat(real);
    if (!st.isFile()) throw new UserFacingError(`${asked} is not a file`);
    let facts;
    try {
      facts = await this.opts.prober.probe(`file:${real}:${st.size}:${st.mtimeMs}`, { kind: 'file', path: real }, call?.signal);
    } catch (err) {
      throw new UserFacingError(`${asked} is not media cutroom can use: ${(err as Error).message}`);
    }
    const kind = facts.isImage ? 'image' : facts.hasVideo ? 'video' : facts.hasAudio ? 'audio' : undefined;
    if (!kind) throw new UserFacingError(`${asked} has no video, audio or image stream`);
    const id = randomUUID();
    // The copy keeps a plain extension of the original (ffmpeg names image formats by it), or a neutral one.
    const ext = /^\.[a-z0-9]{1,5}$/.exec(extname(real).toLowerCase())?.[0] ?? (kind === 'image' ? '.png' : '.media');
    const target = join(this.mediaDir(projectId), `${id}${ext}`);
    const tmp = `${target}.${process.pid}.part`;
    await mkdir(this.mediaDir(projectId), { recursive: true });
    await copyFile(real, tmp);
    await rename(tmp, target);
    const rec: AssetRecord = {
      id,
      keyname: id,
      asset_type: kind,
      status: 'uploaded',
      uploaded: true,
      created_at: formatServiceTimestamp(new Date()),
      file: target,
      original_name: real.split(/[/\\]/).pop(),
      ...(facts.durationMs !== undefined ? { duration_ms: facts.durationMs } : {}),
    };
    await withLock(this.opts.dataDir, async () => {
      await this.readProject(projectId); // still there
      await writeAtomic(this.assetPath(projectId, id), JSON.stringify(rec, null, 2));
    });
    return {
      asset: this.assetView(rec),
      kind,
      ...(facts.durationMs !== undefined ? { duration_ms: facts.durationMs } : {}),
      ...(facts.width && facts.height ? { width: facts.width, height: facts.height } : {}),
      has_audio: facts.hasAudio,
    };
  }

  // ---- renders ---------------------------------------------------------------------------------

  async createEdit(projectId: string, edit: Edit): Promise<RenderReceipt> {
    const project = await this.getProject(projectId);
    const rt = this.opts.runtime;
    const prober = this.opts.prober;
    if (!rt || !prober) throw new UserFacingError(`rendering locally needs ffmpeg and ffprobe, which were not found; ${INSTALL_HINT}`);
    const { timeline } = normalizeEdit(edit);
    if (!timeline) throw new UserFacingError('the edit has no playable cut');
    const plan = toRenderPlan(timeline);
    const byId = new Map((project.assets ?? []).map((a) => [a.id, a]));
    const spec = async (assetId: string): Promise<InputSpec> => {
      const a = byId.get(assetId);
      if (!a?.asset_path || a.status !== 'uploaded') throw new UserFacingError(`asset ${assetId} has no media to render from`);
      const f = await prober.probe(assetId, { kind: 'file', path: a.asset_path });
      return { source: { kind: 'file', path: a.asset_path }, hasAudio: f.hasAudio, ...(f.width && f.height ? { width: f.width, height: f.height } : {}) };
    };
    const cutInputs = await Promise.all(plan.cuts.map((c) => spec(c.assetId)));
    const overlayInputs = await Promise.all(plan.overlays.map((o) => spec(o.assetId)));

    const id = randomUUID();
    const editId = randomUUID();
    const output = join(this.mediaDir(projectId), `${id}.mp4`);
    const rec: AssetRecord = {
      id,
      keyname: id,
      asset_type: 'generated_video',
      status: 'processing',
      uploaded: false,
      created_at: formatServiceTimestamp(new Date()),
      file: null,
      original_name: edit.video_output_filename,
      render: { pid: process.pid, edit_id: editId, started_at: new Date().toISOString() },
    };
    await withLock(this.opts.dataDir, () => writeAtomic(this.assetPath(projectId, id), JSON.stringify(rec, null, 2)));

    const abort = new AbortController();
    const done = (async () => {
      try {
        await rt.limiter.run(() =>
          renderTimeline({
            ffmpeg: rt.ffmpeg,
            plan,
            cutInputs,
            overlayInputs,
            output,
            encode: RENDER_ENCODE,
            measure: false,
            maxInputs: rt.maxInputs,
            timeoutMs: this.opts.renderTimeoutMs ?? 2 * 3600_000,
            signal: abort.signal,
          }),
        );
        await this.finishRender(projectId, id, { status: 'uploaded', file: output, duration_ms: Math.round(plan.totalSec * 1000) });
        this.log.info(`rendered ${id} (${plan.totalSec} s) in project ${projectId}`);
      } catch (err) {
        const reason = abort.signal.aborted ? 'the render was stopped before it finished' : (err as Error).message;
        this.log.warn(`render ${id} failed: ${reason}`);
        await this.finishRender(projectId, id, { status: 'failed', error: reason }).catch(() => {});
      } finally {
        this.active.delete(id);
      }
    })();
    this.active.set(id, { projectId, abort, done });
    return { asset_id: id, edit_id: editId, status: 'processing' };
  }

  /** Moves a render's record to its final state, and clears partial files on failure. */
  private async finishRender(projectId: string, assetId: string, change: { status: 'uploaded' | 'failed'; file?: string; error?: string; duration_ms?: number }): Promise<AssetRecord> {
    return withLock(this.opts.dataDir, async () => {
      const path = this.assetPath(projectId, assetId);
      const cur = await readRecord<AssetRecord>(path);
      if (!cur) throw notFound(`asset ${assetId}`);
      if (cur.status !== 'processing') return cur;
      const next: AssetRecord = { ...cur, status: change.status, uploaded: change.status === 'uploaded', file: change.file ?? null };
      if (change.error) next.error = change.error;
      if (change.duration_ms !== undefined) next.duration_ms = change.duration_ms;
      if (change.status === 'failed') {
        const media = this.mediaDir(projectId);
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
