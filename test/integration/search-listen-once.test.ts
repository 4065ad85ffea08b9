// Listening paid once per asset (issue 47, item 4), through the built server over stdio: flite's awb voice says lines
// in which words are planted (true word times from test/helpers/flite-words.ts). The first search with listen hears
// the asset once (a phone pass kept beside its transcript, with the sound it heard); every later one, by this server
// or the next on the same folders, is answered from that pass (its progress says so, and the kept files are not made
// again), and still finds every planted occurrence at its true time, and what listening to the whole asset finds:
// kal's second "fisherman", which the spotter hears only with speech before it (missed when a span held 0.5 s).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sayWithWordTimes, type TrueWord } from '../helpers/flite-words.js';
import { structuredOf } from '../helpers/local-project.js';
import { voiceSearch, type Search, type VoiceSearch } from '../helpers/voice-search.js';
import { SEARCH_LINES } from '../fixtures/search-lines.mjs';

/** The lines awb says: the search bench's with their planted words, fewer. */
const LINES = [0, 1, 2, 3, 5, 7].map((i) => SEARCH_LINES[i]!);

let s: VoiceSearch;
const listen = (query: string, of?: string) => s.listen(query, of);
/** The files kept for listening (the pass and its sound), with when each was written. */
const kept = () => {
  const dir = join(s.root, 'cache', 'listening');
  return Object.fromEntries(readdirSync(dir).map((n) => [n, statSync(join(dir, n)).mtimeMs]));
};
const everyOccurrenceFound = (r: Search, word: string, said = s.truth.filter((w) => w.word.toLowerCase() === word)) => {
  expect(said.length).toBeGreaterThan(0);
  for (const w of said)
    expect(
      r.hits.some((h) => Math.abs(h.start_seconds - w.start) <= 0.3),
      `${word} at ${w.start}: ${JSON.stringify(r.hits)}`,
    ).toBe(true);
};

beforeAll(async () => {
  s = await voiceSearch('listen-once', 'awb', LINES);
}, 300_000);
afterAll(async () => {
  await s?.close();
});

describe('search_transcripts with listen hears an asset once', () => {
  it("keeps the first search's phone pass and answers later searches, here and after a restart, from it", async () => {
    const first = await listen('lighthouse');
    expect(first.r.listened).toBe(1);
    expect(first.messages.join(' | ')).toMatch(/listening to the asset once/);
    everyOccurrenceFound(first.r, 'lighthouse');
    const made = kept();
    // The pass and the sound it heard, kept beside each other.
    expect(Object.keys(made).some((n) => n.endsWith('.json'))).toBe(true);
    expect(Object.keys(made).some((n) => n.endsWith('.sound.pcm'))).toBe(true);

    for (const query of ['keeper', 'captain']) {
      const later = await listen(query);
      expect(later.r.listened).toBe(1);
      expect(later.messages.join(' | ')).not.toMatch(/listening to the asset once/);
      expect(later.messages.join(' | ')).toMatch(/stored phone pass/);
      everyOccurrenceFound(later.r, query);
      expect(kept()).toEqual(made);
    }

    // The next server on the same folders reads the same pass.
    await s.restart();
    const after = await listen('fisherman');
    expect(after.messages.join(' | ')).toMatch(/stored phone pass/);
    expect(after.messages.join(' | ')).not.toMatch(/listening to the asset once/);
    expect(kept()).toEqual(made);
    const said = s.truth.filter((w) => w.word.toLowerCase() === 'fisherman');
    expect(said.every((w) => after.r.hits.some((h) => Math.abs(h.start_seconds - w.start) <= 0.3))).toBe(true);
  }, 600_000);

  it('finds a word in its span as over the whole asset: the span holds enough speech before it', async () => {
    // The search bench's recording (bench/search-media.mjs): kal says its second "fisherman" about 22.5 s in.
    const wav = join(s.root, 'allowed', 'kal.wav');
    const said = sayWithWordTimes(SEARCH_LINES.join(' '), wav, 'kal').filter(
      (w: TrueWord) => w.word.toLowerCase() === 'fisherman',
    );
    const kal = structuredOf<{ asset: { id: string } }>(
      await s.call('import_media', { project_id: s.projectId, path: wav }),
    ).asset.id;
    structuredOf(await s.call('transcribe_asset', { project_id: s.projectId, asset_id: kal }));
    expect((await listen('harbour', kal)).messages.join(' | ')).toMatch(/listening to the asset once/);
    const later = await listen('fisherman', kal);
    expect(later.messages.join(' | ')).toMatch(/stored phone pass/);
    // (The first, at 7.6 s, is heard neither by recognition nor by the spotter over the whole asset.)
    expect(said.map((w) => Math.round(w.start))).toEqual([8, 22]);
    everyOccurrenceFound(later.r, 'fisherman', said.slice(1));
  }, 600_000);
});
