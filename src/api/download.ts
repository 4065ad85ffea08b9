// Fetching a media file behind a signed link into a local file, for exports an editor can relink against. Under
// the media rules: http(s) only, from the host the link names (no redirect is followed), in byte ranges so that a
// dropped connection resumes where it stopped, into a temp name renamed on success. The service's API key is never
// sent: a signed link carries its own authority. A host that stalls, trickles, keeps dropping the connection before
// anything new arrives, or answers with something that is not the file (a web page, a playlist, nothing, sizes
// that disagree) stops the download with a message that says so.
import { open, rename, rm } from 'node:fs/promises';

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Bytes per range request. */
  chunkBytes?: number;
  /** Refuse media larger than this. */
  maxBytes: number;
  /** Per request: until its headers, and between two pieces of its body. */
  timeoutMs?: number;
  /** Requests in a row that bring nothing new (under `minNewBytes`) before giving up. */
  attempts?: number;
  /** What an attempt must add beyond the furthest byte yet for a dropped connection not to count against it. */
  minNewBytes?: number;
  /** A response must bring at least `stallBytes` in every `stallMs`, or it is given up as stalled. */
  stallMs?: number;
  stallBytes?: number;
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
/** The link without its query, fragment or login: signatures and passwords stay out of messages. */
export function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url.replace(/[?#].*$/, '').replace(/\/\/[^/@]*@/, '//');
  }
}

/** What a first answer's type or first bytes say it is, when that is not a media file. */
function notMedia(contentType: string, head: Buffer): string | undefined {
  const type = contentType.toLowerCase();
  const text = head.subarray(0, 64).toString('latin1').trimStart().toLowerCase();
  if (type.includes('mpegurl') || text.startsWith('#extm3u')) return 'a playlist (HLS), not a media file';
  if (
    type.startsWith('text/html') ||
    type.includes('xhtml') ||
    text.startsWith('<!doctype html') ||
    text.startsWith('<html')
  ) {
    return 'a web page, not a media file: the link may have expired or need a login';
  }
  return undefined;
}

export async function downloadTo(
  url: string,
  dest: string,
  opts: DownloadOptions,
): Promise<{ bytes: number; requests: number }> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new DownloadError(`${shown(url)} is not an http(s) link`);
  const { request } = await import('undici');
  const chunk = opts.chunkBytes ?? 16 * 1024 * 1024;
  const attempts = opts.attempts ?? 3;
  const minNew = opts.minNewBytes ?? 64 * 1024;
  const stallMs = opts.stallMs ?? 30_000;
  const stallBytes = opts.stallBytes ?? 64 * 1024;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const tmp = `${dest}.${process.pid}.part`;
  const fh = await open(tmp, 'w');
  const fail = (why: string) => new DownloadError(`${shown(url)} ${why}`);
  let written = 0;
  /** The furthest byte ever written: a host that restarts from 0 each time does not count as progress. */
  let furthest = 0;
  let total: number | undefined;
  let requests = 0;
  let fruitless = 0;
  let lastError: unknown;
  try {
    while (total === undefined || written < total) {
      if (fruitless >= attempts)
        throw fail(
          `could not be read: ${attempts} requests in a row brought nothing new (${(lastError as Error)?.message ?? 'no data'})`,
        );
      opts.signal?.throwIfAborted();
      requests++;
      const before = furthest;
      try {
        const res = await request(url, {
          method: 'GET',
          headers: { range: `bytes=${written}-${written + chunk - 1}`, 'user-agent': 'cutroom' },
          signal: opts.signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        const status = res.statusCode;
        if (status >= 300 && status < 400) {
          await res.body.dump();
          throw fail(`answered with a redirect (${status}); cutroom reads a link only from ${hostOf(url)}`);
        }
        if (status === 416) {
          await res.body.dump();
          // Past the end of a file whose size was not said: it is all here.
          if (written > 0 && total === undefined) {
            total = written;
            break;
          }
          throw fail(
            written === 0 ? 'has no bytes (416 for its first byte)' : `answered 416 at byte ${written} of ${total}`,
          );
        }
        if (status !== 206 && status !== 200) {
          await res.body.dump();
          throw fail(
            `answered ${status}${status === 403 ? ' (the signed link may have expired: call again to sign it anew)' : ''}`,
          );
        }
        let said: number | undefined;
        let span = Infinity;
        if (status === 200) {
          // No ranges: the whole file, from the start.
          if (written > 0) {
            await fh.truncate(0);
            written = 0;
          }
          const len = Number(res.headers['content-length']);
          if (res.headers['content-length'] !== undefined && Number.isFinite(len)) said = len;
        } else {
          const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
          if (!m || Number(m[1]) !== written || Number(m[2]) < Number(m[1])) {
            await res.body.dump();
            throw fail(`sent a range that was not asked for (${String(res.headers['content-range'] ?? 'none')})`);
          }
          span = Number(m[2]) - Number(m[1]) + 1;
          if (m[3] !== '*') said = Number(m[3]);
        }
        if (said !== undefined) {
          if (total !== undefined && said !== total) {
            await res.body.dump();
            throw fail(`changed size while it was fetched (${total} bytes, then ${said})`);
          }
          total = said;
        }
        if (total !== undefined && total > opts.maxBytes) {
          await res.body.dump();
          throw fail(
            `is ${Math.round(total / 1e6)} MB, over the ${Math.round(opts.maxBytes / 1e6)} MB an export fetches per file`,
          );
        }
        let got = 0;
        let windowStart = Date.now();
        let windowBytes = 0;
        for await (const data of res.body as AsyncIterable<Buffer>) {
          if (written === 0 && got === 0) {
            const what = notMedia(String(res.headers['content-type'] ?? ''), data);
            if (what) throw fail(`answered with ${what}`);
          }
          got += data.length;
          if (got > span) throw fail(`sent more than the range it named (${String(res.headers['content-range'])})`);
          if (written + data.length > opts.maxBytes)
            throw fail(`is over the ${Math.round(opts.maxBytes / 1e6)} MB an export fetches per file`);
          await fh.write(data, 0, data.length, written);
          written += data.length;
          furthest = Math.max(furthest, written);
          windowBytes += data.length;
          if (Date.now() - windowStart >= stallMs) {
            if (windowBytes < stallBytes)
              throw fail(`sent ${windowBytes} bytes in ${Math.round(stallMs / 1000)} s: too slow to fetch`);
            windowStart = Date.now();
            windowBytes = 0;
          }
        }
        if (status === 200 && total === undefined) total = written;
        // A range that came whole, or the end of the file, is progress; so is a dropped one that brought enough.
        const complete = got === span || (total !== undefined && written >= total);
        if (!complete && furthest - before < minNew) {
          fruitless++;
          lastError = new Error(`the answer ended after ${got} bytes`);
        } else fruitless = 0;
      } catch (err) {
        if (err instanceof DownloadError || opts.signal?.aborted) throw err;
        if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new DownloadError('the disk is full', true);
        // A dropped connection: the next request resumes at `written`; it counts against the host only if this one
        // brought little that was new.
        lastError = err;
        if (furthest - before < minNew) fruitless++;
        else fruitless = 0;
      }
    }
    if (written === 0) throw fail('has no bytes');
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
