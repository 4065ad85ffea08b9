// Fetching media behind a signed link for an export, against a real HTTP server on 127.0.0.1 (the test service):
// in byte ranges, resuming where a cut transfer stopped, never following a redirect, refusing what is too big,
// and leaving no partial file behind.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadError, downloadTo, type DownloadOptions } from '../../src/api/download.js';
import { makeAll } from '../fixtures/media.mjs';
import { FakeService } from '../fixtures/service.mjs';

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
let service: FakeService;
let file: string;
const dir = mkdtempSync(join(tmpdir(), 'cutroom-download-'));

beforeAll(async () => {
  file = (makeAll() as Record<string, string>).red!;
  service = await new FakeService({ media: { red: file } }).start();
}, 60_000);
afterAll(async () => {
  await service?.stop();
});

describe('downloadTo', () => {
  it('fetches the file in ranges of the chunk size, byte for byte', async () => {
    service.mediaLog = [];
    const dest = join(dir, 'a.mp4');
    const r = await downloadTo(service.signedUrl('red'), dest, { chunkBytes: 64 * 1024, maxBytes: 1e9 });
    expect(sha(dest)).toBe(sha(file));
    const size = readFileSync(file).length;
    expect(r.requests).toBe(Math.ceil(size / 65536));
    expect(service.mediaLog.map((l: { range: string }) => l.range)).toEqual(
      Array.from({ length: r.requests }, (_, i) => `bytes=${i * 65536}-${i * 65536 + 65535}`),
    );
    // The service's API key is never sent to a media host.
    for (const l of service.mediaLog) expect(JSON.stringify(l.headers)).not.toContain(service.apiKey);
  });

  it('resumes where a transfer was cut, and keeps going after a reset connection', async () => {
    service.mediaLog = [];
    service.fail({ cutAfterBytes: 10_000 }, { times: 1, match: (r: { path: string }) => r.path.startsWith('/media/') });
    service.fail({ reset: true }, { times: 1, match: (r: { path: string }) => r.path.startsWith('/media/') });
    const dest = join(dir, 'b.mp4');
    const got = await downloadTo(service.signedUrl('red'), dest, { chunkBytes: 64 * 1024, maxBytes: 1e9 });
    expect(sha(dest)).toBe(sha(file));
    const ranges = service.mediaLog.map((l: { range: string }) => l.range);
    // The cut one, then (after a reset request the service drops before logging it) the same range resumed at
    // 10 000 bytes, then the next chunk from where that one ended.
    expect(ranges.slice(0, 3)).toEqual(['bytes=0-65535', 'bytes=10000-75535', 'bytes=75536-141071']);
    expect(got.requests).toBe(ranges.length + 1);
  });

  it('says an expired link has expired, and leaves nothing behind', async () => {
    const expired = service.signedUrl('red').replace(/Expires=\d+/, 'Expires=1000');
    const dest = join(dir, 'c.mp4');
    await expect(downloadTo(expired, dest, { maxBytes: 1e9 })).rejects.toThrow(
      /answered 403 \(the signed link may have expired/,
    );
    expect(readdirSync(dir).filter((f) => f.startsWith('c.mp4'))).toEqual([]);
  });

  it('refuses media over the size cap, and keeps no partial file', async () => {
    const dest = join(dir, 'd.mp4');
    await expect(downloadTo(service.signedUrl('red'), dest, { maxBytes: 1000 })).rejects.toThrow(DownloadError);
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith('d.mp4'))).toEqual([]);
  });

  it('never follows a redirect, and never shows the signature in its message', async () => {
    const redirector = createServer((_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    const port = (redirector.address() as { port: number }).port;
    try {
      const err = await downloadTo(`http://127.0.0.1:${port}/media/x.mp4?Signature=SECRET`, join(dir, 'e.mp4'), {
        maxBytes: 1e9,
      }).catch((e: Error) => e);
      expect(err).toBeInstanceOf(DownloadError);
      expect((err as Error).message).toMatch(
        /answered with a redirect \(302\); cutroom reads a link only from 127\.0\.0\.1/,
      );
      expect((err as Error).message).not.toContain('SECRET');
    } finally {
      redirector.close();
    }
  });
});

/** A media host that misbehaves in one way per path; `hits` counts the requests each path got. */
type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;
const BYTES = Buffer.alloc(200_000, 7);
const modes: Record<string, Handler> = {
  // Ignores Range, says the whole length, and drops the connection after 1000 bytes: every time.
  'ignores-range-and-drops': (_q, res) => {
    res.writeHead(200, { 'content-length': '5000', 'content-type': 'video/mp4' });
    res.write(BYTES.subarray(0, 1000), () => res.destroy());
  },
  // Honours ranges, but sends one byte and drops the connection.
  'one-byte-at-a-time': (req, res) => {
    const from = Number(/bytes=(\d+)-/.exec(req.headers.range ?? '')?.[1] ?? 0);
    res.writeHead(206, {
      'content-range': `bytes ${from}-${BYTES.length - 1}/${BYTES.length}`,
      'content-type': 'video/mp4',
    });
    res.write(BYTES.subarray(from, from + 1), () => res.destroy());
  },
  // An honest length, one byte every 50 ms.
  trickle: (_q, res) => {
    res.writeHead(200, { 'content-length': String(BYTES.length), 'content-type': 'video/mp4' });
    let i = 0;
    const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(BYTES.subarray(i, ++i))), 50);
  },
  html: (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Sign in</title>');
  },
  'html-as-video': (_q, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4' });
    res.end('<html><body>Expired</body></html>');
  },
  playlist: (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end('#EXTM3U\n#EXT-X-TARGETDURATION:10\nhttp://127.0.0.2/a.ts\n');
  },
  'empty-416': (_q, res) => {
    res.writeHead(416, { 'content-range': 'bytes */1000' });
    res.end();
  },
  'empty-200': (_q, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '0' });
    res.end();
  },
  'more-than-its-range': (_q, res) => {
    res.writeHead(206, { 'content-range': 'bytes 0-99/100', 'content-type': 'video/mp4' });
    res.end(BYTES.subarray(0, 5000));
  },
  'size-changes': (req, res) => {
    const from = Number(/bytes=(\d+)-/.exec(req.headers.range ?? '')?.[1] ?? 0);
    const total = from === 0 ? 40_000 : 20_000;
    res.writeHead(206, { 'content-range': `bytes ${from}-${from + 9999}/${total}`, 'content-type': 'video/mp4' });
    res.end(BYTES.subarray(from, from + 10_000));
  },
  // Ranges with no total ("*"), and 416 once past the end: a whole, valid download.
  'unknown-total': (req, res) => {
    const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '')!;
    const from = Number(m[1]);
    if (from >= 150_000) {
      res.writeHead(416);
      return res.end();
    }
    const to = Math.min(Number(m[2]), 149_999);
    res.writeHead(206, { 'content-range': `bytes ${from}-${to}/*`, 'content-type': 'video/mp4' });
    res.end(BYTES.subarray(from, to + 1));
  },
};

describe('downloadTo against a host that misbehaves', () => {
  let base: string;
  const hits: Record<string, number> = {};
  const host = createServer((req, res) => {
    const mode = req.url!.split('/')[1]!.split('?')[0]!;
    hits[mode] = (hits[mode] ?? 0) + 1;
    modes[mode]!(req, res, hits[mode]!);
  });
  beforeAll(async () => {
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    base = `http://user:pa55word@127.0.0.1:${(host.address() as { port: number }).port}`;
  });
  afterAll(() => {
    host.closeAllConnections();
    host.close();
  });
  const fetchFrom = (mode: string, opts: Partial<DownloadOptions> = {}) => {
    const dest = join(dir, `${mode}.mp4`);
    return downloadTo(`${base}/${mode}/clip.mp4?Signature=SECRET&Expires=9`, dest, {
      maxBytes: 1e9,
      chunkBytes: 64 * 1024,
      ...opts,
    }).then(
      () => ({ dest, message: '' }),
      (e: Error) => ({ dest, message: e instanceof DownloadError ? e.message : `not a DownloadError: ${e.message}` }),
    );
  };
  const refused = async (mode: string, pattern: RegExp, opts: Partial<DownloadOptions> = {}) => {
    const r = await fetchFrom(mode, opts);
    expect(r.message, mode).toMatch(pattern);
    // The link is shown without its signature or its login, and nothing is left behind.
    expect(r.message).toContain(`127.0.0.1:${new URL(base).port}/${mode}/clip.mp4`);
    expect(r.message).not.toMatch(/SECRET|pa55word|user:/);
    expect(
      readdirSync(dir).filter((f) => f.startsWith(`${mode}.mp4`)),
      mode,
    ).toEqual([]);
  };

  it('gives up on a host that never gets further, in a few requests (it looped forever)', async () => {
    await refused('ignores-range-and-drops', /3 requests in a row brought nothing new/);
    expect(hits['ignores-range-and-drops']).toBeLessThanOrEqual(4);
    await refused('one-byte-at-a-time', /3 requests in a row brought nothing new/);
    expect(hits['one-byte-at-a-time']).toBeLessThanOrEqual(4);
  });

  it('gives up on a host that trickles, however steadily', async () => {
    await refused('trickle', /sent \d+ bytes in 1 s: too slow to fetch/, { stallMs: 600, stallBytes: 1000 });
  });

  it('refuses what is not the file: a web page, a playlist, nothing, more than its range, a size that changes', async () => {
    await refused('html', /answered with a web page, not a media file: the link may have expired or need a login/);
    await refused('html-as-video', /answered with a web page/);
    await refused('playlist', /answered with a playlist \(HLS\), not a media file/);
    await refused('empty-416', /has no bytes/);
    await refused('empty-200', /has no bytes/);
    await refused('more-than-its-range', /sent more than the range it named \(bytes 0-99\/100\)/);
    await refused('size-changes', /changed size while it was fetched \(40000 bytes, then 20000\)/, {
      chunkBytes: 10_000,
    });
  });

  it('takes a file whose total is not said, to its end', async () => {
    const r = await fetchFrom('unknown-total');
    expect(r.message).toBe('');
    expect(readFileSync(r.dest).equals(BYTES.subarray(0, 150_000))).toBe(true);
  });
});
