// The two sides of every crossfaded join are read from their sources in batches, one ffmpeg process for many windows
// (media/crossfade-shape.ts soundsAt): each window's samples are the ones a process of its own reads (monoSoundArgs,
// as before batching), a stereo source downmixed alike, and a batch that fails still reads its readable windows.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { soundsAt, type SoundWindow } from '../../src/media/crossfade-shape.js';
import { monoSoundArgs } from '../../src/media/input.js';
import { SAMPLE_RATE } from '../../src/media/sound-plan.js';
import { fileInput } from '../helpers/plan-fixtures.js';
import { ffmpeg } from '../helpers/sound.js';

const dir = mkdtempSync(join(tmpdir(), 'cutroom-crossfade-read-'));
const stereo = join(dir, 'stereo.mp4');
const mono = join(dir, 'mono.mov');
beforeAll(() => {
  // AAC in MP4 (a camera's file: seeks land between packets) with different sound left and right; PCM mono too.
  ffmpeg([
    ...['-f', 'lavfi', '-i', 'testsrc2=s=160x90:r=25:d=8'],
    ...['-f', 'lavfi', '-i', 'anoisesrc=c=pink:a=0.2:r=44100:d=8:seed=3'],
    ...['-f', 'lavfi', '-i', 'sine=f=330:r=44100:d=8'],
    ...['-filter_complex', '[1:a][2:a]join=inputs=2:channel_layout=stereo[a]', '-map', '0:v', '-map', '[a]'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-b:a', '192k', '-shortest', stereo],
  ]);
  ffmpeg([
    ...['-f', 'lavfi', '-i', 'testsrc2=s=160x90:r=25:d=8', '-f', 'lavfi', '-i', 'sine=f=500:r=48000:d=8'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'pcm_s16le', '-shortest', mono],
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A window read by a process of its own, as each was before batching. */
function alone(w: SoundWindow): Float32Array {
  const from = Math.max(0, Math.floor(w.at * 1000) / 1000);
  const skip = Math.round((w.at - from) * SAMPLE_RATE);
  const args = monoSoundArgs(w.spec.source, { from, seconds: (skip + w.n) / SAMPLE_RATE + 0.002 }, SAMPLE_RATE, {
    sample: 'f32le',
  });
  const r = spawnSync('ffmpeg', args, { maxBuffer: 1 << 26 });
  expect(r.status, String(r.stderr)).toBe(0);
  const all = new Float32Array(r.stdout.buffer.slice(r.stdout.byteOffset, r.stdout.byteOffset + r.stdout.length));
  return all.subarray(skip, skip + w.n);
}

describe('reading the sound of the joins', () => {
  it('reads many windows by one process, each the samples a process of its own reads', async () => {
    const windows: SoundWindow[] = [0, 0.0004, 1.23456, 2.5, 3.9999, 5.0201, 6.75, 7.5].flatMap((at, k) => [
      { spec: fileInput(stereo, 25), at, n: 960 + 37 * k },
      { spec: fileInput(mono, 25), at: at / 2, n: 1440 },
    ]);
    const batched = await soundsAt('ffmpeg', windows, { maxInputs: 5 });
    expect(batched).toHaveLength(windows.length);
    windows.forEach((w, k) => {
      const want = alone(w);
      const got = batched[k]!;
      expect(got.length, `window ${k}`).toBe(w.n);
      let worst = 0;
      let power = 0;
      for (let i = 0; i < w.n; i++) {
        worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
        power += want[i]! ** 2;
      }
      expect(power, `window ${k} holds sound`).toBeGreaterThan(0);
      expect(worst, `window ${k} at ${w.at} s`).toBeLessThan(1e-6);
    });
  });

  it('reads the readable windows of a batch in which one source cannot be read', async () => {
    const windows: SoundWindow[] = [
      { spec: fileInput(mono, 25), at: 1, n: 960 },
      { spec: fileInput(join(dir, 'gone.mp4'), 25), at: 1, n: 960 },
      { spec: fileInput(mono, 25), at: 2, n: 960 },
    ];
    const read = await soundsAt('ffmpeg', windows, {});
    expect(read[1]).toBeUndefined();
    for (const k of [0, 2]) expect(Array.from(read[k]!)).toEqual(Array.from(alone(windows[k]!)));
  });
});
