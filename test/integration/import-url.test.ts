// Import by URL (issue 49, item 2) against hostile servers on loopback, through the built server over HTTP: a good
// link (and one redirected to it) becomes an asset, probed; a redirect to a private address or to the cloud metadata
// address, an endless body, a slow drip, a server that stalls and a web page are each refused with a clear error, and
// the forbidden address (a listener on 127.0.0.2) never sees a connection. The server is told to let 127.0.0.1 alone
// through (CUTROOM_FETCH_ALLOW_ADDRESSES, the operator's exception) and to allow http (no TLS on loopback here).
// DNS rebinding: names are resolved through a DNS responder of the test's own on loopback (CUTROOM_FETCH_DNS_SERVERS)
// that answers a name first with the allowed address, then with the forbidden one (127.0.0.2, where a listener on the
// same port counts connections): the fetch resolves once, connects to what it checked, and a redirect to the same name
// is resolved and checked again.
import { createSocket, type Socket } from 'node:dgram';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';

const TOKEN = 'url-import-token-0123456789';
const root = mkdtempSync(join(tmpdir(), 'cutroom-url-'));
let srv: HttpServer;
let client: Client;
let hostile: Server;
let forbidden: TcpServer;
let forbiddenConnections = 0;
/** The same port as the hostile server's, on the forbidden address: where a rebound name would lead. */
let rebound: TcpServer;
let dns: Socket;
/** A queries the DNS responder answered, by name. */
const asked = new Map<string, number>();
let base = '';
let forbiddenPort = 0;
let clip: Buffer;
let project = '';

beforeAll(async () => {
  mkdirSync(join(root, 'media'), { recursive: true });
  const file = join(root, 'clip.mp4');
  const made = spawnSync('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x120:rate=25:duration=2',
    '-pix_fmt',
    'yuv420p',
    file,
  ]);
  expect(made.status, made.stderr.toString()).toBe(0);
  clip = readFileSync(file);
  // What must never be reached: any connection to it is counted.
  forbidden = createTcpServer((s) => {
    forbiddenConnections++;
    s.destroy();
  });
  await new Promise<void>((r) => forbidden.listen(0, '127.0.0.2', r));
  forbiddenPort = (forbidden.address() as { port: number }).port;
  hostile = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/clip.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': clip.length });
      return void res.end(clip);
    }
    if (path === '/go') return void res.writeHead(302, { location: '/clip.mp4' }).end();
    if (path === '/to-private')
      return void res.writeHead(302, { location: `http://127.0.0.2:${forbiddenPort}/clip.mp4` }).end();
    if (path === '/to-metadata')
      return void res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (path === '/to-mapped')
      return void res.writeHead(307, { location: `http://[::ffff:127.0.0.2]:${forbiddenPort}/x.mp4` }).end();
    if (path === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (path === '/endless') {
      // A media type, no length, and bytes for ever.
      res.writeHead(200, { 'content-type': 'video/mp4' });
      const chunk = Buffer.alloc(64 * 1024, 7);
      const more = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', more);
      };
      return more();
    }
    if (path === '/drip') {
      // A byte every 200 ms: never a pause long enough to count as a stall, so the whole fetch's time cap ends it.
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.write(clip.subarray(0, 64));
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(Buffer.from([0]))), 200);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (path === '/stall') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.write(clip.subarray(0, 1024));
    }
    if (path === '/page') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end('<!doctype html><html><body>sign in</body></html>');
    }
    if (path === '/lying.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(Buffer.alloc(4096, 1));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`;
  rebound = createTcpServer((s) => {
    forbiddenConnections++;
    s.destroy();
  });
  await new Promise<void>((r) => rebound.listen((hostile.address() as { port: number }).port, '127.0.0.2', r));
  // Names under rebind.test: the allowed address the first time they are asked, the forbidden one after.
  dns = createSocket('udp4');
  dns.on('message', (msg, from) => {
    const q = dnsQuestion(msg);
    if (!q) return;
    let address: string | undefined;
    if (q.type === 1 && q.name.endsWith('.rebind.test')) {
      const n = (asked.get(q.name) ?? 0) + 1;
      asked.set(q.name, n);
      address = n === 1 ? '127.0.0.1' : '127.0.0.2';
    }
    dns.send(dnsAnswer(msg, q.end, address), from.port, from.address);
  });
  await new Promise<void>((r) => dns.bind(0, '127.0.0.1', r));
  srv = await startHttpServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: join(root, 'media'),
    CUTROOM_HTTP_TOKEN: TOKEN,
    CUTROOM_FETCH_ALLOW_HTTP: '1',
    CUTROOM_FETCH_ALLOW_ADDRESSES: '127.0.0.1/32',
    CUTROOM_FETCH_MAX_MB: '4',
    CUTROOM_FETCH_TIMEOUT_S: '6',
    CUTROOM_FETCH_STALL_S: '2',
    CUTROOM_FETCH_DNS_SERVERS: `127.0.0.1:${dns.address().port}`,
  });
  client = await connectHttp(srv.url, { authorization: `Bearer ${TOKEN}` });
  const made2 = (await client.callTool({
    name: 'create_project',
    arguments: { name: 'by url', description: 'imports by URL' },
  })) as { structuredContent: { project: { id: string } } };
  project = made2.structuredContent.project.id;
}, 120_000);
afterAll(async () => {
  await client?.close().catch(() => {});
  await srv?.stop();
  hostile?.closeAllConnections();
  hostile?.close();
  forbidden?.close();
  rebound?.close();
  dns?.close();
});

/** A DNS query's name, type and where its question ends (RFC 1035 4.1; no compression in a question). */
function dnsQuestion(msg: Buffer): { name: string; type: number; end: number } | undefined {
  const labels: string[] = [];
  let o = 12;
  while (o < msg.length && msg[o]! > 0) {
    labels.push(msg.subarray(o + 1, o + 1 + msg[o]!).toString('latin1'));
    o += msg[o]! + 1;
  }
  if (o + 5 > msg.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(o + 1), end: o + 5 };
}

/** The answer to a query: its question again, and one A record (TTL 0) when `address` is given, else none. */
function dnsAnswer(msg: Buffer, questionEnd: number, address: string | undefined): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(msg.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(address ? 1 : 0, 6);
  const parts = [header, msg.subarray(12, questionEnd)];
  if (address) {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0); // the question's name
    rr.writeUInt16BE(1, 2); // A
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(0, 6); // TTL 0: ask again, every time
    rr.writeUInt16BE(4, 10);
    address.split('.').forEach((b, i) => (rr[12 + i] = Number(b)));
    parts.push(rr);
  }
  return Buffer.concat(parts);
}

type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };
const importUrl = async (url: string) =>
  (await client.callTool(
    { name: 'import_media', arguments: { project_id: project, url } },
    { timeout: 120_000 },
  )) as Result;

describe('import_media {url}', () => {
  it('fetches a media link (and one redirected to it) and makes it an asset, probed and named by the link', async () => {
    const r = await importUrl(`${base}/clip.mp4`);
    expect(r.isError, textOf(r)).toBeFalsy();
    const out = r.structuredContent as { asset: { id: string; name: string }; kind: string; duration_seconds: number };
    expect(out.kind).toBe('video');
    expect(out.asset.name).toBe('clip.mp4');
    expect(out.duration_seconds).toBeCloseTo(2, 1);
    const again = await importUrl(`${base}/go`);
    expect(again.isError, textOf(again)).toBeFalsy();
    // The same bytes: the asset imported before.
    expect((again.structuredContent as { already_imported?: boolean }).already_imported).toBe(true);
  }, 120_000);

  it('refuses hostile servers cleanly, and never connects to a forbidden address', async () => {
    const cases: [string, RegExp][] = [
      ['/to-private', /private, loopback, link-local or metadata address/],
      ['/to-metadata', /private, loopback, link-local or metadata address/],
      ['/to-mapped', /private, loopback, link-local or metadata address/],
      [`http://127.0.0.2:${forbiddenPort}/clip.mp4`, /private, loopback, link-local or metadata address/],
      ['/loop', /redirects more than 5 times/],
      ['/endless', /more than the 4(\.\d)? MB/],
      ['/drip', /took over 6 s/],
      ['/stall', /paused over 2 s/],
      ['/page', /text\/html, not a media type|web page/],
      ['/lying.mp4', /not media cutroom can use/],
      ['file:///etc/passwd', /https:\/\/ links only/],
    ];
    for (const [path, why] of cases) {
      const r = await importUrl(path.includes(':') ? path : `${base}${path}`);
      expect(r.isError, `${path}: ${textOf(r)}`).toBe(true);
      expect(textOf(r), path).toMatch(why);
    }
    expect(forbiddenConnections).toBe(0);
    // Nothing half-fetched became an asset: the project holds the one clip.
    const p = (await client.callTool({ name: 'get_project', arguments: { project_id: project } })) as Result;
    expect((p.structuredContent as { project: { assets: unknown[] } }).project.assets).toHaveLength(1);
  }, 240_000);
});

describe('a name that rebinds to a forbidden address (DNS rebinding)', () => {
  const port = () => new URL(base).port;

  it('is resolved once and fetched from the address checked, never the one it rebinds to', async () => {
    const before = forbiddenConnections;
    const r = await importUrl(`http://media.rebind.test:${port()}/clip.mp4`);
    expect(r.isError, textOf(r)).toBeFalsy();
    expect((r.structuredContent as { kind: string }).kind).toBe('video');
    // One question for the name: the connection used the answer checked, not a second resolution (which would have
    // said 127.0.0.2, where nothing was reached).
    expect(asked.get('media.rebind.test')).toBe(1);
    expect(forbiddenConnections).toBe(before);
  }, 120_000);

  it('a redirect to the same name is resolved and checked again, and refused once it points inward', async () => {
    const before = forbiddenConnections;
    // /go redirects to /clip.mp4 on the same name: the second hop's answer is the forbidden address.
    const r = await importUrl(`http://bounce.rebind.test:${port()}/go`);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/private, loopback, link-local or metadata address/);
    expect(asked.get('bounce.rebind.test')).toBe(2);
    expect(forbiddenConnections).toBe(before);
  }, 120_000);
});
