// Speech under a music bed (issue 32 item 5), through the built server over stdio: flite's "rms" voice reading known
// lines, with a tonal bed laid 10 dB under (test/fixtures/speech-beds.mjs). transcribe_asset takes the bed off before
// PocketSphinx hears it and says so; clean speech is heard exactly as before (the engine's own words on the sound
// as it is, run here beside the server).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BED_LINES, layUnder, musicBed, sayLines, wordErrorRate, writeWav } from '../fixtures/speech-beds.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-speech-noise-'));
const allowed = join(root, 'allowed');
const LINES = BED_LINES.slice(0, 4);
const SAID = LINES.join(' ');
const MODEL = '/usr/share/pocketsphinx/model/en-us';

type T = { cleaned?: true; aligned: boolean; words: { word: string }[]; unplaced?: number[] };
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};

let server: Spawned;
let projectId: string;
let clean: { file: string; id: string };
let bed: { file: string; id: string };
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 300_000 });

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const speech = sayLines(allowed, 'rms', LINES);
  const cleanFile = writeWav(join(allowed, 'clean.wav'), speech);
  const bedFile = writeWav(join(allowed, 'bed10.wav'), layUnder(speech, musicBed(speech.length), 10));
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'bed', description: 'speech under music' }),
  ).project.id;
  const add = async (file: string) => ({
    file,
    id: structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: file })).asset
      .id,
  });
  clean = await add(cleanFile);
  bed = await add(bedFile);
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** The words PocketSphinx hears in a 16 kHz WAV as it is: what transcription did before any cleaning. */
function engineWords(wav: string): string[] {
  const r = spawnSync(
    'pocketsphinx_continuous',
    [
      '-infile',
      wav,
      '-time',
      'yes',
      '-logfn',
      '/dev/null',
      '-hmm',
      join(MODEL, 'en-us'),
      '-dict',
      join(MODEL, 'cmudict-en-us.dict'),
      '-lm',
      join(MODEL, 'en-us.lm.bin'),
    ],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  if (r.status !== 0) throw new Error(`pocketsphinx failed: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .map((l) => /^(\S+) \d+(?:\.\d+)? \d+(?:\.\d+)? \d+(?:\.\d+)?$/.exec(l.trim())?.[1]?.replace(/\(\d+\)$/, ''))
    .filter((w): w is string => !!w && !/^<.*>$|^\[.*\]$|^\+\+.*\+\+$/.test(w));
}

describe('speech under a music bed', () => {
  it('is cleaned before recognition and most of its words are heard', async () => {
    const t = structured<T>(await call('transcribe_asset', { project_id: projectId, asset_id: bed.id, words: true }));
    expect(t.cleaned).toBe(true);
    const heard = t.words.map((w) => w.word).join(' ');
    const wer = wordErrorRate(SAID, heard);
    console.log(
      `under a bed 10 dB down: WER ${wer.toFixed(3)} cleaned; ${wordErrorRate(SAID, engineWords(bed.file).join(' ')).toFixed(3)} as it is`,
    );
    // Measured on these 4 lines: 59% as they are, 24.5% cleaned (45% with the bed learned in the pauses, before);
    // the target is 35% (bench/speech-noise.mjs has the full figures).
    expect(wer, `heard: ${heard}`).toBeLessThanOrEqual(0.35);
    // ...and better than the engine does on the sound as it is.
    expect(wer).toBeLessThan(wordErrorRate(SAID, engineWords(bed.file).join(' ')));
  }, 300_000);

  it('is cleaned for an alignment too: most of the known text is placed', async () => {
    const t = structured<T>(
      await call('transcribe_asset', { project_id: projectId, asset_id: bed.id, text: SAID, words: true }),
    );
    expect(t.aligned).toBe(true);
    expect(t.cleaned).toBe(true);
    console.log(`aligned under a bed: ${t.unplaced?.length ?? 0} of ${t.words.length} unplaced`);
    // Measured: 5 of 49 (10 with the bed learned in the pauses, before).
    expect(t.unplaced?.length ?? 0).toBeLessThanOrEqual(Math.floor(t.words.length / 6));
  }, 300_000);

  it('clean speech is not touched: the same words as the engine hears in it as it is', async () => {
    const t = structured<T>(await call('transcribe_asset', { project_id: projectId, asset_id: clean.id, words: true }));
    expect(t.cleaned).toBeUndefined();
    expect(t.words.map((w) => w.word)).toEqual(engineWords(clean.file));
  }, 300_000);
});
