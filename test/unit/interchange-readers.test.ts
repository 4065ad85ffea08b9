// Reading timelines as editors and other tools write them, not only cutroom's own: OTIO as OpenTimelineIO's
// adapters write it (Clip.1 and Clip.2, transitions, gaps, time warps, missing media), FCPXML as Resolve exports it
// (tcStart at one hour, connected audio, keyframed volume, retiming, a compound clip), a CMX 3600 EDL with a
// dissolve, a speed line, black and a wipe. The fixtures are hand-written from each format's public description.
// Whatever a reader does not understand becomes a note; nothing throws, whatever the input.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readEdl, timecodeToFrames, framesToTimecode } from '../../src/interchange/edl.js';
import { readFcpxml } from '../../src/interchange/fcpxml.js';
import { readOtio } from '../../src/interchange/otio.js';
import { toEditDraft, type AssetCandidate } from '../../src/interchange/to-edit.js';
import { parseXml } from '../../src/interchange/xml.js';

const FOREIGN = join(import.meta.dirname, '../fixtures/interchange/foreign');
const fixture = (name: string) => readFileSync(join(FOREIGN, name), 'utf8');

const ASSETS: AssetCandidate[] = [
  { id: 'aaaaaaaa-0000-4000-8000-000000000001', kind: 'video', names: ['beach.mov'], url: '/footage/beach.mov' },
  { id: 'bbbbbbbb-0000-4000-8000-000000000002', kind: 'video', names: ['city.mp4'], url: 'https://cdn.example.com/media/city.mp4?X-Amz-Signature=fresh' },
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
    expect(t.overlays.map((o) => [o.media.url, o.startSec, o.durationSec, o.sourceInSec])).toEqual([['/music/theme.wav', 0.5, 4, 0]]);
  });

  it('notes the transition, the gap and the time warp', () => {
    const m = messages(t.notes);
    expect(m).toMatch(/transition \(SMPTE_Dissolve\) became a straight cut/);
    expect(m).toMatch(/gap of 1\.000 s was closed up/);
    expect(m).toMatch(/speed change \(LinearTimeWarp, x2\)/);
  });

  it('maps media by path without the query and by name; a missing reference is an error at its cut', () => {
    const { draft, notes, mapped } = toEditDraft(t, ASSETS);
    expect(draft.video_series_sequential.map((c) => c.video_id.slice(0, 8))).toEqual(['aaaaaaaa', 'bbbbbbbb', 'unmapped']);
    expect(draft.audio_overlay.map((o) => o.audio_id.slice(0, 8))).toEqual(['cccccccc']);
    expect(mapped.join('\n')).toMatch(/cut 2 .*found by its path/);
    expect(notes.find((n) => n.severity === 'error')).toMatchObject({ cut: 2, message: expect.stringMatching(/named "lost shot".* matches no asset/) });
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
    expect(t.cuts[0]!.levels).toEqual([{ level: expect.closeTo(0.501187, 5), fromSec: 1.001, toSec: expect.closeTo(4.004, 9) }]);
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
    expect(draft.video_series_sequential.map((c) => [c.video_id.slice(0, 8), c.video_start_time, c.video_end_time])).toEqual([
      ['aaaaaaaa', 1.001, 4.004],
      ['bbbbbbbb', 12.609, 16.613],
      ['aaaaaaaa', 10.01, 12.012],
    ]);
    expect(draft.audio_overlay[0]).toMatchObject({ audio_id: ASSETS[2]!.id, audio_start_time: 0, audio_end_time: 8.008 });
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
    expect(t.overlays.map((o) => [o.media.names[0], o.media.url, o.startSec, o.durationSec])).toEqual([['Theme & Variations.wav', '/music/Theme & Variations.wav', 0, 10]]);
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
  const files = { otio: fixture('adapter-written.otio'), fcpxml: fixture('resolve-export.fcpxml'), edl: fixture('dissolve.edl') };
  const readers = { otio: (s: string) => readOtio(s), fcpxml: (s: string) => readFcpxml(s), edl: (s: string) => readEdl(s, { num: 25, den: 1 }) };

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
        readOtio(JSON.stringify({ OTIO_SCHEMA: 'Timeline.1', tracks: { OTIO_SCHEMA: 'Stack.1', children: [json, { OTIO_SCHEMA: 'Track.1', kind: 'Video', children: [json] }] } }));
        readFcpxml(`<fcpxml version="1.10"><resources>${text.replace(/[<&]/g, '')}</resources><library><event><project><sequence><spine><asset-clip offset="${text.slice(0, 5)}"/></spine></sequence></project></event></library></fcpxml>`);
      }),
      { numRuns: 300 },
    );
  });

  it('parses XML without reading any DTD or entity it declares', () => {
    const evil = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd"><!ENTITY a "aaaa">]><fcpxml version="1.10">&amp;</fcpxml>';
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
        cuts: [{ media: media(0), ...cut, levels: [{ level: 0.5, fromSec: 1.03, toSec: 2.5 }], levelSpan: { fromSec: 1.03, toSec: 2.5 }, place: 'cut' }],
        // Written at 1.0 s for 2 s: full level, with a duck from 1.5 s to 2 s.
        overlays: [
          {
            media: media(2),
            startSec: overlayAt,
            durationSec: 2,
            sourceInSec: 0,
            levels: [{ level: 1, fromSec: 1, toSec: 1.5 }, { level: 0.2, fromSec: 1.5, toSec: 2 }, { level: 1, fromSec: 2, toSec: 3 }],
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
  const rt = (value: number | string, rate = 25) => `{"OTIO_SCHEMA": "RationalTime.1", "rate": ${rate}, "value": ${value}}`;
  const range = (start: number | string, duration: number | string) => `{"OTIO_SCHEMA": "TimeRange.1", "start_time": ${rt(start)}, "duration": ${rt(duration)}}`;
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

  it('takes an in point on the media\'s own clock: 01:00:12 in media starting at 01:00:10 plays from 2 s', () => {
    const t = readOtio(timeline(clip('a', range(90300, 50), media)));
    expect(t.cuts[0]).toMatchObject({ sourceInSec: 2, durationSec: 2 });
  });

  it('plays the whole media for a clip whose source_range is null, and says so', () => {
    const t = readOtio(timeline(clip('b', 'null', media)));
    expect(t.cuts[0]).toMatchObject({ sourceInSec: 0, durationSec: 10 });
    expect(t.notes.map((n) => n.message)).toContainEqual(expect.stringMatching(/no source_range: it plays its whole media \(10\.000 s/));
    const none = readOtio(timeline(clip('c', 'null', 'null')));
    expect(none.cuts).toEqual([]);
    expect(none.notes.map((n) => n.message)).toContainEqual(expect.stringMatching(/no available_range to play whole; it was left out/));
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

  it('reads the items of a secondary storyline, an audition\'s pick and a wrapped clip\'s audio as overlays; a generator is no missing media', () => {
    const t = readFcpxml(xml);
    expect(t.notes.filter((n) => n.severity === 'error')).toEqual([]);
    expect(t.cuts.map((c) => [c.sourceInSec, c.durationSec])).toEqual([[10, 4], [0, 2]]);
    expect(t.overlays.map((o) => [o.startSec, o.durationSec, o.sourceInSec]).sort((a, b) => a[0]! - b[0]!)).toEqual([
      [0, 1, 40],
      [1, 1, 0],
      [2, 2, 20],
      [3, 1, 5],
    ]);
    const generator = t.notes.find((n) => n.place.includes('Solid'));
    expect(generator).toMatchObject({ severity: 'warning', message: expect.stringMatching(/^a generator or title .* left out and the timeline closed up$/) });
  });
});
