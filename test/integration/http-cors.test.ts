// CORS over real HTTP on 127.0.0.1, through the built server: a browser page of an allowed origin (listed in
// CUTROOM_HTTP_ALLOWED_ORIGINS, or on this machine when the server listens on loopback) gets its preflight answered
// without the token, and every answer it receives (errors, SSE streams) carries Access-Control-Allow-Origin and the
// headers it may read; any other origin is refused, its preflight included; everything but a preflight still needs
// the token. The same in a real browser: cors-browser.test.ts.
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';

const token = 'cors-token-0123456789abcdef';
const APP = 'https://app.example.com';
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const AUTH = { authorization: `Bearer ${token}` };

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: string };
function raw(
  base: string,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
): Promise<Raw> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
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
  });
}
const preflight = (
  base: string,
  origin: string,
  requestHeaders = 'authorization, content-type, mcp-protocol-version',
) =>
  raw(base, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  });
const list = (v: unknown) =>
  String(v ?? '')
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);

/** What every answer to an allowed origin carries. */
function expectCors(r: Raw, origin: string, what: string) {
  expect(r.headers['access-control-allow-origin'], what).toBe(origin);
  expect(list(r.headers.vary), what).toContain('origin');
  expect(list(r.headers['access-control-expose-headers']), what).toEqual(
    expect.arrayContaining(['mcp-session-id', 'mcp-protocol-version', 'www-authenticate']),
  );
  // No cookies are used: credentials mode is never granted, and the origin is never a wildcard.
  expect(r.headers['access-control-allow-credentials'], what).toBeUndefined();
}

let srv: HttpServer;
let wide: HttpServer | undefined;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-cors-'));
  srv = await startHttpServer({
    CUTROOM_DATA_DIR: join(dir, 'data'),
    CUTROOM_CACHE_DIR: join(dir, 'cache'),
    CUTROOM_ALLOWED_DIRS: dir,
    CUTROOM_HTTP_TOKEN: token,
    CUTROOM_HTTP_ALLOWED_ORIGINS: `${APP}/`,
    CUTROOM_HTTP_MAX_BODY_MB: '1',
  });
}, 30_000);
afterAll(async () => {
  await srv?.stop();
  await wide?.stop();
});

describe('CORS for browser hosts', () => {
  it('answers the preflight of an allowed origin with 204 and what may be sent, without the token', async () => {
    for (const origin of [APP, 'http://localhost:6274', 'http://127.0.0.1:5173', 'http://[::1]:8080']) {
      const r = await preflight(
        srv.base,
        origin,
        'Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID, Accept, Mcp-Param-Project_Id, X-Not-Allowed',
      );
      expect(r.status, origin).toBe(204);
      expect(r.body, origin).toBe('');
      expectCors(r, origin, origin);
      expect(list(r.headers['access-control-allow-methods']), origin).toEqual(['get', 'post', 'delete', 'options']);
      const allowed = list(r.headers['access-control-allow-headers']);
      expect(allowed, origin).toEqual(
        expect.arrayContaining([
          'authorization',
          'content-type',
          'accept',
          'mcp-protocol-version',
          'mcp-session-id',
          'last-event-id',
          'x-api-key',
          'mcp-param-project_id',
        ]),
      );
      // A header off the allow list is not echoed: the browser then refuses to send it.
      expect(allowed, origin).not.toContain('x-not-allowed');
      expect(Number(r.headers['access-control-max-age']), origin).toBeGreaterThan(0);
      expect(list(r.headers.vary), origin).toEqual(
        expect.arrayContaining(['origin', 'access-control-request-headers']),
      );
      expect(r.headers['access-control-allow-private-network'], origin).toBeUndefined();
    }
    // A browser asking whether a page may reach this address (Private Network Access) is told so, for an allowed
    // origin.
    const pna = await raw(srv.base, {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-private-network': 'true',
      },
    });
    expect(pna.status).toBe(204);
    expect(pna.headers['access-control-allow-private-network']).toBe('true');
  });

  it('refuses any other origin with 403, its preflight included, and says nothing a page could read', async () => {
    for (const origin of [
      'https://evil.example',
      'https://app.example.com.evil.example',
      'http://app.example.com',
      'null',
      'http://localhost.evil.example',
    ]) {
      const pre = await raw(srv.base, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-private-network': 'true' },
      });
      expect(pre.status, origin).toBe(403);
      expect(pre.headers['access-control-allow-private-network'], origin).toBeUndefined();
      expect(pre.headers['access-control-allow-origin'], origin).toBeUndefined();
      const post = await raw(srv.base, { headers: { ...JSON_HEADERS, ...AUTH, origin }, body: INIT });
      expect(post.status, origin).toBe(403);
      expect(post.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(JSON.parse(post.body).error).toMatch(/is not allowed \(CUTROOM_HTTP_ALLOWED_ORIGINS\)/);
    }
  });

  it('marks every answer to an allowed origin, errors and SSE streams included; the token is still needed for all but the preflight', async () => {
    const origin = APP;
    const noToken = await raw(srv.base, { headers: { ...JSON_HEADERS, origin }, body: INIT });
    expect(noToken.status).toBe(401);
    expect(noToken.headers['www-authenticate']).toMatch(/^Bearer realm="cutroom"/);
    expectCors(noToken, origin, '401');
    for (const method of ['GET', 'DELETE']) {
      const r = await raw(srv.base, { method, headers: { accept: 'text/event-stream', origin } });
      expect(r.status, method).toBe(401);
      expectCors(r, origin, method);
    }
    const wrong = await raw(srv.base, {
      headers: { ...JSON_HEADERS, origin, authorization: 'Bearer not-the-token-at-all' },
      body: INIT,
    });
    expect(wrong.status).toBe(401);
    expectCors(wrong, origin, 'wrong token');

    const notFound = await raw(srv.base, { method: 'GET', path: '/other', headers: { origin } });
    expect(notFound.status).toBe(404);
    expectCors(notFound, origin, '404');
    const tooLarge = await raw(srv.base, {
      headers: { ...JSON_HEADERS, ...AUTH, origin, 'content-length': String(2 * 1024 * 1024) },
    });
    expect(tooLarge.status).toBe(413);
    expectCors(tooLarge, origin, '413');
    const notJson = await raw(srv.base, { headers: { ...JSON_HEADERS, ...AUTH, origin }, body: '{"jsonrpc": ' });
    expect(notJson.status).toBe(400);
    expectCors(notJson, origin, '400');
    const get = await raw(srv.base, { method: 'GET', headers: { ...AUTH, accept: 'text/event-stream', origin } });
    expect(get.status).toBe(405);
    expectCors(get, origin, 'GET with the token');

    const init = await raw(srv.base, { headers: { ...JSON_HEADERS, ...AUTH, origin }, body: INIT });
    expect(init.status).toBe(200);
    expect(init.headers['content-type']).toMatch(/text\/event-stream/);
    expect(init.body).toMatch(/"serverInfo":\{"name":"cutroom"/);
    expectCors(init, origin, 'initialize (SSE)');
    const call = await raw(srv.base, {
      headers: { ...JSON_HEADERS, ...AUTH, origin: 'http://127.0.0.1:5173', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_projects', arguments: {} },
      }),
    });
    expect(call.status).toBe(200);
    expect(call.body).toMatch(/"result":\{/);
    expectCors(call, 'http://127.0.0.1:5173', 'tools/call (SSE)');
  });

  it('answers a request without an Origin (not a browser) as before: no CORS headers, the token needed', async () => {
    const r = await raw(srv.base, { headers: { ...JSON_HEADERS, ...AUTH }, body: INIT });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    expect((await raw(srv.base, { headers: JSON_HEADERS, body: INIT })).status).toBe(401);
  });

  it('allows pages on this machine only when it listens on loopback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cors-wide-'));
    wide = await startHttpServer(
      {
        CUTROOM_DATA_DIR: join(dir, 'data'),
        CUTROOM_CACHE_DIR: join(dir, 'cache'),
        CUTROOM_ALLOWED_DIRS: dir,
        CUTROOM_HTTP_TOKEN: token,
        CUTROOM_HTTP_ALLOWED_ORIGINS: APP,
      },
      ['--host', '0.0.0.0'],
    );
    const base = `http://127.0.0.1:${new URL(wide.base).port}`;
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:5173']) {
      const r = await preflight(base, origin);
      expect(r.status, origin).toBe(403);
      expect(r.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
    const listed = await preflight(base, APP);
    expect(listed.status).toBe(204);
    expectCors(listed, APP, 'listed origin on 0.0.0.0');
  });
});
