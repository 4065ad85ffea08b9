// The ffmpeg work the benches share to make their media: a call that throws with ffmpeg's own words, a file made once
// and kept between runs (through a part file, so that an interrupted run leaves none half made), the moving test
// source, digital silence, sound files joined end to end, and a file's sound as samples.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, extname } from 'node:path';

/** Runs ffmpeg (errors only, overwriting its output); its stdout. Throws with its stderr where it fails. */
export function ffmpeg(args) {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}

/** `out`, made by ffmpeg from `args` (its inputs and settings) where it is not there yet. */
export function makeOnce(out, args) {
  if (existsSync(out)) return out;
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.part${extname(out)}`;
  ffmpeg([...args, tmp]);
  renameSync(tmp, out);
  return out;
}

/** A moving test picture (testsrc2, 30 fps) with a steady tone, in H.264 and AAC as a camera file: made once. */
export const testSource = (out, size, seconds, freq) =>
  makeOnce(out, [
    ...['-f', 'lavfi', '-i', `testsrc2=s=${size}:r=30:d=${seconds}`],
    ...['-f', 'lavfi', '-i', `sine=f=${freq}:r=48000:d=${seconds}`],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-pix_fmt', 'yuv420p'],
    ...['-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart'],
  ]);

/** `seconds` of digital silence, mono 16-bit at `rate`, into `file`. */
export function silence(file, seconds, rate = 16000) {
  ffmpeg(['-f', 'lavfi', '-i', `anullsrc=r=${rate}:cl=mono`, '-t', String(seconds), '-c:a', 'pcm_s16le', file]);
  return file;
}

/** The sound files end to end into `out` (16-bit PCM; `args`, such as a rate, before it), by a list beside it for the while. */
export function concatSound(files, out, args = []) {
  const list = `${out}.list.txt`;
  writeFileSync(list, `${files.map((f) => `file '${f}'`).join('\n')}\n`);
  try {
    ffmpeg(['-f', 'concat', '-safe', '0', '-i', list, ...args, '-c:a', 'pcm_s16le', out]);
  } finally {
    rmSync(list, { force: true });
  }
  return out;
}

/** A file's sound as mono 16-bit samples at `rate`. */
export function pcm16(file, rate = 16000) {
  const b = ffmpeg(['-i', file, '-ac', '1', '-ar', String(rate), '-f', 's16le', '-']);
  return new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1)));
}
