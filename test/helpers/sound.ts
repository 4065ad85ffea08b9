// ffmpeg run from a test (media made at test time, outputs read back), and a file's sound as samples.
import { spawnSync } from 'node:child_process';

/** Runs ffmpeg quietly, overwriting; its stdout, or an error with its stderr. */
export function ffmpeg(args: string[]): Buffer {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
  return r.stdout;
}

/** A file's sound, its first channel (a downmix would add 3 dB to a stereo file's), as float at `rate`. */
export function soundOf(file: string, rate = 48_000): Float32Array {
  const b = ffmpeg([
    '-i',
    file,
    '-map',
    '0:a:0',
    '-af',
    'pan=mono|c0=c0',
    '-ar',
    String(rate),
    '-f',
    'f32le',
    'pipe:1',
  ]);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~3)));
}
