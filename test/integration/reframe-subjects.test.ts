// A vertical cut that keeps the people (issue 47, item 3), through the built server over stdio with scenes made here
// by ffmpeg (320x180, 25 fps, 10 s: 250 frames; a dark static texture behind "people", upright coloured bars that sway
// or walk): cut to 9:16 with focus "auto" and previewed, each person is found in every frame by colour and counted as
// kept when it is whole inside the frame.
// - Two people too far apart to fit together: one of them is kept whole in every frame (the frame sat on the empty
//   wall between them before).
// - Two people close enough to fit: both are kept whole in every frame.
// - A person who walks, slows and stops, with a detailed poster on the wall: the person stays framed after stopping
//   (the poster took the frame before).
// - Two people apart, one speaking (flite; gesturing only while the phrase sounds), the other swaying more all the
//   time: the one speaking is kept (the one moving most was followed before).
// - A still camera, 20 s: one person sways in place, the other walks in, stands stock-still for 7 s beside them and
//   walks off: while they stand, both are kept (the one standing, seen by motion only, was forgotten and cut before).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sayWithWordTimes } from '../helpers/flite-words.js';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { ffmpeg } from '../helpers/sound.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-reframe-subjects-'));
const allowed = join(root, 'allowed');
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};

const SECONDS = 10;
const STANDS_SECONDS = 20;
const PERSON = { w: 24, h: 80 };
const BACKGROUND = "geq=lum='40+20*sin(X/3)*sin(Y/5)':cb=128:cr=128";
/** A poster: fine, high-contrast detail at x 250-310, y 30-150 (gray: no person's colour). */
const POSTER =
  "geq=lum='if(between(X,250,310)*between(Y,30,150),128+110*sin(X*1.7)*sin(Y*1.3),40+20*sin(X/3)*sin(Y/5))':cb=128:cr=128";

/** A scene: the background and one bar per person, red then blue, each at x(t) (its left edge), y 50-130. */
function makeScene(file: string, background: string, xs: string[], sound?: string, seconds = SECONDS): void {
  const colours = ['0xE01010', '0x1010E0'];
  const inputs = xs.flatMap((_, i) => [
    '-f',
    'lavfi',
    '-i',
    `color=c=${colours[i]}:s=${PERSON.w}x${PERSON.h}:r=25:d=${seconds}`,
  ]);
  let chain = `[0:v]format=yuv444p,${background}[b0]`;
  xs.forEach((x, i) => {
    chain += `;[b${i}][${i + 1}:v]overlay=x='${x}':y=50:shortest=1[b${i + 1}]`;
  });
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `color=c=black:s=320x180:r=25:d=${seconds}`,
    ...inputs,
    '-filter_complex',
    `${chain};[b${xs.length}]format=yuv420p[v]`,
    ...(sound ? ['-i', sound, '-map', `${xs.length + 1}:a`, '-c:a', 'aac', '-shortest'] : []),
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

/**
 * Per frame of a file, per person colour: whether that person is whole inside the frame (most of its pixels there,
 * none touching an edge). Red: r high, g and b low; blue: b high, r and g low.
 */
function keptPeople(file: string): { frames: number; red: boolean[]; blue: boolean[] } {
  const p = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', file], {
    encoding: 'utf8',
  });
  const [width, height] = p.stdout.trim().split(',').map(Number) as [number, number];
  const raw = ffmpeg(['-i', file, '-map', '0:v:0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  const scale = height / 180;
  const area = PERSON.w * PERSON.h * scale * scale;
  const red: boolean[] = [];
  const blue: boolean[] = [];
  const size = width * height * 3;
  for (let at = 0; at + size <= raw.length; at += size) {
    const box = [
      { n: 0, l: width, r: -1 },
      { n: 0, l: width, r: -1 },
    ];
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const i = at + (y * width + x) * 3;
        const [r, g, b] = [raw[i]!, raw[i + 1]!, raw[i + 2]!];
        const k = r > 150 && g < 90 && b < 90 ? 0 : b > 150 && r < 90 && g < 90 ? 1 : -1;
        if (k < 0) continue;
        const c = box[k]!;
        c.n++;
        c.l = Math.min(c.l, x);
        c.r = Math.max(c.r, x);
      }
    const whole = (c: { n: number; l: number; r: number }) => c.n >= 0.8 * area && c.l > 0 && c.r < width - 1;
    red.push(whole(box[0]!));
    blue.push(whole(box[1]!));
  }
  return { frames: red.length, red, blue };
}

let server: Spawned;
let projectId: string;
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 600_000 });
const assets: Record<string, string> = {};

/** The preview of a scene cut to 9:16, focus "auto" or a fixed one, 270x480. */
async function vertical(asset: string, focus: unknown = 'auto', seconds = SECONDS): Promise<string> {
  const p = structured<{ path: string; resolution: string }>(
    await call('preview_edit', {
      project_id: projectId,
      resolution: 'vertical',
      fps: 25,
      width: 270,
      clips: [{ asset_id: assets[asset], start: 0, end: seconds, focus }],
    }),
  );
  expect(p.resolution).toBe('270x480');
  return p.path;
}

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  // Two people far apart, both swaying in place (walking on the spot): 200 px apart, the frame 101 px wide.
  makeScene(join(allowed, 'apart.mp4'), BACKGROUND, ['30+8*sin(2*PI*t*0.7)', '250+6*sin(2*PI*t*0.9+1)']);
  // Two people 50 px apart on one side of the picture: with their sway they span 84 px, and fit in the 101 px frame.
  makeScene(join(allowed, 'together.mp4'), BACKGROUND, ['196+5*sin(2*PI*t*0.7)', '246+5*sin(2*PI*t*0.9+1)']);
  // One person walks from x 20, slows and stops at x 150 after 4 s; a detailed poster hangs at the right.
  makeScene(join(allowed, 'stops.mp4'), POSTER, ['20+130*(1-pow(1-min(t,4)/4,2))']);
  // Two people far apart: the red one gestures only while it speaks (a phrase at 0.5 s, 4 s and 7.5 s), the blue one
  // sways more, all the time, and says nothing.
  const phrase = join(allowed, 'phrase.wav');
  const said = sayWithWordTimes('We will open the harbor again next spring.', phrase, 'slt');
  const long = said.at(-1)!.end;
  const speech = join(allowed, 'speech.wav');
  ffmpeg([
    '-i',
    phrase,
    '-filter_complex',
    `[0:a]asplit=3[a][b][c];[a]adelay=500:all=1[a1];[b]adelay=4000:all=1[b1];[c]adelay=7500:all=1[c1];` +
      `[a1][b1][c1]amix=inputs=3:normalize=0,apad=whole_dur=${SECONDS}[out]`,
    '-map',
    '[out]',
    '-t',
    String(SECONDS),
    speech,
  ]);
  const speaking = [0.5, 4, 7.5].map((at) => `between(t,${at},${(at + long).toFixed(2)})`).join('+');
  makeScene(
    join(allowed, 'speaking.mp4'),
    BACKGROUND,
    [`30+4*sin(2*PI*t*1.3)*(${speaking})`, '250+14*sin(2*PI*t*1.1+1)'],
    speech,
  );
  // A still camera for 20 s: the red person sways in place at x 194-206; the blue one walks in from the right edge
  // (0-3 s), stands stock-still at x 250 (3-10 s: no motion at all, 7 s) and walks off to the right (10-13 s).
  makeScene(
    join(allowed, 'stands.mp4'),
    BACKGROUND,
    ['200+6*sin(2*PI*t*0.7)', 'if(lt(t,3),320-70*t/3,if(lt(t,10),250,250+70*(t-10)/3))'],
    undefined,
    STANDS_SECONDS,
  );
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'people', description: 'the vertical cut keeps the people' }),
  ).project.id;
  for (const name of ['apart', 'together', 'stops', 'speaking', 'stands'])
    assets[name] = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: join(allowed, `${name}.mp4`) }),
    ).asset.id;
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

const missing = (kept: boolean[]) => kept.flatMap((k, i) => (k ? [] : [i]));

describe('a vertical cut that keeps the people', () => {
  it('two people too far apart: one of them is whole in every frame, the same one throughout', async () => {
    const kept = keptPeople(await vertical('apart'));
    expect(kept.frames).toBe(SECONDS * 25);
    const neither = kept.red.flatMap((r, i) => (r || kept.blue[i] ? [] : [i]));
    expect(neither, 'frames where neither person is whole').toEqual([]);
    // One subject followed: the other is never whole in the frame at the same time, nor instead.
    const redFrames = kept.red.filter(Boolean).length;
    expect(Math.max(redFrames, kept.frames - redFrames), 'frames of the subject followed').toBe(kept.frames);
  });

  it('two people who fit together are both whole in every frame; a centred frame loses one', async () => {
    const kept = keptPeople(await vertical('together'));
    expect(kept.frames).toBe(SECONDS * 25);
    expect(missing(kept.red), 'frames without the red person whole').toEqual([]);
    expect(missing(kept.blue), 'frames without the blue person whole').toEqual([]);
    const centred = keptPeople(await vertical('together', { x: 0.5, y: 0.5 }));
    expect(missing(centred.red).length + missing(centred.blue).length).toBeGreaterThan(200);
  });

  it('a person who walks and stops stays framed; the detailed poster beside them never takes the frame', async () => {
    const kept = keptPeople(await vertical('stops'));
    expect(kept.frames).toBe(SECONDS * 25);
    expect(missing(kept.red), 'frames without the person whole').toEqual([]);
  });

  it('two people too far apart, one speaking: the one speaking is whole in every frame, not the one moving most', async () => {
    const kept = keptPeople(await vertical('speaking'));
    expect(kept.frames).toBe(SECONDS * 25);
    expect(missing(kept.red), 'frames without the speaker whole').toEqual([]);
  });

  it('a still camera, one person standing stock-still beside another: both are whole while they stand', async () => {
    const kept = keptPeople(await vertical('stands', 'auto', STANDS_SECONDS));
    expect(kept.frames).toBe(STANDS_SECONDS * 25);
    // Frames 75-249 (3-10 s): the blue person stands at x 250-274, the red one sways within x 194-230; together they
    // span at most 80 px of the frame's 101.
    const standing = Array.from({ length: 175 }, (_, k) => 75 + k);
    expect(
      standing.filter((i) => !kept.red[i]),
      'frames without the one swaying whole',
    ).toEqual([]);
    expect(
      standing.filter((i) => !kept.blue[i]),
      'frames without the one standing whole',
    ).toEqual([]);
  });
});
