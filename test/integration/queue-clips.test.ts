// A cut's clip while its preview renders on a worker (issue 35: what the caller sees does not change). With a queue,
// every ready cut plays from cutroom://previews/{id}/cuts/{n}.mp4 on any replica, as in-process: made by the server
// from the cut's segment in a shared cache dir, or, with an object store, made by the worker on asking and read
// back. A real redis-server, real workers, built servers, s3rver for the store; the voiceover trickles until the test
// lets it go (service.reset()), so the preview stays rendering with its cuts ready however slow the machine (the
// segments do not read it, the sound does).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import S3rver from 's3rver';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { colourAt, colourName, playedContent, probe } from '../helpers/inspect-media.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';
import { freePort, startRedis, startWorker, type RedisServer, type WorkerProcess } from '../helpers/queue.js';
import { connectHttp, startHttpServer } from '../helpers/http-server.js';

const BUCKET = 'cutroom-clips';
const S3_ENV = {
  CUTROOM_S3_BUCKET: BUCKET,
  CUTROOM_S3_PREFIX: 'team/clips',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'any-secret-s3rver-does-not-check',
};

let service: FakeService;
let redis: RedisServer;
let s3: S3rver;
let endpoint: string;
let projectId: string;
let ids: Record<MediaName, string>;
let toneId: string;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
  // The voiceover under a name of its own: its slowed reads are not taken for other test files' (which look for
  // ffmpeg reading /media/voice-).
  const tone = `tone-${projectId.slice(0, 8)}`;
  service.media.set(tone, service.media.get(`voice-${projectId.slice(0, 8)}`)!);
  toneId = service.addAsset(projectId, {
    keyname: tone,
    asset_type: 'audio',
    ext: service.media.get(tone)!.split('.').pop(),
  }).id;
  s3 = new S3rver({
    port: await freePort(),
    address: '127.0.0.1',
    silent: true,
    directory: mkdtempSync(join(tmpdir(), 'cutroom-s3rver-')),
    configureBuckets: [{ name: BUCKET }],
  });
  endpoint = `http://127.0.0.1:${((await s3.run()) as AddressInfo).port}`;
}, 60_000);
afterEach(async () => {
  service.reset();
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => {});
});
afterAll(async () => {
  await s3?.close();
  await service?.stop();
  await redis?.stop();
});

/** Five cuts of known colours and lengths, and the voiceover over the second. */
const timeline = () => ({
  project_id: projectId,
  resolution: '640x360',
  fps: 25,
  clips: [
    { asset_id: ids.red, start: 1, end: 3 },
    { asset_id: ids.blue, start: 0, end: 3, volume: 0 },
    { asset_id: ids.black, start: 0, end: 1.5 },
    { asset_id: ids.red, start: 0.5, end: 1.7 },
    { asset_id: ids.mute_yellow, start: 0, end: 1 },
  ],
  overlays: [{ asset_id: toneId, at: 3, until: 4 }],
});
/** The same media in other ranges: every medium probed by the server first, no segment of the edit above made. */
const other = () => ({
  ...timeline(),
  clips: timeline().clips.map((c) => ({ ...c, end: c.end - 0.2 })),
  overlays: [{ asset_id: toneId, at: 1, until: 2 }],
});
/** Cut index -> its colour and length in frames (at 25 fps). */
const CUTS: Record<number, [string, number]> = { 2: ['black', 37.5], 3: ['red', 30] };
/** The voiceover trickles until service.reset() (a fixed delay would let a loaded machine's preview end first). */
const holdVoice = () =>
  service.fail(
    { trickle: service.gate() },
    { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/tone-') },
  );

type Called = Awaited<ReturnType<Client['callTool']>>;
const structured = (r: Called) =>
  r.structuredContent as Record<string, unknown> & { status?: string; preview_id: string; cuts_ready?: number };

/** preview_edit's outputSchema, as the server lists it: every result below is checked against it. */
async function conformer(client: Client): Promise<(r: Called) => void> {
  const tool = (await client.listTools()).tools.find((t) => t.name === 'preview_edit')!;
  const check = new Ajv2020({ strict: false }).compile(tool.outputSchema!);
  return (r) => {
    if (r.structuredContent !== undefined) expect(check(r.structuredContent), JSON.stringify(check.errors)).toBe(true);
  };
}

async function call(client: Client, args: Record<string, unknown>, conforms: (r: Called) => void): Promise<Called> {
  const r = await client.callTool({ name: 'preview_edit', arguments: args }, { timeout: 120_000 });
  conforms(r);
  return r;
}
/** How long a preview is followed at most (each call waits 1.5 s for news): a liveness bound for a loaded machine. */
const FOLLOW_MS = 120_000;
async function untilDone(client: Client, r: Called, conforms: (r: Called) => void): Promise<Called> {
  const until = Date.now() + FOLLOW_MS;
  while (!r.isError && structured(r)?.status === 'rendering' && Date.now() < until)
    r = await call(client, { preview_id: structured(r).preview_id }, conforms);
  if (r.isError) throw new Error(textOf(r));
  return r;
}
/** Starts the preview (the voiceover held) and follows it until all five cuts are ready, still rendering. */
async function renderingWithCutsReady(client: Client, conforms: (r: Called) => void): Promise<string> {
  holdVoice();
  let r = await call(client, timeline(), conforms);
  expect(r.isError, textOf(r)).toBeFalsy();
  const id = structured(r).preview_id;
  const until = Date.now() + FOLLOW_MS;
  while ((structured(r).cuts_ready ?? 0) < 5 && Date.now() < until) {
    r = await call(client, { preview_id: id }, conforms);
    expect(r.isError, textOf(r)).toBeFalsy();
  }
  expect(structured(r)).toMatchObject({ preview_id: id, status: 'rendering', cuts_ready: 5 });
  return id;
}

/** A clip resource's bytes, written to a file, checked to be an mp4. */
async function clipOf(client: Client, id: string, cut: number, dir: string, name: string): Promise<string> {
  const read = await client.readResource({ uri: `cutroom://previews/${id}/cuts/${cut}.mp4` });
  const c = read.contents[0] as { blob: string; mimeType?: string };
  expect(c.mimeType).toBe('video/mp4');
  const file = join(dir, `${name}-${cut}.mp4`);
  writeFileSync(file, Buffer.from(c.blob, 'base64'));
  return file;
}

/** The streams as ffprobe says (codecs, sizes, sound's rate and channels). */
function streams(file: string): unknown {
  const r = spawnSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_type,codec_name,width,height,pix_fmt,r_frame_rate,sample_rate,channels',
      '-of',
      'json',
      file,
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(r.stdout).streams;
}

/**
 * What a clip is: its streams, its picture's size and frames, its colour, and what plays (pictures and sound decoded).
 */
function facts(file: string) {
  return {
    streams: streams(file),
    probe: probe(file),
    colour: colourName(colourAt(file, 0.1)),
    played: playedContent(file),
  };
}

/** The clips of cuts 2 and 3 made in-process (no queue), to compare with: made once. */
let reference: Promise<Record<number, ReturnType<typeof facts>>> | undefined;
function inProcessClips(): Promise<Record<number, ReturnType<typeof facts>>> {
  reference ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-qc-local-'));
    const files: Record<number, string> = {};
    const s = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_RENDER_WAIT_MS: '1500',
    });
    try {
      const conforms = await conformer(s.client);
      await untilDone(s.client, await call(s.client, other(), conforms), conforms);
      const id = await renderingWithCutsReady(s.client, conforms);
      for (const cut of [2, 3]) files[cut] = await clipOf(s.client, id, cut, dir, 'local');
    } finally {
      service.reset();
      await s.close();
    }
    // Looked at once the voiceover was let go: ffprobe and ffmpeg run synchronously here, and would stop the test
    // service (in this process) trickling it meanwhile.
    return { 2: facts(files[2]!), 3: facts(files[3]!) };
  })();
  return reference;
}

/** The clip is the cut's, as long as the cut, and plays as the in-process one does. */
function expectSameClip(file: string, cut: number, inProcess: ReturnType<typeof facts>): void {
  const got = facts(file);
  const [colour, frames] = CUTS[cut]!;
  expect(got.probe).toMatchObject({ width: 640, height: 360 });
  expect(Math.abs(got.probe.videoFrames - frames)).toBeLessThanOrEqual(1);
  expect(Math.abs(got.probe.duration - frames / 25)).toBeLessThan(0.1);
  expect(got.colour).toBe(colour);
  expect(got).toEqual(inProcess);
}

async function worker(cacheDir: string, extra: Record<string, string> = {}): Promise<WorkerProcess> {
  const w = await startWorker({
    CUTROOM_QUEUE_URL: redis.url,
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_LOG_LEVEL: 'debug',
    CUTROOM_WORKER_CONCURRENCY: '2',
    ...extra,
  });
  cleanup.push(() => w.stop());
  return w;
}

describe("a cut's clip while its preview renders on a worker", () => {
  it("a shared cache dir: any replica makes a ready cut's clip from its segment, the same as in-process", async () => {
    const inProcess = await inProcessClips();
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-qc-shared-'));
    const w = await worker(cacheDir);
    const server = async () => {
      const s = await spawnServer({
        VJ_API_KEY: service.apiKey,
        VJ_API_URL: service.url,
        CUTROOM_CACHE_DIR: cacheDir,
        CUTROOM_QUEUE_URL: redis.url,
        CUTROOM_RENDER_WAIT_MS: '1500',
        CUTROOM_LOG_LEVEL: 'debug',
      });
      cleanup.push(() => s.close());
      return s;
    };
    const [a, b]: Spawned[] = [await server(), await server()];
    const conforms = await conformer(a.client);
    await untilDone(a.client, await call(a.client, other(), conforms), conforms);
    const id = await renderingWithCutsReady(a.client, conforms);
    // Everything asked while it renders (the voiceover held): nothing here blocks this process, whose test service
    // trickles the voiceover; what the clips are is looked at once it is let go.
    // Cut 3 from the replica that started the preview, cut 2 from one that never heard of it, both while it renders.
    const fromA = await clipOf(a.client, id, 3, cacheDir, 'a');
    const fromB = await clipOf(b.client, id, 2, cacheDir, 'b');
    expect(structured(await call(a.client, { preview_id: id }, conforms)).status).toBe('rendering');
    // Made once, into the preview's folder, and reused by the other replica (the same bytes).
    const folder = join(cacheDir, 'previews', id);
    expect(existsSync(join(folder, 'cut-2.mp4')) && existsSync(join(folder, 'cut-3.mp4'))).toBe(true);
    const reusedB = await clipOf(a.client, id, 2, cacheDir, 'a');
    // Two replicas asking for the same cut at once: one clip each, whole, the same.
    const [x, y] = await Promise.all([clipOf(a.client, id, 4, cacheDir, 'a'), clipOf(b.client, id, 4, cacheDir, 'b')]);
    // A cut that is not rendered (there is no tenth): a clear answer, and the replica serves on.
    await expect(b.client.readResource({ uri: `cutroom://previews/${id}/cuts/9.mp4` })).rejects.toThrow(
      /that cut is not rendered yet/,
    );
    expect(await clipOf(b.client, id, 3, cacheDir, 'b-again')).toBeTruthy();
    expect(structured(await call(a.client, { preview_id: id }, conforms)).status).toBe('rendering');
    service.reset();
    const done = await untilDone(a.client, await call(a.client, { preview_id: id }, conforms), conforms).catch(
      (err: Error) => {
        throw new Error(`${err.message}\n${w.stderr().slice(-4000)}\n${a.stderr().slice(-3000)}`);
      },
    );
    expect(structured(done).status).toBe('done');
    expectSameClip(fromA, 3, inProcess[3]!);
    expectSameClip(fromB, 2, inProcess[2]!);
    const sha = (f: string) =>
      createHash('sha256')
        .update(spawnSync('cat', [f]).stdout)
        .digest('hex');
    expect(sha(reusedB)).toBe(sha(fromB));
    expect(sha(x)).toBe(sha(y));
    expect(probe(x)).toMatchObject({ width: 640, height: 360 });
    expect(Math.abs(probe(x).videoFrames - 25)).toBeLessThanOrEqual(1);
    expect(colourName(colourAt(x, 0.1))).toBe('yellow');
    // The worker made the preview; the clips were the servers' (the worker made only the first, beside its segment).
    expect(w.stderr()).toMatch(new RegExp(`started preview ${id}`));
    expect(b.stderr() + a.stderr()).not.toMatch(/\n\[stdout/);
  }, 600_000);

  it('an object store: the worker makes the clip on asking and puts it there; replicas with their own cache dirs serve it', async () => {
    const inProcess = await inProcessClips();
    const workerDir = mkdtempSync(join(tmpdir(), 'cutroom-qc-worker-'));
    const w = await worker(workerDir, { CUTROOM_S3_ENDPOINT: endpoint, ...S3_ENV });
    const server = async (dir: string) => {
      const srv = await startHttpServer({
        VJ_BACKEND: 'remote',
        VJ_API_URL: service.url,
        CUTROOM_CACHE_DIR: dir,
        CUTROOM_QUEUE_URL: redis.url,
        CUTROOM_S3_ENDPOINT: endpoint,
        CUTROOM_RENDER_WAIT_MS: '1500',
        CUTROOM_LOG_LEVEL: 'debug',
        ...S3_ENV,
      });
      cleanup.push(() => srv.stop());
      const client = await connectHttp(srv.url, { 'x-api-key': service.apiKey });
      cleanup.push(() => client.close());
      return { srv, client, dir };
    };
    const a = await server(mkdtempSync(join(tmpdir(), 'cutroom-qc-a-')));
    const b = await server(mkdtempSync(join(tmpdir(), 'cutroom-qc-b-')));
    // A failure says what the processes said (a server that ended, a worker that failed).
    const said = () =>
      [
        ['worker', w.stderr()],
        ['a', a.srv.stderr()],
        ['b', b.srv.stderr()],
      ]
        .map(
          ([n, t]) =>
            `--- ${n} (exit ${n === 'a' ? a.srv.proc.exitCode : n === 'b' ? b.srv.proc.exitCode : w.proc.exitCode}):\n${t!.slice(-2500)}`,
        )
        .join('\n');
    try {
      const conforms = await conformer(a.client);
      await untilDone(a.client, await call(a.client, other(), conforms), conforms);
      const id = await renderingWithCutsReady(a.client, conforms);
      // (Every read over HTTP first, the clips looked at after: ffprobe and ffmpeg run synchronously here, and a
      // client blocked longer than the server's keep-alive finds its connection closed.)
      const fromA = await clipOf(a.client, id, 3, a.dir, 'a');
      const fromB = await clipOf(b.client, id, 2, b.dir, 'b');
      expect(structured(await call(a.client, { preview_id: id }, conforms)).status).toBe('rendering');
      // Each replica asks once more for the other's cut: the store already has it.
      const againB = await clipOf(b.client, id, 3, b.dir, 'b');
      const againA = await clipOf(a.client, id, 2, a.dir, 'a-again');
      await expect(b.client.readResource({ uri: `cutroom://previews/${id}/cuts/9.mp4` })).rejects.toThrow(
        /that cut is not rendered yet/,
      );
      service.reset();
      const done = await untilDone(a.client, await call(a.client, { preview_id: id }, conforms), conforms);
      expect(structured(done).status).toBe('done');
      // Once done, a cut's clip made meanwhile comes with the finished preview.
      const doneB = await clipOf(b.client, id, 2, b.dir, 'b-done');
      // Made by the worker, which alone holds the segments.
      expect(w.stderr()).toMatch(/cut 4's clip put in the object store/);
      expect(w.stderr()).toMatch(/cut 3's clip put in the object store/);
      expectSameClip(fromA, 3, inProcess[3]!);
      expectSameClip(fromB, 2, inProcess[2]!);
      expect(facts(againB)).toEqual(facts(fromA));
      expect(facts(againA)).toEqual(facts(fromB));
      expect(facts(doneB)).toEqual(facts(fromB));
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${said()}`, { cause: err });
    }
  }, 600_000);
});
