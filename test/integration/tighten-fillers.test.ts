// tighten_edit hears fillers in the sound (issue 46, item 6), through the built server over stdio: flite says a text
// in parts, "uh" and "um" said alone between pauses as a speaker hesitates (true word times from libflite). The
// sound is transcribed by recognition alone (no text), which writes the fillers as other words ("um" as "and", "uh"
// as "at"), and a cut over all of it is tightened ("take out the ums"): every filler goes, heard in the sound, and
// no other word is removed or clipped (by the true times).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sayWithWordTimes, type TrueWord } from '../helpers/flite-words.js';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-fillers-'));
const allowed = join(root, 'allowed');
const RATE = 16_000;
const FILLERS = new Set(['um', 'uh']);
/** Parts said one after the other, each followed by its pause (s; flite adds about 0.25 s of its own). */
const PARTS: [string, number][] = [
  ['we are so happy', 0.3],
  ['uh', 0.3],
  ['to see you all here tonight', 0.4],
  ['um', 0.3],
  ['the lamp turned slowly over the water', 0.4],
  ['um', 0.3],
  ['and the bell rang three times', 0.5],
];

function ff(args: string[]) {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args]);
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr?.toString()}`);
}
const samplesOf = (file: string) =>
  Number(
    spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=duration_ts', '-of', 'csv=p=0', file])
      .stdout.toString()
      .trim(),
  );

let server: Spawned;
let projectId: string;
let speech: string;
let truth: TrueWord[];
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 300_000 });

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  truth = [];
  let at = 0;
  const files: string[] = [];
  PARTS.forEach(([text, pause], i) => {
    const wav = join(allowed, `part${i}.wav`);
    const words = sayWithWordTimes(text, wav, 'slt');
    const padded = join(allowed, `padded${i}.wav`);
    ff(['-i', wav, '-af', `apad=pad_len=${Math.round(pause * RATE)}`, '-ar', String(RATE), '-ac', '1', padded]);
    truth.push(...words.map((w) => ({ word: w.word, start: at + w.start, end: at + w.end })));
    at += samplesOf(padded) / RATE;
    files.push(padded);
  });
  const wav = join(allowed, 'speech.wav');
  ff([
    ...files.flatMap((f) => ['-i', f]),
    '-filter_complex',
    `${files.map((_, i) => `[${i}:a]`).join('')}concat=n=${files.length}:v=0:a=1[a]`,
    '-map',
    '[a]',
    wav,
  ]);
  const video = join(allowed, 'speech.mov');
  ff([
    ...['-f', 'lavfi', '-i', `color=c=gray:s=320x180:r=25:d=${at}`, '-i', wav],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'pcm_s16le', '-shortest', video],
  ]);
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'fillers', description: 'ums heard' }),
  ).project.id;
  speech = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
    .asset.id;
}, 180_000);
afterAll(async () => {
  await server?.close();
});

type Seg = { video_id: string; video_start_time: string; video_end_time: string };
const secs = (t: string) => {
  const [h, m, s] = t.split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
};
const TOL = 0.005;

describe('tighten_edit hears fillers', () => {
  it('takes out the ums recognition wrote as other words, and nothing else', async () => {
    const t = structured<{ words: { word: string; start_seconds: number; end_seconds: number }[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: speech, words: true }),
    );
    const written = t.words.map((w) => w.word.toLowerCase());
    const composed = structured<{ ready: boolean; edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [{ asset_id: speech, words: [0, t.words.length - 1] }],
      }),
    );
    expect(composed.ready).toBe(true);
    const tightened = await call('tighten_edit', { edit_id: composed.edit_id });
    const r = structured<{ edit_id: string; ready: boolean }>(tightened);
    const said = `recognition wrote: ${written.join(' ')}\n${textOf(tightened)}`;
    expect(r.ready, said).toBe(true);
    const cuts = (
      await storedEdit<{ video_series_sequential: Seg[] }>(server.client, r.edit_id)
    ).video_series_sequential
      .filter((s) => s.video_id === speech)
      .map((s) => ({ start: secs(s.video_start_time), end: secs(s.video_end_time) }));
    // Every true word is either kept whole or gone whole, and exactly the fillers are gone.
    const overlap = (w: TrueWord) =>
      cuts.reduce((a, c) => a + Math.max(0, Math.min(c.end, w.end) - Math.max(c.start, w.start)), 0);
    for (const w of truth) {
      const kept = overlap(w);
      if (FILLERS.has(w.word))
        expect(kept, `${w.word} at ${w.start.toFixed(2)} s kept ${kept} s; ${said}`).toBeLessThan(TOL);
      else expect(kept, `${w.word} at ${w.start.toFixed(2)} s clipped; ${said}`).toBeGreaterThan(w.end - w.start - TOL);
    }
    expect(textOf(tightened)).toMatch(/3 more heard in the sound \(written .*\), 3 removed/);
  }, 300_000);
});
