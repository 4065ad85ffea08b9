// Related words for find_moments' about (src/analysis/related-words.ts), pure: WordNet's line formats read from a few
// lines written here as Debian's wordnet-base writes them, and the fallback without WordNet (words said beside the
// subject in the transcript) carrying a passage in findMoments.
import { describe, expect, it } from 'vitest';
import { findMoments, type MomentSource } from '../../src/analysis/moments.js';
import {
  baseForms,
  parseDataLine,
  parseExceptions,
  relatedness,
  wordnetRelated,
  type WordnetText,
} from '../../src/analysis/related-words.js';
import { createPronouncer } from '../../src/analysis/sound-search.js';
import { sentencesOf, type TimedWord } from '../../src/edit/words.js';

/** A data file of the given lines, each at the byte offset it names (padded as WordNet's 8-digit offsets are). */
function dataFile(lines: ((offset: string) => string)[]): { text: string; offsets: string[] } {
  let text = '  1 license header\n';
  const offsets: string[] = [];
  for (const line of lines) {
    const offset = String(text.length).padStart(8, '0');
    offsets.push(offset);
    text += `${line(offset)}\n`;
  }
  return { text, offsets };
}

describe('WordNet', () => {
  // storm (a weather condition, gloss with winds), a kind of it (windstorm), and a synset whose gloss mentions it.
  const noun = dataFile([
    (o) => `${o} 19 n 02 storm 0 violent_storm 0 001 ~ 00000060 n 0000 | a violent weather condition with winds`,
    (o) => `${o} 19 n 01 windstorm 0 000 | a storm consisting of violent winds`,
    (o) => `${o} 26 n 01 boisterousness 0 000 | a turbulent and stormy state of the sea; "the boat rocked"`,
  ]);
  // The hyponym pointer names the second line's offset.
  const data = noun.text.replace('~ 00000060', `~ ${noun.offsets[1]}`);
  const text: WordnetText = {
    data: { noun: data },
    index: { noun: `  1 license\nstorm n 1 1 ~ 1 0 ${noun.offsets[0]}  \nwindstorm n 1 0 1 0 ${noun.offsets[1]}  \n` },
    exceptions: { noun: 'mice mouse\n' },
  };

  it('reads a data line: lemmas, pointers and the definition without its examples', () => {
    const line = data.split('\n')[1]!;
    expect(parseDataLine(line)).toEqual({
      lemmas: ['storm', 'violent_storm'],
      pointers: [{ symbol: '~', offset: Number(noun.offsets[1]), pos: 'noun' }],
      gloss: 'a violent weather condition with winds',
    });
    expect(parseDataLine(data.split('\n')[3]!)?.gloss).toBe('a turbulent and stormy state of the sea');
  });

  it('relates the words of its definition, its kinds and definitions that mention it; not the subject itself', () => {
    const related = wordnetRelated('storms', text, parseExceptions(text));
    expect(related.get('weather')).toBe(0.6);
    expect(related.get('winds')).toBe(0.6);
    expect(related.get('windstorm')).toBe(0.7);
    expect(related.get('sea')).toBe(0.4);
    expect(related.get('violent')).toBe(0.6);
    expect(related.has('storm')).toBe(false);
    expect(related.has('the')).toBe(false);
    // "The wind tore the roofs": wind is winds' base; the sea alone says less.
    expect(relatedness('The wind tore the roofs'.split(' '), related).score).toBe(0.6);
    expect(relatedness('The sea came over the wall'.split(' '), related)).toEqual({ score: 0.4, heard: ['sea'] });
    expect(baseForms('mice', parseExceptions(text))).toContain('mouse');
  });
});

describe('about without WordNet', () => {
  /** Words 0.3 s long, 0.1 s apart, 0.8 s after a sentence's end. */
  function say(text: string): TimedWord[] {
    let at = 0;
    return text.split(' ').map((word, index) => {
      const w = { index, word, start_seconds: Math.round(at * 10) / 10, end_seconds: Math.round((at + 0.3) * 10) / 10 };
      at += word.endsWith('.') ? 1.1 : 0.4;
      return w;
    });
  }
  it('joins the sentences that go on about what the subject was said with (words said beside it)', () => {
    const words = say(
      'We baked bread. The storm broke the harbor wall. The harbor wall fell into the water. We painted the fence.',
    );
    const src: MomentSource = { asset_id: 'a', duration: 20, words, sentences: sentencesOf(words) };
    const { moments } = findMoments([src], 2, {
      about: 'the storm',
      minSeconds: 1,
      maxSeconds: 10,
      pronouncer: createPronouncer(),
    });
    expect(moments[0]!.text).toBe('The storm broke the harbor wall. The harbor wall fell into the water.');
    expect(moments[0]!.signals.about_heard).toMatch(/storm.*harbor/);
    expect(moments[1]!.signals.about).toBe(0);
  });
});
