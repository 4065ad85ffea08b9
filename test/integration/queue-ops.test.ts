// Running the job queue (issue 35, "Run it"): the HTTP server's /metrics and its log line of the queue, a worker's
// /healthz and --help. A real redis-server on a free loopback port, the built server and real workers as child
// processes, real HTTP requests to 127.0.0.1.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { BIN, ROOT, baseEnv } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { queueSuite, type WorkerProcess } from '../helpers/queue.js';

const suite = queueSuite();

const fresh = () => mkdtempSync(join(tmpdir(), 'cutroom-queue-ops-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function server(cacheDir: string, extra: Record<string, string> = {}): Promise<HttpServer> {
  const s = await startHttpServer({
    VJ_API_KEY: suite.service.apiKey,
    VJ_API_URL: suite.service.url,
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_QUEUE_URL: suite.redis.url,
    ...extra,
  });
  suite.defer(() => s.stop());
  return s;
}
async function worker(
  cacheDir: string,
  extra: Record<string, string> = {},
): Promise<WorkerProcess & { health: string }> {
  const w = await suite.worker({
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_WORKER_CONCURRENCY: '1',
    CUTROOM_WORKER_LOCK_MS: '3000',
    CUTROOM_WORKER_HEALTH_PORT: '0',
    ...extra,
  });
  const started = Date.now();
  let m: RegExpExecArray | null;
  // (30 s: a liveness bound for a loaded machine.)
  while (!(m = /health on (http:\/\/127\.0\.0\.1:\d+\/healthz)/.exec(w.stderr())) && Date.now() - started < 30_000)
    await sleep(50);
  if (!m) throw new Error(`the worker said nowhere where its /healthz is:\n${w.stderr()}`);
  return Object.assign(w, { health: m[1]! });
}
/** A queue of the test's own on the same Redis (BullMQ's names and prefix as cutroom's: jobs/connection.ts). */
function testQueue(): Queue {
  const q = new Queue('media', { connection: { url: suite.redis.url, maxRetriesPerRequest: null }, prefix: 'cutroom' });
  suite.defer(() => q.close());
  return q;
}

/** The samples of a text exposition, as "name{labels}" -> value; and each family's TYPE. */
function parse(text: string): { samples: Map<string, number>; types: Map<string, string> } {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const t = /^# TYPE (\S+) (gauge|counter|histogram|summary|untyped)$/.exec(line);
    if (t) types.set(t[1]!, t[2]!);
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line of the text format: ${line}`);
    samples.set(m[1]!, m[2] === '+Inf' ? Infinity : Number(m[2]));
  }
  return { samples, types };
}

async function scrape(
  s: HttpServer,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  type: string | null;
  text: string;
  samples: Map<string, number>;
  types: Map<string, string>;
}> {
  const r = await fetch(`${s.base}/metrics`, { headers });
  const text = await r.text();
  return {
    status: r.status,
    type: r.headers.get('content-type'),
    text,
    ...(r.status === 200 ? parse(text) : { samples: new Map(), types: new Map() }),
  };
}

const hex40 = (n: number) => n.toString(16).padStart(40, '0');
const until = async (what: string, check: () => Promise<boolean>, ms = 30_000) => {
  const t = Date.now();
  while (!(await check())) {
    if (Date.now() - t > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(200);
  }
};

describe('/metrics on the HTTP server', () => {
  it("counts waiting, delayed and failed jobs by kind, the oldest waiting job's age, and completed previews' durations, in the text format", async () => {
    const cache = fresh();
    const s = await server(cache, { CUTROOM_LOG_LEVEL: 'info', CUTROOM_QUEUE_LOG_MS: '1000' });
    const q = testQueue();
    // No worker yet: two jobs wait, the first a second longer.
    await q.add('preview', { payload: '{}' }, { jobId: `preview-${hex40(1)}` });
    await sleep(1200);
    await q.add('inspect', { payload: '{}' }, { jobId: `inspect-${hex40(2)}` });
    const m = await scrape(s);
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.samples.get('cutroom_queue_up')).toBe(1);
    expect(m.samples.get('cutroom_queue_jobs{kind="preview",state="waiting"}')).toBe(1);
    expect(m.samples.get('cutroom_queue_jobs{kind="inspect",state="waiting"}')).toBe(1);
    expect(m.samples.get('cutroom_queue_oldest_waiting_seconds')).toBeGreaterThanOrEqual(1);
    expect(m.samples.get('cutroom_queue_oldest_waiting_seconds')).toBeLessThan(30);
    expect(m.types.get('cutroom_queue_job_duration_seconds')).toBe('histogram');
    // A job delayed (as a retry, or one put back for its caller's share) is not running either: queued a minute ago.
    await q.add(
      'preview',
      { payload: '{}' },
      { jobId: `preview-${hex40(3)}`, delay: 600_000, timestamp: Date.now() - 60_000 },
    );
    const d = await scrape(s);
    expect(d.samples.get('cutroom_queue_jobs{kind="preview",state="delayed"}')).toBe(1);
    expect(d.samples.get('cutroom_queue_oldest_waiting_seconds')).toBeGreaterThanOrEqual(60);
    // The log says it too, in one line, at the interval (CUTROOM_QUEUE_LOG_MS).
    await until(
      'a log line of the queue',
      async () => /job queue: 2 waiting \(the oldest for \d+ s\), 1 delayed, 0 running, 0 failed/.test(s.stderr()),
      5000,
    );
    await q.obliterate({ force: true });

    // A worker: a job it cannot read fails for good (one try), and a real preview completes.
    await worker(cache);
    await q.add('inspect', { payload: 'not json' }, { jobId: `inspect-${hex40(4)}`, attempts: 1 });
    const client = await connectHttp(s.url, { authorization: `Bearer ${suite.service.apiKey}` });
    suite.defer(() => client.close());
    const r = await client.callTool(
      {
        name: 'preview_edit',
        arguments: {
          project_id: suite.projectId,
          resolution: '320x180',
          fps: 25,
          clips: [{ asset_id: suite.ids.red, start: 0, end: 1 }],
        },
      },
      { timeout: 120_000 },
    );
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect((r.structuredContent as { status: string }).status).toBe('done');
    await until(
      'the completed preview in the histogram',
      async () => ((await scrape(s)).samples.get('cutroom_queue_job_duration_seconds_count{kind="preview"}') ?? 0) >= 1,
    );
    const after = await scrape(s);
    expect(after.samples.get('cutroom_queue_jobs{kind="inspect",state="failed"}')).toBe(1);
    expect(after.samples.get('cutroom_queue_jobs_failed_total{kind="inspect"}')).toBe(1);
    expect(after.samples.get('cutroom_queue_oldest_waiting_seconds')).toBe(0);
    // A histogram's buckets are cumulative and end in +Inf = _count; its sum is the time the worker took.
    const buckets = [...after.samples]
      .filter(([k]) => k.startsWith('cutroom_queue_job_duration_seconds_bucket{kind="preview"'))
      .map(([, v]) => v);
    expect(buckets.length).toBeGreaterThan(5);
    expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
    expect(after.samples.get('cutroom_queue_job_duration_seconds_bucket{kind="preview",le="+Inf"}')).toBe(1);
    const sum = after.samples.get('cutroom_queue_job_duration_seconds_sum{kind="preview"}')!;
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(120);
    expect(after.samples.get('cutroom_queue_job_wait_seconds_count{kind="preview"}')).toBe(1);
    expect(s.stderr()).not.toContain(suite.service.apiKey);
  }, 180_000);

  it('two replicas report the same queue (every replica sees the whole of it: never to be summed)', async () => {
    const [a, b] = await Promise.all([server(fresh()), server(fresh())]);
    const q = testQueue();
    await q.obliterate({ force: true });
    for (let i = 0; i < 3; i++) await q.add('transcribe', { payload: '{}' }, { jobId: `transcribe-${hex40(10 + i)}` });
    const jobs = (m: Awaited<ReturnType<typeof scrape>>) =>
      [...m.samples].filter(([k]) => k.startsWith('cutroom_queue_jobs{'));
    const [ma, mb] = await Promise.all([scrape(a), scrape(b)]);
    expect(jobs(ma).filter(([, n]) => n > 0)).toEqual([['cutroom_queue_jobs{kind="transcribe",state="waiting"}', 3]]);
    // Every kind in every state is written, 0 included: an alert on waiting previews sees a 0, not no series.
    expect(jobs(ma)).toHaveLength(4 * 4);
    expect(ma.samples.get('cutroom_queue_jobs{kind="preview",state="waiting"}')).toBe(0);
    expect(ma.samples.get('cutroom_queue_jobs_failed_total{kind="render"}')).toBe(0);
    expect(jobs(mb)).toEqual(jobs(ma));
    await q.obliterate({ force: true });
  }, 60_000);

  it("without a queue it answers with the server's own figures and no queue metric; a token, when set, is asked for", async () => {
    const s = await startHttpServer({
      VJ_API_KEY: suite.service.apiKey,
      VJ_API_URL: suite.service.url,
      CUTROOM_CACHE_DIR: fresh(),
      CUTROOM_HTTP_TOKEN: 'operator-token-0123456789',
      CUTROOM_METRICS_TOKEN: 'metrics-token-0123456789',
    });
    suite.defer(() => s.stop());
    expect((await scrape(s)).status).toBe(401);
    // A caller's service key is not a token for /metrics.
    expect((await scrape(s, { authorization: `Bearer ${suite.service.apiKey}` })).status).toBe(401);
    for (const token of ['metrics-token-0123456789', 'operator-token-0123456789']) {
      const m = await scrape(s, { authorization: `Bearer ${token}` });
      expect(m.status).toBe(200);
      expect(
        m.samples.get(
          'cutroom_info{version="' +
            JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version +
            '",backend="remote",queue="none"}',
        ),
      ).toBe(1);
      expect(m.samples.get('cutroom_http_calls_in_flight')).toBe(0);
      expect(m.text).not.toMatch(/cutroom_queue/);
    }
    // The gates before it hold as for /mcp: a page of another origin is refused.
    expect(
      (await scrape(s, { authorization: 'Bearer metrics-token-0123456789', origin: 'https://evil.example' })).status,
    ).toBe(403);
    expect(
      (
        await fetch(`${s.base}/metrics`, {
          method: 'POST',
          headers: { authorization: 'Bearer metrics-token-0123456789' },
        })
      ).status,
    ).toBe(405);
  }, 60_000);
});

describe("a worker's /healthz and --help", () => {
  it('answers 200 with Redis reachable, 503 while Redis is stopped or hung, and 200 again once it is back', async () => {
    const cache = fresh();
    const w = await worker(cache);
    const s = await server(cache, { CUTROOM_LOG_LEVEL: 'info', CUTROOM_QUEUE_LOG_MS: '1000' });
    const get = async () => {
      const r = await fetch(w.health);
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const ok = await get();
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      status: 'ok',
      redis: 'ready',
      redis_answers: true,
      jobs_active: 0,
      concurrency: 1,
      draining: false,
    });
    expect(typeof ok.body.uptime_s).toBe('number');
    expect((await fetch(w.health.replace('/healthz', '/metrics'))).status).toBe(404);
    // No native addon in a worker (msgpackr's optional accelerator, which npm installs, is kept off): its memory map.
    expect(
      readFileSync(`/proc/${w.pid}/maps`, 'utf8')
        .split('\n')
        .filter((l) => /\.node$/.test(l)),
    ).toEqual([]);

    // Hung (SIGSTOP: connections open, nothing answers): the probe still answers, within its bound.
    suite.redis.proc().kill('SIGSTOP');
    try {
      const t = Date.now();
      const hung = await get();
      expect(hung.status).toBe(503);
      expect(hung.body).toMatchObject({ status: 'redis unreachable', redis_answers: false });
      expect(Date.now() - t).toBeLessThan(3000);
      const m = await scrape(s);
      expect(m.status).toBe(200);
      expect(m.samples.get('cutroom_queue_up')).toBe(0);
      await until(
        'the log line saying the queue could not be read',
        async () => /job queue: its depth could not be read/.test(s.stderr()),
        10_000,
      );
    } finally {
      suite.redis.proc().kill('SIGCONT');
    }
    await until('200 once Redis answers again', async () => (await get()).status === 200, 10_000);

    // Gone (killed; an empty one started on the same port after).
    await suite.redis.stop();
    expect((await get()).status).toBe(503);
    await suite.redis.restart();
    await until('200 once Redis is back', async () => (await get()).status === 200, 15_000);
    expect(w.stderr()).not.toMatch(/\[stdout/);
  }, 90_000);

  it('says 503 "draining" while SIGTERM lets its jobs finish', async () => {
    const cache = fresh();
    const w = await worker(cache, { CUTROOM_WORKER_DRAIN_MS: '3000' });
    const s = await server(cache);
    const client = await connectHttp(s.url, { authorization: `Bearer ${suite.service.apiKey}` });
    suite.defer(() => client.close());
    const preview = (end: number) =>
      client.callTool(
        {
          name: 'preview_edit',
          arguments: {
            project_id: suite.projectId,
            resolution: '320x180',
            fps: 25,
            clips: [{ asset_id: suite.ids.red, start: 0, end }],
            overlays: [{ asset_id: suite.ids.voice, at: 0, until: 1 }],
          },
        },
        { timeout: 60_000 },
      );
    // Once with the media as served (the server has probed it), then with the voiceover held (trickling until the
    // service is reset after the test): the worker's job waits for it, and stays running however slow the machine.
    expect((await preview(1)).isError).toBeFalsy();
    suite.service.fail(
      { trickle: suite.service.gate() },
      { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
    );
    void preview(1.5).catch(() => {});
    await until(
      'the worker running the job',
      async () => ((await (await fetch(w.health)).json()) as { jobs_active: number }).jobs_active === 1,
      30_000,
    );
    w.proc.kill('SIGTERM');
    await until(
      '503 draining',
      async () => {
        const r = await fetch(w.health).catch(() => undefined);
        return r?.status === 503 && ((await r.json()) as { status: string }).status === 'draining';
      },
      30_000,
    );
  }, 90_000);

  it('--help names every setting a worker reads, and each it names is read by the configuration', () => {
    const r = spawnSync(process.execPath, [BIN, 'worker', '--help'], { env: baseEnv({}), encoding: 'utf8' });
    expect(r.status).toBe(0);
    const help = r.stdout;
    const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
    const read = new Set([...config.matchAll(/env\.([A-Z0-9_]+)/g)].map((m) => m[1]!));
    const named = [...help.matchAll(/\b((?:CUTROOM|FFMPEG|FFPROBE|VJ)_[A-Z0-9_]*[A-Z0-9])(?![A-Z0-9_])/g)].map(
      (m) => m[1]!,
    );
    for (const v of named) expect(read, `${v} is named by --help`).toContain(v);
    for (const v of [...read].filter((v) => /^CUTROOM_WORKER_/.test(v))) expect(named, `${v} is read`).toContain(v);
    for (const v of ['CUTROOM_QUEUE_URL', 'CUTROOM_CACHE_DIR', 'CUTROOM_LOG_LEVEL', 'FFMPEG_PATH'])
      expect(named).toContain(v);
  });
});
