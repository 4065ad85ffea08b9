// import_edit's mapping of a timeline file's media to assets by hand (media_map), and what it says when a name is
// shared by several assets: pure functions of interchange/to-edit.ts.
import { describe, expect, it } from 'vitest';
import type { ImportedTimeline } from '../../src/interchange/document.js';
import { resolveMedia, toEditDraft, type AssetCandidate } from '../../src/interchange/to-edit.js';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';
const assets: AssetCandidate[] = [
  { id: A, kind: 'video', names: ['take.mp4', A], url: '/data/media/a.mp4' },
  { id: B, kind: 'video', names: ['take.mp4', B], url: '/data/media/b.mp4' },
  { id: C, kind: 'audio', names: ['voice.wav', C], url: '/data/media/c.wav' },
];

const timeline = (names: string[][], url?: string): ImportedTimeline => ({
  format: 'edl',
  fps: { num: 25, den: 1 },
  cuts: names.map((n, i) => ({
    media: { names: n, ...(url ? { url } : {}) },
    sourceInSec: 0,
    durationSec: 1,
    levels: [],
    place: `event ${i + 1}`,
  })),
  overlays: [],
  notes: [],
});

describe('media_map', () => {
  it('maps by a name, a file name or a name without extension, or a path, before anything the file says', () => {
    expect(resolveMedia({ names: ['interview final.mov'] }, assets, { 'interview final.mov': A })).toMatchObject({
      asset: { id: A },
      mapKey: 'interview final.mov',
    });
    expect(resolveMedia({ names: ['interview final.mov'] }, assets, { 'interview final': B }).asset?.id).toBe(B);
    expect(
      resolveMedia({ names: [], url: 'file:///Volumes/cards/A001/clip%201.mov' }, assets, { 'clip 1.mov': C }).asset
        ?.id,
    ).toBe(C);
    expect(
      resolveMedia({ names: [], url: 'file:///Volumes/cards/A001/clip%201.mov' }, assets, {
        '/Volumes/cards/A001/clip 1.mov': A,
      }).asset?.id,
    ).toBe(A);
    // The map wins over the cutroom id the file carries: the person mapping it knows better.
    expect(resolveMedia({ assetId: B, names: ['x'] }, assets, { x: A }).asset?.id).toBe(A);
    expect(resolveMedia({ names: ['y'] }, assets, { x: A }).asset).toBeUndefined();
  });

  it('a name two assets share chooses none, and the note names both and how to choose; a key that names nothing is a warning', () => {
    expect(resolveMedia({ names: ['take.mp4'] }, assets)).toEqual({
      ambiguous: { name: 'take.mp4', assets: [assets[0], assets[1]] },
    });
    const { draft, notes } = toEditDraft(timeline([['take.mp4'], ['voice.wav']]), assets, {}, { 'tkae.mp4': A });
    expect(draft.video_series_sequential.map((c) => c.video_id)).toEqual(['unmapped:event 1', C]);
    const shared = notes.find((n) => n.cut === 0)!;
    expect(shared.severity).toBe('error');
    expect(shared.message).toBe(
      `its media ("take.mp4") matches 2 assets: ${A} (take.mp4), ${B} (take.mp4); choose one with media_map: {"take.mp4": "<asset id>"}`,
    );
    expect(notes.find((n) => n.place === 'media_map')).toMatchObject({
      severity: 'warning',
      message: expect.stringContaining('"tkae.mp4" names no clip\'s media in the file'),
    });
    const chosen = toEditDraft(timeline([['take.mp4']]), assets, {}, { 'take.mp4': B });
    expect(chosen.draft.video_series_sequential.map((c) => c.video_id)).toEqual([B]);
    expect(chosen.mapped).toEqual([`cut 1 (event 1): asset ${B} (take.mp4), found by media_map "take.mp4"`]);
    expect(chosen.notes).toEqual([]);
  });
});
