// Issue 2's targets: a tool call adds well under a millisecond to the service's own round trip, connections to
// the service are reused, and the server answers its first request well under half a second after it starts.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Pool } from 'undici';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { ROOT, connect, fmt, stats, timeIt as timeRuns } from './lib.mjs';

const ROUNDS = 400;
const WARMUP = 50;
const timeIt = (n, fn) => timeRuns(n, fn, WARMUP);
const KEY = 'bench-key-123456';

async function startService() {
  const child = spawn(process.execPath, [join(ROOT, 'bench/service-process.mjs'), KEY], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = await once(child.stdout, 'data');
  return { url: String(line).trim(), stop: () => child.stdin.end() };
}

export async function run() {
  const service = await startService();
  const listArgs = { name: 'list_projects', arguments: { limit: 10 } };
  const check = (r) => {
    if (r.isError) throw new Error(`tool failed: ${JSON.stringify(r.content)}`);
  };

  // 1. The service's own round trip over a kept-alive connection, from another process.
  const pool = new Pool(service.url);
  const direct = await timeIt(ROUNDS, async () => {
    const r = await pool.request({ path: '/projects?limit=10', method: 'GET', headers: { 'x-api-key': KEY } });
    await r.body.text();
  });
  await pool.close();

  // 2. cutroom in this process over an in-memory transport: the service's round trip plus cutroom's own work
  //    (argument validation, the call, the shaping of the result, output validation), no stdio.
  const { createServer } = await import(join(ROOT, 'dist/server.js'));
  const { RemoteBackend } = await import(join(ROOT, 'dist/backend/remote.js'));
  const backend = new RemoteBackend({ baseUrl: service.url, apiKey: KEY, authHeader: 'x-api-key', timeoutMs: 30000 });
  const inproc = new Client({ name: 'bench', version: '1' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createServer({ backend }).connect(a);
  await inproc.connect(b);
  const inProcess = await timeIt(ROUNDS, async () => check(await inproc.callTool(listArgs)));
  const inProcessPing = await timeIt(ROUNDS, () => inproc.ping());
  await inproc.close();
  await backend.close();

  // 3. The built server over stdio, as a client runs it.
  const { client } = await connect({ VJ_API_KEY: KEY, VJ_API_URL: service.url, CUTROOM_LOG_LEVEL: 'error' });
  const viaStdio = await timeIt(ROUNDS, async () => check(await client.callTool(listArgs)));
  const ping = await timeIt(ROUNDS, () => client.ping());
  await client.close();

  // 4. Connection reuse: TCP connections the service saw while the built server made 100 calls.
  const serviceStats = async () => {
    const probe = new Pool(service.url);
    const r = await probe.request({ path: '/__stats', method: 'GET' });
    const body = await r.body.json();
    await probe.close();
    return body;
  };
  const { client: c2 } = await connect({ VJ_API_KEY: KEY, VJ_API_URL: service.url, CUTROOM_LOG_LEVEL: 'error' });
  const before = await serviceStats();
  for (let i = 0; i < 100; i++) check(await c2.callTool(listArgs));
  const after = await serviceStats();
  await c2.close();
  // Each stats probe opens one connection of its own.
  const serverConnections = after.connections - before.connections - 1;

  // 5. Start to first answer: spawn, initialize, tools/list. For scale: a bare `node -e ''`.
  const starts = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    const { client: c } = await connect({ VJ_API_KEY: KEY, VJ_API_URL: service.url, CUTROOM_LOG_LEVEL: 'error' });
    await c.listTools();
    starts.push(performance.now() - t);
    await c.close();
  }
  const bare = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '']);
    bare.push(performance.now() - t);
  }
  service.stop();

  const own = inProcess.median - direct.median - inProcessPing.median;
  const s = stats(starts);
  console.log(`service round trip, direct (keep-alive):         median ${fmt(direct.median)}  p90 ${fmt(direct.p90)}`);
  console.log(
    `list_projects in-process (in-memory transport):  median ${fmt(inProcess.median)}  p90 ${fmt(inProcess.p90)}`,
  );
  console.log(`  ping in-process (SDK dispatch only):           median ${fmt(inProcessPing.median)}`);
  console.log(`  => cutroom's own work per call:                ${fmt(own)}`);
  console.log(
    `list_projects over stdio:                        median ${fmt(viaStdio.median)}  p90 ${fmt(viaStdio.p90)}`,
  );
  console.log(`  ping over stdio (transport only):              median ${fmt(ping.median)}`);
  console.log(
    `  => added to the service round trip over stdio: ${fmt(viaStdio.median - direct.median - ping.median)} beyond one stdio ping`,
  );
  console.log(`TCP connections the server opened for 100 calls: ${serverConnections}`);
  console.log(`start to first answer (spawn, initialize, tools/list): median ${fmt(s.median)}  max ${fmt(s.max)}`);
  console.log(`bare node spawn, for scale:                      median ${fmt(stats(bare).median)}`);
  return { own_ms: own, start_median_ms: s.median };
}
