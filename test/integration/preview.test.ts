// preview_edit through the built server: what it renders is read back frame by frame and span by span.
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { pidsMatching } from '../helpers/processes.js';
import { colourAt, colourName, probe, playedContent, rmsDb } from '../helpers/inspect-media.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';

let service: FakeService;
let srv: Spawned;
let projectId: string;
let ids: Record<MediaName, string>;
let cacheDir: string;

type Preview = {
  preview_id: string;
  path: string;
  sheet_path: string;
  resolution: string;
  planned_seconds: number;
  measured_seconds: number;
  cuts: { index: number; timeline_start: string; loudness?: { mean_db: number; peak_db: number }; flags: string[] }[];
  mix?: { lufs?: number; true_peak_db?: number };
  warnings: string[];
};

beforeAll(async () => {
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
  cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
  srv = await spawnServer({
    VJ_API_KEY: service.apiKey,
    VJ_API_URL: service.url,
    CUTROOM_CACHE_DIR: cacheDir,
    CUTROOM_PREVIEW_KEEP: '3',
  });
});
afterAll(async () => {
  await srv?.close();
  await service?.stop();
});

/**
 * 8.5 s: red (tone) | blue muted by its level windows, with the voice laid over its middle | black | vertical green
 * cropped to fill | a source with no audio.
 */
const timeline = () => ({
  project_id: projectId,
  resolution: '640x360',
  fps: 25,
  clips: [
    { asset_id: ids.red, start: 1, end: 3 },
    { asset_id: ids.blue, start: 0, end: 3, volume: 0 },
    { asset_id: ids.black, start: 0, end: 1.5 },
    { asset_id: ids.green_vertical, start: 0, end: 1, crop: { zoom: 1, position_x: 0, position_y: 0 } },
    { asset_id: ids.mute_yellow, start: 0, end: 1, volume: 1 },
  ],
  overlays: [{ asset_id: ids.voice, at: 3, until: 4 }],
});

async function preview(
  client = srv.client,
  args: Record<string, unknown> = timeline(),
  onprogress?: (p: { progress: number }) => void,
) {
  const r = await client.callTool({ name: 'preview_edit', arguments: args }, onprogress ? { onprogress } : {});
  if (r.isError) throw new Error(textOf(r));
  return r;
}

describe('preview_edit tells the in point the picture starts on', () => {
  it('names a cut whose in point lies between two source frames by the frame used, not the time written', async () => {
    // The sources run at 25 fps: 1.01 s lies between the frames at 1.00 and 1.04 s; the cut's picture starts on 1.04.
    const r = await preview(srv.client, {
      project_id: projectId,
      resolution: '320x180',
      fps: 25,
      clips: [
        { asset_id: ids.red, start: 1.01, end: 2 },
        { asset_id: ids.blue, start: 2, end: 3 },
      ],
    });
    const cuts = (r.structuredContent as { cuts: { source_in: string }[] }).cuts;
    expect(cuts.map((c) => c.source_in)).toEqual(['00:00:01.040', '00:00:02.000']);
  }, 120_000);
});

describe('preview_edit flags a cut without sound only where its sound was asked', () => {
  it('does not flag a source with no audio track whose level was never asked (b-roll under other sound)', async () => {
    const r = await preview(srv.client, {
      project_id: projectId,
      resolution: '320x180',
      fps: 25,
      clips: [{ asset_id: ids.mute_yellow, start: 0, end: 1 }],
    });
    const cuts = (r.structuredContent as { cuts: { flags: string[] }[] }).cuts;
    expect(cuts[0]!.flags.filter((f) => f.startsWith('silent'))).toEqual([]);
  }, 120_000);
});

describe('preview_edit renders what the edit says', () => {
  let r: Awaited<ReturnType<typeof preview>>;
  let p: Preview;
  const progress: number[] = [];
  beforeAll(async () => {
    r = await preview(srv.client, timeline(), (e) => progress.push(e.progress));
    p = r.structuredContent as Preview;
  }, 120_000);

  it('lasts what was planned, within one frame', () => {
    expect(p.planned_seconds).toBe(8.5);
    expect(Math.abs(p.measured_seconds - 8.5)).toBeLessThanOrEqual(0.04);
    const m = probe(p.path);
    expect(Math.abs(m.videoFrames - 8.5 * 25)).toBeLessThanOrEqual(1);
    expect(m).toMatchObject({ width: 640, height: 360 });
  });

  it('plays the cuts in order, switching at the planned boundaries within one frame', () => {
    const at = (t: number) => colourName(colourAt(p.path, t));
    expect([0.1, 1.9, 2.05, 4.9, 5.05, 6.4, 6.55, 7.4, 7.55, 8.4].map(at)).toEqual([
      'red',
      'red',
      'blue',
      'blue',
      'black',
      'black',
      'green',
      'green',
      'yellow',
      'yellow',
    ]);
    // The frames either side of each boundary: the last of one cut, the first of the next.
    for (const [boundary, before, after] of [
      [2, 'red', 'blue'],
      [5, 'blue', 'black'],
      [6.5, 'black', 'green'],
      [7.5, 'green', 'yellow'],
    ] as const) {
      expect(at(boundary - 0.04), `before ${boundary}`).toBe(before);
      expect(at(boundary + 0.001), `at ${boundary}`).toBe(after);
    }
  });

  it('fills the frame with a cropped vertical source instead of pillarboxing it', () => {
    const leftEdge = 'crop=16:16:0:ih/2';
    expect(colourName(colourAt(p.path, 7.0, leftEdge))).toBe('green');
  });

  it('silences level-0 spans, and plays the overlay where placed and nowhere else', () => {
    expect(rmsDb(p.path, 0.2, 1.8)).toBeGreaterThan(-30); // red's own tone
    expect(rmsDb(p.path, 2.2, 2.8)).toBeLessThan(-60); // blue at level 0, no overlay yet
    expect(rmsDb(p.path, 3.2, 3.8)).toBeGreaterThan(-30); // the voice, over muted blue
    expect(rmsDb(p.path, 3.2, 3.8, 'bandpass=f=660:width_type=h:w=40')).toBeGreaterThan(-35); // and it is the voice's 660 Hz
    expect(rmsDb(p.path, 4.2, 4.8)).toBeLessThan(-60); // after until: gone
    expect(rmsDb(p.path, 7.6, 8.4)).toBeLessThan(-60); // a source with no audio plays silence
  });

  it('measures each cut and flags the black one and the one without sound', () => {
    const [red, blue, black, green, yellow] = p.cuts;
    expect(red!.loudness!.mean_db).toBeGreaterThan(-30);
    expect(red!.flags.filter((f) => !f.startsWith('frozen'))).toEqual([]);
    expect(blue!.flags.filter((f) => !f.startsWith('frozen'))).toEqual([]);
    expect(black!.flags.some((f) => f.startsWith('black picture'))).toBe(true);
    expect(black!.flags.some((f) => f.startsWith('silent'))).toBe(true);
    expect(green!.flags.some((f) => f.startsWith('black'))).toBe(false);
    expect(yellow!.flags.some((f) => /silent .* \(the source has no audio track\)/.test(f))).toBe(true);
    // Solid colours do not move: every cut of these sources is frozen, and says so.
    expect(red!.flags.some((f) => f.startsWith('frozen picture'))).toBe(true);
  });

  it('returns a contact sheet within the image limits, three frames a cut', () => {
    const img = (r.content as { type: string; data?: string; mimeType?: string }[]).find((c) => c.type === 'image');
    expect(img?.mimeType).toBe('image/jpeg');
    const bytes = Buffer.from(img!.data!, 'base64');
    expect(bytes.length).toBeLessThanOrEqual(1024 * 1024);
    const sheet = probe(p.sheet_path);
    expect(sheet.width).toBeLessThanOrEqual(2000);
    expect(sheet.height).toBeLessThanOrEqual(2000);
    // 15 frames in rows of three: five rows of 320x180 thumbnails, each with a 50 px strip for its labels under it,
    // with 4 px padding and margin.
    expect(sheet.width).toBe(3 * 320 + 4 * 4);
    expect(sheet.height).toBe(5 * (180 + 50) + 6 * 4);
    // The first thumbnail is red, the middle of the fourth row green.
    writeFileSync(join(cacheDir, 'sheet-copy.jpg'), bytes);
    expect(colourName(colourAt(join(cacheDir, 'sheet-copy.jpg'), 0, 'crop=200:100:60:60'))).toBe('red');
    expect(
      colourName(colourAt(join(cacheDir, 'sheet-copy.jpg'), 0, `crop=200:100:${4 + 324 + 60}:${4 + 3 * 234 + 60}`)),
    ).toBe('green');
  });

  it('links the preview video as a resource that reads back', async () => {
    const link = (r.content as { type: string; uri?: string }[]).find((c) => c.type === 'resource_link');
    expect(link?.uri).toBe(`cutroom://previews/${p.preview_id}/preview.mp4`);
    const read = await srv.client.readResource({ uri: link!.uri! });
    expect((read.contents[0] as { mimeType: string }).mimeType).toBe('video/mp4');
    expect(Buffer.from((read.contents[0] as { blob: string }).blob, 'base64').length).toBeGreaterThan(10_000);
  });

  it('reported progress, ending at 100', () => {
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toBe(100);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
  });
});

describe('preview_edit in chunks', () => {
  it('renders the same timeline in chunks of 2 inputs with the same boundaries and sound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const chunked = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_FFMPEG_MAX_INPUTS: '2',
    });
    try {
      const p = (await preview(chunked.client)).structuredContent as Preview;
      expect(Math.abs(p.measured_seconds - 8.5)).toBeLessThanOrEqual(0.04);
      const at = (t: number) => colourName(colourAt(p.path, t));
      expect([0.1, 1.96, 2.0, 4.96, 5.0, 6.46, 6.5, 7.46, 7.5].map(at)).toEqual([
        'red',
        'red',
        'blue',
        'blue',
        'black',
        'black',
        'green',
        'green',
        'yellow',
      ]);
      expect(rmsDb(p.path, 2.2, 2.8)).toBeLessThan(-60);
      expect(rmsDb(p.path, 3.2, 3.8)).toBeGreaterThan(-30);
      expect(rmsDb(p.path, 4.2, 4.8)).toBeLessThan(-60);
      expect(p.cuts[2]!.flags.some((f) => f.startsWith('black picture'))).toBe(true);
      // Nothing but the preview, its record, its levels and its first cut's clip (for a view) is left: chunk files,
      // lists, thumbnails and the marker are removed.
      // (.rendering: a returned preview is held against eviction for a few seconds.)
      expect(
        readdirSync(join(dir, 'previews', p.preview_id))
          .filter((f) => f !== '.rendering')
          .sort(),
      ).toEqual(['cut-0.mp4', 'edit.key', 'levels.json', 'preview.json', 'preview.mp4', 'sheet.jpg']);
    } finally {
      await chunked.close();
    }
  }, 120_000);
});

describe('preview_edit refusals, cancellation and the cache', () => {
  it('renders nothing for an edit with errors', async () => {
    const before = existsSync(join(cacheDir, 'previews')) ? readdirSync(join(cacheDir, 'previews')).length : 0;
    const r = await srv.client.callTool({
      name: 'preview_edit',
      arguments: { project_id: projectId, clips: [{ asset_id: ids.red, start: 2, end: 20 }] },
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/Nothing was previewed.*video_end_time/s);
    // compose_edit's shape is not preview_edit's outputSchema: the refusal carries no structuredContent at all.
    expect(r.structuredContent).toBeUndefined();
    expect(readdirSync(join(cacheDir, 'previews')).length).toBe(before);
  });

  it('kills ffmpeg on cancellation and keeps no partial file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const other = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_CACHE_DIR: dir });
    try {
      const long = {
        project_id: projectId,
        width: 1280,
        resolution: '1280x720',
        clips: Array.from({ length: 10 }, () => ({ asset_id: ids.red, start: 0, end: 8 })),
      };
      const ac = new AbortController();
      const pending = other.client.callTool(
        { name: 'preview_edit', arguments: long },
        { signal: ac.signal, onprogress: () => {} },
      );
      await expect.poll(() => pidsMatching(dir).length, { timeout: 15_000 }).toBeGreaterThan(0);
      ac.abort();
      await expect(pending).rejects.toThrow();
      // 80 s of 720p takes far longer than this to render: gone this fast means killed, not finished.
      await expect.poll(() => pidsMatching(dir).length, { timeout: 4000 }).toBe(0);
      await expect
        .poll(() => (existsSync(join(dir, 'previews')) ? readdirSync(join(dir, 'previews')) : []), { timeout: 5000 })
        .toEqual([]);
      // No half-made segment either (their scratch names start with a dot).
      await expect
        .poll(
          () =>
            existsSync(join(dir, 'segments'))
              ? readdirSync(join(dir, 'segments')).filter((n) => n.startsWith('.'))
              : [],
          { timeout: 5000 },
        )
        .toEqual([]);
      expect((await other.client.callTool({ name: 'list_projects', arguments: {} })).isError).toBeFalsy();
    } finally {
      await other.close();
    }
  }, 60_000);

  it('keeps only the newest previews (CUTROOM_PREVIEW_KEEP=3)', async () => {
    const small = (i: number) => ({
      project_id: projectId,
      width: 160,
      clips: [{ asset_id: ids.blue, start: 0, end: 0.5 + i * 0.04 }],
    });
    const made: string[] = [];
    for (let i = 0; i < 4; i++)
      made.push(((await preview(srv.client, small(i))).structuredContent as Preview).preview_id);
    // A returned preview is held for a few seconds (its path must be there when the agent gets it), then evicted.
    await expect
      .poll(() => readdirSync(join(cacheDir, 'previews')), { timeout: 30_000, interval: 500 })
      .toHaveLength(3);
    const left = readdirSync(join(cacheDir, 'previews'));
    expect(left).toEqual(expect.arrayContaining(made.slice(-3)));
    const gone = await srv.client
      .readResource({ uri: `cutroom://previews/${made[0]}/preview.mp4` })
      .catch((e: Error) => e.message);
    expect(gone).toMatch(/gone/);
  }, 60_000);
});

describe('previewing the same edit again', () => {
  it('hands back the preview made before, without rendering, also after the links were signed anew', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const env = {
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_LOG_LEVEL: 'debug',
    };
    const one = await spawnServer(env);
    const other = await spawnServer(env);
    try {
      const edit = (end: number) => ({
        project_id: projectId,
        width: 160,
        clips: [
          { asset_id: ids.red, start: 0, end },
          { asset_id: ids.blue, start: 0, end: 1 },
        ],
      });
      const first = (await preview(one.client, edit(1))).structuredContent as Preview;
      const made = statSync(first.path);
      // Links signed anew (another expiry): the same media, so the same preview; from another server too.
      service.linkLifetimeSeconds += 600;
      const again = (await preview(one.client, edit(1))).structuredContent as Preview;
      const elsewhere = (await preview(other.client, edit(1))).structuredContent as Preview;
      expect(again.preview_id).toBe(first.preview_id);
      expect(elsewhere.preview_id).toBe(first.preview_id);
      expect(again.cuts).toEqual(first.cuts);
      const after = statSync(first.path);
      expect([after.ino, after.mtimeMs]).toEqual([made.ino, made.mtimeMs]);
      expect(one.stderr()).toMatch(
        new RegExp(`preview ${first.preview_id}: the same edit was previewed before; reusing it`),
      );
      // One frame longer is another edit: rendered anew.
      const changed = (await preview(one.client, edit(1.04))).structuredContent as Preview;
      expect(changed.preview_id).not.toBe(first.preview_id);
      expect(changed.planned_seconds).toBeCloseTo(first.planned_seconds + 0.04, 3);
    } finally {
      await one.close();
      await other.close();
    }
  }, 120_000);
});

describe('the edit-preview loop', () => {
  it('re-previews an edit with one cut changed by rendering that cut alone, giving what a fresh preview gives', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const env = {
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_LOG_LEVEL: 'debug',
    };
    const loop = await spawnServer(env);
    const fresh = await spawnServer({ ...env, CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-cache-')) });
    try {
      const first = (await preview(loop.client, timeline())).structuredContent as Preview;
      expect(loop.stderr()).toMatch(
        new RegExp(`preview ${first.preview_id}: rendered [\\d.]+ s in \\d+ ms: 5 cut\\(s\\) rendered, 0 reused`),
      );
      // The blue cut 0.4 s (10 frames) shorter: every later cut moves, but only the blue one is rendered again.
      // (A shift by a fraction of a frame would also change how later cuts round to frames, and so render them.)
      // Links are signed anew in between (another expiry): the segments of the same media still count.
      const changed = timeline();
      changed.clips[1] = { ...changed.clips[1]!, end: 2.6 };
      service.linkLifetimeSeconds += 600;
      const second = (await preview(loop.client, changed)).structuredContent as Preview;
      // The changed cut alone (with its threads: it is more than a quarter of the timeline) while the sound is
      // encoded and measured; then the join copies.
      expect(loop.stderr()).toMatch(
        new RegExp(
          `preview ${second.preview_id}: rendered [\\d.]+ s in \\d+ ms: 1 cut\\(s\\) rendered, 4 reused, 4 ffmpeg process\\(es\\), the sound made meanwhile, 8.1 s of its sound measured$`,
          'm',
        ),
      );
      expect(second.planned_seconds).toBe(8.1);

      // The same edit previewed from nothing, on a server with an empty cache dir.
      const reference = (await preview(fresh.client, changed)).structuredContent as Preview;
      // ... the usual way: the first cut alone and first, then two segment processes filling the ffmpeg slots.
      expect(fresh.stderr()).toMatch(
        new RegExp(
          `preview ${reference.preview_id}: rendered [\\d.]+ s in \\d+ ms: 5 cut\\(s\\) rendered, 0 reused, 5 ffmpeg process\\(es\\), the segments on one thread each, the first alone, 8.1 s of its sound measured$`,
          'm',
        ),
      );
      expect(second.measured_seconds).toBeCloseTo(reference.measured_seconds, 2);
      // The same in what plays: every picture and sound sample, and the sound's packets and their times.
      const [mine, theirs] = [playedContent(second.path), playedContent(reference.path)];
      expect(mine.decodedVideo).toBe(theirs.decodedVideo);
      expect(mine.decodedAudio).toBe(theirs.decodedAudio);
      expect(mine.audioPackets.length).toBeGreaterThan(300);
      expect(mine.audioPackets).toEqual(theirs.audioPackets);
      expect(second.cuts.map((c) => c.flags)).toEqual(reference.cuts.map((c) => c.flags));
      second.cuts.forEach((c, i) => {
        const ref = reference.cuts[i]!;
        expect(!!c.loudness, `cut ${i + 1} loudness`).toBe(!!ref.loudness);
        if (c.loudness && ref.loudness)
          expect(Math.abs(c.loudness.mean_db - ref.loudness.mean_db), `cut ${i + 1}`).toBeLessThanOrEqual(0.2);
      });
      // The frames on either side of every boundary, and the sound of each span, as in the fresh preview.
      const at = (file: string, t: number) => colourName(colourAt(file, t));
      for (const t of [0.02, 1.96, 2.0, 4.56, 4.6, 6.06, 6.1, 7.06, 7.1, 8.06])
        expect(at(second.path, t), `frame at ${t} s`).toBe(at(reference.path, t));
      for (const [a, b] of [
        [0.2, 1.8],
        [2.2, 2.8],
        [3.2, 3.8],
        [4.7, 5.9],
        [7.2, 8.0],
      ] as const) {
        const [x, y] = [rmsDb(second.path, a, b), rmsDb(reference.path, a, b)];
        // Silence (-Infinity) must be silence in both.
        if (x === -Infinity || y === -Infinity) expect(x, `sound ${a}-${b} s`).toBe(y);
        else expect(Math.abs(x - y), `sound ${a}-${b} s`).toBeLessThanOrEqual(0.5);
      }

      // A short cut changed (0.8 s of 7.9): rendered alone too, on one thread (the sound's encode is the longer).
      const shorter = timeline();
      shorter.clips[1] = changed.clips[1]!;
      shorter.clips[3] = { ...shorter.clips[3]!, end: 0.8 };
      const third = (await preview(loop.client, shorter)).structuredContent as Preview;
      expect(third.planned_seconds).toBe(7.9);
      expect(loop.stderr()).toMatch(
        new RegExp(
          `preview ${third.preview_id}: rendered [\\d.]+ s in \\d+ ms: 1 cut\\(s\\) rendered, 4 reused, 4 ffmpeg process\\(es\\), the sound made meanwhile \\(the cut on one thread\\), 7.9 s of its sound measured$`,
          'm',
        ),
      );
    } finally {
      await loop.close();
      await fresh.close();
    }
  }, 180_000);

  it("a cut changed in place (the same length): only the sound around it is measured, and every figure is a fresh preview's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const env = {
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_LOG_LEVEL: 'debug',
    };
    const loop = await spawnServer(env);
    const fresh = await spawnServer({ ...env, CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-cache-')) });
    try {
      // Levelling off: here the red tone is the only cut levelled against the others, so a change to it moves them.
      const edit = () => ({ ...timeline(), level_dialogue: false });
      const first = (await preview(loop.client, edit())).structuredContent as Preview;
      expect(loop.stderr()).toMatch(
        new RegExp(`preview ${first.preview_id}: rendered .*, 8.5 s of its sound measured$`, 'm'),
      );
      // The red cut from later in its source and 8 dB down: its sound changes, its length does not.
      const changed = edit();
      changed.clips[0] = { ...changed.clips[0]!, start: 3, end: 5, volume: 0.4 };
      const second = (await preview(loop.client, changed)).structuredContent as Preview;
      // The cut (2 s of 8.5) on one thread beside the sound's encode. Its slot and a little after it (the loudness
      // blocks that reach back into it) measured: under 3 s of 8.5.
      const line = new RegExp(
        `preview ${second.preview_id}: rendered [\\d.]+ s in \\d+ ms: 1 cut\\(s\\) rendered, 4 reused, 4 ffmpeg process\\(es\\), the sound made meanwhile \\(the cut on one thread\\), ([\\d.]+) s of its sound measured$`,
        'm',
      ).exec(loop.stderr());
      expect(line, loop.stderr()).not.toBeNull();
      expect(Number(line![1])).toBeGreaterThanOrEqual(2);
      expect(Number(line![1])).toBeLessThan(3);
      const reference = (await preview(fresh.client, changed)).structuredContent as Preview;
      expect(fresh.stderr()).toMatch(
        new RegExp(`preview ${reference.preview_id}: rendered .*, 8.5 s of its sound measured$`, 'm'),
      );
      // Every figure of the sound (each cut's loudness, peaks and flags, the mix's), to the digit.
      expect(second.cuts).toEqual(reference.cuts);
      expect(second.mix).toEqual(reference.mix);
      expect(second.mix?.lufs).toBeDefined();
      // And they did change: the red cut is quieter than in the first preview.
      expect(second.cuts[0]!.loudness!.mean_db).toBeLessThan(first.cuts[0]!.loudness!.mean_db - 2);
      expect(second.mix).not.toEqual(first.mix);
      expect(playedContent(second.path).audioPackets).toEqual(playedContent(reference.path).audioPackets);
    } finally {
      await loop.close();
      await fresh.close();
    }
  }, 180_000);

  it('when the sound of a changed edit fails, says so, leaves nothing behind, and keeps the changed cut rendered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const loop = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_LOG_LEVEL: 'debug',
    });
    try {
      const first = (await preview(loop.client, timeline())).structuredContent as Preview;
      const changed = timeline();
      changed.clips[1] = { ...changed.clips[1]!, end: 2.6 };
      // The voiceover's link refuses from now on: only the sound's process reads it (the segment reads the blue clip).
      service.fail(
        { status: 403, body: '<Error><Code>AccessDenied</Code></Error>', contentType: 'application/xml' },
        { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
      );
      service.requests.length = 0;
      let r;
      try {
        r = await loop.client.callTool({ name: 'preview_edit', arguments: changed });
      } finally {
        service.reset();
      }
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/ffmpeg failed .*403|403.*Forbidden|Server returned 403/i);
      expect(pidsMatching(dir)).toEqual([]);
      // The failed preview's folder is gone; the first one holds no scratch file (its marker holds it for a while).
      expect(readdirSync(join(dir, 'previews'))).toEqual([first.preview_id]);
      expect(
        readdirSync(join(dir, 'previews', first.preview_id)).filter((n) => n.startsWith('.') && n !== '.rendering'),
      ).toEqual([]);
      expect(readdirSync(join(dir, 'segments')).filter((n) => n.startsWith('.'))).toEqual([]);
      // The changed cut was rendered meanwhile and kept: the same edit now only joins.
      const again = (await preview(loop.client, changed)).structuredContent as Preview;
      expect(loop.stderr()).toMatch(
        new RegExp(`preview ${again.preview_id}: rendered [\\d.]+ s in \\d+ ms: 0 cut\\(s\\) rendered, 5 reused`),
      );
    } finally {
      await loop.close();
    }
  }, 120_000);

  it('a cancelled re-preview stops the processes making its sound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const loop = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_CACHE_DIR: dir });
    try {
      const first = (await preview(loop.client, timeline())).structuredContent as Preview;
      const changed = timeline();
      changed.clips[1] = { ...changed.clips[1]!, end: 2.6 };
      // The voiceover trickles until the test is done (service.reset()): the sound's process waits on it long after
      // the segment is made, however slow the machine.
      service.fail(
        { trickle: service.gate() },
        { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
      );
      const ac = new AbortController();
      const pending = loop.client.callTool(
        { name: 'preview_edit', arguments: changed },
        { signal: ac.signal, onprogress: () => {} },
      );
      // Both of them, made while the changed cut renders: the sound encoded, and the same sound measured.
      const soundPids = () =>
        pidsMatching(dir).filter(
          (pid) => pidsMatching('loud_mix').includes(pid) || pidsMatching('sound.m4a').includes(pid),
        );
      await expect.poll(() => soundPids().length, { timeout: 60_000 }).toBe(2);
      ac.abort();
      await expect(pending).rejects.toThrow();
      await expect.poll(() => pidsMatching(dir), { timeout: 4000 }).toEqual([]);
      await expect.poll(() => readdirSync(join(dir, 'previews')), { timeout: 5000 }).toEqual([first.preview_id]);
    } finally {
      service.reset();
      await loop.close();
    }
  }, 120_000);
});

describe('cuts play as they are rendered (issue 34, item 3)', () => {
  /** A preview_edit result followed with preview_edit {preview_id} until done (at most 40 calls). */
  async function untilDone(s: Spawned, r: Awaited<ReturnType<Client['callTool']>>) {
    for (let i = 0; i < 40 && (r.structuredContent as { status?: string } | undefined)?.status === 'rendering'; i++) {
      r = await s.client.callTool({
        name: 'preview_edit',
        arguments: { preview_id: (r.structuredContent as { preview_id: string }).preview_id },
      });
    }
    if (r.isError) throw new Error(textOf(r));
    return r;
  }

  /** A copy of the timeline whose every cut is another range (no segment of it is made yet). */
  const other = () => {
    const t = timeline();
    t.clips = t.clips.map((c) => ({ ...c, end: c.end - 0.2 }));
    t.overlays = [{ asset_id: ids.voice, at: 1, until: 2 }];
    return t;
  };

  it('names each cut as it is ready, serves it as a clip that plays, answers what is ready, and joins a repeated call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const s = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_LOG_LEVEL: 'debug',
      CUTROOM_RENDER_WAIT_MS: '1500',
    });
    try {
      // Every medium probed first (another edit), then the voiceover held, trickling until service.reset(): the
      // segments do not read it, the sound does, so the preview stays rendering with its cuts ready however slow the
      // machine. (The test service trickles from this process: nothing synchronous runs here until it is let go.)
      await untilDone(s, await s.client.callTool({ name: 'preview_edit', arguments: other() }, { timeout: 120_000 }));
      service.fail(
        { trickle: service.gate() },
        { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
      );
      const messages: string[] = [];
      const first = await s.client.callTool(
        { name: 'preview_edit', arguments: timeline() },
        { onprogress: (p) => void (p.message && messages.push(p.message)), timeout: 120_000 },
      );
      expect(first.isError).toBeFalsy();
      const id = (first.structuredContent as { preview_id: string }).preview_id;
      // Followed until every cut is ready, still rendering (the sound waits on the voiceover).
      let r = first;
      const until = Date.now() + 120_000;
      while (((r.structuredContent as { cuts_ready?: number }).cuts_ready ?? 0) < 5 && Date.now() < until) {
        r = await s.client.callTool(
          { name: 'preview_edit', arguments: { preview_id: id } },
          { onprogress: (p) => void (p.message && messages.push(p.message)) },
        );
      }
      expect(r.structuredContent).toMatchObject({ preview_id: id, status: 'rendering', cuts_ready: 5 });
      expect(textOf(r)).toMatch(
        new RegExp(`5 of 5 cuts can be played now, each a clip: cutroom://previews/${id}/cuts/\\d\\.mp4`),
      );
      // Each cut said once, the first cut first (it is rendered alone, before the rest).
      const said = messages
        .flatMap((m) => /ready to play \(cut (\d+): (\S+)\)/.exec(m) ?? [])
        .filter((_, i) => i % 3 === 1);
      expect(said[0]).toBe('1');
      expect([...said].sort()).toEqual(['1', '2', '3', '4', '5']);
      // A clip plays: an mp4 of the cut's picture and its sound, as long as the cut, the cut's colours (read while it
      // renders, looked at once the voiceover is let go).
      const clips = [
        [0, 'red', 2],
        [2, 'black', 1.5],
      ] as const;
      for (const [cut] of clips) {
        const read = await s.client.readResource({ uri: `cutroom://previews/${id}/cuts/${cut}.mp4` });
        writeFileSync(join(dir, `clip-${cut}.mp4`), Buffer.from((read.contents[0] as { blob: string }).blob, 'base64'));
        expect((read.contents[0] as { mimeType?: string }).mimeType).toBe('video/mp4');
      }
      // The same edit asked again while it renders joins it: one preview, made once.
      const again = await s.client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 });
      expect((again.structuredContent as { preview_id: string }).preview_id).toBe(id);
      expect(s.stderr()).toMatch(new RegExp(`preview ${id}: the same edit is being previewed; joining it`));
      // A cut that is not (yet) a clip: a clear answer.
      await expect(s.client.readResource({ uri: `cutroom://previews/${id}/cuts/9.mp4` })).rejects.toThrow(
        /not rendered yet|no such clip/,
      );
      service.reset();
      const done = (await untilDone(s, again)).structuredContent as Preview & {
        status: string;
        cuts: { loudness?: { level_db?: number } }[];
      };
      expect(done).toMatchObject({ preview_id: id, status: 'done' });
      for (const [cut, colour, seconds] of clips) {
        const file = join(dir, `clip-${cut}.mp4`);
        const m = probe(file);
        expect(m).toMatchObject({ width: 640, height: 360 });
        expect(Math.abs(m.videoFrames - seconds * 25)).toBeLessThanOrEqual(1);
        expect(colourName(colourAt(file, 0.1))).toBe(colour);
      }
      // The clip's sound is its cut's as the preview plays it, but for the levelling the join gives it.
      const heard = rmsDb(join(dir, 'clip-0.mp4'), 0.2, 1.8);
      expect(heard).toBeGreaterThan(-40);
      expect(
        Math.abs(heard + (done.cuts[0]!.loudness?.level_db ?? 0) - rmsDb(done.path, 0.2, 1.8)),
      ).toBeLessThanOrEqual(1);
    } finally {
      service.reset();
      await s.close();
    }
  }, 180_000);

  it('a caller that cancels does not stop a preview another caller joined', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const s = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_LOG_LEVEL: 'debug',
    });
    try {
      await preview(s.client, other());
      // The voiceover held until the leaving caller is gone: the preview is still being made when the other joins.
      const voice = service.gate();
      service.fail(
        { trickle: voice },
        { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
      );
      const ac = new AbortController();
      const leaving = s.client.callTool(
        { name: 'preview_edit', arguments: timeline() },
        { signal: ac.signal, onprogress: () => {}, timeout: 120_000 },
      );
      await expect
        .poll(
          () =>
            /preview \S+: rendering|ready to play|the first alone/.test(s.stderr()) ||
            s.stderr().includes('checked the edit in'),
          { timeout: 20_000 },
        )
        .toBe(true);
      const staying = s.client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 });
      await expect
        .poll(() => /the same edit is being previewed; joining it/.test(s.stderr()), { timeout: 20_000 })
        .toBe(true);
      ac.abort();
      await expect(leaving).rejects.toThrow();
      voice.open();
      const kept = await staying;
      expect(kept.isError).toBeFalsy();
      expect(kept.structuredContent).toMatchObject({ status: 'done' });
      expect(existsSync((kept.structuredContent as { path: string }).path)).toBe(true);
    } finally {
      service.reset();
      await s.close();
    }
  }, 180_000);
});
