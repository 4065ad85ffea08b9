// Correcting a transcript (issue 47, item 1), through the built server over stdio, on speech whose true words and
// times are known (flite): free recognition mishears; the right words given for a sentence (replace: its first and
// last word) and for a few words inside another are aligned to the sound there and kept. From then on the transcript,
// search, captions and clips cut by words follow them (measured against the true word times), and they survive a
// restart of the server.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { WORD_CUT_FPS, makeWordCutMedia, type PlacedWord } from '../helpers/word-cut-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-corrections-'));
const allowed = join(root, 'allowed');
const SENTENCES = [
  'The fisherman mended his nets by the harbour wall.',
  'A heron stood in the shallow water near the jetty.',
  'The postman carried a parcel up the steep hill.',
];
const env = {
  CUTROOM_DATA_DIR: join(root, 'data'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
  CUTROOM_LOG_LEVEL: 'error',
};

type Word = { index: number; word: string; start_seconds: number; end_seconds: number };
type Sentence = { index: number; text: string; first_word: number; last_word: number; start_seconds: number };
type Page = { words: Word[]; sentences: Sentence[]; corrected?: number[][]; aligned: boolean; next_cursor?: string };
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};
const key = (w: string) => w.toLowerCase().replace(/[^a-z']/g, '');
const secs = (tc: string) => {
  const [h, m, s] = tc.replace(',', '.').split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
};

let server: Spawned;
let projectId: string;
let assetId: string;
let truth: PlacedWord[];
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 600_000 });

/** The whole transcript, every page. */
async function wholeTranscript(): Promise<Page> {
  const first = structured<Page>(
    await call('transcribe_asset', { project_id: projectId, asset_id: assetId, words: true }),
  );
  const words = [...first.words];
  const sentences = [...first.sentences];
  for (let cursor = first.next_cursor; cursor;) {
    const page = structured<Page>(
      await call('transcribe_asset', { project_id: projectId, asset_id: assetId, words: true, cursor }),
    );
    words.push(...page.words.filter((w) => w.index >= words.length));
    sentences.push(...page.sentences.filter((s) => s.index >= sentences.length));
    cursor = page.next_cursor;
  }
  return { ...first, words, sentences };
}

/** The true words of sentence `i`. */
const trueSentence = (i: number) => truth.filter((w) => w.sentence === i);

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  server = await spawnServer(env);
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'corrections', description: 'corrections' }),
  ).project.id;
  const made = makeWordCutMedia(allowed, 'talk', 'slt', SENTENCES, [1.0]);
  truth = made.words;
  assetId = structured<{ asset: { id: string } }>(
    await call('import_media', { project_id: projectId, path: made.video }),
  ).asset.id;
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('correcting a transcript', () => {
  it('replaces a sentence and a few words with the right ones, aligned to the sound; transcript, search, captions and cuts follow, after a restart too', async () => {
    const heard = await wholeTranscript();
    expect(heard.aligned).toBe(false);
    // The recognised sentence over the second true sentence (by time), and its first and last word.
    const second = trueSentence(1);
    const inside = heard.words.filter(
      (w) =>
        (w.start_seconds + w.end_seconds) / 2 > second[0]!.start - 0.2 &&
        (w.start_seconds + w.end_seconds) / 2 < second.at(-1)!.end + 0.2,
    );
    expect(inside.length, 'recognition heard words in the second sentence').toBeGreaterThan(2);
    const corrected = structured<Page & { words?: Word[] }>(
      await call('transcribe_asset', {
        project_id: projectId,
        asset_id: assetId,
        text: SENTENCES[1],
        replace: [inside[0]!.index, inside.at(-1)!.index],
        words: true,
      }),
    );
    expect(corrected.corrected).toEqual([[inside[0]!.index, inside[0]!.index + second.length - 1]]);
    // A few words inside the third sentence: the two words recognised over "parcel up" (by time), given right.
    const now = await wholeTranscript();
    const third = trueSentence(2);
    const parcel = third.find((w) => w.word === 'parcel')!;
    const up = third.find((w) => w.word === 'up')!;
    const over = now.words.filter(
      (w) =>
        (w.start_seconds + w.end_seconds) / 2 > parcel.start - 0.05 &&
        (w.start_seconds + w.end_seconds) / 2 < up.end + 0.05,
    );
    expect(over.length).toBeGreaterThan(0);
    structured(
      await call('transcribe_asset', {
        project_id: projectId,
        asset_id: assetId,
        text: 'parcel up',
        replace: [over[0]!.index, over.at(-1)!.index],
      }),
    );

    const check = async (when: string) => {
      const t = await wholeTranscript();
      // The corrected words are the true ones, each within 0.25 s of where it was said.
      const given = [...second, parcel, up];
      for (const g of given) {
        const found = t.words.find(
          (w) =>
            key(w.word) === key(g.word) &&
            Math.abs(w.start_seconds - g.start) < 0.25 &&
            Math.abs(w.end_seconds - g.end) < 0.25,
        );
        expect(found, `${when}: "${g.word}" at ${g.start.toFixed(2)}-${g.end.toFixed(2)} s`).toBeDefined();
      }
      expect(t.corrected?.length, when).toBe(2);
      // Search finds a corrected word by its spelling, where it was said.
      const hits = structured<{ hits: { match: string; start_seconds: number; words?: number[] }[] }>(
        await call('search_transcripts', { project_id: projectId, query: 'shallow water' }),
      ).hits;
      const shallow = second.find((w) => w.word === 'shallow')!;
      expect(
        hits.some((h) => h.match === 'exact' && Math.abs(h.start_seconds - shallow.start) < 0.25),
        `${when}: search finds "shallow water"`,
      ).toBe(true);
      // A clip cut by a corrected phrase plays it: its in and out points around the true words.
      const c = structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
        await call('compose_edit', {
          project_id: projectId,
          resolution: '320x180',
          fps: WORD_CUT_FPS,
          clips: [{ asset_id: assetId, phrase: 'a heron stood in the shallow water near the jetty' }],
          captions: { burn: false },
        }),
      );
      expect(c.ready, JSON.stringify(c.diagnostics)).toBe(true);
      const seg = (
        await storedEdit<{ video_series_sequential: { video_start_time: string; video_end_time: string }[] }>(
          server.client,
          c.edit_id,
        )
      ).video_series_sequential[0]!;
      expect(secs(seg.video_start_time)).toBeLessThanOrEqual(second[0]!.start + 0.02);
      expect(secs(seg.video_start_time)).toBeGreaterThan(second[0]!.start - 0.5);
      expect(secs(seg.video_end_time)).toBeGreaterThanOrEqual(second.at(-1)!.end - 0.02);
      expect(secs(seg.video_end_time)).toBeLessThan(second.at(-1)!.end + 0.5);
      // The captions hold the sentence as given, and no longer count it among the words recognition may have wrong.
      const srt = structured<{ path: string; warnings: string[] }>(
        await call('export_edit', { edit_id: c.edit_id, format: 'srt' }),
      );
      const text = readFileSync(srt.path, 'utf8');
      expect(text.replace(/\n/g, ' ')).toContain('A heron stood in the shallow water near the jetty.');
      expect(srt.warnings.join('\n')).not.toMatch(/captioned from speech recognition/);
    };
    await check('corrected');
    await server.close();
    server = await spawnServer(env);
    await check('after a restart');
  });

  it("reads a span from the kept transcript (corrected, after a restart): the whole's words there, not a new hearing", async () => {
    // (Runs after the test above: the asset's transcript is corrected and the server restarted.)
    const t = await wholeTranscript();
    expect(t.corrected?.length).toBe(2);
    // From inside "heron" (a quarter in: before its middle) to the pause after the corrected sentence.
    const second = trueSentence(1);
    const heron = second[1]!;
    const from = heron.start + (heron.end - heron.start) / 4;
    const to = second.at(-1)!.end + 0.3;
    const span = structured<Page & { cached: boolean }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: assetId, from, to, words: true }),
    );
    const mid = (w: Word) => (w.start_seconds + w.end_seconds) / 2;
    const expected = t.words.filter((w) => mid(w) >= from && mid(w) <= to);
    expect(expected.map((w) => key(w.word)).join(' ')).toBe('heron stood in the shallow water near the jetty');
    // Not heard again (before: recognition ran over the span, its words cut at its edges and misheard anew).
    expect(span.cached).toBe(true);
    expect(span.words.map((w) => [w.word, w.start_seconds, w.end_seconds])).toEqual(
      expected.map((w) => [w.word, w.start_seconds, w.end_seconds]),
    );
    expect(span.words.map((w) => w.index)).toEqual(expected.map((_, i) => i));
    expect(span.sentences.map((x) => x.text)).toEqual(['heron stood in the shallow water near the jetty.']);
    expect(span.corrected).toEqual([[0, expected.length - 1]]);
  });

  it('gives confidences in 0-1 (PocketSphinx printed 1.001), and marks doubtful the words captions name as unsure', async () => {
    type W = Word & { confidence?: number; doubtful?: true };
    const t = (await wholeTranscript()) as Page & { words: W[] };
    // Confidences are the engine's posteriors: 0-1, never PocketSphinx's 1.001.
    const confidences = t.words.flatMap((w) => (w.confidence === undefined ? [] : [w.confidence]));
    expect(confidences.length).toBeGreaterThan(0);
    for (const c of confidences) expect(c >= 0 && c <= 1, `confidence ${c}`).toBe(true);

    // The words recognition was unsure of (confidence under 0.5, outside the corrections) are marked doubtful, and
    // no other; the words a caption warning names are among them.
    const given = new Set(t.corrected!.flatMap(([a, b]) => Array.from({ length: b! - a! + 1 }, (_, k) => a! + k)));
    const unsure = t.words.filter((w) => !given.has(w.index) && w.confidence !== undefined && w.confidence < 0.5);
    expect(unsure.length, 'recognition was unsure of some words').toBeGreaterThan(0);
    expect(t.words.filter((w) => w.doubtful).map((w) => w.index)).toEqual(unsure.map((w) => w.index));
    for (const w of t.words) if (!w.doubtful) expect(w).not.toHaveProperty('doubtful');
    const c = structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: '320x180',
        fps: WORD_CUT_FPS,
        clips: [{ asset_id: assetId }],
        captions: { burn: false },
      }),
    );
    expect(c.ready, JSON.stringify(c.diagnostics)).toBe(true);
    const srt = structured<{ warnings: string[] }>(await call('export_edit', { edit_id: c.edit_id, format: 'srt' }));
    const named = [...srt.warnings.join('\n').matchAll(/\(word (\d+) at /g)].map((m) => Number(m[1]));
    expect(named.length, srt.warnings.join('\n')).toBeGreaterThan(0);
    for (const i of named) expect(t.words[i]!.doubtful, `word ${i} named by the captions`).toBe(true);
  });

  it('refuses replace without text, a range outside the transcript, or with from and to', async () => {
    const refuse = async (args: Record<string, unknown>, says: RegExp) => {
      const r = (await call('transcribe_asset', { project_id: projectId, asset_id: assetId, ...args })) as {
        isError?: boolean;
      };
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(says);
    };
    await refuse({ replace: [0, 1] }, /replace needs text/);
    await refuse({ replace: [5, 2], text: 'no' }, /is not a range/);
    await refuse({ replace: [0, 100000], text: 'no' }, /words 0 to \d+/);
    await refuse({ replace: [0, 1], text: 'the', from: 1 }, /leave from, to and cursor out/);
  });
});
