// Flags and sheets that are right (issue 47, item 5), through the built server over stdio. A talking head made here
// (a textured face that sways 2 px and moves its mouth, with flite saying a known text) is cut three times beside a
// held picture: the preview flags "frozen picture" on the held cut only, as ffmpeg's freezedetect finds on the same
// frames (each cut's source range at the preview's size, every frame). The contact sheet draws its labels in a strip under each frame, so every frame's top left
// corner (green in the source) shows, and under each cut that has words a second line says them.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sayWithWordTimes } from '../helpers/flite-words.js';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { ffmpeg } from '../helpers/sound.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-preview-flags-'));
const allowed = join(root, 'allowed');
const TEXT = 'The keeper spoke about the storm. It came in from the sea at night. Nobody slept until morning came.';
// Which cuts hold words: the head's first two (flite's speech ends near 6.0 s, so the last holds none), not the held one.
const SAYS = [true, false, true, false];
const W = 1280;
const H = 720;

type Cut = { index: number; timeline_start: string; timeline_end: string; flags: string[] };
type Preview = { path: string; sheet_path: string; cuts: Cut[]; resolution: string };
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};
const secs = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);

/**
 * A talking head, `seconds` long at 25 fps: a face with fine texture swaying 2 px at 0.5 Hz, its mouth opening and
 * closing twice a second, on a flat background whose top left corner is a green square; with `sound` as its audio.
 */
function makeHead(file: string, seconds: number, sound: string): void {
  const sway = '2*sin(2*PI*T*0.5)';
  const face = `lt(((X-640-${sway})/180)^2+((Y-360)/240)^2,1)`;
  const mouth = `lt(((X-640-${sway})/50)^2+((Y-470)/(4+12*abs(sin(2*PI*T*2))))^2,1)`;
  const corner = 'lt(X,120)*lt(Y,80)';
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `color=c=gray:s=${W}x${H}:r=25:d=${seconds}`,
    '-i',
    sound,
    '-filter_complex',
    `[0:v]format=yuv444p,geq=lum='if(${corner},120,if(${face},if(${mouth},40,150+12*sin((X-${sway})*1.3)*sin(Y*1.1)),90))':cb='if(${corner},40,128)':cr='if(${corner},40,128)',format=yuv420p[v]`,
    '-map',
    '[v]',
    '-map',
    '1:a',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '18',
    '-c:a',
    'aac',
    '-af',
    'apad',
    '-t',
    String(seconds),
    file,
  ]);
}

/** A picture held: one frame of the head, repeated, `seconds` long. */
function makeHeld(file: string, head: string, seconds: number): void {
  const still = join(allowed, 'still.png');
  ffmpeg(['-ss', '1', '-i', head, '-frames:v', '1', still]);
  ffmpeg([
    '-loop',
    '1',
    '-framerate',
    '25',
    '-i',
    still,
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    file,
  ]);
}

/**
 * The seconds ffmpeg's freezedetect (-60 dB over 0.5 s) finds frozen in [from, from + seconds) of a file, on every
 * frame as the preview draws it (scaled to its size, before its encoder: at CRF 30 the encoder itself may drop motion
 * this small).
 */
function frozenSeconds(file: string, from: number, seconds: number, size: string): number {
  const r = spawnSync(
    'ffmpeg',
    [
      '-v',
      'info',
      '-ss',
      String(from),
      '-t',
      String(seconds),
      '-i',
      file,
      '-map',
      '0:v:0',
      '-vf',
      `scale=${size.replace('x', ':')},freezedetect=n=-60dB:d=0.5`,
      '-f',
      'null',
      '-',
    ],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const out: { from: number; to: number }[] = [];
  let open: number | undefined;
  for (const line of r.stderr.split('\n')) {
    const s = /freeze_start: ([\d.]+)/.exec(line);
    const e = /freeze_end: ([\d.]+)/.exec(line);
    if (s) open = Number(s[1]);
    if (e && open !== undefined) {
      out.push({ from: open, to: Number(e[1]) });
      open = undefined;
    }
  }
  if (open !== undefined) out.push({ from: open, to: seconds });
  return out.reduce((sum, f) => sum + f.to - f.from, 0);
}

/** An image file's pixels, RGB. */
function pixels(file: string): {
  width: number;
  height: number;
  at: (x: number, y: number) => [number, number, number];
} {
  const p = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', file], {
    encoding: 'utf8',
  });
  const [width, height] = p.stdout.trim().split(',').map(Number) as [number, number];
  const raw = ffmpeg(['-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  return {
    width,
    height,
    at: (x, y) => {
      const i = (y * width + x) * 3;
      return [raw[i]!, raw[i + 1]!, raw[i + 2]!];
    },
  };
}

let server: Spawned;
let projectId: string;
let head: string;
let held: string;
const headFile = join(allowed, 'head.mp4');
const heldFile = join(allowed, 'held.mp4');
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 600_000 });

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const speech = join(allowed, 'speech.wav');
  sayWithWordTimes(TEXT, speech, 'slt');
  makeHead(headFile, 9, speech);
  makeHeld(heldFile, headFile, 3);
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'flags', description: 'flags' }),
  ).project.id;
  head = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: headFile }))
    .asset.id;
  held = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: heldFile }))
    .asset.id;
  structured(await call('transcribe_asset', { project_id: projectId, asset_id: head, text: TEXT }));
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('flags and sheets that are right', () => {
  it('flags a frozen picture only where the picture holds, as freezedetect finds on the same frames; the sheet labels sit under the frames and say the words', async () => {
    const p = structured<Preview>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '1280x720',
        fps: 25,
        clips: [
          { asset_id: head, start: 0, end: 3 },
          { asset_id: held, start: 0, end: 2.5 },
          { asset_id: head, start: 3, end: 6 },
          { asset_id: head, start: 6, end: 9 },
        ],
      }),
    );
    const ranges = [
      { file: headFile, from: 0 },
      { file: heldFile, from: 0 },
      { file: headFile, from: 3 },
      { file: headFile, from: 6 },
    ];
    for (const cut of p.cuts) {
      const from = secs(cut.timeline_start);
      const to = secs(cut.timeline_end);
      const source = ranges[cut.index]!;
      const frozenFor = frozenSeconds(source.file, source.from, to - from, p.resolution);
      const flagged = cut.flags.some((f) => f.startsWith('frozen picture'));
      const isHeld = cut.index === 1;
      expect(flagged, `cut ${cut.index + 1}: ${cut.flags.join('; ') || 'no flag'}`).toBe(isHeld);
      // freezedetect on the same frames agrees: the held cut holds, the head never does.
      expect(frozenFor >= Math.min(1, (to - from) * 0.8), `cut ${cut.index + 1}: freezedetect ${frozenFor} s`).toBe(
        isHeld,
      );
    }

    // The sheet: three cells a cut, one cut a row. Every cell's top left corner is the picture's (green), the labels
    // lie under it; the cuts of the head, which has words, have a second line in the words' colour.
    const sheet = pixels(p.sheet_path);
    const cellW = (sheet.width - 4 * 4) / 3;
    const cellH = (sheet.height - 4 * (p.cuts.length + 1)) / p.cuts.length;
    const imageH = Math.round((cellW * H) / W);
    expect(cellH - imageH, 'a strip for the labels under each frame').toBeGreaterThan(20);
    for (let row = 0; row < p.cuts.length; row++)
      for (let col = 0; col < 3; col++) {
        const x0 = 4 + col * (cellW + 4);
        const y0 = 4 + row * (cellH + 4);
        let green = 0;
        for (let y = 2; y < 10; y++)
          for (let x = 2; x < 14; x++) {
            const [r, g, b] = sheet.at(Math.round(x0 + x), Math.round(y0 + y));
            if (g > 100 && g > r + 40 && g > b + 40) green++;
          }
        expect(green, `cut ${row + 1}, cell ${col + 1}: its top left corner is the picture's`).toBeGreaterThan(80);
        // The words' colour (a warm yellow) in the strip's second line.
        let said = 0;
        for (let y = Math.round(y0 + imageH + (cellH - imageH) / 2); y < y0 + cellH - 1; y++)
          for (let x = Math.round(x0 + 2); x < x0 + cellW - 2; x++) {
            const [r, g, b] = sheet.at(x, y);
            if (r > 180 && g > 150 && b < 150) said++;
          }
        if (col === 0) expect(said > 5, `cut ${row + 1}: words under its first frame`).toBe(SAYS[row]);
      }
    // What the strips say: each head cut's first words (the text files the labels were drawn from).
    const dir = dirname(p.path);
    const drawn = readdirSync(dir)
      .filter((f) => /^words\d+\.txt$/.test(f))
      .map((f) => ({ cell: Number(/\d+/.exec(f)![0]), text: readFileSync(join(dir, f), 'utf8') }));
    expect(drawn.find((d) => d.cell === 0)?.text).toMatch(/^The keeper/);
    for (let row = 0; row < p.cuts.length; row++)
      expect(
        drawn.some((d) => Math.floor(d.cell / 3) === row),
        `cut ${row + 1}: words drawn`,
      ).toBe(SAYS[row]);
  });
});
