// Following a render to its end: the render is an asset of the project whose status moves to uploaded.
import { z } from 'zod';
import type { Asset } from '../api/models.js';
import { parseServiceTimestamp, signedUrlExpiry } from '../api/models.js';
import type { Backend } from '../backend/types.js';

export const RenderStatusSchema = z.object({
  asset_id: z.string(),
  status: z.string().describe('The asset status the service reports, e.g. processing, uploaded, failed'),
  uploaded: z.boolean(),
  done: z.boolean().describe('True when the render is finished and its url plays'),
  failed: z.boolean(),
  url: z.string().optional().describe('Signed link to the rendered video, once done; it expires'),
  links_expire_at: z.string().optional(),
  reason: z.string().optional().describe('Why it failed, when the backend says'),
  // While it runs: the time since its asset was created; fraction done and time left from a backend that renders
  // itself.
  progress: z.number().min(0).max(1).optional(),
  eta_seconds: z.number().min(0).optional(),
  elapsed_seconds: z.number().min(0).optional(),
  // A local render: how loud it came out, and its true peak.
  lufs: z.number().optional(),
  true_peak_db: z.number().optional(),
});
export type RenderStatus = z.infer<typeof RenderStatusSchema>;

const DONE = new Set(['uploaded', 'completed', 'complete', 'done', 'ready', 'finished', 'success']);
const FAILED = new Set(['failed', 'error', 'errored', 'cancelled', 'canceled']);

export function statusOf(asset: Asset): RenderStatus {
  const status = (asset.status ?? (asset.uploaded ? 'uploaded' : 'unknown')).toLowerCase();
  const failed = FAILED.has(status);
  const done = !failed && (asset.uploaded === true || DONE.has(status));
  const expiry = signedUrlExpiry(asset.url);
  const reason =
    typeof (asset as Record<string, unknown>).error === 'string'
      ? ((asset as Record<string, unknown>).error as string)
      : undefined;
  // A local render says how loud it came out and its true peak (measured on what it made).
  const loudness = z
    .object({ lufs: z.number(), true_peak_db: z.number() })
    .safeParse((asset as Record<string, unknown>).loudness);
  return {
    asset_id: asset.id,
    status,
    uploaded: asset.uploaded === true,
    done,
    failed,
    ...(done && asset.url ? { url: asset.url } : {}),
    ...(done && expiry ? { links_expire_at: expiry.toISOString() } : {}),
    ...(reason ? { reason } : {}),
    ...(done && loudness.success ? { lufs: loudness.data.lufs, true_peak_db: loudness.data.true_peak_db } : {}),
  };
}

const pathOf = (url: string | null | undefined) => {
  try {
    return url ? new URL(url).pathname : undefined;
  } catch {
    return undefined;
  }
};

/** The render's asset: by id, or, when the service gave no id, by the path of the url it returned. */
export async function findRender(
  backend: Backend,
  projectId: string,
  ref: { asset_id?: string; url?: string },
  signal?: AbortSignal,
): Promise<Asset | undefined> {
  const project = await backend.getProject(projectId, { signal });
  const assets = project.assets ?? [];
  if (ref.asset_id) {
    const byId = assets.find((a) => a.id === ref.asset_id);
    if (byId) return byId;
  }
  const path = pathOf(ref.url);
  return path ? assets.find((a) => pathOf(a.url) === path) : undefined;
}

export interface WaitOptions {
  maxWaitMs: number;
  signal?: AbortSignal;
  /** After each poll that found the render still running. */
  onProgress?: (status: RenderStatus | undefined, elapsedMs: number) => void | Promise<void>;
  pollMs?: number;
}

/**
 * Waits ms, or less if the signal aborts or `wake` settles. The abort listener and the timer are removed however it
 * ends: one signal lives through every poll of a wait, and listeners left on it pile up (MaxListenersExceededWarning
 * past ten).
 */
export function pause(ms: number, signal?: AbortSignal, wake?: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    wake?.then(done, done);
  });
}

/**
 * The render's status with where it stands while it runs: the time since its asset was created (the service's
 * clock, so never below zero) and, from a backend that renders itself, the fraction done and the time left.
 */
export async function renderStatus(backend: Backend, projectId: string, asset: Asset): Promise<RenderStatus> {
  const s = statusOf(asset);
  if (s.done || s.failed) return s;
  const created = parseServiceTimestamp(asset.created_at);
  const elapsed = created ? Math.max(0, (Date.now() - created.getTime()) / 1000) : undefined;
  const p = await backend.renderProgress?.(projectId, asset.id).catch(() => undefined);
  return {
    ...s,
    ...(p ? { progress: Math.round(p.fraction * 1000) / 1000 } : {}),
    ...(p?.eta_seconds !== undefined ? { eta_seconds: Math.round(p.eta_seconds * 10) / 10 } : {}),
    ...(elapsed !== undefined ? { elapsed_seconds: Math.round(elapsed * 10) / 10 } : {}),
  };
}

/** "12 s", "4 min 5 s", "1 h 20 min". */
export function durationText(total: number): string {
  const t = Math.max(0, Math.round(total));
  if (t < 60) return `${t} s`;
  if (t < 3600) return `${Math.floor(t / 60)} min${t % 60 ? ` ${t % 60} s` : ''}`;
  return `${Math.floor(t / 3600)} h${Math.floor((t % 3600) / 60) ? ` ${Math.floor((t % 3600) / 60)} min` : ''}`;
}

const since = (s: RenderStatus) =>
  s.elapsed_seconds !== undefined ? `${durationText(s.elapsed_seconds)} since it started` : undefined;
const list = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(', ');

/**
 * Where a render still running stands, in a few words (a progress notification): "rendering 42%, about 12 s left"
 * from a backend that reports progress; "processing, 1 min 5 s since it started" from a service (its own status).
 */
export function whereItStands(s: RenderStatus): string {
  if (s.progress === undefined) return list(s.status, since(s));
  const pct = `rendering ${Math.floor(s.progress * 100)}%`;
  if (s.eta_seconds === undefined) return list(pct, since(s));
  return list(pct, s.eta_seconds < 1 ? 'finishing' : `about ${durationText(s.eta_seconds)} left`);
}

/** The same for a result's text, with what is not known and why. */
export function runningText(s: RenderStatus, backend: 'local' | 'remote'): string {
  if (s.progress !== undefined)
    return s.eta_seconds === undefined
      ? `${whereItStands(s)}; too early to tell the time left`
      : `${whereItStands(s)} (${since(s) ?? 'just started'})`;
  if (backend === 'remote')
    return `the service says "${s.status}"${since(s) ? `, ${since(s)}` : ''}; it reports no progress`;
  return `${whereItStands(s)}; waiting for ffmpeg to start`;
}

/**
 * When to look at a running render again, seconds: when it should be done (2 s to a minute) once there is an
 * estimate; soon while a local render warms up; else less often the longer it has run (5 to 30 s).
 */
export function checkAgainSeconds(s: RenderStatus): number {
  if (s.eta_seconds !== undefined) return Math.min(60, Math.max(2, Math.ceil(s.eta_seconds)));
  if (s.progress !== undefined) return 3;
  return Math.min(30, Math.max(5, Math.round((s.elapsed_seconds ?? 0) / 3)));
}

/** Polls until the render is done or failed, the wait is over, or the caller cancels. */
export async function waitForRender(
  backend: Backend,
  projectId: string,
  ref: { asset_id?: string; url?: string },
  opts: WaitOptions,
): Promise<RenderStatus | undefined> {
  const started = Date.now();
  let interval = opts.pollMs ?? 1000;
  let last: RenderStatus | undefined;
  // A render this process runs says when it ends: the poll that follows sees it done, however long the interval
  // has grown (up to 5 s: a 25 s render was answered 4 s late).
  let settled = ref.asset_id ? backend.renderSettled?.(ref.asset_id) : undefined;
  for (;;) {
    if (opts.signal?.aborted) return last;
    const asset = await findRender(backend, projectId, ref, opts.signal);
    if (asset) last = await renderStatus(backend, projectId, asset);
    if (last?.done || last?.failed) return last;
    const elapsed = Date.now() - started;
    await opts.onProgress?.(last, elapsed);
    const left = opts.maxWaitMs - elapsed;
    if (left <= 0) return last;
    let ended = false;
    const wake = settled?.then(() => void (ended = true));
    await pause(Math.min(interval, left), opts.signal, wake);
    // Heard once: a status not yet done after it (a record written late) is polled for as before.
    if (ended) settled = undefined;
    // A render that reports its progress is read from this machine: polled at the first pace, for steady news.
    interval = last?.progress !== undefined ? (opts.pollMs ?? 1000) : Math.min(interval * 1.5, 5000);
  }
}
