// The preview view's drop zone (issue 49, item 3) in Debian's chromium inside the test's MCP Apps host: over HTTP the
// view's resource declares the server's origin in its CSP connectDomains (the host sets connect-src from it, nothing
// else), a real MP4 made by ffmpeg is dropped on the zone from the view's sandboxed frame (origin "null"), the view
// asks import_media {upload} through the host, sends the file by tus in chunks with its progress shown, asks
// import_media {upload_id}, and tells the model the new asset, which the SDK client then finds in the project. Without
// the CSP's connectDomains the browser blocks the upload and the zone says it was not added; over stdio (no HTTP, no
// upload links) the resource declares no CSP and the zone says why a file cannot be dropped there.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf } from '../helpers/harness.js';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { CHROMIUM, launchChromium, servePage, type ServedPage } from '../helpers/browser-page.js';
import { makeShotMedia, shotSpan } from '../helpers/shot-media.js';

const TOKEN = 'view-upload-token-0123456789abcdef';
/** Over the view's 8 MiB chunk: the upload takes two PATCHes, so its progress stands between 0 and 100 once. */
const UPLOAD_BYTES = 12 * 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), 'cutroom-view-upload-'));
const allowed = join(root, 'allowed');
let srv: HttpServer;
let host: Client;
let browser: Browser;
let http: ServedPage;
let hostUrl: string;
let view: { html: string; csp?: { connectDomains?: string[] }; meta: Record<string, unknown> };
let preview: Result;
let projectId: string;
let upload: string;

type Result = {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
};
type Calls = { name: string; args: Record<string, unknown>; result?: Result; refused?: string }[];

/** A 2 s MP4 (picture and sound, moov first) grown to UPLOAD_BYTES by a `free` box, which every reader skips. */
function makeUpload(): string {
  const small = join(root, 'small.mp4');
  const made = spawnSync('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25:duration=2'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-c:v', 'libx264', '-c:a', 'aac'],
    ...['-movflags', '+faststart', '-y', small],
  ]);
  if (made.status !== 0) throw new Error(made.stderr.toString());
  const head = readFileSync(small);
  const box = Buffer.alloc(UPLOAD_BYTES - head.length);
  box.writeUInt32BE(box.length, 0);
  box.write('free', 4, 'latin1');
  return Buffer.concat([head, box]).toString('base64');
}

/** A host's relay of its view's tools/call: only the tools it listed for apps (as view-host.test's host). */
function relay(client: Client, calls: Calls, visible: Map<string, string[] | undefined>) {
  return async (p: { name: string; arguments?: Record<string, unknown> }) => {
    const v = visible.get(p.name);
    if (!visible.has(p.name) || (v !== undefined && !v.includes('app'))) {
      const refused = `tool ${p.name} is not available to this app`;
      calls.push({ name: p.name, args: p.arguments ?? {}, refused });
      throw new Error(refused);
    }
    const result = (await client.callTool(p, { timeout: 120_000 })) as Result;
    calls.push({ name: p.name, args: p.arguments ?? {}, result });
    return result;
  };
}

const appsHost = () =>
  new Client(
    { name: 'upload-host', version: '1.0.0' },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } },
  );

async function viewOf(client: Client): Promise<typeof view> {
  const c = (await client.readResource({ uri: 'ui://cutroom/preview' })).contents[0] as {
    text: string;
    _meta?: { ui?: { csp?: { connectDomains?: string[] } } };
  };
  return { html: c.text, meta: c._meta ?? {}, ...(c._meta?.ui?.csp ? { csp: c._meta.ui.csp } : {}) };
}

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const file = makeShotMedia(allowed);
  upload = makeUpload();
  srv = await startHttpServer({
    CUTROOM_HTTP_TOKEN: TOKEN,
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
  host = appsHost();
  await host.connect(
    new StreamableHTTPClientTransport(new URL(srv.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await host.callTool({ name, arguments: args }, { timeout: 120_000 })) as Result;
    if (r.isError) throw new Error(textOf(r));
    return r;
  };
  const made = await call('create_project', { name: 'drop', description: 'the drop zone' });
  projectId = (made.structuredContent!.project as { id: string }).id;
  const imported = await call('import_media', { project_id: projectId, path: file });
  const video = (imported.structuredContent!.asset as { id: string }).id;
  const clip = (i: number) => ({ asset_id: video, start: shotSpan(i).start, end: shotSpan(i).end });
  preview = await call('preview_edit', {
    project_id: projectId,
    clips: [clip(0), clip(2)],
    resolution: '320x180',
    fps: 25,
    width: 320,
  });
  view = await viewOf(host);

  http = await servePage('host.ts', '/host.js', 'host');
  hostUrl = http.url;
  if (CHROMIUM) browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  http?.close();
  await host?.close();
  await srv?.stop();
});

async function open(
  client: Client,
  shown: typeof view,
  result: Result | null,
  calls: Calls,
): Promise<{ page: Page; frame: Frame; errors: string[] }> {
  const tools = (await client.listTools()).tools;
  const visible = new Map(
    tools.map((t) => [t.name, (t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility]),
  );
  const page = await browser.newPage({ viewport: { width: 800, height: 700 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.exposeFunction('relayCallTool', relay(client, calls, visible));
  await page.exposeFunction('relayReadResource', (p: { uri: string }) => client.readResource(p));
  await page.goto(hostUrl);
  await page.evaluate(([html, r, csp]) => window.startHost(html as string, r, 'light', undefined, 760, csp as never), [
    shown.html,
    result,
    shown.csp,
  ] as const);
  return { page, frame: page.frames().find((f) => f !== page.mainFrame())!, errors };
}

/** Drops the upload (as holiday.mp4) on the zone, as a person's drag from their files does. */
async function drop(frame: Frame): Promise<void> {
  const dt = await frame.evaluateHandle((b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const t = new DataTransfer();
    t.items.add(new File([bytes], 'holiday.mp4', { type: 'video/mp4' }));
    return t;
  }, upload);
  await frame.dispatchEvent('#drop', 'dragover', { dataTransfer: dt });
  await frame.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
}

const settled = (frame: Frame) =>
  frame.waitForFunction(() => ['done', 'failed'].includes(document.getElementById('drop')!.dataset.state ?? ''), null, {
    timeout: 180_000,
  });

describe('over HTTP', () => {
  it("the view's resource declares the upload links' origin, and only it, in its CSP connectDomains", () => {
    expect(view.csp).toEqual({ connectDomains: [new URL(srv.url).origin] });
    expect(view.html).toContain('<meta name="cutroom-uploads" content="offered">');
  });
});

describe.skipIf(!CHROMIUM)('the drop zone in a host', () => {
  it('uploads a dropped MP4 with its progress shown, and tells the model the new asset, which the project lists', async () => {
    const calls: Calls = [];
    const { page, frame, errors } = await open(host, view, preview, calls);
    try {
      await frame.waitForFunction(() => document.getElementById('drop')!.dataset.state === 'ready', null, {
        timeout: 60_000,
      });
      await drop(frame);
      await settled(frame);
      const zone = await frame.evaluate(() => {
        const el = document.getElementById('drop')!;
        return { ...el.dataset, text: el.querySelector('.drop-text')!.textContent };
      });
      expect(zone.state, zone.text ?? '').toBe('done');
      expect(zone.text).toBe('Added holiday.mp4 to the project (video, 2.0 s).');
      // The progress went through a point between its ends (the first 8 MiB chunk of 12 MiB), to 100.
      const seen = zone.seen!.split(',').map(Number);
      expect(seen.some((p) => p > 0 && p < 100)).toBe(true);
      expect(seen.at(-1)).toBe(100);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      // Through the host: a link asked for, then the asset; nothing refused.
      expect(calls.filter((c) => c.refused)).toEqual([]);
      const imports = calls.filter((c) => c.name === 'import_media');
      expect(imports.map((c) => Object.keys(c.args).sort().join(','))).toEqual([
        'project_id,upload',
        'project_id,upload_id',
      ]);
      expect(imports[0]!.args.upload).toEqual({ filename: 'holiday.mp4', bytes: UPLOAD_BYTES });
      expect(imports[1]!.result!.isError).toBeFalsy();
      // The model is told the asset.
      const told = (await page.evaluate(() => window.hostLog.modelContext)).at(-1) as {
        content: { text: string }[];
        structuredContent: Record<string, string>;
      };
      expect(told.structuredContent).toEqual({
        uploaded_asset: zone.assetId,
        project_id: projectId,
        filename: 'holiday.mp4',
      });
      expect(told.content[0]!.text).toContain(`asset ${zone.assetId}`);
      // And the project, asked by the SDK's client, lists it: a 2 s video.
      const got = (await host.callTool({ name: 'get_project', arguments: { project_id: projectId } })) as Result;
      const assets = (
        got.structuredContent as {
          project: { assets: { id: string; name?: string; kind?: string; duration_seconds?: number }[] };
        }
      ).project.assets;
      const asset = assets.find((a) => a.id === zone.assetId);
      expect(asset?.kind).toBe('video');
      expect(asset?.name).toMatch(/^holiday/);
      expect(asset?.duration_seconds).toBeGreaterThan(1.9);
      expect(asset?.duration_seconds).toBeLessThan(2.2);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 300_000);

  it('without the CSP the resource declares, the browser blocks the upload and the zone says it was not added', async () => {
    const calls: Calls = [];
    const { csp: _declared, ...bare } = view;
    const { page, frame } = await open(host, bare, preview, calls);
    try {
      await frame.waitForFunction(() => document.getElementById('drop')!.dataset.state === 'ready', null, {
        timeout: 60_000,
      });
      await drop(frame);
      await settled(frame);
      const text = await frame.evaluate(() => document.querySelector('#drop .drop-text')!.textContent);
      expect(text).toMatch(/^holiday\.mp4 was not added: cutroom could not be reached to upload to/);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('over stdio the resource declares no CSP and the zone says why a file cannot be dropped there', async () => {
    const s = await spawnServer({
      CUTROOM_DATA_DIR: join(root, 'stdio-data'),
      CUTROOM_CACHE_DIR: join(root, 'stdio-cache'),
      CUTROOM_ALLOWED_DIRS: allowed,
    });
    try {
      const local = await viewOf(s.client);
      expect(local.csp).toBeUndefined();
      expect(local.html).not.toContain('<meta name="cutroom-uploads"');
      const calls: Calls = [];
      const { page, frame, errors } = await open(s.client, local, null, calls);
      try {
        await frame.waitForFunction(() => document.getElementById('drop')!.dataset.state === 'off', null, {
          timeout: 60_000,
        });
        const zone = await frame.evaluate(() => ({
          text: document.querySelector('#drop .drop-text')!.textContent,
          picker: document.querySelector('#drop input[type="file"]') !== null,
        }));
        expect(zone.text).toMatch(/^Files cannot be dropped here: cutroom runs on this computer/);
        expect(zone.picker).toBe(false);
        expect(calls).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    } finally {
      await s.close();
    }
  }, 120_000);
});
