// tighten_edit (issue 32, item 7), through the built server over stdio: speech said by flite at test time in parts
// with pauses between them (so every word's true start and end is known), with planted long pauses, fillers ("um",
// "uh") and a word said twice. Aligned to its text, cut by words, tightened: exactly the planted things come out, no
// cut starts inside a word or ends before one's end (by the true times, 5 ms tolerance), and nothing else changes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TrueWord } from '../helpers/flite-words.js';
import { makeSpokenParts } from '../helpers/speech-media.js';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { heardSpan } from '../helpers/word-cut-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-tighten-'));
const allowed = join(root, 'allowed');
/** Parts said one after the other, each followed by its pause (seconds; flite adds about 0.25 s of its own). */
const PARTS: [string, number][] = [
  ['the keeper climbed', 0.3],
  ['the', 0.3], // said twice: this one goes
  ['the tower', 1.6], // a long pause
  ['the lamp turned slowly over the water', 0.3],
  ['um', 0.3], // a filler
  ['we saw a ship in the storm', 2.0], // a long pause, then a filler
  ['uh', 0.4],
  ['the bell rang three times', 0.6],
];
const TEXT = PARTS.map(([t]) => t).join(' ');

function ff(args: string[]) {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args]);
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr?.toString()}`);
}

let server: Spawned;
let projectId: string;
let speech: string;
let silentAsset: string;
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
  const made = makeSpokenParts(allowed, PARTS);
  truth = made.truth;
  const { video } = made;
  const other = join(allowed, 'other.mov');
  ff([
    '-f',
    'lavfi',
    '-i',
    'color=c=blue:s=320x180:r=25:d=3',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=16000:duration=3',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'pcm_s16le',
    '-shortest',
    other,
  ]);
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'debug',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'tighten', description: 'pauses and fillers' }),
  ).project.id;
  speech = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
    .asset.id;
  silentAsset = structured<{ asset: { id: string } }>(
    await call('import_media', { project_id: projectId, path: other }),
  ).asset.id;
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

describe('tighten_edit', () => {
  it('takes out exactly the long pauses, the fillers and the word said twice, as a new edit; no word clipped; nothing else changes', async () => {
    const t = structured<{ words: { word: string }[]; unplaced?: number[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: speech, text: TEXT, words: true }),
    );
    expect(t.words.map((w) => w.word.toLowerCase())).toEqual(truth.map((w) => w.word.toLowerCase()));
    const water = truth.findIndex((w) => w.word === 'water');
    const composed = structured<{ ready: boolean; edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [
          // The second starts at "um", a filler the aligner stretches over the pause before it.
          { asset_id: speech, words: [0, water] },
          { asset_id: speech, words: [water + 1, truth.length - 1] },
          { asset_id: silentAsset, start: 0.5, end: 2.5 },
        ],
      }),
    );
    expect(composed.ready).toBe(true);
    const before = (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, composed.edit_id))
      .video_series_sequential;

    let tightened: unknown;
    const r = structured<{
      edit_id: string;
      from_edit_id: string;
      ready: boolean;
      removals: { cut: number; start_seconds: number; end_seconds: number; reason: string }[];
      untranscribed_cuts?: number[];
      cuts_after: number;
    }>((tightened = await call('tighten_edit', { edit_id: composed.edit_id })));
    expect(r.ready).toBe(true);
    // It says which fillers it looked for and how many it found and removed (issue 46).
    expect(textOf(tightened)).toMatch(
      /Fillers looked for \(um, uh, er, erm[^)]*\): 2 in the transcript, 2 removed\. The transcripts hold the words of their text/,
    );
    expect(r.from_edit_id).toBe(composed.edit_id);
    expect(r.edit_id).not.toBe(composed.edit_id);
    expect(r.untranscribed_cuts).toEqual([2]);
    const reasons = r.removals.map((x) => `${x.cut}: ${x.reason}`);
    expect(reasons).toHaveLength(4);
    expect(reasons[0]).toMatch(/^0: "the" said twice$/);
    expect(reasons[1]).toMatch(/^0: pause of 1\.\d\d s$/);
    expect(reasons[2]).toMatch(/^1: filler "um"$/);
    expect(reasons[3]).toMatch(/^1: filler "uh", pause of 2\.\d\d s$/);

    // The original is kept as it was.
    expect(
      (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, composed.edit_id)).video_series_sequential,
    ).toEqual(before);
    const after = (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, r.edit_id))
      .video_series_sequential;
    expect(after).toHaveLength(r.cuts_after);
    // Untouched: the untranscribed cut, the first in point, the last speech out point.
    expect(after.at(-1)).toEqual(before[2]);
    expect(after[0]!.video_start_time).toBe(before[0]!.video_start_time);
    expect(after.at(-2)!.video_end_time).toBe(before[1]!.video_end_time);
    const cuts = after
      .filter((s) => s.video_id === speech)
      .map((s) => ({ start: secs(s.video_start_time), end: secs(s.video_end_time) }));
    // No cut starts inside a word or ends before one's end (true times).
    for (const c of cuts) {
      for (const w of truth) {
        expect(
          w.start < c.start - TOL && w.end > c.start + TOL,
          `cut ${c.start}-${c.end} starts inside "${w.word}" ${w.start}-${w.end}`,
        ).toBe(false);
        expect(
          w.start < c.end - TOL && w.end > c.end + TOL,
          `cut ${c.start}-${c.end} ends inside "${w.word}" ${w.start}-${w.end}`,
        ).toBe(false);
      }
    }
    // Exactly the planted words are gone; every other word is kept whole, once.
    const kept = truth.filter((w) => cuts.some((c) => w.start >= c.start - TOL && w.end <= c.end + TOL));
    const gone = truth.filter((w) => !kept.includes(w)).map((w) => w.word);
    expect(gone).toEqual(['the', 'um', 'uh']);
    expect(truth.indexOf(truth.find((w) => !kept.includes(w))!)).toBe(3); // the first "the" of the two
    // The long pauses are down to the handles around words: no silence in a cut over 0.8 s.
    const inCut = (a: number, b: number) => cuts.some((c) => a >= c.start - TOL && b <= c.end + TOL);
    for (let i = 0; i + 1 < kept.length; i++)
      if (inCut(kept[i]!.end, kept[i + 1]!.start)) expect(kept[i + 1]!.start - kept[i]!.end).toBeLessThanOrEqual(0.8);
  }, 300_000);

  it('cuts a clip by words that starts at a filler the aligner stretched over the pause before it at the filler, not the next word', async () => {
    // The aligner places "um" over the pause before it and its own sound (issue 32): the onset heard must be the
    // filler's, not that of "we" after the next pause.
    const t = structured<{ words: { word: string; start_seconds: number; end_seconds: number }[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: speech, text: TEXT, words: true }),
    );
    const um = truth.findIndex((w) => w.word === 'um');
    const composed = structured<{ ready: boolean; edit_id: string }>(
      await call('compose_edit', { project_id: projectId, clips: [{ asset_id: speech, words: [um, um + 3] }] }),
    );
    type Levels = Seg & { audio_levels: { audio_level: number; start_time: string; end_time: string }[] };
    const { heard, full } = heardSpan(
      (await storedEdit<{ video_series_sequential: Levels[] }>(server.client, composed.edit_id))
        .video_series_sequential[0]!,
    );
    const at = `"um" true ${truth[um]!.start.toFixed(3)}-${truth[um]!.end.toFixed(3)} s, aligned ${t.words[um]!.start_seconds}-${t.words[um]!.end_seconds} s; sound ${heard.from.toFixed(3)}, full from ${full.from.toFixed(3)}`;
    expect(full.from, at).toBeLessThanOrEqual(truth[um]!.start + TOL);
    expect(truth[um]!.start - heard.from, at).toBeLessThanOrEqual(0.15 + TOL);
    expect(full.to, at).toBeGreaterThanOrEqual(truth[um + 3]!.end - TOL);
  }, 300_000);

  it('says what is wrong: an unknown edit, a limit out of range', async () => {
    const none = await call('tighten_edit', { edit_id: 'edit-0000000000000000' });
    expect(none.isError).toBe(true);
    expect(textOf(none)).toMatch(/no edit edit-0000000000000000 is kept here/);
    const composed = structured<{ edit_id: string }>(
      await call('compose_edit', { project_id: projectId, clips: [{ asset_id: silentAsset, start: 0, end: 1 }] }),
    );
    const low = await call('tighten_edit', { edit_id: composed.edit_id, max_pause_seconds: 0.1 });
    expect(textOf(low)).toMatch(/max_pause_seconds is 0.1; give 0.3 to 60 seconds/);
    const nothing = structured<{ removals: unknown[]; untranscribed_cuts: number[] }>(
      await call('tighten_edit', { edit_id: composed.edit_id }),
    );
    expect(nothing.removals).toEqual([]);
    expect(nothing.untranscribed_cuts).toEqual([0]);
  }, 120_000);
});
