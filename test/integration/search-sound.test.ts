// Search an agent can trust (issue 32, items 3 and 4), through the built server over stdio: flite's awb voice says
// lines in which words are planted, with every word's true time known (test/helpers/flite-words.ts); PocketSphinx
// mishears some of them. search_transcripts finds them by sound or by listening, at their true times, says what it
// nearly matched, and reports few words that were not said.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { sayWithWordTimes, type TrueWord } from '../helpers/flite-words.js';
import { makeWordCutMedia } from '../helpers/word-cut-media.js';
import { SEARCH_LINES } from '../fixtures/search-lines.mjs';

const LINES = SEARCH_LINES.slice(0, 8);
const PLANTED = ['lighthouse', 'keeper', 'harbour', 'captain', 'fisherman'];
const DECOYS = ['mountain', 'teacher', 'bicycle', 'doctor', 'garden', 'window', 'kitchen', 'blanket'];
const VOICE = 'awb';

const root = mkdtempSync(join(tmpdir(), 'cutroom-search-'));
const allowed = join(root, 'allowed');
type Hit = {
  asset_id: string;
  start_seconds: number;
  end_seconds: number;
  text: string;
  words?: [number, number];
  match: 'exact' | 'sounds_like' | 'heard';
  score: number;
  doubtful?: number[];
  cut?: [number, number];
};
type Search = {
  hits: Hit[];
  hits_total: number;
  near_misses?: Hit[];
  searched: number;
  listened?: number;
  guessed?: string[];
  missing?: { asset_id: string; reason: string }[];
};
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};

let server: Spawned;
let projectId: string;
let asset: string;
let truth: TrueWord[];
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 300_000 });
const search = async (query: string, listen = false) =>
  structured<Search>(
    await call('search_transcripts', {
      project_id: projectId,
      query,
      asset_ids: [asset],
      ...(listen ? { listen } : {}),
    }),
  );
const said = (word: string) => truth.filter((w) => w.word.toLowerCase() === word);
const near = (h: Hit, w: TrueWord) => Math.abs(h.start_seconds - w.start) <= 0.3;

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const wav = join(allowed, 'lines.wav');
  truth = sayWithWordTimes(LINES.join(' '), wav, VOICE);
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'debug',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'lines', description: 'planted words' }),
  ).project.id;
  asset = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: wav })).asset
    .id;
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe('search_transcripts by sound and by listening', () => {
  it('finds every time "lighthouse" is said, the misheard ones by sound or by listening, each at its true time', async () => {
    const t = structured<{ words: { word: string; start_seconds: number; end_seconds: number }[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: asset, words: true }),
    );
    const occurrences = said('lighthouse');
    expect(occurrences).toHaveLength(3);
    // The premise: free recognition spells at least one of them otherwise (on awb, 2 of 3 here).
    const spelled = occurrences.filter((w) =>
      t.words.some((h) => h.word.toLowerCase() === 'lighthouse' && Math.abs(h.start_seconds - w.start) <= 0.3),
    );
    expect(spelled.length, `heard: ${t.words.map((w) => w.word).join(' ')}`).toBeLessThan(3);

    const raw = await call('search_transcripts', {
      project_id: projectId,
      query: 'lighthouse',
      asset_ids: [asset],
      listen: true,
    });
    const r = structured<Search>(raw);
    expect(r.listened).toBe(1);
    // The text says how each hit matched.
    for (const h of r.hits)
      expect(textOf(raw)).toContain(`${h.start_seconds.toFixed(2)}-${h.end_seconds.toFixed(2)} s`);
    expect(textOf(raw)).toMatch(/sounds_like|heard/);
    // Each is a hit or, where listening heard it over words recognition was sure of, a near miss; at least one
    // misheard occurrence is a hit found by sound or by listening.
    const misheardHits = occurrences.filter(
      (w) => !spelled.includes(w) && r.hits.some((h) => near(h, w) && h.match !== 'exact'),
    );
    expect(misheardHits.length, JSON.stringify(r)).toBeGreaterThanOrEqual(1);
    for (const w of occurrences) {
      const hit = r.hits.find((h) => near(h, w)) ?? r.near_misses?.find((h) => near(h, w));
      expect(hit, `lighthouse at ${w.start}: ${JSON.stringify(r)}`).toBeDefined();
      if (!spelled.includes(w)) expect(['sounds_like', 'heard']).toContain(hit!.match);
      if (hit!.match === 'heard') {
        // Cuttable as it is: in and out around the word, the word whole inside (5 ms for rounding).
        expect(hit!.cut).toBeDefined();
        expect(hit!.cut![0]).toBeLessThanOrEqual(w.start + 0.05);
        expect(hit!.cut![1]).toBeGreaterThanOrEqual(w.end - 0.05);
        expect(hit!.cut![1] - hit!.cut![0]).toBeLessThan(w.end - w.start + 1);
      }
    }
    expect(r.hits.every((h) => (h.match === 'exact' ? h.score === 1 : h.score > 0 && h.score < 1))).toBe(true);
  }, 300_000);

  it('says what it nearly matched, and flags doubtful words, without listening', async () => {
    const results = await Promise.all(PLANTED.map((q) => search(q)));
    const nearMisses = results.flatMap((r) => r.near_misses ?? []);
    expect(nearMisses.length).toBeGreaterThan(0);
    for (const n of nearMisses) {
      expect(n.match).toBe('sounds_like');
      expect(n.score).toBeLessThan(1);
      expect(n.words).toHaveLength(2);
    }
    // Every hit of the transcript is cuttable by its words; doubtful words are among them.
    for (const h of results.flatMap((r) => r.hits)) {
      expect(h.words).toHaveLength(2);
      for (const d of h.doubtful ?? []) expect(d >= h.words![0] && d <= h.words![1]).toBe(true);
    }
  }, 300_000);

  // awb's first "lighthouse" (about 1 s) is recognised as "though i'd i'd", words recognition was sure of, and the
  // spotter scores it only "likely" (about 0.85): spotted on that span against those words, the query wins.
  it('finds a word recognition confidently misheard where the spotter prefers it to the words recognised there', async () => {
    const first = said('lighthouse')[0]!;
    const t = structured<{
      words: { word: string; start_seconds: number; end_seconds: number; confidence?: number }[];
    }>(await call('transcribe_asset', { project_id: projectId, asset_id: asset, words: true }));
    const there = t.words.filter((w) => w.end_seconds > first.start && w.start_seconds < first.end);
    // The premise: recognition heard other words there and was sure of them.
    expect(
      there.map((w) => w.word),
      JSON.stringify(there),
    ).not.toContain('lighthouse');
    expect(
      there.every((w) => (w.confidence ?? 0) >= 0.5),
      JSON.stringify(there),
    ).toBe(true);
    const r = await search('lighthouse', true);
    const hit = r.hits.find((h) => near(h, first));
    expect(hit, JSON.stringify(r)).toBeDefined();
    expect(hit!.match).toBe('heard');
    // Words recognition was sure of that were said stay unchallenged: "keeper" is not heard as the decoy "teacher".
    expect((await search('teacher', true)).hits.filter((h) => h.match === 'heard')).toEqual([]);
  }, 300_000);

  // Measured here (awb): all 12 planted occurrences are hits (the first "lighthouse" by its contest, above);
  // bench/search.mjs measures all four voices.
  it('finds every planted occurrence as a hit or a near miss, hits with precision of 0.8 or more', async () => {
    let right = 0;
    let wrong = 0;
    let planted = 0;
    const missed: string[] = [];
    const onlyNear: string[] = [];
    const falseHits: string[] = [];
    for (const q of [...PLANTED, ...DECOYS]) {
      const r = await search(q, true);
      for (const w of said(q)) {
        planted++;
        if (r.hits.some((h) => near(h, w))) continue;
        if (r.near_misses?.some((h) => near(h, w))) onlyNear.push(`${q}@${w.start}`);
        else missed.push(`${q}@${w.start}`);
      }
      for (const h of r.hits) {
        if (said(q).some((w) => near(h, w))) right++;
        else {
          wrong++;
          falseHits.push(`${q}~"${h.text}" ${h.match} ${h.score}`);
        }
      }
    }
    expect(missed).toEqual([]);
    expect(planted).toBe(12);
    expect(onlyNear.length, onlyNear.join(', ')).toBeLessThanOrEqual(1);
    expect(right / (right + wrong), falseHits.join('; ')).toBeGreaterThanOrEqual(0.8);
  }, 600_000);

  it('refuses by listening the sound-alike runs of words never said that search by sound alone reports', async () => {
    const soundAlike: string[] = [];
    for (const q of DECOYS) {
      const alone = (await search(q)).hits.filter((h) => h.match === 'sounds_like');
      if (!alone.length) continue;
      const heard = await search(q, true);
      for (const h of alone) {
        soundAlike.push(`${q}~"${h.text}"`);
        // the spotter did not hear the query there: the run is a near miss, not a hit
        expect(
          heard.hits.some((x) => x.start_seconds < h.end_seconds && x.end_seconds > h.start_seconds),
          `${q}~"${h.text}": ${JSON.stringify(heard.hits)}`,
        ).toBe(false);
        expect(heard.near_misses?.some((x) => x.start_seconds === h.start_seconds && x.match === 'sounds_like')).toBe(
          true,
        );
      }
    }
    // The premise: by sound alone, some decoy matches a run of words that sound like it ("mended" for "mountain").
    expect(soundAlike.length).toBeGreaterThan(0);
  }, 600_000);

  it('under a music bed 10 dB down, listening finds every planted word, hits with precision of 0.8 or more', async () => {
    const { video, words } = makeWordCutMedia(allowed, 'bed', 'rms', LINES, [0.5], 10);
    const bed = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: video }),
    ).asset.id;
    const found = { transcript: 0, listening: 0 };
    let right = 0;
    const falseHits: string[] = [];
    for (const q of [...PLANTED, ...DECOYS]) {
      const occurrences = words.filter((w) => w.word.toLowerCase() === q);
      for (const listen of [false, true]) {
        const r = structured<Search>(
          await call('search_transcripts', {
            project_id: projectId,
            query: q,
            asset_ids: [bed],
            ...(listen ? { listen } : {}),
          }),
        );
        found[listen ? 'listening' : 'transcript'] += occurrences.filter((w) =>
          r.hits.some((h) => Math.abs(h.start_seconds - w.start) <= 0.3),
        ).length;
        if (!listen) continue;
        for (const h of r.hits) {
          if (occurrences.some((w) => Math.abs(h.start_seconds - w.start) <= 0.3)) right++;
          else falseHits.push(`${q}~"${h.text}" ${h.match}`);
        }
      }
    }
    // Every planted occurrence is found with listening (the target); since recognition learned to take the bed
    // off (issue 32, item 5) the transcript alone finds them all here too, so listening must only not lose any.
    const total = PLANTED.reduce((n, q) => n + words.filter((w) => w.word.toLowerCase() === q).length, 0);
    expect(found.listening, JSON.stringify(found)).toBe(total);
    expect(found.listening, JSON.stringify(found)).toBeGreaterThanOrEqual(found.transcript);
    expect(right / (right + falseHits.length), falseHits.join('; ')).toBeGreaterThanOrEqual(0.8);
  }, 600_000);

  it('listens for a word the dictionary lacks by its spelling, and says so', async () => {
    const r = await search('dunmore', true);
    expect(r.guessed).toEqual(['dunmore']);
    expect(r.listened).toBe(1);
    expect(r.missing).toBeUndefined();
  }, 300_000);
});
