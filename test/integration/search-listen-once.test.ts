// Listening paid once per asset (issue 47, item 4), through the built server over stdio: flite's awb voice says lines
// in which words are planted (true word times from test/helpers/flite-words.ts). The first search with listen hears
// the asset once (a phone pass kept beside its transcript, with the sound it heard); every later one, by this server
// or the next on the same folders, is answered from that pass (its progress says so, and the kept files are not made
// again), and still finds every planted occurrence at its true time.
import { mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { sayWithWordTimes, type TrueWord } from '../helpers/flite-words.js';

const LINES = [
  'We walked out to the lighthouse at dawn.',
  'The keeper of the harbour lit the lamp.',
  'Nobody saw the captain on the pier that night.',
  'A fisherman mended his nets below the lighthouse.',
  'The captain and the keeper talked until morning.',
  'The lighthouse keeper wrote in his book.',
];

const root = mkdtempSync(join(tmpdir(), 'cutroom-listen-once-'));
const allowed = join(root, 'allowed');
const env = {
  CUTROOM_DATA_DIR: join(root, 'data'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
};
type Hit = { start_seconds: number; end_seconds: number; match: string };
type Search = { hits: Hit[]; near_misses?: Hit[]; listened?: number; missing?: unknown[] };

let server: Spawned;
let projectId: string;
let asset: string;
let truth: TrueWord[];

const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};
const call = (name: string, args: Record<string, unknown>, onprogress?: (p: { message?: string }) => void) =>
  server.client.callTool({ name, arguments: args }, { timeout: 300_000, ...(onprogress ? { onprogress } : {}) });
/** A listening search of the asset, and the progress messages it sent. */
const listen = async (query: string) => {
  const messages: string[] = [];
  const r = structured<Search>(
    await call('search_transcripts', { project_id: projectId, query, asset_ids: [asset], listen: true }, (p) => {
      if (p.message) messages.push(p.message);
    }),
  );
  return { r, messages: [...new Set(messages)] };
};
/** The files kept for listening (the pass and its sound), with when each was written. */
const kept = () => {
  const dir = join(root, 'cache', 'listening');
  return Object.fromEntries(readdirSync(dir).map((n) => [n, statSync(join(dir, n)).mtimeMs]));
};
const everyOccurrenceFound = (r: Search, word: string) => {
  const said = truth.filter((w) => w.word.toLowerCase() === word);
  expect(said.length).toBeGreaterThan(1);
  for (const w of said)
    expect(
      r.hits.some((h) => Math.abs(h.start_seconds - w.start) <= 0.3),
      `${word} at ${w.start}: ${JSON.stringify(r.hits)}`,
    ).toBe(true);
};

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const wav = join(allowed, 'lines.wav');
  truth = sayWithWordTimes(LINES.join(' '), wav, 'awb');
  server = await spawnServer(env);
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'lines', description: 'planted words' }),
  ).project.id;
  asset = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: wav })).asset
    .id;
  await call('transcribe_asset', { project_id: projectId, asset_id: asset });
}, 300_000);
afterAll(async () => {
  await server?.close();
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
    await server.close();
    server = await spawnServer(env);
    const after = await listen('fisherman');
    expect(after.messages.join(' | ')).toMatch(/stored phone pass/);
    expect(after.messages.join(' | ')).not.toMatch(/listening to the asset once/);
    expect(kept()).toEqual(made);
    const said = truth.filter((w) => w.word.toLowerCase() === 'fisherman');
    expect(said.every((w) => after.r.hits.some((h) => Math.abs(h.start_seconds - w.start) <= 0.3))).toBe(true);
  }, 600_000);
});
