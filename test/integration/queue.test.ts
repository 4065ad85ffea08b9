// The job queue (issue 35): with CUTROOM_QUEUE_URL, previews run as BullMQ jobs on `cutroom worker`s, and the
// caller sees what it sees in-process. A real redis-server on a free loopback port, real workers as child processes,
// the media served by the test service (the voiceover slowed when a preview must stay running).
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { Queue } from 'bullmq';
import { makeMedium } from '../fixtures/media.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { commandOf, pidsMatching } from '../helpers/processes.js';
import type { MediaName } from '../helpers/media-project.js';
import { queueSuite, type WorkerProcess } from '../helpers/queue.js';
import { connectHttp, startHttpServer } from '../helpers/http-server.js';
import { makeSpeechMedia } from '../helpers/speech-media.js';

const suite = queueSuite();

const timeline = (end = 3) => ({
  project_id: suite.projectId,
  resolution: '640x360',
  fps: 25,
  clips: [
    { asset_id: suite.ids.red, start: 1, end },
    { asset_id: suite.ids.blue, start: 0, end: 2, volume: 0 },
    { asset_id: suite.ids.black, start: 0, end: 1.5 },
  ],
  overlays: [{ asset_id: suite.ids.voice, at: 3, until: 4 }],
});
/** The voiceover served slowly: the preview's sound waits for it, so the preview stays running that long. */
const slowVoice = (ms: number) =>
  suite.service.fail(
    { delayMs: ms },
    { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
  );
/**
 * The voiceover trickling until the gate returned opens (or suite.service.reset()): the preview stays running until
 * the test says, however slow the machine (a fixed delay could end first). The test process must not block meanwhile:
 * the test service in it sends the bytes.
 */
const heldVoice = () => {
  const gate = suite.service.gate();
  suite.service.fail(
    { trickle: gate },
    { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
  );
  return gate;
};

type Called = Awaited<ReturnType<Client['callTool']>>;
const structured = (r: Called) =>
  r.structuredContent as Record<string, unknown> & { status?: string; preview_id: string };

async function server(cacheDir: string, queue = true, extra: Record<string, string> = {}): Promise<Spawned> {
  const s = await spawnServer({
    VJ_API_KEY: suite.service.apiKey,
    VJ_API_URL: suite.service.url,
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_LOG_LEVEL: 'debug',
    ...(queue ? { CUTROOM_QUEUE_URL: suite.redis.url } : {}),
    ...extra,
  });
  suite.defer(() => s.close());
  return s;
}
async function worker(cacheDir: string, extra: Record<string, string> = {}): Promise<WorkerProcess> {
  return suite.worker({
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_LOG_LEVEL: 'debug',
    CUTROOM_WORKER_CONCURRENCY: '2',
    CUTROOM_WORKER_LOCK_MS: '3000',
    ...extra,
  });
}
/**
 * Every ffmpeg still working for this cache dir or reading this file's voiceover (other files' services serve one too).
 */
const ffmpegOf = (cacheDir: string) =>
  [...new Set([...pidsMatching(cacheDir), ...pidsMatching(`${suite.service.url}/media/voice-`)])].filter((p) =>
    /ffmpeg/.test(commandOf(p)),
  );
/** The jobs the workers said they started: "job <id>: preview <preview id>". */
const started = (w: WorkerProcess) =>
  [...w.stderr().matchAll(/job (preview-[0-9a-f]+): started preview (\S+)/g)].map((m) => ({
    job: m[1]!,
    preview: m[2]!,
  }));

async function untilDone(client: Client, r: Called): Promise<Called> {
  for (let i = 0; i < 20 && !r.isError && structured(r)?.status === 'rendering'; i++) {
    r = await client.callTool(
      { name: 'preview_edit', arguments: { preview_id: structured(r).preview_id } },
      { timeout: 120_000 },
    );
  }
  if (r.isError) throw new Error(textOf(r));
  return r;
}

/**
 * A first preview of the same media, so that the server has probed it (a slowed voiceover then slows the worker only).
 */
async function primed(s: Spawned): Promise<void> {
  await untilDone(
    s.client,
    await s.client.callTool({ name: 'preview_edit', arguments: timeline(1.9) }, { timeout: 120_000 }),
  );
}

/** A result without what names where it was made (its id and paths). */
function comparable(r: Called): unknown {
  const { preview_id: _i, path: _p, sheet_path: _s, ...rest } = structured(r);
  const content = (r.content as { type: string; text?: string; data?: string }[]).map((c) =>
    c.type === 'text'
      ? { ...c, text: c.text!.replace(/\/\S+preview\.mp4/g, 'PATH') }
      : c.type === 'resource_link'
        ? { type: c.type }
        : c,
  );
  return { rest, content };
}

describe('the job queue', () => {
  it('a preview through the queue is the one made in-process', async () => {
    const local = await server(mkdtempSync(join(tmpdir(), 'cutroom-q-local-')), false);
    const inProcess = await untilDone(
      local.client,
      await local.client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 }),
    );
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-q-'));
    const w = await worker(cacheDir);
    const s = await server(cacheDir, true, { CUTROOM_QUEUE_LOG_MS: '1000' });
    const queued = await untilDone(
      s.client,
      await s.client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 }),
    );
    expect(structured(queued).status).toBe('done');
    // Made by the worker (the server only queued it), in the shared cache dir, with the same result.
    expect(started(w)).toHaveLength(1);
    expect(s.stderr()).toMatch(/preview job preview-[0-9a-f]+: queued/);
    // The queue's depth, logged at an interval (CUTROOM_QUEUE_LOG_MS).
    await expect.poll(() => s.stderr(), { timeout: 10_000 }).toMatch(/job queue: \d+ waiting.*\d+ running, \d+ failed/);
    expect(existsSync(structured(queued).path as string)).toBe(true);
    expect(comparable(queued)).toEqual(comparable(inProcess));
    expect(w.stderr()).not.toMatch(/\[stdout/);
  });

  it('an inspection through the queue is the one made in-process', async () => {
    const local = await server(mkdtempSync(join(tmpdir(), 'cutroom-q-local-')), false);
    const ask = (s: Spawned) =>
      s.client.callTool(
        { name: 'inspect_asset', arguments: { project_id: suite.projectId, asset_id: suite.ids.red } },
        { timeout: 120_000 },
      );
    const inProcess = await ask(local);
    expect(inProcess.isError, textOf(inProcess)).toBeFalsy();
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-q-'));
    const w = await worker(cacheDir);
    const s = await server(cacheDir);
    const progress: string[] = [];
    const queued = await s.client.callTool(
      { name: 'inspect_asset', arguments: { project_id: suite.projectId, asset_id: suite.ids.red } },
      { timeout: 120_000, onprogress: (p) => void progress.push(p.message ?? '') },
    );
    expect(queued.isError, textOf(queued)).toBeFalsy();
    expect(w.stderr()).toMatch(/job inspect-[0-9a-f]+: started the inspection/);
    expect(progress.length).toBeGreaterThan(0);
    expect(queued.structuredContent).toEqual(inProcess.structuredContent);
    expect(queued.content).toEqual(inProcess.content);
  });

  it('a transcription through the queue hears what it hears in-process', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cutroom-q-speech-'));
    const allowed = join(root, 'allowed');
    mkdirSync(allowed, { recursive: true });
    const media = makeSpeechMedia(allowed);
    const hear = async (s: Spawned) => {
      const call = (name: string, args: Record<string, unknown>) =>
        s.client.callTool({ name, arguments: args }, { timeout: 180_000 });
      const project = (await call('create_project', { name: 'talk', description: 'speech' })).structuredContent as {
        project: { id: string };
      };
      const asset = (await call('import_media', { project_id: project.project.id, path: media.wav }))
        .structuredContent as { asset: { id: string } };
      const r = await call('transcribe_asset', { project_id: project.project.id, asset_id: asset.asset.id });
      expect(r.isError, textOf(r)).toBeFalsy();
      const { asset_id: _a, ...rest } = r.structuredContent as Record<string, unknown>;
      return rest;
    };
    const localEnv = (name: string) => ({
      CUTROOM_DATA_DIR: join(root, `data-${name}`),
      CUTROOM_ALLOWED_DIRS: allowed,
      CUTROOM_CACHE_DIR: join(root, `cache-${name}`),
      CUTROOM_LOG_LEVEL: 'debug',
    });
    const alone = await spawnServer(localEnv('alone'));
    suite.defer(() => alone.close());
    const inProcess = await hear(alone);
    const w = await worker(join(root, 'cache-queued'));
    const queued = await spawnServer({ ...localEnv('queued'), CUTROOM_QUEUE_URL: suite.redis.url });
    suite.defer(() => queued.close());
    expect(await hear(queued)).toEqual(inProcess);
    expect(w.stderr()).toMatch(/job transcribe-[0-9a-f]+: started the transcription/);
  });

  it('a local render through the queue is the one made in-process', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cutroom-q-render-'));
    const allowed = join(root, 'allowed');
    mkdirSync(allowed, { recursive: true });
    const red = makeMedium('red', undefined, allowed);
    const blue = makeMedium('blue', undefined, allowed);
    const render = async (s: Spawned) => {
      const call = (name: string, args: Record<string, unknown>) =>
        s.client.callTool({ name, arguments: args }, { timeout: 180_000 });
      const project = (await call('create_project', { name: 'cut', description: 'render' })).structuredContent as {
        project: { id: string };
      };
      const id = async (path: string) =>
        (
          (await call('import_media', { project_id: project.project.id, path })).structuredContent as {
            asset: { id: string };
          }
        ).asset.id;
      const [r, b] = [await id(red), await id(blue)];
      const made = await call('render_edit', {
        project_id: project.project.id,
        resolution: '320x180',
        clips: [
          { asset_id: r, start: 0, end: 1 },
          { asset_id: b, start: 0.5, end: 1.5 },
        ],
        wait: true,
      });
      expect(made.isError, textOf(made)).toBeFalsy();
      const out = (made.structuredContent as { render: { done: boolean; url: string } }).render;
      expect(out.done).toBe(true);
      return readFileSync(fileURLToPath(out.url));
    };
    const localEnv = (name: string) => ({
      CUTROOM_DATA_DIR: join(root, `data-${name}`),
      CUTROOM_ALLOWED_DIRS: allowed,
      CUTROOM_CACHE_DIR: join(root, `cache-${name}`),
      CUTROOM_LOG_LEVEL: 'debug',
    });
    const alone = await spawnServer(localEnv('alone'));
    suite.defer(() => alone.close());
    const inProcess = await render(alone);
    const w = await worker(join(root, 'cache-queued'), { CUTROOM_DATA_DIR: join(root, 'data-queued') });
    const queued = await spawnServer({ ...localEnv('queued'), CUTROOM_QUEUE_URL: suite.redis.url });
    suite.defer(() => queued.close());
    const file = await render(queued);
    expect(w.stderr()).toMatch(/job render-[0-9a-f]+: started the render/);
    expect(createHash('sha256').update(file).digest('hex')).toBe(createHash('sha256').update(inProcess).digest('hex'));
  });

  it('the same edit asked by two servers at once is one job, made once', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-q-'));
    const w = await worker(cacheDir);
    const [a, b] = [await server(cacheDir), await server(cacheDir)];
    slowVoice(3000);
    const edit = timeline(2.8);
    const [ra, rb] = await Promise.all(
      [a, b].map(async (s) =>
        untilDone(s.client, await s.client.callTool({ name: 'preview_edit', arguments: edit }, { timeout: 120_000 })),
      ),
    );
    expect(structured(ra!).status).toBe('done');
    expect(structured(ra!).preview_id).toBe(structured(rb!).preview_id);
    const jobs = started(w);
    expect(jobs).toHaveLength(1);
    // One job in the queue for both.
    const q = new Queue('media', { connection: { url: suite.redis.url }, prefix: 'cutroom' });
    try {
      const counts = await q.getJobCounts('completed', 'failed', 'active', 'waiting');
      expect(counts.failed).toBe(0);
      expect(await q.getJob(jobs[0]!.job)).toBeTruthy();
    } finally {
      await q.close();
    }
  });

  it("fair between callers: one caller's many previews do not hold every worker (CUTROOM_HTTP_CALLER_FFMPEG across workers)", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-q-'));
    await worker(cacheDir, { CUTROOM_WORKER_CONCURRENCY: '2' });
    const http = await startHttpServer({
      VJ_BACKEND: 'remote',
      VJ_API_URL: suite.service.url,
      CUTROOM_CACHE_DIR: cacheDir,
      CUTROOM_QUEUE_URL: suite.redis.url,
      CUTROOM_HTTP_CALLER_FFMPEG: '1',
      CUTROOM_RENDER_WAIT_MS: '55000',
      CUTROOM_LOG_LEVEL: 'debug',
    });
    suite.defer(() => http.stop());
    // Caller B: another account with the same media in a project of its own.
    const keyB = 'caller-b-key-0123456789';
    const owner = suite.service.addTenant(keyB);
    const projectB = suite.service.addProject({ name: 'b', owner });
    const assetB = (media: MediaName) =>
      suite.service.addAsset(projectB.id, {
        keyname: [...suite.service.media.keys()].find((k) => k.startsWith(`${media}-`)),
        asset_type: 'generated_video',
        ext: 'mp4',
      }).id as string;
    const [redB, blueB] = [assetB('red'), assetB('blue')];
    const a = await connectHttp(http.url, { 'x-api-key': suite.service.apiKey });
    const b = await connectHttp(http.url, { 'x-api-key': keyB });
    suite.defer(async () => void (await Promise.allSettled([a.close(), b.close()])));
    const edit = (project: string, red: string, blue: string, end: number) => ({
      project_id: project,
      resolution: '640x360',
      fps: 25,
      clips: [
        { asset_id: red, start: 0, end },
        { asset_id: blue, start: 0, end: 2 },
      ],
    });
    const finished: string[] = [];
    const ask = async (client: Client, who: string, args: Record<string, unknown>) => {
      await untilDone(client, await client.callTool({ name: 'preview_edit', arguments: args }, { timeout: 120_000 }));
      finished.push(who);
    };
    // A asks for four previews at once, B for one a moment later: B's runs beside A's first, not after all four.
    const asks = [0, 1, 2, 3].map((i) =>
      ask(a, `a${i}`, edit(suite.projectId, suite.ids.red, suite.ids.blue, 2.5 + i * 0.1)),
    );
    await new Promise((r) => setTimeout(r, 300));
    asks.push(ask(b, 'b', edit(projectB.id, redB, blueB, 2.5)));
    await Promise.all(asks);
    expect(finished.indexOf('b'), finished.join(' ')).toBeLessThan(3);
  });

  it('a cancelled call stops its job on the worker within 2 s, and the job is not tried again', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-q-'));
    const w = await worker(cacheDir);
    const s = await server(cacheDir);
    await primed(s);
    heldVoice();
    const ac = new AbortController();
    const call = s.client.callTool(
      { name: 'preview_edit', arguments: timeline(2.6) },
      { signal: ac.signal, timeout: 120_000 },
    );
    call.catch(() => {});
    await expect.poll(() => started(w).length, { timeout: 60_000 }).toBe(2);
    await expect.poll(() => ffmpegOf(cacheDir).length, { timeout: 30_000 }).toBeGreaterThan(0);
    const at = Date.now();
    ac.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => ffmpegOf(cacheDir).length, { timeout: 10_000, interval: 50 }).toBe(0);
    expect(Date.now() - at).toBeLessThan(2000);
    const { job } = started(w)[1]!;
    const q = new Queue('media', { connection: { url: suite.redis.url }, prefix: 'cutroom' });
    try {
      await expect.poll(async () => (await q.getJob(job))?.finishedOn, { timeout: 10_000 }).toBeTruthy();
      const failed = (await q.getJob(job))!;
      expect(await failed.getState()).toBe('failed');
      expect(failed.failedReason).toMatch(/cancelled/);
      expect(failed.attemptsMade).toBeLessThanOrEqual(1);
    } finally {
      await q.close();
    }
    await new Promise((r) => setTimeout(r, 3000));
    expect(started(w)).toHaveLength(2);
    // The same edit asked again: a new job (not the cancelled one), made to its end.
    suite.service.reset();
    const again = await untilDone(
      s.client,
      await s.client.callTool({ name: 'preview_edit', arguments: timeline(2.6) }, { timeout: 120_000 }),
    );
    expect(structured(again).status).toBe('done');
    expect(started(w)).toHaveLength(3);
  });

  it('a worker killed with kill -9 mid-preview: another finishes it and the caller gets it whole', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-q-'));
    const first = await worker(cacheDir);
    const s = await server(cacheDir, true, { CUTROOM_RENDER_WAIT_MS: '55000' });
    await primed(s);
    const voice = heldVoice();
    const call = s.client.callTool({ name: 'preview_edit', arguments: timeline(2.4) }, { timeout: 120_000 });
    await expect.poll(() => started(first).length, { timeout: 60_000 }).toBe(2);
    const second = await worker(cacheDir);
    // Killed mid-preview: the voiceover it waits for is let go only after.
    first.proc.kill('SIGKILL');
    voice.open();
    const done = await untilDone(s.client, await call);
    expect(structured(done).status).toBe('done');
    expect(started(second)).toHaveLength(1);
    expect(started(second)[0]!.job).toBe(started(first)[1]!.job);
    // The result is the second worker's preview, whole; the first one's folder is never served.
    expect(structured(done).preview_id).toBe(started(second)[0]!.preview);
    expect(structured(done).preview_id).not.toBe(started(first)[1]!.preview);
    expect(readFileSync(structured(done).path as string).length).toBeGreaterThan(1000);
    expect(structured(done).measured_seconds).toBeCloseTo(structured(done).planned_seconds as number, 1);
  });

  it('Redis restarted mid-job: the call ends (a result or a clear error), and the queue works again after', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-q-'));
    const w = await worker(cacheDir);
    const s = await server(cacheDir, true, { CUTROOM_RENDER_WAIT_MS: '55000' });
    await primed(s);
    slowVoice(6000);
    const at = Date.now();
    const call = s.client.callTool({ name: 'preview_edit', arguments: timeline(2.2) }, { timeout: 120_000 });
    await expect.poll(() => started(w).length, { timeout: 60_000 }).toBe(2);
    await suite.redis.restart();
    const r = await call;
    expect(Date.now() - at).toBeLessThan(60_000);
    // The job was lost with Redis' memory (no persistence here): said in one line, not waited for.
    if (r.isError) expect(textOf(r)).toMatch(/gone from the queue|has not answered/);
    else expect(structured(r).status).toMatch(/done|rendering/);
    suite.service.reset();
    // A new request after the restart is queued and made.
    const again = await untilDone(
      s.client,
      await s.client.callTool({ name: 'preview_edit', arguments: timeline(2.1) }, { timeout: 120_000 }),
    );
    expect(structured(again).status).toBe('done');
  });
});
