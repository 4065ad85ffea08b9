// Render plans and sources for the media unit tests: cuts of one source made into a plan as compose and render make
// it (the edit linted, then planned), and a small source file on disk (160x90, moving picture) with a chosen sound.
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan, type RenderPlan } from '../../src/edit/plan.js';
import type { InputSpec } from '../../src/media/timeline-args.js';
import { ffmpeg } from './sound.js';

/** The plan of an edit at `fps` (160x90) whose cuts are these [in, out] ranges (s) of one source. */
export function planOfCuts(cuts: [number, number][], fps = 30): RenderPlan {
  const lint = lintEdit({
    video_output_fps: fps,
    video_output_resolution: '160x90',
    video_series_sequential: cuts.map(([s, e]) => ({ video_id: 'v', video_start_time: s, video_end_time: e })),
  });
  if (!lint.timeline) throw new Error(`the edit does not lint: ${JSON.stringify(lint.diagnostics)}`);
  return toRenderPlan(lint.timeline);
}

/** A file made by makeSource, as the render reads it. */
export const fileInput = (path: string, fps: number): InputSpec => ({
  source: { kind: 'file', path },
  hasAudio: true,
  frameRate: { num: fps, den: 1 },
  width: 160,
  height: 90,
});

/** A 160x90 source of `seconds` at `fps` whose sound is the lavfi source `sound` (48 kHz, kept as PCM). */
export function makeSource(path: string, sound: string, fps: number, seconds: number): string {
  ffmpeg([
    ...['-f', 'lavfi', '-i', `testsrc2=s=160x90:r=${fps}:d=${seconds}`, '-f', 'lavfi', '-i', sound],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'pcm_s16le', '-shortest', path],
  ]);
  return path;
}
