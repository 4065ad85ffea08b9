// A team's deployment as the hosting docs describe it, with nothing shared but Redis and the bucket (issue 50): two
// HTTP replicas of the built server (service backend), each with a cache dir and a data dir of its own, a `cutroom
// worker` with its own, a real redis-server and s3rver (a local S3 API server). What one replica made (an edit kept
// by id, a transcript, an inspection, an export, a render's name) is named on the other, and through a round-robin
// proxy in front of both, as a load balancer sends calls, no call says "not kept here"; a cancel reaches the job
// wherever it runs (a call's notifications/cancelled, a preview's id). Two replicas keep the same edit at once; and
// two more, on a Redis of their own and no bucket, keep what they share in Redis.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';
import {
  freePort,
  startRedis,
  startWorker,
  startedJobs,
  type RedisServer,
  type WorkerProcess,
} from '../helpers/queue.js';
import { pidsMatching } from '../helpers/processes.js';
import { makeSpeechMedia } from '../helpers/speech-media.js';

const BUCKET = 'cutroom-team';
const S3_ENV = {
  CUTROOM_S3_BUCKET: BUCKET,
  CUTROOM_S3_PREFIX: 'team',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'secret-that-must-never-show-0123456789',
};

let service: FakeService;
let redis: RedisServer;
let s3: S3rver;
let endpoint: string;
let projectId: string;
let ids: Record<MediaName, string>;
let speechId: string;
let a: HttpServer;
let b: HttpServer;
let ca: Client;
let cb: Client;
let worker: WorkerProcess;
let workerCache: string;
let proxy: Server;
/** Which replica the proxy sent each request to, in order. */
const sentTo: string[] = [];
/** What the proxy passed on: to which replica, the JSON-RPC method, and the id it asks with or cancels. */
const sent: { to: string; method: string; id: unknown }[] = [];
let cp: Client;

const replica = (name: string) =>
  startHttpServer({
    VJ_BACKEND: 'remote',
    VJ_API_URL: service.url,
    CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), `cutroom-team-cache-${name}-`)),
    CUTROOM_DATA_DIR: mkdtempSync(join(tmpdir(), `cutroom-team-data-${name}-`)),
    CUTROOM_QUEUE_URL: redis.url,
    CUTROOM_S3_ENDPOINT: endpoint,
    CUTROOM_RENDER_WAIT_MS: '55000',
    ...S3_ENV,
  });

beforeAll(async () => {
  redis = await startRedis();
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
  const speech = makeSpeechMedia(mkdtempSync(join(tmpdir(), 'cutroom-team-speech-')));
  service.media.set('speech-team', speech.wav);
  speechId = service.addAsset(projectId, { keyname: 'speech-team', asset_type: 'audio', ext: 'wav' }).id;
  s3 = new S3rver({
    port: await freePort(),
    address: '127.0.0.1',
    silent: true,
    directory: mkdtempSync(join(tmpdir(), 'cutroom-team-s3-')),
    configureBuckets: [{ name: BUCKET }],
  });
  endpoint = `http://127.0.0.1:${((await s3.run()) as AddressInfo).port}`;
  [a, b] = await Promise.all([replica('a'), replica('b')]);
  workerCache = mkdtempSync(join(tmpdir(), 'cutroom-team-worker-'));
  worker = await startWorker({
    CUTROOM_QUEUE_URL: redis.url,
    CUTROOM_CACHE_DIR: workerCache,
    CUTROOM_S3_ENDPOINT: endpoint,
    CUTROOM_WORKER_CONCURRENCY: '2',
    ...S3_ENV,
  });
  const headers = { 'x-api-key': service.apiKey };
  ca = await connectHttp(a.url, headers);
  cb = await connectHttp(b.url, headers);
  // The load balancer: each request to the next replica in turn.
  const ports = [a, b].map((s) => Number(new URL(s.url).port));
  let next = 0;
  proxy = createServer((req, res) => {
    const which = next++ % 2;
    sentTo.push(which ? 'b' : 'a');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        const m = JSON.parse(body.toString('utf8')) as {
          method?: string;
          id?: unknown;
          params?: { requestId?: unknown };
        };
        sent.push({ to: which ? 'b' : 'a', method: m.method ?? '', id: m.id ?? m.params?.requestId });
      } catch {
        // (a GET, or not JSON)
      }
      const up = request(
        { host: '127.0.0.1', port: ports[which], method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode!, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  cp = await connectHttp(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`, headers);
}, 180_000);
afterAll(async () => {
  for (const c of [cp, ca, cb]) await c?.close().catch(() => {});
  await new Promise((r) => proxy?.close(r));
  await worker?.stop();
  await a?.stop();
  await b?.stop();
  await s3?.close();
  await service?.stop();
  await redis?.stop();
});

type Called = Awaited<ReturnType<Client['callTool']>>;
async function ok<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const r: Called = await client.callTool({ name, arguments: args }, { timeout: 120_000 });
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  return r.structuredContent as T;
}
async function previewDone(client: Client, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  let r = await ok(client, 'preview_edit', args);
  while (r.status === 'rendering') r = await ok(client, 'preview_edit', { preview_id: r.preview_id });
  return r;
}
const textOfResource = async (client: Client, uri: string) =>
  ((await client.readResource({ uri })).contents[0] as { text?: string }).text ?? '';

const edit = (filename: string) => ({
  project_id: projectId,
  resolution: '320x180',
  fps: 25,
  filename,
  clips: [
    { asset_id: ids.red, start: 0, end: 1 },
    { asset_id: ids.blue, start: 0, end: 1 },
  ],
});

describe('two replicas that share only Redis and the bucket', () => {
  it('an edit composed on one is previewed, exported and rendered on the other; the render keeps its name there', async () => {
    const composed = await ok<{ edit_id: string }>(ca, 'compose_edit', edit('team-cut.mp4'));
    const preview = await previewDone(cb, { edit_id: composed.edit_id });
    expect(preview.status ?? 'done').toBe('done');
    expect(preview.measured_seconds).toBeCloseTo(2, 0);
    // The edit's resource, on the replica that did not compose it.
    expect(JSON.parse(await textOfResource(cb, `cutroom://edits/${composed.edit_id}`))).toMatchObject({
      edit_id: composed.edit_id,
    });

    const exported = await ok<{ export_id: string; path: string }>(cb, 'export_edit', {
      edit_id: composed.edit_id,
      format: 'otio',
    });
    expect(exported.path).toMatch(/^cutroom:\/\/exports\//);
    // Read back on the replica that did not write it.
    const otio = JSON.parse(await textOfResource(ca, exported.path)) as { OTIO_SCHEMA: string };
    expect(otio.OTIO_SCHEMA).toMatch(/^Timeline/);
    const imported = await ok<{ edit_id: string }>(ca, 'import_edit', {
      project_id: projectId,
      path: exported.path,
    });
    expect(imported.edit_id).toMatch(/^edit-/);

    const { render } = await ok<{ render: { asset_id: string } }>(ca, 'render_edit', { edit_id: composed.edit_id });
    // The service calls its render generated_video; the name cutroom gave it is said on the other replica too.
    const project = await ok<{ project: { assets: { id: string; name?: string; render?: boolean }[] } }>(
      cb,
      'get_project',
      { project_id: projectId },
    );
    expect(project.project.assets.find((x) => x.id === render.asset_id)).toMatchObject({
      name: 'team-cut.mp4',
      render: true,
    });
  }, 300_000);

  it('a transcript and an inspection made on one are read on the other, without a second job', async () => {
    const heard = await ok<{ words?: unknown[]; total_words?: number }>(ca, 'transcribe_asset', {
      project_id: projectId,
      asset_id: speechId,
    });
    expect(heard).toBeDefined();
    const transcript = JSON.parse(
      await textOfResource(cb, `vj://projects/${projectId}/assets/${speechId}/transcript`),
    ) as { words: { word: string }[] };
    expect(transcript.words.length).toBeGreaterThan(5);
    const again = await ok<{ cached: boolean }>(cb, 'transcribe_asset', { project_id: projectId, asset_id: speechId });
    expect(again.cached).toBe(true);

    await ok(ca, 'inspect_asset', { project_id: projectId, asset_id: ids.red });
    const inspection = JSON.parse(
      await textOfResource(cb, `vj://projects/${projectId}/assets/${ids.red}/inspection`),
    ) as { asset_id: string; shots: unknown[] };
    expect(inspection.asset_id).toBe(ids.red);
    expect([...worker.stderr().matchAll(/started the inspection/g)]).toHaveLength(1);
    expect([...worker.stderr().matchAll(/started the transcription/g)]).toHaveLength(1);
  }, 300_000);

  it('behind a round-robin proxy, compose, preview and export alternate replicas and every call answers', async () => {
    for (const [i, end] of [1.2, 1.4, 1.6].entries()) {
      const composed = await ok<{ edit_id: string }>(cp, 'compose_edit', {
        ...edit(`round-${i}.mp4`),
        clips: [{ asset_id: ids.green_vertical, start: 0, end }],
      });
      const preview = await previewDone(cp, { edit_id: composed.edit_id });
      expect(preview.measured_seconds).toBeCloseTo(end, 0);
      const exported = await ok<{ path: string }>(cp, 'export_edit', { edit_id: composed.edit_id, format: 'edl' });
      expect(await textOfResource(cp, exported.path)).toMatch(/^TITLE:/);
    }
    expect(new Set(sentTo)).toEqual(new Set(['a', 'b']));

    // Transcribe, compose, render, follow it and ask to cancel it: each call on the other replica from the last.
    const from = sent.length;
    const heard = await ok<{ word_count: number }>(cp, 'transcribe_asset', {
      project_id: projectId,
      asset_id: speechId,
    });
    expect(heard.word_count).toBeGreaterThan(5);
    const composed = await ok<{ edit_id: string }>(cp, 'compose_edit', edit('round-render.mp4'));
    const { render } = await ok<{ render: { asset_id: string } }>(cp, 'render_edit', { edit_id: composed.edit_id });
    expect(await ok(cp, 'get_render_status', { project_id: projectId, asset_id: render.asset_id })).toMatchObject({
      asset_id: render.asset_id,
    });
    // The service's interface has no way to stop a render: said as such, nothing pretended.
    const cancel = await cp.callTool(
      { name: 'get_render_status', arguments: { project_id: projectId, asset_id: render.asset_id, cancel: true } },
      { timeout: 120_000 },
    );
    expect(cancel.isError).toBe(true);
    expect(textOf(cancel)).toMatch(/nothing was cancelled: the service offers no way to stop a render/);
    const calls = sent.slice(from).filter((m) => m.method === 'tools/call');
    expect(calls).toHaveLength(5);
    for (const [i, m] of calls.entries()) if (i) expect(m.to, JSON.stringify(calls)).not.toBe(calls[i - 1]!.to);
  }, 300_000);

  it('a preview started on one replica is cancelled by its id on the other: stopped on its worker, and the call following it says so', async () => {
    const held = {
      ...edit('cancel-by-id.mp4'),
      clips: [{ asset_id: ids.red, start: 0, end: 1.7 }],
      overlays: [{ asset_id: ids.voice, at: 0, until: 1 }],
    };
    // Once as served (the media probed), then with the voiceover held: the worker's job waits for it.
    await previewDone(ca, { ...held, clips: [{ asset_id: ids.red, start: 0, end: 1.1 }] });
    service.fail(
      { trickle: service.gate() },
      { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
    );
    try {
      const before = startedJobs(worker).filter((j) => j.preview).length;
      const call = ca.callTool({ name: 'preview_edit', arguments: held }, { timeout: 120_000 });
      await expect
        .poll(() => startedJobs(worker).filter((j) => j.preview).length, { timeout: 60_000 })
        .toBeGreaterThan(before);
      const id = startedJobs(worker).filter((j) => j.preview)[before]!.preview!;
      await expect.poll(() => pidsMatching(workerCache).length, { timeout: 30_000 }).toBeGreaterThan(0);

      const r = await cb.callTool(
        { name: 'preview_edit', arguments: { preview_id: id, cancel: true } },
        { timeout: 120_000 },
      );
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent).toEqual({ preview_id: id, status: 'cancelled' });
      // Said once so: the worker stopped it, no ffmpeg of its left, its folder there removed.
      expect(worker.stderr()).toMatch(new RegExp(`cancelled; stopping preview ${id}`));
      expect(pidsMatching(workerCache)).toEqual([]);
      expect(existsSync(join(workerCache, 'callers'))).toBe(true);
      expect(readdirSync(workerCache, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes(id))).toEqual([]);
      // The call on the other replica, still waiting for it, ends saying it was cancelled.
      const followed = await call;
      expect(followed.isError).toBe(true);
      expect(textOf(followed)).toMatch(/the preview was cancelled; nothing was kept/);
      const again = await ca.callTool({ name: 'preview_edit', arguments: { preview_id: id, cancel: true } });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toMatch(/nothing to cancel/);
    } finally {
      service.reset();
    }
  }, 300_000);

  it('two replicas keeping the same edit at once both answer it, and the kept record is whole', async () => {
    const same = { ...edit('same.mp4'), clips: [{ asset_id: ids.blue, start: 0.2, end: 1.3 }] };
    const answers = await Promise.all(
      [ca, cb, ca, cb].map((c) =>
        ok<{ edit_id: string; ready: boolean; skipped_checks: string[] }>(c, 'compose_edit', same),
      ),
    );
    const id = answers[0]!.edit_id;
    expect(
      answers.map((x) => x.edit_id),
      answers.flatMap((x) => x.skipped_checks).join('\n'),
    ).toEqual([id, id, id, id]);
    const s3c = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    try {
      const keys = (await s3c.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'team' }))).Contents ?? [];
      const key = keys.map((k) => k.Key!).find((k) => k.endsWith(`/edits/${id}.json`));
      expect(key, keys.map((k) => k.Key).join('\n')).toMatch(/kept\/data\//);
      const body = await (await s3c.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();
      const kept = JSON.parse(body) as { edit_id?: string };
      // Each replica serves the same record as the one the store holds.
      for (const c of [ca, cb])
        expect(JSON.parse(await textOfResource(c, `cutroom://edits/${id}`))).toMatchObject({ edit_id: id });
      expect(kept.edit_id).toBe(id);
    } finally {
      s3c.destroy();
    }
  }, 300_000);

  it('a call cancelled through the load balancer stops its job, though the cancel reached the other replica', async () => {
    const held = {
      ...edit('held.mp4'),
      clips: [{ asset_id: ids.red, start: 0, end: 1.5 }],
      overlays: [{ asset_id: ids.voice, at: 0, until: 1 }],
    };
    // Once as served (the media probed, on both replicas: the held call may reach either), then with the voiceover
    // held: the worker's job waits for it.
    await previewDone(ca, { ...held, clips: [{ asset_id: ids.red, start: 0, end: 1 }] });
    await previewDone(cb, { ...held, clips: [{ asset_id: ids.red, start: 0, end: 1 }] });
    service.fail(
      { trickle: service.gate() },
      { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
    );
    try {
      const before = [...worker.stderr().matchAll(/started preview/g)].length;
      const abort = new AbortController();
      const call = cp.callTool({ name: 'preview_edit', arguments: held }, { timeout: 120_000, signal: abort.signal });
      const t = Date.now();
      while ([...worker.stderr().matchAll(/started preview/g)].length === before) {
        if (Date.now() - t > 60_000) throw new Error(`the worker never started the held preview:\n${worker.stderr()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // (Counted: an earlier test's cancel said so too.)
      const stops = () => [...worker.stderr().matchAll(/cancelled; stopping preview/g)].length;
      const stoppedBefore = stops();
      abort.abort();
      await call.catch(() => {});
      const stopped = Date.now();
      while (stops() === stoppedBefore) {
        if (Date.now() - stopped > 60_000) throw new Error(`the job was not stopped:\n${worker.stderr()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const asked = sent.filter((m) => m.method === 'tools/call').at(-1)!;
      const cancel = sent.find((m) => m.method === 'notifications/cancelled' && m.id === asked.id);
      expect(cancel, JSON.stringify(sent.slice(-4))).toBeDefined();
      expect(cancel!.to).not.toBe(asked.to);
    } finally {
      service.reset();
    }
  }, 300_000);

  // Last: it replaces the file's worker with one whose cache dir is a tiny disk (a tmpfs; needs root, as
  // cache-disk-full.test.ts).
  it("a worker's failure says no more than a server's: no path of the worker's, no caller's folder, no store address", async (ctx) => {
    const full = join(mkdtempSync(join(tmpdir(), 'cutroom-team-full-')), 'cache');
    mkdirSync(full);
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', full], { encoding: 'utf8' });
    if (mount.status !== 0) {
      console.warn(`skipping: mounting a tmpfs was refused (${mount.stderr.trim()}); it needs root`);
      ctx.skip();
    }
    try {
      await worker.stop();
      worker = await startWorker({
        CUTROOM_QUEUE_URL: redis.url,
        CUTROOM_CACHE_DIR: full,
        CUTROOM_S3_ENDPOINT: endpoint,
        ...S3_ENV,
      });
      const r = await ca.callTool(
        {
          name: 'preview_edit',
          arguments: {
            ...edit('too-big.mp4'),
            resolution: '1280x720',
            clips: [
              { asset_id: ids.red, start: 0, end: 8 },
              { asset_id: ids.blue, start: 0, end: 6 },
            ],
          },
        },
        { timeout: 120_000 },
      );
      let result = r;
      while (!result.isError && (result.structuredContent as { status?: string }).status === 'rendering')
        result = await ca.callTool(
          {
            name: 'preview_edit',
            arguments: { preview_id: (result.structuredContent as { preview_id: string }).preview_id },
          },
          { timeout: 120_000 },
        );
      expect(result.isError).toBe(true);
      const said = textOf(result);
      // The same words as a server's own full disk (workflow/preview.ts), its folder as a server names it.
      expect(said).toMatch(/the disk holding the cache dir \(CUTROOM_CACHE_DIR=\(the server's cache\)\) is full/);
      expect(said).not.toContain(full);
      expect(said).not.toMatch(/callers\/|[0-9a-f]{32}|\/tmp\/|127\.0\.0\.1|S3RVER/);
      // The worker's own log keeps the path, for its operator.
      expect(worker.stderr()).toContain(full);
    } finally {
      await worker.stop();
      spawnSync('umount', ['-l', full]);
    }
  }, 300_000);
});

// Without a bucket the team's kept state lives in the queue's Redis: a Redis of its own here, two replicas on it with no
// shared dir and no bucket (jobs would need a shared cache dir then: none is run here; what is named is kept by the
// replicas themselves).
describe('two replicas that share only Redis (no bucket)', () => {
  let own: RedisServer;
  let c: HttpServer;
  let d: HttpServer;
  let cc: Client;
  let cd: Client;
  beforeAll(async () => {
    own = await startRedis();
    const replicaOnRedis = (name: string) =>
      startHttpServer({
        VJ_BACKEND: 'remote',
        VJ_API_URL: service.url,
        CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), `cutroom-team-redis-cache-${name}-`)),
        CUTROOM_DATA_DIR: mkdtempSync(join(tmpdir(), `cutroom-team-redis-data-${name}-`)),
        CUTROOM_QUEUE_URL: own.url,
      });
    [c, d] = await Promise.all([replicaOnRedis('c'), replicaOnRedis('d')]);
    const headers = { 'x-api-key': service.apiKey };
    cc = await connectHttp(c.url, headers);
    cd = await connectHttp(d.url, headers);
  }, 180_000);
  afterAll(async () => {
    for (const client of [cc, cd]) await client?.close().catch(() => {});
    await c?.stop();
    await d?.stop();
    await own?.stop();
  });

  it('an edit and an export made on one are named on the other, each kept in Redis with an expiry', async () => {
    const composed = await ok<{ edit_id: string }>(cc, 'compose_edit', edit('redis-only.mp4'));
    expect(JSON.parse(await textOfResource(cd, `cutroom://edits/${composed.edit_id}`))).toMatchObject({
      edit_id: composed.edit_id,
    });
    const exported = await ok<{ path: string }>(cd, 'export_edit', { edit_id: composed.edit_id, format: 'edl' });
    expect(await textOfResource(cc, exported.path)).toMatch(/^TITLE:/);
    const imported = await ok<{ edit_id: string }>(cc, 'import_edit', { project_id: projectId, path: exported.path });
    expect(imported.edit_id).toMatch(/^edit-/);
    const r = new Redis(own.url);
    try {
      const keys = await r.keys('cutroom:kept:*');
      expect(
        keys.some((k) => k.startsWith('cutroom:kept:data/') && k.endsWith(`/edits/${composed.edit_id}.json`)),
      ).toBe(true);
      expect(keys.some((k) => k.startsWith('cutroom:kept:cache/') && k.includes('/exports/'))).toBe(true);
      // Each kept value expires (30 days after it was last written or read), never left for ever.
      for (const k of keys) expect(await r.ttl(k)).toBeGreaterThan(0);
    } finally {
      r.disconnect();
    }
  }, 300_000);
});
