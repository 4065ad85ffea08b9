import { describe, expect, it } from 'vitest';
import { lintEdit } from '../../src/edit/lint.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import { MAX_SIDE, labelledTileArgs, sheetFrames, sheetLayout } from '../../src/media/contact-sheet.js';
import { MeasureParser, edgeFlags, judgeCut, loudness } from '../../src/media/measure.js';
import { chunkCuts } from '../../src/media/render.js';
import { cutClock } from '../../src/edit/cut-clock.js';
import { cutSamples, envelope, num, timelineArgs, type InputSpec } from '../../src/media/timeline-args.js';

const V = '11111111-1111-4111-8111-111111111111';
const timeline = (cuts: [number, number][], fps = 30) =>
  lintEdit({
    video_output_fps: fps,
    video_output_resolution: '1920x1080',
    video_series_sequential: cuts.map(([s, e]) => ({ video_id: V, video_start_time: s, video_end_time: e })),
  }).timeline!;

describe('render plan', () => {
  it('rounds frames on the timeline, so the total is within one frame however many cuts', () => {
    const plan = toRenderPlan(timeline(Array.from({ length: 7 }, () => [0, 1.01] as [number, number])));
    expect(plan.cuts.map((c) => c.frames)).toEqual([30, 31, 30, 30, 31, 30, 30]);
    expect(plan.cuts.reduce((s, c) => s + c.frames, 0)).toBe(plan.totalFrames);
    expect(Math.abs(plan.totalFrames / 30 - plan.totalSec)).toBeLessThanOrEqual(1 / 30);
  });

  it('scales the output down for a preview, keeping even sides and the shape', () => {
    expect(toRenderPlan(timeline([[0, 1]]), { maxWidth: 640 })).toMatchObject({ width: 640, height: 360 });
    expect(toRenderPlan(timeline([[0, 1]]), { maxWidth: 333 })).toMatchObject({ width: 332, height: 186 });
    expect(toRenderPlan(timeline([[0, 1]]), { maxWidth: 4000 })).toMatchObject({ width: 1920, height: 1080 });
  });

  it('makes level windows relative to each stream', () => {
    const t = lintEdit({
      video_series_sequential: [
        {
          video_id: V,
          video_start_time: 10,
          video_end_time: 14,
          audio_levels: [{ audio_level: 0.5, start_time: 11, end_time: 12 }],
        },
      ],
      audio_overlay: [
        {
          audio_id: V,
          audio_start_time: 1,
          audio_end_time: 3,
          audio_levels: [{ audio_level: 0, start_time: 2, end_time: 3 }],
        },
      ],
    }).timeline!;
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

  it('builds a volume envelope from the first matching window, 1 elsewhere, on 1 ms frames with edges half a frame early', () => {
    expect(envelope([])).toBeUndefined();
    expect(
      envelope([
        { level: 0, from: 1, to: 2 },
        { level: 0.5, from: 2, to: 3 },
      ]),
    ).toBe(
      "asetnsamples=n=48:p=0,volume='if(between(t,0.9995,1.9995),0,if(between(t,1.9995,2.9995),0.5,1))':eval=frame,asetnsamples=n=1024:p=0",
    );
    expect(envelope([{ level: 0, from: 1, to: 2 }], 0.05)).toContain(
      "volume='if(between((t+0.05),0.9995,1.9995),0,1)'",
    );
  });

  it('seeks each input before -i, never uses -shortest, mixes with normalize=0', () => {
    const plan = toRenderPlan(
      timeline([
        [3, 5],
        [60, 62],
      ]),
      { maxWidth: 640 },
    );
    const args = timelineArgs({
      plan: { ...plan, overlays: [{ index: 0, assetId: 'a', startSec: 1, durationSec: 2, levels: [] }] },
      cutInputs: [
        { source: { kind: 'url', url: 'http://127.0.0.1:1/a.mp4?x=1' }, hasAudio: true },
        { source: { kind: 'file', path: '/m/b.mp4' }, hasAudio: false },
      ],
      overlayInputs: [{ source: { kind: 'file', path: '/m/v.m4a' }, hasAudio: true }],
      output: '/out/p.mp4',
      encode: { preset: 'veryfast', crf: 30, audio: 'aac', container: 'mp4' },
      measure: false,
    });
    // Seeked to the in point (the source's frame rate is not known, so it stays); two frames of margin at 30 fps.
    expect(args.slice(args.indexOf('-ss'), args.indexOf('-ss') + 4)).toEqual(['-ss', '3', '-t', '2.066667']);
    const networkInput = args.slice(0, args.indexOf('-i') + 2);
    expect(networkInput.slice(networkInput.indexOf('-rw_timeout'), networkInput.indexOf('-rw_timeout') + 2)).toEqual([
      '-rw_timeout',
      '15000000',
    ]);
    expect(
      networkInput.slice(networkInput.indexOf('-max_redirects'), networkInput.indexOf('-max_redirects') + 2),
    ).toEqual(['-max_redirects', '0']);
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

  it('moves an in point between two frames to the next frame start, and seeks there to the microsecond', () => {
    const tenFps = { frameRate: { num: 10, den: 1 } };
    expect(cutClock({ inSec: 1.05 }, tenFps)).toEqual({ inSec: 1.1, seekSec: 1.1 });
    expect(cutClock({ inSec: 1.1 }, tenFps)).toEqual({ inSec: 1.1, seekSec: 1.1 }); // on a frame: stays
    expect(cutClock({ inSec: 1.1000004 }, tenFps).inSec).toBeCloseTo(1.1, 6); // within a microsecond of a frame: that frame, not the next
    const ntsc = cutClock({ inSec: 1.05 }, { frameRate: { num: 30000, den: 1001 } }); // frame 32 of 29.97: 1.067733…
    expect(ntsc.inSec).toBeCloseTo((32 * 1001) / 30000, 12);
    expect(ntsc.seekSec).toBe(1.067733);
    // In Matroska (time base 1 ms) that frame is stored at 1.068 s.
    expect(
      cutClock({ inSec: 1.05 }, { frameRate: { num: 30000, den: 1001 }, videoTimeBase: { num: 1, den: 1000 } }),
    ).toEqual({ inSec: 1.068, seekSec: 1.068 });
    expect(
      cutClock({ inSec: 1.05 }, { frameRate: { num: 30000, den: 1001 }, videoTimeBase: { num: 1, den: 30000 } })
        .seekSec,
    ).toBe(1.067733);
    expect(cutClock({ inSec: 1.05 }, { frameRate: { num: 10, den: 1 }, videoStartSec: 0.02 }).inSec).toBeCloseTo(
      1.12,
      12,
    );
    expect(cutClock({ inSec: 0.2 }, { frameRate: { num: 10, den: 1 }, videoStartSec: 0.5 })).toEqual({
      inSec: 0.2,
      seekSec: 0.2,
    }); // before the first frame: not moved
    expect(cutClock({ inSec: 0 }, tenFps)).toEqual({ inSec: 0, seekSec: 0 });
    expect(cutClock({ inSec: 3 }, {})).toEqual({ inSec: 3, seekSec: 3 }); // rate unknown: not moved
  });

  it('re-stamps a cut from its in point, pads a late sound, plays mono on both channels and folds the rest down normalised', () => {
    const plan = toRenderPlan(timeline([[1.05, 2]]), { maxWidth: 640 });
    const graph = (spec: Partial<InputSpec>) => {
      const args = timelineArgs({
        plan,
        cutInputs: [
          { source: { kind: 'file', path: '/m/a.mov' }, hasAudio: true, frameRate: { num: 10, den: 1 }, ...spec },
        ],
        overlayInputs: [],
        output: '/o.mp4',
        encode: { preset: 'veryfast', crf: 30, audio: 'aac', container: 'mp4' },
        measure: false,
      });
      return args[args.indexOf('-filter_complex') + 1]!;
    };
    // Frames from the out point on are dropped (in 1.05 moves to 1.1: 0.9 s of range, less 2 ms of slack), then
    // each tick takes the frame on screen at it.
    expect(graph({})).toContain('[0:v]trim=end=0.898,setpts=PTS-0.002/TB,fps=30/1:start_time=0:round=up,');
    // Its sound is read from the planned in point, from an input of its own (seeked to 1.05, no picture decoded):
    // its range is 0.95 s (45600 samples). In sync with the picture, which starts on 1.1, its first 50 ms (2400
    // samples) are not heard; the 43200 that are, faded 5 ms at both ends, fill its slot (the 29 frames: 46400).
    const args = timelineArgs({
      plan,
      cutInputs: [{ source: { kind: 'file', path: '/m/a.mov' }, hasAudio: true, frameRate: { num: 10, den: 1 } }],
      overlayInputs: [],
      output: '/o.mp4',
      encode: { preset: 'veryfast', crf: 30, audio: 'aac', container: 'mp4' },
      measure: false,
    });
    expect(args.filter((a) => a === '-ss').length).toBe(2);
    expect(args.slice(args.lastIndexOf('-ss'), args.lastIndexOf('-ss') + 5)).toEqual([
      '-ss',
      '1.05',
      '-t',
      '1.05',
      '-vn',
    ]);
    expect(args.slice(args.indexOf('-ss'), args.indexOf('-ss') + 2)).toEqual(['-ss', '1.1']);
    expect(graph({})).toContain('concat=n=2:v=0:a=1,atrim=end_sample=45600,asetpts=PTS-STARTPTS[r0]');
    expect(graph({})).toContain(
      '[r0]atrim=start_sample=2400:end_sample=45600,asetpts=PTS-STARTPTS,atrim=end_sample=43200,afade=t=in:ss=0:ns=240,afade=t=out:ss=42960:ns=240[a0p]',
    );
    expect(graph({})).toContain('atrim=end_sample=46400,asetpts=PTS-STARTPTS[a0]');
    expect(graph({})).toContain('[a0]concat=n=1:v=0:a=1[acat]');
    expect(graph({})).toContain(
      '[1:a]aresample=48000:async=1:first_pts=0:rematrix_maxval=1,aformat=sample_fmts=fltp:channel_layouts=stereo',
    );
    expect(graph({})).not.toContain('setpts=PTS-STARTPTS,fps'); // no longer re-stamped to its first frame
    expect(graph({})).not.toContain('pan=');
    expect(graph({ audioChannels: 1 })).toContain('pan=stereo|c0=c0|c1=c0,aresample');
    expect(graph({ audioChannels: 6 })).not.toContain('pan=');
    // Display shape: fit and cover scale by dar (stored size times SAR), not by the stored pixels.
    expect(graph({ width: 768, height: 576 })).toContain(
      "scale=w='if(gt(dar,640/360),640,2*round(360*dar/2))':h='if(not(gt(dar,640/360)),360,2*round(640/dar/2))'",
    );
    expect(graph({ width: 640, height: 360 })).toContain(',scale=640:360,');
  });

  it("reads a cut's level windows on its sound's own clock, which starts at the planned in point", () => {
    const t = lintEdit({
      video_output_fps: 30,
      video_output_resolution: '640x360',
      video_series_sequential: [
        {
          video_id: V,
          video_start_time: 1.05,
          video_end_time: 3,
          audio_levels: [{ audio_level: 0, start_time: 1.5, end_time: 2 }],
        },
      ],
    }).timeline!;
    const args = timelineArgs({
      plan: toRenderPlan(t),
      cutInputs: [{ source: { kind: 'file', path: '/m/a.mov' }, hasAudio: true, frameRate: { num: 24, den: 1 } }],
      overlayInputs: [],
      output: '/o.mp4',
      encode: { preset: 'veryfast', crf: 30, audio: 'aac', container: 'mp4' },
      measure: false,
    });
    const g = args[args.indexOf('-filter_complex') + 1]!;
    // The picture starts on frame 26 (1.083333 s); the sound is read from 1.05 s, where the windows' clock starts (no
    // offset), and heard from where it is in sync with the picture: 1600 samples in.
    expect(g).toContain("volume='if(between(t,0.4495,0.9495),0,1)'");
    expect(g).toContain('[r0]atrim=start_sample=1600:end_sample=93600,');
  });

  it('multiplies once where one window covers all of a stream, and uses 1 ms frames only where the level changes', () => {
    const edit = (cutLevel: [number, number], overlayLevel: [number, number], start = 1) =>
      lintEdit({
        video_output_fps: 30,
        video_output_resolution: '640x360',
        video_series_sequential: [
          {
            video_id: V,
            video_start_time: start,
            video_end_time: 3,
            audio_levels: [{ audio_level: 0.5, start_time: cutLevel[0], end_time: cutLevel[1] }],
          },
        ],
        audio_overlay: [
          {
            audio_id: V,
            audio_start_time: 0,
            audio_end_time: 2,
            audio_levels: [{ audio_level: 0.25, start_time: overlayLevel[0], end_time: overlayLevel[1] }],
          },
        ],
      }).timeline!;
    const graphOf = (t: ReturnType<typeof edit>, rate = { num: 30, den: 1 }) => {
      const spec = { source: { kind: 'file' as const, path: '/m/a.mov' }, hasAudio: true, frameRate: rate };
      const args = timelineArgs({
        plan: toRenderPlan(t),
        cutInputs: [spec],
        overlayInputs: [spec],
        output: '/o.mp4',
        encode: { preset: 'veryfast', crf: 30, audio: 'aac', container: 'mp4' },
        measure: false,
      });
      return args[args.indexOf('-filter_complex') + 1]!;
    };
    const whole = graphOf(edit([1, 3], [0, 2]));
    expect(whole).toContain('volume=0.5,');
    expect(whole).toContain('volume=0.25,');
    expect(whole).not.toContain('asetnsamples=n=48:');
    // A window that stops short of the stream's end, on either stream, keeps the envelope there.
    expect(graphOf(edit([1, 2.9], [0, 2]))).toContain("volume='if(between(");
    expect(graphOf(edit([1, 3], [0, 1.9]))).toMatch(/volume='if\(between\(t,-0\.0005,1\.8995\),0\.25,1\)'/);
    // The picture's in point moves to the next source frame (1.05 s -> 1.1 s at 10 fps); the sound plays all of the
    // planned range, so a window over it covers all of it; one stopping short keeps the envelope.
    expect(graphOf(edit([1.05, 3], [0, 2], 1.05), { num: 10, den: 1 })).toContain('volume=0.5,');
    expect(graphOf(edit([1.05, 2.9], [0, 2], 1.05), { num: 10, den: 1 })).toContain("volume='if(between(t,");
  });

  it("counts a cut's picture in samples of its frames (the timeline's sound is fitted to their sum)", () => {
    const plan = toRenderPlan(
      timeline([
        [0, 1.45],
        [0, 1.45],
      ]),
    );
    expect(plan.cuts.map((c) => c.frames)).toEqual([44, 43]); // 43.5 and 87 frames, rounded on the timeline
    expect(plan.cuts.map((c) => cutSamples(c, plan))).toEqual([70_400, 68_800]); // not 69_600 each
    expect(cutSamples({ frames: 3, durationSec: 0.1 }, { fpsNum: 30000, fpsDen: 1001 })).toBe(4805); // 4804.8
    expect(cutSamples({ frames: 3, durationSec: 0.1 })).toBe(4800); // without a rate: the planned length
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
    const plan = toRenderPlan(
      timeline([
        [0, 1],
        [0, 1 / 30],
      ]),
    );
    expect(sheetFrames(plan).map((f) => [f.cut, f.frame])).toEqual([
      [1, 0],
      [1, 14],
      [1, 29],
      [2, 30],
    ]);
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

  it("sizes labels to a ninth of a wide cell's height and a twelfth of a tall cell's width (a vertical output's)", () => {
    const size = (w: number, h: number) =>
      Number(
        /fontsize=(\d+)/.exec(
          labelledTileArgs(
            sheetLayout(3, w, h),
            ['#1 00:00:00.000', '#1 00:00:01.000', '#1 00:00:02.000'],
            '/font.ttf',
            'sheet.jpg',
            3,
          ).args.join(' '),
        )?.[1],
      );
    expect(size(640, 360)).toBe(20);
    expect(size(360, 640)).toBe(27);
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
    expect(p.result.cutLevels).toEqual([
      { t: 10, rmsDb: -9, peakDb: -6 },
      { t: 10.1, rmsDb: -100, peakDb: -100 },
    ]);
    expect(p.result.black).toEqual([{ from: 11.5, to: 12.5 }]);
    expect(p.result.frozen).toEqual([{ from: 10.5, to: 13 }]);
  });

  it('averages power, not decibels, and takes the highest peak', () => {
    const l = loudness(
      [
        { t: 0, rmsDb: -10, peakDb: -3 },
        { t: 0.1, rmsDb: -100, peakDb: -100 },
      ],
      { from: 0, to: 0.2 },
    );
    expect(l).toEqual({ meanDb: -13, peakDb: -3 });
  });

  it('flags sound where level 0 was asked', () => {
    const plan = toRenderPlan(
      lintEdit({
        video_series_sequential: [
          {
            video_id: V,
            video_start_time: 0,
            video_end_time: 2,
            audio_levels: [{ audio_level: 0, start_time: 0, end_time: 2 }],
          },
        ],
      }).timeline!,
    );
    const samples = Array.from({ length: 20 }, (_, i) => ({ t: i / 10, rmsDb: -20, peakDb: -15 }));
    const r = judgeCut(plan.cuts[0]!, { cutLevels: samples, mixLevels: samples, black: [], frozen: [] }, true);
    expect(r.flags).toEqual(['audible 0.1-1.9 s where level 0 was asked']);
    expect(r.loudness).toEqual({ mean_db: -20, peak_db: -15 });
  });

  it('flags a cut whose sound reaches full scale, and not one just below it', () => {
    const plan = toRenderPlan(
      timeline([
        [0, 2],
        [0, 2],
      ]),
    );
    const samples = (peakDb: number) =>
      Array.from({ length: 40 }, (_, i) => ({ t: i / 10, rmsDb: -20, peakDb: i === 25 ? peakDb : -10 }));
    const judge = (peakDb: number, cut = 1) =>
      judgeCut(plan.cuts[cut]!, { cutLevels: samples(peakDb), mixLevels: samples(peakDb), black: [], frozen: [] }, true)
        .flags;
    expect(judge(7.7)).toEqual([
      'sound reaches full scale (peak +7.7 dBFS), so it clips: lower the levels of this cut or of the overlays over it',
    ]);
    expect(judge(-0.0003)).toEqual([
      'sound reaches full scale (peak 0.0 dBFS), so it clips: lower the levels of this cut or of the overlays over it',
    ]);
    expect(judge(-0.2)).toEqual([]);
    expect(judge(7.7, 0)).toEqual([]); // the peak is in the other cut
  });
});

describe("flash frames at a cut's ends (edgeFlags)", () => {
  it('names a first or last frame far from its neighbour while that neighbour is close to the next, and not motion', () => {
    expect(edgeFlags([40, 0, 0, 0, 0])).toEqual([expect.stringMatching(/^its first frame differs sharply/)]);
    expect(edgeFlags([0, 0, 5, 0.5, 38])).toEqual([expect.stringMatching(/^its last frame differs sharply/)]);
    expect(edgeFlags([40, 1, 60, 1, 40])).toHaveLength(2);
    // A picture that moves all through: every step alike, nothing flagged; a small change is not a flash.
    expect(edgeFlags([20, 18, 25, 19, 21])).toEqual([]);
    expect(edgeFlags([8, 0, 0, 0, 8])).toEqual([]);
    // A short cut measures nothing.
    expect(edgeFlags(undefined)).toEqual([]);
    expect(edgeFlags([40, 0])).toEqual([]);
  });
});
