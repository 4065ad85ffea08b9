// The media room with the real ffprobe on generated media, over files and over HTTP.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceFromUrl } from '../../src/media/input.js';
import { locateMediaTools } from '../../src/media/locate.js';
import { Limiter, MediaProber, factsFromProbe, probeMedia } from '../../src/media/probe.js';
import { runProcess } from '../../src/media/process.js';
import { makeAll } from '../fixtures/media.mjs';

let media: Record<string, string>;
let ffprobe: string;
let server: Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  media = makeAll();
  const tools = await locateMediaTools({ searchPath: process.env.PATH });
  if (!tools.ffprobe) throw new Error('ffprobe is needed for these tests (.ci/run installs it)');
  ffprobe = tools.ffprobe;
  // An HTTP server with one trap: /trap.mp4 answers with an HLS playlist pointing at other URLs.
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url?.startsWith('/page.mp4')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Expired</title>');
      return;
    }
    if (req.url?.startsWith('/trap.mp4')) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(`#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n${base}/elsewhere/segment0.ts\n#EXT-X-ENDLIST\n`);
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('probe', () => {
  it('measures a video: duration, streams, size, fps', async () => {
    const f = await probeMedia(ffprobe, { kind: 'file', path: media.red! }, { timeoutMs: 10_000 });
    expect(f).toMatchObject({
      durationMs: 8000,
      hasVideo: true,
      hasAudio: true,
      width: 320,
      height: 180,
      fps: 25,
      isImage: false,
    });
  });

  it('tells audio and images apart from video', async () => {
    const a = await probeMedia(ffprobe, { kind: 'file', path: media.voice! }, { timeoutMs: 10_000 });
    expect(a).toMatchObject({ hasVideo: false, hasAudio: true, isImage: false });
    expect(Math.abs(a.durationMs! - 5000)).toBeLessThan(50);
    const i = await probeMedia(ffprobe, { kind: 'file', path: media.still! }, { timeoutMs: 10_000 });
    expect(i).toMatchObject({ hasVideo: true, hasAudio: false, isImage: true });
  });

  it('refuses an .mp4 link that serves a playlist, without fetching anything else', async () => {
    const src = sourceFromUrl(`${base}/trap.mp4?Signature=x`, { allowFile: false });
    if ('error' in src) throw new Error(src.error);
    await expect(probeMedia(ffprobe, src, { timeoutMs: 10_000 })).rejects.toThrow(/ffprobe cannot read it/);
    expect(hits.some((h) => h.startsWith('/elsewhere'))).toBe(false);
  });

  it("says why it cannot read a link without the link's signature (ffprobe quotes it)", async () => {
    const src = sourceFromUrl(`${base}/page.mp4?X-Amz-Signature=SECRETSIG&Expires=99`, { allowFile: false });
    if ('error' in src) throw new Error(src.error);
    const err = (await probeMedia(ffprobe, src, { timeoutMs: 10_000 }).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/ffprobe cannot read it \(.*page\.mp4/);
    expect(err.message).not.toMatch(/SECRETSIG|Expires=99/);
  });

  it('refuses URLs of other schemes before anything runs', () => {
    expect(sourceFromUrl('ftp://x/y.mp4', { allowFile: true })).toEqual({
      error: 'the asset url uses ftp:, which cutroom does not read',
    });
    expect(sourceFromUrl('concat:a.mp4|b.mp4', { allowFile: true })).toMatchObject({ error: expect.any(String) });
    expect(sourceFromUrl(undefined, { allowFile: true })).toEqual({ error: 'the asset has no url' });
  });

  it('reads file: links only from the local backend, never from a service', () => {
    expect(sourceFromUrl('file:///etc/passwd', { allowFile: false })).toEqual({
      error: 'the asset url is a file: link, which cutroom reads only from its local backend, never from a service',
    });
    expect(sourceFromUrl('file:///data/m.mp4', { allowFile: true })).toEqual({ kind: 'file', path: '/data/m.mp4' });
  });

  it('applies rotation and sample aspect to the display size, and ignores cover art', () => {
    expect(
      factsFromProbe({
        streams: [{ codec_type: 'video', width: 1920, height: 1080, side_data_list: [{ rotation: -90 }] }],
        format: { duration: '3' },
      }),
    ).toMatchObject({ width: 1080, height: 1920 });
    expect(
      factsFromProbe({
        streams: [{ codec_type: 'video', width: 720, height: 576, sample_aspect_ratio: '16:11' }],
        format: { duration: '3' },
      }),
    ).toMatchObject({ width: 1047, height: 576 });
    expect(
      factsFromProbe({
        streams: [
          { codec_type: 'audio' },
          { codec_type: 'video', codec_name: 'mjpeg', disposition: { attached_pic: 1 } },
        ],
        format: { duration: '30', format_name: 'mp3' },
      }),
    ).toMatchObject({ hasVideo: false, hasAudio: true });
  });

  it('reports a constant frame rate as a fraction, the first frame on the file clock, and the channels', () => {
    const f = factsFromProbe({
      streams: [
        {
          codec_type: 'video',
          width: 320,
          height: 240,
          avg_frame_rate: '30000/1001',
          r_frame_rate: '30000/1001',
          start_time: '1.5',
          time_base: '1/1000',
        },
        { codec_type: 'audio', channels: 6, start_time: '1.4' },
      ],
      format: { duration: '3', start_time: '1.4' },
    });
    expect(f).toMatchObject({
      frameRate: { num: 30000, den: 1001 },
      videoTimeBase: { num: 1, den: 1000 },
      audioChannels: 6,
    });
    expect(f.videoStartSec).toBeCloseTo(0.1, 9);
    // Variable rate: the average is not the base rate, so no frame grid is assumed.
    expect(
      factsFromProbe({
        streams: [{ codec_type: 'video', width: 2, height: 2, avg_frame_rate: '2997/100', r_frame_rate: '30/1' }],
        format: { duration: '3' },
      }).frameRate,
    ).toBeUndefined();
  });

  it('caches per asset id and keeps failures out of the cache', async () => {
    const prober = new MediaProber(ffprobe, { concurrency: 2 });
    const a = prober.probe('asset-1', { kind: 'file', path: media.blue! });
    expect(prober.probe('asset-1', { kind: 'file', path: media.red! })).toBe(a);
    expect((await a).durationMs).toBe(6000);
    await expect(prober.probe('asset-2', { kind: 'file', path: '/nonexistent.mp4' })).rejects.toThrow();
    expect((await prober.probe('asset-2', { kind: 'file', path: media.red! })).durationMs).toBe(8000);
  });
});

describe('processes', () => {
  it('kills a process at its time limit', async () => {
    const started = Date.now();
    const r = await runProcess(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000); // not the child's own forever
  });

  it('kills a process on cancellation, even one that ignores SIGTERM', async () => {
    const ac = new AbortController();
    const started = Date.now();
    // Cancel only once the child has set its SIGTERM handler (a loaded machine may take a while to start node).
    const r = await runProcess(
      process.execPath,
      ['-e', 'process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000)'],
      {
        timeoutMs: 30_000,
        signal: ac.signal,
        onStdout: (c) => c.includes('ready') && ac.abort(),
      },
    );
    expect(r.cancelled).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    // Well before the 30 s time limit: the kill came from the cancellation.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('never lets a child write to our stdout, and reports a missing binary', async () => {
    const r = await runProcess(process.execPath, ['-e', 'console.log("to stdout"); console.error("to stderr")'], {
      timeoutMs: 5000,
    });
    expect(r.stdout.toString()).toBe('to stdout\n');
    expect(r.stderr).toBe('to stderr\n');
    const missing = await runProcess('/nonexistent/ffmpeg', [], { timeoutMs: 5000 });
    expect(missing.code).toBeNull();
    expect(missing.stderr).toMatch(/ENOENT/);
  });
});

describe('locate', () => {
  it('prefers an explicit path, and reports one that is not there', async () => {
    expect(await locateMediaTools({ ffprobePath: ffprobe, searchPath: '' })).toMatchObject({ ffprobe });
    expect(
      await locateMediaTools({
        ffprobePath: '/nonexistent/ffprobe',
        ffmpegPath: '/nonexistent/ffmpeg',
        searchPath: process.env.PATH,
      }),
    ).toEqual({});
    expect(await locateMediaTools({ searchPath: '/nonexistent' })).toEqual({});
  });
});

describe('Limiter', () => {
  it('holds each caller to their share, and all callers to the total', async () => {
    const total = new Limiter(3);
    const callers = [new Limiter(2, total), new Limiter(2, total), new Limiter(2, total)];
    let running = 0;
    let peak = 0;
    const perCaller = [0, 0, 0];
    const callerPeak = [0, 0, 0];
    // Each task waits for a release the test gives in turn, so that the peaks are counted, not timed.
    const releases: (() => void)[] = [];
    const task = (i: number) => async () => {
      running++;
      perCaller[i]!++;
      peak = Math.max(peak, running);
      callerPeak[i] = Math.max(callerPeak[i]!, perCaller[i]!);
      await new Promise<void>((r) => releases.push(r));
      running--;
      perCaller[i]!--;
    };
    const all = callers.flatMap((l, i) => Array.from({ length: 4 }, () => l.run(task(i))));
    while (releases.length || running) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    await Promise.all(all);
    expect(peak).toBe(3);
    expect(Math.max(...callerPeak)).toBe(2);
    expect(callers[0]!.limit).toBe(2);
    expect(new Limiter(5, total).limit).toBe(3);
  });
});

describe('a start timecode (issue 21, item 1)', () => {
  const video = {
    codec_type: 'video',
    width: 1920,
    height: 1080,
    avg_frame_rate: '30000/1001',
    r_frame_rate: '30000/1001',
  };
  it('is read from the video stream, a timecode track or the format, in that order, and only when it is one', () => {
    expect(factsFromProbe({ streams: [{ ...video, tags: { timecode: '01:00:10;00' } }] }).timecode).toBe('01:00:10;00');
    expect(
      factsFromProbe({ streams: [video, { codec_type: 'data', tags: { timecode: '10:00:00:00' } }] }).timecode,
    ).toBe('10:00:00:00');
    expect(factsFromProbe({ streams: [video], format: { tags: { timecode: '00:59:58:12' } } }).timecode).toBe(
      '00:59:58:12',
    );
    expect(factsFromProbe({ streams: [{ ...video, tags: { timecode: 'soon' } }] }).timecode).toBeUndefined();
    expect(factsFromProbe({ streams: [video] }).timecode).toBeUndefined();
  });
});
