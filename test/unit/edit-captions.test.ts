// Captions as data (issue 33, item 5): words mapped through the edit onto the output clock, split into readable cues,
// the edit's captions field checked, the plan's per-cut captions, the service's form, and the SRT/VTT writers. The
// burned-in picture and the sidecars against true word times are checked through the server in
// test/integration/captions.test.ts.
import { describe, expect, it } from 'vitest';
import {
  CAPTION_RULES,
  captionLayout,
  captionLines,
  cuesOf,
  heardAssets,
  lineFitsLayout,
  wordsOnTimeline,
  type PlacedWord,
} from '../../src/edit/captions.js';
import { textEms } from '../../src/edit/caption-metrics.js';
import { DEFAULT_CAPTION_STYLE } from '../../src/edit/model.js';
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
/** Words of one source (asset `a`, sentence 0) with their indices in its transcript. */
const sourced = (spec: [string, number, number, string, number][], asset = 'a'): PlacedWord[] =>
  spec.map(([word, start, end, item, source]) => ({
    word,
    start,
    end,
    endsSentence: /[.!?]$/.test(word),
    item,
    itemEnd: 100,
    asset,
    source,
    sentence: 0,
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
        ['We', 2.1, 2.3],
        ['go', 2.4, 2.6],
        ['now', 3.4, 3.7],
      ]),
    );
    expect(cues).toEqual([
      { start: 1, end: 2, lines: ['Yes.'] },
      { start: 2.1, end: 3.1, lines: ['We go'] },
      { start: 3.4, end: 4.4, lines: ['now'] },
    ]);
  });

  it('takes a cue that would flash (the next too close to hold it 1 s) into the next, where it may join it', () => {
    const cues = cuesOf(
      placed([
        ['Yes.', 1, 1.3],
        ['We', 1.5, 1.7],
        ['go', 1.8, 2.0],
      ]),
    );
    expect(cues).toEqual([{ start: 1, end: 2, lines: ['Yes. We go'] }]);
  });

  it('takes a cue that would flash into the cue before when the next will not have it', () => {
    const cues = cuesOf(
      placed([
        ['We', 1, 1.2],
        ['go.', 1.3, 1.6],
        ['Yes.', 1.8, 2.1],
        ['Then', 2.3, 2.5],
        ['the', 2.6, 2.7],
        ['ship', 2.8, 3.0],
        ['sailed', 3.1, 3.4],
        ['far', 3.5, 3.7],
      ]),
      CAPTION_RULES,
      (line) => line.length <= 12,
    );
    for (const c of cues) expect(c.end - c.start).toBeGreaterThanOrEqual(1);
    expect(cues.map((c) => c.lines.join(' '))).not.toContain('Yes.');
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

  it('shares a sentence too long for one cue evenly between cues, leaving no stub of a word or two under 1 s', () => {
    const text = 'Out in the dark the fishing boats depend on that single beam of light.'.split(' ');
    const words = placed(text.map((w, i) => [w, 10 + i * 0.3, 10 + i * 0.3 + 0.25] as [string, number, number]));
    // A vertical picture's lines: about 29 characters.
    const cues = cuesOf(words, CAPTION_RULES, (line) => line.length <= 29);
    expect(cues.length).toBe(2);
    for (const c of cues) expect(c.end - c.start).toBeGreaterThanOrEqual(1);
    const sizes = cues.map((c) => c.lines.join(' ').split(' ').length);
    expect(Math.abs(sizes[0]! - sizes[1]!)).toBeLessThanOrEqual(2);
    expect(cues.flatMap((c) => c.lines.join(' ').split(' '))).toEqual(text);
  });

  it('breaks at a cut unless the same sentence runs on from the same source, and always between a cut and an overlay', () => {
    const runsOn = cuesOf(
      sourced([
        ['She', 1, 1.2, 'c0', 4],
        ['saw', 1.3, 1.5, 'c0', 5],
        ['a', 1.6, 1.7, 'c1', 7],
        ['ship.', 1.8, 2.2, 'c1', 8],
      ]),
    );
    expect(runsOn.map((c) => c.lines.join(' '))).toEqual(['She saw a ship.']);
    // Another source after the cut: the cue ends there, however the words run.
    const other = cuesOf([
      ...sourced([
        ['She', 1, 1.2, 'c0', 4],
        ['saw', 1.3, 1.5, 'c0', 5],
      ]),
      ...sourced(
        [
          ['a', 1.6, 1.7, 'c1', 6],
          ['ship.', 1.8, 2.2, 'c1', 7],
        ],
        'b',
      ),
    ]);
    expect(other.map((c) => c.lines.join(' '))).toEqual(['She saw', 'a ship.']);
    expect(other[0]!.end).toBeLessThanOrEqual(1.6);
    // The same source, but words from elsewhere in it (another sentence, or far on): ends there too.
    const jumped = cuesOf(
      sourced([
        ['She', 1, 1.2, 'c0', 4],
        ['saw', 1.3, 1.5, 'c0', 5],
        ['a', 1.6, 1.7, 'c1', 40],
        ['ship.', 1.8, 2.2, 'c1', 41],
      ]),
    );
    expect(jumped.map((c) => c.lines.join(' '))).toEqual(['She saw', 'a ship.']);
    const ended = cuesOf(
      placed([
        ['She', 1, 1.2, 'c0'],
        ['saw.', 1.3, 1.5, 'c0'],
        ['A', 2.6, 2.7, 'c1'],
        ['ship.', 2.8, 3.2, 'c1'],
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

  it('breaks a word longer than a line into pieces that fit, never wider than the picture', () => {
    const layout = captionLayout(DEFAULT_CAPTION_STYLE, 1080, 1920);
    const fits = lineFitsLayout(layout);
    const long = 'https://example.com/a/very/long/path/that/no/caption/line/can/hold/at/all';
    const cues = cuesOf(placed([[long, 1, 3]]), CAPTION_RULES, fits);
    const lines = cues.flatMap((c) => c.lines);
    for (const l of lines) expect(fits(l), l).toBe(true);
    for (const c of cues) expect(c.lines.length).toBeLessThanOrEqual(2);
    expect(lines.join('').replace(/-/g, '')).toBe(long.replace(/-/g, ''));
  });
});

describe('captionLayout', () => {
  it('sizes text by the shorter side, keeps a vertical picture clear of the bottom fifth and the right edge, and places cues where asked', () => {
    const wide = captionLayout(DEFAULT_CAPTION_STYLE, 1920, 1080);
    expect(wide).toMatchObject({ fontSize: 54, alignment: 2, marginL: 96, marginR: 96, marginV: 86 });
    const tall = captionLayout(DEFAULT_CAPTION_STYLE, 1080, 1920);
    expect(tall).toMatchObject({ fontSize: 54, alignment: 2, marginL: 54, marginR: 162 });
    expect(tall.marginV).toBeGreaterThanOrEqual(0.2 * 1920);
    expect(captionLayout({ ...DEFAULT_CAPTION_STYLE, position: 'top' }, 1080, 1920).alignment).toBe(8);
    expect(captionLayout({ ...DEFAULT_CAPTION_STYLE, position: 'middle' }, 1080, 1920).alignment).toBe(5);
    expect(captionLayout({ ...DEFAULT_CAPTION_STYLE, margin: 30 }, 1920, 1080).marginV).toBe(324);
  });

  it('breaks lines where they fit the picture at its size: two lines of a vertical cue fit its width', () => {
    const text =
      'The lighthouse keeper walked along the shore and saw a ship in the storm that night before the bell rang out'.split(
        ' ',
      );
    const words = placed(text.map((w, i) => [w, i * 0.3, i * 0.3 + 0.25] as [string, number, number]));
    for (const [w, h] of [
      [1920, 1080],
      [1080, 1920],
      [1080, 1080],
      [640, 1138],
    ] as const) {
      const layout = captionLayout(DEFAULT_CAPTION_STYLE, w, h);
      const cues = cuesOf(words, CAPTION_RULES, lineFitsLayout(layout));
      for (const c of cues) {
        expect(c.lines.length).toBeLessThanOrEqual(2);
        for (const l of c.lines) {
          expect(l.length).toBeLessThanOrEqual(42);
          expect(textEms(l) * layout.fontSize + 2 * layout.outline).toBeLessThanOrEqual(layout.lineWidth);
        }
      }
      expect(cues.flatMap((c) => c.lines.join(' ').split(' '))).toEqual(text);
    }
  });
});

describe('recognised speech without sentence ends, and muted items', () => {
  // Two sentences said as one with no punctuation (recognition), 0.32 s apart; each word 0.3 s, 0.02 s between.
  const said = (first: number, n: number) =>
    Array.from({ length: n }, (_, i) => [`w${first + i}`, 0, 0] as [string, number, number]);
  const spec = [...said(0, 14), ...said(14, 14)];
  let t = 0.5;
  spec.forEach((w, i) => {
    if (i === 14) t += 0.3;
    w[1] = t;
    w[2] = t + 0.3;
    t += 0.32;
  });
  const timeline = normalizeEdit({
    video_series_sequential: [{ video_id: 'v', video_start_time: 0, video_end_time: 12 }],
  }).timeline!;

  it('ends a cue at a pause of 0.3 s where the transcript marks no sentence end for longer than a cue lasts', () => {
    const cues = cuesOf(wordsOnTimeline(timeline, new Map([['v', { words: timed(spec) }]])));
    const text = cues.map((c) => c.lines.join(' '));
    expect(text.some((c) => c.includes('w13') && c.includes('w14'))).toBe(false);
  });

  it('keeps an aligned script as it breaks (no break at a pause inside its sentence)', () => {
    const aligned = cuesOf(
      wordsOnTimeline(
        timeline,
        new Map([['v', { words: timed(spec), sentences: [{ first_word: 0, last_word: 27 }], aligned: true }]]),
      ),
    );
    const recognised = cuesOf(wordsOnTimeline(timeline, new Map([['v', { words: timed(spec) }]])));
    expect(aligned).not.toEqual(recognised);
    expect(aligned.some((c) => c.lines.join(' ').includes('w13 w14'))).toBe(true);
  });

  it('hears no asset of a clip at volume 0 or a gain of -30 dB, nor a muted voiceover', () => {
    const t = normalizeEdit({
      video_series_sequential: [
        {
          video_id: 'muted',
          video_start_time: 0,
          video_end_time: 4,
          audio_levels: [{ audio_level: 0, start_time: 0, end_time: 4 }],
        },
        { video_id: 'quiet', video_start_time: 0, video_end_time: 4, gain_db: -40 },
        {
          video_id: 'half',
          video_start_time: 0,
          video_end_time: 4,
          audio_levels: [{ audio_level: 0, start_time: 0, end_time: 2 }],
        },
      ],
      audio_overlay: [
        {
          audio_id: 'vo',
          audio_start_time: 1,
          audio_end_time: 3,
          audio_levels: [{ audio_level: 0, start_time: 1, end_time: 3 }],
        },
        { audio_id: 'vo2', audio_start_time: 1, audio_end_time: 3 },
      ],
    }).timeline!;
    expect([...heardAssets(t)].sort()).toEqual(['half', 'vo2']);
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

  it('places a word two joined cuts of one source both hold once, and leaves out a word said again across their join', () => {
    const words = timed([
      ['She', 1, 1.2],
      ['saw', 1.3, 1.6],
      ['the', 1.7, 1.8],
      ['the', 2.0, 2.1],
      ['ship.', 2.2, 2.6],
    ]);
    const t = normalizeEdit({
      video_series_sequential: [
        // Ends after the first "the": the next cut starts before it again, then "the" is said again.
        { video_id: 'v', video_start_time: 1, video_end_time: 1.83 },
        { video_id: 'v', video_start_time: 1.68, video_end_time: 3 },
      ],
    }).timeline!;
    const got = wordsOnTimeline(t, new Map([['v', words]])).map((w) => w.word);
    expect(got).toEqual(['She', 'saw', 'the', 'ship.']);
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
    expect(n.timeline!.captions).toEqual({ burn: true, style: { size: 8, color: 'FFFF00', position: 'bottom' } });
    const bad = normalizeEdit({
      video_series_sequential: [{ video_id: 'v', video_start_time: 0, video_end_time: 2 }],
      captions: { burn: 'yes', style: { size: 40, color: 'red', position: 'left', margin: 60 } },
    });
    expect(bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.path)).toEqual([
      '/captions/burn',
      '/captions/style/size',
      '/captions/style/color',
      '/captions/style/position',
      '/captions/style/margin',
    ]);
    const placedAt = normalizeEdit({
      video_series_sequential: [{ video_id: 'v', video_start_time: 0, video_end_time: 2 }],
      captions: { style: { position: 'Top', margin: 10 } },
    });
    expect(placedAt.edit!.captions).toEqual({ burn: true, style: { position: 'top', margin: 10 } });
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

  it('writes SRT with numbered cues and comma milliseconds, its tags and overrides shown as look-alikes', () => {
    expect(writeSrt(cues)).toBe(
      '1\n00:00:00,500 --> 00:00:01,750\nHello \u2039world\u203a & all,\nline two\n\n2\n01:01:01,001 --> 01:01:02,000\n(later)\u29f5\n',
    );
    const markup = writeSrt([{ start: 0, end: 1, lines: ['{\\fs400}big <b>bold</b> <script>x</script>'] }]);
    expect(markup.split('\n')[2]).not.toMatch(/[<>{}\\]/);
    expect(markup).toContain('(\u29f5fs400)big \u2039b\u203abold');
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
      alignment: 2 as const,
      marginL: 32,
      marginR: 32,
      marginV: 29,
      lineWidth: 576,
    };
    const ass = assScript(layout, cues);
    expect(ass).toContain('PlayResX: 640\nPlayResY: 360');
    expect(ass).toContain('Style: Default,DejaVu Sans,18,&H0000FFFF,');
    expect(ass).toContain('Dialogue: 0,0:00:00.50,0:00:01.75,Default,,0,0,0,,Hello <world> & all,\\Nline two');
    expect(ass).toContain('Dialogue: 0,1:01:01.00,1:01:02.00,Default,,0,0,0,,(later)\u29f5');
  });
});
