// Joins between cuts with sound handles (pause beyond them; compose_edit sets them on cuts by words) are crossfaded in
// the one-graph render (media/sound-plan.ts crossfadeJoins, timelineArgs): under a steady bed in the source there is no dip, no hole and no click at the join, and the
// timeline's length and sync are what they were (every sample away from the join is the same as without the
// crossfade). Run through ffmpeg on a file made here: a bed of pink noise (uncorrelated either side of a join, so an
// equal-power crossfade keeps its level).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan, type RenderPlan } from '../../src/edit/plan.js';
import { CROSSFADE_SAMPLES, crossfadeJoins, soundPlan } from '../../src/media/sound-plan.js';
import { renderTimeline } from '../../src/media/render.js';
import { timelineArgs, type InputSpec } from '../../src/media/timeline-args.js';
import { ffmpeg, soundOf } from '../helpers/sound.js';

const RATE = 48_000;
const dir = mkdtempSync(join(tmpdir(), 'cutroom-crossfade-'));
const src = join(dir, 'bed.mov');
const spec: InputSpec = {
  source: { kind: 'file', path: src },
  hasAudio: true,
  frameRate: { num: 30, den: 1 },
  width: 160,
  height: 90,
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => {
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=160x90:r=30:d=6',
    '-f',
    'lavfi',
    '-i',
    'anoisesrc=c=pink:a=0.1:r=48000:d=6:seed=7',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'pcm_s16le',
    '-shortest',
    src,
  ]);
});

/** Sound handles: the pause a cut by words has beyond its edges (s). */
const PAUSE = { before: 0.2, after: 0.2 };

/** Two cuts of the bed, apart in the source (their sound does not run on from one to the other). */
function twoCuts(withHandles: boolean): RenderPlan {
  const lint = lintEdit({
    video_output_fps: 30,
    video_output_resolution: '160x90',
    video_series_sequential: [
      { video_id: 'v', video_start_time: 1, video_end_time: 2 },
      { video_id: 'v', video_start_time: 3.5, video_end_time: 4.5 },
    ],
  });
  const plan = toRenderPlan(lint.timeline!);
  return withHandles ? { ...plan, cuts: plan.cuts.map((c) => ({ ...c, handles: PAUSE })) } : plan;
}

function render(plan: RenderPlan, name: string): { args: string[]; sound: Float32Array } {
  const out = join(dir, name);
  const args = timelineArgs({
    plan,
    cutInputs: [spec, spec],
    overlayInputs: [],
    output: out,
    encode: { preset: 'ultrafast', crf: 35, audio: 'pcm', container: 'nut' },
    measure: false,
  });
  ffmpeg(args);
  return { args, sound: soundOf(out) };
}

const rmsDb = (s: Float32Array, from: number, n: number) => {
  let sum = 0;
  for (let i = from; i < from + n; i++) sum += s[i]! ** 2;
  return 10 * Math.log10(sum / n);
};

describe('a join between two cuts made by words', () => {
  it('is an equal-power crossfade under a steady bed: no dip, hole or click, length and sync unchanged', () => {
    const plan = twoCuts(true);
    const join = soundPlan(plan, [spec, spec])[1]!.slotStart;
    const faded = render(plan, 'xfade.nut');
    const plain = render(twoCuts(false), 'plain.nut');
    expect(faded.args.join(' ')).toContain(`acrossfade=ns=${CROSSFADE_SAMPLES}`);
    expect(plain.args.join(' ')).not.toContain('acrossfade');
    // Length: the picture's, as before.
    expect(faded.sound.length).toBe(Math.round((plan.totalFrames / 30) * RATE));
    expect(faded.sound.length).toBe(plain.sound.length);
    // Sync: away from the join (the crossfade's half, and the plain render's declick fades), every sample is the same.
    const near = Math.max(CROSSFADE_SAMPLES / 2, Math.round(plan.cuts[0]!.fadeSec * RATE)) + 1;
    let differ = 0;
    for (let i = 0; i < faded.sound.length; i++)
      if (Math.abs(i - join) > near && Math.abs(faded.sound[i]! - plain.sound[i]!) > 1e-4) differ++;
    expect(differ).toBe(0);
    // No dip: RMS over 10 ms windows centred on the join within 3 dB of the mean of its neighbours 30-50 ms away (the
    // declick fades are 5 ms a side: over 20 ms their dip is under 3 dB).
    const w = RATE / 100;
    const neighbours = [-5, -4, -3, 3, 4, 5].map((k) => rmsDb(faded.sound, join - w / 2 + k * w, w));
    const mean = neighbours.reduce((a, b) => a + b, 0) / neighbours.length;
    const atJoin = rmsDb(faded.sound, join - w / 2, w);
    // (Today's join, faded down and up, dips: the measure tells them apart.)
    const plainAtJoin = rmsDb(plain.sound, join - w / 2, w);
    expect(atJoin, `at the join ${atJoin.toFixed(1)} dB, around it ${mean.toFixed(1)} dB`).toBeGreaterThan(mean - 3);
    expect(plainAtJoin, `today's join ${plainAtJoin.toFixed(1)} dB`).toBeLessThan(mean - 3);
    console.error(
      `join ${atJoin.toFixed(1)} dB, without crossfade ${plainAtJoin.toFixed(1)} dB, around ${mean.toFixed(1)} dB`,
    );
    // No hole: no run of over 5 ms below -90 dBFS within 50 ms of the join.
    let run = 0;
    let longest = 0;
    for (let i = join - RATE / 20; i < join + RATE / 20; i++) {
      run = Math.abs(faded.sound[i]!) < 10 ** (-90 / 20) ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    expect(longest).toBeLessThan(RATE / 200);
    // No click: no sample step within 5 ms of the join over 3x the bed's 99th-percentile step.
    const steps: number[] = [];
    for (let i = RATE / 10; i < join - RATE / 10; i++) steps.push(Math.abs(faded.sound[i]! - faded.sound[i - 1]!));
    steps.sort((a, b) => a - b);
    const p99 = steps[Math.floor(steps.length * 0.99)]!;
    let worst = 0;
    for (let i = join - RATE / 200; i < join + RATE / 200; i++)
      worst = Math.max(worst, Math.abs(faded.sound[i]! - faded.sound[i - 1]!));
    expect(worst).toBeLessThan(3 * p99);
  });
});

describe('which joins are crossfaded', () => {
  const plan = (cuts: { start: number; end: number; fade_out?: number }[], handles: (typeof PAUSE | undefined)[]) => {
    const p = toRenderPlan(
      lintEdit({
        video_output_fps: 30,
        video_output_resolution: '160x90',
        video_series_sequential: cuts.map((c) => ({
          video_id: 'v',
          video_start_time: c.start,
          video_end_time: c.end,
          ...(c.fade_out ? { fade_out: c.fade_out } : {}),
        })),
      }).timeline!,
    );
    return { ...p, cuts: p.cuts.map((c, k) => (handles[k] ? { ...c, handles: handles[k] } : c)) };
  };
  const joins = (p: RenderPlan, specs: InputSpec[] = p.cuts.map(() => spec)) =>
    crossfadeJoins(p, soundPlan(p, specs), specs);

  it('only between two cuts that have sound and a handle of pause on each side', () => {
    const cuts = [
      { start: 1, end: 2 },
      { start: 3, end: 4 },
      { start: 5, end: 5.5 },
    ];
    expect(joins(plan(cuts, [PAUSE, PAUSE, PAUSE]))).toEqual([0, CROSSFADE_SAMPLES, CROSSFADE_SAMPLES]);
    // A cut without handles (by times, or a neighbour word beyond it) keeps its faded edges on both sides.
    expect(joins(plan(cuts, [PAUSE, undefined, PAUSE]))).toEqual([0, 0, 0]);
    // No sound before a cut that starts at its source's start: no handle there.
    expect(
      joins(
        plan(
          [
            { start: 1, end: 2 },
            { start: 0, end: 1 },
          ],
          [PAUSE, PAUSE],
        ),
      ),
    ).toEqual([0, 0]);
    // A cut without sound.
    const mute = { ...spec, hasAudio: false };
    expect(joins(plan(cuts.slice(0, 2), [PAUSE, PAUSE]), [spec, mute])).toEqual([0, 0]);
    // A fade the edit asked for at the join is kept.
    expect(
      joins(
        plan(
          [
            { start: 1, end: 2, fade_out: 0.5 },
            { start: 3, end: 4 },
          ],
          [PAUSE, PAUSE],
        ),
      ),
    ).toEqual([0, 0]);
    // A handle shorter than half the crossfade on one side (the word beyond it starts within 10 ms).
    expect(joins(plan(cuts.slice(0, 2), [{ before: 0.2, after: 0.005 }, PAUSE]))).toEqual([0, 0]);
    expect(joins(plan(cuts.slice(0, 2), [PAUSE, { before: 0.005, after: 0.2 }]))).toEqual([0, 0]);
    // The next cut starts where this one ends in the same source: its sound plays on as recorded, not twice.
    expect(
      joins(
        plan(
          [
            { start: 1, end: 2 },
            { start: 2, end: 3 },
          ],
          [PAUSE, PAUSE],
        ),
      ),
    ).toEqual([0, 0]);
  });
});

describe('a render in chunks', () => {
  it('crossfades every join as one process does, those between chunks too: the same sound at every sample', async () => {
    // (With an overlay of the bed at half its level, mixed in the chunks' join as in the one process.)
    const p = toRenderPlan(
      lintEdit({
        video_output_fps: 30,
        video_output_resolution: '160x90',
        video_series_sequential: [
          { video_id: 'v', video_start_time: 1, video_end_time: 2 },
          { video_id: 'v', video_start_time: 3, video_end_time: 4 },
          { video_id: 'v', video_start_time: 5, video_end_time: 5.5 },
        ],
        audio_overlay: [
          {
            audio_id: 'v',
            type: 'audio',
            audio_start_time: 0,
            audio_end_time: 2.5,
            audio_levels: [{ audio_level: 0.5, start_time: 0, end_time: 2.5 }],
          },
        ],
      }).timeline!,
    );
    expect(p.overlays).toHaveLength(1);
    const plan = { ...p, cuts: p.cuts.map((c) => ({ ...c, handles: PAUSE })) };
    const made = async (name: string, maxInputs: number) => {
      const output = join(dir, name);
      const r = await renderTimeline({
        ffmpeg: 'ffmpeg',
        plan,
        cutInputs: plan.cuts.map(() => spec),
        overlayInputs: [spec],
        output,
        encode: { preset: 'ultrafast', crf: 35, audio: 'pcm', container: 'nut' },
        measure: true,
        maxInputs,
        timeoutMs: 120_000,
      });
      return { processes: r.processes, sound: soundOf(output), levels: r.measurements.cutLevels };
    };
    const one = await made('one.nut', 8);
    const joins = soundPlan(
      plan,
      plan.cuts.map(() => spec),
    )
      .slice(1)
      .map((s) => s.slotStart);
    // Chunks of two cuts (the join before cut 2 between chunks), and of one (every join between chunks).
    for (const maxInputs of [2, 1]) {
      const chunked = await made(`chunked${maxInputs}.nut`, maxInputs);
      expect(chunked.processes).toBeGreaterThan(one.processes);
      expect(chunked.sound.length).toBe(one.sound.length);
      const differ: number[] = [];
      for (let i = 0; i < one.sound.length; i++) if (Math.abs(one.sound[i]! - chunked.sound[i]!) > 1e-4) differ.push(i);
      expect(differ, `chunks of ${maxInputs}, joins at ${joins.join(', ')}`).toEqual([]);
      // The cuts' sound measured every 100 ms where the one process measures it (the chunks' crossfade halves beyond
      // their slots left out).
      const at = (l: { t: number }[]) => l.map((x) => Math.round(x.t * 1000));
      expect(at(chunked.levels), `chunks of ${maxInputs}`).toEqual(at(one.levels));
    }
  });
});
