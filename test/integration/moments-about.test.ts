// find_moments' `about` finds a passage (issue 47, item 4), through the built server over stdio: a voiceover (flite,
// aligned to its script) that talks of a bakery, then for three sentences of a storm (one names it; the next two say
// "the sea came over the wall", "wind", "roofs"), then of a garden. Asked about "the storm", the best moment is the
// three sentences whole, none of the others, and the sentence that names the storm is on the subject.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sayWithWordTimes, type TrueWord } from '../helpers/flite-words.js';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-moments-about-'));
const allowed = join(root, 'allowed');
type Moment = {
  start_seconds: number;
  end_seconds: number;
  signals: { about?: number; about_heard?: string };
  clip: { words?: number[] };
  text?: string;
};
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};

const BEFORE = 'My sister baked bread every morning. The bakery opened at seven.';
const STORM = 'A terrible storm hit the harbor. The sea came over the wall. The wind tore the roofs from the houses.';
const AFTER = 'In the spring we painted the fence. The children played in the garden.';
const SCRIPT = `${BEFORE} ${STORM} ${AFTER}`;
const count = (text: string) => text.split(' ').length;
/** The storm's words: indices in the script. */
const FIRST = count(BEFORE);
const LAST = FIRST + count(STORM) - 1;

let server: Spawned;
let projectId: string;
let assetId: string;
let words: TrueWord[];
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 600_000 });

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  words = sayWithWordTimes(SCRIPT, join(allowed, 'voice.wav'), 'slt');
  expect(words.length).toBe(count(SCRIPT));
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'about', description: 'a storm among other things' }),
  ).project.id;
  assetId = structured<{ asset: { id: string } }>(
    await call('import_media', { project_id: projectId, path: join(allowed, 'voice.wav') }),
  ).asset.id;
  structured(await call('transcribe_asset', { project_id: projectId, asset_id: assetId, text: SCRIPT }));
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('find_moments about a subject', () => {
  it('finds the three sentences about the storm as one moment, and nothing else with them', async () => {
    const found = structured<{ moments: Moment[] }>(
      await call('find_moments', {
        project_id: projectId,
        asset_ids: [assetId],
        about: 'the storm',
        count: 3,
        min_seconds: 1,
        max_seconds: 30,
      }),
    );
    const best = found.moments[0]!;
    const report = JSON.stringify(found.moments, null, 1);
    // The passage whole: from before "A" to after "wall", not a word of the bakery or the garden.
    expect(best.clip.words, report).toEqual([FIRST, LAST]);
    expect(best.start_seconds, report).toBeLessThanOrEqual(words[FIRST]!.start + 0.05);
    expect(best.start_seconds, report).toBeGreaterThanOrEqual(words[FIRST - 1]!.end - 0.05);
    expect(best.end_seconds, report).toBeGreaterThanOrEqual(words[LAST]!.end - 0.05);
    expect(best.end_seconds, report).toBeLessThanOrEqual(words[LAST + 1]!.start + 0.05);
    expect(best.signals.about, report).toBeGreaterThanOrEqual(0.7);
    // What put it there: the subject named, and the words related to it that the next sentences say.
    expect(best.signals.about_heard, report).toMatch(/storm/);
    expect(best.signals.about_heard, report).toMatch(/wind/);
    expect(best.signals.about_heard, report).toMatch(/sea/);
    // Any other moment is off the subject: neither the bakery nor the garden is about the storm.
    for (const other of found.moments.slice(1)) expect(other.signals.about ?? 0, report).toBeLessThan(0.35);
  });

  it('calls the sentence that names the storm on the subject, and the sentences beside it related', async () => {
    const found = structured<{ moments: Moment[] }>(
      await call('find_moments', {
        project_id: projectId,
        asset_ids: [assetId],
        about: 'the storm',
        count: 5,
        min_seconds: 1,
        max_seconds: 3,
      }),
    );
    const report = JSON.stringify(found.moments, null, 1);
    // Moments of one sentence each: the storm's three are the first three, the storm named first, then the wind (a
    // word of its definition), then the sea (of a definition that mentions it).
    const texts = found.moments.slice(0, 3).map((m) => m.text);
    expect(texts, report).toEqual([
      'A terrible storm hit the harbor.',
      'The wind tore the roofs from the houses.',
      'The sea came over the wall.',
    ]);
    expect(found.moments[0]!.signals.about, report).toBeGreaterThanOrEqual(0.7);
    for (const m of found.moments.slice(1, 3)) expect(m.signals.about, report).toBeGreaterThan(0.3);
    for (const m of found.moments.slice(3)) expect(m.signals.about ?? 0, report).toBeLessThan(0.3);
  });
});
