// Long previews through the built server: progress all the way, ffmpeg's memory flat with length, a sheet of
// every cut of a many-cut timeline, and a preview that outlasts its call followed to the end with preview_edit
// {preview_id}.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { colourAt, probe } from '../helpers/inspect-media.js';
import { patternSource } from '../helpers/pattern-source.js';
import { pidsMatching } from '../helpers/processes.js';

type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; data?: string; uri?: string }[];
};
type Cut = { index: number; flags: string[] };

/** Peak RSS (VmHWM, KiB) of the ffmpeg processes whose command line names `marker`, sampled until stopped. */
function ffmpegPeakRss(marker: string): () => number {
  let peak = 0;
  const timer = setInterval(() => {
    for (const pid of pidsMatching(marker)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'ffmpeg') continue;
        peak = Math.max(peak, Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0));
      } catch {
        // gone meanwhile
      }
    }
  }, 50);
  return () => (clearInterval(timer), peak);
}

let service: FakeService;
let projectId: string;
let assetId: string;
let cacheDir: string;
let srv: Spawned;

beforeAll(async () => {
  const file = patternSource(130);
  service = await new FakeService().start();
  const project = service.addProject({ name: 'long previews' });
  projectId = project.id;
  service.media.set('pattern', file);
  assetId = service.addAsset(projectId, { keyname: 'pattern', asset_type: 'generated_video', ext: 'mp4' }).id;
  cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
  srv = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_CACHE_DIR: cacheDir });
  // The client checks every structuredContent against the tool's outputSchema once it knows the tools.
  await srv.client.listTools();
}, 60_000);
afterAll(async () => {
  await srv?.close();
  await service?.stop();
});

/** `count` cuts of `seconds` each, spread over the source, at 64x36. */
const edit = (count: number, seconds: number) => ({
  project_id: projectId,
  width: 64,
  resolution: '64x36',
  fps: 25,
  clips: Array.from({ length: count }, (_, i) => {
    const start = (i * 7.3) % (128 - seconds);
    return { asset_id: assetId, start: Math.round(start * 10) / 10, end: Math.round(start * 10) / 10 + seconds };
  }),
});

async function previewWithProgress(client: Spawned['client'], args: Record<string, unknown>) {
  const progress: number[] = [];
  const r = (await client.callTool(
    { name: 'preview_edit', arguments: args },
    { timeout: 300_000, onprogress: (p) => progress.push(p.progress) },
  )) as Result;
  if (r.isError) throw new Error(textOf(r));
  return { r, progress };
}

describe('a long preview', () => {
  it('sends progress all the way through, and ffmpeg needs no more memory for 4x the length', async () => {
    const shortRss = ffmpegPeakRss(cacheDir);
    const short = await previewWithProgress(srv.client, edit(2, 15));
    const shortPeak = shortRss();
    const longRss = ffmpegPeakRss(cacheDir);
    const long = await previewWithProgress(srv.client, edit(2, 60));
    const longPeak = longRss();
    expect(short.r.structuredContent).toMatchObject({ status: 'done', planned_seconds: 30 });
    expect(long.r.structuredContent).toMatchObject({ status: 'done', planned_seconds: 120 });

    // Progress kept coming while the 120 s rendered: never more than 15% of the timeline between two
    // notifications (ffmpeg reports twice a second; a sheet drawn in the same process held every report back).
    const p = long.progress;
    expect([...p].sort((a, b) => a - b)).toEqual(p);
    expect(p.at(-1)).toBe(100);
    const jumps = p.slice(1).map((v, i) => v - p[i]!);
    expect(Math.max(...jumps), `progress: ${p.join(' ')}`).toBeLessThanOrEqual(15);
    expect(p.filter((v) => v > 0 && v < 97).length).toBeGreaterThanOrEqual(7);

    // Memory does not follow the length: 4x the seconds, about the same peak.
    expect(shortPeak).toBeGreaterThan(0);
    expect(longPeak / shortPeak, `peak RSS ${shortPeak} KiB for 30 s, ${longPeak} KiB for 120 s`).toBeLessThan(1.25);
  }, 240_000);

  it('draws a sheet listing every cut of a 40-cut timeline (rendered in chunks)', async () => {
    const { r } = await previewWithProgress(srv.client, edit(40, 1));
    const p = r.structuredContent as { sheet_path: string; warnings: string[]; cuts: Cut[] };
    expect(p.cuts).toHaveLength(40);
    expect(p.warnings.filter((w) => /contact sheet/.test(w))).toEqual([]);
    const img = r.content.find((c) => c.type === 'image');
    expect(Buffer.from(img!.data!, 'base64').length).toBeLessThanOrEqual(1024 * 1024);
    const sheet = probe(p.sheet_path);
    expect(sheet.width).toBeLessThanOrEqual(2000);
    expect(sheet.height).toBeLessThanOrEqual(2000);
    // 120 thumbnails (three a cut) in rows of a multiple of three: the grid is filled to the 120th and no
    // further. Cells are found from the sheet's own size: margin and padding 4 px; each cell a 16:9 picture over a
    // strip of labels shorter than the picture.
    const columns = [3, 6, 9, 12, 15, 18, 21, 24].find((c) => {
      const w = (sheet.width - 4 * (c + 1)) / c;
      const rows = Math.ceil(120 / c);
      const h = (sheet.height - 4 * (rows + 1)) / rows;
      const picture = (w * 36) / 64;
      return Number.isInteger(w) && Number.isInteger(h) && h > picture - 2 && h - picture < picture;
    })!;
    expect(columns, `${sheet.width}x${sheet.height}`).toBeDefined();
    const rows = Math.ceil(120 / columns);
    const tw = (sheet.width - 4 * (columns + 1)) / columns;
    const th = (sheet.height - 4 * (rows + 1)) / rows;
    const copy = join(cacheDir, 'sheet-copy.jpg');
    writeFileSync(copy, Buffer.from(img!.data!, 'base64'));
    const cell = (k: number) =>
      colourAt(
        copy,
        0,
        `crop=${Math.max(2, Math.floor(tw / 2))}:${Math.max(2, Math.floor(th / 2))}:${4 + (k % columns) * (tw + 4) + Math.floor(tw / 4)}:${4 + Math.floor(k / columns) * (th + 4) + Math.floor(th / 4)}`,
      );
    const background = ([r, g, b]: number[]) =>
      Math.abs(r! - 48) < 12 && Math.abs(g! - 48) < 12 && Math.abs(b! - 48) < 12;
    expect(background(cell(0)), 'the first thumbnail').toBe(false);
    expect(background(cell(119)), 'the 120th thumbnail').toBe(false);
    if (rows * columns > 120) expect(background(cell(120)), 'no 121st').toBe(true);
  }, 240_000);
});

describe('a preview that outlasts its call', () => {
  it('comes back as a handle within the wait, and preview_edit {preview_id} follows it to the full result', async () => {
    // Shares the cache dir: the other server can answer for a finished preview from the disk.
    const quick = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: cacheDir,
      CUTROOM_RENDER_WAIT_MS: '200',
    });
    try {
      await quick.client.listTools();
      const first = (await quick.client.callTool({ name: 'preview_edit', arguments: edit(2, 30) })) as Result;
      expect(first.isError, textOf(first)).toBeFalsy();
      const handle = first.structuredContent as {
        preview_id: string;
        status: string;
        progress?: number;
        path?: string;
      };
      expect(handle.status).toBe('rendering');
      expect(handle.preview_id).toMatch(/^\d{14}-[0-9a-f]{8}$/);
      expect(handle.path).toBeUndefined();
      expect(textOf(first)).toContain(`preview_edit {preview_id: "${handle.preview_id}"}`);

      let last: Result | undefined;
      const seen: number[] = [];
      for (let i = 0; i < 1000; i++) {
        last = (await quick.client.callTool(
          { name: 'preview_edit', arguments: { preview_id: handle.preview_id } },
          { onprogress: (p) => seen.push(p.progress) },
        )) as Result;
        expect(last.isError, textOf(last)).toBeFalsy();
        if (last.structuredContent!.status === 'done') break;
        expect(last.structuredContent).toMatchObject({ preview_id: handle.preview_id, status: 'rendering' });
      }
      const done = last!.structuredContent as {
        preview_id: string;
        path: string;
        planned_seconds: number;
        cuts: Cut[];
        diagnostics: unknown[];
      };
      expect(done).toMatchObject({ preview_id: handle.preview_id, status: 'done', planned_seconds: 60 });
      expect(done.cuts).toHaveLength(2);
      expect(existsSync(done.path)).toBe(true);
      expect(Math.abs(probe(done.path).duration - 60)).toBeLessThan(0.1);
      expect(last!.content.some((c) => c.type === 'image')).toBe(true);
      expect(last!.content.find((c) => c.type === 'resource_link')?.uri).toBe(
        `cutroom://previews/${handle.preview_id}/preview.mp4`,
      );
      expect(seen.length).toBeGreaterThan(0);

      // Another server on the same cache dir answers the same from the disk.
      const elsewhere = (await srv.client.callTool({
        name: 'preview_edit',
        arguments: { preview_id: handle.preview_id },
      })) as Result;
      expect(elsewhere.structuredContent).toEqual(last!.structuredContent);

      const unknown = await quick.client.callTool({
        name: 'preview_edit',
        arguments: { preview_id: '20200101000000-00000000' },
      });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toMatch(/is gone .* run preview_edit again/);
      const bad = await quick.client.callTool({ name: 'preview_edit', arguments: { preview_id: '../../etc' } });
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toMatch(/is not a preview id/);
    } finally {
      await quick.close();
    }
  }, 240_000);

  it('preview_edit {preview_id} alone follows a preview still rendering to its full result; beside an edit it is an isError result', async () => {
    const quick = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: cacheDir,
      CUTROOM_RENDER_WAIT_MS: '200',
    });
    try {
      const { tools } = await quick.client.listTools();
      expect(tools.map((t) => t.name)).not.toContain('get_preview');
      const tool = tools.find((t) => t.name === 'preview_edit')!;
      expect((tool.inputSchema.properties as Record<string, { type?: string }>).preview_id?.type).toBe('string');
      const conforms = new Ajv2020({ strict: false }).compile(tool.outputSchema!);

      const first = (await quick.client.callTool({ name: 'preview_edit', arguments: edit(2, 20) })) as Result;
      expect(first.isError, textOf(first)).toBeFalsy();
      const handle = first.structuredContent as { preview_id: string; status: string };
      expect(handle.status).toBe('rendering');

      // While it renders: preview_id beside an edit's arguments (or a width) is refused in one line, with no
      // structuredContent or one that conforms, and the preview goes on.
      for (const [extra, named] of [
        [{ project_id: projectId, clips: edit(1, 1).clips }, 'clips'],
        [{ edit_id: 'edit-3f2b8c1e4d5a4b6c' }, 'edit_id'],
        [{ width: 64 }, 'width'],
      ] as const) {
        const both = (await quick.client.callTool({
          name: 'preview_edit',
          arguments: { preview_id: handle.preview_id, ...extra },
        })) as Result;
        expect(both.isError, JSON.stringify(extra)).toBe(true);
        expect(textOf(both)).toMatch(new RegExp(`give preview_id alone .*not both \\(also given: ${named}\\)`));
        expect(
          both.structuredContent === undefined || conforms(both.structuredContent),
          JSON.stringify(both.structuredContent),
        ).toBe(true);
      }

      // A client that fills every optional field sends a blank edit_id and the project beside the preview_id: still
      // following.
      let last = (await quick.client.callTool({
        name: 'preview_edit',
        arguments: { preview_id: handle.preview_id, project_id: projectId, edit_id: '' },
      })) as Result;
      for (let i = 0; i < 1000 && !last.isError && last.structuredContent!.status === 'rendering'; i++) {
        expect(last.structuredContent).toMatchObject({ preview_id: handle.preview_id, status: 'rendering' });
        last = (await quick.client.callTool({
          name: 'preview_edit',
          arguments: { preview_id: handle.preview_id },
        })) as Result;
      }
      expect(last.isError, textOf(last)).toBeFalsy();
      const done = last.structuredContent as { preview_id: string; path: string; planned_seconds: number; cuts: Cut[] };
      expect(done).toMatchObject({ preview_id: handle.preview_id, status: 'done', planned_seconds: 40 });
      expect(conforms(done)).toBe(true);
      expect(done.cuts).toHaveLength(2);
      expect(Math.abs(probe(done.path).duration - 40)).toBeLessThan(0.1);
      expect(last.content.some((c) => c.type === 'image')).toBe(true);
      expect(last.content.find((c) => c.type === 'resource_link')?.uri).toBe(
        `cutroom://previews/${handle.preview_id}/preview.mp4`,
      );
    } finally {
      await quick.close();
    }
  }, 240_000);
});
