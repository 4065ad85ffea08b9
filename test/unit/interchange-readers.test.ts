// Reading timelines as editors and other tools write them, not only cutroom's own: OTIO as OpenTimelineIO's
// adapters write it (Clip.1 and Clip.2, transitions, gaps, time warps, missing media), FCPXML as Resolve exports it
// (tcStart at one hour, connected audio, keyframed volume, retiming, a compound clip), a CMX 3600 EDL with a
// dissolve, a speed line, black and a wipe. The fixtures are hand-written from each format's public description.
// Whatever a reader does not understand becomes a note; nothing throws, whatever the input.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  framesToDropTimecode,
  readEdl,
  readTimecode,
  timecodeToFrames,
  framesToTimecode,
} from '../../src/interchange/edl.js';
import { MAX_FILE_SEC } from '../../src/interchange/document.js';
import { readFcpxml } from '../../src/interchange/fcpxml.js';
import { readOtio } from '../../src/interchange/otio.js';
import { toEditDraft, type AssetCandidate } from '../../src/interchange/to-edit.js';
import { parseXml } from '../../src/interchange/xml.js';

const FOREIGN = join(import.meta.dirname, '../fixtures/interchange/foreign');
const fixture = (name: string) => readFileSync(join(FOREIGN, name), 'utf8');

const ASSETS: AssetCandidate[] = [
  { id: 'aaaaaaaa-0000-4000-8000-000000000001', kind: 'video', names: ['beach.mov'], url: '/footage/beach.mov' },
  {
    id: 'bbbbbbbb-0000-4000-8000-000000000002',
    kind: 'video',
    names: ['city.mp4'],
    url: 'https://cdn.example.com/media/city.mp4?X-Amz-Signature=fresh',
  },
  { id: 'cccccccc-0000-4000-8000-000000000003', kind: 'audio', names: ['Theme & Variations.wav', 'theme.wav'] },
];
const messages = (notes: { message: string }[]) => notes.map((n) => n.message).join('\n');

describe('OTIO as its adapters write it', () => {
  const t = readOtio(fixture('adapter-written.otio'));

  it('reads the clips in order, with their source ranges, and the music on its own track', () => {
    expect(t.name).toBe('Rough cut v3');
    expect(t.fps).toEqual({ num: 24, den: 1 });
    expect(t.cuts.map((c) => [c.media.url ?? null, c.sourceInSec, c.durationSec])).toEqual([
      ['file:///footage/beach.mov', 0.5, 2],
      ['https://cdn.example.com/media/city.mp4?X-Amz-Signature=old', 10, 3],
      [null, 0, 1],
    ]);
    // The first audio track mirrors the picture (the clips' own sound); the music track is an overlay.
    expect(t.overlays.map((o) => [o.media.url, o.startSec, o.durationSec, o.sourceInSec])).toEqual([
      ['/music/theme.wav', 0.5, 4, 0],
    ]);
  });

  it('notes the transition, the gap and the time warp', () => {
    const m = messages(t.notes);
    expect(m).toMatch(/transition \(SMPTE_Dissolve\) became a straight cut/);
    expect(m).toMatch(/gap of 1\.000 s was closed up/);
    expect(m).toMatch(/speed change \(LinearTimeWarp, x2\)/);
  });

  it('maps media by path without the query and by name; a missing reference is an error at its cut', () => {
    const { draft, notes, mapped } = toEditDraft(t, ASSETS);
    expect(draft.video_series_sequential.map((c) => c.video_id.slice(0, 8))).toEqual([
      'aaaaaaaa',
      'bbbbbbbb',
      'unmapped',
    ]);
    expect(draft.audio_overlay.map((o) => o.audio_id.slice(0, 8))).toEqual(['cccccccc']);
    expect(mapped.join('\n')).toMatch(/cut 2 .*found by its path/);
    expect(notes.find((n) => n.severity === 'error')).toMatchObject({
      cut: 2,
      message: expect.stringMatching(/named "lost shot".* matches no asset/),
    });
    expect(draft.video_output_fps).toBe(24);
  });
});

describe('FCPXML as Resolve exports it', () => {
  const t = readFcpxml(fixture('resolve-export.fcpxml'));

  it('places clips on the sequence clock (tcStart at one hour), in source time (asset start at one hour)', () => {
    expect(t.fps).toEqual({ num: 30000, den: 1001 });
    expect([t.width, t.height]).toEqual([1920, 1080]);
    expect(t.cuts.map((c) => [c.media.url, +c.sourceInSec.toFixed(6), +c.durationSec.toFixed(6)])).toEqual([
      ['file:///footage/beach.mov', 1.001, 3.003],
      ['file:///footage/city.mp4', 12.609, 4.004],
      ['file:///footage/beach.mov', 10.01, 2.002],
    ]);
    // A clip's -6 dB is its level over the whole clip.
    expect(t.cuts[0]!.levels).toEqual([
      { level: expect.closeTo(0.501187, 5), fromSec: 1.001, toSec: expect.closeTo(4.004, 9) },
    ]);
  });

  it('reads connected audio as an overlay, with its names and entities decoded, and keyframes as steps', () => {
    expect(t.overlays).toHaveLength(1);
    const o = t.overlays[0]!;
    expect(o.media.names[0]).toBe('Theme & Variations.wav');
    expect(o.media.url).toBe('file:///music/Theme%20&%20Variations.wav');
    expect([o.startSec, +o.durationSec.toFixed(6)]).toEqual([0, 8.008]);
    // 0 dB until 2.002 s, a ramp to -20 dB by 3.003 s (held at its mean), then -20 dB.
    expect(o.levels.map((l) => [+l.level.toFixed(3), +l.fromSec.toFixed(3), +l.toSec.toFixed(3)])).toEqual([
      [0.55, 2.002, 3.003],
      [0.1, 3.003, 8.008],
    ]);
  });

  it('notes the transition, retiming, effect, gap and compound clip', () => {
    const m = messages(t.notes);
    expect(m).toMatch(/transition \(Cross Dissolve\) became a straight cut/);
    expect(m).toMatch(/speed change \(retiming\) was dropped/);
    expect(m).toMatch(/effect \(Gaussian Blur\) was dropped/);
    expect(m).toMatch(/gap of 1\.001 s was closed up/);
    expect(m).toMatch(/<ref-clip> items .* left out/);
    expect(m).toMatch(/volume ramp became a step/);
  });

  it('maps every clip to the project by path and name', () => {
    const assets = [...ASSETS.slice(0, 1), { ...ASSETS[1]!, url: '/footage/city.mp4' }, ASSETS[2]!];
    const { draft, notes } = toEditDraft(t, assets);
    expect(notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(draft.video_output_fps).toBe(29.97);
    expect(
      draft.video_series_sequential.map((c) => [c.video_id.slice(0, 8), c.video_start_time, c.video_end_time]),
    ).toEqual([
      ['aaaaaaaa', 1.001, 4.004],
      ['bbbbbbbb', 12.609, 16.613],
      ['aaaaaaaa', 10.01, 12.012],
    ]);
    expect(draft.audio_overlay[0]).toMatchObject({
      audio_id: ASSETS[2]!.id,
      audio_start_time: 0,
      audio_end_time: 8.008,
    });
  });
});

describe('a CMX 3600 EDL with a dissolve, a speed line, black and a wipe', () => {
  const t = readEdl(fixture('dissolve.edl'), { num: 30, den: 1 });

  it('reads each event with a length as a cut, the dissolve as a cut at its incoming clip', () => {
    expect(t.name).toBe('PROMO_V2');
    expect(t.cuts.map((c) => [c.media.names, c.sourceInSec, c.durationSec])).toEqual([
      [['beach.mov', 'BEACH'], 1, 3],
      [['city.mp4', 'CITY01'], 60, 5],
      [['NOTAREEL'], 0, 2],
    ]);
    expect(t.overlays.map((o) => [o.media.names[0], o.media.url, o.startSec, o.durationSec])).toEqual([
      ['Theme & Variations.wav', '/music/Theme & Variations.wav', 0, 10],
    ]);
  });

  it('notes what it cannot carry, and the lines it did not understand', () => {
    const m = messages(t.notes);
    expect(m).toMatch(/a dissolve became a straight cut/);
    expect(m).toMatch(/speed change \(M2\) was dropped/);
    expect(m).toMatch(/black \(reel BL\) was left out/);
    expect(m).toMatch(/a wipe became a straight cut/);
    expect(m).toMatch(/not understood was skipped: "this line is not an event"/);
  });

  it('counts 29.97 non-drop and drop-frame timecode', () => {
    expect(framesToTimecode(107892, 30)).toBe('00:59:56:12'); // an hour of 29.97 frames, counted non-drop
    expect(timecodeToFrames('00:59:56:12', 30, false)).toBe(107892);
    expect(timecodeToFrames('01:00:00;00', 30, true)).toBe(107892); // drop-frame: the same frame labelled one hour
    expect(timecodeToFrames('00:10:00;00', 30, true)).toBe(17982);
    expect(timecodeToFrames('00:00:00:30', 30, false)).toBeUndefined();
  });
});

describe('nothing a file says makes a reader throw', () => {
  const files = {
    otio: fixture('adapter-written.otio'),
    fcpxml: fixture('resolve-export.fcpxml'),
    edl: fixture('dissolve.edl'),
  };
  const readers = {
    otio: (s: string) => readOtio(s),
    fcpxml: (s: string) => readFcpxml(s),
    edl: (s: string) => readEdl(s, { num: 25, den: 1 }),
  };

  it('reads every truncation of the fixtures to a result with notes', () => {
    for (const [format, text] of Object.entries(files) as [keyof typeof files, string][]) {
      for (let n = 0; n < text.length; n += 97) {
        const t = readers[format](text.slice(0, n));
        expect(Array.isArray(t.cuts) && Array.isArray(t.notes)).toBe(true);
      }
    }
  });

  it('reads any text, and any JSON, without throwing (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.jsonValue({ maxDepth: 5 }), (text, json) => {
        for (const read of Object.values(readers)) read(text);
        readOtio(JSON.stringify(json));
        readOtio(
          JSON.stringify({
            OTIO_SCHEMA: 'Timeline.1',
            tracks: {
              OTIO_SCHEMA: 'Stack.1',
              children: [json, { OTIO_SCHEMA: 'Track.1', kind: 'Video', children: [json] }],
            },
          }),
        );
        readFcpxml(
          `<fcpxml version="1.10"><resources>${text.replace(/[<&]/g, '')}</resources><library><event><project><sequence><spine><asset-clip offset="${text.slice(0, 5)}"/></spine></sequence></project></event></library></fcpxml>`,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('parses XML without reading any DTD or entity it declares', () => {
    const evil =
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd"><!ENTITY a "aaaa">]><fcpxml version="1.10">&amp;</fcpxml>';
    expect(parseXml(evil).text).toBe('&');
    expect(() => parseXml('<fcpxml>&e;</fcpxml>')).toThrow(/unknown entity &e;/);
    expect(() => parseXml('<a><b></a>')).toThrow(/line 1: <\/a> closes <b>/);
    expect(readFcpxml('<fcpxml>&e;</fcpxml>').notes[0]!.message).toMatch(/not well-formed XML: line 1: unknown entity/);
  });
});

describe('levels after an editor trims a clip or moves an overlay', () => {
  const media = (n: number) => ({ assetId: ASSETS[n]!.id, names: [] });
  const timeline = (cut: { sourceInSec: number; durationSec: number }, overlayAt: number) =>
    toEditDraft(
      {
        format: 'otio',
        fps: { num: 25, den: 1 },
        cuts: [
          {
            media: media(0),
            ...cut,
            levels: [{ level: 0.5, fromSec: 1.03, toSec: 2.5 }],
            levelSpan: { fromSec: 1.03, toSec: 2.5 },
            place: 'cut',
          },
        ],
        // Written at 1.0 s for 2 s: full level, with a duck from 1.5 s to 2 s.
        overlays: [
          {
            media: media(2),
            startSec: overlayAt,
            durationSec: 2,
            sourceInSec: 0,
            levels: [
              { level: 1, fromSec: 1, toSec: 1.5 },
              { level: 0.2, fromSec: 1.5, toSec: 2 },
              { level: 1, fromSec: 2, toSec: 3 },
            ],
            levelSpan: { fromSec: 1, toSec: 3 },
            place: 'overlay',
          },
        ],
        notes: [],
      },
      ASSETS,
    ).draft;

  it('a window written for the whole clip covers the whole clip, however it was trimmed', () => {
    const d = timeline({ sourceInSec: 1.2, durationSec: 0.6 }, 1);
    const c = d.video_series_sequential[0]!;
    expect([c.video_start_time, c.video_end_time]).toEqual([1.2, 1.8]);
    expect(c.audio_levels).toEqual([{ audio_level: 0.5, start_time: 1.2, end_time: 1.8 }]);
  });

  it("an overlay's windows move with it", () => {
    // Pictures long enough to hold it where it moved (one left past them would be cut at their end).
    const o = timeline({ sourceInSec: 1.03, durationSec: 5 }, 2.5).audio_overlay[0]!;
    expect([o.audio_start_time, o.audio_end_time]).toEqual([2.5, 4.5]);
    expect(o.audio_levels).toEqual([
      { audio_level: 1, start_time: 2.5, end_time: 3 },
      { audio_level: 0.2, start_time: 3, end_time: 3.5 },
      { audio_level: 1, start_time: 3.5, end_time: 4.5 },
    ]);
  });
});

describe('OTIO as OpenTimelineIO writes it (issue 21, items 2 and 5)', () => {
  const rt = (value: number | string, rate = 25) =>
    `{"OTIO_SCHEMA": "RationalTime.1", "rate": ${rate}, "value": ${value}}`;
  const range = (start: number | string, duration: number | string) =>
    `{"OTIO_SCHEMA": "TimeRange.1", "start_time": ${rt(start)}, "duration": ${rt(duration)}}`;
  const clip = (name: string, source: string, available: string) =>
    `{"OTIO_SCHEMA": "Clip.2", "name": "${name}", "source_range": ${source}, "metadata": {"score": NaN, "edge": -Inf},
      "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "name": "${name}", "target_url": "file:///m/${name}.mov", "available_range": ${available}}},
      "active_media_reference_key": "DEFAULT_MEDIA"}`;
  const timeline = (...clips: string[]) =>
    `{"OTIO_SCHEMA": "Timeline.1", "name": "t \\"Inf\\" NaN", "global_start_time": null,
      "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [{"OTIO_SCHEMA": "Track.1", "kind": "Video", "children": [${clips.join(',')}]}]},
      "metadata": {"limit": Inf, "floor": -Infinity}}`;
  // Media whose timecode starts at 01:00:10:00 at 25 fps: frame 90250 on its own clock.
  const media = range(90250, 250);

  it('reads Inf, -Inf and NaN outside strings as values not given, and leaves strings alone', () => {
    const t = readOtio(timeline(clip('a', range(90300, 50), media)));
    expect(t.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(t.name).toBe('t "Inf" NaN');
    expect(t.cuts).toHaveLength(1);
  });

  it("takes an in point on the media's own clock: 01:00:12 in media starting at 01:00:10 plays from 2 s", () => {
    const t = readOtio(timeline(clip('a', range(90300, 50), media)));
    expect(t.cuts[0]).toMatchObject({ sourceInSec: 2, durationSec: 2 });
  });

  it('plays the whole media for a clip whose source_range is null, and says so', () => {
    const t = readOtio(timeline(clip('b', 'null', media)));
    expect(t.cuts[0]).toMatchObject({ sourceInSec: 0, durationSec: 10 });
    expect(t.notes.map((n) => n.message)).toContainEqual(
      expect.stringMatching(/no source_range: it plays its whole media \(10\.000 s/),
    );
  });

  it('plays the whole asset, as long as it measures, for a clip with no source_range whose media has no available_range (issue 31, item 10)', () => {
    const none = readOtio(timeline(clip('c', 'null', 'null'), clip('d', range(25, 50), 'null')));
    expect(none.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(none.cuts[0]).toMatchObject({ sourceInSec: 0, wholeMedia: true });
    const assets: AssetCandidate[] = [
      {
        id: 'cccccccc-0000-4000-8000-00000000000c',
        kind: 'video',
        names: ['c'],
        url: '/m/c.mov',
        durationSec: 6.03,
        rate: { num: 25, den: 1 },
      },
      {
        id: 'dddddddd-0000-4000-8000-00000000000d',
        kind: 'video',
        names: ['d'],
        url: '/m/d.mov',
        rate: { num: 25, den: 1 },
      },
    ];
    // At 25 fps: the 150 frames that fit in 6.03 s, then the next clip from where that ends on the timeline.
    const draft = toEditDraft(none, assets, { fps: 25 });
    expect(draft.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(draft.draft.video_series_sequential.map((c) => [c.video_id, c.video_start_time, c.video_end_time])).toEqual([
      [assets[0]!.id, 0, 6],
      [assets[1]!.id, 1, 3],
    ]);
    expect(messages(draft.notes)).toMatch(
      /it plays the whole of asset cccccccc-0000-4000-8000-00000000000c \(c\) \(6\.030 s, as measured\)/,
    );
    expect(draft.unsized).toEqual([]);
    // Not measured (yet): an error that says so, and the asset named for import_edit to measure; unmapped: how to map
    // it.
    const unmeasured = toEditDraft(none, [{ ...assets[0]!, durationSec: undefined }, assets[1]!], { fps: 25 });
    expect(unmeasured.unsized).toEqual([assets[0]!.id]);
    expect(unmeasured.draft.video_series_sequential.map((c) => c.video_id)).toEqual([assets[1]!.id]);
    expect(unmeasured.notes.filter((n) => n.severity === 'error').map((n) => n.message)).toEqual([
      expect.stringMatching(/plays its whole asset; but the length of asset cccccccc.* is not known/),
    ]);
    const unmapped = toEditDraft(none, [assets[1]!], { fps: 25 });
    expect(messages(unmapped.notes.filter((n) => n.severity === 'error'))).toMatch(
      /plays its whole asset; but its media \(.*\) matches no asset of the project; map it with media_map/,
    );
  });
});

describe('FCPXML as Final Cut writes it: storylines, auditions, clips and generators (issue 21, item 6)', () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<fcpxml version="1.10">
  <resources>
    <format id="r1" frameDuration="1/25s" width="1280" height="720"/>
    <asset id="v" name="${ASSETS[0]!.names[0]}" start="0s" duration="60s" hasVideo="1" hasAudio="1" format="r1"><media-rep kind="original-media" src="file:///m/v.mov"/></asset>
    <asset id="a" name="${ASSETS[2]!.names[0]}" start="0s" duration="60s" hasVideo="0" hasAudio="1"><media-rep kind="original-media" src="file:///m/a.wav"/></asset>
    <effect id="g" name="Custom" uid=".../Generators.localized/Solids.localized/Custom.localized/Custom.motn"/>
  </resources>
  <library><event name="e"><project name="p"><sequence format="r1" duration="8s" tcStart="0s">
    <spine>
      <asset-clip ref="v" offset="0s" start="10s" duration="4s" name="one">
        <spine lane="-1" offset="11s">
          <asset-clip ref="a" offset="11s" start="0s" duration="1s" name="story a"/>
          <gap offset="12s" start="0s" duration="1s"/>
          <asset-clip ref="a" offset="13s" start="5s" duration="1s" name="story b"/>
        </spine>
        <audition lane="-2" offset="12s"><asset-clip ref="a" start="20s" duration="2s" name="pick"/><asset-clip ref="a" start="30s" duration="2s" name="alt"/></audition>
        <clip lane="-3" offset="10s" duration="1s" name="wrapped"><audio ref="a" offset="0s" start="40s" duration="1s"/></clip>
      </asset-clip>
      <video ref="g" offset="4s" start="0s" duration="2s" name="Solid"/>
      <asset-clip ref="v" offset="6s" start="0s" duration="2s" name="two"/>
    </spine>
  </sequence></project></event></library>
</fcpxml>`;

  it("reads the items of a secondary storyline, an audition's pick and a wrapped clip's audio as overlays; a generator is no missing media", () => {
    const t = readFcpxml(xml);
    expect(t.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(t.cuts.map((c) => [c.sourceInSec, c.durationSec])).toEqual([
      [10, 4],
      [0, 2],
    ]);
    expect(t.overlays.map((o) => [o.startSec, o.durationSec, o.sourceInSec]).sort((a, b) => a[0]! - b[0]!)).toEqual([
      [0, 1, 40],
      [1, 1, 0],
      [2, 2, 20],
      [3, 1, 5],
    ]);
    const generator = t.notes.find((n) => n.place.includes('Solid'));
    expect(generator).toMatchObject({
      severity: 'warning',
      message: expect.stringMatching(/^a generator or title .* left out and the timeline closed up$/),
    });
  });
});

describe('timecode as CMX 3600 counts it (issue 31, item 9)', () => {
  const ntsc = { num: 30000, den: 1001 };
  const A: AssetCandidate[] = [
    { id: 'aaaaaaaa-0000-4000-8000-000000000001', kind: 'video', names: ['a.mov'], url: '/m/a.mov', rate: ntsc },
  ];
  const edl = (...lines: string[]) => `TITLE: t\n${lines.join('\n')}\n`;
  const spans = (text: string) =>
    toEditDraft(readEdl(text, ntsc), A, {}).draft.video_series_sequential.map((c) => [
      c.video_start_time,
      c.video_end_time,
    ]);

  it('accepts exactly the drop-frame labels that name a frame, each read as the frame it labels (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
        fc.constantFrom(30, 60),
        fc.nat(),
        (h, m, sec, base, f0) => {
          const f = f0 % base;
          const label = `${[h, m, sec, f]
            .map((n) => String(n).padStart(2, '0'))
            .slice(0, 3)
            .join(':')};${String(f).padStart(2, '0')}`;
          const skipped = sec === 0 && f < base / 15 && m % 10 !== 0;
          const read = readTimecode(label, base, true);
          if (skipped) expect(read).toEqual({ reason: expect.stringMatching(/is no drop-frame label/) });
          else expect(framesToDropTimecode((read as { frames: number }).frames, base)).toBe(label);
        },
      ),
      { numRuns: 3000 },
    );
    expect(timecodeToFrames('00:01:00;00', 30, true)).toBeUndefined();
    expect(timecodeToFrames('00:01:00;01', 30, true)).toBeUndefined();
    expect(timecodeToFrames('00:01:00;02', 30, true)).toBe(1800);
    expect(timecodeToFrames('00:10:00;00', 30, true)).toBe(17982);
    expect(timecodeToFrames('00:01:00;03', 60, true)).toBeUndefined();
    expect(timecodeToFrames('00:01:00;04', 60, true)).toBe(3600);
    // Non-drop-frame has every label.
    expect(timecodeToFrames('00:01:00:00', 30, false)).toBe(1800);
  });

  it('refuses an event with a drop-frame label that does not exist, naming it, rather than reading the frame before', () => {
    const t = readEdl(
      edl(
        'FCM: DROP FRAME',
        '001  AX V C 00:01:00;00 00:01:01;00 01:00:00;00 01:00:01;00',
        '* FROM CLIP NAME: a.mov',
        '002  AX V C 00:00:10;00 00:00:11;00 01:00:01;00 01:00:02;00',
        '* FROM CLIP NAME: a.mov',
      ),
      ntsc,
    );
    expect(t.notes.filter((n) => n.severity === 'error')).toEqual([
      {
        severity: 'error',
        place: 'line 3',
        message: expect.stringMatching(
          /^a timecode that is not valid at 30 frames a second, counted drop-frame \("00:01:00;00" is no drop-frame label: drop-frame counting skips frames 00 and 01 at the start of each minute but every tenth\); the event was left out$/,
        ),
      },
    ]);
    expect(t.cuts).toHaveLength(1);
  });

  it("counts every timecode of an event as the FCM line in force says, whatever a label's separator", () => {
    // The 1 s record (01:00:00;00 to 01:00:01:00) of a non-drop-frame list: 30 frames, not 138 (it was a 4.6 s cut).
    const ndf = edl(
      'FCM: NON-DROP FRAME',
      '001  AX V C 00:00:10:00 00:00:11:00 01:00:00;00 01:00:01:00',
      '* FROM CLIP NAME: a.mov',
    );
    const [[from, to]] = spans(ndf) as [[number, number]];
    expect(to - from).toBeCloseTo(30 / 29.97, 3);
    expect(from).toBeCloseTo(300 / 29.97, 3);
    expect(messages(readEdl(ndf, ntsc).notes)).toMatch(
      /written drop-frame style .* were counted non-drop-frame, as its FCM line says/,
    );
    // A drop-frame list written with colons is counted drop-frame: 00:01:00:02 is frame 1800.
    const df = edl(
      'FCM: DROP FRAME',
      '001  AX V C 00:01:00:02 00:01:01:02 01:00:00:00 01:00:01:00',
      '* FROM CLIP NAME: a.mov',
    );
    expect(readEdl(df, ntsc).cuts[0]!.sourceInSec).toBeCloseTo((1800 * 1001) / 30000, 9);
    expect(spans(df)[0]![0]).toBeCloseTo(1800 / 29.97, 3);
    // An FCM line between events holds for the events after it.
    const mixed = readEdl(
      edl(
        'FCM: NON-DROP FRAME',
        '001  AX V C 00:01:00:00 00:01:01:00 01:00:00:00 01:00:01:00',
        'FCM: DROP FRAME',
        '002  AX V C 00:01:00:02 00:01:01:02 01:00:01;00 01:00:02;00',
      ),
      ntsc,
    );
    expect(mixed.cuts.map((c) => Math.round(c.sourceInSec * 29.97))).toEqual([1800, 1800]);
    // Without an FCM line, the first event's record in point says which: here drop-frame, for every event after it.
    const unsaid = readEdl(
      edl(
        '001  AX V C 00:01:00:02 00:01:01:02 01:00:00;00 01:00:01;00',
        '002  AX V C 00:01:00:02 00:01:01:02 01:00:01:00 01:00:02:00',
      ),
      ntsc,
    );
    expect(unsaid.cuts.map((c) => Math.round(c.sourceInSec * 29.97))).toEqual([1800, 1800]);
  });
});

describe('times too large to hold exactly (issue 31, item 9)', () => {
  const rt = (value: number, rate = 25) => ({ OTIO_SCHEMA: 'RationalTime.1', rate, value });
  const range = (start: number, duration: number) => ({
    OTIO_SCHEMA: 'TimeRange.1',
    start_time: rt(start),
    duration: rt(duration),
  });
  const clip = (source: unknown, available: unknown) => ({
    OTIO_SCHEMA: 'Clip.2',
    name: 'a.mov',
    source_range: source,
    media_references: {
      DEFAULT_MEDIA: { OTIO_SCHEMA: 'ExternalReference.1', target_url: '/m/a.mov', available_range: available },
    },
    active_media_reference_key: 'DEFAULT_MEDIA',
  });
  const otio = (video: unknown[], audio: unknown[] = []) =>
    JSON.stringify({
      OTIO_SCHEMA: 'Timeline.1',
      tracks: {
        OTIO_SCHEMA: 'Stack.1',
        children: [
          { OTIO_SCHEMA: 'Track.1', kind: 'Video', children: video },
          { OTIO_SCHEMA: 'Track.1', kind: 'Audio', children: audio },
        ],
      },
    });
  const A: AssetCandidate[] = [
    {
      id: 'aaaaaaaa-0000-4000-8000-000000000001',
      kind: 'video',
      names: ['a.mov'],
      url: '/m/a.mov',
      rate: { num: 25, den: 1 },
    },
  ];
  const errors = (notes: { severity: string; message: string }[]) =>
    notes.filter((n) => n.severity === 'error').map((n) => n.message);

  it('OTIO: an in point of 1e300 frames on media starting at 1e300 is refused, not read as 0; so are -1e300 and a length of 1e300', () => {
    for (const [source, available, said] of [
      [range(1e300 + 50, 50), range(1e300, 1000), /source_range start_time \(1e\+300 at rate 25\)/],
      [range(50, 50), range(1e300, 1000), /media's available_range start_time \(1e\+300 at rate 25\)/],
      [range(-1e300, 50), null, /source_range start_time \(-1e\+300 at rate 25\)/],
      [range(0, 1e300), null, /source_range duration \(1e\+300 at rate 25\)/],
      [range(2 ** 53 + 2, 50), range(2 ** 53, 1000), /source_range start_time \(9007199254740994 at rate 25\)/],
    ] as const) {
      const t = readOtio(otio([clip(source, available)]));
      expect(t.cuts).toEqual([]);
      expect(errors(t.notes)).toEqual([
        expect.stringMatching(new RegExp(`${said.source} is too large to hold exactly; the clip was left out`)),
      ]);
    }
    const overlay = readOtio(otio([clip(range(0, 50), null)], [clip(range(1e300, 50), null)]));
    expect(overlay.overlays).toEqual([]);
    expect(errors(overlay.notes)).toEqual([
      expect.stringMatching(/source_range start_time \(1e\+300 at rate 25\) is too large/),
    ]);
  });

  it('OTIO: the largest time held (2^30 s of timecode) still gives its in point to the frame', () => {
    const start = MAX_FILE_SEC * 25 - 100;
    const t = readOtio(otio([clip(range(start + 50, 25), range(start, 1000))]));
    expect(errors(t.notes)).toEqual([]);
    expect(
      toEditDraft(t, A, { fps: 25 }).draft.video_series_sequential.map((c) => [c.video_start_time, c.video_end_time]),
    ).toEqual([[2, 3]]);
  });

  it('FCPXML: an asset start or a clip start of 10^300 s is refused where it is written, not read as an in point of 0', () => {
    const big = `1${'0'.repeat(300)}`;
    const xml = (
      assetStart: string,
      clipStart: string,
    ) => `<fcpxml version="1.10"><resources><format id="r1" frameDuration="1/25s"/>
<asset id="v" name="a.mov" start="${assetStart}" duration="60s" hasVideo="1" hasAudio="1" format="r1"/></resources>
<library><event><project><sequence format="r1"><spine>
<asset-clip ref="v" name="one" offset="0s" start="${clipStart}" duration="2s"/>
</spine></sequence></project></event></library></fcpxml>`;
    const both = readFcpxml(xml(`${big}s`, `${big.slice(0, -1)}2s`));
    expect(both.cuts).toEqual([]);
    expect(both.notes.filter((n) => n.severity === 'error').map((n) => `${n.place}: ${n.message}`)).toEqual([
      expect.stringMatching(
        /^<asset name="a\.mov"> \(line 2\): its start \("1000.*…"\) is too large to hold exactly; its clips were left out$/,
      ),
      expect.stringMatching(
        /^<asset-clip name="one"> \(line 4\): its start \("1000.*…"\) is too large to hold exactly; it was left out$/,
      ),
    ]);
    // A numerator past 2^53 is not held either (9007199254740993 reads as ...992).
    expect(errors(readFcpxml(xml('0s', '9007199254740993/25s')).notes)).toEqual([
      expect.stringMatching(/its start \("9007199254740993\/25s"\) is too large/),
    ]);
    expect(readFcpxml(xml('3600s', '3602s')).cuts.map((c) => c.sourceInSec)).toEqual([2]);
  });

  it("an in point before its media starts is said, and starts at the media's start", () => {
    const t = readOtio(otio([clip(range(40, 25), range(50, 1000))]));
    const draft = toEditDraft(t, A, { fps: 25 });
    expect(draft.draft.video_series_sequential.map((c) => [c.video_start_time, c.video_end_time])).toEqual([[0, 1]]);
    expect(draft.notes.map((n) => n.message)).toContainEqual(
      "its in point is 0.400 s before its media starts; it starts at the media's start",
    );
  });
});

describe("FCPXML volume: the edit's gain and fades (issue 33, item 1)", () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<fcpxml version="1.10">
  <resources>
    <format id="r1" frameDuration="1/25s" width="1280" height="720"/>
    <asset id="v" name="${ASSETS[0]!.names[0]}" start="0s" duration="60s" hasVideo="1" hasAudio="1" format="r1"><media-rep kind="original-media" src="file:///m/v.mov"/></asset>
    <asset id="a" name="${ASSETS[2]!.names[0]}" start="0s" duration="60s" hasVideo="0" hasAudio="1"><media-rep kind="original-media" src="file:///m/a.wav"/></asset>
  </resources>
  <library><event name="e"><project name="p"><sequence format="r1" duration="4s" tcStart="0s">
    <spine>
      <asset-clip ref="v" offset="0s" start="10s" duration="4s" name="one">
        <adjust-volume amount="4dB"><param name="amount"><fadeIn type="easeInOut" duration="1/2s"/><fadeOut type="linear" duration="3/2s"/></param></adjust-volume>
        <asset-clip ref="a" lane="-1" offset="11s" start="0s" duration="2s" name="bed" audioRole="music.Score">
          <adjust-volume amount="-12dB"><param name="amount"><fadeOut type="easeInOut" duration="1s"/></param></adjust-volume>
        </asset-clip>
      </asset-clip>
    </spine>
  </sequence></project></event></library>
</fcpxml>`;

  it('reads fades as fade_in/fade_out, an amount over 0 dB as gain_db, and one under as the level it is', () => {
    const t = readFcpxml(xml);
    expect(t.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(t.cuts[0]!.mix).toEqual({ gain_db: 4, fade_in: 0.5, fade_out: 1.5 });
    expect(t.cuts[0]!.levels).toEqual([]);
    expect(t.overlays[0]!.mix).toEqual({ role: 'music', fade_out: 1 });
    expect(t.overlays[0]!.levels[0]!.level).toBeCloseTo(10 ** (-12 / 20), 6);
  });
});

describe('timeline files at NTSC rates written as decimals (issue 51, item 1)', () => {
  const ntsc = (n: number) => ({ num: n * 1000, den: 1001 });
  const rt = (value: number, rate: number) => ({ OTIO_SCHEMA: 'RationalTime.1', rate, value });
  const tr = (start: number, duration: number, rate: number) => ({
    OTIO_SCHEMA: 'TimeRange.1',
    start_time: rt(start, rate),
    duration: rt(duration, rate),
  });
  /** One clip `frames` long, `offset` frames after its media's available_range start, all at `rate` as written. */
  const otio = (rate: number, mediaStart: number, offset: number, frames: number, clipRate = rate) =>
    JSON.stringify({
      OTIO_SCHEMA: 'Timeline.1',
      name: 'ntsc',
      tracks: {
        OTIO_SCHEMA: 'Stack.1',
        children: [
          {
            OTIO_SCHEMA: 'Track.1',
            kind: 'Video',
            children: [
              {
                OTIO_SCHEMA: 'Clip.1',
                name: 'a.mov',
                source_range: tr(mediaStart + offset, frames, clipRate),
                media_reference: {
                  OTIO_SCHEMA: 'ExternalReference.1',
                  target_url: '/m/a.mov',
                  available_range: tr(mediaStart, 100_000, rate),
                },
              },
            ],
          },
        ],
      },
    });
  const span = (text: string, rate: { num: number; den: number }) => {
    const assets: AssetCandidate[] = [
      { id: 'aaaaaaaa-0000-4000-8000-000000000001', kind: 'video', names: ['a.mov'], url: '/m/a.mov', rate },
    ];
    const c = toEditDraft(readOtio(text), assets).draft.video_series_sequential[0]!;
    return [c.video_start_time, c.video_end_time];
  };
  /** A frame's start to the millisecond at or before it, as cutroom writes an in point on a frame. */
  const frameMs = (k: number, r: { num: number; den: number }) => Math.floor((k * r.den * 1000) / r.num + 1e-6) / 1000;

  it('reads 60 frames at rate 29.97 as frame 60 of a 30000/1001 source, not the frame after', () => {
    // The clip: 2.002-3.504 s (frames 60 to 105), read as 2.035-3.537 before.
    expect(span(otio(29.97, 0, 60, 45), ntsc(30))).toEqual([2.002, 3.504]);
    expect(span(otio(29.97, 107_892, 60, 45), ntsc(30))).toEqual([2.002, 3.504]);
  });

  it('lands every frame on itself at 23.976, 29.97 and 59.94, an hour of timecode in, and across rates as written', () => {
    for (const [written, exact] of [
      [23.976, ntsc(24)],
      [29.97, ntsc(30)],
      [59.94, ntsc(60)],
    ] as const) {
      const tc = Math.round(3600 * written);
      for (const k of [1, 60, 1001, 54_000]) {
        const [start] = span(otio(written, tc, k, 10), exact);
        expect(start, `${written}: frame ${k}`).toBe(frameMs(k, exact));
        // The clip's range written with the exact rate, its media's with the decimal: the same frame.
        const [mixed] = span(otio(written, tc, k, 10, (exact.num / exact.den) as number), exact);
        expect(mixed, `${written} mixed: frame ${k}`).toBe(frameMs(k, exact));
      }
    }
  });
});
