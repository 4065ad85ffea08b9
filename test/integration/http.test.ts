// cutroom hosted over Streamable HTTP, through the built server and the SDK client's HTTP transport: each caller's
// key kept apart (projects, previews), the gates (401, 403 for Origin and Host, 413), progress of a preview, two
// replicas answering alternate calls without sticky sessions, SIGTERM letting a call in flight finish, and the
// local backend only behind its token.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerId } from '../../src/http/callers.js';
import { FakeService } from '../fixtures/service.mjs';
import { BIN, baseEnv, textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';
import { waitFor } from '../helpers/wait.js';

type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string; uri?: string }[];
};
const call = async (c: Client, name: string, args: Record<string, unknown>, opts: Record<string, unknown> = {}) =>
  (await c.callTool({ name, arguments: args }, { timeout: 120_000, ...opts })) as Result;
const keyB = 'tenant-b-key-9876543210';

let service: FakeService;
let projectA: string;
let ids: Record<MediaName, string>;
let projectB: string;
const clients: Client[] = [];
const servers: HttpServer[] = [];

beforeAll(async () => {
  service = await new FakeService().start();
  ({ projectId: projectA, ids } = mediaProject(service, "alice's project"));
  const ownerB = service.addTenant(keyB);
  projectB = service.addProject({ name: "bob's project", owner: ownerB }).id;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(servers.map((s) => s.stop()));
  await service?.stop();
});

async function start(env: Record<string, string>, args: string[] = []) {
  const s = await startHttpServer(env, args);
  servers.push(s);
  return s;
}
async function connect(url: string, headers: Record<string, string>) {
  const c = await connectHttp(url, headers);
  clients.push(c);
  return c;
}
const remoteEnv = (cacheDir: string, extra: Record<string, string> = {}) => ({
  VJ_BACKEND: 'remote',
  VJ_API_URL: service.url,
  CUTROOM_CACHE_DIR: cacheDir,
  ...extra,
});

/** A raw HTTP request, with whatever Host and headers a test needs (fetch would not send a forged Host). */
function raw(
  base: string,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer | string },
) {
  const u = new URL(base);
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (resolve, reject) => {
      const req = httpRequest(
        {
          host: u.hostname,
          port: u.port,
          method: opts.method ?? 'POST',
          path: opts.path ?? '/mcp',
          headers: opts.headers ?? {},
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end(opts.body);
    },
  );
}
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('one server, two callers with their own keys', () => {
  let srv: HttpServer;
  let cacheDir: string;
  let alice: Client;
  let bob: Client;
  beforeAll(async () => {
    cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-http-'));
    // The server has a key of its own; without CUTROOM_HTTP_USE_SERVER_KEY it must never serve a caller with it.
    srv = await start(remoteEnv(cacheDir, { VJ_API_KEY: service.apiKey }));
    alice = await connect(srv.url, { authorization: `Bearer ${service.apiKey}` });
    bob = await connect(srv.url, { 'x-api-key': keyB });
  }, 60_000);

  it('logs one line with its URL, and serves the same tools as over stdio (and view_edit, for MCP Apps hosts)', async () => {
    expect(srv.stderr()).toMatch(
      /listening on http:\/\/127\.0\.0\.1:\d+\/mcp \(the service at http:\/\/127\.0\.0\.1:\d+, with each caller's own key\)/,
    );
    const names = (await alice.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'compose_edit',
      'create_project',
      'delete_asset',
      'delete_project',
      'export_edit',
      'find_moments',
      'get_project',
      'get_render_status',
      'import_edit',
      'inspect_asset',
      'list_projects',
      'list_scripts',
      'preview_edit',
      'render_edit',
      'search_transcripts',
      'tighten_edit',
      'transcribe_asset',
      'view_edit',
    ]);
    expect(alice.getInstructions()).toMatch(/cutroom/);
  });

  it("keeps each caller's projects and previews their own", async () => {
    const listed = async (c: Client) =>
      ((await call(c, 'list_projects', {})).structuredContent!.projects as { id: string }[]).map((p) => p.id);
    expect(await listed(alice)).toEqual([projectA]);
    expect(await listed(bob)).toEqual([projectB]);
    const peek = await call(bob, 'get_project', { project_id: projectA });
    expect(peek.isError).toBe(true);

    const progress: number[] = [];
    const p = await call(
      alice,
      'preview_edit',
      {
        project_id: projectA,
        width: 160,
        clips: [
          { asset_id: ids.red, start: 0, end: 1 },
          { asset_id: ids.blue, start: 0, end: 1 },
        ],
      },
      { onprogress: (e: { progress: number }) => progress.push(e.progress) },
    );
    expect(p.isError, textOf(p)).toBeFalsy();
    // Progress came over HTTP (the answer upgraded to a stream), ending at 100.
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(100);
    const previewId = p.structuredContent!.preview_id as string;
    const link = p.content.find((c) => c.type === 'resource_link')!;
    // A hosted caller is shown resources, never the server's files.
    expect(p.structuredContent).toMatchObject({
      path: `cutroom://previews/${previewId}/preview.mp4`,
      sheet_path: `cutroom://previews/${previewId}/sheet.jpg`,
    });
    expect(JSON.stringify(p)).not.toContain(cacheDir);
    const again = await call(alice, 'preview_edit', { preview_id: previewId });
    expect(again.structuredContent!.path).toBe(`cutroom://previews/${previewId}/preview.mp4`);
    expect(JSON.stringify(again)).not.toContain(cacheDir);
    expect((await alice.readResource({ uri: link.uri! })).contents).toHaveLength(1);

    // Bob knows the id (say it leaked): he still gets nothing of Alice's.
    const stolen = await call(bob, 'preview_edit', { preview_id: previewId });
    expect(stolen.isError).toBe(true);
    await expect(bob.readResource({ uri: link.uri! })).rejects.toThrow();
    // Each caller's files are under their own folder, named by a hash of their key.
    expect(readdirSync(join(cacheDir, 'callers', callerId(service.apiKey), 'previews'))).toContain(previewId);
    expect(existsSync(join(cacheDir, 'callers', callerId(keyB), 'previews', previewId))).toBe(false);
    // Neither key is in the log, nor in the folder names.
    for (const key of [service.apiKey, keyB]) {
      expect(srv.stderr()).not.toContain(key);
      expect(readdirSync(join(cacheDir, 'callers')).join()).not.toContain(key);
    }
    // The service saw each caller's own key on their calls, never the server's for Bob.
    const keysSeen = new Set(service.requests.map((r: { headers: Record<string, string> }) => r.headers['x-api-key']));
    expect([...keysSeen].sort()).toEqual([service.apiKey, keyB].sort());
  });

  it("reads no file of the server's for a caller: import_edit takes only their own exports by path, and export_edit fetches no media onto it", async () => {
    // A file in the server's working directory (its default CUTROOM_ALLOWED_DIRS), that an EDL read would quote.
    const secretDir = mkdtempSync(join(tmpdir(), 'cutroom-http-secret-'));
    const secret = join(secretDir, 'notes.edl');
    writeFileSync(secret, 'TITLE: x\n001  SECRET-LINE-DO-NOT-SHOW\n');
    const srvCwd = await start({
      ...remoteEnv(mkdtempSync(join(tmpdir(), 'cutroom-http-files-'))),
      CUTROOM_ALLOWED_DIRS: secretDir,
    });
    const a = await connect(srvCwd.url, { authorization: `Bearer ${service.apiKey}` });
    const b = await connect(srvCwd.url, { 'x-api-key': keyB });
    for (const path of [secret, join(secretDir, 'missing.edl'), 'notes.edl', '/etc/passwd']) {
      const r = await call(a, 'import_edit', { project_id: projectA, path, format: 'edl' });
      expect(r.isError, path).toBe(true);
      expect(textOf(r), path).toMatch(
        /hosted: import_edit reads by path only the files export_edit wrote for you\. Send the timeline's text as content/,
      );
      expect(textOf(r), path).not.toMatch(/SECRET-LINE|no file at|CUTROOM_ALLOWED_DIRS/);
    }
    const download = await call(a, 'export_edit', {
      project_id: projectA,
      format: 'otio',
      media: 'download',
      clips: [{ asset_id: ids.red, start: 0, end: 1 }],
    });
    expect(download.isError).toBe(true);
    expect(textOf(download)).toMatch(
      /this cutroom is hosted: the files would not reach you\. Export with media: "links"/,
    );

    // Her own export she may read back by path and through its resource; Bob may do neither.
    const exported = await call(a, 'export_edit', {
      project_id: projectA,
      format: 'otio',
      clips: [{ asset_id: ids.red, start: 0, end: 1 }],
    });
    expect(exported.isError, textOf(exported)).toBeFalsy();
    const path = exported.structuredContent!.path as string;
    // Named as a resource, not as a file of the server's; import_edit reads it back by that name.
    expect(path).toMatch(/^cutroom:\/\/exports\/\d{14}-[0-9a-f]{8}\/[^/]+\.otio$/);
    expect(textOf(exported)).toContain(path);
    expect(JSON.stringify(exported)).not.toMatch(/cutroom-http-files-|\/callers\//);
    const back = await call(a, 'import_edit', { project_id: projectA, path });
    expect(back.isError, textOf(back)).toBeFalsy();
    expect(back.structuredContent!.ready).toBe(true);
    const theirs = await call(b, 'import_edit', { project_id: projectB, path });
    expect(theirs.isError).toBe(true);
    expect(textOf(theirs)).toMatch(/is not an export of yours/);
    const uri = exported.content.find((c) => c.type === 'resource_link')!.uri!;
    await expect(b.readResource({ uri })).rejects.toThrow();
  });

  it('tells nothing of a preview still rendering for another caller, whoever learns its id', async () => {
    // Previews handed over at once (CUTROOM_RENDER_WAIT_MS=0): Alice's is still rendering when Bob asks for it.
    const s = await start(
      remoteEnv(mkdtempSync(join(tmpdir(), 'cutroom-http-jobs-')), { CUTROOM_RENDER_WAIT_MS: '0' }),
    );
    const a = await connect(s.url, { authorization: `Bearer ${service.apiKey}` });
    const b = await connect(s.url, { 'x-api-key': keyB });
    const started = await call(a, 'preview_edit', {
      project_id: projectA,
      width: 160,
      clips: [
        { asset_id: ids.red, start: 0, end: 6 },
        { asset_id: ids.blue, start: 0, end: 6 },
      ],
    });
    expect(started.structuredContent!.status).toBe('rendering');
    const id = started.structuredContent!.preview_id as string;
    const peek = await call(b, 'preview_edit', { preview_id: id });
    expect(peek.isError, textOf(peek)).toBe(true);
    expect(textOf(peek)).toMatch(/is gone/);
    // Alice follows her own.
    const mine = await call(a, 'preview_edit', { preview_id: id });
    expect(mine.isError, textOf(mine)).toBeFalsy();
  });

  it("a flood of made-up keys does not close a caller's connection to the service under their call", async () => {
    // Bob's call is slow and fails once (503 after 1 s), so it is retried after the flood: on a closed pool, it
    // failed with "could not reach the service".
    service.fail(
      { delayMs: 1000, status: 503, body: '{"detail":"busy"}' },
      {
        match: (r: { path: string; headers: Record<string, string> }) =>
          r.path === `/projects/${projectB}` && r.headers['x-api-key'] === keyB,
      },
    );
    const bobs = () =>
      service.requests.filter(
        (r: { path: string; headers: Record<string, string> }) =>
          r.path === `/projects/${projectB}` && r.headers['x-api-key'] === keyB,
      ).length;
    const asked = bobs();
    const slow = call(bob, 'get_project', { project_id: projectB });
    // The flood comes while Bob's call is at the service.
    await waitFor(() => bobs() > asked, { what: "Bob's call at the service" });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const flood = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        raw(srv.base, {
          headers: { ...JSON_HEADERS, authorization: `Bearer made-up-key-${i}-0123456789` },
          body: list,
        }),
      ),
    );
    expect(flood.every((r) => r.status === 200)).toBe(true);
    const r = await slow;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect((r.structuredContent!.project as { id: string }).id).toBe(projectB);
    // Made-up keys leave no folder behind (nothing was made for them), and are not blanked out of the log.
    expect(readdirSync(join(cacheDir, 'callers')).length).toBeLessThanOrEqual(2);
  });

  it('answers a request without a key with 401 and a challenge', async () => {
    const r = await raw(srv.base, { headers: JSON_HEADERS, body: INIT });
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toMatch(/^Bearer realm="cutroom"/);
    expect(JSON.parse(r.body).error).toMatch(/each request must carry your Video Jungle API key/);
  });

  it('refuses a browser Origin it was not told to allow, and a Host it does not answer to', async () => {
    const origin = await raw(srv.base, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${keyB}`, origin: 'http://evil.example' },
      body: INIT,
    });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body).error).toMatch(/Origin http:\/\/evil\.example is not allowed/);
    // Listening on loopback, a page on this machine may call (a browser client such as the Inspector's web UI).
    for (const local of [`http://localhost:6274`, 'http://127.0.0.1:5173', 'http://[::1]:8080']) {
      const ok = await raw(srv.base, {
        headers: { ...JSON_HEADERS, authorization: `Bearer ${keyB}`, origin: local },
        body: INIT,
      });
      expect(ok.status, local).toBe(200);
    }
    for (const other of ['http://localhost.evil.example', 'null', 'file://', 'http://127.0.0.1.evil.example:80']) {
      const refused = await raw(srv.base, {
        headers: { ...JSON_HEADERS, authorization: `Bearer ${keyB}`, origin: other },
        body: INIT,
      });
      expect(refused.status, other).toBe(403);
    }
    const host = await raw(srv.base, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${keyB}`, host: 'rebound.example:80' },
      body: INIT,
    });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).error).toMatch(/Host "rebound\.example" is not one this server answers to/);
  });

  it('answers an oversized body with 413, declared or not, and keeps serving', async () => {
    const big = Buffer.alloc(17 * 1024 * 1024, 0x20);
    const declared = await raw(srv.base, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${keyB}`, 'content-length': String(big.length) },
      body: big,
    }).catch((e: Error) => ({ status: 0, body: e.message, headers: {} }));
    expect([413, 0]).toContain(declared.status);
    const chunked = await raw(srv.base, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${keyB}`, 'transfer-encoding': 'chunked' },
      body: big,
    }).catch((e: Error) => ({ status: 0, body: e.message, headers: {} }));
    expect([413, 0]).toContain(chunked.status);
    // At least one of them was answered (the other may see its connection closed while still sending).
    expect([declared.status, chunked.status]).toContain(413);
    expect((await call(bob, 'list_projects', {})).isError).toBeFalsy();
    expect(srv.proc.exitCode).toBeNull();
  });

  it('answers bodies that are not JSON-RPC with a 4xx JSON-RPC error, and keeps serving', async () => {
    const post = (body: string) =>
      raw(srv.base, { headers: { ...JSON_HEADERS, authorization: `Bearer ${keyB}` }, body: Buffer.from(body) });
    const notJson = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body).error).toMatchObject({
      code: -32700,
      message: expect.stringMatching(/Parse error: the body is not JSON/),
    });
    for (const body of ['42', '{"hello": "world"}', '[]', 'null']) {
      const r = await post(body);
      expect(r.status, body).toBeGreaterThanOrEqual(400);
      expect(r.status, body).toBeLessThan(500);
      expect(JSON.parse(r.body).jsonrpc, body).toBe('2.0');
    }
    expect((await call(bob, 'list_projects', {})).isError).toBeFalsy();
    expect(srv.proc.exitCode).toBeNull();
  });

  it('serves /healthz for load balancers, and 404 elsewhere', async () => {
    const ok = await raw(srv.base, { method: 'GET', path: '/healthz' });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ status: 'ok', backend: 'remote' });
    expect((await raw(srv.base, { method: 'GET', path: '/other' })).status).toBe(404);
  });
});

/** Writes `text` on a fresh connection and returns everything the server sends back until it closes. */
function wire(port: number, text: string | Buffer, host = '127.0.0.1', opts: { keepOpenMs?: number } = {}) {
  return new Promise<string>((resolve, reject) => {
    const sock = netConnect({ host, port }, () => sock.write(text));
    let got = '';
    sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
    sock.on('close', () => resolve(got));
    sock.on('error', reject);
    if (opts.keepOpenMs) setTimeout(() => sock.destroy(), opts.keepOpenMs);
  });
}
const portOf = (s: HttpServer) => Number(new URL(s.base).port);

describe('requests a client gets wrong, or sends slowly', () => {
  const keyHeader = `Authorization: Bearer ${keyB}`;
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  const post = (host: string, extra = '') =>
    `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${keyHeader}\r\nConnection: close\r\n${extra}Content-Length: ${list.length}\r\n\r\n${list}`;
  let srv: HttpServer;
  beforeAll(async () => {
    srv = await start(remoteEnv(mkdtempSync(join(tmpdir(), 'cutroom-http-bad-')), { CUTROOM_HTTP_MAX_BODY_MB: '1' }));
  }, 60_000);

  it('answers what Node cannot parse with a JSON error, not an empty reply', async () => {
    const big = await wire(portOf(srv), post(`127.0.0.1:${portOf(srv)}`, `X-API-Key: ${'k'.repeat(20_000)}\r\n`));
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    expect(big).toMatch(/"error":"the request headers are too large/);
    const bad = await wire(portOf(srv), `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n`);
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    expect(bad).toMatch(/"error":"the request is not valid HTTP/);
    for (const target of ['http://127.0.0.1:99999999999/mcp', 'http://[zz]/mcp']) {
      const odd = await wire(portOf(srv), post(`127.0.0.1:${portOf(srv)}`).replace('POST /mcp ', `POST ${target} `));
      expect(odd, target).toMatch(/^HTTP\/1\.1 400 /);
      expect(odd, target).toMatch(/"error":"the request target is not a valid URL"/);
    }
    expect(srv.stderr()).not.toMatch(/Invalid URL|internal error/);
    expect(srv.proc.exitCode).toBeNull();
  });

  it('serves a request line in absolute form, and honours Connection: close', async () => {
    const abs = await wire(
      portOf(srv),
      post(`127.0.0.1:${portOf(srv)}`).replace('POST /mcp ', `POST http://127.0.0.1:${portOf(srv)}/mcp `),
    );
    expect(abs).toMatch(/^HTTP\/1\.1 200 /);
    expect(abs).toMatch(/connection: close/i);
    expect(abs).toContain('"list_projects"');
    expect(srv.stderr()).not.toMatch(/Failed to parse URL|internal error/);
  });

  it('answers on IPv6 loopback to its own Host, bracketed', async () => {
    const v6 = await start(remoteEnv(mkdtempSync(join(tmpdir(), 'cutroom-http-v6-'))), ['--host', '::1']);
    expect(v6.url).toMatch(/^http:\/\/\[::1\]:\d+\/mcp$/);
    const answer = await wire(portOf(v6), post(`[::1]:${portOf(v6)}`), '::1');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    // And a rebinding name is still refused there.
    expect(await wire(portOf(v6), post('evil.example'), '::1')).toMatch(/^HTTP\/1\.1 403 /);
  });

  it('bounds the memory of slow uploads, and does not wait for them on SIGTERM', async () => {
    const s = await start(
      remoteEnv(mkdtempSync(join(tmpdir(), 'cutroom-http-slow-')), { CUTROOM_HTTP_MAX_BODY_MB: '1' }),
    );
    // Five uploads of the largest body allowed (1 MiB) that stall before their last byte: bodies may hold 4 MiB
    // between them, so four fill it (a small call once found it full: 503) and the fifth is refused.
    const part = 1024 * 1024 - 1;
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${keyHeader}\r\nContent-Length: ${part + 1}\r\n\r\n`;
    const stalled = Array.from({ length: 5 }, () =>
      wire(portOf(s), Buffer.concat([Buffer.from(head), Buffer.alloc(part, 0x20)]), '127.0.0.1', { keepOpenMs: 8000 }),
    );
    const answers = await Promise.race([
      Promise.all(stalled),
      new Promise<string[]>((r) => setTimeout(() => r([]), 3000)),
    ]);
    // Those over the budget were answered at once (503, retry); the others are still waiting for their last byte.
    expect(answers).toEqual([]);
    // A normal call still goes through meanwhile: its few bytes are not counted against what large bodies hold.
    expect(await wire(portOf(s), post(`127.0.0.1:${portOf(s)}`))).toMatch(/^HTTP\/1\.1 200 /);
    const t = Date.now();
    s.proc.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    // The stalled uploads are not calls in flight: no 30 s drain for them (15 s: room for a loaded machine).
    expect(Date.now() - t).toBeLessThan(15_000);
    const done = await Promise.all(stalled);
    const busy = done.filter((a) => /^HTTP\/1\.1 503 /.test(a));
    expect(busy.length).toBeGreaterThanOrEqual(1);
    expect(busy[0]).toMatch(/too many large requests at once: retry shortly/);
  });
});

describe('replicas', () => {
  it('answer alternate calls of one client without sticky sessions (a shared cache dir)', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-http-replicas-'));
    const [a, b] = await Promise.all([start(remoteEnv(cacheDir)), start(remoteEnv(cacheDir))]);
    // A round-robin balancer: each request goes to the next replica.
    const upstream = [new URL(a!.base), new URL(b!.base)];
    const served = [0, 0];
    let next = 0;
    const lb: Server = createServer((req, res) => {
      const i = next++ % 2;
      served[i]!++;
      const u = upstream[i]!;
      const fwd = httpRequest(
        {
          host: u.hostname,
          port: u.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: `127.0.0.1:${u.port}` },
        },
        (up) => {
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
        },
      );
      fwd.on('error', () => res.destroy());
      req.pipe(fwd);
    });
    await new Promise<void>((r) => lb.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(lb.address() as { port: number }).port}/mcp`;
      const c = await connect(url, { 'x-api-key': service.apiKey });
      const p = await call(c, 'preview_edit', {
        project_id: projectA,
        width: 160,
        clips: [{ asset_id: ids.green_vertical, start: 0, end: 1 }],
      });
      expect(p.isError, textOf(p)).toBeFalsy();
      const previewId = p.structuredContent!.preview_id as string;
      // Whichever replica answers next finds the preview the other made, and so does the one after.
      for (let i = 0; i < 3; i++) {
        const g = await call(c, 'preview_edit', { preview_id: previewId });
        expect(g.isError, textOf(g)).toBeFalsy();
        expect(g.structuredContent!.status).toBe('done');
      }
      const link = p.content.find((x) => x.type === 'resource_link')!;
      for (let i = 0; i < 2; i++) expect((await c.readResource({ uri: link.uri! })).contents).toHaveLength(1);
      expect(served[0]).toBeGreaterThan(2);
      expect(served[1]).toBeGreaterThan(2);
    } finally {
      lb.close();
    }
  }, 120_000);
});

describe('shutting down', () => {
  it('on SIGTERM finishes the call in flight, refuses new ones, and exits 0', async () => {
    const s = await start(remoteEnv(mkdtempSync(join(tmpdir(), 'cutroom-http-drain-'))));
    const c = await connect(s.url, { 'x-api-key': service.apiKey });
    // The call's answer is held until the checks below are done: it is in flight throughout, however slow the machine.
    const answer = service.gate();
    const lists = () => service.requests.filter((r) => r.method === 'GET' && r.path === '/projects').length;
    const listed = lists();
    service.fail(
      { holdUntil: answer },
      { times: 1, match: (r: { method: string; path: string }) => r.method === 'GET' && r.path === '/projects' },
    );
    const inFlight = call(c, 'list_projects', {});
    await waitFor(() => lists() > listed, { what: "the call's request at the service" });
    s.proc.kill('SIGTERM');
    // Draining (once the server has heard the signal): the health check keeps answering, 503, on a new connection,
    // and so does a new call.
    const health = () =>
      raw(s.base, { method: 'GET', path: '/healthz' }).catch((e: Error) => ({
        status: 0,
        body: e.message,
        headers: {} as Record<string, string>,
      }));
    const during = await waitFor(async () => ((h) => (h.status === 200 ? undefined : h))(await health()), {
      what: 'the health check to answer otherwise than 200 after SIGTERM',
    });
    expect(during.status).toBe(503);
    expect(JSON.parse(during.body)).toEqual({ status: 'draining' });
    const refused = await raw(s.base, { headers: { ...JSON_HEADERS, 'x-api-key': service.apiKey }, body: INIT }).catch(
      (e: Error) => ({ status: 0, body: e.message, headers: {} as Record<string, string> }),
    );
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    answer.open();
    const r = await inFlight;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect((r.structuredContent!.projects as unknown[]).length).toBe(1);
    expect(await s.exited).toBe(0);
    expect(s.stderr()).toMatch(/SIGTERM: finishing 1 call\(s\) in flight/);
  }, 60_000);
});

describe('the local backend over HTTP', () => {
  const token = 'local-token-0123456789abcdef';

  it('refuses to start without a token, on loopback or not', () => {
    for (const host of ['127.0.0.1', '0.0.0.0']) {
      const r = spawnSync(process.execPath, [BIN, '--http', '--port', '0', '--host', host], {
        env: baseEnv({ CUTROOM_DATA_DIR: mkdtempSync(join(tmpdir(), 'cutroom-http-local-')) }),
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(
        /the local backend \(your files\) answers only with a bearer token: set CUTROOM_HTTP_TOKEN/,
      );
      if (host === '0.0.0.0') expect(r.stderr).toMatch(/refusing to listen on 0\.0\.0\.0 without one/);
    }
  });

  it('answers only with its token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-http-local-'));
    const s = await start({
      CUTROOM_DATA_DIR: join(dir, 'data'),
      CUTROOM_CACHE_DIR: join(dir, 'cache'),
      CUTROOM_HTTP_TOKEN: token,
    });
    const wrong = await raw(s.base, {
      headers: { ...JSON_HEADERS, authorization: 'Bearer not-the-token-at-all' },
      body: INIT,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/Bearer realm="cutroom"/);
    const c = await connect(s.url, { authorization: `Bearer ${token}` });
    const made = await call(c, 'create_project', { name: 'over http', description: '' });
    expect(made.isError, textOf(made)).toBeFalsy();
    expect(
      ((await call(c, 'list_projects', {})).structuredContent!.projects as { name: string }[]).map((p) => p.name),
    ).toEqual(['over http']);
    expect(s.stderr()).not.toContain(token);
  });
});
