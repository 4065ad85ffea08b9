// No flash frames, no clicks (issue 18): cuts made exactly on the shot boundaries of a 25 fps source of solid-colour
// shots, placed between output frames, at every common rate. Every output frame is read back and must be its own
// cut's colour (never the next shot's first frame); a silent shot's cut stays silent to its end (no tail of the next
// shot's tone); and the sound at every edit steps no more than the tone does elsewhere (faded, no click), on every
// path: previews, a re-preview from segments, shot-addressed clips, local renders single and chunked.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import { soundPlan } from '../../src/media/sound-plan.js';
import {
  SHOTS,
  SHOT_FPS,
  frameColours,
  leftChannel,
  makeShotMedia,
  peakBetween,
  shotSpan,
  stepsAtEdits,
} from '../helpers/shot-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-edges-'));
const allowed = join(root, 'allowed');
const env = (extra: Record<string, string> = {}) => ({
  CUTROOM_DATA_DIR: join(root, 'data'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
  CUTROOM_RENDER_WAIT_MS: '55000',
  CUTROOM_LOG_LEVEL: 'debug',
  ...extra,
});
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};
const call = (s: Spawned, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }, { timeout: 180_000 });

let server: Spawned;
let chunked: Spawned;
let projectId: string;
let assetId: string;

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const file = makeShotMedia(allowed);
  server = await spawnServer(env());
  chunked = await spawnServer(env({ CUTROOM_FFMPEG_MAX_INPUTS: '3' }));
  projectId = structured<{ project: { id: string } }>(
    await call(server, 'create_project', { name: 'edges', description: 'shots on frame boundaries' }),
  ).project.id;
  assetId = structured<{ asset: { id: string } }>(
    await call(server, 'import_media', { project_id: projectId, path: file }),
  ).asset.id;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await chunked?.close();
});

/** A cut: shot i of the source, whole, or from `skipFrames` source frames into it. */
interface ShotCut {
  shot: number;
  skipFrames?: number;
}
/** Neighbours differ in colour from each other and from the shot that follows each in the source. */
const ORDER: ShotCut[] = [
  { shot: 3, skipFrames: 2 },
  { shot: 0 },
  { shot: 5 },
  { shot: 2 },
  { shot: 7 },
  { shot: 4 },
  { shot: 1 },
  { shot: 6 },
];
/** Other timeline positions; its last shot ends where the source does. */
const ORDER2: ShotCut[] = [
  { shot: 6, skipFrames: 1 },
  { shot: 2 },
  { shot: 4 },
  { shot: 0 },
  { shot: 1 },
  { shot: 5 },
  { shot: 3 },
  { shot: 7 },
];

const rangeOf = (c: ShotCut) => {
  const { start, end } = shotSpan(c.shot);
  return { start: start + (c.skipFrames ?? 0) / 25, end };
};
const clipsOf = (order: ShotCut[]) =>
  order.map((c) => ({ asset_id: assetId, start: rangeOf(c).start, end: rangeOf(c).end }));

/** Where each cut lands in output frames: it starts on the frame its timeline start rounds to. */
function framesOf(order: ShotCut[], fps: number): { first: number; last: number; startSec: number; endSec: number }[] {
  let t = 0;
  const at = (sec: number) => Math.round((Math.round(sec * 1000) / 1000) * fps);
  return order.map((c) => {
    const r = rangeOf(c);
    const a = t;
    t += r.end - r.start;
    return { first: at(a), last: at(t), startSec: at(a) / fps, endSec: at(t) / fps };
  });
}

/** Every frame that is not its cut's colour, as "frame n (cut k): colour, expected colour". */
function wrongFrames(colours: string[], order: ShotCut[], fps: number): string[] {
  const spans = framesOf(order, fps);
  const wrong: string[] = [];
  spans.forEach((s, k) => {
    for (let f = s.first; f < s.last; f++) {
      const want = SHOTS[order[k]!.shot]!.colour;
      if (colours[f] !== want)
        wrong.push(`frame ${f} (cut ${k + 1}, frames ${s.first}-${s.last - 1}): ${colours[f]}, expected ${want}`);
    }
  });
  return wrong;
}

/**
 * Where each cut's sound plays on the timeline (s), as the render places it (soundPlan: continuous, in sync with its
 * picture or late, within a frame or two of the picture's cut).
 */
function soundSlotsOf(order: ShotCut[], fps: number): { from: number; to: number }[] {
  const lint = lintEdit({
    video_output_fps: fps,
    video_output_resolution: '320x180',
    video_series_sequential: order.map((c) => ({
      video_id: 'v',
      video_start_time: rangeOf(c).start,
      video_end_time: rangeOf(c).end,
    })),
  });
  const plan = toRenderPlan(lint.timeline!);
  return soundPlan(
    plan,
    plan.cuts.map(() => ({ frameRate: { num: SHOT_FPS, den: 1 }, videoStartSec: 0 })),
  ).map((s) => ({ from: (s.slotStart + s.lead) / 48_000, to: (s.slotStart + s.lead + s.samples) / 48_000 }));
}

/**
 * The silent shots' cuts' sound, but for 3 ms at each edge, must hold no sound of the tone shots that follow them in
 * the source.
 */
function tails(sound: Float32Array, order: ShotCut[], fps: number): string[] {
  const slots = soundSlotsOf(order, fps);
  return order.flatMap((c, k) => {
    if (c.shot % 2 === 0) return [];
    const peak = peakBetween(sound, slots[k]!.from + 0.003, slots[k]!.to - 0.003);
    return peak > 0.02 ? [`cut ${k + 1} (silent shot ${c.shot}) peaks at ${peak.toFixed(3)}`] : [];
  });
}

/**
 * Edit points of the sound, seconds: where each cut's sound starts, and where the last one's stops (a hard start or
 * stop clicks as well).
 */
const editsOf = (order: ShotCut[], fps: number) => [
  ...soundSlotsOf(order, fps).map((s) => s.from),
  soundSlotsOf(order, fps).at(-1)!.to,
];

const RATES = [23.976, 24, 25, 29.97, 30, 50, 60];
const exactRate = (fps: number) => (Number.isInteger(fps) ? fps : (Math.round(fps) * 1000) / 1001);

describe.each(
  RATES.flatMap(
    (fps) =>
      [
        [fps, 'one', ORDER],
        [fps, 'another', ORDER2],
      ] as const,
  ),
)('a preview at %s fps of cuts on shot boundaries, %s order', (fps, _name, ORDER) => {
  let path: string;
  let cuts: { flags: string[] }[];
  beforeAll(async () => {
    ({ path, cuts } = structured<{ path: string; cuts: { flags: string[] }[] }>(
      await call(server, 'preview_edit', {
        project_id: projectId,
        clips: clipsOf(ORDER),
        resolution: '320x180',
        fps,
        filename: 'edges.mp4',
      }),
    ));
  }, 120_000);

  it("shows in every frame its own cut's colour: no frame of the next shot, none of the one before", () => {
    const colours = frameColours(path);
    const spans = framesOf(ORDER, exactRate(fps));
    expect(colours).toHaveLength(spans.at(-1)!.last);
    expect(wrongFrames(colours, ORDER, exactRate(fps))).toEqual([]);
  });

  it("keeps each cut's sound inside its range and fades every edit (no step above the tone's own)", () => {
    const sound = leftChannel(path);
    expect(tails(sound, ORDER, fps)).toEqual([]);
    const { atEdits, elsewhere } = stepsAtEdits(sound, editsOf(ORDER, fps), 0.004, 0.004);
    expect(elsewhere).toBeGreaterThan(0.02); // the tone's own step, 0.5 * 2π * 440 / 48000 = 0.029
    expect(
      Math.max(...atEdits),
      `steps at edits ${atEdits.map((s) => s.toFixed(3)).join(' ')}, elsewhere ${elsewhere.toFixed(3)}`,
    ).toBeLessThan(1.5 * elsewhere);
  });

  it('flags no flash frame where there is none', () => {
    expect(cuts.flatMap((c) => c.flags).filter((f) => f.includes('flash'))).toEqual([]);
  });
});

describe('every other path, on the same shots', () => {
  it('a re-preview with one cut changed, joined from the segments already made, shows the same frames', async () => {
    const changed: ShotCut[] = [...ORDER.slice(0, -1), { shot: 6, skipFrames: 3 }];
    const p = structured<{ path: string }>(
      await call(server, 'preview_edit', {
        project_id: projectId,
        clips: clipsOf(changed),
        resolution: '320x180',
        fps: 24,
        filename: 'edges.mp4',
      }),
    );
    expect(server.stderr()).toMatch(/1 cut\(s\) rendered, 7 reused/);
    expect(wrongFrames(frameColours(p.path), changed, 24)).toEqual([]);
  }, 120_000);

  it('clips given by shot number cut on the shots inspect_asset found, with no frame of the next shot', async () => {
    const byShot = ORDER.map((c) => ({ asset_id: assetId, shot: c.shot + 1 }));
    const whole = ORDER.map((c) => ({ shot: c.shot }));
    const p = structured<{ path: string }>(
      await call(server, 'preview_edit', {
        project_id: projectId,
        clips: byShot,
        resolution: '320x180',
        fps: 29.97,
        filename: 'edges.mp4',
      }),
    );
    expect(wrongFrames(frameColours(p.path), whole, 30000 / 1001)).toEqual([]);
  }, 120_000);

  it.each([
    ['one process', () => server, 23.976],
    ['chunks of three cuts', () => chunked, 60],
  ])(
    'a local render_edit at full quality, %s, shows and plays only what lies inside each cut',
    async (_name, srv, fps) => {
      const r = structured<{ render: { done: boolean; url?: string } }>(
        await call(srv(), 'render_edit', {
          project_id: projectId,
          clips: clipsOf(ORDER),
          resolution: '320x180',
          fps,
          filename: 'edges-render.mp4',
          wait: true,
        }),
      );
      expect(r.render.done).toBe(true);
      const file = fileURLToPath(r.render.url!);
      expect(wrongFrames(frameColours(file), ORDER, exactRate(fps))).toEqual([]);
      const sound = leftChannel(file);
      expect(tails(sound, ORDER, fps)).toEqual([]);
      const { atEdits, elsewhere } = stepsAtEdits(sound, editsOf(ORDER, fps), 0.004, 0.004);
      expect(Math.max(...atEdits)).toBeLessThan(1.5 * elsewhere);
    },
    180_000,
  );

  it('with audio_fade_ms 0 an edit is a hard cut: the steps at the edits are clicks, the frames still right', async () => {
    const p = structured<{ path: string }>(
      await call(server, 'preview_edit', {
        project_id: projectId,
        clips: clipsOf(ORDER),
        resolution: '320x180',
        fps: 24,
        filename: 'edges.mp4',
        audio_fade_ms: 0,
      }),
    );
    expect(wrongFrames(frameColours(p.path), ORDER, 24)).toEqual([]);
    const { atEdits, elsewhere } = stepsAtEdits(leftChannel(p.path), editsOf(ORDER, 24), 0.004, 0.004);
    expect(Math.max(...atEdits)).toBeGreaterThan(3 * elsewhere);
  }, 120_000);

  it('flags a cut whose first or last frame is another shot (a flash frame in the source), and only that end', async () => {
    const f = 1 / 25;
    const clips = [
      { asset_id: assetId, start: shotSpan(2).start - f, end: shotSpan(2).end - 10 * f }, // first frame: shot 1's last
      { asset_id: assetId, start: shotSpan(4).start + 5 * f, end: shotSpan(4).end + f }, // last frame: shot 5's first
      { asset_id: assetId, start: shotSpan(6).start, end: shotSpan(6).end }, // clean
    ];
    const p = structured<{ cuts: { flags: string[] }[] }>(
      await call(server, 'preview_edit', {
        project_id: projectId,
        clips,
        resolution: '320x180',
        fps: 25,
        filename: 'flash.mp4',
      }),
    );
    const flash = p.cuts.map((c) => c.flags.filter((x) => x.includes('flash frame')));
    expect(flash[0]).toHaveLength(1);
    expect(flash[0]![0]).toMatch(/^its first frame differs sharply from the next .*move its in point one frame later$/);
    expect(flash[1]).toHaveLength(1);
    expect(flash[1]![0]).toMatch(
      /^its last frame differs sharply from the one before .*move its out point one frame earlier$/,
    );
    expect(flash[2]).toEqual([]);
  }, 120_000);

  it('refuses a fade out of range, naming the field, and renders nothing', async () => {
    const r = (await call(server, 'preview_edit', {
      project_id: projectId,
      clips: clipsOf(ORDER),
      audio_fade_ms: 500,
    })) as { isError?: boolean };
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/audio_fade_ms is 500; it must be 0 to 100 milliseconds/);
  });
});
