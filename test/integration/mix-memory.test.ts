// A re-preview's sound measured only around its changed cut (src/media/mix-memory.ts), through real ffmpeg: the
// measurements merged from the earlier timeline's and the span's must be the changed timeline's own, every window
// to the digit (levels, true peaks, loudness blocks of the mix and of its parts). The preview-level check (a loop's
// figures against a fresh preview's) is in preview.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan, type RenderPlan } from '../../src/edit/plan.js';
import { MeasureParser } from '../../src/media/measure.js';
import {
  mergeMeasured,
  mixIdentity,
  reuseFor,
  spanJob,
  WINDOW_SAMPLES,
  type MixMeasured,
} from '../../src/media/mix-memory.js';
import { crossfadeJoins, soundPlan } from '../../src/media/sound-plan.js';
import { soundArgs, type InputSpec, type SampleSpan } from '../../src/media/timeline-args.js';

const dir = mkdtempSync(join(tmpdir(), 'cutroom-mix-memory-'));
const video = join(dir, 'talk.mkv');
const bed = join(dir, 'bed.wav');

function ffmpeg(args: string[]): string {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', ...args], {
    encoding: 'utf8',
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.slice(-2000)}`);
  return r.stderr;
}

beforeAll(() => {
  // A picture that moves and a sound whose pitch and level keep changing (no two windows alike); a bed under it.
  ffmpeg([
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=160x90:r=25:d=14',
    '-f',
    'lavfi',
    '-i',
    "aevalsrc='0.4*sin(2*PI*(220+40*t)*t)*(0.55+0.45*sin(2*PI*0.9*t))|0.3*sin(2*PI*(330+25*t)*t)*(0.5+0.5*cos(2*PI*1.3*t))':s=48000:d=14",
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'pcm_s16le',
    video,
  ]);
  ffmpeg([
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    "aevalsrc='0.2*sin(2*PI*110*t)*(0.6+0.4*sin(2*PI*0.25*t))':s=48000:d=14:c=mono",
    bed,
  ]);
});

const cutInput: InputSpec = {
  source: { kind: 'file', path: video },
  hasAudio: true,
  frameRate: { num: 25, den: 1 },
  videoStartSec: 0,
  audioChannels: 2,
};
const bedInput: InputSpec = { source: { kind: 'file', path: bed }, hasAudio: true, audioChannels: 1 };

/** Four 2 s cuts of the talk with the bed under all of them; `third` is where the third cut starts in its source. */
function planOf(third: number, handles = false): RenderPlan {
  const ranges = [0, 3, third, 9].map((s) => ({
    video_id: 'v',
    video_start_time: s,
    video_end_time: s + 2,
    // (Pause beyond each, as a cut by words has: its joins crossfaded.)
    ...(handles ? { sound_handles: { before: 0.02, after: 0.02 } } : {}),
  }));
  const lint = lintEdit({
    video_output_fps: 25,
    video_output_resolution: '160x90',
    video_series_sequential: ranges,
    audio_overlay: [{ audio_id: 'a', audio_start_time: 0, audio_end_time: 8, gain_db: -6 }],
  });
  expect(lint.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return toRenderPlan(lint.timeline!);
}

function measure(plan: RenderPlan, span?: SampleSpan): MixMeasured {
  const inputs = plan.cuts.map(() => cutInput);
  const sounds = soundPlan(plan, inputs);
  const job = {
    plan,
    parts: plan.cuts.map((_, i) => ({ cut: i, input: cutInput })),
    sounds,
    crossfades: crossfadeJoins(plan, sounds, inputs),
    overlayInputs: [bedInput],
  };
  const args = soundArgs(span ? spanJob(job, span) : job);
  const parser = new MeasureParser();
  parser.push(ffmpeg(args) + '\n');
  const { mixLevels, blocks, truePeaks } = parser.result;
  return { mixLevels, blocks, truePeaks };
}

const identityOf = (plan: RenderPlan) => {
  const sounds = soundPlan(
    plan,
    plan.cuts.map(() => cutInput),
  );
  return mixIdentity(
    'the same bed',
    plan,
    plan.cuts.map((c) => `talk ${c.inSec}`),
    sounds,
  );
};

describe('measuring only around a changed cut', () => {
  it("gives, merged with the earlier timeline's measurements, every window the changed timeline gives measured whole", () => {
    const before = planOf(6);
    const after = planOf(6.5);
    const earlier = measure(before);
    const whole = measure(after);
    const reuse = reuseFor(identityOf(after), identityOf(before), earlier);
    expect(reuse).toBeDefined();
    // The third cut's slot is [4, 6) s: measured from a second before it to most of a second after it (the first
    // cut's sound is then not read: its slot ends before).
    expect(reuse!.span.from).toBe(29 * WINDOW_SAMPLES);
    expect(reuse!.span.to).toBe(68 * WINDOW_SAMPLES);
    expect(
      spanJob(
        {
          plan: after,
          parts: after.cuts.map((_, i) => ({ cut: i, input: cutInput })),
          sounds: soundPlan(
            after,
            after.cuts.map(() => cutInput),
          ),
          overlayInputs: [bedInput],
        },
        reuse!.span,
      ).parts.map((p) => 'silent' in p),
    ).toEqual([true, false, false, false]);
    const merged = mergeMeasured(reuse!, measure(after, reuse!.span));
    expect(Object.keys(merged.blocks ?? {}).sort()).toEqual(['dialogue', 'mix']);
    expect(merged.mixLevels).toHaveLength(80);
    expect(merged).toEqual(whole);
    // Not by chance: the two timelines differ in the windows of the changed cut and in the blocks that reach back
    // into it from the next cut (which were measured again), and nowhere else.
    const differ = (a: { lufs: number; end: number }[], b: { lufs: number }[]) =>
      a.flatMap((x, i) => (x.lufs !== b[i]!.lufs ? [Math.round(x.end * 10) - 1] : []));
    const changed = differ(whole.blocks!.mix!, earlier.blocks!.mix!);
    expect(Math.min(...changed)).toBe(40);
    expect(Math.max(...changed)).toBe(62);
  }, 120_000);

  it('gives the same with crossfaded joins (each cut plays on half a crossfade into the next slot)', () => {
    const before = planOf(6, true);
    const after = planOf(6.5, true);
    const inputs = after.cuts.map(() => cutInput);
    expect(crossfadeJoins(after, soundPlan(after, inputs), inputs).filter((n) => n > 0)).toHaveLength(3);
    const whole = measure(after);
    const reuse = reuseFor(identityOf(after), identityOf(before), measure(before));
    expect(reuse).toBeDefined();
    const merged = mergeMeasured(reuse!, measure(after, reuse!.span));
    expect(merged).toEqual(whole);
    // Not the plain joins' figures: the crossfades are measured.
    expect(whole).not.toEqual(measure(planOf(6.5)));
  }, 120_000);

  it('reuses nothing when what is not a cut changed, the length changed, or most of it would be measured again; and measures nothing when no cut changed', () => {
    const plan = planOf(6);
    const id = identityOf(plan);
    const m: MixMeasured = { mixLevels: [] };
    expect(reuseFor({ ...id, whole: 'another bed' }, id, m)).toBeUndefined();
    expect(reuseFor({ ...id, total: id.total + 1 }, id, m)).toBeUndefined();
    expect(reuseFor(id, id, m)?.span).toEqual({ from: 0, to: 0 });
    const allButOne = { ...id, cuts: id.cuts.map((c, i) => (i === 3 ? c : `${c} changed`)) };
    expect(reuseFor(allButOne, id, m)).toBeUndefined();
    // A cut moved to another slot changes both places.
    const moved = {
      ...id,
      slots: id.slots.map(([a, b], i) =>
        i === 0 ? ([a, b - WINDOW_SAMPLES] as [number, number]) : ([a, b] as [number, number]),
      ),
    };
    expect(reuseFor(moved, id, m)?.fresh).toEqual({ from: 0, to: 28 });
  });
});
