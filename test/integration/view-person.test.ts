// What the person reads in the preview view (issue 51, item 8), in Debian's chromium (playwright-core) with the test
// host relaying to the built server: the view numbers cuts as it draws them (#1 is cut 1) in its error lines too;
// words written for the model (a tool to call, a field to set, a JSON pointer) are not shown to the person; with 24
// cuts, every card shows its start and end inside itself, at a host's usual frame widths (measured in the page); an in
// point between two source frames is shown, and told to the model, as the frame the render starts on (the picture
// of the new preview says which frame that is).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { CHROMIUM, launchChromium, servePage, type ServedPage } from '../helpers/browser-page.js';
import { SHOT_FPS, SHOTS, frameColours, makeShotMedia, shotSpan } from '../helpers/shot-media.js';

type Cut = { index: number; asset_id: string; source_in: string; timeline_start: string; timeline_end: string };
type Preview = {
  preview_id: string;
  edit_id: string;
  path: string;
  measured_seconds: number;
  cuts: Cut[];
};
type Result = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: Preview };
type Call = (p: { name: string; arguments?: Record<string, unknown> }) => Promise<unknown>;

const root = mkdtempSync(join(tmpdir(), 'cutroom-view-person-'));
const allowed = join(root, 'allowed');
let server: Spawned;
let browser: Browser;
let http: ServedPage;
let hostUrl: string;
let viewHtml: string;
let shots: string;
let music: string;
const seconds = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);
/** A timecode as the view shows a time on the timeline: without its hours when they are 0. */
const short = (tc: string) => tc.replace(/^00:/, '');

const call = async (name: string, args: Record<string, unknown>) =>
  (await server.client.callTool({ name, arguments: args }, { timeout: 180_000 })) as Result;
const structured = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
  const r = (await call(name, args)) as { isError?: boolean; structuredContent?: unknown };
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
/** A project with the shots and the music imported. */
async function project(name: string): Promise<{ id: string; video: string; audio: string }> {
  const id = (await structured<{ project: { id: string } }>('create_project', { name, description: name })).project.id;
  const video = (await structured<{ asset: { id: string } }>('import_media', { project_id: id, path: shots })).asset.id;
  const audio = (await structured<{ asset: { id: string } }>('import_media', { project_id: id, path: music })).asset.id;
  return { id, video, audio };
}
const previewOf = (projectId: string, clips: unknown[], more: Record<string, unknown> = {}) => ({
  project_id: projectId,
  clips,
  resolution: '320x180',
  fps: SHOT_FPS,
  width: 320,
  ...more,
});

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  shots = makeShotMedia(allowed);
  music = join(allowed, 'music.wav');
  spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=330:d=6', '-ar', '48000', music]);
  server = await spawnServer(
    { CUTROOM_DATA_DIR: join(root, 'data'), CUTROOM_ALLOWED_DIRS: allowed, CUTROOM_CACHE_DIR: join(root, 'cache') },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } },
  );
  viewHtml = ((await server.client.readResource({ uri: 'ui://cutroom/preview' })).contents[0] as { text: string }).text;
  http = await servePage('host.ts', '/host.js', 'host');
  hostUrl = http.url;
  if (CHROMIUM) browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  http?.close();
  await server?.close();
});

/** The view in the test host, in a frame `width` px wide, handed `toolResult`; its calls relayed to the server. */
async function open(
  toolResult: unknown,
  opts: { width?: number; callTool?: Call } = {},
): Promise<{ page: Page; view: Frame; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 800, height: 700 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.exposeFunction(
    'relayCallTool',
    opts.callTool ?? ((p: Parameters<Call>[0]) => server.client.callTool(p, { timeout: 180_000 })),
  );
  await page.exposeFunction('relayReadResource', (p: { uri: string }) => server.client.readResource(p));
  await page.goto(hostUrl);
  await page.evaluate(([html, r, w]) => window.startHost(html as string, r, 'dark', undefined, w as number), [
    viewHtml,
    toolResult,
    opts.width ?? 760,
  ] as const);
  return { page, view: page.frames().find((f) => f !== page.mainFrame())!, errors };
}

/** The view shows the preview: its video can play, every cut has its card and strip, its controls are free. */
async function showing(view: Frame, cuts: number): Promise<void> {
  await view.waitForFunction(
    (n) =>
      (document.querySelector('video')?.readyState ?? 0) >= 1 &&
      document.querySelectorAll('[data-cut-index]').length === n &&
      document.querySelectorAll('[data-strip-index]').length === n &&
      !document.getElementById('strips')!.classList.contains('busy'),
    cuts,
    { timeout: 120_000 },
  );
}

const statusOf = (view: Frame) => view.evaluate(() => document.getElementById('status')!.textContent ?? '');
/** The status line once it starts with `prefix`. */
async function statusStarting(view: Frame, prefix: string): Promise<string> {
  await view.waitForFunction((p) => (document.getElementById('status')!.textContent ?? '').startsWith(p), prefix, {
    timeout: 120_000,
  });
  return statusOf(view);
}

/** Words a person does not act on: a tool or field name, a JSON pointer, an argument path, a call to make again. */
const MODEL_WORDS =
  /(?<![\w./-])[a-z]+(?:_[a-z0-9]+)+(?![\w./-])|\/video_series_sequential|\/audio_overlay|clips\[|\{|call again/;

describe.skipIf(!CHROMIUM)('what the person reads in the preview view (issue 51, item 8)', () => {
  it("a refused trim names the cut as its card does (#1 is cut 1), never by the model's index", async () => {
    const p = await project('numbering');
    const preview = await structured<Preview>(
      'preview_edit',
      previewOf(
        p.id,
        [0, 2, 4].map((i) => ({ asset_id: p.video, ...shotSpan(i) })),
      ),
    );
    const { page, view, errors } = await open({ content: [], structuredContent: preview });
    try {
      await showing(view, 3);
      expect(await view.evaluate(() => document.querySelector('[data-cut-index="0"] .num')!.textContent)).toBe('#1');
      // The first cut's in point after its out point.
      await view.fill('[data-strip-index="0"] input[data-field="in"]', '1');
      await view.fill('[data-strip-index="0"] input[data-field="out"]', '0.5');
      await view.click('[data-strip-index="0"] [data-action="trim"]');
      const line = await statusStarting(view, 'The change was not made: ');
      expect(line).toBe(
        "The change was not made: cut 1's in point (1 s) must be before its out point (0.5 s): it would show nothing",
      );
      // The third cut's out point past the end of its source: the edit's check names it cut 3, as its card does.
      await showing(view, 3);
      await view.fill('[data-strip-index="2"] input[data-field="out"]', '999');
      await view.click('[data-strip-index="2"] [data-action="trim"]');
      await view.waitForFunction(
        () => /out point \S+ is past the end/.test(document.getElementById('status')!.textContent ?? ''),
        undefined,
        { timeout: 120_000 },
      );
      expect(await statusOf(view)).toMatch(/^The change was not made: the changed edit would not play: cut 3: the out/);
      expect(await statusOf(view)).not.toMatch(/\bcut 0\b/);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 240_000);

  it("shows no words written for the model in a cut's flags", async () => {
    const p = await project('flags');
    const clips = [0, 2].map((i) => ({ asset_id: p.video, ...shotSpan(i) }));
    // Music over the shots' tone, louder than a bed should be: each cut is flagged, with advice in field names.
    const loud = await structured<Preview & { cuts: { flags: string[] }[] }>(
      'preview_edit',
      previewOf(p.id, clips, { overlays: [{ asset_id: p.audio, at: 0, until: 2, role: 'music', gain_db: 6 }] }),
    );
    expect(loud.cuts.some((c) => c.flags.some((f) => /music only .*gain_db/.test(f)))).toBe(true);
    const { page, view, errors } = await open({ content: [], structuredContent: loud });
    try {
      await showing(view, 2);
      const titles = await view.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>('[data-cut-index]')].map((e) => e.title),
      );
      for (const t of titles) {
        expect(t).toMatch(/music only [\d.]+ dB under the dialogue/);
        expect(t.split('\n').slice(2).join('\n')).not.toMatch(MODEL_WORDS);
      }
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 240_000);

  it('shows a preview_edit that failed in the person\'s words: no JSON pointer, no "call again"', async () => {
    const p = await project('failed');
    const failed = await call(
      'preview_edit',
      previewOf(p.id, [
        { asset_id: p.video, ...shotSpan(0) },
        { asset_id: p.video, start: 1, end: 99 },
      ]),
    );
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/\/video_series_sequential\/1\/video_end_time/);
    const { page, view } = await open(failed);
    try {
      await view.waitForFunction(
        () => document.getElementById('status')!.textContent !== 'Waiting for the preview…',
        undefined,
        { timeout: 120_000 },
      );
      const line = await statusOf(view);
      expect(line).toBe(
        'The preview could not be made: cut 2: the out point 01:39.000 is past the end of the clip (it lasts 7.92 s)',
      );
    } finally {
      await page.close();
    }
  }, 240_000);

  it('a change refused because the edit\'s video was deleted says so without "get_project"', async () => {
    const p = await project('deleted');
    const clips = [0, 2].map((i) => ({ asset_id: p.video, ...shotSpan(i) }));
    const plain = await structured<Preview>('preview_edit', previewOf(p.id, clips));
    const { page, view, errors } = await open({ content: [], structuredContent: plain });
    try {
      await showing(view, 2);
      await structured('delete_asset', { project_id: p.id, asset_id: p.video, confirm: true });
      await view.click('[data-strip-index="1"] [data-action="drop"]');
      const line = await statusStarting(view, 'The change was not made: ');
      expect(line).toMatch(
        /^The change was not made: the edit to change is not ready: cut 1: no asset \S+ in this project/,
      );
      expect(line).not.toMatch(MODEL_WORDS);
      expect(line).not.toMatch(/get_project|\bcut 0\b/);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 240_000);

  it('with 24 cuts, every card shows its start and end inside itself, at 400 and 700 px', async () => {
    const p = await project('many cuts');
    const clips = Array.from({ length: 24 }, (_, k) => {
      const { start } = shotSpan(k % SHOTS.length);
      return {
        asset_id: p.video,
        start: +(start + 0.04 * Math.floor(k / SHOTS.length)).toFixed(3),
        end: +(start + 0.32).toFixed(3),
      };
    });
    const preview = await structured<Preview>('preview_edit', previewOf(p.id, clips, { width: 160 }));
    expect(preview.cuts).toHaveLength(24);
    for (const width of [400, 700]) {
      const { page, view, errors } = await open({ content: [], structuredContent: preview }, { width });
      try {
        await showing(view, 24);
        // Each card, and where the text of its end time lies (a range over the characters after the dash), what is
        // on screen at the middle of that text, and the width the frame shows.
        const cards = await view.evaluate(() => {
          const box = (r: DOMRect) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
          return [...document.querySelectorAll<HTMLElement>('[data-cut-index]')].map((card) => {
            const time = card.querySelector('.time')!;
            const walker = document.createTreeWalker(time, NodeFilter.SHOW_TEXT);
            const nodes: Text[] = [];
            for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n as Text);
            const dash = nodes.find((t) => t.data.includes('–'))!;
            const range = document.createRange();
            range.setStart(dash, dash.data.indexOf('–') + 1);
            range.setEnd(nodes.at(-1)!, nodes.at(-1)!.data.length);
            const end = range.getBoundingClientRect();
            const hit = document.elementFromPoint(end.left + end.width / 2, end.top + end.height / 2);
            return {
              index: Number(card.dataset.cutIndex),
              card: box(card.getBoundingClientRect()),
              end: box(end),
              endText: range.toString(),
              seen: !!hit && card.contains(hit),
              frameWidth: document.documentElement.clientWidth,
            };
          });
        });
        expect(cards).toHaveLength(24);
        for (const c of cards) {
          const what = `at ${width} px, card #${c.index + 1}: ${JSON.stringify(c)}`;
          expect(c.endText, what).toBe(short(preview.cuts[c.index]!.timeline_end));
          expect(c.end.right, what).toBeLessThanOrEqual(c.card.right - 1);
          expect(c.end.left, what).toBeGreaterThanOrEqual(c.card.left);
          expect(c.end.bottom, what).toBeLessThanOrEqual(c.card.bottom);
          expect(c.card.left, what).toBeGreaterThanOrEqual(0);
          expect(c.card.right, what).toBeLessThanOrEqual(c.frameWidth);
          expect(c.seen, what).toBe(true);
        }
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    }
  }, 300_000);

  it('an in point between two source frames is shown, and told to the model, as the frame the render starts on', async () => {
    const p = await project('frames');
    // Cut 1 runs from green into blue (shot 2 starts on frame 44, at 1.76 s); cut 2 starts 13 ms after a frame.
    const green = shotSpan(1);
    const blue = shotSpan(2);
    expect([SHOTS[1]!.colour, SHOTS[2]!.colour, blue.start]).toEqual(['green', 'blue', 1.76]);
    const offGrid = +(shotSpan(4).start + 0.013).toFixed(3);
    const preview = await structured<Preview>(
      'preview_edit',
      previewOf(p.id, [
        { asset_id: p.video, start: green.start, end: 2.5 },
        { asset_id: p.video, start: offGrid, end: shotSpan(4).end },
      ]),
    );
    const calls: Result[] = [];
    const { page, view, errors } = await open(
      { content: [], structuredContent: preview },
      {
        callTool: async (c) => {
          const r = (await server.client.callTool(c, { timeout: 180_000 })) as Result;
          if (c.name === 'view_edit') calls.push(r);
          return r;
        },
      },
    );
    try {
      await showing(view, 2);
      // 1.73 s lies between the last green frame (1.72 s) and the first blue one (1.76 s): the render starts on 1.76.
      await view.fill('[data-strip-index="0"] input[data-field="in"]', '1.73');
      await view.click('[data-strip-index="0"] [data-action="trim"]');
      await page.waitForFunction(() => window.hostLog.modelContext.length > 0, undefined, { timeout: 180_000 });
      const told = (await page.evaluate(() => window.hostLog.modelContext))[0] as {
        content: { text: string }[];
        structuredContent: { changed: string; edit_id: string };
      };
      const done = calls
        .map((r) => r.structuredContent)
        .findLast((s) => (s as { status?: string })?.status === 'done')!;
      // The picture: the new preview's first frame is blue, the source's frame at 1.76 s (at 1.73 s, green shows).
      const colours = frameColours(done.path);
      expect(colours[0]).toBe('blue');
      expect(colours.slice(0, Math.round((2.5 - blue.start) * SHOT_FPS)).every((c) => c === 'blue')).toBe(true);
      // Told to the model: the frame used.
      expect(told.structuredContent.changed).toBe(
        'trimmed cut 1: in 1.04 s → 1.76 s (the first frame from 1.73 s) (now 0.74 s)',
      );
      expect(told.content[0]!.text).toContain('in 1.04 s → 1.76 s');
      // The kept edit starts the cut there.
      const edit = await server.client.readResource({ uri: `cutroom://edits/${told.structuredContent.edit_id}` });
      expect((edit.contents[0] as { text: string }).text).toContain('"video_start_time": "00:00:01.760"');
      // Shown: the listed cuts say the frames used, the in field the same; cut 2's untouched in point too.
      expect(done.cuts.map((c) => c.source_in)).toEqual(['00:00:01.760', '00:00:04.040']);
      await showing(view, 2);
      const shown = await view.evaluate(() => ({
        in: [...document.querySelectorAll<HTMLInputElement>('input[data-field="in"]')].map((i) => i.value),
        titles: [...document.querySelectorAll<HTMLElement>('[data-cut-index]')].map((e) => e.title.split('\n')[1]),
      }));
      expect(shown.in).toEqual(['1.760', '4.040']);
      expect(shown.titles.map((t) => t?.split(' ')[1]?.split('-')[0])).toEqual(['00:00:01.760', '00:00:04.040']);
      // A click on cut 2 tells the model where it starts in its source: the frame the render uses.
      await view.click('[data-cut-index="1"]');
      await page.waitForFunction(() => window.hostLog.modelContext.length > 1, undefined, { timeout: 30_000 });
      const picked = (await page.evaluate(() => window.hostLog.modelContext))[1] as { content: { text: string }[] };
      expect(picked.content[0]!.text).toMatch(/picked cut 2 \(index 1\): \S+ 00:00:04\.040-/);
      expect(seconds(done.cuts[1]!.source_in)).toBeCloseTo(Math.ceil(offGrid * SHOT_FPS) / SHOT_FPS, 6);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 300_000);
});
