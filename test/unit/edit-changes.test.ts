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
    expect(reason([{ cut: 3, drop: true }])).toBe('there is no cut 3 (index from 0; the edit has 3 cuts)');
    expect(reason([{ cut: 0, in: 2 }])).toBe(
      "cut 0's in point (2 s) must be before its out point (2 s): it would show nothing",
    );
    expect(reason([{ cut: 0, out: 'soon' }])).toMatch(/^cut 0's out point "soon" is not a time/);
    expect(reason([{ cut: 0, move_to: 3 }])).toBe('move_to 3 is past the last place (2)');
    expect(reason([{ cut: 0 }])).toMatch(/^say what to do with cut 0/);
    expect(reason([{ cut: 0, drop: true, out: 1 }])).toMatch(/^one change at a time for cut 0/);
    expect(
      reason([
        { cut: 0, drop: true },
        { cut: 0, drop: true },
        { cut: 0, drop: true },
      ]),
    ).toBe('change 3: cut 0 is the only cut; an edit needs one');
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
