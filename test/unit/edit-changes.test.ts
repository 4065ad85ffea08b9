// The changes a person makes in the preview view (view_edit), applied to the canonical edit: trims, drops, moves,
// in order; what is refused, in one line; overlays fitted to a shorter timeline.
import { describe, expect, it } from 'vitest';
import { applyChanges } from '../../src/edit/changes.js';
import type { Edit } from '../../src/edit/model.js';

const cut = (id: string, a: string, b: string) => ({
  video_id: id,
  type: 'videofile' as const,
  video_start_time: a,
  video_end_time: b,
  audio_levels: [],
});
const edit: Edit = {
  video_edit_version: '1.0',
  video_output_format: 'mp4',
  video_output_resolution: '320x180',
  video_output_fps: 25,
  video_output_filename: 'x.mp4',
  video_series_sequential: [
    cut('a', '00:00:00.000', '00:00:02.000'),
    cut('b', '00:00:05.000', '00:00:06.000'),
    cut('c', '00:00:10.000', '00:00:13.000'),
  ],
  audio_overlay: [
    {
      audio_id: 'm',
      type: 'audio',
      audio_start_time: '00:00:01.000',
      audio_end_time: '00:00:06.000',
      audio_levels: [],
    },
  ],
};
const ids = (e: Edit) => e.video_series_sequential.map((c) => c.video_id);

describe('applyChanges', () => {
  it('trims an out point (seconds or timecode) and an in point, and says so', () => {
    const r = applyChanges(edit, [
      { cut: 1, out: 5.5 },
      { cut: 2, in: '00:00:11' },
    ]);
    expect(r.ok && r.edit.video_series_sequential.map((c) => [c.video_start_time, c.video_end_time])).toEqual([
      ['00:00:00.000', '00:00:02.000'],
      ['00:00:05.000', '00:00:05.500'],
      ['00:00:11.000', '00:00:13.000'],
    ]);
    expect(r.ok && r.changed).toBe(
      'trimmed cut 2: out 6 s → 5.5 s (now 0.5 s); trimmed cut 3: in 10 s → 11 s (now 2 s); 1 overlay fitted to the new length (4.5 s)',
    );
  });

  it('drops and moves, each change on the edit the ones before it left', () => {
    const r = applyChanges(edit, [
      { cut: 0, drop: true },
      { cut: 1, move_to: 0 },
    ]);
    expect(r.ok && ids(r.edit)).toEqual(['c', 'b']);
    expect(r.ok && r.changed).toMatch(/^dropped cut 1 \(a 0 s-2 s\); moved cut 2 to place 1/);
  });

  it('fits the overlays to a shorter timeline', () => {
    const r = applyChanges(edit, [{ cut: 2, drop: true }]);
    expect(r.ok && r.edit.audio_overlay[0]!.audio_end_time).toBe('00:00:03.000');
    expect(r.ok && r.changed).toBe('dropped cut 3 (c 10 s-13 s); 1 overlay fitted to the new length (3 s)');
  });

  it('refuses what cannot be done, in one line', () => {
    const reason = (changes: Parameters<typeof applyChanges>[1]) => {
      const r = applyChanges(edit, changes);
      return r.ok ? 'ok' : r.reason;
    };
    // Cuts and places as the view numbers them (#1 is index 0), the fields as they are.
    expect(reason([{ cut: 3, drop: true }])).toBe('there is no cut 4 (cut: 3, an index from 0; the edit has 3 cuts)');
    expect(reason([{ cut: 0, in: 2 }])).toBe(
      "cut 1's in point (2 s) must be before its out point (2 s): it would show nothing",
    );
    expect(reason([{ cut: 0, out: 'soon' }])).toMatch(/^cut 1's out point "soon" is not a time/);
    expect(reason([{ cut: 0, move_to: 3 }])).toBe(
      'there is no place 4 for cut 1 (move_to: 3, an index from 0; the edit has 3 places)',
    );
    expect(reason([{ cut: 1, move_to: 1 }])).toBe('cut 2 is already at place 2');
    expect(reason([{ cut: 0 }])).toMatch(/^say what to do with cut 1/);
    expect(reason([{ cut: 0, drop: true, out: 1 }])).toMatch(/^one change at a time for cut 1/);
    expect(
      reason([
        { cut: 0, drop: true },
        { cut: 0, drop: true },
        { cut: 0, drop: true },
      ]),
    ).toBe('change 3: cut 1 is the only cut; an edit needs one');
  });

  it('keeps and says a trimmed in point as the frame it starts on (inPointOf), not a time between two frames', () => {
    // Frames every 40 ms, from 0 (25 fps): an in point moves to the next frame start.
    const onFrame = (_asset: string, inMs: number) => Math.ceil(inMs / 40) * 40;
    const r = applyChanges(edit, [{ cut: 2, in: 10.013 }], { inPointOf: onFrame });
    expect(r.ok && r.edit.video_series_sequential[2]!.video_start_time).toBe('00:00:10.040');
    expect(r.ok && r.changed).toMatch(
      /^trimmed cut 3: in 10 s → 10\.04 s \(the first frame from 10\.013 s\) \(now 2\.96 s\);/,
    );
    const same = applyChanges(edit, [{ cut: 1, in: 4.99 }], { inPointOf: onFrame });
    expect(same.ok && same.changed).toBe('cut 2 unchanged (in 4.99 s starts it on the frame at 5 s, as before)');
    const empty = applyChanges(edit, [{ cut: 1, in: 5.99, out: 6 }], { inPointOf: onFrame });
    expect(!empty.ok && empty.reason).toBe(
      "cut 2's in point (6 s, the first frame from 5.99 s) must be before its out point (6 s): it would show nothing",
    );
  });
});

describe("view_edit's levels in a result", () => {
  it('are bounded: neighbours merged (the louder kept), the step doubled; silence floored at -120 dB', async () => {
    const { boundLevels } = await import('../../src/tools/view.js');
    const long = { step: 0.1, cuts: [Array.from({ length: 2000 }, (_, i) => -30 + (i % 7)), [-Infinity, -20]] };
    const b = boundLevels(long, 3000);
    expect(JSON.stringify(b).length).toBeLessThanOrEqual(3000);
    expect(b.step).toBeCloseTo(0.1 * 2 ** Math.log2(2000 / b.cuts[0]!.length), 5);
    expect(Math.max(...b.cuts[0]!)).toBe(-24);
    expect(b.cuts[1]).toEqual([-20]);
    expect(boundLevels({ step: 0.5, cuts: [[-10.04, -Infinity]] })).toEqual({ step: 0.5, cuts: [[-10, -120]] });
  });
});

describe("view_edit's in points", () => {
  it('are the start of the source frame the render uses, to the ms, and mean that frame again', async () => {
    const { frameInPoint } = await import('../../src/tools/view.js');
    const asset = (facts?: { frameRate: { num: number; den: number } }) => ({
      assets: new Map([
        [
          'a',
          {
            id: 'a',
            kind: 'video' as const,
            ...(facts ? { facts: { hasVideo: true, hasAudio: false, ...facts } } : {}),
          },
        ],
      ]),
    });
    const ntsc = asset({ frameRate: { num: 30000, den: 1001 } });
    // At 29.97 fps frame 30 starts at 1.001 s: 1 s (between frames 29 and 30) starts the cut there.
    expect(frameInPoint(ntsc as never, 'a', 1000)).toBe(1001);
    expect(frameInPoint(ntsc as never, 'a', 1001)).toBe(1001);
    // Frame 32 starts at 1.067733 s: written 1.068, it is still that frame.
    expect(frameInPoint(ntsc as never, 'a', 1040)).toBe(1068);
    expect(frameInPoint(ntsc as never, 'a', 1068)).toBe(1068);
    // No frame rate known: as given.
    expect(frameInPoint(asset() as never, 'a', 1013)).toBe(1013);
    expect(frameInPoint(ntsc as never, 'b', 1013)).toBe(1013);
  });
});
