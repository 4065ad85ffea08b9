// A server's side of a cut's clip while its preview renders on a worker (issue 35: what the caller sees does not
// change). Any replica, following the job or not, finds it by the preview's making mark and reads the job's
// progress. With a shared cache dir it makes the clip itself from the cut's segment, into the preview's folder, as
// in-process; with an object store it asks the worker running the job (worker-clips.ts) and reads the clip back.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { UserFacingError } from '../errors.js';
import { makeCutClip } from '../media/cut-clip.js';
import { Limiter } from '../media/probe.js';
import { RenderError } from '../media/render-error.js';
import { isPreviewId } from '../media/cache.js';
import { PREVIEW_ENCODE, clipFile } from '../workflow/preview.js';
import type { MediaRuntime } from '../workflow/media-runtime.js';
import { CLIP_CHANNEL, clipFailedKey, clipMadeKey, makingJob, makingKey, within } from './connection.js';
import type { PreviewProgress } from './preview-job.js';

/** How long a server waits for the worker to make and store a clip (a copy and a few seconds of sound encoded). */
export const CLIP_WAIT_MS = 30_000;
/** Clips made at once for one preview by this server (as in-process: small processes outside the ffmpeg slots). */
const CLIPS_AT_ONCE = 2;
/**
 * With an object store: where clips read back live in this cache dir (not in a preview's folder, which a fetch of the
 * finished preview creates whole).
 */
const CLIPS_DIR = '.clips';
/** Such a clip is swept this long after it was read back (the finished preview has its own copy). */
const CLIP_KEEP_MS = 3600_000;
/** A preview's state here is forgotten this long after it was first asked (a job runs 10 minutes at most). */
const FORGET_MS = 15 * 60_000;

const STOPPED = 'this preview was stopped or failed: preview_edit {preview_id} says why';
const isFile = (p: string) =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  );

/** Clips being made here for one preview: each once, a few at once, all stopped with the preview. */
interface Making {
  turns: Limiter;
  made: Map<number, Promise<string>>;
  stop: AbortController;
}

export class QueueClips {
  private readonly previews = new Map<string, Making>();
  /** Clips being read back from the store, by cache folder, preview and cut: several readers wait for one. */
  private readonly fetching = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly conn: Redis,
    private readonly queue: Queue,
    private readonly waitMs = CLIP_WAIT_MS,
  ) {}

  /**
   * The path here of cut `index`'s clip of preview `id` a worker is making for the cache folder `place` (JobPlace's
   * cacheDir); undefined when no worker is making it, or that cut is not rendered yet.
   */
  async clip(rt: MediaRuntime, place: string, id: string, index: number): Promise<string | undefined> {
    if (!isPreviewId(id) || !Number.isInteger(index) || index < 0) return undefined;
    const marked = await makingJob(this.conn, this.queue, place, id).catch(() => undefined);
    if (!marked) return undefined;
    const jobId = marked.id;
    const p = marked.job.progress as PreviewProgress | undefined;
    if (!p || typeof p !== 'object' || p.id !== id || !Array.isArray(p.ready) || !p.ready.includes(index))
      return undefined;
    return rt.store ? this.fromWorker(rt, place, jobId, id, index) : this.madeHere(rt, id, index, p);
  }

  /** The preview failed or was cancelled: its clips being made here stop (their folder goes). */
  stop(rt: MediaRuntime, id: string): void {
    const key = `${rt.cache.root}\0${id}`;
    this.previews.get(key)?.stop.abort();
    this.previews.delete(key);
  }

  /** A shared cache dir: made here from the cut's segment, into the preview's folder, as in-process. */
  private async madeHere(rt: MediaRuntime, id: string, index: number, p: PreviewProgress): Promise<string> {
    const out = join(rt.cache.root, id, clipFile(index));
    // Made already (by the worker, for the first cut, or by any server sharing the dir): written whole, then renamed.
    if (await isFile(out)) return out;
    const seg = Array.isArray(p.segments) ? p.segments.find((s) => s?.cut === index) : undefined;
    // Redis says which segment: only a key of the segment store (40 hex digits) is taken, and its file is looked for
    // in this cache dir's store, never at a path Redis names.
    if (
      !seg ||
      typeof seg.key !== 'string' ||
      !/^[0-9a-f]{40}$/.test(seg.key) ||
      !(typeof seg.seconds === 'number' && seg.seconds > 0 && seg.seconds < 86_400)
    ) {
      throw new UserFacingError(
        `cut ${index + 1}'s segment is not named by the worker rendering the preview (an older cutroom worker?): follow preview_edit {preview_id} to its end and play preview.mp4`,
      );
    }
    const segment = rt.segments.videoOf(seg.key);
    const root = resolve(rt.cache.opts.dir);
    if (!resolve(segment).startsWith(root + sep))
      throw new UserFacingError(`cut ${index + 1}'s segment is not inside this server's cache dir`);
    if (
      !(await isFile(segment)) ||
      !(await stat(join(rt.cache.root, id)).then(
        (s) => s.isDirectory(),
        () => false,
      ))
    ) {
      throw new UserFacingError(
        `preview ${id} is being made by a worker but its cut ${index + 1} is not in this server's cache dir (${rt.cache.opts.dir}): servers and workers must share CUTROOM_CACHE_DIR, or an object store (CUTROOM_S3_BUCKET)`,
      );
    }
    const m = this.makingOf(rt, id);
    if (m.stop.signal.aborted) throw new UserFacingError(STOPPED);
    let made = m.made.get(index);
    if (!made) {
      made = m.turns
        .run(() => makeCutClip(rt.ffmpeg, segment, seg.seconds, out, PREVIEW_ENCODE, m.stop.signal))
        .then(
          () => out,
          (err: unknown) => {
            if (err instanceof RenderError) throw new UserFacingError(err.cancelled ? STOPPED : err.message);
            throw err;
          },
        );
      m.made.set(index, made);
      // A failure is not kept: the next asking tries again.
      made.catch(() => m.made.delete(index));
    }
    return made;
  }

  private makingOf(rt: MediaRuntime, id: string): Making {
    const key = `${rt.cache.root}\0${id}`;
    let m = this.previews.get(key);
    if (!m) {
      m = { turns: new Limiter(CLIPS_AT_ONCE), made: new Map(), stop: new AbortController() };
      this.previews.set(key, m);
      const mine = m;
      setTimeout(() => this.previews.get(key) === mine && this.previews.delete(key), FORGET_MS).unref();
    }
    return m;
  }

  /**
   * An object store: the worker running the job makes the clip and puts it there; it is read back into this cache dir.
   */
  private fromWorker(
    rt: MediaRuntime,
    place: string,
    jobId: string,
    id: string,
    index: number,
  ): Promise<string | undefined> {
    const local = join(rt.cache.root, CLIPS_DIR, `${id}-${clipFile(index)}`);
    const slot = `${local}\0${jobId}`;
    let pending = this.fetching.get(slot);
    if (!pending) {
      pending = (async () => {
        if (await isFile(local)) return local;
        if (!(await this.askWorker(place, jobId, id, index))) return undefined;
        await mkdir(join(rt.cache.root, CLIPS_DIR), { recursive: true });
        if (
          !(await rt
            .store!.getFile(id, clipFile(index), local)
            .catch((err: Error) =>
              Promise.reject(new UserFacingError(`cut ${index + 1}'s clip could not be read back: ${err.message}`)),
            ))
        ) {
          throw new UserFacingError(
            `cut ${index + 1}'s clip was made by the worker but is not in the object store: do the worker and this server have the same CUTROOM_S3_BUCKET and CUTROOM_S3_PREFIX?`,
          );
        }
        void this.sweep(join(rt.cache.root, CLIPS_DIR));
        return local;
      })().finally(() => this.fetching.delete(slot));
      this.fetching.set(slot, pending);
    }
    return pending;
  }

  /**
   * Asks the worker running the job for a cut's clip and waits, within waitMs, until it says it is in the store
   * (true), or that it failed (its words); false when the preview stopped being made meanwhile (finished: its
   * folder, clips included, is then read from the store as a whole).
   */
  private async askWorker(place: string, jobId: string, id: string, index: number): Promise<boolean> {
    const made = clipMadeKey(jobId, id, index);
    const unreachable = (err: Error) =>
      Promise.reject(
        new UserFacingError(
          `cut ${index + 1}'s clip could not be asked for: the job queue did not answer (${err.message})`,
        ),
      );
    if ((await within(this.conn.exists(made), 2000).catch(unreachable)) === 1) return true;
    const ask = randomBytes(12).toString('hex');
    const heard = await within(
      this.conn.publish(CLIP_CHANNEL, JSON.stringify({ job: jobId, preview: id, cut: index, ask })),
      2000,
    ).catch(unreachable);
    if (!heard)
      throw new UserFacingError(
        `no cutroom worker heard the request for cut ${index + 1}'s clip: follow preview_edit {preview_id} to its end and play preview.mp4`,
      );
    const until = Date.now() + this.waitMs;
    for (let i = 1; ; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const [[, ok], [, why]] = ((await within(
        this.conn.multi().exists(made).get(clipFailedKey(ask)).exec(),
        2000,
      ).catch(() => undefined)) ?? [
        [null, 0],
        [null, null],
      ]) as [[unknown, number], [unknown, string | null]];
      if (ok === 1) return true;
      if (why) throw new UserFacingError(why);
      // Every second: a preview that finished or failed meanwhile is no longer the worker's to answer for.
      if (i % 10 === 0 && (await within(this.conn.exists(makingKey(place, id)), 2000).catch(() => 1)) === 0)
        return false;
      if (Date.now() > until) {
        throw new UserFacingError(
          `the worker rendering preview ${id} did not make cut ${index + 1}'s clip within ${Math.round(this.waitMs / 1000)} s: ask again, or follow preview_edit {preview_id} to its end and play preview.mp4`,
        );
      }
    }
  }

  /** Clips read back more than CLIP_KEEP_MS ago go (each preview, once finished, has its own). */
  private async sweep(dir: string): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const s = await stat(join(dir, name)).catch(() => undefined);
      if (s && now - s.mtimeMs > CLIP_KEEP_MS) await rm(join(dir, name), { force: true }).catch(() => {});
    }
  }
}
