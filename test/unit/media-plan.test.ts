import { describe, expect, it } from 'vitest';
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import { MAX_SIDE, sheetFrames, sheetLayout } from '../../src/media/contact-sheet.js';
import { MeasureParser, judgeCut, loudness } from '../../src/media/measure.js';
import { chunkCuts } from '../../src/media/render.js';
import { envelope, num, timelineArgs } from '../../src/media/timeline-args.js';

const V = '11111111-1111-4111-8111-111111111111';
const timeline = (cuts: [number, number][], fps = 30) =>
  lintEdit({ video_output_fps: fps, video_output_resolution: '1920x1080', video_series_sequential: cuts.map(([s, e]) => ({ video_id: V, video_start_time: s, video_end_time: e })) }).timeline!;

describe('render plan', () => {
  it('rounds frames on the timeline, so the total is within one frame however many cuts', () => {
    const plan = toRenderPlan(timeline(Array.from({ length: 7 }, () => [0, 1.01] as [number, number])), undefined);
    expect(plan.cuts.map((c) => c.frames)).toEqual([30, 31, 30, 30, 31, 30, 30]);
    expect(plan.cuts.reduce((s, c) => s + c.frames, 0)).toBe(plan.totalFrames);
    expect(Math.abs(plan.totalFrames / 30 - plan.totalSec)).toBeLessThanOrEqual(1 / 30);
  });

  it('scales the output down for a preview, keeping even sides and the shape', () => {
    expect(toRenderPlan(timeline([[0, 1]]), 640)).toMatchObject({ width: 640, height: 360 });
    expect(toRenderPlan(timeline([[0, 1]]), 333)).toMatchObject({ width: 332, height: 186 });
    expect(toRenderPlan(timeline([[0, 1]]), 4000)).toMatchObject({ width: 1920, height: 1080 });
  });

  it('makes level windows relative to each stream', () => {
    const t = lintEdit({ video_series_sequential: [{ video_id: V, video_start_time: 10, video_end_time: 14, audio_levels: [{ audio_level: 0.5, start_time: 11, end_time: 12 }] }], audio_overlay: [{ audio_id: V, audio_start_time: 1, audio_end_time: 3, audio_levels: [{ audio_level: 0, start_time: 2, end_time: 3 }] }] }).timeline!;
    const plan = toRenderPlan(t);
    expect(plan.cuts[0]!.levels).toEqual([{ level: 0.5, from: 1, to: 2 }]);
    expect(plan.overlays[0]!.levels).toEqual([{ level: 0, from: 1, to: 2 }]);
  });
});

describe('filter graph text', () => {
  it('writes numbers in fixed point only', () => {
    expect(num(1e-7)).toBe('0');
    expect(num(2.5)).toBe('2.5');
    expect(num(30)).toBe('30');
    expect(num(1 / 3)).toBe('0.333333');
    expect(() => num(Number.NaN)).toThrow();
  });

  it('builds a volume envelope from the first matching window, 1 elsewhere', () => {
    expect(envelope([])).toBeUndefined();
    expect(envelope([{ level: 0, from: 1, to: 2 }, { level: 0.5, from: 2, to: 3 }])).toBe("volume='if(between(t,1,2),0,if(between(t,2,3),0.5,1))':eval=frame");
  });

  it('seeks each input before -i, never uses -shortest, mixes with normalize=0', () => {
    const plan = toRenderPlan(timeline([[3, 5], [60, 62]]), 640);
    const args = timelineArgs({
      plan: { ...plan, overlays: [{ index: 0, assetId: 'a', startSec: 1, durationSec: 2, levels: [] }] },
      cutInputs: [{ source: { kind: 'url', url: 'http://127.0.0.1:1/a.mp4?x=1' }, hasAudio: true }, { source: { kind: 'file', path: '/m/b.mp4' }, hasAudio: false }],
      overlayInputs: [{ source: { kind: 'file', path: '/m/v.m4a' }, hasAudio: true }],
      output: '/out/p.mp4',
      encode: { preset: 'veryfast', crf: 30, audio: 'aac', container: 'mp4' },
      measure: false,
    });
    expect(args.slice(args.indexOf('-ss'), args.indexOf('-ss') + 4)).toEqual(['-ss', '3', '-t', '2.066667']); // two frames of margin at 30 fps
    const networkInput = args.slice(0, args.indexOf('-i') + 2);
    expect(networkInput.slice(networkInput.indexOf('-rw_timeout'), networkInput.indexOf('-rw_timeout') + 2)).toEqual(['-rw_timeout', '15000000']);
    expect(networkInput.slice(networkInput.indexOf('-max_redirects'), networkInput.indexOf('-max_redirects') + 2)).toEqual(['-max_redirects', '0']);
    // A local file gets neither network option (ffmpeg refuses -max_redirects on a file input).
    const fileInput = args.slice(args.indexOf('file:/m/b.mp4') - 6, args.indexOf('file:/m/b.mp4') + 1);
    expect(fileInput).not.toContain('-max_redirects');
    expect(args).toContain('file:/m/b.mp4');
    expect(args).not.toContain('-shortest');
    const graph = args[args.indexOf('-filter_complex') + 1]!;
    expect(graph).toContain('anullsrc=r=48000:cl=stereo'); // the second source has no sound
    expect(graph).toContain('amix=inputs=2:duration=first:dropout_transition=0:normalize=0');
    expect(graph).toContain('adelay=delays=1000:all=1');
    expect(graph).toContain('trim=end_frame=60');
    expect(args.at(-1)).toBe('/out/p.mp4');
  });

  it('cuts a long timeline into chunks that keep their frames and timeline positions', () => {
    const plan = toRenderPlan(timeline(Array.from({ length: 5 }, () => [0, 1] as [number, number])));
    const chunks = chunkCuts(plan, 2);
    expect(chunks.map((c) => c.cuts.length)).toEqual([2, 2, 1]);
    expect(chunks[1]!.cuts.map((c) => c.timelineStartSec)).toEqual([0, 1]);
    expect(chunks.reduce((s, c) => s + c.totalFrames, 0)).toBe(plan.totalFrames);
  });
});

describe('contact sheet layout', () => {
  it('shows first, middle and last frame of each cut, once each for a one-frame cut', () => {
    const plan = toRenderPlan(timeline([[0, 1], [0, 1 / 30]]));
    expect(sheetFrames(plan).map((f) => [f.cut, f.frame])).toEqual([[1, 0], [1, 14], [1, 29], [2, 30]]);
  });

  it('stays within 2000 px a side however many cuts', () => {
    for (const count of [3, 36, 180, 600]) {
      const l = sheetLayout(count, 640, 360);
      expect(l.columns * l.thumbWidth + (l.columns + 1) * 4).toBeLessThanOrEqual(MAX_SIDE);
      expect(l.rows * l.thumbHeight + (l.rows + 1) * 4).toBeLessThanOrEqual(MAX_SIDE);
      expect(l.columns * l.rows).toBeGreaterThanOrEqual(count);
      expect(l.columns % 3).toBe(0);
    }
  });
});

describe('measurements', () => {
  const log = [
    '[ametadata@cutlevels @ 0x1] frame:0    pts:0       pts_time:0',
    '[ametadata@cutlevels @ 0x1] lavfi.astats.Overall.Peak_level=-6.0',
    '[ametadata@cutlevels @ 0x1] lavfi.astats.Overall.RMS_level=-9.0',
    '[ametadata@cutlevels @ 0x1] frame:1    pts:4800    pts_time:0.1',
    '[ametadata@cutlevels @ 0x1] lavfi.astats.Overall.Peak_level=-inf',
    '[ametadata@cutlevels @ 0x1] lavfi.astats.Overall.RMS_level=-inf',
    '[blackdetect@black @ 0x2] black_start:1.5 black_end:2.5 black_duration:1',
    '[freezedetect@freeze @ 0x3] lavfi.freezedetect.freeze_start: 0.5',
    '[freezedetect@freeze @ 0x3] lavfi.freezedetect.freeze_end: 3',
  ].join('\n');

  it('reads levels, black and frozen spans, split across chunks of text, with an offset', () => {
    const p = new MeasureParser(10);
    for (let i = 0; i < log.length; i += 7) p.push(log.slice(i, i + 7));
    p.push('\n');
    expect(p.result.cutLevels).toEqual([{ t: 10, rmsDb: -9, peakDb: -6 }, { t: 10.1, rmsDb: -100, peakDb: -100 }]);
    expect(p.result.black).toEqual([{ from: 11.5, to: 12.5 }]);
    expect(p.result.frozen).toEqual([{ from: 10.5, to: 13 }]);
  });

  it('averages power, not decibels, and takes the highest peak', () => {
    const l = loudness([{ t: 0, rmsDb: -10, peakDb: -3 }, { t: 0.1, rmsDb: -100, peakDb: -100 }], { from: 0, to: 0.2 });
    expect(l).toEqual({ meanDb: -13, peakDb: -3 });
  });

  it('flags sound where level 0 was asked', () => {
    const plan = toRenderPlan(lintEdit({ video_series_sequential: [{ video_id: V, video_start_time: 0, video_end_time: 2, audio_levels: [{ audio_level: 0, start_time: 0, end_time: 2 }] }] }).timeline!);
    const samples = Array.from({ length: 20 }, (_, i) => ({ t: i / 10, rmsDb: -20, peakDb: -15 }));
    const r = judgeCut(plan.cuts[0]!, { cutLevels: samples, mixLevels: samples, black: [], frozen: [] }, true);
    expect(r.flags).toEqual(['audible 0.1-1.9 s where level 0 was asked']);
    expect(r.loudness).toEqual({ mean_db: -20, peak_db: -15 });
  });
});
