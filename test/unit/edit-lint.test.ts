// Every lint rule, with the exact path it reports.
import { describe, expect, it } from 'vitest';
import { composeEdit, resolvePreset } from '../../src/edit/compose.js';
import { lintEdit, type AssetInfo } from '../../src/edit/lint.js';
import { fpsRational } from '../../src/edit/normalize.js';

const V1 = '11111111-1111-4111-8111-111111111111';
const V2 = '22222222-2222-4222-8222-222222222222';
const A1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const IMG = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';

const assets = new Map<string, AssetInfo>([
  [
    V1,
    {
      id: V1,
      kind: 'video',
      facts: { durationMs: 8000, hasVideo: true, hasAudio: true, width: 1920, height: 1080, fps: 30 },
    },
  ],
  [
    V2,
    {
      id: V2,
      kind: 'video',
      facts: { durationMs: 90_000, hasVideo: true, hasAudio: false, width: 1080, height: 1920, fps: 30 },
    },
  ],
  [A1, { id: A1, kind: 'audio', facts: { durationMs: 5000, hasVideo: false, hasAudio: true } }],
  [IMG, { id: IMG, kind: 'image', facts: { hasVideo: true, hasAudio: false, width: 640, height: 480 } }],
]);

type Seg = Record<string, unknown>;
const cut = (over: Seg = {}): Seg => ({
  video_id: V1,
  type: 'videofile',
  video_start_time: '00:00:01.000',
  video_end_time: '00:00:03.000',
  audio_levels: [],
  ...over,
});
const overlay = (over: Seg = {}): Seg => ({
  audio_id: A1,
  type: 'audio',
  audio_start_time: '00:00:00.000',
  audio_end_time: '00:00:02.000',
  audio_levels: [],
  ...over,
});
const edit = (over: Seg = {}): Seg => ({
  video_edit_version: '1.0',
  video_output_format: 'mp4',
  video_output_resolution: '1920x1080',
  video_output_fps: 30,
  video_output_filename: 'out.mp4',
  video_series_sequential: [cut(), cut({ video_start_time: 4, video_end_time: 6 })],
  audio_overlay: [overlay()],
  ...over,
});

function diag(raw: unknown) {
  return lintEdit(raw, assets).diagnostics.map((d) => `${d.severity} ${d.path}`);
}

describe('a sound edit', () => {
  it('is ready, canonical and carries no diagnostics', () => {
    const r = lintEdit(edit(), assets);
    expect(r.diagnostics).toEqual([]);
    expect(r.ready).toBe(true);
    expect(r.edit?.video_series_sequential[1]).toMatchObject({
      video_start_time: '00:00:04.000',
      video_end_time: '00:00:06.000',
    });
    expect(r.timeline?.totalMs).toBe(4000);
    expect(r.timeline?.cuts[1]).toMatchObject({ startMs: 2000, endMs: 4000 });
  });
});

describe('errors, each at its path', () => {
  const cases: [string, Seg, string][] = [
    [
      'a time in seconds where HH:MM:SS is expected is fine, but nonsense is not',
      edit({ video_series_sequential: [cut({ video_start_time: 'soon' })] }),
      'error /video_series_sequential/0/video_start_time',
    ],
    [
      'minutes over 59',
      edit({ video_series_sequential: [cut({ video_end_time: '00:75:00' })] }),
      'error /video_series_sequential/0/video_end_time',
    ],
    [
      'a negative time',
      edit({ video_series_sequential: [cut({ video_start_time: -1 })] }),
      'error /video_series_sequential/0/video_start_time',
    ],
    [
      'an out point before the in point',
      edit({ video_series_sequential: [cut(), cut({ video_start_time: '00:00:05', video_end_time: '00:00:04' })] }),
      'error /video_series_sequential/1/video_end_time',
    ],
    [
      'an out point equal to the in point',
      edit({ video_series_sequential: [cut({ video_start_time: 2, video_end_time: 2 })] }),
      'error /video_series_sequential/0/video_end_time',
    ],
    [
      'an out point past the end of the clip',
      edit({ video_series_sequential: [cut({ video_end_time: '00:00:09.000' })] }),
      'error /video_series_sequential/0/video_end_time',
    ],
    [
      'an in point past the end of the clip',
      edit({ video_series_sequential: [cut({ video_start_time: 8.5, video_end_time: 9 })] }),
      'error /video_series_sequential/0/video_start_time',
    ],
    [
      'an unknown asset',
      edit({ video_series_sequential: [cut({ video_id: '99999999-9999-4999-8999-999999999999' })] }),
      'error /video_series_sequential/0/video_id',
    ],
    [
      'an audio asset used as video',
      edit({ video_series_sequential: [cut(), cut({ video_id: A1 })] }),
      'error /video_series_sequential/1/video_id',
    ],
    [
      'an image used as video',
      edit({ video_series_sequential: [cut({ video_id: IMG })] }),
      'error /video_series_sequential/0/video_id',
    ],
    [
      'a video used as an overlay',
      edit({ audio_overlay: [overlay({ audio_id: V1 })] }),
      'error /audio_overlay/0/audio_id',
    ],
    [
      'an unknown overlay asset',
      edit({ audio_overlay: [overlay({ audio_id: '99999999-9999-4999-8999-999999999999' })] }),
      'error /audio_overlay/0/audio_id',
    ],
    [
      'an audio level above 1',
      edit({ video_series_sequential: [cut({ audio_levels: [{ audio_level: 1.5, start_time: 1, end_time: 2 }] })] }),
      'error /video_series_sequential/0/audio_levels/0/audio_level',
    ],
    [
      'an audio level below 0',
      edit({ audio_overlay: [overlay({ audio_levels: [{ audio_level: -0.1, start_time: 0, end_time: 1 }] })] }),
      'error /audio_overlay/0/audio_levels/0/audio_level',
    ],
    [
      'an audio level given as a string',
      edit({ video_series_sequential: [cut({ audio_levels: [{ audio_level: '0.5', start_time: 1, end_time: 2 }] })] }),
      'error /video_series_sequential/0/audio_levels/0/audio_level',
    ],
    [
      'a level window outside its cut (source clock)',
      edit({ video_series_sequential: [cut({ audio_levels: [{ audio_level: 0.5, start_time: 0, end_time: 2 }] })] }),
      'error /video_series_sequential/0/audio_levels/0',
    ],
    [
      'a level window outside its overlay (timeline clock)',
      edit({ audio_overlay: [overlay({ audio_levels: [{ audio_level: 0.5, start_time: 1, end_time: 3 }] })] }),
      'error /audio_overlay/0/audio_levels/0',
    ],
    [
      'overlapping level windows',
      edit({
        video_series_sequential: [
          cut({
            audio_levels: [
              { audio_level: 0.5, start_time: 1, end_time: 2.5 },
              { audio_level: 0, start_time: 2, end_time: 3 },
            ],
          }),
        ],
      }),
      'error /video_series_sequential/0/audio_levels/1',
    ],
    [
      'a level window ending before it starts',
      edit({
        video_series_sequential: [cut({ audio_levels: [{ audio_level: 0.5, start_time: 2.5, end_time: 1.5 }] })],
      }),
      'error /video_series_sequential/0/audio_levels/0/end_time',
    ],
    [
      'an overlay running past the end of the timeline',
      edit({ audio_overlay: [overlay({ audio_end_time: '00:00:04.500' })] }),
      'error /audio_overlay/0/audio_end_time',
    ],
    [
      'an overlay starting after the timeline',
      edit({ audio_overlay: [overlay({ audio_start_time: 5, audio_end_time: 6 })] }),
      'error /audio_overlay/0/audio_start_time',
    ],
    [
      'an overlay ending before it starts',
      edit({ audio_overlay: [overlay({ audio_start_time: 2, audio_end_time: 1 })] }),
      'error /audio_overlay/0/audio_end_time',
    ],
    [
      'a resolution that is not WxH',
      edit({ video_output_resolution: 'full-hd please' }),
      'error /video_output_resolution',
    ],
    ['an odd resolution', edit({ video_output_resolution: '1921x1080' }), 'error /video_output_resolution'],
    ['a resolution beyond 8K', edit({ video_output_resolution: '8192x4320' }), 'error /video_output_resolution'],
    ['fps of 0', edit({ video_output_fps: 0 }), 'error /video_output_fps'],
    ['fps over 120', edit({ video_output_fps: 240 }), 'error /video_output_fps'],
    ['fps of 1e-9', edit({ video_output_fps: 1e-9 }), 'error /video_output_fps'],
    ['fps below 1', edit({ video_output_fps: 0.5 }), 'error /video_output_fps'],
    [
      'a cut shorter than one frame',
      edit({ video_series_sequential: [cut(), cut({ video_start_time: 4, video_end_time: 4.02 })], audio_overlay: [] }),
      'error /video_output_fps',
    ],
    [
      'an fps too low for the shortest cut',
      edit({
        video_series_sequential: [cut({ video_start_time: 0, video_end_time: 0.5 })],
        audio_overlay: [],
        video_output_fps: 1,
      }),
      'error /video_output_fps',
    ],
    ['fps as a string', edit({ video_output_fps: '30' }), 'error /video_output_fps'],
    ['an empty timeline', edit({ video_series_sequential: [], audio_overlay: [] }), 'error /video_series_sequential'],
    ['a file name with a path', edit({ video_output_filename: '../../etc/out.mp4' }), 'error /video_output_filename'],
    ['a file name with a Windows path', edit({ video_output_filename: 'C:\\out.mp4' }), 'error /video_output_filename'],
    [
      'a file name with control characters',
      edit({ video_output_filename: 'out\n.mp4' }),
      'error /video_output_filename',
    ],
    ['a file name with another extension', edit({ video_output_filename: 'out.mov' }), 'error /video_output_filename'],
    ['an output format other than mp4', edit({ video_output_format: 'webm' }), 'error /video_output_format'],
    [
      'an audio segment in the video series',
      edit({ video_series_sequential: [cut({ type: 'audio' })] }),
      'error /video_series_sequential/0/type',
    ],
    [
      'a missing video id',
      edit({ video_series_sequential: [cut({ video_id: undefined })] }),
      'error /video_series_sequential/0/video_id',
    ],
    [
      'a crop zoom out of range',
      edit({ video_series_sequential: [cut({ crop: { zoom: 20, position_x: 0, position_y: 0 } })] }),
      'error /video_series_sequential/0/crop/zoom',
    ],
  ];
  it.each(cases)('%s', (_name, raw, expected) => {
    const r = lintEdit(raw, assets);
    expect(r.diagnostics.map((d) => `${d.severity} ${d.path}`)).toContain(expected);
    expect(r.ready).toBe(false);
    expect(r.edit).toBeUndefined();
    for (const d of r.diagnostics) expect(d.message.length).toBeGreaterThan(10);
  });
});

describe('frame rate against the cuts', () => {
  it('names the shortest cut when a frame outlasts it', () => {
    const r = lintEdit(
      edit({ video_series_sequential: [cut(), cut({ video_start_time: 4, video_end_time: 4.02 })], audio_overlay: [] }),
      assets,
    );
    const d = r.diagnostics.find((x) => x.path === '/video_output_fps')!;
    expect(d.message).toBe(
      'at 30 fps a frame lasts 0.033 s, longer than cut 1 (/video_series_sequential/1, 0.02 s): it would show no frame',
    );
    expect(d.hint).toBe('lengthen that cut to at least 0.034 s, or raise video_output_fps');
  });
  it('accepts a cut of exactly one frame, and 1 fps for cuts of a second', () => {
    expect(
      diag(
        edit({
          video_series_sequential: [cut({ video_start_time: 4, video_end_time: 4.04 })],
          audio_overlay: [],
          video_output_fps: 25,
        }),
      ),
    ).toEqual([]);
    expect(
      diag(
        edit({
          video_series_sequential: [cut({ video_start_time: 0, video_end_time: 1 })],
          audio_overlay: [],
          video_output_fps: 1,
        }),
      ),
    ).toEqual([]);
  });
});

describe('warnings', () => {
  it('an edit over 10 minutes', () => {
    const long = Array.from({ length: 8 }, () => cut({ video_id: V2, video_start_time: 0, video_end_time: 89 }));
    expect(
      diag(edit({ video_series_sequential: long, audio_overlay: [], video_output_resolution: '1080x1920' })),
    ).toContain('warning /video_series_sequential');
  });
  it('an output aspect ratio different from the sources, once per source shape', () => {
    expect(
      diag(edit({ video_series_sequential: [cut({ video_id: V2 }), cut({ video_id: V2 })], audio_overlay: [] })),
    ).toEqual(['warning /video_output_resolution']);
  });
  it('no aspect warning for a cropped cut', () => {
    expect(
      diag(
        edit({
          video_series_sequential: [cut({ video_id: V2, crop: { zoom: 1, position_x: 0, position_y: 0 } })],
          audio_overlay: [],
        }),
      ),
    ).toEqual([]);
  });
  it('an overlay window longer than its audio', () => {
    const r = lintEdit(
      edit({
        video_series_sequential: [cut({ video_start_time: 0, video_end_time: 8 })],
        audio_overlay: [overlay({ audio_end_time: 7 })],
      }),
      assets,
    );
    expect(r.diagnostics.map((d) => `${d.severity} ${d.path}`)).toEqual(['warning /audio_overlay/0/audio_end_time']);
    expect(r.ready).toBe(true);
  });
  it('an unknown top-level field, which is left out', () => {
    const r = lintEdit(edit({ transitions: 'crossfade' }), assets);
    expect(r.diagnostics.map((d) => `${d.severity} ${d.path}`)).toEqual(['warning /transitions']);
    expect(r.edit).not.toHaveProperty('transitions');
  });
  it('errors come before warnings', () => {
    const r = lintEdit(edit({ transitions: 1, video_output_fps: 0 }), assets);
    expect(r.diagnostics.map((d) => d.severity)).toEqual(['error', 'warning']);
  });
});

describe('structure only (no assets known)', () => {
  it('still finds what needs no media, and skips what does', () => {
    const r = lintEdit(edit({ video_series_sequential: [cut({ video_end_time: '00:10:00' })], audio_overlay: [] }));
    expect(r.diagnostics).toEqual([]);
    expect(r.ready).toBe(true);
  });
  it('refuses what is not an edit at all', () => {
    expect(lintEdit('cut it nicely').diagnostics[0]).toMatchObject({ severity: 'error', path: '' });
  });
});

describe('compose', () => {
  it('turns clips and overlays into an edit, volume into levels, and ends overlays with their audio', () => {
    const raw = composeEdit(
      {
        clips: [
          { asset_id: V1, start: 1, end: '00:00:03' },
          { asset_id: V1, start: '4', end: 6, volume: 0 },
        ],
        overlays: [{ asset_id: A1, at: 0.5 }],
        resolution: 'vertical',
        fps: 29.97,
      },
      new Map([[A1, 1.2]]),
    );
    const r = lintEdit(raw);
    expect(r.ready).toBe(true);
    expect(r.edit).toMatchObject({
      video_output_resolution: '1080x1920',
      video_output_fps: 29.97,
      video_output_filename: 'cutroom-edit.mp4',
      video_series_sequential: [
        { video_id: V1, video_start_time: '00:00:01.000', video_end_time: '00:00:03.000', audio_levels: [] },
        {
          video_start_time: '00:00:04.000',
          video_end_time: '00:00:06.000',
          audio_levels: [{ audio_level: 0, start_time: '00:00:04.000', end_time: '00:00:06.000' }],
        },
      ],
      audio_overlay: [{ audio_id: A1, audio_start_time: '00:00:00.500', audio_end_time: '00:00:01.700' }],
    });
  });
  it('ends an overlay at the end of the timeline when its audio is longer or unmeasured', () => {
    const raw = composeEdit({ clips: [{ asset_id: V1, start: 0, end: 4 }], overlays: [{ asset_id: A1, at: 1 }] });
    expect(lintEdit(raw).edit?.audio_overlay[0]?.audio_end_time).toBe('00:00:04.000');
  });
  it('knows the resolution presets and leaves other values to the linter', () => {
    expect(resolvePreset('720p')).toBe('1280x720');
    expect(resolvePreset('Square')).toBe('1080x1080');
    expect(resolvePreset(undefined)).toBe('1920x1080');
    expect(resolvePreset('800x600')).toBe('800x600');
  });
  it('keeps NTSC frame rates exact', () => {
    expect(fpsRational(29.97)).toMatchObject({ num: 30000, den: 1001 });
    expect(fpsRational(23.976)).toMatchObject({ num: 24000, den: 1001 });
    expect(fpsRational(25)).toMatchObject({ num: 25, den: 1 });
    expect(fpsRational(12.5)).toMatchObject({ num: 25, den: 2 });
  });
});

describe('an output larger than every source', () => {
  it("suggests the output's own shape at the sources' scale, not a source's size (a vertical cut of 4:3 stays vertical)", () => {
    const small = new Map<string, AssetInfo>([
      [
        V1,
        {
          id: V1,
          kind: 'video',
          facts: { durationMs: 8000, hasVideo: true, hasAudio: true, width: 768, height: 576, fps: 10 },
        },
      ],
      [A1, assets.get(A1)!],
    ]);
    const up = (resolution: string, over: Seg = {}) =>
      lintEdit(
        edit({ video_output_resolution: resolution, video_series_sequential: [cut(over)] }),
        small,
      ).diagnostics.find((d) => d.path === '/video_output_resolution' && /upscales/.test(d.message));
    // Before: resolution "768x576", which would undo the 9:16 frame.
    expect(up('1080x1920', { crop: { zoom: 1, position_x: 0.5, position_y: 0.5 } })?.hint).toMatch(
      /^resolution "324x576"/,
    );
    // Cuts that fit inside the frame show the whole source, with bars.
    expect(up('1920x1080')?.hint).toMatch(/^resolution "1024x576"/);
  });
});
