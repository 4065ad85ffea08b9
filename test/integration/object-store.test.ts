// Previews kept in an S3-compatible object store (issue 35, item 6): a worker and HTTP servers with separate cache
// dirs (no shared volume) and CUTROOM_S3_*: the worker puts what it made in the bucket, and servers read it back
// through cutroom's resources. A real redis-server, a real worker, and s3rver (a local S3 API server from npm,
// behind a proxy that records every request). s3rver checks the access key id but not V4 signatures: what it
// cannot show is said in docs/hosting.md.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import S3rver from 's3rver';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf } from '../helpers/harness.js';
import { makeSpeechMedia } from '../helpers/speech-media.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';
import { freePort, startRedis, startWorker, type RedisServer, type WorkerProcess } from '../helpers/queue.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';

const BUCKET = 'cutroom-previews';
// s3rver knows one account, S3RVER; it does not check the secret (V4 signatures), so any secret passes: this one
// is looked for in every output.
const SECRET = 'secret-that-must-never-show-0123456789';
const S3_ENV = {
  CUTROOM_S3_BUCKET: BUCKET,
  CUTROOM_S3_PREFIX: 'team/previews',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: SECRET,
};

let service: FakeService;
let redis: RedisServer;
let s3: S3rver;
let proxy: Server;
let endpoint: string;
let projectId: string;
let ids: Record<MediaName, string>;
/** Every request the store received: method, path and query, and the names of its headers. */
const seen: { method: string; url: string; headers: Record<string, string | string[] | undefined> }[] = [];
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
  s3 = new S3rver({
    port: await freePort(),
    address: '127.0.0.1',
    silent: true,
    directory: mkdtempSync(join(tmpdir(), 'cutroom-s3rver-')),
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = (await s3.run()) as AddressInfo;
  // A recording pass-through in front of it: what cutroom asked the store is then known exactly.
  proxy = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    const up = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 60_000);
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => {});
});
afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  await s3?.close();
  await service?.stop();
  await redis?.stop();
});

async function httpServer(
  cacheDir: string,
  extra: Record<string, string> = {},
): Promise<{ srv: HttpServer; client: Client }> {
  const srv = await startHttpServer({
    VJ_BACKEND: 'remote',
    VJ_API_URL: service.url,
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_QUEUE_URL: redis.url,
    CUTROOM_S3_ENDPOINT: endpoint,
    CUTROOM_RENDER_WAIT_MS: '55000',
    CUTROOM_LOG_LEVEL: 'debug',
    ...S3_ENV,
    ...extra,
  });
  cleanup.push(() => srv.stop());
  const client = await connectHttp(srv.url, { 'x-api-key': service.apiKey });
  cleanup.push(() => client.close());
  return { srv, client };
}
async function worker(cacheDir: string): Promise<WorkerProcess> {
  const w = await startWorker({
    CUTROOM_QUEUE_URL: redis.url,
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_S3_ENDPOINT: endpoint,
    CUTROOM_LOG_LEVEL: 'debug',
    CUTROOM_WORKER_CONCURRENCY: '2',
    ...S3_ENV,
  });
  cleanup.push(() => w.stop());
  return w;
}

type Called = Awaited<ReturnType<Client['callTool']>>;
const structured = (r: Called) =>
  r.structuredContent as Record<string, unknown> & { status?: string; preview_id: string };

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

/** A resource's bytes (a preview's files are far under one part). */
async function bytesOf(client: Client, uri: string): Promise<Buffer> {
  const c = (await client.readResource({ uri })).contents[0] as { blob?: string; text?: string };
  return c.blob !== undefined ? Buffer.from(c.blob, 'base64') : Buffer.from(c.text ?? '', 'utf8');
}
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The folder a preview was made in under a cache dir (a caller's folder over HTTP). */
function folderOf(cacheDir: string, id: string): string {
  const callers = join(cacheDir, 'callers');
  for (const c of readdirSync(callers))
    if (existsSync(join(callers, c, 'previews', id))) return join(callers, c, 'previews', id);
  throw new Error(`preview ${id} is not under ${cacheDir}`);
}

describe('previews in an object store', () => {
  it('a worker with its own cache dir puts the preview in the bucket; servers with theirs serve the same bytes', async () => {
    const workerDir = mkdtempSync(join(tmpdir(), 'cutroom-s3-worker-'));
    const dirA = mkdtempSync(join(tmpdir(), 'cutroom-s3-a-'));
    const dirB = mkdtempSync(join(tmpdir(), 'cutroom-s3-b-'));
    const w = await worker(workerDir);
    const a = await httpServer(dirA);
    const edit = {
      project_id: projectId,
      resolution: '640x360',
      fps: 25,
      clips: [
        { asset_id: ids.red, start: 1, end: 3 },
        { asset_id: ids.blue, start: 0, end: 2 },
      ],
    };
    const done = await untilDone(
      a.client,
      await a.client.callTool({ name: 'preview_edit', arguments: edit }, { timeout: 120_000 }),
    );
    const id = structured(done).preview_id;
    expect(structured(done).status).toBe('done');
    expect(w.stderr()).toMatch(new RegExp(`preview ${id} put in the object store`));
    // A hosted caller sees resources and this server's own signed links (/files/), never a bucket's link or a path.
    const shown = JSON.stringify(done).replaceAll(`${a.srv.base}/files/`, '<link>/');
    expect(shown).toContain('<link>/');
    expect(shown).not.toMatch(new RegExp(`${endpoint}|127\\.0\\.0\\.1|team/previews|X-Amz`, 'i'));

    const made = folderOf(workerDir, id);
    const files = ['preview.mp4', 'sheet.jpg'];
    for (const f of files)
      expect(sha(await bytesOf(a.client, `cutroom://previews/${id}/${f}`)), f).toBe(sha(readFileSync(join(made, f))));
    // The first cut's clip, kept with the finished preview, and the levels a view draws came along.
    expect(sha(await bytesOf(a.client, `cutroom://previews/${id}/cuts/0.mp4`))).toBe(
      sha(readFileSync(join(made, 'cut-0.mp4'))),
    );
    expect(readFileSync(join(folderOf(dirA, id), 'levels.json'), 'utf8')).toBe(
      readFileSync(join(made, 'levels.json'), 'utf8'),
    );
    // The record names this server's folder, not the worker's.
    const record = JSON.parse(readFileSync(join(folderOf(dirA, id), 'preview.json'), 'utf8')) as { path: string };
    expect(record.path.startsWith(dirA)).toBe(true);

    // Another replica, with a cache dir of its own, never told of the job: it fetches the preview when asked.
    const b = await httpServer(dirB);
    const again = await b.client.callTool({ name: 'preview_edit', arguments: { preview_id: id } }, { timeout: 60_000 });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(structured(again).status).toBe('done');
    for (const f of files)
      expect(sha(await bytesOf(b.client, `cutroom://previews/${id}/${f}`)), f).toBe(sha(readFileSync(join(made, f))));
    const whole = JSON.parse((await bytesOf(b.client, `cutroom://previews/${id}/preview.json`)).toString('utf8')) as {
      preview_id: string;
      cuts: unknown[];
    };
    expect(whole.preview_id).toBe(id);
    expect(whole.cuts).toHaveLength(2);

    // Other jobs run in the worker's own cache folder too, their results carried back by the queue.
    const inspected = await a.client.callTool(
      { name: 'inspect_asset', arguments: { project_id: projectId, asset_id: ids.red } },
      { timeout: 120_000 },
    );
    expect(inspected.isError, textOf(inspected)).toBeFalsy();
    expect(w.stderr()).toMatch(/job inspect-[0-9a-f]+: started the inspection/);
    expect((inspected.content as { type: string }[]).map((c) => c.type)).toContain('image');
    // Kept by the server too: asked again, it is answered here, with no second job.
    const twice = await a.client.callTool(
      { name: 'inspect_asset', arguments: { project_id: projectId, asset_id: ids.red } },
      { timeout: 120_000 },
    );
    expect(twice.isError, textOf(twice)).toBeFalsy();
    expect((twice.structuredContent as { cached?: boolean }).cached).toBe(true);
    expect([...w.stderr().matchAll(/started the inspection/g)]).toHaveLength(1);

    // Nothing made public: no ACL, no policy, no presigned link asked of the store; every request signed.
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen) {
      expect(
        Object.keys(r.headers).filter((h) => /acl|grant/i.test(h)),
        r.url,
      ).toEqual([]);
      expect(r.url, r.method).not.toMatch(/[?&](acl|policy|X-Amz-Signature)/i);
      expect(String(r.headers.authorization ?? '')).toMatch(/^AWS4-HMAC-SHA256 Credential=S3RVER\//);
    }
    // Keys mirror the cache dir under the prefix: a caller's previews under their own folder.
    expect(
      seen.some(
        (r) =>
          r.method === 'PUT' &&
          new RegExp(`^/${BUCKET}/team/previews/callers/[^/]+/previews/${id}/preview\\.mp4`).test(r.url),
      ),
    ).toBe(true);
    // No native addon loaded with the store's SDK either (the worker's memory map).
    expect(
      readFileSync(`/proc/${w.pid}/maps`, 'utf8')
        .split('\n')
        .filter((l) => /\.node$/.test(l)),
    ).toEqual([]);
    // The secret never shows.
    for (const out of [w.stderr(), a.srv.stderr(), b.srv.stderr(), JSON.stringify(done), JSON.stringify(again)])
      expect(out).not.toContain(SECRET);
  });

  it('on the local backend over stdio (the data dir shared, the cache dirs not): a preview and a transcript come back', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cutroom-s3-local-'));
    const allowed = join(root, 'allowed');
    mkdirSync(allowed, { recursive: true });
    const media = makeSpeechMedia(allowed);
    const shared = { CUTROOM_DATA_DIR: join(root, 'data'), CUTROOM_ALLOWED_DIRS: allowed };
    const w = await startWorker({
      CUTROOM_QUEUE_URL: redis.url,
      CUTROOM_CACHE_DIR: join(root, 'cache-worker'),
      CUTROOM_S3_ENDPOINT: endpoint,
      CUTROOM_LOG_LEVEL: 'debug',
      ...shared,
      ...S3_ENV,
    });
    cleanup.push(() => w.stop());
    const s = await spawnServer({
      CUTROOM_QUEUE_URL: redis.url,
      CUTROOM_CACHE_DIR: join(root, 'cache-server'),
      CUTROOM_S3_ENDPOINT: endpoint,
      CUTROOM_LOG_LEVEL: 'debug',
      ...shared,
      ...S3_ENV,
    });
    cleanup.push(() => s.close());
    const call = (name: string, args: Record<string, unknown>) =>
      s.client.callTool({ name, arguments: args }, { timeout: 180_000 });
    const project = (
      (await call('create_project', { name: 'talk', description: 'speech' })).structuredContent as {
        project: { id: string };
      }
    ).project.id;
    const asset = (
      (await call('import_media', { project_id: project, path: media.wav })).structuredContent as {
        asset: { id: string };
      }
    ).asset.id;
    const heard = await call('transcribe_asset', { project_id: project, asset_id: asset });
    expect(heard.isError, textOf(heard)).toBeFalsy();
    const again = await call('transcribe_asset', { project_id: project, asset_id: asset });
    expect((again.structuredContent as { cached?: boolean }).cached).toBe(true);
    expect((again.structuredContent as { words: unknown[] }).words).toEqual(
      (heard.structuredContent as { words: unknown[] }).words,
    );
    expect([...w.stderr().matchAll(/started the transcription/g)]).toHaveLength(1);
    // Over stdio the result names this server's own file, fetched from the store.
    const video = (
      (await call('import_media', { project_id: project, path: media.video })).structuredContent as {
        asset: { id: string };
      }
    ).asset.id;
    const done = await untilDone(
      s.client,
      await call('preview_edit', {
        project_id: project,
        resolution: '320x180',
        fps: 25,
        clips: [{ asset_id: video, start: 0, end: 1.5 }],
      }),
    );
    const path = structured(done).path as string;
    expect(path.startsWith(join(root, 'cache-server'))).toBe(true);
    expect(sha(readFileSync(path))).toBe(
      sha(readFileSync(join(root, 'cache-worker', 'previews', structured(done).preview_id, 'preview.mp4'))),
    );
    expect(s.stderr()).not.toContain(SECRET);
  });

  it('a preview still rendering on a worker is "rendering" on a replica that did not start it (waited for, given time), then done there', async () => {
    const w = await worker(mkdtempSync(join(tmpdir(), 'cutroom-s3-worker-')));
    const a = await httpServer(mkdtempSync(join(tmpdir(), 'cutroom-s3-a-')), { CUTROOM_RENDER_WAIT_MS: '1000' });
    const b = await httpServer(mkdtempSync(join(tmpdir(), 'cutroom-s3-b-')), { CUTROOM_RENDER_WAIT_MS: '1000' });
    const c = await httpServer(mkdtempSync(join(tmpdir(), 'cutroom-s3-c-')), { CUTROOM_RENDER_WAIT_MS: '55000' });
    const edit = (end: number) => ({
      project_id: projectId,
      resolution: '320x180',
      fps: 25,
      clips: [{ asset_id: ids.red, start: 0, end }],
      overlays: [{ asset_id: ids.voice, at: 0.5, until: 1.5 }],
    });
    // The media probed first (by server A), then the voiceover held (trickling): the worker's preview stays running
    // until replica C, given time, has reported progress, however slow the machine.
    await untilDone(
      a.client,
      await a.client.callTool({ name: 'preview_edit', arguments: edit(1.9) }, { timeout: 120_000 }),
    );
    const voice = service.gate();
    service.fail(
      { trickle: voice },
      { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
    );
    try {
      const first = await a.client.callTool({ name: 'preview_edit', arguments: edit(2.5) }, { timeout: 120_000 });
      expect(structured(first).status, textOf(first)).toBe('rendering');
      const id = structured(first).preview_id;
      const there = await b.client.callTool(
        { name: 'preview_edit', arguments: { preview_id: id } },
        { timeout: 60_000 },
      );
      expect(there.isError, textOf(there)).toBeFalsy();
      expect(structured(there).status).toBe('rendering');
      expect(textOf(there)).toMatch(/on a cutroom worker/);
      // A replica given time (its CUTROOM_RENDER_WAIT_MS) waits for it as the one following it does, with progress.
      const progress: number[] = [];
      const waited = await c.client.callTool(
        { name: 'preview_edit', arguments: { preview_id: id } },
        {
          timeout: 60_000,
          onprogress: (p) => {
            progress.push(p.progress);
            voice.open();
          },
        },
      );
      expect(structured(waited).status, textOf(waited)).toBe('done');
      expect(structured(waited).preview_id).toBe(id);
      expect(progress.length).toBeGreaterThan(0);
      await untilDone(a.client, first);
      const done = await b.client.callTool(
        { name: 'preview_edit', arguments: { preview_id: id } },
        { timeout: 60_000 },
      );
      expect(structured(done).status, textOf(done)).toBe('done');
      expect(w.stderr()).toMatch(new RegExp(`preview ${id} put in the object store`));
    } finally {
      service.reset();
    }
  });

  it("a worker without the servers' object store fails the job at once, saying why (not tried again)", async () => {
    const w = await startWorker({
      CUTROOM_QUEUE_URL: redis.url,
      CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-s3-nostore-')),
      CUTROOM_LOG_LEVEL: 'debug',
    });
    cleanup.push(() => w.stop());
    const a = await httpServer(mkdtempSync(join(tmpdir(), 'cutroom-s3-a-')));
    const r = await a.client.callTool(
      {
        name: 'preview_edit',
        arguments: {
          project_id: projectId,
          resolution: '320x180',
          fps: 25,
          clips: [{ asset_id: ids.black, start: 0, end: 1.2 }],
        },
      },
      { timeout: 120_000 },
    );
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(
      /kept in the object store s3:\/\/cutroom-previews\/team\/previews\/.*but this worker has none: give servers and workers the same CUTROOM_S3_BUCKET/,
    );
    expect([...w.stderr().matchAll(/to be tried again/g)]).toHaveLength(0);
  });

  it('a preview missing from the store, or a store that does not answer, is a clear error, not a crash', async () => {
    const a = await httpServer(mkdtempSync(join(tmpdir(), 'cutroom-s3-c-')));
    const ghost = '20260101000000-0badf00d';
    const r = await a.client.callTool({ name: 'preview_edit', arguments: { preview_id: ghost } }, { timeout: 60_000 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/is gone|run preview_edit again/);
    await expect(a.client.readResource({ uri: `cutroom://previews/${ghost}/preview.mp4` })).rejects.toThrow(
      /gone|run preview_edit again/,
    );

    // A store that is not there: the server starts (and says so), and a read fails with the store named.
    const dead = await httpServer(mkdtempSync(join(tmpdir(), 'cutroom-s3-d-')), {
      CUTROOM_S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
    });
    expect(dead.srv.stderr()).toMatch(
      /the object store s3:\/\/cutroom-previews\/team\/previews\/ could not reach the bucket: .*\(s3:\/\/cutroom-previews\/team\/previews\/ at 127\.0\.0\.1:\d+\)/,
    );
    const down = await dead.client.callTool(
      { name: 'preview_edit', arguments: { preview_id: ghost } },
      { timeout: 60_000 },
    );
    expect(down.isError).toBe(true);
    expect(textOf(down)).toMatch(
      /could not be read back: the object store s3:\/\/cutroom-previews\/team\/previews\/ could not/,
    );
    // The store's address is the operator's: a caller is not told it.
    expect(textOf(down)).not.toMatch(/127\.0\.0\.1|callers\//);
    await expect(dead.client.readResource({ uri: `cutroom://previews/${ghost}/sheet.jpg` })).rejects.toThrow(
      /object store/,
    );
    expect(dead.srv.proc.exitCode).toBe(null);
    for (const out of [a.srv.stderr(), dead.srv.stderr(), textOf(down)]) expect(out).not.toContain(SECRET);
  });
});
