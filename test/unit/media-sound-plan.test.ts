// A cut none of whose sound plays (a one-frame cut from a 24 fps source whose in point moves past its out point onto
// the next frame): its sound is discarded and its slot is silence, and ffmpeg takes the graph (every output of a
// filter must lead somewhere: "Filter ... has an unconnected output" was the failure). Run through ffmpeg on a file
// made here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import { soundPlan } from '../../src/media/sound-plan.js';
import { timelineArgs, type InputSpec } from '../../src/media/timeline-args.js';

const dir = mkdtempSync(join(tmpdir(), 'cutroom-sound-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a cut that plays no sound', () => {
  it('is silence in its slot, and the graph runs', () => {
    const src = join(dir, 'src24.mov');
    const made = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=s=160x90:r=24:d=3',
      '-f',
      'lavfi',
      '-i',
      'sine=f=440:r=48000:d=3',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'pcm_s16le',
      '-shortest',
      src,
    ]);
    expect(made.status, String(made.stderr)).toBe(0);
    const lint = lintEdit({
      video_output_fps: 30,
      video_output_resolution: '160x90',
      video_series_sequential: [
        { video_id: 'v', video_start_time: 0, video_end_time: 2 },
        { video_id: 'v', video_start_time: 2.001, video_end_time: 2.035 },
      ],
    });
    const plan = toRenderPlan(lint.timeline!);
    const spec: InputSpec = {
      source: { kind: 'file', path: src },
      hasAudio: true,
      frameRate: { num: 24, den: 1 },
      width: 160,
      height: 90,
    };
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
