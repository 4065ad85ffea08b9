// Fetching media behind a signed link for an export, against a real HTTP server on 127.0.0.1 (the test service):
// in byte ranges, resuming where a cut transfer stopped, never following a redirect, refusing what is too big,
// and leaving no partial file behind.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadError, downloadTo } from '../../src/api/download.js';
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
    expect(service.mediaLog.map((l: { range: string }) => l.range)).toEqual(Array.from({ length: r.requests }, (_, i) => `bytes=${i * 65536}-${i * 65536 + 65535}`));
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
    await expect(downloadTo(expired, dest, { maxBytes: 1e9 })).rejects.toThrow(/answered 403 \(the signed link may have expired/);
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
      const err = await downloadTo(`http://127.0.0.1:${port}/media/x.mp4?Signature=SECRET`, join(dir, 'e.mp4'), { maxBytes: 1e9 }).catch((e: Error) => e);
      expect(err).toBeInstanceOf(DownloadError);
      expect((err as Error).message).toMatch(/answered with a redirect \(302\); cutroom reads a link only from 127\.0\.0\.1/);
      expect((err as Error).message).not.toContain('SECRET');
    } finally {
      redirector.close();
    }
  });
});
