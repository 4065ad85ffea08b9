// Awkward sources for the render graph's exactness (made by ffmpeg at test time), and readers that measure the
// output sample by sample and pixel by pixel: sound edges, per-channel levels, frame brightness, the lit box.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

function ffmpeg(args: string[]): Buffer {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}

const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
/** 1 kHz at half scale (-6 dBFS peak, -9 dBFS RMS), exact per sample. */
const TONE = '0.5*sin(2*PI*1000*t)';

export type ExactName =
  'anamorphic' | 'anamorphic_wide' | 'flash' | 'flash_mkv' | 'late' | 'surround' | 'mono' | 'stereo' | 'tone' | 'loud';

/**
 * The sources, as .mov with PCM sound (exact on every sample), in `dir`:
 * - anamorphic: 720x576 stored, SAR 16:15 (display 768x576, 4:3): dark grey with a white box that is a square on
 *   display (270x288 stored = 288x288 shown); anamorphic_wide: the same at SAR 64:45 (display 1024x576, 16:9).
 * - flash: 10 fps black with white frames 11 and 20 (1.1 s, 2.0 s) and a 1 kHz beep [1.1, 1.2) and [2.0, 2.1).
 * - flash_mkv: Matroska (times in whole milliseconds) at 29.97, white frame 31 (1.034367 s, stored as 1.034 s) and a
 *   beep from 1.034 s.
 * - late: 25 fps, its sound (1 kHz) starts 0.5 s after its picture.
 * - surround: 5.1(side), the same tone at -6 dBFS on every channel; mono: one channel of it; stereo: two.
 * - tone: 25 fps, a steady tone; loud: a full-scale tone on two channels.
 */
export function makeExactMedia(dir: string): Record<ExactName, string> {
  const out = (n: ExactName) => join(dir, n === 'flash_mkv' ? `${n}.mkv` : `${n}.mov`);
  const box = (sar: string) =>
    `color=c=0x404040:s=720x576:r=25:d=2,drawbox=x=225:y=144:w=270:h=288:c=white:t=fill,setsar=${sar}`;
  ffmpeg(['-f', 'lavfi', '-i', box('16/15'), ...X264, out('anamorphic')]);
  ffmpeg(['-f', 'lavfi', '-i', box('64/45'), ...X264, out('anamorphic_wide')]);
  const beeps = `aevalsrc='if(between(t,1.1,1.2-1/48000)+between(t,2.0,2.1-1/48000),${TONE},0)':s=48000:d=3:c=stereo`;
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    "color=c=black:s=320x240:r=10:d=3,drawbox=c=white:t=fill:enable='eq(n,11)+eq(n,20)'",
    '-f',
    'lavfi',
    '-i',
    beeps,
    ...X264,
    '-g',
    '10',
    '-c:a',
    'pcm_s16le',
    out('flash'),
  ]);
  const beepMkv = `aevalsrc='if(between(t,1.034,1.134-1/48000),${TONE},0)':s=48000:d=3:c=stereo`;
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    "color=c=black:s=320x240:r=30000/1001:d=3,drawbox=c=white:t=fill:enable='eq(n,31)'",
    '-f',
    'lavfi',
    '-i',
    beepMkv,
    ...X264,
    '-c:a',
    'pcm_s16le',
    out('flash_mkv'),
  ]);
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'color=c=red:s=320x240:r=25:d=3',
    '-itsoffset',
    '0.5',
    '-f',
    'lavfi',
    '-i',
    `aevalsrc='${TONE}':s=48000:d=2.5:c=stereo`,
    ...X264,
    '-c:a',
    'pcm_s16le',
    out('late'),
  ]);
  const grey = ['-f', 'lavfi', '-i', 'color=c=gray:s=320x240:r=25:d=3'];
  ffmpeg([
    ...grey,
    '-f',
    'lavfi',
    '-i',
    `aevalsrc='${TONE}|${TONE}|${TONE}|${TONE}|${TONE}|${TONE}':s=48000:d=3:c=5.1(side)`,
    ...X264,
    '-c:a',
    'pcm_s16le',
    out('surround'),
  ]);
  ffmpeg([
    ...grey,
    '-f',
    'lavfi',
    '-i',
    `aevalsrc='${TONE}':s=48000:d=3:c=mono`,
    ...X264,
    '-c:a',
    'pcm_s16le',
    out('mono'),
  ]);
  ffmpeg([
    ...grey,
    '-f',
    'lavfi',
    '-i',
    `aevalsrc='${TONE}':s=48000:d=3:c=stereo`,
    ...X264,
    '-c:a',
    'pcm_s16le',
    out('stereo'),
  ]);
  ffmpeg([
    ...grey,
    '-f',
    'lavfi',
    '-i',
    `aevalsrc='${TONE}':s=48000:d=3:c=stereo`,
    ...X264,
    '-c:a',
    'pcm_s16le',
    out('tone'),
  ]);
  ffmpeg([
    ...grey,
    '-f',
    'lavfi',
    '-i',
    "aevalsrc='sin(2*PI*1000*t)':s=48000:d=3:c=stereo",
    ...X264,
    '-c:a',
    'pcm_s16le',
    out('loud'),
  ]);
  return Object.fromEntries(
    (
      [
        'anamorphic',
        'anamorphic_wide',
        'flash',
        'flash_mkv',
        'late',
        'surround',
        'mono',
        'stereo',
        'tone',
        'loud',
      ] as const
    ).map((n) => [n, out(n)]),
  ) as Record<ExactName, string>;
}

/** The sources' picture clocks as cutroom probes them: frame rate, first frame, time base where it rounds. */
export const EXACT_CLOCKS: Record<
  ExactName,
  { frameRate: { num: number; den: number }; videoStartSec?: number; videoTimeBase?: { num: number; den: number } }
> = {
  anamorphic: { frameRate: { num: 25, den: 1 } },
  anamorphic_wide: { frameRate: { num: 25, den: 1 } },
  flash: { frameRate: { num: 10, den: 1 } },
  flash_mkv: { frameRate: { num: 30000, den: 1001 }, videoTimeBase: { num: 1, den: 1000 } },
  late: { frameRate: { num: 25, den: 1 } },
  surround: { frameRate: { num: 25, den: 1 } },
  mono: { frameRate: { num: 25, den: 1 } },
  stereo: { frameRate: { num: 25, den: 1 } },
  tone: { frameRate: { num: 25, den: 1 } },
  loud: { frameRate: { num: 25, den: 1 } },
};

export const RATE = 48_000;

/** The whole sound of a file, decoded to 48 kHz stereo float, interleaved. */
export function audioSamples(file: string): Float32Array {
  const b = ffmpeg(['-i', file, '-vn', '-ac', '2', '-ar', String(RATE), '-c:a', 'pcm_f32le', '-f', 'f32le', '-']);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

/**
 * Where the sound starts and stops: onsets are the first sample above `threshold` after at least 20 ms below it
 * (or at the very start), offsets the sample after the last one above it before at least 20 ms below. Seconds.
 */
export function soundEdges(s: Float32Array, threshold = 0.25): { onsets: number[]; offsets: number[] } {
  const quietNeeded = RATE / 50;
  const onsets: number[] = [];
  const offsets: number[] = [];
  let quiet = quietNeeded;
  let lastLoud = -1;
  for (let i = 0; i < s.length / 2; i++) {
    const v = Math.max(Math.abs(s[2 * i]!), Math.abs(s[2 * i + 1]!));
    if (v > threshold) {
      if (quiet >= quietNeeded) onsets.push(i / RATE);
      quiet = 0;
      lastLoud = i;
    } else if (++quiet === quietNeeded && lastLoud >= 0) {
      offsets.push((lastLoud + 1) / RATE);
    }
  }
  return { onsets, offsets };
}

/** Peak and RMS (dBFS) of each of the two channels over [from, to) seconds. */
export function channelLevels(s: Float32Array, from: number, to: number): { peakDb: number; rmsDb: number }[] {
  const a = Math.round(from * RATE);
  const b = Math.round(to * RATE);
  return [0, 1].map((c) => {
    let peak = 0;
    let sum = 0;
    for (let i = a; i < b; i++) {
      const v = s[2 * i + c]!;
      peak = Math.max(peak, Math.abs(v));
      sum += v * v;
    }
    return { peakDb: 20 * Math.log10(peak), rmsDb: 10 * Math.log10(sum / (b - a)) };
  });
}

/** Mean brightness (0-255) of every frame, in order. */
export function frameBrightness(file: string): number[] {
  const b = ffmpeg(['-i', file, '-an', '-vf', 'scale=16:16', '-f', 'rawvideo', '-pix_fmt', 'gray', '-']);
  const out: number[] = [];
  for (let f = 0; f + 256 <= b.length; f += 256) out.push(b.subarray(f, f + 256).reduce((sum, v) => sum + v, 0) / 256);
  return out;
}

/** The box holding every pixel brighter than `threshold` in the frame shown at t, in output pixels. */
export function litBox(file: string, t: number, threshold: number): { width: number; height: number } {
  const size = spawnSync(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', file],
    { encoding: 'utf8' },
  )
    .stdout.trim()
    .split(',')
    .map(Number);
  const [w, h] = size as [number, number];
  const px = ffmpeg(['-ss', t.toFixed(3), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'gray', '-']);
  let x0 = w;
  let x1 = -1;
  let y0 = h;
  let y1 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (px[y * w + x]! > threshold) {
        x0 = Math.min(x0, x);
        x1 = Math.max(x1, x);
        y0 = Math.min(y0, y);
        y1 = Math.max(y1, y);
      }
    }
  }
  return { width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** Presentation times of the video's frames, in order, and the stream's time base. */
export function frameTimes(file: string): { times: number[]; timeBase: string } {
  const r = spawnSync(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=time_base:packet=pts_time', '-of', 'json', file],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const j = JSON.parse(r.stdout) as { packets: { pts_time: string }[]; streams: { time_base: string }[] };
  return { times: j.packets.map((p) => Number(p.pts_time)).sort((a, b) => a - b), timeBase: j.streams[0]!.time_base };
}
