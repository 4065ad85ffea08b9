// Captions as data (issue 33, item 5): words mapped through the edit onto the output clock, split into readable cues,
// the edit's captions field checked, the plan's per-cut captions, the service's form, and the SRT/VTT writers. The
// burned-in picture and the sidecars against true word times are checked through the server in
// test/integration/captions.test.ts.
import { describe, expect, it } from 'vitest';
import { CAPTION_RULES, captionLines, cuesOf, wordsOnTimeline, type PlacedWord } from '../../src/edit/captions.js';
import { normalizeEdit } from '../../src/edit/normalize.js';
import { toRenderPlan } from '../../src/edit/plan.js';
import { forService } from '../../src/edit/service-form.js';
import type { TimedWord } from '../../src/edit/words.js';
import { writeSrt, writeVtt } from '../../src/interchange/subtitles.js';
import { assScript } from '../../src/media/captions.js';

const timed = (spec: [string, number, number][]): TimedWord[] =>
  spec.map(([word, s, e], index) => ({ index, word, start_seconds: s, end_seconds: e }));
const placed = (spec: [string, number, number, string?][]): PlacedWord[] =>
  spec.map(([word, start, end, item = 'c0']) => ({
    word,
    start,
    end,
    endsSentence: /[.!?]$/.test(word),
    item,
    itemEnd: 100,
  }));

describe('captionLines', () => {
  it('keeps a short text on one line and balances a longer one over two of at most 42 characters', () => {
    expect(captionLines(['Hello', 'world.'])).toEqual(['Hello world.']);
    const words = 'The lighthouse keeper walked along the shore and saw a ship in the storm'.split(' ');
    const lines = captionLines(words);
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(42);
    expect(lines.join(' ')).toBe(words.join(' '));
    expect(Math.abs(lines[0]!.length - lines[1]!.length)).toBeLessThan(12);
  });
});

describe('cuesOf', () => {
  it('ends a cue at a sentence end and at a pause, and holds it to 1 s when the next lets it', () => {
    const cues = cuesOf(
      placed([
        ['Yes.', 1, 1.3],
        ['We', 1.5, 1.7],
        ['go', 1.8, 2.0],
        ['now', 3.0, 3.3],
      ]),
    );
    expect(cues).toEqual([
      { start: 1, end: 1.5, lines: ['Yes.'] },
      { start: 1.5, end: 2.5, lines: ['We go'] },
      { start: 3, end: 4, lines: ['now'] },
    ]);
  });

  it('never lasts over 7 s nor holds over two lines of 42 characters', () => {
    const words = placed(
      Array.from({ length: 60 }, (_, i) => [`word${i}`, i * 0.3, i * 0.3 + 0.25] as [string, number, number]),
    );
    const cues = cuesOf(words);
    for (const c of cues) {
      expect(c.end - c.start).toBeLessThanOrEqual(CAPTION_RULES.maxSec + 1e-9);
      expect(c.lines.length).toBeLessThanOrEqual(2);
      for (const l of c.lines) expect(l.length).toBeLessThanOrEqual(42);
    }
    expect(cues.flatMap((c) => c.lines.join(' ').split(' '))).toEqual(words.map((w) => w.word));
  });

  it('breaks at a cut unless the sentence runs on, and always between a cut and an overlay', () => {
    const runsOn = cuesOf(
      placed([
        ['She', 1, 1.2, 'c0'],
        ['saw', 1.3, 1.5, 'c0'],
        ['a', 1.6, 1.7, 'c1'],
        ['ship.', 1.8, 2.2, 'c1'],
      ]),
    );
    expect(runsOn.map((c) => c.lines.join(' '))).toEqual(['She saw a ship.']);
    const ended = cuesOf(
      placed([
        ['She', 1, 1.2, 'c0'],
        ['saw.', 1.3, 1.5, 'c0'],
        ['A', 1.6, 1.7, 'c1'],
        ['ship.', 1.8, 2.2, 'c1'],
      ]),
    );
    expect(ended.map((c) => c.lines.join(' '))).toEqual(['She saw.', 'A ship.']);
    const voice = cuesOf(
      placed([
        ['She', 1, 1.2, 'c0'],
        ['saw', 1.3, 1.5, 'o0'],
      ]),
    );
    expect(voice).toHaveLength(2);
  });
});

describe('wordsOnTimeline', () => {
  const words = timed([
    ['Gone', 1, 1.4],
    ['the', 10.1, 10.3],
    ['ship', 10.4, 10.8],
    ['muted', 12.2, 12.6],
    ['sails.', 13.0, 13.5],
    ['after', 15, 15.5],
  ]);
  const edit = (extra: Record<string, unknown> = {}) =>
    normalizeEdit({
      video_series_sequential: [
        {
          video_id: 'v',
          video_start_time: 10,
          video_end_time: 14,
          audio_levels: [{ audio_level: 0, start_time: 12, end_time: 12.8 }],
        },
        { video_id: 'v', video_start_time: 0.5, video_end_time: 2 },
      ],
      audio_overlay: [
        { audio_id: 'vo', audio_start_time: 5, audio_end_time: 5.5, from: 2 },
        { audio_id: 'bed', audio_start_time: 0, audio_end_time: 5.5, role: 'music' },
      ],
      ...extra,
    }).timeline!;

  it("maps each cut's words onto the output clock, leaving out words cut away or muted, and the voiceover's from its `from`", () => {
    const t = edit();
    const map = new Map([
      ['v', words],
      [
        'vo',
        timed([
          ['before', 1, 1.5],
          ['hello', 2.1, 2.4],
          ['past', 2.6, 3],
        ]),
      ],
      ['bed', timed([['la', 0, 1]])],
    ]);
    const got = wordsOnTimeline(t, map).map((w) => [w.word, w.start, w.end, w.item]);
    expect(got).toEqual([
      ['the', 0.1, 0.3, 'c0'],
      ['ship', 0.4, 0.8, 'c0'],
      ['sails.', 3, 3.5, 'c0'],
      ['Gone', 4.5, 4.9, 'c1'],
      ['hello', 5.1, 5.4, 'o0'],
    ]);
  });

  it('keeps the captions field in the canonical edit, checks it, and the plan gives each cut its cues from its first frame', () => {
    const n = normalizeEdit({
      video_series_sequential: [
        { video_id: 'v', video_start_time: 0, video_end_time: 2 },
        { video_id: 'v', video_start_time: 5, video_end_time: 7 },
      ],
      captions: { style: { size: 8, color: 'ffff00' } },
    });
    expect(n.diagnostics).toEqual([]);
    expect(n.edit!.captions).toEqual({ burn: true, style: { size: 8, color: '#FFFF00' } });
    expect(n.timeline!.captions).toEqual({ burn: true, style: { size: 8, color: 'FFFF00' } });
    const bad = normalizeEdit({
      video_series_sequential: [{ video_id: 'v', video_start_time: 0, video_end_time: 2 }],
      captions: { burn: 'yes', style: { size: 40, color: 'red' } },
    });
    expect(bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.path)).toEqual([
      '/captions/burn',
      '/captions/style/size',
      '/captions/style/color',
    ]);
    const plan = toRenderPlan(n.timeline!, {
      maxWidth: 640,
      cues: [
        { start: 1.5, end: 2.5, lines: ['across'] },
        { start: 3, end: 3.5, lines: ['second'] },
      ],
    });
    expect(plan.cuts[0]!.captions!.cues).toEqual([{ start: 1.5, end: 2, lines: ['across'] }]);
    expect(plan.cuts[1]!.captions!.cues).toEqual([
      { start: 0, end: 0.5, lines: ['across'] },
      { start: 1, end: 1.5, lines: ['second'] },
    ]);
    // Scaled to the picture it is drawn on: 8% of the preview's 360 lines.
    expect(plan.cuts[0]!.captions!.layout).toMatchObject({ width: 640, height: 360, fontSize: 29, color: 'FFFF00' });
    // Not burned: no captions in the plan (nor in any segment's key).
    const off = normalizeEdit({
      video_series_sequential: [{ video_id: 'v', video_start_time: 0, video_end_time: 2 }],
      captions: { burn: false },
    });
    expect(
      toRenderPlan(off.timeline!, { cues: [{ start: 0, end: 1, lines: ['x'] }] }).cuts[0]!.captions,
    ).toBeUndefined();
  });

  it("is left out of the service's edit, said in a warning", () => {
    const n = normalizeEdit({
      video_series_sequential: [{ video_id: 'v', video_start_time: 0, video_end_time: 2 }],
      captions: { burn: true },
    });
    const s = forService(n.edit!);
    expect(s.edit.captions).toBeUndefined();
    expect(s.warnings.map((w) => w.path)).toEqual(['/captions']);
  });
});

describe('sidecars and the burned-in script', () => {
  const cues = [
    { start: 0.5, end: 1.75, lines: ['Hello <world> & all,', 'line two'] },
    { start: 3661.001, end: 3662, lines: ['{later}\\'] },
  ];

  it('writes SRT with numbered cues and comma milliseconds', () => {
    expect(writeSrt(cues)).toBe(
      '1\n00:00:00,500 --> 00:00:01,750\nHello <world> & all,\nline two\n\n2\n01:01:01,001 --> 01:01:02,000\n{later}\\\n',
    );
  });

  it('writes WebVTT with its header and markup escaped', () => {
    expect(writeVtt(cues)).toBe(
      'WEBVTT\n\n00:00:00.500 --> 00:00:01.750\nHello &lt;world&gt; &amp; all,\nline two\n\n01:01:01.001 --> 01:01:02.000\n{later}\\\n',
    );
  });

  it('writes an ASS script whose text cannot carry override tags', () => {
    const layout = {
      width: 640,
      height: 360,
      font: 'DejaVu Sans',
      fontSize: 18,
      color: 'FFFF00',
      outline: 1.4,
      shadow: 0.7,
      marginH: 32,
      marginV: 29,
    };
    const ass = assScript(layout, cues);
    expect(ass).toContain('PlayResX: 640\nPlayResY: 360');
    expect(ass).toContain('Style: Default,DejaVu Sans,18,&H0000FFFF,');
    expect(ass).toContain('Dialogue: 0,0:00:00.50,0:00:01.75,Default,,0,0,0,,Hello <world> & all,\\Nline two');
    expect(ass).toContain('Dialogue: 0,1:01:01.00,1:01:02.00,Default,,0,0,0,,(later)\u29f5');
  });
});
