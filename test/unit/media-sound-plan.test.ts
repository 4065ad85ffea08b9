// A cut none of whose sound plays (a one-frame cut from a 24 fps source whose in point moves past its out point onto
// the next frame): its sound is discarded and its slot is silence, and ffmpeg takes the graph (every output of a
// filter must lead somewhere: "Filter ... has an unconnected output" was the failure). Run through ffmpeg on a file
// made here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { soundPlan } from '../../src/media/sound-plan.js';
import { timelineArgs } from '../../src/media/timeline-args.js';
import { fileInput, makeSource, planOfCuts } from '../helpers/plan-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'cutroom-sound-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a cut that plays no sound', () => {
  it('is silence in its slot, and the graph runs', () => {
    const src = join(dir, 'src24.mov');
    makeSource(src, 'sine=f=440:r=48000:d=3', 24, 3);
    const plan = planOfCuts([
      [0, 2],
      [2.001, 2.035],
    ]);
    const spec = fileInput(src, 24);
    const sounds = soundPlan(plan, [spec, spec]);
    expect(sounds[1]!.samples).toBe(0); // its picture starts at 2.0417, past its out point at 2.035
    const out = join(dir, 'out.mp4');
    const args = timelineArgs({
      plan,
      cutInputs: [spec, spec],
      overlayInputs: [],
      output: out,
      encode: { preset: 'ultrafast', crf: 35, audio: 'aac', container: 'mp4' },
      measure: true,
    });
    const r = spawnSync('ffmpeg', args, { maxBuffer: 1 << 26 });
    expect(r.status, String(r.stderr).slice(-500)).toBe(0);
  });
});
