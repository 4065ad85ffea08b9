// tighten_edit hears fillers in the sound (issue 46, item 6), through the built server over stdio: flite says a text
// in parts, "uh" and "um" said alone between pauses as a speaker hesitates (true word times from libflite). The
// sound is transcribed by recognition alone (no text), which writes the fillers as other words ("um" as "and", "uh"
// as "at"), and a cut over all of it is tightened ("take out the ums"): every filler goes, heard in the sound, and
// no other word is removed or clipped (by the true times). The same speech under a music bed 15 dB down (three
// sines of a chord, swelling, as bench/scorecard.mjs lays) is tightened the same way: the bed is not a word. Two
// cases the editor's scorecard found missed (issue 46, item 6): under the bed 20 dB down the inspection hears the
// pause on one side of an "um" only, and both cut points went into that one silence (the filler stayed, listed as
// removed); flite's rms voice sinks into creak (under 70 Hz) at the end of its "uh", which was not heard as voiced.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TrueWord } from '../helpers/flite-words.js';
import { makeSpokenParts } from '../helpers/speech-media.js';
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

/** The bed's level under the speech (dB), and the chord's own RMS before its gain (three unit sines, swelling). */
const BED_DB_UNDER = -15;
const CHORD_RMS_DB = 10 * Math.log10(1.5 * (0.36 + 0.08));

/** The RMS (dB) of a 16 kHz mono wav over the spans of `words`. */
function wordsRmsDb(wav: string, words: TrueWord[]): number {
  const b = spawnSync('ffmpeg', ['-v', 'error', '-i', wav, '-ac', '1', '-ar', String(RATE), '-f', 'f32le', '-']).stdout;
  const s = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~3)));
  let sum = 0;
  let n = 0;
  for (const w of words)
    for (let i = Math.round(w.start * RATE); i < Math.min(s.length, Math.round(w.end * RATE)); i++) {
      sum += s[i]! ** 2;
      n++;
    }
  return 10 * Math.log10(sum / n);
}

let server: Spawned;
let projectId: string;
/** The assets, by voice and bed ('clean' or dB under the speech), and their true words. */
const assets = new Map<string, string>();
const truths = new Map<string, TrueWord[]>();
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 300_000 });

/** The parts said by `voice` as video, clean or under the bed `bed` dB under the speech; its path and true words. */
function media(voice: string, bed: number | 'clean'): { video: string; truth: TrueWord[] } {
  const dir = join(allowed, `${voice}-${bed}`);
  mkdirSync(dir, { recursive: true });
  const { wav, video, truth, seconds: at } = makeSpokenParts(dir, PARTS, voice);
  if (bed === 'clean') return { video, truth };
  // The bed: a minor chord under a slow swell, its level `bed` dB under the speech's over its words.
  const bedGain = -bed + wordsRmsDb(wav, truth) - CHORD_RMS_DB;
  const bedVideo = join(dir, 'bedded.mov');
  ff([
    ...['-f', 'lavfi', '-i', `color=c=gray:s=320x180:r=25:d=${at}`, '-i', wav],
    '-filter_complex',
    `sine=f=220:r=${RATE}[a];sine=f=261.6:r=${RATE}[b];sine=f=329.6:r=${RATE}[c];` +
      `[a][b][c]amix=inputs=3:normalize=0,aeval='val(0)*(0.6+0.4*sin(2*PI*t/3))',volume=${bedGain.toFixed(2)}dB[bed];` +
      `[1:a][bed]amix=inputs=2:normalize=0:duration=first[mix]`,
    ...['-map', '0:v', '-map', '[mix]'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'pcm_s16le', '-shortest', bedVideo],
  ]);
  return { video: bedVideo, truth };
}

const SOUNDS: [string, number | 'clean'][] = [
  ['slt', 'clean'],
  ['slt', -BED_DB_UNDER],
  ['slt', 20],
  ['rms', 'clean'],
];

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'fillers', description: 'ums heard' }),
  ).project.id;
  for (const [voice, bed] of SOUNDS) {
    const { video, truth } = media(voice, bed);
    const key = `${voice} ${bed}`;
    truths.set(key, truth);
    assets.set(
      key,
      structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video })).asset
        .id,
    );
  }
}, 300_000);
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
  const tightensOut = async (voice: string, bed: number | 'clean') => {
    const asset = assets.get(`${voice} ${bed}`)!;
    const truth = truths.get(`${voice} ${bed}`)!;
    const t = structured<{ words: { word: string; start_seconds: number; end_seconds: number }[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: asset, words: true }),
    );
    const written = t.words.map(
      (w) => `${w.word.toLowerCase()}@${w.start_seconds.toFixed(2)}-${w.end_seconds.toFixed(2)}`,
    );
    const composed = structured<{ ready: boolean; edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [{ asset_id: asset, words: [0, t.words.length - 1] }],
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
      .filter((s) => s.video_id === asset)
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
    // All three found (in the transcript, where recognition wrote one as "um", or heard) and removed.
    const line = /(\d+) in the transcript, (\d+) more heard in the sound.*?, (\d+) removed/.exec(textOf(tightened));
    expect(line, said).not.toBeNull();
    expect(Number(line![1]) + Number(line![2]), said).toBe(3);
    expect(Number(line![3]), said).toBe(3);
  };
  it(
    'takes out the ums recognition wrote as other words, and nothing else',
    () => tightensOut('slt', 'clean'),
    300_000,
  );
  it('hears them under a music bed 15 dB down too', () => tightensOut('slt', -BED_DB_UNDER), 300_000);
  it(
    'cuts each out whole under a bed 20 dB down, where a pause is heard on one side only',
    () => tightensOut('slt', 20),
    300_000,
  );
  it("hears a low voice's uh that sinks into creak (flite's rms)", () => tightensOut('rms', 'clean'), 300_000);
});
