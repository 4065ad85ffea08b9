// The render graph is exact for awkward sources (issue 10, items 1-5), measured on what preview_edit and
// render_edit write: the lit box of anamorphic frames, sound edges against flash frames, per-channel levels, the
// sample where a level window starts, and the frame timestamps of a chunked render at 29.97. Edits are hard cuts
// here (audio_fade_ms 0), so that a sound's first sample is where it starts; the fades are cut-edges.test.ts's.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import { soundPlan } from '../../src/media/sound-plan.js';
import {
  EXACT_CLOCKS,
  RATE,
  audioSamples,
  channelLevels,
  frameBrightness,
  frameTimes,
  litBox,
  makeExactMedia,
  soundEdges,
  type ExactName,
} from '../helpers/exact-media.js';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { colourAt } from '../helpers/inspect-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-exact-'));
const allowed = join(root, 'allowed');
const env = (extra: Record<string, string> = {}) => ({
  CUTROOM_DATA_DIR: join(root, 'data'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
  CUTROOM_RENDER_WAIT_MS: '50000',
  ...extra,
});

type Cut = { index: number; loudness?: { mean_db: number; peak_db: number }; flags: string[] };
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};
const call = (s: Spawned, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }, { timeout: 180_000 });

let single: Spawned;
let chunked: Spawned;
let projectId: string;
const ids = {} as Record<ExactName, string>;

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const files = makeExactMedia(allowed);
  // The same data dir for both servers: one imports, both render.
  single = await spawnServer(env());
  chunked = await spawnServer(env({ CUTROOM_FFMPEG_MAX_INPUTS: '3' }));
  projectId = structured<{ project: { id: string } }>(
    await call(single, 'create_project', { name: 'exact', description: 'awkward sources' }),
  ).project.id;
  for (const [name, path] of Object.entries(files) as [ExactName, string][]) {
    ids[name] = structured<{ asset: { id: string } }>(
      await call(single, 'import_media', { project_id: projectId, path }),
    ).asset.id;
  }
}, 120_000);
afterAll(async () => {
  await single?.close();
  await chunked?.close();
});

const cut = (name: ExactName, start: number, end: number, extra: Record<string, unknown> = {}) => ({
  video_id: ids[name],
  video_start_time: start,
  video_end_time: end,
  ...extra,
});
const mute = (start: number, end: number) => ({ audio_levels: [{ audio_level: 0, start_time: start, end_time: end }] });

/**
 * 15.4 s at 640x360, 30 fps. Each cut starts on the frame its timeline start rounds to; its first frames:
 * anamorphic 0 | flash 30 (in 1.05, between its frames at 1.0 and 1.1) | late 74 | surround 134 | mono 179 |
 * stereo 224 | tone 269 (in 0.52, on a frame; muted 1.0-1.5 of its source) | tone 329 (in 1.05, between its
 * frames at 1.04 and 1.08; muted 1.5-2.0) | anamorphic_wide 372 | loud 402 | anamorphic cropped 432 | flash_mkv
 * late 462 (0-0.3: it ends before its sound starts) | flash_mkv 471 (in 1.02, moved to its frame stored at 1.034) |
 * end 500.
 */
const FPS = 30;
const edit = () => ({
  // Each source at its own level: the graph's exactness is measured here; levelling is loudness.test.ts's.
  level_dialogue: false,
  video_output_resolution: '640x360',
  video_output_fps: 30,
  video_output_filename: 'exact.mp4',
  video_series_sequential: [
    cut('anamorphic', 0, 1),
    cut('flash', 1.05, 2.5),
    cut('late', 0, 2),
    cut('surround', 0, 1.5),
    cut('mono', 0, 1.5),
    cut('stereo', 0, 1.5),
    cut('tone', 0.52, 2.52, mute(1, 1.5)),
    cut('tone', 1.05, 2.5, mute(1.5, 2)),
    cut('anamorphic_wide', 0, 1),
    cut('loud', 0, 1),
    cut('anamorphic', 0, 1, { crop: { zoom: 1, position_x: 0, position_y: 0 } }),
    cut('late', 0, 0.3),
    cut('flash_mkv', 1.02, 2),
  ],
});

const MS = 0.001;

/** The sources of edit()'s cuts, in order. */
const NAMES: ExactName[] = [
  'anamorphic',
  'flash',
  'late',
  'surround',
  'mono',
  'stereo',
  'tone',
  'tone',
  'anamorphic_wide',
  'loud',
  'anamorphic',
  'late',
  'flash_mkv',
];
/**
 * How late each cut's sound is against its picture (s), as the render places it (soundPlan): where the cut before a
 * join cannot reach the next one's sound in sync (its picture moved onto a frame and ran on past its out point), its
 * sound trails by the shortfall, so that the timeline's sound has no hole.
 */
function lags(): number[] {
  const plan = toRenderPlan(
    lintEdit({
      ...edit(),
      video_series_sequential: edit().video_series_sequential.map((c) => ({ ...c, video_id: 'v' })),
    }).timeline!,
  );
  return soundPlan(
    plan,
    NAMES.map((n) => EXACT_CLOCKS[n]),
  ).map((s) => s.lag / RATE);
}

describe.each([
  ['in one ffmpeg process', () => single],
  ['in chunks of 3 inputs', () => chunked],
])('preview_edit of awkward sources, %s', (_name, server) => {
  let path: string;
  let cuts: Cut[];
  let sound: Float32Array;
  let preview: { planned_seconds: number; measured_seconds: number; warnings: string[] };
  beforeAll(async () => {
    const p = structured<{
      path: string;
      cuts: Cut[];
      planned_seconds: number;
      measured_seconds: number;
      warnings: string[];
    }>(await call(server(), 'preview_edit', { project_id: projectId, edit: edit(), audio_fade_ms: 0 }));
    ({ path, cuts } = p);
    preview = p;
    sound = audioSamples(path);
  }, 180_000);

  it("renders every cut, also one that ends before its source's sound begins (silence, not a truncated file)", () => {
    expect(preview.planned_seconds).toBe(16.68);
    expect(
      Math.abs(preview.measured_seconds - 500 / FPS),
      `measured ${preview.measured_seconds} s`,
    ).toBeLessThanOrEqual(1 / FPS);
    expect(preview.warnings.filter((w) => w.includes('lasts'))).toEqual([]);
    expect(frameBrightness(path)).toHaveLength(500);
    expect(colourAt(path, 15.55)[0]).toBeGreaterThan(150); // the red of the late source
    expect(Math.max(...channelLevels(sound, 462 / FPS + 0.01, 471 / FPS - 0.01).map((c) => c.peakDb))).toBeLessThan(
      -60,
    );
  });

  it('keeps an anamorphic source its display shape, letterboxed, cropped or plainly scaled', () => {
    // 768x576 shown (4:3) in 640x360: 480 px wide, not 450; its square box stays square.
    expect(litBox(path, 0.5, 32)).toEqual({ width: 480, height: 360 });
    const box = litBox(path, 0.5, 200);
    expect(Math.abs(box.width - 180), `box ${box.width}x${box.height}`).toBeLessThanOrEqual(2);
    expect(Math.abs(box.height - 180)).toBeLessThanOrEqual(2);
    // Cropped to fill: the display frame covers 640x360 (640x480 before the crop); the box is 240 square, not 240x256.
    expect(litBox(path, 14.9, 32)).toEqual({ width: 640, height: 360 });
    const cropped = litBox(path, 14.9, 200);
    expect(Math.abs(cropped.width - 240), `box ${cropped.width}x${cropped.height}`).toBeLessThanOrEqual(2);
    expect(Math.abs(cropped.height - 240)).toBeLessThanOrEqual(2);
    // 16:9 anamorphic (1024x576 shown): the output's shape, scaled without bars; its box, 384x288 shown, is 240x180.
    expect(litBox(path, 12.9, 32)).toEqual({ width: 640, height: 360 });
    const wide = litBox(path, 12.9, 200);
    expect(Math.abs(wide.width - 240), `box ${wide.width}x${wide.height}`).toBeLessThanOrEqual(2);
    expect(Math.abs(wide.height - 180)).toBeLessThanOrEqual(2);
  });

  it('starts picture and sound of a cut on the same instant, or its sound late by the shortfall that closes the join: each flash frame with its beep, within 1 ms', () => {
    const bright = frameBrightness(path).flatMap((y, i) => (y > 150 ? [i] : []));
    // The in point 1.05 moves to the frame at 1.1, the first flash: on the cut's first frame (30), and 0.9 s later.
    expect(bright).toEqual([30, 31, 32, 57, 58, 59, 471]);
    const { onsets } = soundEdges(sound);
    const beep1 = onsets.find((t) => t > 0.9 && t < 1.2);
    const beep2 = onsets.find((t) => t > 1.8 && t < 2.1);
    // The flash cut's picture starts 50 ms into its range (1.05 moved to 1.1) and runs 44 frames (1.467 s), past its
    // out point at 2.5 by 67 ms, where the next cut's sound (from its in point 0) cannot start earlier: its sound
    // trails its picture by those 67 ms (two frames); no other cut's sound trails by as much as that.
    const lag = lags();
    expect(lag[1]).toBeCloseTo(44 / FPS - 1.4, 4);
    expect(Math.max(...lag.filter((_, i) => i !== 1))).toBeLessThan(1.5 / FPS);
    expect(Math.abs(beep1! - (30 / FPS + lag[1]!)), `first beep at ${beep1}`).toBeLessThanOrEqual(MS);
    expect(Math.abs(beep2! - (57 / FPS + lag[1]!)), `second beep at ${beep2}`).toBeLessThanOrEqual(MS);
    // Matroska stores frame 31 of 29.97 at 1.034 s (its time base is 1 ms): the cut from 1.02 starts there.
    const beep3 = onsets.find((t) => t > 15.6 && t < 15.9);
    expect(Math.abs(beep3! - 471 / FPS), `Matroska beep at ${beep3}`).toBeLessThanOrEqual(MS);
  });

  it("starts every cut's sound on its first frame, however the cuts before it rounded to frames", () => {
    // The loud cut follows cuts of 43 and 44 frames for 1.45 s each: its sound starts on its frame 402, not later.
    const { onsets } = soundEdges(sound);
    const loud = onsets.find((t) => t > 13 && t < 13.6);
    expect(Math.abs(loud! - 402 / FPS), `loud sound at ${loud}`).toBeLessThanOrEqual(MS);
    // Its picture starts there too: the white box of the cut before on frame 401, the grey of the loud source on 402
    // (colourAt shows the first frame at or after its time).
    expect(colourAt(path, 401 / FPS - 0.005)[0]).toBeGreaterThan(200);
    expect(Math.abs(colourAt(path, 402 / FPS - 0.005)[0] - 128)).toBeLessThan(20);
  });

  it('keeps the offset of sound that starts after the picture', () => {
    const { onsets } = soundEdges(sound);
    const late = onsets.find((t) => t > 2.4 && t < 3.5);
    expect(Math.abs(late! - (74 / FPS + 0.5)), `late sound at ${late}`).toBeLessThanOrEqual(MS);
    expect(Math.max(...channelLevels(sound, 74 / FPS + 0.01, 74 / FPS + 0.49).map((c) => c.peakDb))).toBeLessThan(-60);
  });

  it('folds 5.1 down to the level of its front channels, and plays mono at its level on both channels', () => {
    const [stereoL, stereoR] = channelLevels(sound, 7.6, 8.8);
    for (const [what, from, to] of [
      ['surround', 4.6, 5.8],
      ['mono', 6.1, 7.3],
    ] as const) {
      for (const [c, ch] of channelLevels(sound, from, to).entries()) {
        const ref = [stereoL, stereoR][c]!;
        expect(
          Math.abs(ch.rmsDb - ref.rmsDb),
          `${what} channel ${c}: ${ch.rmsDb.toFixed(2)} dB vs stereo ${ref.rmsDb.toFixed(2)} dB`,
        ).toBeLessThanOrEqual(0.5);
        expect(ch.peakDb, `${what} channel ${c} peak`).toBeLessThan(-4);
      }
    }
    expect(Math.abs(stereoL!.rmsDb - -9)).toBeLessThanOrEqual(0.5); // the sources' own level: 1 kHz at -6 dBFS peak
    expect(cuts[3]!.flags.filter((f) => f.includes('full scale'))).toEqual([]);
  });

  it('lands level changes on their sample, within 1 ms, with the in point on a frame and moved to one', () => {
    const { onsets, offsets } = soundEdges(sound);
    const near = (list: number[], t: number) =>
      list.reduce((best, x) => (Math.abs(x - t) < Math.abs(best - t) ? x : best), Infinity);
    const expectEdge = (list: number[], t: number, what: string) =>
      expect(Math.abs(near(list, t) - t), `${what} at ${near(list, t)}, not ${t}`).toBeLessThanOrEqual(MS);
    // tone from 0.52 (frame 269), muted 1.0-1.5 of its source: 0.48-0.98 into the cut.
    expectEdge(offsets, 269 / FPS + 0.48, 'mute');
    expectEdge(onsets, 269 / FPS + 0.98, 'unmute');
    // tone from 1.05, moved to its frame at 1.08 (frame 329), muted 1.5-2.0 of its source: 0.42-0.92 into the cut,
    // its sound trailing its picture by what closes its join with the next cut (from its in point 0).
    const lag = lags()[7]!;
    expect(lag).toBeGreaterThan(0);
    expect(lag).toBeLessThan(2 / FPS);
    expectEdge(offsets, 329 / FPS + 0.42 + lag, 'mute');
    expectEdge(onsets, 329 / FPS + 0.92 + lag, 'unmute');
  });

  it('flags the cut whose sound reaches full scale, and only it', () => {
    expect(
      cuts[9]!.flags.some((f) => /^sound reaches full scale \(peak [-+]?0\.0 dBFS\)/.test(f)),
      cuts[9]!.flags.join('; '),
    ).toBe(true);
    expect(cuts.filter((c) => c.flags.some((f) => f.includes('full scale'))).map((c) => c.index)).toEqual([
      cuts[9]!.index,
    ]);
  });
});

describe('a chunked local render at 29.97', () => {
  it('keeps every frame on its exact tick (no millisecond rounding at the joins)', async () => {
    const started = structured<{ render: { asset_id: string; done: boolean; url?: string } }>(
      await call(chunked, 'render_edit', {
        project_id: projectId,
        wait: true,
        edit: {
          video_output_resolution: '320x180',
          video_output_fps: 29.97,
          video_output_filename: 'ntsc.mp4',
          video_series_sequential: [
            cut('tone', 0.3, 1.7),
            cut('late', 0.3, 1.7),
            cut('mono', 0.3, 1.7),
            cut('stereo', 0.3, 1.7),
          ],
        },
      }),
    );
    expect(started.render.done).toBe(true);
    const { times, timeBase } = frameTimes(fileURLToPath(started.render.url!));
    expect(times).toHaveLength(168); // 5.6 s at 29.97
    const worst = Math.max(...times.map((t, k) => Math.abs(t - (k * 1001) / 30000)));
    expect(worst, `time base ${timeBase}, worst frame ${(worst * 1e6).toFixed(0)} µs off its tick`).toBeLessThanOrEqual(
      10e-6,
    );
  }, 180_000);
});
