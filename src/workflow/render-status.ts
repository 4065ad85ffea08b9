// Following a render to its end: the render is an asset of the project whose status moves to uploaded.
import { z } from 'zod';
import type { Asset } from '../api/models.js';
import { signedUrlExpiry } from '../api/models.js';
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
});
export type RenderStatus = z.infer<typeof RenderStatusSchema>;

const DONE = new Set(['uploaded', 'completed', 'complete', 'done', 'ready', 'finished', 'success']);
const FAILED = new Set(['failed', 'error', 'errored', 'cancelled', 'canceled']);

export function statusOf(asset: Asset): RenderStatus {
  const status = (asset.status ?? (asset.uploaded ? 'uploaded' : 'unknown')).toLowerCase();
  const failed = FAILED.has(status);
  const done = !failed && (asset.uploaded === true || DONE.has(status));
  const expiry = signedUrlExpiry(asset.url);
  const reason = typeof (asset as Record<string, unknown>).error === 'string' ? ((asset as Record<string, unknown>).error as string) : undefined;
  return {
    asset_id: asset.id,
    status,
    uploaded: asset.uploaded === true,
    done,
    failed,
    ...(done && asset.url ? { url: asset.url } : {}),
    ...(done && expiry ? { links_expire_at: expiry.toISOString() } : {}),
    ...(reason ? { reason } : {}),
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
export async function findRender(backend: Backend, projectId: string, ref: { asset_id?: string; url?: string }, signal?: AbortSignal): Promise<Asset | undefined> {
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
  onProgress?: (elapsedMs: number, status: string) => void | Promise<void>;
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

/** Polls until the render is done or failed, the wait is over, or the caller cancels. */
export async function waitForRender(backend: Backend, projectId: string, ref: { asset_id?: string; url?: string }, opts: WaitOptions): Promise<RenderStatus | undefined> {
  const started = Date.now();
  let interval = opts.pollMs ?? 1000;
  let last: RenderStatus | undefined;
  // A render this process runs says when it ends: the poll that follows sees it done, however long the interval
  // has grown (up to 5 s: a 25 s render was answered 4 s late).
  let settled = ref.asset_id ? backend.renderSettled?.(ref.asset_id) : undefined;
  for (;;) {
    if (opts.signal?.aborted) return last;
    const asset = await findRender(backend, projectId, ref, opts.signal);
    if (asset) last = statusOf(asset);
    if (last?.done || last?.failed) return last;
    const elapsed = Date.now() - started;
    await opts.onProgress?.(elapsed, last?.status ?? 'not listed yet');
    const left = opts.maxWaitMs - elapsed;
    if (left <= 0) return last;
    let ended = false;
    const wake = settled?.then(() => void (ended = true));
    await pause(Math.min(interval, left), opts.signal, wake);
    // Heard once: a status not yet done after it (a record written late) is polled for as before.
    if (ended) settled = undefined;
    interval = Math.min(interval * 1.5, 5000);
  }
}
