// The mix fields of cuts and overlays (issue 33, item 1) as data: checked and carried by normalizeEdit, planned by
// toRenderPlan, and put in the service's form (src/edit/service-form.ts). The sound itself is measured through the
// server in test/integration/mix.test.ts.
import { describe, expect, it } from 'vitest';
import { normalizeEdit } from '../../src/edit/normalize.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import { forService, scaleLevels } from '../../src/edit/service-form.js';
import type { Edit } from '../../src/edit/model.js';

const cut = (extra: Record<string, unknown> = {}) => ({
  video_id: 'v',
  video_start_time: 10,
  video_end_time: 14,
  ...extra,
});
const overlay = (extra: Record<string, unknown> = {}) => ({
  audio_id: 'a',
  audio_start_time: 0,
  audio_end_time: 4,
  ...extra,
});
const norm = (cuts: Record<string, unknown>[], overlays: Record<string, unknown>[] = []) =>
  normalizeEdit({ video_series_sequential: cuts, audio_overlay: overlays });
const errorsOf = (n: ReturnType<typeof norm>) => n.diagnostics.filter((d) => d.severity === 'error');

describe('normalizeEdit: the mix', () => {
  it('keeps gain_db, fades and from in the canonical edit and the timeline', () => {
    const n = norm(
      [cut({ gain_db: -6.004, fade_in: 0.5, fade_out: 1.25 })],
      [overlay({ from: '00:00:02.500', gain_db: 3, fade_out: 2 })],
    );
    expect(errorsOf(n)).toEqual([]);
    expect(n.edit!.video_series_sequential[0]).toMatchObject({ gain_db: -6, fade_in: 0.5, fade_out: 1.25 });
    expect(n.edit!.audio_overlay[0]).toMatchObject({ from: '00:00:02.500', gain_db: 3, fade_out: 2 });
    expect(n.timeline!.cuts[0]).toMatchObject({ gainDb: -6, fadeInMs: 500, fadeOutMs: 1250 });
    expect(n.timeline!.overlays[0]).toMatchObject({ fromMs: 2500, gainDb: 3, fadeOutMs: 2000 });
  });

  it('leaves out a gain of 0 and fades of 0, as if not given', () => {
    const n = norm(
      [cut({ gain_db: 0, fade_in: 0 }), cut({ gain_db: 0.001 }), cut({ gain_db: -0.004 })],
      [overlay({ from: 0 })],
    );
    for (const s of n.edit!.video_series_sequential) expect(s).not.toHaveProperty('gain_db');
    expect(n.edit!.video_series_sequential[0]).not.toHaveProperty('fade_in');
    expect(n.edit!.audio_overlay[0]).not.toHaveProperty('from');
    expect(toRenderPlan(n.timeline!).cuts[0]).not.toHaveProperty('gainDb');
  });

  it('refuses a gain out of range or not a number, a negative fade, fades longer than the item and a bad from, at their paths', () => {
    const n = norm(
      [cut({ gain_db: 25 }), cut({ gain_db: '6' }), cut({ fade_in: -1 }), cut({ fade_in: 3, fade_out: 1.5 })],
      [overlay({ from: 'soon' }), overlay({ fade_in: 5 })],
    );
    expect(errorsOf(n).map((d) => d.path)).toEqual([
      '/video_series_sequential/0/gain_db',
      '/video_series_sequential/1/gain_db',
      '/video_series_sequential/2/fade_in',
      '/video_series_sequential/3/fade_out',
      '/audio_overlay/0/from',
      '/audio_overlay/1/fade_in',
    ]);
    expect(errorsOf(n)[3]!.message).toMatch(/fades \(4\.5 ?s\) are longer than the cut \(4 ?s\)/);
    expect(errorsOf(norm([cut({ fade_in: 1e300 })]))[0]!.message).toBe('the fades are longer than the cut (4 s)');
    expect(errorsOf(n)[5]!.message).toMatch(/longer than the overlay/);
  });
});

describe('normalizeEdit: roles and ducking', () => {
  it('ducks music by 12 dB unless told otherwise, 0 not at all, and refuses an unknown role or a duck out of range', () => {
    const n = norm(
      [cut()],
      [
        overlay({ role: 'music' }),
        overlay({ role: 'music', duck_db: 0 }),
        overlay({ role: 'music', duck_db: 6.5 }),
        overlay({ role: 'effects' }),
        overlay({ role: 'score' }),
        overlay({ role: 'music', duck_db: 50 }),
      ],
    );
    expect(errorsOf(n).map((d) => d.path)).toEqual(['/audio_overlay/4/role', '/audio_overlay/5/duck_db']);
    const o = normalizeEdit({
      video_series_sequential: [cut()],
      audio_overlay: [
        overlay({ role: 'music' }),
        overlay({ role: 'music', duck_db: 0 }),
        overlay({ role: 'music', duck_db: 6.5 }),
        overlay({ role: 'effects' }),
      ],
    });
    expect(o.timeline!.overlays.map((x) => [x.role, x.duckDb])).toEqual([
      ['music', 12],
      ['music', undefined],
      ['music', 6.5],
      ['effects', undefined],
    ]);
    expect(o.edit!.audio_overlay.map((x) => x.duck_db)).toEqual([undefined, 0, 6.5, undefined]);
  });

  it('warns that duck_db does nothing on an overlay that is not music', () => {
    const n = norm([cut()], [overlay({ duck_db: 6 })]);
    expect(n.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', path: '/audio_overlay/0/duck_db' })]);
  });

  it('plans a duck only where speech is given, with the speech near the overlay from its start', () => {
    const n = norm([cut()], [{ ...overlay({ role: 'music' }), audio_start_time: 1, audio_end_time: 3 }]);
    expect(toRenderPlan(n.timeline!).overlays[0]).not.toHaveProperty('duck');
    const plan = toRenderPlan(n.timeline!, {
      // (Pauses longer than the duck's hold, 1.5 s: none joined.)
      speech: [
        { from: 0.2, to: 0.5 },
        { from: 2.1, to: 2.4 },
        { from: 3.95, to: 4.2 },
        { from: 6, to: 7 },
      ],
    });
    expect(plan.overlays[0]!.duck).toEqual({
      db: 12,
      speech: [
        { from: -0.8, to: -0.5 },
        { from: 1.1, to: 1.4 },
        { from: 2.95, to: 3.2 },
      ],
    });
  });
});

describe('toRenderPlan: the mix', () => {
  it('carries gain, fades and from in seconds to the cuts and overlays that have them', () => {
    const n = norm([cut({ gain_db: -12, fade_in: 0.25 }), cut()], [overlay({ from: 1.5, fade_out: 0.75 })]);
    const plan = toRenderPlan(n.timeline!);
    expect(plan.cuts[0]).toMatchObject({ gainDb: -12, fadeInSec: 0.25 });
    expect(plan.cuts[1]).not.toHaveProperty('gainDb');
    expect(plan.cuts[1]).not.toHaveProperty('fadeInSec');
    expect(plan.overlays[0]).toMatchObject({ fromSec: 1.5, fadeOutSec: 0.75 });
  });
});

describe('the service form', () => {
  it('scales every window and covers the spans between them at the factor', () => {
    const tc = (s: number) => `00:00:${s.toFixed(3).padStart(6, '0')}`;
    const out = scaleLevels(
      [
        { audio_level: 0.8, start_time: tc(2), end_time: tc(3) },
        { audio_level: 0, start_time: tc(5), end_time: tc(6) },
      ],
      1000,
      6000,
      0.5,
    );
    expect(out).toEqual([
      { audio_level: 0.5, start_time: tc(1), end_time: tc(2) },
      { audio_level: 0.4, start_time: tc(2), end_time: tc(3) },
      { audio_level: 0.5, start_time: tc(3), end_time: tc(5) },
      { audio_level: 0, start_time: tc(5), end_time: tc(6) },
    ]);
  });

  it('folds a gain under 0 dB into levels, drops the rest with a warning each, and leaves a plain edit as it is', () => {
    const edit = norm(
      [cut({ gain_db: -20 }), cut({ gain_db: 6, fade_out: 1 }), cut()],
      [overlay({ from: 2, fade_in: 1 }), overlay({ role: 'music' }), overlay({ role: 'music', duck_db: 0 })],
    ).edit as Edit;
    const { edit: sent, warnings } = forService(edit);
    expect(sent.video_series_sequential[0]!.audio_levels).toEqual([
      { audio_level: 0.1, start_time: '00:00:10.000', end_time: '00:00:14.000' },
    ]);
    expect(sent.video_series_sequential[1]!.audio_levels).toEqual([]);
    for (const s of [...sent.video_series_sequential, ...sent.audio_overlay])
      expect(Object.keys(s).filter((k) => ['gain_db', 'fade_in', 'fade_out', 'from'].includes(k))).toEqual([]);
    // Three cuts, levelled locally (level_dialogue is on unless turned off): the service does not level them.
    expect(warnings.map((w) => w.path)).toEqual([
      '/level_dialogue',
      '/video_series_sequential/1/gain_db',
      '/video_series_sequential/1/fade_out',
      '/audio_overlay/0/fade_in',
      '/audio_overlay/0/from',
      '/audio_overlay/1/role',
    ]);
    expect(sent.audio_overlay[1]).not.toHaveProperty('role');
    const plain = norm([cut()]).edit as Edit;
    expect(forService(plain)).toEqual({ edit: plain, warnings: [] });
  });
});

describe('sound handles (the pause beyond a cut, where a join is crossfaded)', () => {
  it('are kept in the canonical edit, the timeline and the plan, a side of 0 left out, each side at most 1 s', () => {
    const n = norm([
      cut({ sound_handles: { after: 0.0204 } }),
      cut({ sound_handles: { before: 0.02, after: 5 } }),
      cut({ sound_handles: { before: 0, after: 0 } }),
    ]);
    expect(errorsOf(n)).toEqual([]);
    expect(n.edit!.video_series_sequential.map((s) => s.sound_handles)).toEqual([
      { after: 0.02 },
      { before: 0.02, after: 1 },
      undefined,
    ]);
    expect(toRenderPlan(n.timeline!).cuts.map((c) => c.handles)).toEqual([
      { before: 0, after: 0.02 },
      { before: 0.02, after: 1 },
      undefined,
    ]);
  });

  it('refuses a side that is not a number of seconds, at its path', () => {
    const n = norm([cut({ sound_handles: { before: -1 } }), cut({ sound_handles: 0.02 })]);
    expect(errorsOf(n).map((d) => d.path)).toEqual([
      '/video_series_sequential/0/sound_handles/before',
      '/video_series_sequential/1/sound_handles',
    ]);
  });

  it('are not sent to the service, said once', () => {
    const n = norm([cut({ sound_handles: { after: 0.02 } }), cut({ sound_handles: { before: 0.02 } })]);
    const s = forService(n.edit!);
    for (const seg of s.edit.video_series_sequential) expect(seg).not.toHaveProperty('sound_handles');
    expect(s.warnings.filter((w) => /crossfaded/.test(w.message)).map((w) => w.path)).toEqual([
      '/video_series_sequential',
    ]);
  });
});
