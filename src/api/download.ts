// Fetching a media file behind a signed link into a local file, for exports an editor can relink against. Under
// the media rules: http(s) only, from the host the link names (no redirect is followed), in byte ranges so that a
// dropped connection resumes where it stopped, each request with a deadline, into a temp name renamed on success.
// The service's API key is never sent: a signed link carries its own authority.
import { open, rename, rm } from 'node:fs/promises';

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Bytes per range request. */
  chunkBytes?: number;
  /** Refuse media larger than this. */
  maxBytes: number;
  /** Per request, until its headers and again for its body. */
  timeoutMs?: number;
  /** Attempts per range before giving up (a dropped connection resumes). */
  attempts?: number;
}

export class DownloadError extends Error {
  constructor(
    message: string,
    readonly noSpace = false,
  ) {
    super(message);
  }
}

const hostOf = (url: string) => new URL(url).host;
/** The link without its query: signatures stay out of messages. */
const shown = (url: string) => url.replace(/[?#].*$/, '');

export async function downloadTo(url: string, dest: string, opts: DownloadOptions): Promise<{ bytes: number; requests: number }> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new DownloadError(`${shown(url)} is not an http(s) link`);
  const { request } = await import('undici');
  const chunk = opts.chunkBytes ?? 16 * 1024 * 1024;
  const attempts = opts.attempts ?? 3;
  const tmp = `${dest}.${process.pid}.part`;
  const fh = await open(tmp, 'w');
  let written = 0;
  let total: number | undefined;
  let requests = 0;
  try {
    while (total === undefined || written < total) {
      let lastError: unknown;
      let progressed = false;
      for (let attempt = 0; attempt < attempts && !progressed; attempt++) {
        opts.signal?.throwIfAborted();
        requests++;
        try {
          const res = await request(url, {
            method: 'GET',
            headers: { range: `bytes=${written}-${written + chunk - 1}`, 'user-agent': 'cutroom' },
            signal: opts.signal,
            headersTimeout: opts.timeoutMs ?? 30_000,
            bodyTimeout: opts.timeoutMs ?? 30_000,
          });
          if (res.statusCode >= 300 && res.statusCode < 400) {
            await res.body.dump();
            throw new DownloadError(`${shown(url)} answered with a redirect (${res.statusCode}); cutroom reads a link only from ${hostOf(url)}`);
          }
          if (res.statusCode === 416 && total === undefined && written === 0) {
            await res.body.dump();
            total = 0;
            progressed = true;
            break;
          }
          if (res.statusCode !== 206 && res.statusCode !== 200) {
            await res.body.dump();
            throw new DownloadError(`${shown(url)} answered ${res.statusCode}${res.statusCode === 403 ? ' (the signed link may have expired: call again to sign it anew)' : ''}`);
          }
          if (res.statusCode === 200) {
            // No ranges: the whole file, from the start.
            if (written > 0) {
              await fh.truncate(0);
              written = 0;
            }
            const len = Number(res.headers['content-length']);
            if (Number.isFinite(len)) total = len;
          } else {
            const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
            if (!m || Number(m[1]) !== written) {
              await res.body.dump();
              throw new DownloadError(`${shown(url)} sent a range that was not asked for (${String(res.headers['content-range'] ?? 'none')})`);
            }
            if (m[3] !== '*') total = Number(m[3]);
          }
          if (total !== undefined && total > opts.maxBytes) {
            await res.body.dump();
            throw new DownloadError(`${shown(url)} is ${Math.round(total / 1e6)} MB, over the ${Math.round(opts.maxBytes / 1e6)} MB an export fetches per file`);
          }
          for await (const data of res.body as AsyncIterable<Buffer>) {
            if (written + data.length > opts.maxBytes) throw new DownloadError(`${shown(url)} is over the ${Math.round(opts.maxBytes / 1e6)} MB an export fetches per file`);
            await fh.write(data, 0, data.length, written);
            written += data.length;
            progressed = true;
          }
          if (res.statusCode === 200) total ??= written;
          progressed ||= total !== undefined && written >= total;
        } catch (err) {
          if (err instanceof DownloadError || opts.signal?.aborted) throw err;
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new DownloadError('the disk is full', true);
          lastError = err; // a dropped connection: the next attempt resumes at `written`
        }
      }
      if (!progressed) throw new DownloadError(`${shown(url)} could not be read (${(lastError as Error)?.message ?? 'no data'})`);
    }
    await fh.close();
    await rename(tmp, dest);
    return { bytes: written, requests };
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new DownloadError('the disk is full', true);
    throw err;
  }
}
