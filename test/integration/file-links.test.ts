// Files out of a hosted cutroom (issue 49, item 1): over HTTP a finished render, a preview and an export carry a
// signed, expiring link (and when it expires) that a person can open without credentials; the link serves the file
// whole and by byte range, named by its own name; an altered link is answered as one that never existed, an expired
// one says it expired, and another caller presenting a caller's link gets the answer of a link that never existed.
// Driven through the built server over Streamable HTTP, on the local backend and on the service backend (two keys).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { mediaProject } from '../helpers/media-project.js';
import { makeSpeechMedia } from '../helpers/speech-media.js';
import { waitFor } from '../helpers/wait.js';
import { fileLinks, readLink } from '../../src/workflow/file-links.js';

const TOKEN = 'links-token-0123456789abcdef';
const SECRET = 'link-secret-0123456789abcdef0123456789abcdef';
const root = mkdtempSync(join(tmpdir(), 'cutroom-links-'));
const media = join(root, 'media');
const dirs = { cache: join(root, 'cache'), data: join(root, 'data') };
let srv: HttpServer | undefined;
let hosted: HttpServer | undefined;
let service: FakeService | undefined;
const clients: Client[] = [];

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: unknown[] };
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = (await client.callTool({ name, arguments: args }, { timeout: 180_000 })) as Result;
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  return r.structuredContent ?? {};
}

beforeAll(() => {
  for (const d of [media, ...Object.values(dirs)]) mkdirSync(d, { recursive: true });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await srv?.stop();
  await hosted?.stop();
  await service?.stop();
});

/** The link's token and name (its last two path segments). */
function partsOf(link: string): { token: string; name: string } {
  const m = /\/files\/([^/]+)\/([^/]+)$/.exec(new URL(link).pathname)!;
  return { token: m[1]!, name: decodeURIComponent(m[2]!) };
}

describe('signed links out of a hosted cutroom', () => {
  it('a local render: its link serves it whole and by range, named by its name; altered and expired links are refused', async () => {
    const files = makeSpeechMedia(media);
    srv = await startHttpServer({
      CUTROOM_DATA_DIR: dirs.data,
      CUTROOM_CACHE_DIR: dirs.cache,
      CUTROOM_ALLOWED_DIRS: media,
      CUTROOM_HTTP_TOKEN: TOKEN,
      CUTROOM_LINK_SECRET: SECRET,
    });
    const client = await connectHttp(srv.url, { authorization: `Bearer ${TOKEN}` });
    clients.push(client);
    const project = (
      (await ok(client, 'create_project', { name: 'links', description: 'signed links' })) as {
        project: { id: string };
      }
    ).project.id;
    const video = (
      (await ok(client, 'import_media', { project_id: project, path: files.video })) as { asset: { id: string } }
    ).asset.id;
    const composed = (await ok(client, 'compose_edit', {
      project_id: project,
      clips: [
        { asset_id: video, start: 0, end: 2 },
        { asset_id: video, start: 5, end: 7 },
      ],
      resolution: '320x180',
      fps: 25,
    })) as { edit_id: string };
    const render = (await ok(client, 'render_edit', { project_id: project, edit_id: composed.edit_id })) as {
      render: { asset_id: string };
    };
    let status: Record<string, unknown> = {};
    await waitFor(
      async () => {
        status = await ok(client, 'get_render_status', { project_id: project, asset_id: render.render.asset_id });
        return status.done === true || status.failed === true;
      },
      { what: 'the render to end', timeoutMs: 180_000, intervalMs: 500 },
    );
    expect(status.done, JSON.stringify(status)).toBe(true);
    const link = status.url as string;
    expect(link.startsWith(`${srv.base}/files/`), link).toBe(true);
    // It says when it expires: an hour from now (the default), give or take the time the test took.
    const expires = Date.parse(status.links_expire_at as string);
    expect(Math.abs(expires - (Date.now() + 3600_000))).toBeLessThan(300_000);

    // Whole, with no credentials (a person opens it in a browser).
    const whole = await fetch(link);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const disposition = whole.headers.get('content-disposition') ?? '';
    const { name } = partsOf(link);
    expect(name).toMatch(/\.mp4$/);
    expect(disposition).toContain(`filename="${name}"`);
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(Number(whole.headers.get('content-length'))).toBe(bytes.length);
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(bytes.length).toBeGreaterThan(10_000);

    // By range: the bytes asked for, and what the file's size is.
    const ranged = await fetch(link, { headers: { range: 'bytes=1000-4999' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 1000-4999/${bytes.length}`);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(1000, 5000))).toBe(true);
    const tail = await fetch(link, { headers: { range: 'bytes=-500' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 500))).toBe(true);
    const beyond = await fetch(link, { headers: { range: `bytes=${bytes.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    await beyond.arrayBuffer();

    // Altered: in its signature, in what it signs (another file).
    const { token } = partsOf(link);
    const [payload, sig] = token.split('.') as [string, string];
    const flipped = (s: string) => `${s.slice(0, -1)}${s.endsWith('A') ? 'B' : 'A'}`;
    const claim = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const otherPayload = Buffer.from(JSON.stringify({ ...claim, path: '../../etc/passwd' })).toString('base64url');
    const never = await (await fetch(`${srv.base}/files/${'x'.repeat(20)}.${'y'.repeat(43)}/a.mp4`)).text();
    for (const altered of [
      link.replace(sig, flipped(sig)),
      link.replace(payload, otherPayload),
      link.replace(payload, flipped(payload)),
    ]) {
      const r = await fetch(altered);
      expect(r.status, altered).toBe(404);
      expect(await r.text()).toBe(never);
    }
    // Expired: the same file, signed with the server's secret, an hour ago for a minute.
    const past = fileLinks({
      secret: SECRET,
      roots: [dirs.cache, dirs.data],
      base: srv.base,
      caller: claim.caller as string,
      ttlS: 60,
      now: () => Date.now() - 3600_000,
    }).link(join([dirs.cache, dirs.data][claim.root as number]!, claim.path as string), name)!;
    expect(readLink(SECRET, partsOf(past.url).token, Date.now())?.expired).toBe(true);
    const expired = await fetch(past.url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toMatch(/expired/);
    // The same claim, signed now, is served: only its time made the difference.
    const fresh = fileLinks({
      secret: SECRET,
      roots: [dirs.cache, dirs.data],
      base: srv.base,
      caller: claim.caller as string,
      ttlS: 60,
    }).link(join([dirs.cache, dirs.data][claim.root as number]!, claim.path as string), name)!;
    const served = await fetch(fresh.url);
    expect(served.status).toBe(200);
    await served.arrayBuffer();

    // A preview and an export carry links too, beside their cutroom:// URIs.
    const preview = await ok(client, 'preview_edit', { project_id: project, edit_id: composed.edit_id, width: 160 });
    expect(preview.path).toMatch(/^cutroom:\/\/previews\//);
    const played = await fetch(preview.link as string);
    expect(played.status).toBe(200);
    expect(
      Buffer.from(await played.arrayBuffer())
        .subarray(4, 8)
        .toString('latin1'),
    ).toBe('ftyp');
    const exported = await ok(client, 'export_edit', {
      project_id: project,
      edit_id: composed.edit_id,
      format: 'fcpxml',
    });
    const xml = await fetch(exported.link as string);
    expect(xml.status).toBe(200);
    expect(xml.headers.get('content-disposition')).toMatch(/\.fcpxml"/);
    expect(await xml.text()).toMatch(/<fcpxml/);
  }, 400_000);

  it("on the service backend, a caller's link is refused to another caller as a link that never existed", async () => {
    service = await new FakeService().start();
    const second = 'second-key-0123456789';
    service.tenants.set(second, 'owner-2');
    const { projectId, ids } = mediaProject(service, 'links');
    hosted = await startHttpServer({
      VJ_BACKEND: 'remote',
      VJ_API_URL: service.url,
      CUTROOM_DATA_DIR: join(root, 'hosted-data'),
      CUTROOM_CACHE_DIR: join(root, 'hosted-cache'),
      CUTROOM_ALLOWED_DIRS: media,
    });
    const first = await connectHttp(hosted.url, { authorization: `Bearer ${service.apiKey}` });
    clients.push(first);
    const composed = (await ok(first, 'compose_edit', {
      project_id: projectId,
      clips: [{ asset_id: ids.red, start: 0, end: 1 }],
      resolution: '320x180',
      fps: 25,
    })) as { edit_id: string };
    const exported = await ok(first, 'export_edit', {
      project_id: projectId,
      edit_id: composed.edit_id,
      format: 'edl',
    });
    const link = exported.link as string;
    expect(JSON.stringify(exported)).toMatch(/\/files\//);
    const never = await fetch(`${hosted.base}/files/${'x'.repeat(20)}.${'y'.repeat(43)}/a.edl`);
    const neverText = await never.text();
    // Its caller, and a person with no credentials, get the file.
    for (const headers of [{ authorization: `Bearer ${service.apiKey}` }, {}]) {
      const r = await fetch(link, { headers });
      expect(r.status).toBe(200);
      expect(await r.text()).toMatch(/TITLE/);
    }
    // The second caller gets what a link that never existed gets.
    const refused = await fetch(link, { headers: { authorization: `Bearer ${second}` } });
    expect(refused.status).toBe(never.status);
    expect(await refused.text()).toBe(neverText);
  }, 200_000);
});
