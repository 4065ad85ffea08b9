// Splitting an MJPEG stream as ffmpeg writes it into its pictures.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { splitJpegs } from '../../src/media/jpeg.js';

function mjpeg(frames: number): Buffer {
  // Noise makes entropy-coded data full of 0xFF bytes (stuffed), which must not be read as markers.
  const r = spawnSync(
    'ffmpeg',
    [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=s=64x36:r=5,noise=alls=60:allf=t`,
      '-frames:v',
      String(frames),
      '-c:v',
      'mjpeg',
      '-q:v',
      '2',
      '-f',
      'mjpeg',
      '-',
    ],
    { maxBuffer: 1 << 24 },
  );
  if (r.status !== 0) throw new Error(String(r.stderr));
  return r.stdout;
}

describe('splitJpegs', () => {
  it('finds every picture of a stream, each a whole JPEG that decodes on its own', () => {
    const stream = mjpeg(5);
    const pictures = splitJpegs(stream);
    expect(pictures).toHaveLength(5);
    expect(Buffer.concat(pictures).equals(stream)).toBe(true);
    for (const p of pictures) {
      expect([p[0], p[1], p.at(-2), p.at(-1)]).toEqual([0xff, 0xd8, 0xff, 0xd9]);
      const r = spawnSync('ffmpeg', ['-v', 'error', '-f', 'mjpeg', '-i', '-', '-f', 'null', '-'], { input: p });
      expect(r.status).toBe(0);
    }
  });

  it('stops at a picture cut short or at bytes that are not a picture', () => {
    const stream = mjpeg(3);
    const [a, b] = splitJpegs(stream);
    expect(splitJpegs(Buffer.concat([a!, b!.subarray(0, b!.length - 10)]))).toEqual([a]);
    expect(splitJpegs(Buffer.concat([a!, Buffer.from('not a jpeg')]))).toEqual([a]);
    expect(splitJpegs(Buffer.alloc(0))).toEqual([]);
  });
});
