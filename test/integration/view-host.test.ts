// The preview view in a host that enforces MCP Apps' visibility rule, connected as claude.ai and ChatGPT connect: to
// the built server over Streamable HTTP on protocol 2025-11-25 (stateless: the handshake that declared MCP Apps is
// answered by one server instance and every later request by another). The host lists the server's tools once and
// lets its view call only those it saw marked for apps (`_meta.ui.visibility` with "app", or none), refusing any other
// with "tool <name> is not available to this app", as such hosts do. With view_edit listed on that protocol (issue
// 48), the view plays each cut's clip as it is ready before the call's result, and trims, moves and drops cuts.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../helpers/harness.js';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { CHROMIUM, launchChromium, servePage, type ServedPage } from '../helpers/browser-page.js';
import { makeShotMedia, shotSpan } from '../helpers/shot-media.js';

const TOKEN = 'view-host-token-0123456789abcdef';
const root = mkdtempSync(join(tmpdir(), 'cutroom-view-host-'));
const allowed = join(root, 'allowed');
let srv: HttpServer;
let host: Client;
let browser: Browser;
let http: ServedPage;
let hostUrl: string;
let viewHtml: string;
/** The tools the host saw in tools/list, by name, with their MCP Apps visibility. */
let listed: Map<string, string[] | undefined>;
let clipOf: (i: number) => Record<string, unknown>;
let projectId: string;

type Result = {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown> & { preview_id?: string; edit_id?: string; status?: string };
};

/** The rule: a view may call a tool its host listed with "app" in its visibility (absent: model and app). */
function appMayCall(name: string): boolean {
  if (!listed.has(name)) return false;
  const visibility = listed.get(name);
  return visibility === undefined || visibility.includes('app');
}

/** The host's relay of its view's tools/call: refused unless the rule allows it; every call and result kept. */
function relay(calls: { name: string; args: Record<string, unknown>; result?: Result; refused?: string }[]) {
  return async (p: { name: string; arguments?: Record<string, unknown> }) => {
    if (!appMayCall(p.name)) {
      const refused = `tool ${p.name} is not available to this app`;
      calls.push({ name: p.name, args: p.arguments ?? {}, refused });
      throw new Error(refused);
    }
    const result = (await host.callTool(p, { timeout: 120_000 })) as Result;
    calls.push({ name: p.name, args: p.arguments ?? {}, result });
    return result;
  };
}

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const file = makeShotMedia(allowed);
  const tone = join(allowed, 'voice.wav');
  spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=330:d=3', '-ar', '48000', tone]);
  srv = await startHttpServer({
    CUTROOM_HTTP_TOKEN: TOKEN,
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
  // The host declares MCP Apps in its handshake, on the protocol the hosts that render views speak (2025-11-25).
  host = new Client(
    { name: 'enforcing-host', version: '1.0.0' },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } },
  );
  await host.connect(
    new StreamableHTTPClientTransport(new URL(srv.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  const tools = (await host.listTools()).tools;
  listed = new Map(
    tools.map((t) => [t.name, (t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility]),
  );
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await host.callTool({ name, arguments: args }, { timeout: 120_000 })) as Result;
    if (r.isError) throw new Error(textOf(r));
    return r.structuredContent!;
  };
  projectId = ((await call('create_project', { name: 'host', description: 'the host' })).project as { id: string }).id;
  const video = ((await call('import_media', { project_id: projectId, path: file })).asset as { id: string }).id;
  clipOf = (i) => ({ asset_id: video, start: shotSpan(i).start, end: shotSpan(i).end });
  viewHtml = ((await host.readResource({ uri: 'ui://cutroom/preview' })).contents[0] as { text: string }).text;

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
  toolResult: unknown,
  callTool: ReturnType<typeof relay>,
  toolInput?: Record<string, unknown>,
): Promise<{ page: Page; view: Frame; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 800, height: 700 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.exposeFunction('relayCallTool', callTool);
  await page.exposeFunction('relayReadResource', (p: { uri: string }) => host.readResource(p));
  await page.goto(hostUrl);
  await page.evaluate(
    ([html, r, i]) => window.startHost(html as string, r, 'dark', i as Record<string, unknown> | undefined),
    [viewHtml, toolResult, toolInput] as const,
  );
  return { page, view: page.frames().find((f) => f !== page.mainFrame())!, errors };
}

describe('a host on 2025-11-25 over HTTP', () => {
  it('sees view_edit in tools/list, marked for apps only, and the server declare MCP Apps', () => {
    expect(listed.get('view_edit')).toEqual(['app']);
    expect(listed.get('preview_edit')).toBeUndefined();
    expect(host.getServerCapabilities()?.extensions).toHaveProperty(['io.modelcontextprotocol/ui'], {});
  });
});

describe.skipIf(!CHROMIUM)('the view in a host that enforces the app-visibility rule', () => {
  it("plays each cut's clip as it is ready, before the call's result; then the whole preview", async () => {
    // An edit not previewed before: the host hands the view preview_edit's arguments as the call starts.
    const args = {
      project_id: projectId,
      clips: [clipOf(1), clipOf(3), clipOf(5), clipOf(7)],
      resolution: '320x180',
      fps: 25,
      width: 320,
    };
    const calls: Parameters<typeof relay>[0] = [];
    const { page, view, errors } = await open(null, relay(calls), args);
    try {
      await view.waitForFunction(() => (document.querySelector('video')?.dataset.playedCuts ?? '') !== '', undefined, {
        timeout: 120_000,
      });
      expect(calls.filter((c) => c.refused)).toEqual([]);
      const early = calls.find((c) => c.name === 'view_edit')!.result!.structuredContent!;
      // Played before any result: the preview was still rendering when the first cut's clip came.
      expect(early.status).toBe('rendering');
      expect(await view.evaluate(() => document.querySelector('video')!.dataset.playedCuts!.split(',')[0])).toBe('0');
      const whole = (await host.callTool({ name: 'preview_edit', arguments: args }, { timeout: 120_000 })) as Result;
      expect(whole.structuredContent!.preview_id).toBe(early.preview_id);
      await page.evaluate((r) => window.sendToolResult(r), whole as unknown);
      await view.waitForFunction(
        (d) => {
          const v = document.querySelector('video')!;
          return v.dataset.playing === undefined && v.readyState >= 1 && Math.abs(v.duration - d) < 0.1;
        },
        whole.structuredContent!.measured_seconds as number,
        { timeout: 120_000 },
      );
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 240_000);

  it('trims, moves and drops cuts through view_edit', async () => {
    const args = { project_id: projectId, clips: [clipOf(0), clipOf(2), clipOf(4)], resolution: '320x180', fps: 25 };
    const first = (await host.callTool(
      { name: 'preview_edit', arguments: { ...args, width: 320 } },
      { timeout: 120_000 },
    )) as Result;
    expect(first.isError).toBeFalsy();
    const calls: Parameters<typeof relay>[0] = [];
    const { page, view, errors } = await open(first, relay(calls));
    const strips = (n: number) =>
      view.waitForFunction(
        (k) =>
          (document.querySelector('video')?.readyState ?? 0) >= 1 &&
          document.querySelectorAll('[data-strip-index]').length === k &&
          !document.getElementById('strips')!.classList.contains('busy'),
        n,
        { timeout: 120_000 },
      );
    /** Waits for the model to be told of the change numbered `n` (from 1), and returns what it was told. */
    const told = async (n: number) => {
      await page.waitForFunction((k) => window.hostLog.modelContext.length >= k, n, { timeout: 120_000 });
      return (
        (await page.evaluate(() => window.hostLog.modelContext)).at(-1) as { structuredContent: Record<string, string> }
      ).structuredContent;
    };
    try {
      await strips(3);
      const cuts = (first.structuredContent!.cuts as { source_out: string }[]).map((c) =>
        c.source_out.split(':').reduce((s, p) => s * 60 + Number(p), 0),
      );
      const out = Math.round((cuts[1]! - 0.4) * 1000) / 1000;
      await view.fill('[data-strip-index="1"] input[data-field="out"]', String(out));
      await view.click('[data-strip-index="1"] [data-action="trim"]');
      expect((await told(1)).changed).toMatch(/^trimmed cut 2: out /);
      await strips(3);
      await view.click('[data-strip-index="0"] [data-action="right"]');
      expect((await told(2)).changed).toBe('moved cut 1 to place 2');
      await strips(3);
      await view.click('[data-strip-index="2"] [data-action="drop"]');
      expect((await told(3)).changed).toMatch(/^dropped cut 3 /);
      await strips(2);
      expect(calls.filter((c) => c.refused)).toEqual([]);
      const edits = calls.filter((c) => c.name === 'view_edit');
      expect(edits.length).toBeGreaterThanOrEqual(3);
      expect(edits.every((c) => !c.result!.isError)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 360_000);
});
