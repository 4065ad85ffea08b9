// What shaping the crossfaded joins costs a render or preview (media/crossfade-shape.ts): both sides of every join
// are read from their sources and compared. A tightened edit has a join every few seconds, each read as two windows.
// Measured here in-process on the built code: an edit of 60 cuts by words (2 s each, 0.2 s of pause beyond each edge)
// from a 10-minute 640x360 source (H.264 and AAC, as a camera's), its 59 joins shaped with the windows read one per
// ffmpeg process (maxInputs 1, as before batching) and 16 per process, in turn, three times; wall time and the CPU
// of the ffmpeg children (from /proc/self/stat, reaped children).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lintEdit } from '../dist/edit/lint.js';
import { toRenderPlan } from '../dist/edit/plan.js';
import { shapeCrossfades } from '../dist/media/crossfade-shape.js';
import { crossfadeJoins, soundPlan } from '../dist/media/sound-plan.js';
import { stats } from './lib.mjs';
import { makeOnce } from './media.mjs';

const CUTS = Number(process.env.BENCH_CUTS ?? 60);
const REPS = Number(process.env.BENCH_REPS ?? 3);

function childrenCpu() {
  const f = readFileSync('/proc/self/stat', 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(x[13]) + Number(x[14])) / 100;
}

export async function run() {
  const src = makeOnce(join(tmpdir(), 'cutroom-bench-media-v1', 'pink-360p-10min.mp4'), [
    ...['-f', 'lavfi', '-i', 'testsrc2=s=640x360:r=25:d=600'],
    ...['-f', 'lavfi', '-i', 'anoisesrc=c=pink:a=0.1:r=48000:d=600:seed=1'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-c:a', 'aac', '-b:a', '128k', '-shortest'],
  ]);
  const lint = lintEdit({
    video_output_fps: 25,
    video_output_resolution: '640x360',
    video_series_sequential: Array.from({ length: CUTS }, (_, k) => ({
      video_id: 'v',
      video_start_time: 5 + k * 9,
      video_end_time: 7 + k * 9,
    })),
  });
  const p = toRenderPlan(lint.timeline);
  const plan = { ...p, cuts: p.cuts.map((c) => ({ ...c, handles: { before: 0.2, after: 0.2 } })) };
  const spec = { source: { kind: 'file', path: src }, hasAudio: true, frameRate: { num: 25, den: 1 } };
  const specs = plan.cuts.map(() => spec);
  const sounds = soundPlan(plan, specs);
  const joins = crossfadeJoins(plan, sounds, specs);
  const runs = { 1: { wall: [], cpu: [] }, 16: { wall: [], cpu: [] } };
  for (let r = 0; r < REPS; r++)
    for (const maxInputs of [1, 16]) {
      const c = childrenCpu();
      const t = performance.now();
      await shapeCrossfades('ffmpeg', plan, sounds, joins, specs, { maxInputs });
      runs[maxInputs].wall.push((performance.now() - t) / 1000);
      runs[maxInputs].cpu.push(childrenCpu() - c);
    }
  console.log(`\n${CUTS} cuts, ${joins.filter((n) => n > 0).length} crossfaded joins shaped, ${REPS} runs each`);
  console.log('| windows per ffmpeg | wall s (median, max) | ffmpeg CPU s (median, max) |');
  console.log('|---|---|---|');
  for (const k of [1, 16]) {
    const w = stats(runs[k].wall);
    const c = stats(runs[k].cpu);
    console.log(`| ${k} | ${w.median.toFixed(2)}, ${w.max.toFixed(2)} | ${c.median.toFixed(2)}, ${c.max.toFixed(2)} |`);
  }
  const ratio = runs[16].cpu.map((c, i) => c / runs[1].cpu[i]);
  console.log(`CPU 16 / 1, pair by pair: ${ratio.map((x) => x.toFixed(2)).join(', ')}`);
}
