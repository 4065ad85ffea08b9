// A source of solid-colour shots with boundaries on its frames (made by ffmpeg at test time), and readers of what a
// render made of it shows: the colour of every output frame, and the steps in its sound at edit points.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

function ffmpeg(args: string[]): Buffer {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}

export const SHOT_FPS = 25;
export const SAMPLE_RATE = 48_000;
/**
 * Each shot's length in source frames, and its colour. Even shots carry a 440 Hz tone at half scale; odd ones are
 * silent.
 */
export const SHOTS: { frames: number; colour: string; rgb: [number, number, number] }[] = [
  { frames: 26, colour: 'red', rgb: [255, 0, 0] },
  { frames: 18, colour: 'green', rgb: [0, 255, 0] },
  { frames: 34, colour: 'blue', rgb: [0, 0, 255] },
  { frames: 22, colour: 'yellow', rgb: [255, 255, 0] },
  { frames: 30, colour: 'magenta', rgb: [255, 0, 255] },
  { frames: 16, colour: 'cyan', rgb: [0, 255, 255] },
  { frames: 28, colour: 'white', rgb: [255, 255, 255] },
  { frames: 24, colour: 'black', rgb: [0, 0, 0] },
];
const hex = (rgb: number[]) => `0x${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;

/** Shot i's span in the source, seconds: [start, end), on its frame boundaries. */
export function shotSpan(i: number): { start: number; end: number } {
  const before = SHOTS.slice(0, i).reduce((s, x) => s + x.frames, 0);
  return { start: before / SHOT_FPS, end: (before + SHOTS[i]!.frames) / SHOT_FPS };
}

/** shots.mov in `dir`: 25 fps, 320x180, the shots in order; PCM sound (exact per sample). */
export function makeShotMedia(dir: string): string {
  const file = join(dir, 'shots.mov');
  const inputs = SHOTS.flatMap((s) => [
    '-f',
    'lavfi',
    '-i',
    `color=c=${hex(s.rgb)}:s=320x180:r=${SHOT_FPS}:d=${s.frames / SHOT_FPS}`,
  ]);
  const tone = SHOTS.flatMap((_, i) =>
    i % 2 === 0 ? [`between(t,${shotSpan(i).start},${shotSpan(i).end}-1/${SAMPLE_RATE})`] : [],
  ).join('+');
  const total = shotSpan(SHOTS.length - 1).end;
  const concat = `${SHOTS.map((_, i) => `[${i}:v]`).join('')}concat=n=${SHOTS.length}:v=1:a=0,format=yuv420p[v]`;
  ffmpeg([
    ...inputs,
    '-f',
    'lavfi',
    '-i',
    `aevalsrc='0.5*sin(2*PI*440*t)*(${tone})':s=${SAMPLE_RATE}:d=${total}:c=stereo`,
    '-filter_complex',
    concat,
    '-map',
    '[v]',
    '-map',
    `${SHOTS.length}:a`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '12',
    '-c:a',
    'pcm_s16le',
    file,
  ]);
  return file;
}

/** The nearest shot colour of every frame of a video, in presentation order (no frame dropped or repeated). */
export function frameColours(file: string): string[] {
  const px = ffmpeg([
    '-i',
    file,
    '-an',
    '-fps_mode',
    'passthrough',
    '-vf',
    'crop=iw/2:ih/2,scale=1:1:flags=area',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-',
  ]);
  const out: string[] = [];
  for (let i = 0; i + 3 <= px.length; i += 3) {
    const [r, g, b] = [px[i]!, px[i + 1]!, px[i + 2]!];
    let best = SHOTS[0]!;
    let bestD = Infinity;
    for (const s of SHOTS) {
      const d = (s.rgb[0] - r) ** 2 + (s.rgb[1] - g) ** 2 + (s.rgb[2] - b) ** 2;
      if (d < bestD) [best, bestD] = [s, d];
    }
    out.push(best.colour);
  }
  return out;
}

/** The left channel of a file's sound at 48 kHz. */
export function leftChannel(file: string): Float32Array {
  const b = ffmpeg([
    '-i',
    file,
    '-vn',
    '-af',
    'pan=mono|c0=c0',
    '-ar',
    String(SAMPLE_RATE),
    '-c:a',
    'pcm_f32le',
    '-f',
    'f32le',
    '-',
  ]);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

/**
 * The largest sample-to-sample step from `beforeSec` before each edit to `afterSec` after it, and the largest
 * anywhere else. (A cut's sound may end up to a frame before its last frame does: where the frames outrun its range.)
 */
export function stepsAtEdits(
  s: Float32Array,
  edits: number[],
  beforeSec: number,
  afterSec: number,
): { atEdits: number[]; elsewhere: number } {
  const near = new Uint8Array(s.length);
  const atEdits = edits.map((t) => {
    let m = 0;
    for (
      let i = Math.max(1, Math.round((t - beforeSec) * SAMPLE_RATE));
      i < Math.min(s.length, Math.round((t + afterSec) * SAMPLE_RATE));
      i++
    ) {
      near[i] = 1;
      m = Math.max(m, Math.abs(s[i]! - s[i - 1]!));
    }
    return m;
  });
  let elsewhere = 0;
  for (let i = 1; i < s.length; i++) if (!near[i]) elsewhere = Math.max(elsewhere, Math.abs(s[i]! - s[i - 1]!));
  return { atEdits, elsewhere };
}

/** The largest absolute sample over [from, to) seconds. */
export function peakBetween(s: Float32Array, from: number, to: number): number {
  let m = 0;
  for (let i = Math.max(0, Math.round(from * SAMPLE_RATE)); i < Math.min(s.length, Math.round(to * SAMPLE_RATE)); i++)
    m = Math.max(m, Math.abs(s[i]!));
  return m;
}
