// Timeline files made to hurt (from an adversarial pass over import_edit): each once crashed the reader, froze the
// server for seconds to minutes, filled memory, or gave a wrong edit. Each must now read in the test's own time
// limit (vitest's 5 s: the frozen cases took 5 s to minutes) into notes, never a throw.
import { describe, expect, it } from 'vitest';
import { MAX_IMPORT_ITEMS, MAX_READ_NOTES, droppedOf } from '../../src/interchange/document.js';
import { readEdl } from '../../src/interchange/edl.js';
import { readFcpxml } from '../../src/interchange/fcpxml.js';
import { readOtio } from '../../src/interchange/otio.js';
import { fileNameOf, toEditDraft, type AssetCandidate } from '../../src/interchange/to-edit.js';
import { parseXml } from '../../src/interchange/xml.js';

const ASSETS: AssetCandidate[] = [{ id: 'aaaaaaaa-0000-4000-8000-000000000001', kind: 'video', names: ['a.mov'] }];
const messages = (notes: { message: string }[]) => notes.map((n) => n.message).join('\n');
const clip = (frames: number, rate = 30, name = 'a.mov', start = 0) => ({
  OTIO_SCHEMA: 'Clip.2',
  name,
  source_range: {
    OTIO_SCHEMA: 'TimeRange.1',
    start_time: { OTIO_SCHEMA: 'RationalTime.1', rate, value: start },
    duration: { OTIO_SCHEMA: 'RationalTime.1', rate, value: frames },
  },
  media_references: { DEFAULT_MEDIA: { OTIO_SCHEMA: 'ExternalReference.1', target_url: 'file:///x/a.mov' } },
  active_media_reference_key: 'DEFAULT_MEDIA',
});
const otio = (items: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    OTIO_SCHEMA: 'Timeline.1',
    name: 't',
    ...extra,
    tracks: { OTIO_SCHEMA: 'Stack.1', children: [{ OTIO_SCHEMA: 'Track.1', kind: 'Video', children: items }] },
  });
const fcpxml = (
  version: string,
  frameDuration = '1/25s',
  spine = '<asset-clip ref="r2" offset="0s" duration="2s" name="a"/>',
) =>
  `<?xml version="1.0"?><!DOCTYPE fcpxml><fcpxml version="${version}"><resources><format id="r1" frameDuration="${frameDuration}" width="1920" height="1080"/><asset id="r2" name="a.mov" src="file:///x/a.mov" hasVideo="1"/></resources><library><event><project name="p"><sequence format="r1"><spine>${spine}</spine></sequence></project></event></library></fcpxml>`;
const EVENT = (n: number) => `${String(n).padStart(3, '0')}  a V C 00:00:00:00 00:00:00:01 00:00:00:00 00:00:00:01`;

describe('frame rates no editor writes', () => {
  it('a huge, tiny, zero or negative rate is an error about the rate, not a stack overflow', () => {
    const files = [
      otio([clip(60)], { global_start_time: { OTIO_SCHEMA: 'RationalTime.1', rate: 1e308, value: 0 } }),
      otio([clip(60)], { metadata: { cutroom: { fps_num: 1e308, fps_den: 1e-308 } } }),
      otio([clip(60)], { metadata: { cutroom: { fps_num: -30, fps_den: 1 } } }),
      otio([clip(60)], { global_start_time: { OTIO_SCHEMA: 'RationalTime.1', rate: 0.001, value: 0 } }),
    ];
    for (const f of files) {
      const draft = toEditDraft(readOtio(f), ASSETS);
      expect(messages(draft.notes), f.slice(0, 200)).toMatch(
        /its frame rate \(.*\) is not one cutroom renders \(1 to 120 fps\): give fps/,
      );
      expect(draft.draft.video_output_fps).toBe(30);
    }
    const fcp = toEditDraft(readFcpxml(fcpxml('1.10', `1/1${'0'.repeat(308)}s`)), ASSETS);
    expect(messages(fcp.notes)).toMatch(/is not one cutroom renders/);
  });
});

describe('lengths that are not lengths', () => {
  it("a negative clip is left out whole, and does not shorten the next one's", () => {
    const draft = toEditDraft(readOtio(otio([clip(60), clip(-30), clip(60)])), ASSETS);
    expect(draft.draft.video_series_sequential.map((c) => +(c.video_end_time - c.video_start_time).toFixed(3))).toEqual(
      [2, 2],
    );
    expect(messages(draft.notes)).toMatch(/its length \(-1 s\) is not a length; it was left out/);
    const fcp = toEditDraft(
      readFcpxml(
        fcpxml(
          '1.10',
          '1/25s',
          '<asset-clip ref="r2" offset="0s" duration="-5s" name="neg"/><asset-clip ref="r2" offset="0s" duration="2s" name="b"/>',
        ),
      ),
      ASSETS,
    );
    expect(fcp.draft.video_series_sequential.map((c) => c.video_end_time - c.video_start_time)).toEqual([2]);
  });
});

describe('files that once froze the server or filled its memory', () => {
  it('an EDL of 130 000 events is read up to one past the cap (it ran the stack out)', () => {
    const t = readEdl(Array.from({ length: 130_000 }, (_, i) => EVENT(i + 1)).join('\n'), { num: 30, den: 1 });
    expect(t.cuts.length + t.overlays.length).toBe(MAX_IMPORT_ITEMS + 1);
  });

  it('a comment line of thousands of spaces reads at once (a pattern backtracked for minutes)', () => {
    const t = readEdl(`${EVENT(1)}\n*${' '.repeat(8000)}!\n* FROM CLIP NAME:${' '.repeat(1500)}x`, { num: 30, den: 1 });
    expect(t.cuts).toHaveLength(1);
    expect(t.cuts[0]!.media.names).toEqual(['x', 'a']);
  });

  it('700 000 clip-name comments keep one name, read in linear time', () => {
    const t = readEdl(`${EVENT(1)}\n${'*CLIP NAME:a\n'.repeat(700_000)}`, { num: 30, den: 1 });
    expect(t.cuts[0]!.media.names).toEqual(['a', 'a']);
  });

  it('120 000 alternating picture and sound events read in linear time, up to the cap', () => {
    const lines = Array.from(
      { length: 120_000 },
      (_, i) =>
        `${String(i + 1).padStart(3, '0')}  r${i} ${i % 2 ? 'A' : 'V'} C 00:00:00:00 00:00:00:01 00:00:00:00 00:00:00:01`,
    );
    const t = readEdl(lines.join('\n'), { num: 30, den: 1 });
    expect(t.cuts.length + t.overlays.length).toBeLessThanOrEqual(MAX_IMPORT_ITEMS + 1);
  });

  it('a million XML declarations parse in one pass (each searched the rest of the file)', () => {
    expect(() => parseXml(`${'<!a>'.repeat(1_000_000)}<r/>`)).not.toThrow();
  });

  it('millions of junk items or lines keep at most a thousand notes, and count the rest', () => {
    const o = readOtio(otio(Array.from({ length: 3_000_000 }, () => ({}))));
    expect(o.notes.length).toBeLessThanOrEqual(MAX_READ_NOTES);
    const e = readEdl(`${EVENT(1)}\n${'junk line\n'.repeat(500_000)}`, { num: 30, den: 1 });
    expect(e.notes.length).toBe(MAX_READ_NOTES);
    expect(droppedOf(e.notes)).toBe(500_000 - MAX_READ_NOTES);
    // Millions of items take tens of seconds on a shared machine: the bound is on what is kept, not on the time.
  }, 120_000);

  it('a name of megabytes is quoted in a few dozen characters', () => {
    const draft = toEditDraft(
      readOtio(
        otio([
          {
            ...clip(60, 30, 'N'.repeat(2_000_000)),
            effects: Array.from({ length: 150 }, () => ({ OTIO_SCHEMA: 'Effect.1', effect_name: 'E'.repeat(100_000) })),
          },
        ]),
      ),
      [],
    );
    const longest = Math.max(
      ...draft.notes.map((n) => n.place.length + n.message.length),
      ...draft.mapped.map((m) => m.length),
    );
    expect(longest).toBeLessThan(1000);
    expect(draft.draft.video_series_sequential[0]!.video_id.length).toBeLessThan(200);
  }, 120_000);
});

describe('files that are fine', () => {
  it('FCPXML 1.10 and 1.11 are not "older than tested"; 1.4 is', () => {
    for (const v of ['1.10', '1.11', '1.8'])
      expect(messages(readFcpxml(fcpxml(v)).notes), v).not.toMatch(/older than what was tested/);
    expect(messages(readFcpxml(fcpxml('1.4')).notes)).toMatch(/FCPXML 1\.4 is older than what was tested/);
  });

  it('OTIO with a byte-order mark', () => {
    const t = readOtio(`\uFEFF${otio([clip(60)])}`);
    expect(t.cuts).toHaveLength(1);
  });

  it('XML with "]" in a quoted DOCTYPE string, and a tag with much space before its ">"', () => {
    const root = parseXml(
      `<!DOCTYPE r [ <!ENTITY x "a]b"> ]><r${' '.repeat(300)}><c a="1"${'\n'.repeat(150)}/></r${' '.repeat(300)}>`,
    );
    expect(root.children.map((c) => c.attrs.a)).toEqual(['1']);
  });

  it('an EDL whose only event has a timecode out of range says why, beside "no events"', () => {
    const t = readEdl('001  a V C 99:99:99:99 00:00:00:01 00:00:00:00 00:00:00:01', { num: 30, den: 1 });
    expect(messages(t.notes)).toMatch(/a timecode that is not valid at 30 frames a second/);
    expect(messages(t.notes)).toMatch(/no event lines that could be read .*see the other notes/);
  });
});

describe("a timeline's name as the render's file name", () => {
  it('names the render after the sequence, with what a file name cannot hold replaced', () => {
    expect(toEditDraft(readOtio(otio([clip(60)], { name: 'Rough cut v2' })), ASSETS).draft).toMatchObject({
      video_output_filename: 'Rough cut v2.mp4',
    });
    expect(toEditDraft(readFcpxml(fcpxml('1.10')), ASSETS).draft.video_output_filename).toBe('p.mp4');
    expect(fileNameOf('../../etc/passwd')).toEqual({ video_output_filename: 'etc-passwd.mp4' });
    expect(fileNameOf('a:b*c?\u0007"d"')).toEqual({ video_output_filename: 'a-b-c-d.mp4' });
    expect(fileNameOf(' .. ')).toEqual({});
    expect(fileNameOf(undefined)).toEqual({});
  });
});
