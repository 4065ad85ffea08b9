// transcribe_asset's pages (workflow/transcribe.ts transcriptPage) against cursors an agent should not have: hostile
// values, and a next_cursor of another transcript (another asset, another span, a text aligned since) that used to be
// read as an index into words it never counted.
import { describe, expect, it } from 'vitest';
import { transcriptPage } from '../../src/workflow/transcribe.js';
import type { Transcript } from '../../src/workflow/transcript.js';

/** A transcript of `count` words, a sentence every 10 words, each word `seconds` long from `from`. */
function transcript(
  count: number,
  opts: { asset?: string; from?: number; said?: (i: number) => string } = {},
): Transcript {
  const from = opts.from ?? 0;
  const words = Array.from({ length: count }, (_, i) => ({
    index: i,
    word: opts.said?.(i) ?? `word${i}`,
    start_seconds: from + i * 0.5,
    end_seconds: from + i * 0.5 + 0.4,
  }));
  const sentences = Array.from({ length: Math.ceil(count / 10) }, (_, s) => {
    const first = s * 10;
    const last = Math.min(count, first + 10) - 1;
    return {
      index: s,
      text: words
        .slice(first, last + 1)
        .map((w) => w.word)
        .join(' '),
      start_seconds: words[first]!.start_seconds,
      end_seconds: words[last]!.end_seconds,
      first_word: first,
      last_word: last,
    };
  });
  return {
    asset_id: opts.asset ?? 'a1',
    engine: { name: 'pocketsphinx' },
    language: 'en-us',
    duration_seconds: from + count * 0.5,
    from_seconds: from,
    to_seconds: from + count * 0.5,
    aligned: false,
    words,
    sentences,
    cached: true,
  };
}
const uri = 'vj://projects/p/assets/a1/transcript';

describe('transcript pages and their cursors', () => {
  const long = transcript(3000);

  it('the next_cursor of a page reads the next page of the same transcript, to the end', () => {
    let cursor: string | undefined;
    let covered = 0;
    let pages = 0;
    do {
      const page = transcriptPage(long, { words: true, uri, ...(cursor ? { cursor } : {}) });
      expect(page.words![0]!.index).toBe(covered);
      covered = page.words!.at(-1)!.index + 1;
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    expect(covered).toBe(3000);
    expect(pages).toBeGreaterThan(2);
  });

  it('refuses a next_cursor of another asset, another span or other words, saying how to start again', () => {
    const cursor = transcriptPage(long, { words: true, uri }).next_cursor!;
    const others = [
      transcript(3000, { asset: 'a2' }),
      transcript(3000, { from: 60 }),
      transcript(3000, { said: (i) => (i === 7 ? 'lighthouse' : `word${i}`) }),
    ];
    for (const other of others) {
      expect(() => transcriptPage(other, { words: true, cursor, uri })).toThrow(
        /is a page of another transcript \(another asset, span or text, or one made again since\); leave cursor out to start again/,
      );
    }
  });

  it('refuses hostile cursors in one short line', () => {
    const tag = transcriptPage(long, { uri }).next_cursor!.split('.')[1];
    for (const bad of [
      'w5',
      'w-1',
      `w-1.${tag}`,
      `w1e3.${tag}`,
      `w9999999999.${tag}`,
      `w３.${tag}`,
      `w3000.${tag}`,
      `w99999.${tag}`,
      '',
      ' ',
      `w5.${tag}.x`,
      `${'w'.repeat(100_000)}`,
      'w5\u0000.abcdef01',
    ]) {
      let message = '';
      try {
        transcriptPage(long, { cursor: bad, uri });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, JSON.stringify(bad.slice(0, 20))).toMatch(
        /^cursor ".{0,30}" is (not a page of this transcript \(it has 3000 words\)|a page of another transcript)/s,
      );
      expect(message.length).toBeLessThan(300);
    }
    // A cursor with spaces around it is still the cursor it was.
    expect(transcriptPage(long, { cursor: ` w10.${tag} `, uri }).sentences[0]!.first_word).toBe(10);
  });
});
