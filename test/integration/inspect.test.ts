// inspect_asset through the built server, on both backends, against media with cuts and silences at known times.
// The reference for shots is ffmpeg's scdet over a full decode of the same file, at the same threshold.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { FakeService } from '../fixtures/service.mjs';
import {
  CUT_FRAMES,
  FPS,
  LATE_CUT_SEGMENTS,
  MOVING_SEGMENTS,
  SILENCES,
  makeManyShots,
  makeShots,
  scdetReference,
} from '../fixtures/shots.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { colourAt, colourName, probe } from '../helpers/inspect-media.js';
import { pidsMatching } from '../helpers/processes.js';

type Result = {
  asset_id: string;
  kind: string;
  duration_seconds: number;
  width?: number;
  height?: number;
  fps?: number;
  has_audio: boolean;
  shots: { index: number; start_seconds: number; end_seconds: number; start: string; end: string }[];
  silences: { start_seconds: number; end_seconds: number }[];
  loudness: { start_seconds: number; mean_db: number; peak_db: number }[];
  scan: { shots: string; frames_decoded?: number; frames_total?: number };
  frames: { seconds: number; shot?: number }[];
  sheet: { mode: string; first_shot?: number; last_shot?: number; more?: string };
  cached: boolean;
};

const root = mkdtempSync(join(tmpdir(), 'cutroom-inspect-'));
const allowed = join(root, 'allowed');
const frame = 1 / FPS;
let files: { g50: string; g1000: string; bframes: string; lateCut: string; moving: string };

/** The shots re-encoded as MPEG-4 Part 2 in AVI, as old cameras and Debian's opencv-doc clips are (no sound). */
function toAvi(from: string, name: string, bframes: number): string {
  const out = join(allowed, name);
  const r = spawnSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-i',
    from,
    '-an',
    '-c:v',
    'mpeg4',
    '-q:v',
    '4',
    '-bf',
    String(bframes),
    out,
  ]);
  if (r.status !== 0) throw new Error(`ffmpeg: ${r.stderr.toString()}`);
  return out;
}

beforeAll(() => {
  mkdirSync(allowed, { recursive: true });
  files = {
    g50: makeShots({ gop: 50 }),
    g1000: makeShots({ gop: 1000 }),
    bframes: makeShots({ gop: 50, preset: 'medium' }),
    lateCut: makeShots({ gop: 50, segments: LATE_CUT_SEGMENTS, name: 'late-cut' }),
    moving: makeShots({ gop: 50, preset: 'veryfast', segments: MOVING_SEGMENTS, name: 'moving' }),
  };
  copyFileSync(files.g50, join(allowed, 'shots-g50.mp4'));
  copyFileSync(files.g1000, join(allowed, 'shots-g1000.mp4'));
  copyFileSync(files.bframes, join(allowed, 'shots-bframes.mp4'));
  copyFileSync(files.lateCut, join(allowed, 'late-cut.mp4'));
  copyFileSync(files.moving, join(allowed, 'moving.mp4'));
  copyFileSync(makeManyShots(55), join(allowed, 'many-shots.mp4'));
  toAvi(files.g50, 'shots-avi.avi', 0);
  toAvi(files.g50, 'shots-avi-bframes.avi', 2);
  const m = makeAll();
  copyFileSync(m.voice, join(allowed, 'voice.m4a'));
  copyFileSync(m.still, join(allowed, 'still.png'));
}, 120_000);

async function inspect(srv: Spawned, args: Record<string, unknown>, onprogress?: (p: { progress: number }) => void) {
  const r = await srv.client.callTool(
    { name: 'inspect_asset', arguments: args },
    { timeout: 120_000, ...(onprogress ? { onprogress } : {}) },
  );
  if (r.isError) throw new Error(textOf(r));
  return r as {
    structuredContent: Result;
    content: { type: string; data?: string; mimeType?: string; uri?: string; text?: string }[];
  };
}

function sheetOf(r: Awaited<ReturnType<typeof inspect>>, name: string): { bytes: Buffer; path: string } {
  const img = r.content.find((c) => c.type === 'image');
  expect(img?.mimeType).toBe('image/jpeg');
  const bytes = Buffer.from(img!.data!, 'base64');
  const path = join(root, name);
  writeFileSync(path, bytes);
  return { bytes, path };
}

/** Shots equal to the reference (to the frame) and to the frames the media were made with. */
function expectShots(r: Result, file: string) {
  const reference = scdetReference(file);
  expect(reference.map((t) => Math.round(t * FPS))).toEqual(CUT_FRAMES);
  expect(r.shots).toHaveLength(reference.length + 1);
  r.shots
    .slice(1)
    .forEach((s, i) => expect(Math.abs(s.start_seconds - reference[i]!), `shot ${s.index}`).toBeLessThan(frame / 2));
  expect(r.shots[0]!.start_seconds).toBe(0);
  expect(r.shots.at(-1)!.end_seconds).toBeCloseTo(30, 1);
  r.shots.forEach((s, i) => {
    expect(s.index).toBe(i + 1);
    if (i > 0) expect(s.start_seconds).toBe(r.shots[i - 1]!.end_seconds);
    expect(s.start).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
  });
}

function expectSilences(r: Result) {
  expect(r.silences).toHaveLength(SILENCES.length);
  r.silences.forEach((s, i) => {
    expect(Math.abs(s.start_seconds - SILENCES[i]![0]!)).toBeLessThanOrEqual(0.1);
    expect(Math.abs(s.end_seconds - SILENCES[i]![1]!)).toBeLessThanOrEqual(0.1);
  });
  expect(r.loudness.length).toBeGreaterThan(10);
  expect(r.loudness.length).toBeLessThanOrEqual(200);
  const at = (t: number) => r.loudness.find((l) => l.start_seconds <= t && t < l.start_seconds + 0.5)!;
  expect(at(1).mean_db).toBeGreaterThan(-15); // the sine: -9 dBFS RMS
  expect(at(2.5).peak_db).toBeLessThan(-60); // a silence
}

describe('inspect_asset on the local backend', () => {
  let srv: Spawned;
  let projectId: string;
  const ids: Record<string, string> = {};
  const cacheDir = join(root, 'cache-local');
  const env = {
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_LOG_LEVEL: 'debug',
  };
  let first: Awaited<ReturnType<typeof inspect>>;
  const progress: number[] = [];

  beforeAll(async () => {
    srv = await spawnServer(env);
    const p = await srv.client.callTool({
      name: 'create_project',
      arguments: { name: 'inspect', description: 'shots' },
    });
    projectId = (p.structuredContent as { project: { id: string } }).project.id;
    for (const name of [
      'shots-g50.mp4',
      'shots-g1000.mp4',
      'shots-bframes.mp4',
      'late-cut.mp4',
      'moving.mp4',
      'many-shots.mp4',
      'shots-avi.avi',
      'shots-avi-bframes.avi',
      'voice.m4a',
      'still.png',
    ]) {
      const r = await srv.client.callTool({
        name: 'import_media',
        arguments: { project_id: projectId, path: join(allowed, name) },
      });
      ids[name.replace(/\.\w+$/, '')] = (r.structuredContent as { asset: { id: string } }).asset.id;
    }
    first = await inspect(srv, { project_id: projectId, asset_id: ids['shots-g50'] }, (e) => progress.push(e.progress));
  }, 120_000);
  afterAll(async () => {
    await srv?.close();
  });

  it('reports what the source is', () => {
    const r = first.structuredContent;
    expect(r).toMatchObject({
      asset_id: ids['shots-g50'],
      kind: 'video',
      width: 160,
      height: 90,
      fps: 25,
      has_audio: true,
      cached: false,
    });
    expect(r.duration_seconds).toBeCloseTo(30, 1);
  });

  it('finds every hard cut to the frame on a long-GOP source, decoding only part of it', () => {
    const r = first.structuredContent;
    expectShots(r, files.g50);
    expect(r.scan.shots).toBe('keyframes');
    expect(r.scan.frames_total).toBe(750);
    expect(r.scan.frames_decoded!).toBeLessThan(750 / 2);
  });

  it('finds the same cuts with one full pass when keyframes are too sparse', async () => {
    const r = (await inspect(srv, { project_id: projectId, asset_id: ids['shots-g1000'] })).structuredContent;
    expectShots(r, files.g1000);
    expect(r.scan.shots).toBe('full_decode');
    expect(r.scan.frames_decoded).toBe(750);
  });

  it('finds the same cuts in a source with B-frames (decode order is not display order)', async () => {
    const r = (await inspect(srv, { project_id: projectId, asset_id: ids['shots-bframes'] })).structuredContent;
    expectShots(r, files.bframes);
    expect(r.scan.shots).toBe('keyframes');
  });

  it('finds the cuts of an AVI to the frame: with B-frames (most packets have no presentation time) and without (a cut on a keyframe, the time base a frame long)', async () => {
    // Before: the B-frame file's cuts fell a frame or more late (its packet list held one frame in several), and the
    // other's cuts on keyframes were not found (trim dropped a run's last frame, rounded onto the time base).
    for (const name of ['shots-avi', 'shots-avi-bframes']) {
      const reference = scdetReference(join(allowed, `${name}.avi`));
      expect(reference, name).toHaveLength(CUT_FRAMES.length);
      const r = (await inspect(srv, { project_id: projectId, asset_id: ids[name] })).structuredContent;
      expect(
        r.shots.slice(1).map((s) => s.start_seconds),
        name,
      ).toEqual(reference.map((t) => expect.closeTo(t, 3)));
    }
  });

  it('decodes a GOP on to its keyframe when a cut follows the last jump in packet size', async () => {
    // The scan stops the GOP 100-150 at 110 (black to noisy white: the packets jump); the cut at 130 (noisy white to
    // noisy blue) costs no more bits than its neighbours, so only the look of frame 110 against keyframe 150 tells.
    const r = (await inspect(srv, { project_id: projectId, asset_id: ids['late-cut'] })).structuredContent;
    const made = LATE_CUT_SEGMENTS.slice(1).map(([f]) => f);
    expect(scdetReference(files.lateCut).map((t) => Math.round(t * FPS))).toEqual(made);
    expect(r.shots.slice(1).map((s) => Math.round(s.start_seconds * FPS))).toEqual(made);
    expect(r.scan.shots).toBe('keyframes');
  });

  it('finds every cut in footage that moves in every shot without a full pass, locating them between reference frames', async () => {
    // Every pair of neighbouring keyframes differs (the pictures move), so every GOP is a candidate; with B-frames,
    // the reference frames are looked at first and only the stretches where the picture steps are decoded fully.
    const r = (await inspect(srv, { project_id: projectId, asset_id: ids.moving })).structuredContent;
    const made = MOVING_SEGMENTS.slice(1).map(([f]) => f);
    expect(scdetReference(files.moving).map((t) => Math.round(t * FPS))).toEqual(made);
    expect(r.shots.slice(1).map((s) => Math.round(s.start_seconds * FPS))).toEqual(made);
    expect(r.scan.shots).toBe('keyframes');
    expect(r.scan.frames_decoded!).toBeLessThan(r.scan.frames_total!);
  });

  it('measures an audio asset (no shots, no sheet) and shows an image', async () => {
    const a = await inspect(srv, { project_id: projectId, asset_id: ids.voice });
    expect(a.structuredContent).toMatchObject({
      kind: 'audio',
      has_audio: true,
      shots: [],
      silences: [],
      frames: [],
      sheet: { mode: 'none' },
    });
    expect(a.structuredContent.duration_seconds).toBeCloseTo(5, 1);
    // A steady sine (ffmpeg's default, -21 dBFS RMS) in 0.5 s windows.
    const whole = a.structuredContent.loudness.filter((l) => l.start_seconds <= 4.5);
    expect(whole).toHaveLength(10);
    for (const l of whole) expect(Math.abs(l.mean_db + 21)).toBeLessThan(1.5);
    expect(a.content.some((c) => c.type === 'image')).toBe(false);
    const i = await inspect(srv, { project_id: projectId, asset_id: ids.still });
    expect(i.structuredContent).toMatchObject({
      kind: 'image',
      width: 320,
      height: 180,
      has_audio: false,
      shots: [],
      frames: [{ seconds: 0 }],
      sheet: { mode: 'image' },
    });
    expect(colourName(colourAt(sheetOf(i, 'still-sheet.jpg').path, 0, 'crop=40:40:60:40'))).toMatch(
      /rgb\(2[45]\d,2[45]\d,2[45]\d\)/,
    );
  });

  it('finds the silences within 0.1 s and draws a coarse loudness curve', () => {
    expectSilences(first.structuredContent);
  });

  it('shows one labelled frame per shot, within the image limits, and lists them', () => {
    const r = first.structuredContent;
    expect(r.sheet).toMatchObject({ mode: 'shots', first_shot: 1, last_shot: 7 });
    expect(r.sheet.more).toBeUndefined();
    expect(r.frames.map((f) => f.shot)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const f of r.frames) {
      const s = r.shots[f.shot! - 1]!;
      expect(f.seconds).toBeGreaterThanOrEqual(s.start_seconds);
      expect(f.seconds).toBeLessThan(s.end_seconds);
    }
    // Nothing was seeked to: keyframes were kept by the keyframe pass, the first frames of shots 4 and 6 (no
    // keyframe inside) by the refinement that placed their cuts.
    expect(srv.stderr()).toMatch(
      new RegExp(`inspect ${ids['shots-g50']}: sheet of 7 frames \\(7 from kept thumbnails\\)`),
    );
    expect(r.frames[3]!.seconds).toBe(r.shots[3]!.start_seconds);
    const { bytes, path } = sheetOf(first, 'sheet.jpg');
    expect(bytes.length).toBeLessThanOrEqual(1024 * 1024);
    const m = probe(path);
    expect(m.width).toBeLessThanOrEqual(2000);
    expect(m.height).toBeLessThanOrEqual(2000);
    // Seven cells in rows of three; the first row shows smptebars (shot 1), rgbtestsrc (2) and orange (3).
    const cellW = (m.width - 4 * 4) / 3;
    const centre = (col: number, row: number) =>
      `crop=8:8:${4 + col * (cellW + 4) + cellW / 2}:${4 + row * ((m.height - 4 * 4) / 3 + 4) + 20}`;
    const [r0, g0, b0] = colourAt(path, 0, centre(2, 0));
    expect([r0 > 200, g0 > 120 && g0 < 200, b0 < 60]).toEqual([true, true, true]); // orange
    expect(colourName(colourAt(path, 0, centre(0, 2)))).toBe('blue');
  });

  it('zooms into a span: the frames asked for, evenly spaced inside it, with their shots', async () => {
    const r = (
      await inspect(srv, {
        project_id: projectId,
        asset_id: ids['shots-g50'],
        from: '00:00:10.000',
        to: 11.5,
        frames: 6,
      })
    ).structuredContent;
    expect(r.sheet).toMatchObject({ mode: 'zoom' });
    expect(r.frames).toHaveLength(6);
    for (const f of r.frames) {
      expect(f.seconds).toBeGreaterThanOrEqual(10);
      expect(f.seconds).toBeLessThanOrEqual(11.5);
      const s = r.shots.find((x) => f.seconds >= x.start_seconds && f.seconds < x.end_seconds)!;
      expect(f.shot).toBe(s.index);
    }
    const gaps = r.frames.slice(1).map((f, i) => f.seconds - r.frames[i]!.seconds);
    for (const g of gaps) expect(Math.abs(g - 0.25)).toBeLessThanOrEqual(frame + 1e-6);
    // 10.8-11.2 s is the cut-and-back: the frames there show smptehdbars, shot 4.
    expect(r.frames.filter((f) => f.shot === 4).length).toBeGreaterThanOrEqual(1);
  });

  it("zooms into the source's very end, where no frame starts: shows the last frame", async () => {
    const r = await inspect(srv, { project_id: projectId, asset_id: ids['shots-g50'], from: 29.99, to: 30, frames: 4 });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const s = r.structuredContent;
    expect(s.frames).toHaveLength(1);
    expect(Math.abs(s.frames[0]!.seconds - (30 - frame))).toBeLessThan(frame / 2);
    expect(s.frames[0]!.shot).toBe(s.shots.at(-1)!.index);
  });

  it('shows the first 48 of 55 shots, says so, and pages on from where it says', async () => {
    const r = (await inspect(srv, { project_id: projectId, asset_id: ids['many-shots'] })).structuredContent;
    expect(r.shots).toHaveLength(55);
    expect(r.sheet).toMatchObject({ mode: 'shots', first_shot: 1, last_shot: 48 });
    expect(r.frames.map((f) => f.shot)).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
    expect(r.sheet.more).toBe('7 more shots not shown: call again with from: "00:00:07.680" to see them');
    const next = (await inspect(srv, { project_id: projectId, asset_id: ids['many-shots'], from: '00:00:07.680' }))
      .structuredContent;
    expect(next.sheet).toMatchObject({ mode: 'shots', first_shot: 49, last_shot: 55 });
    expect(next.sheet.more).toBeUndefined();
    expect(next.frames.map((f) => f.shot)).toEqual([49, 50, 51, 52, 53, 54, 55]);
    expect(next.cached).toBe(true);
  });

  it('pages through the shots with from alone', async () => {
    const r = (await inspect(srv, { project_id: projectId, asset_id: ids['shots-g50'], from: 10 })).structuredContent;
    expect(r.sheet).toMatchObject({ mode: 'shots', first_shot: 3, last_shot: 7 });
    expect(r.frames.map((f) => f.shot)).toEqual([3, 4, 5, 6, 7]);
  });

  it('reuses the scan when asked again, also from another server sharing the cache dir', async () => {
    const again = await inspect(srv, { project_id: projectId, asset_id: ids['shots-g50'] });
    expect(again.structuredContent.cached).toBe(true);
    expect(again.structuredContent.shots).toEqual(first.structuredContent.shots);
    expect(srv.stderr()).toMatch(new RegExp(`inspect ${ids['shots-g50']}: reusing the inspection cached`));
    const other = await spawnServer(env);
    try {
      const r = await inspect(other, { project_id: projectId, asset_id: ids['shots-g50'], from: 3, to: 4, frames: 2 });
      expect(r.structuredContent.cached).toBe(true);
      expect(r.structuredContent.shots).toEqual(first.structuredContent.shots);
    } finally {
      await other.close();
    }
  });

  it('serves the inspection as a resource, and says when an asset was not inspected', async () => {
    const link = first.content.find((c) => c.type === 'resource_link')!;
    expect(link.uri).toBe(`vj://projects/${projectId}/assets/${ids['shots-g50']}/inspection`);
    const read = await srv.client.readResource({ uri: link.uri! });
    const body = JSON.parse((read.contents[0] as { text: string }).text) as Result;
    expect(body.shots).toEqual(first.structuredContent.shots);
    expect(body.silences).toEqual(first.structuredContent.silences);
    // again: the same file imported anew is a new asset (else the one already inspected comes back).
    const imported = await srv.client.callTool({
      name: 'import_media',
      arguments: { project_id: projectId, path: join(allowed, 'shots-g50.mp4'), again: true },
    });
    const fresh = (imported.structuredContent as { asset: { id: string } }).asset.id;
    await expect(
      srv.client.readResource({ uri: `vj://projects/${projectId}/assets/${fresh}/inspection` }),
    ).rejects.toThrow(/not been inspected yet/);
    await expect(
      srv.client.readResource({
        uri: `vj://projects/${projectId}/assets/3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e/inspection`,
      }),
    ).rejects.toThrow(/no asset .* get_project lists its assets/);
  });

  it('lets the edit tools take a clip as a shot, naming the shot list used', async () => {
    const id = ids['shots-g50']!;
    const bad = await srv.client.callTool({
      name: 'compose_edit',
      arguments: { project_id: projectId, resolution: '320x180', fps: 25, clips: [{ asset_id: id, shot: 9 }] },
    });
    const b = bad.structuredContent as {
      ready: boolean;
      diagnostics: { severity: string; path: string; message: string }[];
    };
    expect(b.ready).toBe(false);
    expect(b.diagnostics[0]).toMatchObject({
      severity: 'error',
      path: '/video_series_sequential/0',
      message: `asset ${id} has 7 shots; there is no shot 9`,
    });

    const c = await srv.client.callTool({
      name: 'compose_edit',
      arguments: {
        project_id: projectId,
        resolution: '320x180',
        fps: 25,
        clips: [
          { asset_id: id, shot: 4 },
          { asset_id: id, shot: 2, start: 1, end: 2.5 },
        ],
      },
    });
    const r = c.structuredContent as {
      ready: boolean;
      notes: string[];
      summary: { cuts: { source_in: string; source_out: string }[] };
    };
    expect(r.ready).toBe(true);
    expect(r.summary.cuts.map((x) => [x.source_in, x.source_out])).toEqual([
      ['00:00:10.800', '00:00:11.200'],
      ['00:00:04.000', '00:00:05.500'],
    ]);
    expect(r.notes[0]).toMatch(
      new RegExp(
        `^clip 1 is shot 4 of asset ${id} \\(shots-g50.mp4\\) \\(10.8-11.2 s\\).*shot list \\(7 shots, inspect_asset; cached\\)`,
      ),
    );

    // Rendered, shot 4 is exactly its ten frames of smptehdbars: no orange frame of the shots either side.
    const p = await srv.client.callTool(
      {
        name: 'preview_edit',
        arguments: {
          project_id: projectId,
          resolution: '320x180',
          fps: 25,
          width: 320,
          clips: [{ asset_id: id, shot: 4 }],
        },
      },
      { timeout: 120_000 },
    );
    const preview = p.structuredContent as { path: string };
    expect(probe(preview.path).videoFrames).toBe(10);
    const orange = (t: number) => {
      const [r0, g0, b0] = colourAt(preview.path, t);
      return r0 > 200 && g0 > 120 && g0 < 200 && b0 < 60;
    };
    expect([0, 0.2, 0.36].map(orange)).toEqual([false, false, false]);
  }, 120_000);

  it('sent progress notifications, ending at 100', () => {
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.at(-1)).toBe(100);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
  });

  it('refuses a bad span and an unknown asset with one actionable line', async () => {
    const bad = await srv.client.callTool({
      name: 'inspect_asset',
      arguments: { project_id: projectId, asset_id: ids['shots-g50'], from: 40 },
    });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^from \(40 s\) is past the end of the asset/);
    expect(bad.structuredContent).toBeUndefined();
    const unknown = await srv.client.callTool({
      name: 'inspect_asset',
      arguments: { project_id: projectId, asset_id: '3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e' },
    });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^no asset .* get_project lists its assets/);
  });
});

describe('inspect_asset on the remote backend (signed links over HTTP)', () => {
  let service: FakeService;
  let srv: Spawned;
  let projectId: string;
  let assetId: string;
  let keyname: string;
  const cacheDir = join(root, 'cache-remote');

  beforeAll(async () => {
    service = await new FakeService().start();
    const project = service.addProject({ name: 'remote inspect' });
    projectId = project.id;
    keyname = `shots-${project.id.slice(0, 8)}`;
    service.media.set(keyname, files.g50);
    assetId = service.addAsset(projectId, { keyname, asset_type: 'video', ext: 'mp4' }).id;
    srv = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: cacheDir,
      CUTROOM_LOG_LEVEL: 'debug',
    });
  });
  afterAll(async () => {
    await srv?.close();
    await service?.stop();
  });

  it('finds the same shots and silences, and keys the cache by the link without its signature', async () => {
    const r = await inspect(srv, { project_id: projectId, asset_id: assetId });
    expectShots(r.structuredContent, files.g50);
    expectSilences(r.structuredContent);
    expect(r.structuredContent.frames.map((f) => f.shot)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sheetOf(r, 'remote-sheet.jpg').bytes.length).toBeLessThanOrEqual(1024 * 1024);
    // New links (another expiry, so another signature) for the same media: the scan is reused.
    service.linkLifetimeSeconds = 7200;
    const again = await inspect(srv, { project_id: projectId, asset_id: assetId, from: 9, to: 12 });
    expect(again.structuredContent.cached).toBe(true);
    expect(again.structuredContent.sheet.mode).toBe('zoom');
  }, 120_000);

  it('scans once for callers that ask at the same time, and goes on for the others when one cancels', async () => {
    const other = service.addProject({ name: 'shared scan' });
    const key = `shared-${other.id.slice(0, 8)}`;
    service.media.set(key, files.bframes);
    const id = service.addAsset(other.id, { keyname: key, asset_type: 'video', ext: 'mp4' }).id;
    // The first reads of its media trickle until the third caller has left (the server handles the three calls and
    // the cancellation in order), so all three callers arrive while the scan is under way, however slow the machine.
    const media = service.gate();
    service.fail({ trickle: media }, { times: 2, match: (r: { path: string }) => r.path.includes(key) });
    const args = { project_id: other.id, asset_id: id };
    const quitter = new AbortController();
    const progress: number[] = [];
    const calls = [
      srv.client.callTool({ name: 'inspect_asset', arguments: args }, { timeout: 120_000 }),
      srv.client.callTool(
        { name: 'inspect_asset', arguments: args },
        { timeout: 120_000, onprogress: (p) => progress.push(p.progress) },
      ),
    ];
    const cancelled = srv.client.callTool({ name: 'inspect_asset', arguments: args }, { signal: quitter.signal });
    await expect.poll(() => pidsMatching(key).length, { timeout: 15_000 }).toBeGreaterThan(0);
    quitter.abort();
    await expect(cancelled).rejects.toThrow();
    media.open();
    const [a, b] = (await Promise.all(calls)) as { isError?: boolean; structuredContent: Result }[];
    for (const r of [a!, b!]) {
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent.cached).toBe(false);
      expectShots(r.structuredContent, files.bframes);
    }
    // One scan: one packet list of this media, and the caller who joined it heard its progress.
    expect(srv.stderr().match(new RegExp(`inspect ${id}: scanned`, 'g'))).toHaveLength(1);
    expect(progress.length).toBeGreaterThan(0);
  }, 120_000);

  it('kills its media processes on cancellation, keeps nothing, and stays usable', async () => {
    const other = service.addProject({ name: 'slow' });
    const slowKey = `slow-${other.id.slice(0, 8)}`;
    service.media.set(slowKey, files.g1000);
    const slowId = service.addAsset(other.id, { keyname: slowKey, asset_type: 'video', ext: 'mp4' }).id;
    // Every read of its media hangs for a minute: nothing can finish before the cancellation.
    service.fail({ delayMs: 60_000 }, { times: 100, match: (r: { path: string }) => r.path.includes(slowKey) });
    const ac = new AbortController();
    const pending = srv.client.callTool(
      { name: 'inspect_asset', arguments: { project_id: other.id, asset_id: slowId } },
      { signal: ac.signal, onprogress: () => {} },
    );
    await expect.poll(() => pidsMatching(slowKey).length, { timeout: 15_000 }).toBeGreaterThan(0);
    ac.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => pidsMatching(slowKey).length, { timeout: 5000 }).toBe(0);
    await expect(
      srv.client.readResource({ uri: `vj://projects/${other.id}/assets/${slowId}/inspection` }),
    ).rejects.toThrow(/not been inspected yet/);
    expect((await srv.client.callTool({ name: 'list_projects', arguments: {} })).isError).toBeFalsy();
  }, 60_000);
});
