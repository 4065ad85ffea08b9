// The preview view (issue 20) in a real browser: Debian's chromium, driven by playwright-core (which downloads no
// browser). A test host page embeds the view that the built server serves at ui://cutroom/preview in a sandboxed
// iframe under the specification's default CSP, hands it a real preview_edit result, and relays its calls to the
// server. The video must play from a data: URL, every cut be an element, a click seek and tell the model, and the
// page make no network request and raise no error. A second server on the same folders serves resources in parts
// of 3 KiB: the view reads the preview's manifest and every part, and plays the joined bytes.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait.js';
import { CHROMIUM, launchChromium, servePage, type ServedPage } from '../helpers/browser-page.js';
import { makeShotMedia, shotSpan } from '../helpers/shot-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-view-'));
const allowed = join(root, 'allowed');
let server: Spawned;
/** The same folders, served in parts of 3 KiB. */
let parted: Spawned;
let browser: Browser;
let http: ServedPage;
let hostUrl: string;
type ResultCut = {
  index: number;
  asset_id: string;
  source_in: string;
  source_out: string;
  timeline_start: string;
  timeline_end: string;
};
let result: {
  structuredContent: { preview_id: string; edit_id: string; path: string; measured_seconds: number; cuts: ResultCut[] };
} & Record<string, unknown>;
let previewArgs: Record<string, unknown>;
let clipOf: (i: number) => Record<string, unknown>;
let viewHtml: string;

const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};
const seconds = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const file = makeShotMedia(allowed);
  const tone = join(allowed, 'voice.wav');
  spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=330:d=3', '-ar', '48000', tone]);
  const env = {
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  };
  // The host declares MCP Apps (so view_edit is listed to it, and its results are checked against its outputSchema);
  // the second server's client does not.
  server = await spawnServer(env, {
    capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
  });
  parted = await spawnServer({ ...env, CUTROOM_RESOURCE_PART_BYTES: '3072' });
  const call = (name: string, args: Record<string, unknown>) =>
    server.client.callTool({ name, arguments: args }, { timeout: 120_000 });
  const projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'view', description: 'the view' }),
  ).project.id;
  const video = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: file }))
    .asset.id;
  const voice = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: tone }))
    .asset.id;
  const clip = (i: number) => ({ asset_id: video, start: shotSpan(i).start, end: shotSpan(i).end });
  clipOf = clip;
  previewArgs = {
    project_id: projectId,
    clips: [clip(0), clip(2), clip(4), clip(6)],
    overlays: [{ asset_id: voice, at: 0.5, until: 3 }],
    resolution: '320x180',
    fps: 25,
    width: 320,
  };
  result = (await call('preview_edit', previewArgs)) as typeof result;
  structured(result);
  viewHtml = ((await server.client.readResource({ uri: 'ui://cutroom/preview' })).contents[0] as { text: string }).text;

  http = await servePage('host.ts', '/host.js', 'test host');
  hostUrl = http.url;
  browser = await launchChromium(['--autoplay-policy=no-user-gesture-required']);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  http?.close();
  await server?.close();
  await parted?.close();
});

type Read = (p: { uri: string }) => Promise<unknown>;

/**
 * A page with the test host, the view started with `toolResult`, its resources/read relayed to `read` (the first
 * server's by default); what it requested and every error it raised.
 */
type Call = (p: { name: string; arguments?: Record<string, unknown> }) => Promise<unknown>;

async function open(
  toolResult: unknown,
  theme: 'light' | 'dark' = 'dark',
  read: Read = (p) => server.client.readResource(p),
  callTool: Call = (p) => server.client.callTool(p, { timeout: 120_000 }),
  toolInput?: Record<string, unknown>,
): Promise<{ page: Page; view: Frame; requests: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 800, height: 700 } });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => (m.type() === 'error' ? errors.push(`console: ${m.text()}`) : undefined));
  await page.exposeFunction('relayCallTool', callTool);
  await page.exposeFunction('relayReadResource', read);
  await page.goto(hostUrl);
  await page.evaluate(
    ([html, r, t, i]) =>
      window.startHost(html as string, r, t as 'light' | 'dark', i as Record<string, unknown> | undefined),
    [viewHtml, toolResult, theme, toolInput] as const,
  );
  const view = page.frames().find((f) => f !== page.mainFrame())!;
  return { page, view, requests, errors };
}

describe.skipIf(!CHROMIUM)('the preview view in chromium', () => {
  it('plays the preview from a data: URL under the default CSP, one element per cut, overlays drawn; no network, no error', async () => {
    const { page, view, requests, errors } = await open(result);
    try {
      await view.waitForFunction(
        () => {
          const v = document.querySelector('video');
          return !!v && v.readyState >= 1 && v.duration > 0;
        },
        undefined,
        { timeout: 60_000 },
      );
      const facts = await view.evaluate(() => {
        const v = document.querySelector('video')!;
        return {
          duration: v.duration,
          src: v.currentSrc.slice(0, 22),
          cuts: [...document.querySelectorAll('[data-cut-index]')].map((e) =>
            Number((e as HTMLElement).dataset.cutIndex),
          ),
          overlays: document.querySelectorAll('[data-overlay-index]').length,
          theme: document.documentElement.dataset.theme ?? getComputedStyle(document.documentElement).colorScheme,
        };
      });
      expect(facts.src).toBe('data:video/mp4;base64,');
      expect(Math.abs(facts.duration - result.structuredContent.measured_seconds)).toBeLessThan(0.1);
      expect(facts.cuts).toEqual(result.structuredContent.cuts.map((c) => c.index));
      expect(facts.overlays).toBe(1);
      expect(facts.theme).toBe('dark');
      // It sized itself, and read the preview through the host.
      const log = await page.evaluate(() => window.hostLog);
      expect(log.initialized).toBe(true);
      expect(log.sizes.some((s) => (s.height ?? 0) > 100)).toBe(true);
      expect(log.calls).toEqual([
        `resources/read cutroom://previews/${result.structuredContent.preview_id}/preview.mp4`,
      ]);
      expect(requests).toEqual([hostUrl, `${hostUrl}host.js`]);
      expect(errors).toEqual([]);
      // A frame on screen for the picture (the README keeps one): the middle of cut 2.
      await view.evaluate(() => (document.querySelector('video')!.currentTime = 1.7));
      await view.waitForFunction(
        () => {
          const v = document.querySelector('video')!;
          return v.readyState >= 2 && !v.seeking;
        },
        undefined,
        { timeout: 30_000 },
      );
      const shot = join(root, 'preview-view.png');
      await page.screenshot({ path: shot, fullPage: true });
      if (process.env.CUTROOM_SAVE_SCREENSHOT) copyFileSync(shot, process.env.CUTROOM_SAVE_SCREENSHOT);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('a click on a cut seeks to its start and tells the model which cut the person picked', async () => {
    const { page, view, errors } = await open(result, 'light');
    try {
      await view.waitForFunction(() => (document.querySelector('video')?.readyState ?? 0) >= 1, undefined, {
        timeout: 60_000,
      });
      await view.click('[data-cut-index="2"]');
      const start = seconds(result.structuredContent.cuts[2]!.timeline_start);
      await view.waitForFunction((t) => Math.abs(document.querySelector('video')!.currentTime - t) < 0.05, start, {
        timeout: 10_000,
      });
      const log = await page.evaluate(() => window.hostLog);
      expect(log.modelContext).toHaveLength(1);
      expect(log.modelContext[0]).toMatchObject({
        structuredContent: { picked_cut: 2 },
        content: [
          { type: 'text', text: expect.stringMatching(/^In the preview, the person picked cut 3 \(index 2\)/) },
        ],
      });
      expect(await view.evaluate(() => document.querySelector('.picked')?.getAttribute('data-cut-index'))).toBe('2');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('completes a result that lists only the first overlays (overlays_total) from preview.json, as it does cuts', async () => {
    const partial = { ...result, structuredContent: { ...result.structuredContent, overlays: [], overlays_total: 1 } };
    const { page, view, errors } = await open(partial);
    try {
      await view.waitForFunction(
        () =>
          document.querySelectorAll('[data-overlay-index]').length === 1 &&
          (document.querySelector('video')?.readyState ?? 0) >= 1,
        undefined,
        { timeout: 60_000 },
      );
      const log = await page.evaluate(() => window.hostLog);
      expect(log.calls).toContain(
        `resources/read cutroom://previews/${result.structuredContent.preview_id}/preview.json`,
      );
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('follows a preview still rendering with preview_edit {preview_id} through the host, then shows it', async () => {
    const rendering = {
      content: [{ type: 'text', text: 'still rendering' }],
      structuredContent: { preview_id: result.structuredContent.preview_id, status: 'rendering', progress: 0.5 },
    };
    const asked: Parameters<Call>[0][] = [];
    const { page, view, errors } = await open(
      rendering,
      'dark',
      (p) => server.client.readResource(p),
      (p) => (asked.push(p), server.client.callTool(p, { timeout: 120_000 })),
    );
    try {
      await view.waitForFunction(
        () =>
          document.querySelectorAll('[data-cut-index]').length > 0 &&
          (document.querySelector('video')?.readyState ?? 0) >= 1,
        undefined,
        { timeout: 60_000 },
      );
      const log = await page.evaluate(() => window.hostLog);
      expect(log.calls[0]).toBe('tools/call preview_edit');
      // The preview_id alone: with an edit's arguments beside it, preview_edit would refuse.
      expect(asked[0]?.arguments).toEqual({ preview_id: result.structuredContent.preview_id });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('backs off while a preview stays "rendering": a host that answers at once is not asked hundreds of times (issue 31, item 7)', async () => {
    const rendering = {
      content: [{ type: 'text', text: 'still rendering' }],
      structuredContent: { preview_id: result.structuredContent.preview_id, status: 'rendering', progress: 0.1 },
    };
    const at: number[] = [];
    // A host (or a server with CUTROOM_RENDER_WAIT_MS=0) that answers "rendering" at once, every time.
    const { page } = await open(
      rendering,
      'dark',
      (p) => server.client.readResource(p),
      async () => {
        at.push(Date.now());
        return rendering;
      },
    );
    try {
      // 0, 0.25, 0.75, 1.75, 3.75, 5.75 s: five calls in four seconds (before: 1,628 calls in three), then one every
      // 2 s. Waited for, however slow the machine; a loaded one only calls less often, and later.
      await waitFor(() => at.length >= 6, { what: 'six calls of preview_edit' });
      const gaps = at.slice(1, 6).map((t, i) => t - at[i]!);
      expect(at.filter((t) => t - at[0]! <= 4000).length, `calls at ${gaps.join(', ')} ms apart`).toBeLessThanOrEqual(
        6,
      );
      gaps.forEach((g, i) => expect(g, `gap ${i}`).toBeGreaterThanOrEqual(200));
      // The pause stops growing at 2 s: the fifth is not doubled to 4 s (the margin is for a loaded machine's timers).
      expect(Math.max(...gaps)).toBeLessThan(4000);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('plays a preview served in parts: reads its manifest, then every part, and plays the joined bytes', async () => {
    const { page, view, errors } = await open(result, 'dark', (p) => parted.client.readResource(p));
    try {
      await view.waitForFunction(
        () => {
          const v = document.querySelector('video');
          return !!v && v.readyState >= 1 && v.duration > 0;
        },
        undefined,
        { timeout: 60_000 },
      );
      const file = readFileSync(result.structuredContent.path);
      const uri = `cutroom://previews/${result.structuredContent.preview_id}/preview.mp4`;
      const parts = Math.ceil(file.length / 3072);
      expect(parts).toBeGreaterThan(2);
      const log = await page.evaluate(() => window.hostLog);
      expect(log.calls).toEqual([
        `resources/read ${uri}`,
        ...Array.from({ length: parts }, (_, i) => `resources/read ${uri}/parts/${i}`),
      ]);
      expect(await view.evaluate(() => document.querySelector('video')!.currentSrc)).toBe(
        `data:video/mp4;base64,${file.toString('base64')}`,
      );
      const duration = await view.evaluate(() => document.querySelector('video')!.duration);
      expect(Math.abs(duration - result.structuredContent.measured_seconds)).toBeLessThan(0.1);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('refuses parts that do not join into what the manifest says, and says so', async () => {
    // A part whose bytes changed (same length): the joined whole's sha256 is not the manifest's.
    const tampered: Read = async (p) => {
      const r = (await parted.client.readResource(p)) as { contents: { blob?: string }[] };
      if (!p.uri.endsWith('/parts/1')) return r;
      const bytes = Buffer.from(r.contents[0]!.blob!, 'base64');
      bytes[10] ^= 0xff;
      return { contents: [{ ...r.contents[0], blob: bytes.toString('base64') }] };
    };
    const { page, view } = await open(result, 'dark', tampered);
    try {
      await view.waitForFunction(
        () => /cannot be shown/.test(document.getElementById('status')?.textContent ?? ''),
        undefined,
        { timeout: 60_000 },
      );
      expect(await view.evaluate(() => document.getElementById('status')!.textContent)).toBe(
        'The preview cannot be shown here: the preview changed while it was read: open it again',
      );
      expect(await view.evaluate(() => document.querySelector('video')!.getAttribute('src'))).toBeNull();
    } finally {
      await page.close();
    }
  }, 120_000);
});

type ViewResult = {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: {
    edit_id?: string;
    preview_id: string;
    status: string;
    changed?: string;
    measured_seconds?: number;
    cuts?: ResultCut[];
    ready?: { index: number; uri: string }[];
    levels?: { step: number; cuts: number[][] };
  };
};
type ModelContext = {
  content: { type: string; text: string }[];
  structuredContent: { edit_id: string; preview_id: string; changed: string };
};
const span = (c: ResultCut) => seconds(c.timeline_end) - seconds(c.timeline_start);

/** A relay to the server that keeps every view_edit call and its result. */
function recording(calls: { args: Record<string, unknown>; result: ViewResult }[]): Call {
  return async (p) => {
    const r = (await server.client.callTool(p, { timeout: 120_000 })) as ViewResult;
    if (p.name === 'view_edit') calls.push({ args: p.arguments ?? {}, result: r });
    return r;
  };
}

/** The view shows the preview: its video can play and every cut has its strip. */
async function showing(view: Frame, cuts: number): Promise<void> {
  await view.waitForFunction(
    (n) =>
      (document.querySelector('video')?.readyState ?? 0) >= 1 &&
      document.querySelectorAll('[data-strip-index]').length === n &&
      !document.getElementById('strips')!.classList.contains('busy'),
    cuts,
    { timeout: 60_000 },
  );
}

/** After a change: the model context the view sent, the view_edit result that finished it, the video it plays. */
async function afterChange(page: Page, view: Frame, calls: { result: ViewResult }[]) {
  await page.waitForFunction(
    () =>
      window.hostLog.modelContext.some(
        (m) => !!(m as { structuredContent?: { edit_id?: string } }).structuredContent?.edit_id,
      ),
    undefined,
    { timeout: 120_000 },
  );
  const context = (await page.evaluate(() => window.hostLog.modelContext)).at(-1) as ModelContext;
  const done = calls
    .map((c) => c.result)
    .filter((r) => r.structuredContent?.status === 'done')
    .at(-1)!;
  await view.waitForFunction(
    (d) => {
      const v = document.querySelector('video')!;
      return v.readyState >= 1 && Math.abs(v.duration - d) < 0.1;
    },
    done.structuredContent!.measured_seconds!,
    { timeout: 60_000 },
  );
  return { context, done: done.structuredContent! };
}

describe.skipIf(!CHROMIUM)('cutting in the preview view (view_edit)', () => {
  it('tools/list: a client declaring MCP Apps gets view_edit, app-only; one that does not, does not', async () => {
    const withUi = (await server.client.listTools()).tools.find((t) => t.name === 'view_edit');
    expect(withUi?._meta).toEqual({ ui: { resourceUri: 'ui://cutroom/preview', visibility: ['app'] } });
    expect(withUi?.outputSchema).toBeDefined();
    expect((await parted.client.listTools()).tools.map((t) => t.name)).not.toContain('view_edit');
    // Still callable by such a client (a host relays its view's calls): here, a change it cannot make.
    const r = (await parted.client.callTool({
      name: 'view_edit',
      arguments: { edit_id: result.structuredContent.edit_id, changes: [{ cut: 9, drop: true }] },
    })) as ViewResult;
    expect(r.isError).toBe(true);
    expect(r.content?.[0]?.text).toBe('there is no cut 10 (cut: 9, an index from 0; the edit has 4 cuts)');
    const backwards = (await server.client.callTool({
      name: 'view_edit',
      arguments: { edit_id: result.structuredContent.edit_id, changes: [{ cut: 0, in: 2, out: '00:00:01' }] },
    })) as ViewResult;
    expect(backwards).toMatchObject({
      isError: true,
      content: [
        { type: 'text', text: "cut 1's in point (2 s) must be before its out point (1 s): it would show nothing" },
      ],
    });
    expect(backwards.structuredContent).toBeUndefined();
  }, 60_000);

  it("each cut's strip shows its own frames (slices of the contact sheet) and draws its sound level", async () => {
    const { page, view, errors } = await open(result);
    try {
      await showing(view, 4);
      // The cuts are shots 0, 2, 4 and 6: red, blue, magenta, white. Each thumbnail's middle is its cut's colour.
      const colours = await view.evaluate(() =>
        [...document.querySelectorAll('[data-strip-index]')].map((strip) =>
          [...strip.querySelectorAll<HTMLCanvasElement>('.frames canvas')].map((c) => [
            ...c
              .getContext('2d')!
              .getImageData(c.width >> 1, c.height >> 1, 1, 1)
              .data.slice(0, 3),
          ]),
        ),
      );
      const near = (px: number[], rgb: number[]) => px.every((v, i) => Math.abs(v - rgb[i]!) < 40);
      const expected = [
        [255, 0, 0],
        [0, 0, 255],
        [255, 0, 255],
        [255, 255, 255],
      ];
      expect(colours.map((cells) => cells.length)).toEqual([3, 3, 3, 3]);
      colours.forEach((cells, i) =>
        cells.forEach((px, k) => expect(near(px, expected[i]!), `strip ${i} frame ${k}: ${px}`).toBe(true)),
      );
      // The level line is drawn (some pixel of it is not blank).
      const drawn = await view.evaluate(() =>
        [...document.querySelectorAll<HTMLCanvasElement>('.level-line')].map((c) =>
          c
            .getContext('2d')!
            .getImageData(0, 0, c.width, c.height)
            .data.some((v, i) => i % 4 === 3 && v > 0),
        ),
      );
      expect(drawn).toEqual([true, true, true, true]);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it("trims a cut's out point: a new preview plays with that cut shorter; the model is told the new edit_id and the change", async () => {
    const calls: { args: Record<string, unknown>; result: ViewResult }[] = [];
    const { page, view, errors } = await open(result, 'dark', (p) => server.client.readResource(p), recording(calls));
    try {
      await showing(view, 4);
      const before = result.structuredContent.cuts;
      const out = Math.round((seconds(before[1]!.source_out) - 0.4) * 1000) / 1000;
      await view.fill('[data-strip-index="1"] input[data-field="out"]', String(out));
      await view.click('[data-strip-index="1"] [data-action="trim"]');
      const { context, done } = await afterChange(page, view, calls);
      expect(calls[0]!.args).toEqual({
        edit_id: result.structuredContent.edit_id,
        width: 320,
        changes: [{ cut: 1, out }],
      });
      expect(calls.every((c) => !c.result.isError)).toBe(true);
      expect(done.cuts!.map(span).map((s) => +s.toFixed(2))).toEqual(
        before.map(span).map((s, i) => +(i === 1 ? s - 0.4 : s).toFixed(2)),
      );
      expect(seconds(done.cuts![1]!.source_out)).toBeCloseTo(out, 3);
      // Each cut's sound level over time, for its strip: the shorter cut has fewer steps.
      expect(done.levels!.cuts).toHaveLength(4);
      expect(done.levels!.cuts[1]!.length).toBeLessThan(done.levels!.cuts[0]!.length + done.levels!.cuts[2]!.length);
      expect(Math.abs(done.levels!.cuts[1]!.length * done.levels!.step - span(done.cuts![1]!))).toBeLessThan(
        done.levels!.step * 2 + 0.05,
      );
      expect(done.edit_id).toMatch(/^edit-/);
      expect(done.edit_id).not.toBe(result.structuredContent.edit_id);
      expect(context.structuredContent).toEqual({
        edit_id: done.edit_id,
        preview_id: done.preview_id,
        changed: expect.stringMatching(/^trimmed cut 2: out .* → /),
      });
      expect(context.content[0]!.text).toContain(done.edit_id!);
      // The strips are the new preview's, and the view plays the new preview's video.
      expect(await view.evaluate(() => document.querySelectorAll('[data-cut-index]').length)).toBe(4);
      expect(
        await view.evaluate(() =>
          Number((document.querySelector('[data-strip-index="1"] input[data-field="out"]') as HTMLInputElement).value),
        ),
      ).toBeCloseTo(out, 3);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('drops a cut: the new preview has the other three, in order', async () => {
    const calls: { args: Record<string, unknown>; result: ViewResult }[] = [];
    const { page, view, errors } = await open(result, 'dark', (p) => server.client.readResource(p), recording(calls));
    try {
      await showing(view, 4);
      await view.click('[data-strip-index="0"] [data-action="drop"]');
      const { context, done } = await afterChange(page, view, calls);
      const before = result.structuredContent.cuts;
      expect(done.cuts!.map((c) => c.source_in)).toEqual(before.slice(1).map((c) => c.source_in));
      expect(context.structuredContent.changed).toMatch(/^dropped cut 1 /);
      expect(context.structuredContent.edit_id).toBe(done.edit_id);
      await showing(view, 3);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('moves a cut one place later: the new preview plays them in the new order', async () => {
    const calls: { args: Record<string, unknown>; result: ViewResult }[] = [];
    const { page, view, errors } = await open(result, 'dark', (p) => server.client.readResource(p), recording(calls));
    try {
      await showing(view, 4);
      await view.click('[data-strip-index="0"] [data-action="right"]');
      const { context, done } = await afterChange(page, view, calls);
      const before = result.structuredContent.cuts;
      expect(done.cuts!.map((c) => c.source_in)).toEqual([1, 0, 2, 3].map((i) => before[i]!.source_in));
      expect(done.cuts!.map(span).map((s) => +s.toFixed(2))).toEqual(
        [1, 0, 2, 3].map((i) => +span(before[i]!).toFixed(2)),
      );
      expect(context.structuredContent).toEqual({
        edit_id: done.edit_id,
        preview_id: done.preview_id,
        changed: 'moved cut 1 to place 2',
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it("given preview_edit's arguments first, plays the cuts as they are ready before the result arrives, then the whole preview", async () => {
    // An edit not previewed before (so that it renders now), as the host sends its arguments when the call starts.
    const args = { ...previewArgs, clips: [clipOf(1), clipOf(3), clipOf(5), clipOf(7)] };
    const calls: { args: Record<string, unknown>; result: ViewResult }[] = [];
    const { page, view, errors } = await open(
      null,
      'dark',
      (p) => server.client.readResource(p),
      recording(calls),
      args,
    );
    try {
      // A cut's own clip plays, and no tool result has been sent.
      await view.waitForFunction(() => (document.querySelector('video')?.dataset.playedCuts ?? '') !== '', undefined, {
        timeout: 120_000,
      });
      const played = await view.evaluate(() => ({
        first: document.querySelector('video')!.dataset.playedCuts!.split(',')[0],
        src: document.querySelector('video')!.currentSrc.slice(0, 22),
      }));
      expect(played).toEqual({ first: '0', src: 'data:video/mp4;base64,' });
      const { width: _w, ...edit } = args;
      expect(calls[0]!.args).toEqual({ ...edit, width: 320 });
      const early = calls[0]!.result.structuredContent!;
      expect(early.status).toBe('rendering');
      expect(early.ready!.length).toBeGreaterThan(0);
      expect(early.ready![0]!.uri).toBe(`cutroom://previews/${early.preview_id}/cuts/${early.ready![0]!.index}.mp4`);
      expect((await page.evaluate(() => window.hostLog.calls)).some((c) => /\/cuts\/0\.mp4$/.test(c))).toBe(true);
      // Now the call's result (the same preview, joined) arrives; the view ends on the whole preview.
      const whole = (await server.client.callTool(
        { name: 'preview_edit', arguments: args },
        { timeout: 120_000 },
      )) as typeof result;
      expect(whole.structuredContent.preview_id).toBe(early.preview_id);
      await page.evaluate((r) => window.sendToolResult(r), whole as unknown);
      await view.waitForFunction(
        (d) => {
          const v = document.querySelector('video')!;
          return (
            v.dataset.playing === undefined &&
            v.readyState >= 1 &&
            Math.abs(v.duration - d) < 0.1 &&
            document.querySelectorAll('[data-strip-index]').length === 4
          );
        },
        whole.structuredContent.measured_seconds,
        { timeout: 120_000 },
      );
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 240_000);

  it('a trim past the end of the source fails in the status line; the old preview stays and nothing is told', async () => {
    const calls: { args: Record<string, unknown>; result: ViewResult }[] = [];
    const { page, view, errors } = await open(result, 'dark', (p) => server.client.readResource(p), recording(calls));
    try {
      await showing(view, 4);
      const src = await view.evaluate(() => document.querySelector('video')!.currentSrc);
      await view.fill('[data-strip-index="2"] input[data-field="out"]', '999');
      await view.click('[data-strip-index="2"] [data-action="trim"]');
      await view.waitForFunction(
        () => /^The change was not made: /.test(document.getElementById('status')!.textContent ?? ''),
        undefined,
        { timeout: 60_000 },
      );
      const line = await view.evaluate(() => document.getElementById('status')!.textContent!);
      expect(line).toMatch(
        /^The change was not made: the changed edit would not play: cut 3: the out point \S+ is past the end of the clip \(it lasts 7\.92 s\); end the cut by 00:00:07\.920$/,
      );
      expect(calls).toHaveLength(1);
      expect(calls[0]!.result.isError).toBe(true);
      expect(calls[0]!.result.structuredContent).toBeUndefined();
      expect(await view.evaluate(() => document.querySelector('video')!.currentSrc)).toBe(src);
      expect(await view.evaluate(() => document.querySelector('video')!.readyState)).toBeGreaterThanOrEqual(1);
      expect((await page.evaluate(() => window.hostLog.modelContext)).length).toBe(0);
      // The controls are back for another try.
      await showing(view, 4);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
});
