// Issue 12's targets: Streamable HTTP adds at most 1 ms to list_projects' p50 over stdio (paired rounds through
// the same service, in one run), and 50 concurrent callers, each with their own key, against two replicas
// (compared with one, in the same run). Beside cutroom, the same rounds against a bare SDK server with one tool
// (bare-server.mjs) show what HTTP costs on this machine before cutroom adds anything.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, ROOT, connect, fmt, stats } from './lib.mjs';

const BARE = join(ROOT, 'bench/bare-server.mjs');

const KEY = 'bench-key-123456';
const ROUNDS = 400;
const WARMUP = 50;
const CALLERS = 50;
const CALLS_PER_CALLER = 20;

async function startService(tenants) {
  const child = spawn(process.execPath, [join(ROOT, 'bench/service-process.mjs'), KEY, String(tenants)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = await once(child.stdout, 'data');
  return { url: String(line).trim(), stop: () => child.stdin.end() };
}

async function startHttp(env, script = BIN) {
  const child = spawn(process.execPath, [script, '--http', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`http server exited ${code}: ${err}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function httpClient(url, key) {
  const client = new Client({ name: 'cutroom-bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

const listArgs = { name: 'list_projects', arguments: { limit: 10 } };
const check = (r) => {
  if (r.isError) throw new Error(`tool failed: ${JSON.stringify(r.content)}`);
};
async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** 50 callers at once, each with their own key, each making calls back to back; replicas taken in turn. */
async function crowd(urls) {
  const clients = await Promise.all(
    Array.from({ length: CALLERS }, (_, i) => httpClient(urls[i % urls.length], `bench-tenant-${i}`)),
  );
  // One call each first: every caller's context exists before the clock starts.
  await Promise.all(clients.map(async (c) => check(await c.callTool(listArgs))));
  const latencies = [];
  const t = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let k = 0; k < CALLS_PER_CALLER; k++)
        latencies.push(await timed(async () => check(await c.callTool(listArgs))));
    }),
  );
  const wall = performance.now() - t;
  await Promise.all(clients.map((c) => c.close()));
  return { wall, throughput: (CALLERS * CALLS_PER_CALLER) / (wall / 1000), ...stats(latencies) };
}

export async function run() {
  const service = await startService(CALLERS);
  const env = { VJ_BACKEND: 'remote', VJ_API_URL: service.url, CUTROOM_LOG_LEVEL: 'error' };

  // 1. list_projects over stdio and over HTTP, cutroom's and the bare server's, in turn: each round measures all four.
  const { client: stdio } = await connect({ ...env, VJ_API_KEY: KEY });
  const a = await startHttp({ ...env, CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-bench-http-')) });
  const http = await httpClient(a.url, KEY);
  const bareStdio = new Client({ name: 'cutroom-bench', version: '1.0.0' });
  await bareStdio.connect(new StdioClientTransport({ command: process.execPath, args: [BARE], stderr: 'ignore' }));
  const bare = await startHttp({}, BARE);
  const bareHttp = await httpClient(bare.url, KEY);
  const t = { stdio: [], http: [], diff: [], bareStdio: [], bareHttp: [], bareDiff: [] };
  for (let i = 0; i < ROUNDS + WARMUP; i++) {
    const s = await timed(async () => check(await stdio.callTool(listArgs)));
    const h = await timed(async () => check(await http.callTool(listArgs)));
    const bs = await timed(async () => check(await bareStdio.callTool(listArgs)));
    const bh = await timed(async () => check(await bareHttp.callTool(listArgs)));
    if (i < WARMUP) continue;
    t.stdio.push(s);
    t.http.push(h);
    t.diff.push(h - s);
    t.bareStdio.push(bs);
    t.bareHttp.push(bh);
    t.bareDiff.push(bh - bs);
  }
  await Promise.all([stdio.close(), http.close(), bareStdio.close(), bareHttp.close()]);
  bare.stop();
  const [s, h, d, bs, bh, bd] = [t.stdio, t.http, t.diff, t.bareStdio, t.bareHttp, t.bareDiff].map(stats);
  console.log(`list_projects over stdio:  median ${fmt(s.median)}  p90 ${fmt(s.p90)}`);
  console.log(`list_projects over HTTP:   median ${fmt(h.median)}  p90 ${fmt(h.p90)}`);
  console.log(
    `  => HTTP adds (median of paired differences): ${fmt(d.median)}; difference of medians ${fmt(h.median - s.median)} (target <= 1 ms)`,
  );
  console.log(`bare SDK server, one tool: stdio median ${fmt(bs.median)}, HTTP median ${fmt(bh.median)}`);
  console.log(
    `  => HTTP adds to the bare server: ${fmt(bd.median)}; cutroom's own share: ${fmt(d.median - bd.median)}`,
  );

  // 2. 50 concurrent callers: one replica, then two (same cache dir, callers spread over them), same run.
  const cache = mkdtempSync(join(tmpdir(), 'cutroom-bench-replicas-'));
  const b = await startHttp({ ...env, CUTROOM_CACHE_DIR: cache });
  const one = await crowd([a.url]);
  const two = await crowd([a.url, b.url]);
  const line = (name, r) =>
    console.log(
      `${name}: ${CALLERS} callers x ${CALLS_PER_CALLER} calls in ${(r.wall / 1000).toFixed(2)} s, ${r.throughput.toFixed(0)} calls/s, latency median ${fmt(r.median)} p95 ${fmt(r.p95)}`,
    );
  line('one replica ', one);
  line('two replicas', two);
  console.log(
    `  => two replicas / one: throughput x${(two.throughput / one.throughput).toFixed(2)}, p95 x${(two.p95 / one.p95).toFixed(2)}`,
  );
  a.stop();
  b.stop();
  service.stop();
  return { http_adds_ms: d.median, bare_http_adds_ms: bd.median, two_over_one: two.throughput / one.throughput };
}
