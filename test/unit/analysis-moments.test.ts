// find_moments' rank and tighten_edit's plan (src/analysis/moments.ts, tighten.ts), pure: what the integration tests
// cannot plant cheaply (a sentence longer than a moment, a source with no words, a motion curve, volume windows).
import { describe, expect, it } from 'vitest';
import { findMoments, type MomentSource } from '../../src/analysis/moments.js';
import { createPronouncer } from '../../src/analysis/sound-search.js';
import { planTighten } from '../../src/analysis/tighten.js';
import { sentencesOf, type TimedWord } from '../../src/edit/words.js';
import type { Edit } from '../../src/edit/model.js';

/** Words said one after the other from `at`, each `d` long with `gap` between, pauses given per word index. */
function say(text: string, at = 0, d = 0.3, gap = 0.1, pauses: Record<number, number> = {}): TimedWord[] {
  let t = at;
  return text.split(' ').map((word, index) => {
    t += pauses[index] ?? 0;
    const w = {
      index,
      word,
      start_seconds: Math.round(t * 1000) / 1000,
      end_seconds: Math.round((t + d) * 1000) / 1000,
    };
    t += d + gap;
    return w;
  });
}
const flat = (n: number, db: number) =>
  Array.from({ length: n }, (_, i) => ({ start_seconds: i * 0.5, mean_db: db, peak_db: db + 10 }));

describe('findMoments', () => {
  it('splits a sentence longer than a moment at its longest pauses, never inside a word, and says it is cut', () => {
    // 30 words, 12 s, no pause of a sentence's length: one "sentence"; the longest pauses are after words 9 and 19.
    const words = say(Array.from({ length: 30 }, (_, i) => `w${i}`).join(' '), 0, 0.3, 0.1, { 10: 0.4, 20: 0.3 });
    const src: MomentSource = { asset_id: 'a', duration: 14, words, sentences: sentencesOf(words) };
    expect(src.sentences).toHaveLength(1);
    const { moments } = findMoments([src], 5, { minSeconds: 1, maxSeconds: 5 });
    for (const m of moments) {
      expect(m.end_seconds - m.start_seconds).toBeLessThanOrEqual(5 + 0.3);
      expect(m.signals.sentences_cut).toBe(1);
      const [a, b] = m.clip.words!;
      expect([0, 10, 20]).toContain(a);
      expect([9, 19, 29]).toContain(b);
    }
  });

  it('without words, ranks runs of whole shots: the busy, moving, loud one first; the same order every time', () => {
    const shots = [0, 10, 11, 12, 13, 14, 20].map((s, i, all) => ({ start_seconds: s, end_seconds: all[i + 1] ?? 30 }));
    const loudness = flat(60, -30).map((l) =>
      l.start_seconds >= 10 && l.start_seconds < 15 ? { ...l, mean_db: -15, peak_db: -3 } : l,
    );
    const motion = {
      windowSeconds: 0.5,
      bitsPerPixel: Array.from({ length: 60 }, (_, i) => (i >= 20 && i < 30 ? 0.4 : 0.05)),
    };
    const src: MomentSource = { asset_id: 'v', duration: 30, shots, loudness, loudnessWindow: 0.5, motion };
    const one = findMoments([src], 3, { minSeconds: 2, maxSeconds: 6 });
    expect(one.moments[0]).toMatchObject({
      start_seconds: 10,
      end_seconds: 14,
      clip: { asset_id: 'v', start: 10, end: 14 },
    });
    expect(one.moments[0]!.signals).toMatchObject({ cuts: 3, louder_than_source_db: 15, motion: 8 });
    expect(one.moments[0]!.reason).toMatch(/15 dB louder than the source's median/);
    // No two moments overlap.
    for (const [i, a] of one.moments.entries())
      for (const b of one.moments.slice(i + 1))
        expect(a.end_seconds <= b.start_seconds || b.end_seconds <= a.start_seconds).toBe(true);
    expect(findMoments([src], 3, { minSeconds: 2, maxSeconds: 6 })).toEqual(one);
  });

  it('weighs about: a sentence that says it (or sounds like it) over a louder one that does not', () => {
    const words = [
      ...say('we went to the market', 0),
      ...say('the light house keeper waved', 4).map((w) => ({ ...w, index: w.index + 5 })),
    ];
    const loudness = flat(20, -20).map((l) => (l.start_seconds < 3 ? { ...l, mean_db: -10 } : l));
    const src: MomentSource = {
      asset_id: 'a',
      duration: 10,
      words,
      sentences: sentencesOf(words),
      loudness,
      loudnessWindow: 0.5,
    };
    const { moments } = findMoments([src], 2, {
      about: 'lighthouse',
      minSeconds: 1,
      maxSeconds: 3,
      pronouncer: createPronouncer(),
    });
    expect(moments[0]!.text).toBe('the light house keeper waved');
    expect(moments[0]!.signals.about).toBeGreaterThan(0.7);
    expect(moments[0]!.signals.about_heard).toMatch(/light house/);
    expect(moments[1]!.signals.about).toBe(0);
  });
});

describe('planTighten', () => {
  const edit = (segs: [string, string, string][]): Edit => ({
    video_edit_version: '1.0',
    video_output_format: 'mp4',
    video_output_resolution: '640x360',
    video_output_fps: 25,
    video_output_filename: 'x.mp4',
    audio_overlay: [],
    video_series_sequential: segs.map(([id, a, b]) => ({
      video_id: id,
      type: 'videofile',
      video_start_time: a,
      video_end_time: b,
      audio_levels: [{ audio_level: 0.5, start_time: '00:00:00.000', end_time: '00:00:10.000' }],
    })),
  });

  it('says every removal in a person\'s words: a pause the words show is a pause, not "between removals"', () => {
    // "so um we went home then we slept", a 0.9 s pause before "then"; the silence measured there reaches 0.25 s
    // into the words around it (the aligner's times are loose), so what is cut is under half of it: still that pause.
    const words = say('so um we went home then we slept', 0, 0.3, 0.1, { 5: 0.9 });
    const silences = [{ start_seconds: words[4]!.end_seconds - 0.25, end_seconds: words[5]!.start_seconds + 0.25 }];
    const plan = planTighten(
      edit([['a', '00:00:00.000', '00:00:05.000']]),
      new Map([['a', { words, duration: 10, silences }]]),
    );
    expect(plan.removals.map((r) => r.reason)).toEqual(['filler "um"', 'pause of 1.00 s']);
  });

  it('removes a word alone in an island heard as a filler, but never a word people say alone ("no", "well")', () => {
    // "we came add here no we left well": "add", "no" and "well" each alone between 0.5 s pauses, each in an island
    // the sound measured as one steady voiced sound (as flite's "uh" and a lone "no" both do).
    const words = say('we came add here no we left well', 0, 0.3, 0.1, { 2: 0.5, 3: 0.5, 4: 0.5, 5: 0.5, 7: 0.5 });
    const island = (i: number) => ({ from: words[i]!.start_seconds - 0.05, to: words[i]!.end_seconds + 0.05 });
    const plan = planTighten(
      edit([['a', '00:00:00.000', '00:00:07.000']]),
      new Map([['a', { words, duration: 10, heardFillers: [island(2), island(4), island(7)] }]]),
    );
    const reasons = plan.removals.map((r) => r.reason);
    expect(reasons).toContain('filler heard (written "add")');
    expect(reasons.filter((r) => r.includes('filler heard'))).toHaveLength(1);
  });

  it('cuts a heard filler out whole when a silence is measured on one side of it only (issue 46: under a bed)', () => {
    // "over the water am then the bell": "am" (flite's "um", as recognition wrote it under a bed) alone between
    // pauses, its island measured; under the bed the inspection found the pause on one side only. The cut must go
    // in the pause on each side of the island, not twice into the one silence (which kept the filler).
    const words = say('over the water am then the bell', 0, 0.3, 0.1, { 3: 0.7, 4: 0.6 });
    const island = { from: words[3]!.start_seconds + 0.01, to: words[3]!.end_seconds - 0.05 };
    const cut = edit([['a', '00:00:00.000', '00:00:04.000']]);
    const secs = (t: string) => Number(t.slice(6));
    for (const silences of [
      [{ start_seconds: words[2]!.end_seconds + 0.15, end_seconds: words[3]!.start_seconds - 0.15 }],
      [{ start_seconds: words[3]!.end_seconds + 0.15, end_seconds: words[4]!.start_seconds - 0.1 }],
    ]) {
      const plan = planTighten(cut, new Map([['a', { words, duration: 10, silences, heardFillers: [island] }]]));
      expect(plan.removals.map((r) => r.reason)).toEqual(['filler heard (written "am")']);
      const pieces = plan.edit.video_series_sequential.map((s) => [secs(s.video_start_time), secs(s.video_end_time)]);
      for (const [a, b] of pieces) expect(Math.min(b!, island.to) - Math.max(a!, island.from)).toBeLessThanOrEqual(0);
      // The kept words are whole.
      for (const w of words.filter((x) => x.word !== 'am'))
        expect(pieces.some(([a, b]) => a! <= w.start_seconds && b! >= w.end_seconds)).toBe(true);
      expect(plan.fillers.removed).toBe(1);
    }
  });

  it('takes out a word said twice only when both were heard for sure (recognition repeats a word it half heard)', () => {
    // "just you you all": recognition's reading of "to see you all", its first "you" unsure (0.14, as PocketSphinx gave).
    const words = say('just you you all', 0, 0.3, 0.05).map((w, i) => ({ ...w, confidence: i === 1 ? 0.14 : 0.8 }));
    const cut = edit([['a', '00:00:00.000', '00:00:02.000']]);
    const unsure = planTighten(cut, new Map([['a', { words, duration: 5 }]]));
    expect(unsure.removals).toEqual([]);
    const sure = words.map((w) => ({ ...w, confidence: 0.8 }));
    const plan = planTighten(cut, new Map([['a', { words: sure, duration: 5 }]]));
    expect(plan.removals.map((r) => r.reason)).toEqual(['"you" said twice']);
    // A word the aligner doubted is not sure either.
    const doubted = planTighten(cut, new Map([['a', { words: sure, duration: 5, unplaced: new Set([2]) }]]));
    expect(doubted.removals).toEqual([]);
  });

  it('cuts in the pauses around what goes; volume windows held to each piece; an untranscribed cut left as it is', () => {
    // "so um we went went home" with a 2 s pause before "home"
    const words = say('so um we went went home', 1, 0.3, 0.3, { 5: 2 });
    const plan = planTighten(
      edit([
        ['a', '00:00:00.800', '00:00:07.000'],
        ['b', '00:00:00.000', '00:00:02.000'],
      ]),
      new Map([['a', { words, duration: 10 }]]),
    );
    expect(plan.untranscribed).toEqual([1]);
    expect(plan.removals.map((r) => r.reason)).toEqual(['filler "um"', '"went" said twice', 'pause of 2.30 s']);
    const segs = plan.edit.video_series_sequential;
    expect(segs.at(-1)).toEqual(edit([['b', '00:00:00.000', '00:00:02.000']]).video_series_sequential[0]);
    expect(segs[0]!.video_start_time).toBe('00:00:00.800');
    expect(segs.at(-2)!.video_end_time).toBe('00:00:07.000');
    const secs = (t: string) => Number(t.slice(6));
    for (const s of segs.slice(0, -1)) {
      for (const w of words) {
        const [a, b] = [secs(s.video_start_time), secs(s.video_end_time)];
        expect(w.start_seconds < a && w.end_seconds > a).toBe(false);
        expect(w.start_seconds < b && w.end_seconds > b).toBe(false);
      }
      expect(s.audio_levels).toEqual([
        { audio_level: 0.5, start_time: s.video_start_time, end_time: s.video_end_time },
      ]);
    }
    // A measured silence decides where the cut goes when the words' times touch (a filler stretched over a pause).
    const stretched = words.map((w) => (w.word === 'um' ? { ...w, start_seconds: 1.3, end_seconds: 2.2 } : w));
    const withSilence = planTighten(
      edit([['a', '00:00:00.800', '00:00:07.000']]),
      new Map([['a', { words: stretched, duration: 10, silences: [{ start_seconds: 1.95, end_seconds: 2.15 }] }]]),
    );
    expect(withSilence.edit.video_series_sequential[1]!.video_start_time).toBe('00:00:02.050');
  });

  it('never takes out as a pause the time of words the transcript did not place (issue 46: 1.6 s of speech cut)', () => {
    // "we are so happy uh then we left": "so happy uh" unplaced, their guessed times squeezed after "are", leaving a
    // 2.1 s gap before "then" that is speech.
    const words = say('we are so happy uh then we left', 1, 0.3, 0.1);
    const squeezed = words.map((w) =>
      w.index >= 2 && w.index <= 4
        ? { ...w, start_seconds: 1.8 + (w.index - 2) * 0.01, end_seconds: 1.81 + (w.index - 2) * 0.01 }
        : w.index > 4
          ? { ...w, start_seconds: w.start_seconds + 2, end_seconds: w.end_seconds + 2 }
          : w,
    );
    const plan = planTighten(
      edit([['a', '00:00:00.800', '00:00:07.000']]),
      new Map([['a', { words: squeezed, duration: 10, unplaced: new Set([2, 3, 4]) }]]),
      { fillers: [] },
    );
    expect(plan.removals).toEqual([]);
    expect(plan.edit.video_series_sequential).toHaveLength(1);
  });

  it('does not call a filler placed in measured silence removed, and counts what it looked for and found', () => {
    // "um" placed in the silence before its sound (the aligner put it in the pause), "uh" where its sound is.
    const words = say('so um we went uh home', 1, 0.3, 0.3);
    const silences = [
      { start_seconds: 1.25, end_seconds: 2.0 },
      { start_seconds: 3.15, end_seconds: 3.35 },
      { start_seconds: 3.75, end_seconds: 3.95 },
    ];
    const plan = planTighten(
      edit([['a', '00:00:00.800', '00:00:05.000']]),
      new Map([['a', { words, duration: 10, silences }]]),
    );
    expect(plan.removals.map((r) => r.reason)).toEqual(['filler "uh"']);
    expect(plan.fillers).toMatchObject({ found: 2, removed: 1 });
    expect(plan.fillers.looked_for).toEqual(expect.arrayContaining(['um', 'uh', 'er', 'erm']));
    expect(plan.fillers.in_silence).toEqual([
      { cut: 0, asset_id: 'a', word: 'um', start_seconds: 1.6, end_seconds: 1.9 },
    ]);
  });
});

describe('findMoments on a transcript that heard words in the pauses', () => {
  it('splits a long "sentence" at the silences the sound holds, before the first word past each one\'s middle', () => {
    // Three phrases of 5 words (2 s each) with 1 s pauses between, in which a word was "heard" (no gap in the words).
    const words: TimedWord[] = [];
    for (let p = 0; p < 3; p++) {
      for (let k = 0; k < 5; k++)
        words.push({
          index: words.length,
          word: `p${p}w${k}`,
          start_seconds: p * 3 + k * 0.4,
          end_seconds: p * 3 + k * 0.4 + 0.4,
        });
      if (p < 2) words.push({ index: words.length, word: 'uh', start_seconds: p * 3 + 2, end_seconds: p * 3 + 3 });
    }
    const silences = [
      { start_seconds: 2.1, end_seconds: 2.9 },
      { start_seconds: 5.1, end_seconds: 5.9 },
    ];
    const src: MomentSource = { asset_id: 'a', duration: 9, words, sentences: sentencesOf(words), silences };
    expect(src.sentences).toHaveLength(1);
    const { moments } = findMoments([src], 3, { minSeconds: 1, maxSeconds: 3 });
    expect(moments.map((m) => m.clip.words).sort((a, b) => a![0]! - b![0]!)).toEqual([
      [0, 5],
      [6, 11],
      [12, 16],
    ]);
  });
});
