// Issue 35: the job queue. A real redis-server on a free loopback port, real `cutroom worker` processes, the built
// server over stdio with CUTROOM_QUEUE_URL, the media like users' (bench/mix.mjs: a 720p moving picture with speech,
// served by the test service behind signed links).
//
// 1. Throughput: BENCH_QUEUE_PREVIEWS (8) new previews asked at once (each 20 s: 4 cuts of 5 s, 640x360, 25 fps,
//    every cut a range no other preview has, so nothing is reused), run by 1 worker and by 2 workers (each one job
//    at a time), and by the server alone without a queue (CUTROOM_MAX_FFMPEG 2) for scale: previews per minute.
// 2. The queue's own cost per job: the same preview asked again (the worker finds it made, as the server alone
//    does), queued against in-process, in turn A B A B; what the queue adds is the difference, pair by pair.
//    Target: at most 50 ms per job.
// BENCH_QUEUE_ONLY=N runs one batch with N workers (0: no queue) and stops, to be timed as a whole process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeService } from '../test/fixtures/service.mjs';
import { BIN, connect, stats } from './lib.mjs';
import { media } from './mix.mjs';

const PREVIEWS = Number(process.env.BENCH_QUEUE_PREVIEWS ?? 8);
const PAIRS = Number(process.env.BENCH_QUEUE_PAIRS ?? 30);

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** A child that is ready once its output says `ready`; stopped (and waited for) by stop(). */
function child(cmd, args, env, ready) {
  const proc = spawn(cmd, args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} did not start in 20 s:\n${out}`)), 20_000);
    const on = (d) => {
      out += d;
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout.on('data', on);
    proc.stderr.on('data', on);
    proc.once('exit', (code) => reject(new Error(`${cmd} exited ${code}:\n${out}`)));
  });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(t);
  };
  return started.then(() => ({ proc, stop }));
}

export async function run() {
  const { video } = media();
  const service = await new FakeService().start();
  const project = service.addProject({ name: 'queue bench' });
  service.media.set('talk-720p', video);
  const asset = service.addAsset(project.id, { keyname: 'talk-720p', asset_type: 'generated_video', ext: 'mp4' }).id;
  const port = await freePort();
  const redis = await child(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {},
    /Ready to accept connections/i,
  );
  const url = `redis://127.0.0.1:${port}`;
  const dirs = [];
  const cacheDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'cutroom-bench-queue-'));
    dirs.push(d);
    return d;
  };
  const serverEnv = (cache, queue) => ({
    VJ_API_KEY: service.apiKey,
    VJ_API_URL: service.url,
    CUTROOM_CACHE_DIR: cache,
    CUTROOM_LOG_LEVEL: 'error',
    CUTROOM_RENDER_WAIT_MS: '55000',
    ...(queue ? { CUTROOM_QUEUE_URL: url } : {}),
  });
  const worker = (cache) =>
    child(
      process.execPath,
      [BIN, 'worker'],
      { CUTROOM_QUEUE_URL: url, CUTROOM_CACHE_DIR: cache, CUTROOM_LOG_LEVEL: 'info', CUTROOM_WORKER_CONCURRENCY: '1' },
      /cutroom worker: running/,
    );
  // Every preview of the run its own cut ranges (the source is 75 s): no segment of one serves another.
  let nth = 0;
  const edit = () => {
    const n = nth++;
    return {
      project_id: project.id,
      resolution: '640x360',
      fps: 25,
      clips: Array.from({ length: 4 }, (_, k) => ({
        asset_id: asset,
        start: +((k * 17 + n * 0.37) % 65).toFixed(2),
        end: +(((k * 17 + n * 0.37) % 65) + 5).toFixed(2),
      })),
    };
  };
  const preview = async (client, args) => {
    let r = await client.callTool({ name: 'preview_edit', arguments: args }, { timeout: 600_000 });
    while (!r.isError && r.structuredContent?.status === 'rendering')
      r = await client.callTool(
        { name: 'preview_edit', arguments: { preview_id: r.structuredContent.preview_id } },
        { timeout: 600_000 },
      );
    if (r.isError) throw new Error(r.content[0].text);
    return r.structuredContent;
  };
  const stops = [redis.stop];
  try {
    console.log(
      `${PREVIEWS} new previews at once, each 20 s (4 cuts of 5 s from a 720p moving picture with speech) -> 640x360`,
    );
    /** PREVIEWS new previews asked at once: previews per minute, from the first ask to the last answer. */
    const batch = async (workers) => {
      const cache = cacheDir();
      const ws = [];
      for (let i = 0; i < workers; i++) ws.push(await worker(cache));
      const { client } = await connect(serverEnv(cache, workers > 0));
      try {
        await preview(client, edit()); // warm: the source probed, ffmpeg's first start
        const t = performance.now();
        await Promise.all(Array.from({ length: PREVIEWS }, () => preview(client, edit())));
        return (PREVIEWS * 60_000) / (performance.now() - t);
      } finally {
        await client.close();
        for (const w of ws) await w.stop();
      }
    };
    // One batch alone (BENCH_QUEUE_ONLY=0|1|2 workers), for timing the whole process from outside (its CPU included).
    if (process.env.BENCH_QUEUE_ONLY !== undefined) {
      console.log(
        `previews per minute, ${process.env.BENCH_QUEUE_ONLY} worker(s): ${(await batch(Number(process.env.BENCH_QUEUE_ONLY))).toFixed(1)}`,
      );
      return;
    }
    const rates = { 0: [], 1: [], 2: [] };
    for (let round = 0; round < Number(process.env.BENCH_REPS ?? 2); round++)
      for (const n of [1, 2, 0]) rates[n].push(await batch(n));
    const f = (xs) => `median ${stats(xs).median.toFixed(1)} (${xs.map((x) => x.toFixed(1)).join(', ')})`;
    console.log(`previews per minute, 1 worker:          ${f(rates[1])}`);
    console.log(`previews per minute, 2 workers:         ${f(rates[2])}`);
    console.log(`previews per minute, no queue (server): ${f(rates[0])}`);

    // 2. The queue's own cost: the same made preview asked again, queued (1 worker) against in-process.
    const cache = cacheDir();
    const w = await worker(cache);
    stops.push(w.stop);
    const queued = await connect(serverEnv(cache, true));
    const local = await connect(serverEnv(cache, false));
    const args = edit();
    await preview(local.client, args);
    await preview(queued.client, args);
    const a = [];
    const b = [];
    const diff = [];
    for (let i = 0; i < PAIRS; i++) {
      let t = performance.now();
      const x = await preview(local.client, args);
      a.push(performance.now() - t);
      t = performance.now();
      const y = await preview(queued.client, args);
      b.push(performance.now() - t);
      if (x.preview_id !== y.preview_id) throw new Error('the queued preview is not the one made in-process');
      diff.push(b.at(-1) - a.at(-1));
    }
    await queued.client.close();
    await local.client.close();
    const ms = (s) => `median ${s.median.toFixed(1)} ms (p90 ${s.p90.toFixed(1)})`;
    console.log(`a made preview asked again, in-process: ${ms(stats(a))}`);
    console.log(`the same through the queue and a worker: ${ms(stats(b))}`);
    console.log(`=> the queue's cost per job, pair by pair: ${ms(stats(diff))}, n=${PAIRS} (target <= 50 ms)`);
  } finally {
    for (const s of stops.reverse()) await s().catch(() => {});
    await service.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
