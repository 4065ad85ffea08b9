// The safety net under every transport (issue 30, item 2): cutroom writes no message over 8 MiB. A service whose
// script is larger than that (its inputs' examples and its graph, 9 MiB each) makes both list_scripts and the
// script's resource answer too large: over stdio and over Streamable HTTP the official client gets an isError result
// and a JSON-RPC error that say how large the answer was and what to do, the server logs it, and the session goes on.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';

const NINE_MIB = 9 * 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), 'cutroom-bound-'));
let service: FakeService;
let projectId: string;
let scriptUri: string;
let stdio: Spawned;
let modern: Spawned;
let http: HttpServer;
let httpClient: Client;
let httpModern: Client;

beforeAll(async () => {
  service = await new FakeService().start();
  projectId = service.addProject({ name: 'huge script' }).id;
  const nodes = Array.from({ length: 9 }, (_, i) => ({
    id: `n${i}`,
    type: 'custom',
    data: { job: 'generate', name: `step ${i}`, data: 'p'.repeat(NINE_MIB / 9) },
  }));
  const script = service.addScript(projectId, { name: 'Huge', value: { nodes, edges: [] } }) as {
    id: string;
    inputs: { example: string }[];
  };
  script.inputs[0]!.example = 'e'.repeat(NINE_MIB);
  scriptUri = `vj://projects/${projectId}/scripts/${script.id}`;
  const env = { VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_CACHE_DIR: join(root, 'cache') };
  stdio = await spawnServer(env);
  modern = await spawnServer(env, { modern: true });
  http = await startHttpServer({ ...env, VJ_BACKEND: 'remote' });
  httpClient = await connectHttp(http.url, { 'x-api-key': service.apiKey });
  httpModern = new Client({ name: 'modern', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await httpModern.connect(
    new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { 'x-api-key': service.apiKey } } }),
  );
}, 60_000);
afterAll(async () => {
  await httpClient?.close();
  await httpModern?.close();
  await http?.stop();
  await stdio?.close();
  await modern?.close();
  await service?.stop();
});

const over =
  /^the answer to (tools\/call|resources\/read) was (\d+\.\d) MiB \((\d+) bytes\), over the (8\.0|1\.0) MiB one message may carry, so it was not sent: ask for less/;

/** `bound`: 8.0 (MiB) for a message, 1.0 for a server-sent event (what the Python SDK's client reads; issue 48). */
async function checkNet(client: Client, stderr: () => string, bound = '8.0'): Promise<void> {
  const listed = await client.callTool(
    { name: 'list_scripts', arguments: { project_id: projectId } },
    { timeout: 60_000 },
  );
  expect(listed.isError).toBe(true);
  expect(listed.structuredContent).toBeUndefined();
  const [, method, , bytes, said] = over.exec(textOf(listed)) ?? [];
  expect(method).toBe('tools/call');
  expect(said).toBe(bound);
  expect(Number(bytes)).toBeGreaterThan(NINE_MIB);

  const read = client.readResource({ uri: scriptUri }, { timeout: 60_000 });
  await expect(read).rejects.toThrow(
    new RegExp(
      `the answer to resources/read was \\d+\\.\\d MiB \\(\\d+ bytes\\), over the ${bound} MiB one message may carry`,
    ),
  );
  expect(stderr()).toMatch(
    /the answer to tools\/call \(id \S+\) was \d+\.\d MiB \(\d+ bytes\): answered with an error instead/,
  );
  expect(stderr()).toMatch(/the answer to resources\/read \(id \S+\) was \d+\.\d MiB/);

  // The session goes on.
  const projects = await client.callTool({ name: 'list_projects', arguments: {} });
  expect(projects.isError).toBeFalsy();
  expect(textOf(projects)).toContain('huge script');
}

describe('no message over 8 MiB', () => {
  it('over stdio: a tool answer too large is an isError result, a resource read a JSON-RPC error, and the session goes on', async () => {
    await checkNet(stdio.client, stdio.stderr);
    // Nothing the server wrote passed the bound.
    expect(Math.max(...stdio.stdoutLines().map((l) => Buffer.byteLength(l)))).toBeLessThanOrEqual(8 * 1024 * 1024);
  }, 120_000);

  it('over stdio with a client of the 2026-07-28 protocol', async () => {
    await checkNet(modern.client, modern.stderr);
  }, 120_000);

  it('over Streamable HTTP (answers streamed as SSE), and with a client of the 2026-07-28 protocol (answers as JSON)', async () => {
    await checkNet(httpClient, http.stderr, '1.0');
    await checkNet(httpModern, http.stderr);
  }, 120_000);
});
