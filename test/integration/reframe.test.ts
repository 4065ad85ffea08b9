// The vertical cut (issue 33, item 6), through the built server over stdio with media made here by ffmpeg: a white
// square moving left to right across a dark, textured 16:9 picture, cut to vertical with focus "auto", is inside
// every frame of the preview and of a local render (read back frame by frame); the same cut held at the centre loses
// it (the check can fail). A fixed focus frames the corner it names (four coloured quadrants). Exports carry a focus
// in OTIO and say FCPXML and EDL do not; on the service backend a fixed focus is sent as the crop that frames it and
// "auto" as a fixed crop, said in warnings.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, storedEdit, type Spawned } from '../helpers/harness.js';
import { localProject, structuredOf, testRoot, type LocalProject } from '../helpers/local-project.js';
import { ffmpeg } from '../helpers/sound.js';
import { colourAt, colourName } from '../helpers/inspect-media.js';

const { root, allowed } = testRoot('reframe');

// The source: 320x180 at 25 fps, 4 s; a static dark texture (levels 20-60) and a 40 px white square whose left edge
// runs from x = 10 to x = 270 (65 px/s), at y = 70.
const SQUARE = 40;
function makeMoving(file: string): void {
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'color=c=black:s=320x180:r=25:d=4',
    '-f',
    'lavfi',
    '-i',
    `color=c=white:s=${SQUARE}x${SQUARE}:r=25:d=4`,
    '-filter_complex',
    "[0:v]format=yuv420p,geq=lum='40+20*sin(X/3)*sin(Y/5)':cb=128:cr=128[bg];[bg][1:v]overlay=x='10+65*t':y=70:shortest=1,format=yuv420p[v]",
    '-map',
    '[v]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '12',
    file,
  ]);
}
/** Four quadrants: red top left, green top right, blue bottom left, yellow bottom right; 320x180, 2 s. */
function makeQuadrants(file: string): void {
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'color=c=red:s=160x90:r=25:d=2',
    '-f',
    'lavfi',
    '-i',
    'color=c=0x00C000:s=160x90:r=25:d=2',
    '-f',
    'lavfi',
    '-i',
    'color=c=blue:s=160x90:r=25:d=2',
    '-f',
    'lavfi',
    '-i',
    'color=c=yellow:s=160x90:r=25:d=2',
    '-filter_complex',
    '[0:v][1:v]hstack[top];[2:v][3:v]hstack[bottom];[top][bottom]vstack,format=yuv420p[v]',
    '-map',
    '[v]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    file,
  ]);
}

/**
 * Per decoded frame of a file: the box of its bright pixels (luma over 200: the white square; the texture stays
 * under 70) and their count, with the frame's size.
 */
function brightBoxes(file: string): {
  width: number;
  height: number;
  frames: { count: number; left: number; right: number; top: number; bottom: number }[];
} {
  const p = spawnSync(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', file],
    { encoding: 'utf8' },
  );
  const [width, height] = p.stdout.trim().split(',').map(Number) as [number, number];
  const raw = ffmpeg(['-i', file, '-map', '0:v:0', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1']);
  const frames = [];
  for (let at = 0; at + width * height <= raw.length; at += width * height) {
    let count = 0;
    let left = width;
    let right = -1;
    let top = height;
    let bottom = -1;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        if (raw[at + y * width + x]! <= 200) continue;
        count++;
        left = Math.min(left, x);
        right = Math.max(right, x);
        top = Math.min(top, y);
        bottom = Math.max(bottom, y);
      }
    }
    frames.push({ count, left, right, top, bottom });
  }
  return { width, height, frames };
}

/**
 * A sheet of `n` cells in a row: its size and, per cell, its bright pixels below the top sixth (where its label is).
 */
function brightCells(file: string, n: number): { width: number; height: number; cells: number[] } {
  const p = spawnSync(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', file],
    { encoding: 'utf8' },
  );
  const [width, height] = p.stdout.trim().split(',').map(Number) as [number, number];
  const raw = ffmpeg(['-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1']);
  const cells = new Array<number>(n).fill(0);
  for (let y = Math.round(height / 6); y < height; y++)
    for (let x = 0; x < width; x++)
      if (raw[y * width + x]! > 200) cells[Math.min(n - 1, Math.floor((x * n) / width))]!++;
  return { width, height, cells };
}

/**
 * Frames in which the square is not whole inside the frame: fewer bright pixels than most of it, or touching an edge.
 */
function framesLosingTheSquare(file: string): { frames: number; lost: number[] } {
  const { width, height, frames } = brightBoxes(file);
  // The source's 180 px height is the output's height (the frame is covered): the square scales with it.
  const side = (SQUARE * height) / 180;
  const lost = frames.flatMap((f, i) =>
    f.count < 0.8 * side * side || f.left <= 0 || f.right >= width - 1 || f.top <= 0 || f.bottom >= height - 1
      ? [i]
      : [],
  );
  return { frames: frames.length, lost };
}

let server: Spawned;
let projectId: string;
let moving: string;
let quadrants: string;
let call: LocalProject['call'];
let importMedia: LocalProject['importMedia'];

beforeAll(async () => {
  makeMoving(join(allowed, 'moving.mp4'));
  makeQuadrants(join(allowed, 'quadrants.mp4'));
  ({ server, projectId, call, importMedia } = await localProject(
    { root, allowed },
    { name: 'reframe', description: 'the vertical cut' },
  ));
  moving = await importMedia(join(allowed, 'moving.mp4'));
  quadrants = await importMedia(join(allowed, 'quadrants.mp4'));
}, 120_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the vertical cut on the local backend', () => {
  it('an auto reframe keeps a moving subject inside the frame (preview, frame by frame); a centred one loses it', async () => {
    const composed = structuredOf<{ ready: boolean; diagnostics: { message: string }[] }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: 'vertical',
        clips: [{ asset_id: moving, start: 0, end: 4 }],
      }),
    );
    // Without a focus, the linter says the picture would be pillarboxed and names focus as the fix.
    expect(composed.diagnostics.some((d) => /letterboxed or pillarboxed/.test(d.message))).toBe(true);
    const edit = {
      project_id: projectId,
      resolution: 'vertical',
      fps: 25,
      clips: [{ asset_id: moving, start: 0, end: 4, focus: 'auto' }],
    };
    const c = structuredOf<{ ready: boolean; diagnostics: { message: string }[] }>(await call('compose_edit', edit));
    expect(c.ready).toBe(true);
    expect(c.diagnostics.some((d) => /pillarboxed/.test(d.message))).toBe(false);
    const p = structuredOf<{ path: string; sheet_path: string; resolution: string; preview_id: string }>(
      await call('preview_edit', { ...edit, width: 270 }),
    );
    expect(p.resolution).toBe('270x480');
    const auto = framesLosingTheSquare(p.path);
    expect(auto.frames).toBe(100);
    expect(auto.lost, 'frames where the square is not whole in the frame').toEqual([]);
    // The same edit is the same preview (its key holds "auto"; the path is read once).
    expect(structuredOf<{ preview_id: string }>(await call('preview_edit', { ...edit, width: 270 })).preview_id).toBe(
      p.preview_id,
    );
    // Held at the centre, the square is out of the frame at both ends: the check above can fail.
    const centred = structuredOf<{ path: string }>(
      await call('preview_edit', {
        ...edit,
        width: 270,
        clips: [{ asset_id: moving, start: 0, end: 4, focus: { x: 0.5, y: 0.5 } }],
      }),
    );
    expect(framesLosingTheSquare(centred.path).lost.length).toBeGreaterThan(40);
    // The contact sheet is drawn from the rendered segments: one row of three vertical cells (the cut's first, middle
    // and last frames), each showing the square whole below its label.
    const sheet = brightCells(p.sheet_path, 3);
    expect(sheet.height).toBeGreaterThan(sheet.width / 3);
    for (const cell of sheet.cells) expect(cell).toBeGreaterThan(0.5 * (SQUARE * (sheet.height / 180)) ** 2);
  }, 240_000);

  it('a local render of an auto reframe keeps the moving subject inside every frame', async () => {
    const r = structuredOf<{ render: { done: boolean; url?: string } }>(
      await call('render_edit', {
        project_id: projectId,
        wait: true,
        resolution: '360x640',
        fps: 25,
        filename: 'vertical.mp4',
        clips: [{ asset_id: moving, start: 0, end: 4, focus: 'auto' }],
      }),
    );
    expect(r.render.done).toBe(true);
    const out = framesLosingTheSquare(fileURLToPath(r.render.url!));
    expect(out.frames).toBe(100);
    expect(out.lost).toEqual([]);
  }, 240_000);

  it('a fixed focus frames the corner it names, as far as the picture allows', async () => {
    // Vertical from 16:9: the frame spans the picture's height, so y does nothing; x = 1 puts it at the right edge.
    const right = structuredOf<{ path: string }>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: 'vertical',
        width: 180,
        fps: 25,
        clips: [{ asset_id: quadrants, start: 0, end: 1, focus: { x: 1, y: 0 } }],
      }),
    );
    const top = 'crop=iw/2:ih/4:iw/4:ih/8';
    const bottom = 'crop=iw/2:ih/4:iw/4:ih*5/8';
    expect(colourName(colourAt(right.path, 0.5, top))).toBe('green');
    expect(colourName(colourAt(right.path, 0.5, bottom))).toBe('yellow');
    // Square from 16:9 at the top left: the frame is 0.5625 of the picture's width from its left edge, so red and blue
    // fill all but its last ninth, where the green and yellow quadrants begin (at 0.5 of the picture).
    const left = structuredOf<{ path: string }>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: 'square',
        width: 180,
        fps: 25,
        clips: [{ asset_id: quadrants, start: 0, end: 1, focus: { x: 0, y: 0 } }],
      }),
    );
    expect(colourName(colourAt(left.path, 0.5, 'crop=iw/4:ih/4:0:0'))).toBe('red');
    expect(colourName(colourAt(left.path, 0.5, 'crop=iw/8:ih/4:iw*5/8:0'))).toBe('red');
    expect(colourName(colourAt(left.path, 0.5, 'crop=iw/4:ih/4:0:ih*3/4'))).toBe('blue');
    expect(colourName(colourAt(left.path, 0.5, 'crop=iw/16:ih/4:iw*15/16:0'))).toBe('green');
  }, 180_000);

  it('refuses a focus beside a crop and a focus out of 0-1, at their fields', async () => {
    const c = structuredOf<{ ready: boolean; diagnostics: { severity: string; path: string }[] }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: 'vertical',
        clips: [
          { asset_id: moving, start: 0, end: 1, focus: 'auto', crop: { zoom: 1 } },
          { asset_id: moving, start: 1, end: 2, focus: { x: 2, y: 0.5 } },
        ],
      }),
    );
    expect(c.ready).toBe(false);
    expect(c.diagnostics.filter((d) => d.severity === 'error').map((d) => d.path)).toEqual([
      '/video_series_sequential/0/focus',
      '/video_series_sequential/1/focus',
    ]);
  });

  it('exports carry a focus in OTIO (read back) and FCPXML and EDL say they do not', async () => {
    const c = structuredOf<{ edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: 'vertical',
        fps: 25,
        clips: [
          { asset_id: moving, start: 0, end: 2, focus: { x: 0.25, y: 0.5 } },
          { asset_id: moving, start: 2, end: 4, focus: 'auto' },
        ],
      }),
    );
    for (const format of ['otio', 'fcpxml', 'edl']) {
      const out = structuredOf<{ path: string; warnings?: string[] }>(
        await call('export_edit', { project_id: projectId, edit_id: c.edit_id, format }),
      );
      const said = (out.warnings ?? []).filter((w) => /focus/.test(w));
      if (format === 'otio') expect(said).toEqual([]);
      else expect(said.length, format).toBeGreaterThan(0);
      const back = structuredOf<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
        await call('import_edit', { project_id: projectId, content: readFileSync(out.path, 'utf8'), format }),
      );
      expect(back.ready, JSON.stringify(back.diagnostics)).toBe(true);
      const edit = await storedEdit<{ video_series_sequential: Record<string, unknown>[] }>(
        server.client,
        back.edit_id,
      );
      if (format === 'otio')
        expect(edit.video_series_sequential.map((s) => s.focus)).toEqual([{ x: 0.25, y: 0.5 }, 'auto']);
      else expect(edit.video_series_sequential[0], format).not.toHaveProperty('focus');
    }
  });
});

describe('the vertical cut on the service backend', () => {
  it('sends a fixed focus as the crop that frames it and "auto" as a fixed centred crop, and says so', async () => {
    const service = new FakeService();
    await service.start();
    const remoteRoot = join(root, 'remote');
    mkdirSync(remoteRoot, { recursive: true });
    const file = join(remoteRoot, 'moving.mp4');
    makeMoving(file);
    const project = service.addProject({ name: 'reframe' });
    service.media.set('moving-key', file);
    const v = service.addAsset(project.id, { keyname: 'moving-key', asset_type: 'video', ext: 'mp4' }).id;
    const remote = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: join(remoteRoot, 'cache'),
      CUTROOM_DATA_DIR: join(remoteRoot, 'data'),
      CUTROOM_RENDER_WAIT_MS: '8000',
      CUTROOM_LOG_LEVEL: 'error',
    });
    try {
      const r = await remote.client.callTool(
        {
          name: 'render_edit',
          arguments: {
            project_id: project.id,
            resolution: 'vertical',
            clips: [
              { asset_id: v, start: 0, end: 2, focus: { x: 0.75, y: 0.2 } },
              { asset_id: v, start: 2, end: 4, focus: 'auto' },
            ],
          },
        },
        { timeout: 120_000 },
      );
      const out = structuredOf<{ warnings: { path: string; message: string }[] }>(r);
      const sent = service.requests.filter((q: { path: string }) => q.path.endsWith('/create-edit'));
      expect(sent).toHaveLength(1);
      const body = sent[0]!.body as { video_series_sequential: Record<string, unknown>[] };
      // The window is 9:16 of a 16:9 picture: 0.3164 of its width. Centred on x = 0.75, its left edge is at
      // 0.75 - 0.1582 of the 0.6836 it can move over: position (2 * 0.8657 - 1) = 0.7314. y: the full height, 0.
      const w = 1080 / 1920 / (320 / 180);
      const position = 2 * ((0.75 - w / 2) / (1 - w)) - 1;
      const crop = body.video_series_sequential[0]!.crop as { zoom: number; position_x: number; position_y: number };
      expect(crop.zoom).toBe(1);
      expect(crop.position_x).toBeCloseTo(position, 3);
      expect(crop.position_y).toBe(0);
      expect(body.video_series_sequential[1]!.crop).toEqual({ zoom: 1, position_x: 0, position_y: 0 });
      for (const seg of body.video_series_sequential) expect(seg).not.toHaveProperty('focus');
      const said = out.warnings.filter((w) => w.path.endsWith('/focus'));
      expect(said.map((w) => w.path)).toEqual(['/video_series_sequential/1/focus']);
      expect(said[0]!.message).toMatch(/fixed crop/);
    } finally {
      await remote.close();
      await service.stop();
    }
  }, 180_000);
});
