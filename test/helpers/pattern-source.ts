// A moving test pattern with a tone: unlike the solid colours, it does not compress to nothing, and being tiny in
// pixels, minutes of it render in seconds.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { MEDIA_DIR } from '../fixtures/media.mjs';

export function patternSource(seconds: number): string {
  mkdirSync(MEDIA_DIR, { recursive: true });
  const out = join(MEDIA_DIR, `pattern-64x36-${seconds}s.mp4`);
  if (existsSync(out)) return out;
  const tmp = join(MEDIA_DIR, `.pattern.${process.pid}.${Date.now()}.mp4`);
  const r = spawnSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc=s=64x36:r=25:d=${seconds}`,
      '-f',
      'lavfi',
      '-i',
      `sine=f=440:r=48000:d=${seconds}`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '50',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '64k',
      '-movflags',
      '+faststart',
      tmp,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
  renameSync(tmp, out);
  return out;
}
