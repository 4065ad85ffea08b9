// find_moments (issue 32, item 6), through the built server over stdio: a source made at test time with planted good
// moments (about the lighthouse, at full level, a moving picture cut into three shots) among filler (off-topic, 12 dB
// quieter, a still picture) and a decoy (loud, off-topic, still). Transcribed by PocketSphinx and inspected on the
// first call; the planted moments must rank first, with the signals that put them there.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABOUT, makeMomentMedia, shareIn } from '../fixtures/moment-media.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { commandOf, pidsMatching } from '../helpers/processes.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-moments-'));
const allowed = join(root, 'allowed');
type Signals = {
  about?: number;
  louder_than_source_db?: number;
  cuts?: number;
  motion?: number;
  sentences?: number;
  sentences_cut?: number;
  words_per_second?: number;
};
type Moment = {
  asset_id: string;
  start_seconds: number;
  end_seconds: number;
  score: number;
  signals: Signals;
  reason: string;
  clip: { asset_id: string; words?: number[]; start?: number; end?: number };
};
type Found = {
  moments: Moment[];
  candidates: number;
  ranked: number;
  missing?: { asset_id: string; reason: string }[];
};
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};

let server: Spawned;
let projectId: string;
let media: ReturnType<typeof makeMomentMedia>;
const call = (
  name: string,
  args: Record<string, unknown>,
  opts: { onprogress?: (p: { progress: number }) => void; signal?: AbortSignal } = {},
) => server.client.callTool({ name, arguments: args }, { timeout: 300_000, ...opts });
const span = (m: Moment) => ({ start: m.start_seconds, end: m.end_seconds });
/** Which plant a moment lies in (most of it), if any. */
const plantOf = (m: Moment) => media.plants.find((p) => shareIn(span(m), p) >= 0.6)?.name;

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  media = makeMomentMedia(allowed);
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'debug',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'moments', description: 'planted moments' }),
  ).project.id;
  const imported = await call('import_media', { project_id: projectId, path: media.video });
  expect(imported.isError, JSON.stringify(imported)).toBeFalsy();
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe('find_moments', () => {
  let first: Found;
  it('ranks the planted moments first, about the subject, with the signals that put them there; each clip composes', async () => {
    const progress: number[] = [];
    first = structured<Found>(
      await call(
        'find_moments',
        { project_id: projectId, about: ABOUT, count: 6, min_seconds: 2, max_seconds: 12 },
        { onprogress: (p) => progress.push(p.progress) },
      ),
    );
    expect(progress.length, 'progress while it transcribes and inspects').toBeGreaterThan(0);
    // The plants' moments (a plant of two sentences may give one moment or one per sentence) before any other.
    const report = first.moments.map((m) => `${m.start_seconds}-${m.end_seconds} ${m.score} ${m.reason}`).join('\n');
    const inPlants = first.moments.filter((m) => plantOf(m));
    const top = first.moments.slice(0, inPlants.length);
    expect(top, report).toEqual(inPlants);
    expect(new Set(top.map(plantOf)), report).toEqual(new Set(['A', 'B']));
    expect(first.moments.length, report).toBeGreaterThan(top.length);
    for (const m of top) {
      expect(m.signals.about, report).toBeGreaterThanOrEqual(0.7);
      expect(m.signals.louder_than_source_db, report).toBeGreaterThan(3);
      expect(m.signals.cuts, report).toBeGreaterThanOrEqual(1);
      expect(m.signals.motion, report).toBeGreaterThan(1.5);
      expect(m.signals.sentences_cut, report).toBe(0);
      expect(m.reason).toMatch(/lighthouse|light house/i);
    }
    // The rest: below them, off the subject.
    for (const m of first.moments.slice(top.length)) {
      expect(m.score).toBeLessThan(Math.min(...top.map((t) => t.score)));
      expect(m.signals.about ?? 0, report).toBeLessThan(0.7);
    }
    // Scores in order.
    first.moments.forEach((m, i) => i && expect(m.score).toBeLessThanOrEqual(first.moments[i - 1]!.score));
    // Each clip goes into compose_edit as it is, and covers its moment's words: by words, or by the span's times where
    // an end was put on a shot change (the plants' sentences start where their first shot does).
    for (const m of top.slice(0, 2)) {
      if (m.clip.words) expect(m.clip.words).toHaveLength(2);
      else expect(m.clip).toMatchObject({ start: m.start_seconds, end: m.end_seconds });
      const c = structured<{ ready: boolean; summary?: unknown }>(
        await call('compose_edit', { project_id: projectId, clips: [m.clip] }),
      );
      expect(c.ready, JSON.stringify(c)).toBe(true);
    }
  }, 300_000);

  it('is deterministic: the same call gives the same moments in the same order', async () => {
    const raw = await call('find_moments', {
      project_id: projectId,
      about: ABOUT,
      count: 6,
      min_seconds: 2,
      max_seconds: 12,
    });
    const again = structured<Found>(raw);
    expect(again).toEqual(first);
    // A host that shows the model only the text loses nothing it needs: each moment's clip is spelled out there.
    for (const m of again.moments) expect(textOf(raw)).toContain(`clip: ${JSON.stringify(m.clip)}`);
  }, 120_000);

  it('without a subject, still ranks the planted moments first (loud, moving, cut), then the loud decoy', async () => {
    const r = structured<Found>(
      await call('find_moments', { project_id: projectId, count: 6, min_seconds: 2, max_seconds: 12 }),
    );
    const report = r.moments.map((m) => `${m.start_seconds}-${m.end_seconds} ${m.score} ${m.reason}`).join('\n');
    const inPlants = r.moments.filter((m) => plantOf(m));
    expect(r.moments.slice(0, inPlants.length), report).toEqual(inPlants);
    expect(new Set(inPlants.map(plantOf)), report).toEqual(new Set(['A', 'B']));
    const next = r.moments[inPlants.length];
    expect(next && shareIn(span(next), media.decoy), report).toBeGreaterThanOrEqual(0.6);
    for (const m of r.moments) expect(m.signals.about).toBeUndefined();
  }, 120_000);

  it('transcribes within its bound: a longer source is listed in missing and ranked by its sound alone', async () => {
    const long = join(allowed, 'long.m4a');
    // 610 s of sound: over the 600 s a call transcribes. Loud bursts every 30 s over a quiet tone.
    const r = spawnSync('ffmpeg', [
      '-hide_banner',
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      "aevalsrc='(0.02+0.5*lt(mod(t,30),5))*sin(2*PI*440*t)':s=16000:d=610",
      '-c:a',
      'aac',
      '-b:a',
      '32k',
      long,
    ]);
    expect(r.status, r.stderr?.toString()).toBe(0);
    const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: long }))
      .asset.id;
    const found = structured<Found>(
      await call('find_moments', { project_id: projectId, asset_ids: [id], count: 3, min_seconds: 3, max_seconds: 10 }),
    );
    expect(found.missing?.find((m) => m.asset_id === id)?.reason).toMatch(
      /not transcribed yet \(610 s of media; a call transcribes at most 600 s\).*ranked by what is known/,
    );
    expect(found.moments.length).toBe(3);
    for (const m of found.moments) {
      expect(m.asset_id).toBe(id);
      expect(m.signals.words_per_second).toBeUndefined();
      expect(m.signals.louder_than_source_db).toBeGreaterThan(10); // a burst, not the quiet tone
      expect(m.clip).toMatchObject({ asset_id: id, start: m.start_seconds, end: m.end_seconds });
    }
  }, 300_000);

  it('cancelled while it transcribes, stops the engine, keeps no transcript and leaves the server answering', async () => {
    // The planted source four times over, so that the engine is still at work when the call is cancelled.
    const long = join(allowed, 'moments x4.mp4');
    const r = spawnSync('ffmpeg', [
      '-hide_banner',
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-stream_loop',
      '3',
      '-i',
      media.video,
      '-c',
      'copy',
      long,
    ]);
    expect(r.status, r.stderr?.toString()).toBe(0);
    const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: long }))
      .asset.id;
    const controller = new AbortController();
    const running = call(
      'find_moments',
      { project_id: projectId, asset_ids: [id], about: ABOUT },
      { signal: controller.signal },
    ).catch((e: Error) => e);
    // This server's engines only: they read their pieces from its cache dir.
    const engines = () =>
      pidsMatching(join(root, 'cache', 'scratch')).filter((pid) => /pocketsphinx/.test(commandOf(pid))).length;
    const until = Date.now() + 60_000;
    while (engines() === 0 && Date.now() < until) await new Promise((res) => setTimeout(res, 100));
    expect(engines(), 'the engine started').toBeGreaterThan(0);
    controller.abort();
    expect(await running).toBeInstanceOf(Error);
    const gone = Date.now() + 5_000;
    while (engines() > 0 && Date.now() < gone) await new Promise((res) => setTimeout(res, 100));
    expect(engines()).toBe(0);
    await expect(
      server.client.readResource({ uri: `vj://projects/${projectId}/assets/${id}/transcript` }),
    ).rejects.toThrow(/has not been transcribed yet/);
    // The server goes on: the same project still answers.
    expect(
      structured<{ project: { id: string } }>(await call('get_project', { project_id: projectId })).project.id,
    ).toBe(projectId);
  }, 180_000);

  it('says plainly what is wrong', async () => {
    const bad = await call('find_moments', { project_id: projectId, count: 0 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/count is 0; ask for 1 to 20 moments/);
    const range = await call('find_moments', { project_id: projectId, min_seconds: 10, max_seconds: 5 });
    expect(textOf(range)).toMatch(/max_seconds at least min_seconds/);
    const none = await call('find_moments', { project_id: projectId, asset_ids: ['nope'] });
    expect(structured<Found>(none).missing).toEqual([{ asset_id: 'nope', reason: 'no such asset in the project' }]);
  }, 60_000);
});
