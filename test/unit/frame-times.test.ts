// Issue 34 (item 2): every time reported on the output timeline is the start of an output frame, so a click on a cut
// in the preview view (a seek to its timeline_start plus half a frame) shows that cut's first frame, never the previous
// cut's last. The frames are counted as the render counts them (toRenderPlan: each cut's `frames`, the join placing
// cut k after the frames of the cuts before it, each frame lasting fpsDen/fpsNum s).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cuesOf, wordsOnTimeline } from '../../src/edit/captions.js';
import { lintEdit } from '../../src/edit/lint.js';
import { sheetFrames } from '../../src/media/contact-sheet.js';
import { summarizeTimeline, toRenderPlan } from '../../src/edit/plan.js';
import { frameStartMs, parseTimecode } from '../../src/edit/timecode.js';

const V = '00000000-0000-4000-8000-000000000001';
const RATES = [24, 25, 29.97, 30, 60, 12.5, 23.976, 59.94, 50, 120, 7.5, 1];
/** What the view does with a timecode (src/views/preview-view.ts: seconds()). */
const viewSeconds = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);

function planned(fps: number, clips: { in: number; out: number }[]) {
  const lint = lintEdit({
    video_output_fps: fps,
    video_output_resolution: '640x360',
    video_series_sequential: clips.map((c) => ({
      video_id: V,
      video_start_time: c.in / 1000,
      video_end_time: c.out / 1000,
    })),
  });
  expect(lint.timeline, JSON.stringify(lint.diagnostics)).toBeDefined();
  return { summary: summarizeTimeline(lint.timeline!), plan: toRenderPlan(lint.timeline!) };
}

describe('times on the output timeline are frame times', () => {
  it('the issue: a cut placed at 1.5 s at 25 fps is reported at its first frame, 1.52 s', () => {
    const { summary } = planned(25, [
      { in: 0, out: 1500 },
      { in: 3000, out: 4000 },
    ]);
    expect(summary.cuts.map((c) => [c.timeline_start, c.timeline_end])).toEqual([
      ['00:00:00.000', '00:00:01.520'],
      ['00:00:01.520', '00:00:02.520'],
    ]);
    expect(summary.total_duration).toBe('00:00:02.520');
  });

  it('a frame time that is not a whole millisecond is rounded up (29.97 fps: frame 1 at 33.367 ms, reported 00:00:00.034)', () => {
    expect(frameStartMs(1, { num: 30000, den: 1001 })).toBe(34);
    expect(frameStartMs(30, { num: 30000, den: 1001 })).toBe(1001);
    expect(frameStartMs(3, { num: 25, den: 2 })).toBe(240);
    expect(frameStartMs(0, { num: 24, den: 1 })).toBe(0);
    // An hour in at 23.976 fps: frame 86327 starts at 3600555.2916... ms.
    expect(frameStartMs(86_327, { num: 24000, den: 1001 })).toBe(3_600_556);
  });

  it('each cut reported starts within 1 ms after its first frame, and the view seeks into that frame', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RATES),
        fc.array(fc.record({ in: fc.integer({ min: 0, max: 600_000 }), length: fc.integer({ min: 0, max: 20_000 }) }), {
          minLength: 1,
          maxLength: 30,
        }),
        (fps, raw) => {
          const shortest = Math.ceil(1000 / fps) + 1;
          const clips = raw.map((c) => ({ in: c.in, out: c.in + shortest + c.length }));
          const { summary, plan } = planned(fps, clips);
          const frame = plan.fpsDen / plan.fpsNum;
          let before = 0;
          summary.cuts.forEach((c, k) => {
            const cut = plan.cuts[k]!;
            // Where the join puts the cut's first frame: after the frames of the cuts before it.
            const first = (before * plan.fpsDen) / plan.fpsNum;
            const reported = parseTimecode(c.timeline_start);
            expect(reported.ok).toBe(true);
            const at = (reported as { ms: number }).ms / 1000;
            expect(at).toBeGreaterThanOrEqual(first - 1e-9);
            expect(at).toBeLessThan(first + Math.min(frame, 0.001));
            // The view's seek: the reported start plus half a frame, in this cut's first frame (its index is the
            // greatest frame whose start is at or before the seek).
            const seek = viewSeconds(c.timeline_start) + 0.5 / summary.fps;
            expect(Math.floor((seek * plan.fpsNum) / plan.fpsDen)).toBe(before);
            expect(seek).toBeLessThan(first + frame);
            // It ends where the next begins (the start of the frame after its last).
            const next = summary.cuts[k + 1];
            if (next) expect(c.timeline_end).toBe(next.timeline_start);
            before += cut.frames;
          });
          expect(summary.total_duration).toBe(summary.cuts.at(-1)!.timeline_end);
          expect(before).toBe(plan.totalFrames);
          expect(Math.round(summary.total_seconds * 1000)).toBe(
            frameStartMs(plan.totalFrames, { num: plan.fpsNum, den: plan.fpsDen }),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("captions: a cut's words are placed from its first frame (its sound starts there), so cues are on the times reported", () => {
    const lint = lintEdit({
      video_output_fps: 25,
      video_output_resolution: '640x360',
      video_series_sequential: [
        { video_id: V, video_start_time: 0, video_end_time: 1.5 },
        { video_id: '00000000-0000-4000-8000-000000000002', video_start_time: 10, video_end_time: 12 },
      ],
    });
    const words = new Map([
      ['00000000-0000-4000-8000-000000000002', [{ index: 0, word: 'Hello.', start_seconds: 10, end_seconds: 10.4 }]],
    ]);
    const placed = wordsOnTimeline(lint.timeline!, words);
    expect(placed.map((w) => [w.start, w.end, w.itemEnd])).toEqual([[1.52, 1.92, 3.52]]);
    expect(cuesOf(placed)[0]!.start).toBe(1.52);
    expect(summarizeTimeline(lint.timeline!).cuts[1]!.timeline_start).toBe('00:00:01.520');
  });

  it("the contact sheet labels each cut's first frame with its reported timeline_start", () => {
    for (const fps of [29.97, 25, 24, 12.5]) {
      const { summary, plan } = planned(fps, [
        { in: 13, out: 1033 },
        { in: 2013, out: 2710 },
        { in: 5000, out: 6334 },
      ]);
      const firsts = sheetFrames(plan).filter((f, i, all) => i === 0 || all[i - 1]!.cut !== f.cut);
      expect(firsts.map((f) => Math.round(f.t * 1000))).toEqual(
        summary.cuts.map((c) => (parseTimecode(c.timeline_start) as { ms: number }).ms),
      );
    }
  });
});
