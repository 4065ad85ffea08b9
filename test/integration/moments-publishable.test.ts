// Moments that are moments (issue 47, item 4), through the built server over stdio with media made here: b-roll (three
// moving shots over ambient noise: pink noise whose level drifts like wind), a music bed (a melody over a chord) and a
// voiceover (flite), both sound only, and a talking shot whose picture cuts just after its first sentence ends.
// - The speech detector gates recognition: the b-roll's noise is not transcribed (said in missing), so no moment holds
//   "sentences" heard in it; a project-wide search skips the music bed and the b-roll the same way.
// - Asked with no asset list, find_moments ranks the videos: the music bed and the voiceover are not moments.
// - Every span lasts at least min_seconds, and ends on shot boundaries: never a few frames past a cut.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sayWithWordTimes } from '../helpers/flite-words.js';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { ffmpeg } from '../helpers/sound.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-moments-publishable-'));
const allowed = join(root, 'allowed');
const FPS = 25;
type Moment = {
  asset_id: string;
  start_seconds: number;
  end_seconds: number;
  signals: { sentences?: number; words_per_second?: number };
  text?: string;
};
type Found = { moments: Moment[]; missing?: { asset_id: string; reason: string }[] };
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};

/** Three moving shots of `shot` s each, hard cuts between them, over `sound`. */
function makeShots(file: string, shot: number[], sound: string[]): void {
  const sources = [
    (d: number) => `testsrc2=s=320x180:r=${FPS}:d=${d}`,
    (d: number) => `testsrc2=s=320x180:r=${FPS}:d=${d},negate`,
    (d: number) =>
      `life=s=320x180:r=${FPS}:mold=10:ratio=0.5:seed=3:life_color=#ff8000:death_color=#203040,trim=duration=${d}`,
  ];
  const graph =
    shot.map((d, i) => `${sources[i]!(d)},format=yuv420p[v${i}]`).join(';') +
    `;${shot.map((_, i) => `[v${i}]`).join('')}concat=n=${shot.length}:v=1:a=0[v]`;
  ffmpeg([
    '-filter_complex',
    graph,
    ...sound,
    '-map',
    '[v]',
    '-map',
    '0:a',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    String(FPS),
    '-c:a',
    'aac',
    '-shortest',
    file,
  ]);
}

let server: Spawned;
let projectId: string;
const ids: Record<string, string> = {};
/** The talking shot's cut: 2 frames after its first sentence's last word ends. */
let talkCut = 0;
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 600_000 });
const moments = async (args: Record<string, unknown>) =>
  structured<Found>(await call('find_moments', { project_id: projectId, ...args }));
/** Shot changes of an asset, as inspect_asset finds them. */
const cutsOf = async (asset: string) =>
  structured<{ shots: { start_seconds: number }[] }>(
    await call('inspect_asset', { project_id: projectId, asset_id: asset }),
  )
    .shots.slice(1)
    .map((s) => s.start_seconds);

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const wind = join(allowed, 'wind.wav');
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'anoisesrc=color=pink:amplitude=0.25:duration=24:seed=11:sample_rate=48000',
    '-af',
    "volume='0.5+0.4*sin(2*PI*t*0.23)+0.1*sin(2*PI*t*1.7)':eval=frame",
    wind,
  ]);
  makeShots(join(allowed, 'broll.mp4'), [8, 8, 8], ['-i', wind]);
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    "aevalsrc='0.2*sin(2*PI*(220+55*mod(floor(t*2)\\,5))*t)*(0.6+0.4*exp(-mod(t\\,0.5)*6))+0.05*(sin(2*PI*110*t)+sin(2*PI*165*t))':s=44100:d=20",
    join(allowed, 'music.wav'),
  ]);
  sayWithWordTimes(
    'Welcome to the harbor. The boats come in at dawn. The market opens when the fish are landed.',
    join(allowed, 'voice.wav'),
    'rms',
  );
  // The talking shot: two sentences; the picture cuts two frames after the first one's last word.
  const TALK = 'The storm came in from the sea. Nobody slept that night.';
  const words = sayWithWordTimes(TALK, join(allowed, 'talk.wav'), 'slt');
  talkCut = Math.ceil((words[6]!.end + 2 / FPS) * FPS) / FPS;
  const rest = Math.ceil((words.at(-1)!.end + 1 - talkCut) * FPS) / FPS;
  makeShots(join(allowed, 'talk.mp4'), [talkCut, rest], ['-i', join(allowed, 'talk.wav'), '-af', 'apad']);
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'moments', description: 'b-roll, music, voice' }),
  ).project.id;
  for (const name of ['broll.mp4', 'music.wav', 'voice.wav', 'talk.mp4'])
    ids[name] = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: join(allowed, name) }),
    ).asset.id;
  structured(await call('transcribe_asset', { project_id: projectId, asset_id: ids['talk.mp4'], text: TALK }));
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('moments that are moments', () => {
  it('b-roll over ambient noise: not transcribed, no "sentences" heard; spans within min/max on its shots', async () => {
    const found = await moments({ asset_ids: [ids['broll.mp4']], min_seconds: 5, max_seconds: 20 });
    expect(found.missing?.find((m) => m.asset_id === ids['broll.mp4'])?.reason).toMatch(/no speech heard/);
    expect(found.moments.length).toBeGreaterThan(0);
    const cuts = await cutsOf(ids['broll.mp4']);
    expect(cuts.length).toBeGreaterThanOrEqual(2);
    const bounds = [0, ...cuts, 24];
    for (const m of found.moments) {
      expect(m.text, 'no words heard in noise').toBeUndefined();
      expect(m.signals.sentences ?? 0).toBe(0);
      expect(m.end_seconds - m.start_seconds).toBeGreaterThanOrEqual(5 - 1e-3);
      expect(m.end_seconds - m.start_seconds).toBeLessThanOrEqual(20 + 1e-3);
      for (const end of [m.start_seconds, m.end_seconds])
        expect(Math.min(...bounds.map((b) => Math.abs(b - end))), `${end} s on a shot boundary`).toBeLessThan(
          0.5 / FPS,
        );
    }
  }, 600_000);

  it('asked with no asset list, ranks the videos: the music bed and the voiceover are not moments', async () => {
    const found = await moments({ count: 10, min_seconds: 2 });
    expect(found.moments.length).toBeGreaterThan(0);
    const ranked = new Set(found.moments.map((m) => m.asset_id));
    expect(ranked.has(ids['music.wav']!), 'the music bed ranked').toBe(false);
    expect(ranked.has(ids['voice.wav']!), 'the voiceover ranked').toBe(false);
    // Named, the voiceover is ranked, by its sentences.
    const voice = await moments({ asset_ids: [ids['voice.wav']], min_seconds: 2 });
    expect(voice.moments.length).toBeGreaterThan(0);
    expect(voice.moments[0]!.signals.sentences).toBeGreaterThan(0);
  }, 600_000);

  it("says a voiceover's moment goes into overlays, and it composes there", async () => {
    // Before: "Each clip goes into compose_edit clips as it is", and compose_edit refused it (a cut needs a video).
    const r = await call('find_moments', { project_id: projectId, asset_ids: [ids['voice.wav']], min_seconds: 2 });
    const m = structured<Found>(r).moments[0]!;
    expect(textOf(r)).toMatch(/A moment of sound alone goes into compose_edit overlays: \{asset_id, from: its start/);
    expect(textOf(r)).not.toMatch(/Each clip goes into compose_edit clips/);
    const length = m.end_seconds - m.start_seconds;
    const composed = structured<{ ready: boolean }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [{ asset_id: ids['broll.mp4'], start: 0, end: length }],
        overlays: [{ asset_id: m.asset_id, from: m.start_seconds, at: 0, until: length }],
      }),
    );
    expect(composed.ready).toBe(true);
  }, 600_000);

  it('a project-wide search transcribes neither the music bed nor the b-roll', async () => {
    const r = structured<{ missing?: { asset_id: string; reason: string }[] }>(
      await call('search_transcripts', { project_id: projectId, query: 'harbor' }),
    );
    for (const name of ['music.wav', 'broll.mp4'])
      expect(r.missing?.find((m) => m.asset_id === ids[name])?.reason, name).toMatch(/no speech heard/);
  }, 600_000);

  it('honours min_seconds: no span shorter, even where the whole speech is', async () => {
    const found = await moments({ asset_ids: [ids['talk.mp4']], min_seconds: 5, count: 5 });
    for (const m of found.moments) expect(m.end_seconds - m.start_seconds).toBeGreaterThanOrEqual(5 - 1e-3);
  }, 600_000);

  it('puts span ends on the shot change, never a few frames past it', async () => {
    const cuts = await cutsOf(ids['talk.mp4']);
    expect(cuts.length).toBe(1);
    expect(Math.abs(cuts[0]! - talkCut)).toBeLessThan(0.5 / FPS);
    const found = await moments({ asset_ids: [ids['talk.mp4']], min_seconds: 0.5, count: 5 });
    expect(found.moments.length).toBeGreaterThan(0);
    for (const m of found.moments)
      for (const c of cuts) {
        const inside = m.start_seconds < c - 1e-3 && c < m.end_seconds - 1e-3;
        const near = Math.min(c - m.start_seconds, m.end_seconds - c) <= 0.5;
        expect(inside && near, `${m.start_seconds}-${m.end_seconds} s crosses the cut at ${c} s by a little`).toBe(
          false,
        );
      }
  }, 600_000);
});
