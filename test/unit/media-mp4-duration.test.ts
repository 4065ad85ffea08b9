// An mp4's duration read from its movie header (media/mp4-duration.ts), against ffprobe's, on files ffmpeg makes as
// cutroom makes them (faststart or not, sound with an encoder delay, 29.97 fps) and on what is not an mp4.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mp4Seconds } from '../../src/media/mp4-duration.js';

const dir = mkdtempSync(join(tmpdir(), 'cutroom-mp4-duration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function make(name: string, args: string[]): string {
  const out = join(dir, name);
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args, out]);
  if (r.status !== 0) throw new Error(String(r.stderr));
  return out;
}

function probed(path: string): number {
  const r = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path]);
  return Number(String(r.stdout).trim());
}

describe('mp4Seconds', () => {
  const cases: [string, string[]][] = [
    [
      'faststart, AAC over 29.97 fps',
      [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=s=160x90:r=30000/1001:d=3.3',
        '-f',
        'lavfi',
        '-i',
        'sine=f=440:d=3.1',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-c:a',
        'aac',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
    ],
    [
      'moov at the end, sound longer than the picture',
      [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=s=160x90:r=25:d=2',
        '-f',
        'lavfi',
        '-i',
        'sine=f=440:d=2.7',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-c:a',
        'aac',
        '-f',
        'mp4',
      ],
    ],
    [
      'picture only, 24 fps',
      [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=s=160x90:r=24:d=1.75',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
    ],
  ];
  for (const [what, args] of cases) {
    it(`says what ffprobe says: ${what}`, async () => {
      const file = make(`${what.replace(/\W+/g, '-')}.mp4`, args);
      const seconds = await mp4Seconds(file);
      expect(seconds).toBeDefined();
      expect(Math.abs(seconds! - probed(file))).toBeLessThan(1e-6);
    });
  }

  it('says nothing of what is not a whole mp4 (the caller probes it)', async () => {
    const whole = make('whole.mp4', cases[1]![1]);
    expect(await mp4Seconds(join(dir, 'absent.mp4'))).toBeUndefined();
    writeFileSync(join(dir, 'text.mp4'), 'not an mp4 at all, only words');
    expect(await mp4Seconds(join(dir, 'text.mp4'))).toBeUndefined();
    // Cut short before its movie header (which comes last here): no header to read.
    const cut = join(dir, 'cut.mp4');
    writeFileSync(cut, '');
    spawnSync('cp', [whole, cut]);
    truncateSync(cut, 4096);
    expect(await mp4Seconds(cut)).toBeUndefined();
    expect(await mp4Seconds(make('sound.wav', ['-f', 'lavfi', '-i', 'sine=d=1', '-f', 'wav']))).toBeUndefined();
  });
});
