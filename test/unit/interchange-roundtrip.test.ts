// Export then import gives back the same edit, for any edit the tools accept: the same cuts from the same
// assets, starting on the same source frame and covering the same output frames; overlays on the same place;
// the same levels where the format carries them (OTIO, FCPXML). Property tests (fast-check) for each format,
// and golden files for a few edits (29.97 fps, an overlay, level windows) so that a writer change is seen.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lintEdit } from '../../src/edit/lint.js';
import type { Timeline } from '../../src/edit/normalize.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import {
  exportDocument,
  normaliseLevels,
  type ExchangeMedia,
  type ImportedTimeline,
} from '../../src/interchange/document.js';
import { framesToDropTimecode, readEdl, timecodeToFrames, writeEdl } from '../../src/interchange/edl.js';
import { readFcpxml, writeFcpxml } from '../../src/interchange/fcpxml.js';
import { readOtio, writeOtio } from '../../src/interchange/otio.js';
import { toEditDraft, type AssetCandidate } from '../../src/interchange/to-edit.js';
import { cutClock } from '../../src/edit/cut-clock.js';

const GOLDEN = join(import.meta.dirname, '../fixtures/interchange');
type Format = 'otio' | 'fcpxml' | 'edl';

const RATES = [
  { num: 24, den: 1 },
  { num: 25, den: 1 },
  { num: 30, den: 1 },
  { num: 30000, den: 1001 },
  { num: 24000, den: 1001 },
  { num: 60, den: 1 },
];
const FPS = [24, 25, 29.97, 30, 23.976, 60];
const VIDEO = [
  '11111111-1111-4111-8111-111111111111',
  '22222222-2222-4222-8222-222222222222',
  '33333333-3333-4333-8333-333333333333',
];
const AUDIO = ['44444444-4444-4444-8444-444444444444', '55555555-5555-4555-8555-555555555555'];

function mediaFor(rates: ({ num: number; den: number } | undefined)[]): Map<string, ExchangeMedia> {
  const m = new Map<string, ExchangeMedia>();
  VIDEO.forEach((id, i) =>
    m.set(id, {
      assetId: id,
      name: `clip ${i + 1}.mp4`,
      url: `file:///media/clip%20${i + 1}.mp4`,
      ...(rates[i] ? { rate: rates[i] } : {}),
      durationMs: 3_600_000,
      hasVideo: true,
      hasAudio: true,
      width: 1280,
      height: 720,
    }),
  );
  AUDIO.forEach((id, i) =>
    m.set(id, {
      assetId: id,
      name: `voice ${i + 1}.m4a`,
      url: `file:///media/voice%20${i + 1}.m4a`,
      durationMs: 600_000,
      hasVideo: false,
      hasAudio: true,
    }),
  );
  return m;
}

const candidates = (media: Map<string, ExchangeMedia>): AssetCandidate[] =>
  [...media.values()].map((m) => ({
    id: m.assetId,
    kind: m.hasVideo ? 'video' : 'audio',
    names: [m.name],
    url: decodeURIComponent(new URL(m.url).pathname),
    ...(m.rate ? { rate: m.rate } : {}),
  }));

const levelArb = (fromMs: number, toMs: number) =>
  fc
    .array(
      fc.record({
        level: fc.integer({ min: 0, max: 100 }).map((n) => n / 100),
        a: fc.integer({ min: fromMs - 500, max: toMs + 500 }),
        b: fc.integer({ min: 1, max: 4000 }),
      }),
      { maxLength: 3 },
    )
    .map((ws) =>
      ws.map((w) => ({
        audio_level: w.level,
        start_time: Math.max(0, w.a) / 1000,
        end_time: (Math.max(0, w.a) + w.b) / 1000,
      })),
    );

/** Any edit the tools accept: 1-8 cuts of at least a few frames, 0-3 overlays, level windows anywhere. */
const editArb = fc
  .record({
    fps: fc.constantFrom(...FPS),
    cuts: fc.array(
      fc.record({
        video: fc.integer({ min: 0, max: 2 }),
        inMs: fc.integer({ min: 0, max: 600_000 }),
        lenMs: fc.integer({ min: 300, max: 20_000 }),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    overlays: fc.array(
      fc.record({
        audio: fc.integer({ min: 0, max: 1 }),
        atFrac: fc.double({ min: 0, max: 0.9, noNaN: true }),
        lenMs: fc.integer({ min: 200, max: 30_000 }),
      }),
      { maxLength: 3 },
    ),
    seed: fc.integer(),
  })
  .chain((e) =>
    fc.record({
      e: fc.constant(e),
      cutLevels: fc.tuple(...e.cuts.map((c) => levelArb(c.inMs, c.inMs + c.lenMs))),
      overlayLevels: fc.tuple(...e.overlays.map(() => levelArb(0, 30_000))),
    }),
  )
  .map(({ e, cutLevels, overlayLevels }) => {
    const total = e.cuts.reduce((s, c) => s + c.lenMs, 0);
    return {
      video_output_fps: e.fps,
      video_output_resolution: '1280x720',
      video_series_sequential: e.cuts.map((c, i) => ({
        video_id: VIDEO[c.video]!,
        video_start_time: c.inMs / 1000,
        video_end_time: (c.inMs + c.lenMs) / 1000,
        audio_levels: cutLevels[i],
      })),
      // Overlays inside the pictures (the timeline less a frame: its cuts round to frames), as an edit must have
      // them to be exported; one left past them comes back cut at their end (tested below).
      audio_overlay: e.overlays.map((o, k) => {
        const at = Math.min(Math.round(o.atFrac * total), total - 100);
        const len = Math.min(o.lenMs, total - at - 50);
        return {
          audio_id: AUDIO[o.audio]!,
          audio_start_time: at / 1000,
          audio_end_time: (at + len) / 1000,
          audio_levels: overlayLevels[k]!.map((l) => ({
            ...l,
            start_time: l.start_time + at / 1000,
            end_time: l.end_time + at / 1000,
          })),
        };
      }),
    };
  });

function timelineOf(raw: unknown): Timeline {
  const r = lintEdit(raw);
  if (!r.timeline) throw new Error(`not an edit: ${JSON.stringify(r.diagnostics.slice(0, 3))}`);
  return r.timeline;
}

function write(format: Format, t: Timeline, media: Map<string, ExchangeMedia>): string {
  const doc = exportDocument('round trip', t, media);
  return format === 'otio' ? writeOtio(doc) : format === 'fcpxml' ? writeFcpxml(doc) : writeEdl(doc).text;
}

function read(format: Format, text: string, fps: { num: number; den: number }): ImportedTimeline {
  return format === 'otio' ? readOtio(text) : format === 'fcpxml' ? readFcpxml(text) : readEdl(text, fps);
}

/** What must survive: per cut its asset, its first source frame and its output frames; per overlay its place. */
function key(t: Timeline, media: Map<string, ExchangeMedia>, format: Format) {
  const plan = toRenderPlan(t);
  const fps = t.fps.num / t.fps.den;
  return {
    fps: [t.fps.num, t.fps.den],
    cuts: t.cuts.map((c, i) => {
      const rate = media.get(c.assetId)?.rate;
      // With a constant rate: the source frame the render starts on. Without one: the in point itself, in the
      // finest unit the format keeps (an EDL counts in the edit's frames).
      const first = rate
        ? Math.round(cutClock({ inSec: c.inMs / 1000 }, { frameRate: rate }).inSec * (rate.num / rate.den))
        : format === 'edl'
          ? Math.floor((c.inMs / 1000) * fps + 1e-6)
          : c.inMs;
      return [c.assetId, first, plan.cuts[i]!.frames];
    }),
    // Overlays are mixed, so their order means nothing; FCPXML and EDL list them by place (OTIO keeps the order).
    overlays: t.overlays
      .map((o) =>
        format === 'otio'
          ? [o.assetId, o.startMs, o.endMs]
          : [
              o.assetId,
              Math.round((o.startMs / 1000) * fps),
              Math.max(Math.round((o.startMs / 1000) * fps) + 1, Math.round((o.endMs / 1000) * fps)),
            ],
      )
      .sort((a, b) =>
        format === 'otio'
          ? 0
          : (a[1] as number) - (b[1] as number) ||
            (a[2] as number) - (b[2] as number) ||
            String(a[0]).localeCompare(String(b[0])),
      ),
  };
}

/** Levels over the part of each stream both edits cover, on the stream's own clock (ms from its start). */
function levelsOver(a: Timeline, b: Timeline, media: Map<string, ExchangeMedia>) {
  // The sound a cut plays starts where its picture does: the in point moved to the next source frame (cutClock).
  const played = (c: Timeline['cuts'][number]) => {
    const rate = media.get(c.assetId)?.rate;
    return rate ? Math.ceil(cutClock({ inSec: c.inMs / 1000 }, { frameRate: rate }).inSec * 1000 - 1e-6) : c.inMs;
  };
  const cut = (t: Timeline, i: number, from: number, to: number) => {
    const c = t.cuts[i]!;
    return normaliseLevels(c.levels, from, to).map((l) => ({
      level: Math.round(l.level * 1e4) / 1e4,
      from: l.fromMs,
      to: l.toMs,
    }));
  };
  const overlay = (t: Timeline, k: number, len: number) => {
    const o = t.overlays[k]!;
    return normaliseLevels(
      o.levels.map((l) => ({ ...l, startMs: l.startMs - o.startMs, endMs: l.endMs - o.startMs })),
      0,
      len,
    ).map((l) => ({ level: Math.round(l.level * 1e4) / 1e4, from: l.fromMs, to: l.toMs }));
  };
  const cuts = a.cuts.map((c, i) => {
    const d = b.cuts[i]!;
    const from = Math.max(played(c), played(d));
    const to = Math.min(c.outMs, d.outMs);
    return [cut(a, i, from, to), cut(b, i, from, to)];
  });
  // The same overlay in each (their lists may be in another order: see key).
  const frame = (ms: number) => Math.round((ms / 1000) * (a.fps.num / a.fps.den));
  const order = (t: Timeline) =>
    t.overlays
      .map((o, k) => ({ o, k }))
      .sort(
        (x, y) =>
          frame(x.o.startMs) - frame(y.o.startMs) ||
          frame(x.o.endMs) - frame(y.o.endMs) ||
          x.o.assetId.localeCompare(y.o.assetId) ||
          x.k - y.k,
      );
  const ao = order(a);
  const bo = order(b);
  const overlays = ao.map(({ o, k }, i) => {
    const other = bo[i]!;
    const len = Math.min(o.endMs - o.startMs, other.o.endMs - other.o.startMs);
    return [overlay(a, k, len), overlay(b, other.k, len)];
  });
  return { cuts, overlays };
}

type RawEdit = typeof editArb extends fc.Arbitrary<infer T> ? T : never;

function roundTrip(format: Format, raw: RawEdit, rates: ({ num: number; den: number } | undefined)[]) {
  const media = mediaFor(rates);
  const before = timelineOf(raw);
  const text = write(format, before, media);
  const imported = read(format, text, before.fps);
  const { draft, notes } = toEditDraft(
    imported,
    candidates(media),
    format === 'edl' ? { fps: before.fps.value, resolution: '1280x720' } : {},
  );
  expect(notes.filter((n) => n.severity === 'error')).toEqual([]);
  const after = timelineOf(draft);
  return { before, after, media, text };
}

const ratesArb = fc.array(fc.option(fc.constantFrom(...RATES), { nil: undefined }), { minLength: 3, maxLength: 3 });

/**
 * Edits the property once failed on, run every time. CI's seed 887895096 (fcpxml): an overlay at 0.48 s of a 23.976
 * fps edit is put on frame 12 (0.5005 s) and its window of silence 0-248 ms came back 0-249 ms, the overlay's start
 * and the window's end rounded to milliseconds apart (0.5005 -> 0.500, 0.7485 -> 0.749).
 */
const KNOWN: [RawEdit, ({ num: number; den: number } | undefined)[]][] = [
  [
    {
      video_output_fps: 23.976,
      video_output_resolution: '1280x720',
      video_series_sequential: [{ video_id: VIDEO[0]!, video_start_time: 0, video_end_time: 11.786, audio_levels: [] }],
      audio_overlay: [
        {
          audio_id: AUDIO[0]!,
          audio_start_time: 0.48,
          audio_end_time: 5,
          audio_levels: [{ audio_level: 0, start_time: 0.48, end_time: 0.728 }],
        },
      ],
    },
    [undefined, undefined, undefined],
  ],
];

describe('export then import gives back the same edit', () => {
  for (const format of ['otio', 'fcpxml'] as const) {
    it(`${format}: same cuts, frames, overlay places and levels (property)`, () => {
      fc.assert(
        fc.property(editArb, ratesArb, (raw, rates) => {
          const { before, after, media } = roundTrip(format, raw, rates);
          expect(key(after, media, format)).toEqual(key(before, media, format));
          const levels = levelsOver(before, after, media);
          for (const [a, b] of levels.cuts) expect(b).toEqual(a);
          for (const [a, b] of levels.overlays) expect(b).toEqual(a);
        }),
        { numRuns: 150, examples: KNOWN },
      );
    });
  }

  it('edl: same cuts, frames and overlay places (property; levels are not carried)', () => {
    // An EDL counts source time in the edit's frames: exact for sources whose rate is at most the edit's.
    fc.assert(
      fc.property(editArb, ratesArb, (raw, rates) => {
        const fps = raw.video_output_fps;
        const usable = rates.map((r) => (r && r.num / r.den <= fps + 1e-9 ? r : undefined));
        // Overlays that overlap an earlier one are left out (one audio channel is free): keep them apart here.
        let busy = -1;
        const overlays = [...raw.audio_overlay]
          .sort((a, b) => a.audio_start_time - b.audio_start_time)
          .filter((o) => {
            const keep = Math.round(o.audio_start_time * fps) >= busy;
            if (keep) busy = Math.round(o.audio_end_time * fps);
            return keep;
          });
        const { before, after, media } = roundTrip('edl', { ...raw, audio_overlay: overlays }, usable);
        expect(key(after, media, 'edl')).toEqual(key(before, media, 'edl'));
      }),
      { numRuns: 150 },
    );
  });
});

// ---- Golden files ----

const GOLDEN_EDITS: Record<string, { raw: unknown; rates: ({ num: number; den: number } | undefined)[] }> = {
  // 29.97 fps from 29.97 sources, a voiceover under the whole cut at half level, a dip in cut 2.
  ntsc: {
    raw: {
      video_output_fps: 29.97,
      video_output_resolution: '1920x1080',
      video_series_sequential: [
        { video_id: VIDEO[0], video_start_time: 1.05, video_end_time: 4.2 },
        {
          video_id: VIDEO[1],
          video_start_time: 10,
          video_end_time: 12.5,
          audio_levels: [{ audio_level: 0.25, start_time: 11, end_time: 11.5 }],
        },
        { video_id: VIDEO[0], video_start_time: 30, video_end_time: 33.333 },
      ],
      audio_overlay: [
        {
          audio_id: AUDIO[0],
          audio_start_time: 0.5,
          audio_end_time: 8.5,
          audio_levels: [{ audio_level: 0.5, start_time: 0.5, end_time: 8.5 }],
        },
      ],
    },
    rates: [{ num: 30000, den: 1001 }, { num: 30000, den: 1001 }, undefined],
  },
  // 25 fps from a 25 fps and a 24 fps source, two overlays, a crop.
  pal: {
    raw: {
      video_output_fps: 25,
      video_output_resolution: '1280x720',
      video_series_sequential: [
        {
          video_id: VIDEO[0],
          video_start_time: 0,
          video_end_time: 2,
          crop: { zoom: 1.5, position_x: 0.2, position_y: -0.1 },
        },
        { video_id: VIDEO[1], video_start_time: 5.5, video_end_time: 9 },
      ],
      audio_overlay: [
        { audio_id: AUDIO[0], audio_start_time: 0, audio_end_time: 3 },
        {
          audio_id: AUDIO[1],
          audio_start_time: 2,
          audio_end_time: 5.5,
          audio_levels: [{ audio_level: 0, start_time: 4, end_time: 5.5 }],
        },
      ],
    },
    rates: [{ num: 25, den: 1 }, { num: 24, den: 1 }, undefined],
  },
};

describe('golden files', () => {
  for (const [name, g] of Object.entries(GOLDEN_EDITS)) {
    for (const format of ['otio', 'fcpxml', 'edl'] as const) {
      it(`${name}.${format} is what the writer makes, and reads back to the same edit`, () => {
        const media = mediaFor(g.rates);
        const t = timelineOf(g.raw);
        const text = write(format, t, media);
        const file = join(GOLDEN, `${name}.${format}`);
        if (process.env.UPDATE_GOLDEN) writeFileSync(file, text);
        expect(text).toBe(readFileSync(file, 'utf8'));
        const imported = read(format, text, t.fps);
        const { draft } = toEditDraft(
          imported,
          candidates(media),
          format === 'edl' ? { fps: t.fps.value, resolution: `${t.width}x${t.height}` } : {},
        );
        const back = timelineOf(draft);
        const expected = key(t, media, format);
        // An EDL has one audio channel free for overlays: an overlay overlapping an earlier one is left out.
        if (format === 'edl')
          expected.overlays = expected.overlays.filter(
            (o, k, all) => k === 0 || (o[1] as number) >= (all[k - 1]![2] as number),
          );
        expect(key(back, media, format)).toEqual(expected);
        if (format === 'otio') expect(back.cuts.map((c) => c.crop)).toEqual(t.cuts.map((c) => c.crop));
      });
    }
  }
});

describe('FCPXML is well-formed whatever a media name holds (issue 21, item 6)', () => {
  it('writes control characters, lone surrogates and line breaks in names so that the file still parses', () => {
    const t = timelineOf({
      video_output_fps: 25,
      video_output_resolution: '1280x720',
      video_series_sequential: [{ video_id: VIDEO[0]!, video_start_time: 0, video_end_time: 1 }],
    });
    const media = mediaFor([{ num: 25, den: 1 }]);
    const weird = 'take\u0001one\u0007\tline\nbreak\r\uD800end & "quoted" <tag>\uFFFE';
    media.set(VIDEO[0]!, { ...media.get(VIDEO[0]!)!, name: weird });
    const xml = writeFcpxml(exportDocument('weird \u0000 name', t, media));
    // eslint-disable-next-line no-control-regex -- the characters XML 1.0 cannot carry
    expect(xml).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    const names = [...xml.matchAll(/<asset-clip [^>]*name="([^"]*)"/g)].map((m) => m[1]);
    expect(names).toEqual([
      'take\uFFFDone\uFFFD&#9;line&#10;break&#13;\uFFFDend &amp; &quot;quoted&quot; &lt;tag&gt;\uFFFD',
    ]);
    const back = readFcpxml(xml);
    expect(back.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(back.cuts).toHaveLength(1);
  });
});

describe("an editor's relink (issue 21, item 3)", () => {
  it.each(['otio', 'fcpxml', 'edl'] as const)(
    '%s: a clip whose path names another asset than the id cutroom left plays that asset, and says so',
    (format) => {
      const t = timelineOf({
        video_output_fps: 25,
        video_output_resolution: '1280x720',
        video_series_sequential: [
          { video_id: VIDEO[0]!, video_start_time: 1, video_end_time: 2 },
          { video_id: VIDEO[1]!, video_start_time: 0, video_end_time: 1 },
        ],
      });
      const media = mediaFor([
        { num: 25, den: 1 },
        { num: 25, den: 1 },
        { num: 25, den: 1 },
      ]);
      const text = write(format, t, media);
      // The editor relinked clip 1 to the third clip's file; cutroom's id for asset 1 stays in the file.
      const from = format === 'edl' ? '/media/clip 1.mp4' : 'clip%201.mp4';
      const to = format === 'edl' ? '/media/clip 3.mp4' : 'clip%203.mp4';
      const relinked = text.replace(from, to);
      expect(relinked).not.toBe(text);
      const r = toEditDraft(read(format, relinked, t.fps), candidates(media), {});
      expect(r.draft.video_series_sequential.map((c) => c.video_id)).toEqual([VIDEO[2], VIDEO[1]]);
      expect(r.notes.map((n) => n.message)).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `relinked in the editor: the file still carries cutroom's id of asset ${VIDEO[0]}, but its path .* is asset ${VIDEO[2]}'s`,
          ),
        ),
      );
    },
  );
});

describe("an overlay left past the last picture by an editor's trim (issue 21, item 6)", () => {
  it('ends with the timeline, with a warning, and the edit is ready; one that starts past it is left out', () => {
    const media = mediaFor([{ num: 25, den: 1 }]);
    const cut = (at: number) => ({
      media: { assetId: VIDEO[0]!, names: [] },
      sourceInSec: at,
      durationSec: 2,
      levels: [],
      place: `cut at ${at}`,
    });
    const overlay = (startSec: number, durationSec: number) => ({
      media: { assetId: AUDIO[0]!, names: [] },
      startSec,
      durationSec,
      sourceInSec: 0,
      levels: [],
      place: `overlay at ${startSec}`,
    });
    const r = toEditDraft(
      {
        format: 'otio',
        fps: { num: 25, den: 1 },
        cuts: [cut(0), cut(5)],
        overlays: [overlay(1, 10), overlay(4.5, 2)],
        notes: [],
      },
      candidates(media),
      {},
    );
    expect(r.draft.audio_overlay.map((o) => [o.audio_start_time, o.audio_end_time])).toEqual([[1, 4]]);
    expect(r.notes.map((n) => n.message)).toEqual([
      expect.stringMatching(/^it ran 7\.000 s past the last picture .* it now ends with the timeline at 4 s$/),
      expect.stringMatching(/^it starts at 4\.5 s, where the pictures have ended \(4 s\); it was left out$/),
    ]);
    expect(r.notes.every((n) => n.severity === 'warning')).toBe(true);
    expect(lintEdit(r.draft).ready).toBe(true);
  });
});

describe('OTIO clip lengths (issue 21, item 5)', () => {
  it("are whole frames at each clip's rate, whatever the sources' rates (property)", () => {
    fc.assert(
      fc.property(
        editArb,
        fc.tuple(fc.constantFrom(...RATES), fc.constantFrom(...RATES), fc.constantFrom(...RATES)),
        (raw, rates) => {
          const t = timelineOf(raw);
          const doc = JSON.parse(write('otio', t, mediaFor(rates))) as {
            tracks: {
              children: { children: { OTIO_SCHEMA: string; source_range: { duration: { value: number } } }[] }[];
            };
          };
          for (const track of doc.tracks.children) {
            for (const item of track.children.filter((i) => i.OTIO_SCHEMA === 'Clip.2'))
              expect(
                Math.abs(item.source_range.duration.value - Math.round(item.source_range.duration.value)),
              ).toBeLessThan(1e-9);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('EDL source timecodes of sources at another rate (issue 21, item 4)', () => {
  it("count in the source's own frames, as conform tools read them, and read back to the same frame", () => {
    const t = timelineOf({
      video_output_fps: 30,
      video_output_resolution: '1280x720',
      video_series_sequential: [{ video_id: VIDEO[0]!, video_start_time: 2.5, video_end_time: 3.5 }],
    });
    const media = mediaFor([{ num: 24, den: 1 }]);
    const text = writeEdl(exportDocument('rates', t, media)).text;
    // 2.5 s is frame 60 of a 24 fps source: 00:00:02:12; one second of the 30 fps edit is 24 of its frames.
    expect(text).toMatch(/^001 {2}11111111 B {5}C {8}00:00:02:12 00:00:03:12 01:00:00:00 01:00:01:00$/m);
    const back = toEditDraft(readEdl(text, t.fps), candidates(media), {});
    expect(back.draft.video_series_sequential.map((c) => [c.video_start_time, c.video_end_time])).toEqual([[2.5, 3.5]]);
    expect(back.notes.map((n) => n.message).join(' ')).not.toMatch(/speed change/);
    // A real speed change (the source side twice the record side) is still said.
    const fast = text.replace('00:00:03:12', '00:00:04:12');
    expect(toEditDraft(readEdl(fast, t.fps), candidates(media), {}).notes.map((n) => n.message)).toContainEqual(
      expect.stringMatching(/a speed change/),
    );
  });
});

describe('drop-frame EDLs (issue 21, item 1)', () => {
  it('label every frame once, in order, as drop-frame counting reads them back (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 * 3600 * 30 - 1 }), fc.constantFrom(30, 60), (f, base) => {
        const tc = framesToDropTimecode(f, base);
        expect(tc).toMatch(/^\d{2}:\d{2}:\d{2};\d{2}$/);
        expect(timecodeToFrames(tc, base, true)).toBe(f);
      }),
      { numRuns: 2000 },
    );
    // The labels skipped: 00:01:00;00 and ;01 do not exist at 29.97; 00:10:00;00 does.
    expect(framesToDropTimecode(1799, 30)).toBe('00:00:59;29');
    expect(framesToDropTimecode(1800, 30)).toBe('00:01:00;02');
    expect(framesToDropTimecode(17982, 30)).toBe('00:10:00;00');
  });

  it("count drop-frame where the edit is at 29.97 and a source's timecode is drop-frame, and read back to the same frames", () => {
    const t = timelineOf({
      video_output_fps: 29.97,
      video_output_resolution: '1280x720',
      video_series_sequential: [{ video_id: VIDEO[0]!, video_start_time: 2, video_end_time: 4 }],
    });
    const media = mediaFor([{ num: 30000, den: 1001 }]);
    // The source's timecode: 01:00:10;00, drop-frame.
    const tcFrame = timecodeToFrames('01:00:10;00', 30, true)!;
    media.set(VIDEO[0]!, { ...media.get(VIDEO[0]!)!, timecodeFrame: tcFrame, timecodeDrop: true });
    const text = writeEdl(exportDocument('df', t, media)).text;
    expect(text).toContain('FCM: DROP FRAME');
    const event = /^001 .*$/m.exec(text)![0];
    expect(event).toMatch(/01:00:12;0\d 01:00:14;0\d 01:00:00;00 01:00:02;0\d$/);
    const srcIn = timecodeToFrames(event.split(/\s+/)[4]!, 30, true)!;
    // Its frame: the timecode's plus the cut's first frame (2 s at 29.97 is frame 60 after the in point's 59.94).
    expect(srcIn - tcFrame).toBe(Math.ceil((2 * 30000) / 1001 - 1e-6));
    const candidatesWithTc = candidates(media).map((c) =>
      c.id === VIDEO[0] ? { ...c, timecodeSec: (tcFrame * 1001) / 30000 } : c,
    );
    const back = toEditDraft(readEdl(text, t.fps), candidatesWithTc, {});
    expect(back.notes.filter((n) => n.severity === 'error')).toEqual([]);
    const c = back.draft.video_series_sequential[0]!;
    expect(Math.abs(c.video_start_time - 2)).toBeLessThan(1 / 29.97);
  });
});

describe('a drop-frame EDL with a source at another NTSC rate (issue 31, item 9)', () => {
  it('labels that source drop-frame too, as the FCM line says, and reads it back to the same in point', () => {
    const t = timelineOf({
      video_output_fps: 29.97,
      video_output_resolution: '1280x720',
      video_series_sequential: [
        { video_id: VIDEO[0]!, video_start_time: 2, video_end_time: 3 },
        { video_id: VIDEO[1]!, video_start_time: 610, video_end_time: 611 },
      ],
    });
    const media = mediaFor([
      { num: 30000, den: 1001 },
      { num: 60000, den: 1001 },
    ]);
    // The first source's drop-frame timecode makes the list drop-frame.
    media.set(VIDEO[0]!, {
      ...media.get(VIDEO[0]!)!,
      timecodeFrame: timecodeToFrames('01:00:00;00', 30, true)!,
      timecodeDrop: true,
    });
    const text = writeEdl(exportDocument('df', t, media)).text;
    expect(text).toContain('FCM: DROP FRAME');
    // The cut starts on frame 36564 of the 59.94 source (610 s is 36563.4 frames): 00:10:10;00 drop-frame, where
    // non-drop-frame labels say 00:10:09:24; a second of the edit is 60 of its frames.
    expect(text).toMatch(/^002 .* 00:10:10;00 00:10:11;00 01:00:01;00 01:00:02;00$/m);
    const tc = (1800 * 60 - 108) / 30;
    const back = toEditDraft(
      readEdl(text, t.fps),
      candidates(media).map((c) => (c.id === VIDEO[0] ? { ...c, timecodeSec: tc * 1.001 } : c)),
      {},
    );
    expect(back.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(back.draft.video_series_sequential.map((c) => Math.round(c.video_start_time * 59.94))).toEqual([
      Math.round(2 * 59.94),
      Math.ceil(610 * 59.94 - 1e-6),
    ]);
  });
});

describe('the voiceover in FCPXML is anchored to the timeline (issue 21, item 6)', () => {
  it('survives an editor deleting the first cut: the other cuts close up, the voiceover stays where it was', () => {
    const t = timelineOf({
      video_output_fps: 25,
      video_output_resolution: '1280x720',
      video_series_sequential: [
        { video_id: VIDEO[0]!, video_start_time: 0, video_end_time: 2 },
        { video_id: VIDEO[1]!, video_start_time: 1, video_end_time: 3 },
      ],
      audio_overlay: [{ audio_id: AUDIO[0]!, audio_start_time: 0.4, audio_end_time: 3.6, audio_levels: [] }],
    });
    const media = mediaFor([
      { num: 25, den: 1 },
      { num: 25, den: 1 },
    ]);
    const xml = writeFcpxml(exportDocument('anchored', t, media));
    // The editor deletes cut 1 in the storyline; the one after moves up to 0 s, as Final Cut ripples it.
    const edited = xml
      .replace(/ *<asset-clip ref="a1" offset="0s"[^>]*\/>\n/, '')
      .replace(/(<asset-clip ref="a2" offset=")2s"/, '$10s"');
    expect(edited).not.toBe(xml);
    const back = toEditDraft(readFcpxml(edited), candidates(media), {});
    expect(back.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(back.draft.video_series_sequential.map((c) => [c.video_id, c.video_start_time, c.video_end_time])).toEqual([
      [VIDEO[1], 1, 3],
    ]);
    expect(back.draft.audio_overlay.map((o) => [o.audio_id, o.audio_start_time])).toEqual([[AUDIO[0], 0.4]]);
  });
});

describe('sound handles (issue 46, item 3)', () => {
  const t = () =>
    timelineOf({
      video_output_fps: 25,
      video_output_resolution: '1280x720',
      video_series_sequential: [
        { video_id: VIDEO[0]!, video_start_time: 1, video_end_time: 2, sound_handles: { after: 0.02 } },
        { video_id: VIDEO[0]!, video_start_time: 3, video_end_time: 4, sound_handles: { before: 0.015, after: 0.02 } },
      ],
    });
  const media = mediaFor([{ num: 25, den: 1 }]);
  const handles = (format: Format, edit?: (i: ImportedTimeline) => void) => {
    const imported = read(format, write(format, t(), media), t().fps);
    edit?.(imported);
    const r = toEditDraft(imported, candidates(media), {});
    return { handles: r.draft.video_series_sequential.map((c) => c.sound_handles), notes: r.notes };
  };

  it.each(['otio', 'fcpxml'] as const)('%s: come back as they went', (format) => {
    expect(handles(format).handles).toEqual([{ after: 0.02 }, { before: 0.015, after: 0.02 }]);
  });

  it.each(['otio', 'fcpxml'] as const)(
    '%s: a side whose edge an editor moved has none (what lies beyond is not known to be pause), said',
    (format) => {
      // The first clip trimmed by 10 frames at its end; the second's in point moved a frame earlier, into its pause.
      const r = handles(format, (i) => {
        i.cuts[0]!.durationSec -= 0.4;
        i.cuts[1]!.sourceInSec -= 0.04;
        i.cuts[1]!.durationSec += 0.04;
      });
      expect(r.handles).toEqual([undefined, { after: 0.02 }]);
      expect(r.notes.filter((n) => /crossfaded/.test(n.message)).map((n) => [n.cut, n.message])).toEqual([
        [0, expect.stringMatching(/its out point moved/)],
        [1, expect.stringMatching(/its in point moved/)],
      ]);
    },
  );

  it('edl: are not carried', () => {
    expect(handles('edl').handles).toEqual([undefined, undefined]);
  });
});
