// Uploads into a hosted cutroom (issue 49, item 3): import_media {upload} gives a caller a signed, expiring upload link
// with a size cap; a person's tus client uploads a 200 MB file to it, is cut off midway, resumes where the server says
// it stands, and the file becomes an asset (probed like any import) that import_media {upload_id} names. Another
// caller (two people signed in through an identity provider) gets for the upload, by its link or its id, the answer
// of one that never existed; an altered or expired link and an upload over its cap are refused; over stdio the
// argument is refused with its reason. Driven through the built server over Streamable HTTP, with tus spoken by hand,
// and by a real tus client (tus-js-client): aborted midway, it resumes from where the server stands, and resuming the
// finished upload sees it whole and sends nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  createReadStream,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import { Upload, type HttpRequest } from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, baseEnv, spawnServer, textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { freePort } from '../helpers/oauth-client.js';
import { waitFor } from '../helpers/wait.js';
import { readUpload, signUpload } from '../../src/workflow/upload-links.js';

const SECRET = 'upload-secret-0123456789abcdef0123456789abcdef';
const SIZE = 200 * 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), 'cutroom-uploads-'));
const file = join(root, 'holiday.mp4');
let idp: ChildProcess;
let srv: HttpServer;
let base: string;
let alice: Client;
let bob: Client;
let aliceToken: string;
let bobToken: string;

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: unknown[] };
const call = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: 'import_media', arguments: args }, { timeout: 180_000 })) as Result;

/** A 2 s video made into a 200 MB MP4: its moov first, then a `free` box of zeros (a box every reader skips). */
function makeUpload(): void {
  const small = join(root, 'small.mp4');
  const made = spawnSync('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x180:rate=25:duration=2',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=2',
    '-c:v',
    'libx264',
    '-c:a',
    'aac',
    '-movflags',
    '+faststart',
    '-y',
    small,
  ]);
  if (made.status !== 0) throw new Error(made.stderr.toString());
  const head = spawnSync('cat', [small]).stdout;
  const fd = openSync(file, 'w');
  writeSync(fd, head);
  const box = Buffer.alloc(8);
  box.writeUInt32BE(SIZE - head.length, 0);
  box.write('free', 4, 'latin1');
  writeSync(fd, box);
  // The rest of the box: zeros, up to SIZE.
  writeSync(fd, Buffer.alloc(1), 0, 1, SIZE - 1);
  closeSync(fd);
}

beforeAll(async () => {
  makeUpload();
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK & { kid: string } = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const [idpPort, port] = [await freePort(), await freePort()];
  const idpUrl = `http://127.0.0.1:${idpPort}`;
  base = `http://127.0.0.1:${port}`;
  idp = spawn(process.execPath, [join(ROOT, 'test/fixtures/idp.mjs')], {
    env: baseEnv({ IDP_PORT: String(idpPort), IDP_JWK: JSON.stringify(jwk), IDP_RESOURCES: `${base}/mcp` }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    idp.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('idp listening on')) resolve();
    });
    idp.once('exit', (code) => reject(new Error(`the IdP exited ${code}: ${err}`)));
  });
  mkdirSync(join(root, 'allowed'), { recursive: true });
  srv = await startHttpServer(
    {
      CUTROOM_PUBLIC_URL: base,
      CUTROOM_OAUTH_ISSUER: idpUrl,
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_CACHE_DIR: join(root, 'cache'),
      CUTROOM_ALLOWED_DIRS: join(root, 'allowed'),
      CUTROOM_LINK_SECRET: SECRET,
      CUTROOM_UPLOAD_MAX_MB: '300',
    },
    ['--port', String(port)],
  );
  const now = Math.floor(Date.now() / 1000);
  const token = (sub: string) =>
    new SignJWT({ iss: idpUrl, aud: `${base}/mcp`, sub, scope: 'cutroom', iat: now, exp: now + 3600 })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' })
      .sign(privateKey);
  aliceToken = await token('alice');
  bobToken = await token('bob');
  alice = await connectHttp(srv.url, { authorization: `Bearer ${aliceToken}` });
  bob = await connectHttp(srv.url, { authorization: `Bearer ${bobToken}` });
}, 120_000);

afterAll(async () => {
  await alice?.close().catch(() => {});
  await bob?.close().catch(() => {});
  await srv?.stop();
  idp?.kill('SIGKILL');
});

const TUS = { 'tus-resumable': '1.0.0' };
const head = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'HEAD', headers: { ...TUS, ...headers } });

/** PATCHes the file from `offset`; with `cutAfter`, the connection is cut once that many bytes have been sent. */
function patch(url: string, offset: number, cutAfter?: number): Promise<number | 'cut'> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'PATCH',
      headers: {
        ...TUS,
        'upload-offset': String(offset),
        'content-type': 'application/offset+octet-stream',
        'content-length': String(SIZE - offset),
      },
    });
    let sent = 0;
    const body = createReadStream(file, { start: offset });
    body.on('data', (chunk) => {
      sent += chunk.length;
      if (cutAfter !== undefined && sent >= cutAfter) {
        body.destroy();
        req.destroy();
        resolve('cut');
      }
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        if (res.statusCode !== 204) console.error(`PATCH answered ${res.statusCode}: ${text}`);
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', (err) => (cutAfter !== undefined ? resolve('cut') : reject(err)));
    body.pipe(req);
  });
}

async function newProject(client: Client): Promise<string> {
  const r = (await client.callTool({
    name: 'create_project',
    arguments: { name: 'uploads', description: 'uploaded media' },
  })) as Result;
  return (r.structuredContent as { project: { id: string } }).project.id;
}

async function uploadLink(client: Client, project: string, bytes?: number) {
  const r = await call(client, {
    project_id: project,
    upload: { filename: 'holiday.mp4', ...(bytes ? { bytes } : {}) },
  });
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent!.upload as { upload_id: string; url: string; expires_at: string; max_bytes: number };
}

describe('resumable uploads into a hosted cutroom', () => {
  it('a 200 MB upload cut off midway resumes where it stood and becomes an asset; another caller finds nothing', async () => {
    expect(statSync(file).size).toBe(SIZE);
    const project = await newProject(alice);
    const link = await uploadLink(alice, project, SIZE);
    expect(link.max_bytes).toBe(SIZE);
    expect(Date.parse(link.expires_at)).toBeGreaterThan(Date.now());
    const waiting = await call(alice, { project_id: project, upload_id: link.upload_id });
    expect(waiting.isError).toBe(true);
    expect(textOf(waiting)).toMatch(/nothing has been uploaded yet/);

    // A person's tus client (no credentials): create, send half and be cut off.
    const created = await fetch(link.url, { method: 'POST', headers: { ...TUS, 'upload-length': String(SIZE) } });
    expect(created.status).toBe(201);
    const at = new URL(created.headers.get('location')!, link.url).href;
    expect(await patch(at, 0, SIZE / 2)).toBe('cut');
    // Where it stands, once the server has written what arrived.
    const stood = await waitFor(
      async () => {
        const h = await head(at);
        const offset = Number(h.headers.get('upload-offset'));
        return h.status === 200 && offset > 0 ? offset : undefined;
      },
      { timeoutMs: 60_000, what: 'the upload offset after the cut' },
    );
    expect(stood).toBeLessThan(SIZE);
    const partial = await call(alice, { project_id: project, upload_id: link.upload_id });
    expect(textOf(partial)).toMatch(new RegExp(`not complete: ${stood} of ${SIZE} bytes`));

    // Bob: the link with his credentials, and the id, answer as ones that never existed.
    const never = signUpload('another secret, so no upload at all', {
      ...readUpload(SECRET, new URL(link.url).pathname.split('/')[2]!, Date.now())!,
    });
    const neverRes = await head(`${base}/uploads/${never}`, { authorization: `Bearer ${bobToken}` });
    const bobRes = await head(at, { authorization: `Bearer ${bobToken}` });
    expect(bobRes.status).toBe(404);
    expect(bobRes.status).toBe(neverRes.status);
    const bobPatch = await fetch(at, {
      method: 'PATCH',
      headers: {
        ...TUS,
        authorization: `Bearer ${bobToken}`,
        'upload-offset': String(stood),
        'content-type': 'application/offset+octet-stream',
      },
      body: 'x',
    });
    expect(bobPatch.status).toBe(404);
    const bobAsks = await call(bob, { project_id: project, upload_id: link.upload_id });
    const unknown = await call(bob, { project_id: project, upload_id: 'f'.repeat(32) });
    expect(bobAsks.isError).toBe(true);
    expect(textOf(bobAsks).replace(link.upload_id, 'ID')).toBe(textOf(unknown).replace('f'.repeat(32), 'ID'));

    // Resumed from where the server says: the rest arrives and is imported.
    expect(await patch(at, stood)).toBe(204);
    const done = await call(alice, { project_id: project, upload_id: link.upload_id });
    expect(done.isError, textOf(done)).toBeFalsy();
    const sc = done.structuredContent as {
      asset: { id: string };
      kind: string;
      duration_seconds: number;
      has_audio: boolean;
    };
    expect(sc.kind).toBe('video');
    expect(sc.duration_seconds).toBeGreaterThan(1.9);
    expect(sc.duration_seconds).toBeLessThan(2.2);
    expect(sc.has_audio).toBe(true);
    const elsewhere = await call(alice, { project_id: await newProject(alice), upload_id: link.upload_id });
    expect(textOf(elsewhere)).toMatch(new RegExp(`went into project ${project}`));
    const got = (await alice.callTool({ name: 'get_project', arguments: { project_id: project } })) as Result;
    expect(JSON.stringify(got.structuredContent)).toContain(sc.asset.id);
    // Its bytes are the project's now: the upload's own are gone, and its link takes nothing more; a client resuming
    // it is told it is whole (offset = length), as tus says a finished upload answers.
    const whole = await head(at);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('upload-offset')).toBe(String(SIZE));
    expect(whole.headers.get('upload-length')).toBe(String(SIZE));
    expect((await head(at, { authorization: `Bearer ${bobToken}` })).status).toBe(404);
    const more = await fetch(at, {
      method: 'PATCH',
      headers: { ...TUS, 'upload-offset': String(SIZE), 'content-type': 'application/offset+octet-stream' },
      body: 'x',
    });
    expect(more.status).toBe(409);
  }, 240_000);

  it("a tus client (tus-js-client) aborted midway resumes at the server's offset; resuming it once done sends nothing", async () => {
    // A 2 s MP4 grown to 24 MiB by a `free` box: six 4 MiB chunks.
    const moov = readFileSync(join(root, 'small.mp4'));
    const free = Buffer.alloc(24 * 1024 * 1024 - moov.length);
    free.writeUInt32BE(free.length, 0);
    free.write('free', 4, 'latin1');
    const bytes = Buffer.concat([moov, free]);
    const project = await newProject(alice);
    const link = await uploadLink(alice, project, bytes.length);
    const CHUNK = 4 * 1024 * 1024;
    /** Each request the client sends: its method and Upload-Offset. */
    const sent: string[] = [];
    const record = (req: HttpRequest) => void sent.push(`${req.getMethod()} ${req.getHeader('Upload-Offset') ?? ''}`);

    // Interrupted: the person's tab closes once half has gone.
    let at = '';
    await new Promise<void>((resolve, reject) => {
      let stopped = false;
      const up: Upload = new Upload(bytes, {
        endpoint: link.url,
        chunkSize: CHUNK,
        metadata: { filename: 'trip.mp4' },
        onBeforeRequest: record,
        onUploadUrlAvailable: () => void (at = up.url ?? ''),
        onProgress: (n, total) => {
          if (stopped || n < total / 2) return;
          stopped = true;
          up.abort().then(resolve, reject);
        },
        onError: reject,
        onSuccess: () => reject(new Error('the upload finished before it was interrupted')),
      });
      up.start();
    });
    expect(new URL(at).pathname).toBe(new URL(link.url).pathname);
    const stood = await waitFor(
      async () => {
        const h = await head(at);
        const offset = Number(h.headers.get('upload-offset'));
        return h.status === 200 && offset > 0 ? offset : undefined;
      },
      { timeoutMs: 60_000, what: 'the upload offset after the abort' },
    );
    expect(stood).toBeLessThan(bytes.length);

    // Resumed by a new client from the upload's URL: it asks where the server stands and sends only the rest.
    sent.length = 0;
    await new Promise<void>((resolve, reject) => {
      new Upload(bytes, {
        uploadUrl: at,
        chunkSize: CHUNK,
        onBeforeRequest: record,
        onError: reject,
        onSuccess: () => resolve(),
      }).start();
    });
    expect(sent[0]).toBe('HEAD ');
    expect(sent[1]).toBe(`PATCH ${stood}`);
    expect(sent.filter((r) => r.startsWith('POST'))).toEqual([]);
    const done = await call(alice, { project_id: project, upload_id: link.upload_id });
    expect(done.isError, textOf(done)).toBeFalsy();
    expect((done.structuredContent as { kind: string }).kind).toBe('video');
    expect((done.structuredContent as { duration_seconds: number }).duration_seconds).toBeGreaterThan(1.9);

    // Resumed once more, finished: the client sees it whole and sends no byte.
    sent.length = 0;
    let told = -1;
    await new Promise<void>((resolve, reject) => {
      new Upload(bytes, {
        uploadUrl: at,
        chunkSize: CHUNK,
        onBeforeRequest: record,
        onProgress: (n) => (told = n),
        onError: reject,
        onSuccess: () => resolve(),
      }).start();
    });
    expect(sent).toEqual(['HEAD ']);
    expect(told).toBe(bytes.length);
  }, 240_000);

  it('an altered or expired link and an upload over its cap are refused', async () => {
    const project = await newProject(alice);
    const link = await uploadLink(alice, project, 1000);
    const token = new URL(link.url).pathname.split('/')[2]!;
    const claim = readUpload(SECRET, token, Date.now())!;
    // Altered: its claim says another cap (the signature no longer matches).
    const [, mac] = token.split('.');
    const bigger = Buffer.from(JSON.stringify({ ...claim, expired: undefined, max: SIZE })).toString('base64url');
    const altered = await fetch(`${base}/uploads/${bigger}.${mac}`, {
      method: 'POST',
      headers: { ...TUS, 'upload-length': '2000' },
    });
    expect(altered.status).toBe(404);
    // A page of any origin (a view's sandboxed frame is "null") may use a link and read every answer, errors too, but
    // sends no credentials: no Allow-Credentials, no Authorization among the headers it may send.
    const preflight = await fetch(link.url, {
      method: 'OPTIONS',
      headers: {
        origin: 'null',
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'tus-resumable',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
    expect(preflight.headers.get('access-control-allow-headers')).not.toMatch(/authorization/i);
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    const refused = await fetch(`${base}/uploads/${bigger}.${mac}`, {
      method: 'HEAD',
      headers: { ...TUS, origin: 'null' },
    });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('access-control-allow-credentials')).toBeNull();
    // Expired: the same upload, signed with a time past.
    const { expired: _e, ...rest } = claim;
    const old = signUpload(SECRET, { ...rest, expires: Math.floor(Date.now() / 1000) - 10 });
    const late = await fetch(`${base}/uploads/${old}`, { method: 'POST', headers: { ...TUS, 'upload-length': '500' } });
    expect(late.status).toBe(403);
    expect(await late.text()).toMatch(/expired/);
    // Over the link's cap.
    const over = await fetch(link.url, { method: 'POST', headers: { ...TUS, 'upload-length': '2000' } });
    expect(over.status).toBe(413);
    // Over the server's cap, asked for.
    const tooBig = await call(alice, {
      project_id: project,
      upload: { filename: 'big.mov', bytes: 400 * 1024 * 1024 },
    });
    expect(tooBig.isError).toBe(true);
    expect(textOf(tooBig)).toMatch(/over this server's cap.*CUTROOM_UPLOAD_MAX_MB/);
  }, 120_000);

  it('over stdio, upload is refused with its reason', async () => {
    const s = await spawnServer({
      CUTROOM_DATA_DIR: join(root, 'stdio-data'),
      CUTROOM_CACHE_DIR: join(root, 'stdio-cache'),
      CUTROOM_ALLOWED_DIRS: join(root, 'allowed'),
    });
    try {
      const project = await newProject(s.client);
      const r = await call(s.client, { project_id: project, upload: { filename: 'a.mp4' } });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/served over HTTP \(--http\)/);
    } finally {
      await s.close();
    }
  }, 60_000);
});
