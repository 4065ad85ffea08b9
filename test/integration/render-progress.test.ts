// A local render shows where it is: its progress and time left through get_render_status (from the server running
// it and from another sharing its data dir) and through render_edit's progress notifications; its file carries the
// name the edit asked for, in a folder of its own; a render killed midway leaves nothing of itself, nor does one
// cancelled by its id, on the server running it or on another sharing the data dir (issue 50).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { patternSource } from '../helpers/pattern-source.js';
import { pidsMatching } from '../helpers/processes.js';
import { probe } from '../helpers/inspect-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-renderprog-'));
const dataDir = join(root, 'data');
const allowed = join(root, 'allowed');
const env = (extra: Record<string, string> = {}) => ({
  CUTROOM_DATA_DIR: dataDir,
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
  ...extra,
});
const call = (s: Spawned, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }, { timeout: 120_000 });
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};

type Status = {
  asset_id: string;
  status: string;
  done: boolean;
  failed: boolean;
  url?: string;
  progress?: number;
  eta_seconds?: number;
  elapsed_seconds?: number;
};
type Seen = Status & { text: string };

let a: Spawned;
let b: Spawned;
let projectId: string;
let sourceId: string;

/** 40 s of a moving pattern with a tone, as eight cuts, rendered at 640x360: long enough to watch on any machine. */
const longEdit = (filename: string) => ({
  project_id: projectId,
  resolution: '640x360',
  fps: 25,
  filename,
  clips: Array.from({ length: 8 }, (_, i) => ({ asset_id: sourceId, start: i, end: i + 5 })),
});

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  copyFileSync(patternSource(40), join(allowed, 'pattern.mp4'));
  a = await spawnServer(env());
  b = await spawnServer(env());
  projectId = structured<{ project: { id: string } }>(
    await call(a, 'create_project', { name: 'progress', description: '' }),
  ).project.id;
  sourceId = structured<{ asset: { id: string } }>(
    await call(a, 'import_media', { project_id: projectId, path: join(allowed, 'pattern.mp4') }),
  ).asset.id;
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
});

/** Follows a render through get_render_status on every server given, in turn, until each has seen it end. */
async function follow(servers: Spawned[], assetId: string): Promise<Seen[][]> {
  const seen: Seen[][] = servers.map(() => []);
  const deadline = Date.now() + 120_000;
  while (seen.some((s) => !s.at(-1)?.done && !s.at(-1)?.failed)) {
    if (Date.now() > deadline) throw new Error('the render did not end within 120 s');
    for (const [i, s] of servers.entries()) {
      if (seen[i]!.at(-1)?.done) continue;
      const r = await call(s, 'get_render_status', { project_id: projectId, asset_id: assetId });
      seen[i]!.push({ ...structured<Status>(r), text: textOf(r) });
    }
    await new Promise((res) => setTimeout(res, 200));
  }
  return seen;
}

/** What a server saw while the render ran: its progress rose, and once given, its time left was never negative. */
function expectRising(seen: Seen[], who: string): { fractions: number[]; etas: number[] } {
  const running = seen.filter((s) => !s.done);
  const fractions = running.flatMap((s) => (s.progress === undefined ? [] : [s.progress]));
  for (const [i, f] of fractions.entries()) {
    expect(f, who).toBeGreaterThanOrEqual(0);
    expect(f, who).toBeLessThanOrEqual(1);
    if (i) expect(f, `${who}: progress went back`).toBeGreaterThanOrEqual(fractions[i - 1]!);
  }
  expect(new Set(fractions).size, `${who} saw the progress rise (${fractions.join(', ')})`).toBeGreaterThanOrEqual(2);
  const etas = running.flatMap((s) => (s.eta_seconds === undefined ? [] : [s.eta_seconds]));
  for (const e of etas) expect(e, who).toBeGreaterThanOrEqual(0);
  // An estimate comes only with some work done.
  for (const s of running) if (s.eta_seconds !== undefined) expect(s.progress, who).toBeGreaterThan(0);
  for (const s of running) expect(s.elapsed_seconds, who).toBeGreaterThanOrEqual(0);
  expect(seen.at(-1)).toMatchObject({ status: 'uploaded', done: true });
  expect(seen.at(-1)!.progress).toBeUndefined();
  return { fractions, etas };
}

describe('a local render', () => {
  let firstFile: string;

  it('reports its progress and time left to the server running it and to another on the same data dir', async () => {
    const { render } = structured<{ render: Status }>(await call(a, 'render_edit', longEdit('lake at dawn.mp4')));
    expect(render.status).toBe('processing');
    const [onA, onB] = await follow([a, b], render.asset_id);
    const mine = expectRising(onA!, 'the rendering server');
    const other = expectRising(onB!, 'the other server');
    // The time left shrinks overall (from its first estimate to its last), as both servers see it.
    expect(mine.etas.length, `estimates seen: ${mine.etas.join(', ')}`).toBeGreaterThanOrEqual(2);
    expect(mine.etas.at(-1)!).toBeLessThan(mine.etas[0]!);
    expect(other.etas.length, `estimates seen by the other server: ${other.etas.join(', ')}`).toBeGreaterThanOrEqual(1);
    // While it runs, the text says how far it has got, the time left (once known) and when to check again.
    const withEta = onA!.find((s) => s.eta_seconds !== undefined)!;
    // Durations read "12 s" or "1 min 5 s" (a loaded machine renders slower).
    expect(withEta.text).toMatch(
      /^Not done: rendering \d+%, (about (\d+ min ?)?(\d+ s)? left|finishing) \(((\d+ min ?)?(\d+ s)?) since it started\)\. Check again in about (\d+ min ?)?(\d+ s)?\.$/,
    );
    const done = onA!.at(-1)!;
    expect(done.text).toMatch(/^Done: file:/);
    // The file carries the name asked for, in the render's own folder, with nothing else left there.
    firstFile = fileURLToPath(done.url!);
    expect(basename(firstFile)).toBe('lake at dawn.mp4');
    expect(dirname(firstFile)).toBe(join(dataDir, 'projects', projectId, 'media', render.asset_id));
    expect(readdirSync(dirname(firstFile))).toEqual(['lake at dawn.mp4']);
    expect(Math.abs(probe(firstFile).duration - 40)).toBeLessThanOrEqual(0.05);
    const { project } = structured<{ project: { assets: { id: string; name?: string }[] } }>(
      await call(b, 'get_project', { project_id: projectId }),
    );
    expect(project.assets.some((x) => x.id === render.asset_id)).toBe(true);
  }, 150_000);

  it('with wait, sends progress notifications with the fraction done and the time left; one name twice makes two files', async () => {
    const notes: { progress: number; total?: number; message?: string }[] = [];
    const r = await a.client.callTool(
      { name: 'render_edit', arguments: { ...longEdit('lake at dawn.mp4'), wait: true } },
      { timeout: 120_000, onprogress: (p) => notes.push(p) },
    );
    const { render } = structured<{ render: Status }>(r);
    expect(render).toMatchObject({ done: true, status: 'uploaded' });
    expect(notes.length).toBeGreaterThanOrEqual(2);
    for (const [i, n] of notes.entries()) {
      expect(n.total).toBe(1);
      expect(n.progress).toBeGreaterThanOrEqual(0);
      expect(n.progress).toBeLessThanOrEqual(1);
      if (i) expect(n.progress).toBeGreaterThan(notes[i - 1]!.progress);
    }
    expect(
      notes.some((n) => /^rendering \d+%, about (\d+ min ?)?(\d+ s)? left$/.test(n.message ?? '')),
      notes.map((n) => n.message).join(' | '),
    ).toBe(true);
    // The same name as the render before: its own folder, and the earlier file untouched.
    const second = fileURLToPath(render.url!);
    expect(basename(second)).toBe('lake at dawn.mp4');
    expect(second).not.toBe(firstFile);
    expect(existsSync(firstFile)).toBe(true);
    expect(Math.abs(probe(firstFile).duration - 40)).toBeLessThanOrEqual(0.05);
  }, 150_000);

  it('when the wait ends first, says where it stands and names get_render_status', async () => {
    const brief = await spawnServer(env({ CUTROOM_RENDER_WAIT_MS: '2500' }));
    try {
      const r = await call(brief, 'render_edit', { ...longEdit('brief.mp4'), wait: true });
      const { render } = structured<{ render: Status }>(r);
      expect(render.done).toBe(false);
      expect(render.elapsed_seconds).toBeGreaterThanOrEqual(2);
      expect(textOf(r)).toMatch(
        /^Still running after a 3 s wait: (rendering \d+%|processing).*\. Follow it with get_render_status \{project_id: "[0-9a-f-]{36}", asset_id: "[0-9a-f-]{36}"\} in about (\d+ s|\d+ min( \d+ s)?)\./,
      );
      const [seen] = await follow([brief], render.asset_id);
      expect(seen!.at(-1)!.done).toBe(true);
    } finally {
      await brief.close();
    }
  }, 150_000);

  it('names its file safely: folders, hidden names and pattern characters are dropped from what was asked', async () => {
    const r = await call(a, 'render_edit', {
      ...longEdit('.%d:clip?.mp4'),
      clips: [{ asset_id: sourceId, start: 0, end: 1 }],
      wait: true,
    });
    const { render } = structured<{ render: Status }>(r);
    expect(render.done).toBe(true);
    expect(basename(fileURLToPath(render.url!))).toBe('_d_clip_.mp4');
  }, 60_000);
});

describe('a local render killed midway', () => {
  it('leaves no partial file, progress or folder of its own', async () => {
    const victim = await spawnServer(env(), { tee: false });
    const { render } = structured<{ render: Status }>(await call(victim, 'render_edit', longEdit('doomed.mp4')));
    const folder = join(dataDir, 'projects', projectId, 'media', render.asset_id);
    // Killed once ffmpeg writes the render's temporary file and its progress, in the render's own folder.
    await expect
      .poll(
        () =>
          (existsSync(folder) ? readdirSync(folder) : []).filter((f) => f.endsWith('.part') || f === '.progress.json')
            .length,
        { timeout: 30_000, interval: 100 },
      )
      .toBe(2);
    expect(pidsMatching(folder).length).toBeGreaterThan(0);
    process.kill(victim.pid!, 'SIGKILL');
    await victim.client.close().catch(() => {});
    const s = await call(b, 'get_render_status', { project_id: projectId, asset_id: render.asset_id });
    expect(s.structuredContent).toMatchObject({
      status: 'failed',
      failed: true,
      reason: expect.stringMatching(/interrupted/),
    });
    await expect.poll(() => pidsMatching(folder).length, { timeout: 5000 }).toBe(0);
    expect(existsSync(folder)).toBe(false);
    expect(
      readdirSync(join(dataDir, 'projects', projectId, 'media')).filter((f) => f.includes(render.asset_id)),
    ).toEqual([]);
  }, 60_000);
});

describe('a local render cancelled by its id (get_render_status {cancel: true})', () => {
  /** Starts a render on `on` and resolves once its ffmpeg writes the temporary file in the render's folder. */
  async function running(on: Spawned, filename: string): Promise<{ assetId: string; folder: string }> {
    const { render } = structured<{ render: Status }>(await call(on, 'render_edit', longEdit(filename)));
    const folder = join(dataDir, 'projects', projectId, 'media', render.asset_id);
    await expect
      .poll(() => (existsSync(folder) ? readdirSync(folder) : []).some((f) => f.endsWith('.part')), {
        timeout: 30_000,
        interval: 100,
      })
      .toBe(true);
    expect(pidsMatching(folder).length).toBeGreaterThan(0);
    return { assetId: render.asset_id, folder };
  }
  /** The render stopped: no process of it, no folder, no file of it in the project's media, and its asset failed. */
  async function expectStopped(assetId: string, folder: string) {
    expect(pidsMatching(folder)).toEqual([]);
    expect(existsSync(folder)).toBe(false);
    expect(readdirSync(join(dataDir, 'projects', projectId, 'media')).filter((f) => f.includes(assetId))).toEqual([]);
    for (const s of [a, b])
      expect(
        structured<Status>(await call(s, 'get_render_status', { project_id: projectId, asset_id: assetId })),
      ).toMatchObject({ status: 'failed', failed: true, reason: expect.stringMatching(/cancelled/) });
  }

  it('on the server running it: its ffmpeg stopped, its partial file removed, the asset failed', async () => {
    const { assetId, folder } = await running(a, 'cancelled here.mp4');
    const r = await call(a, 'get_render_status', { project_id: projectId, asset_id: assetId, cancel: true });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toMatch(/^Cancelled: the render was cancelled before it finished; its partial file was removed/);
    expect(r.structuredContent).toMatchObject({ status: 'failed', failed: true, done: false });
    await expectStopped(assetId, folder);
    // Asked again: nothing to cancel, said as such.
    const again = await call(b, 'get_render_status', { project_id: projectId, asset_id: assetId, cancel: true });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(textOf(again)).toMatch(/^Nothing to cancel: it had ended\. Failed/);
  }, 120_000);

  it('on another server sharing the data dir: the server running it stops it, and the answer waits for that', async () => {
    const { assetId, folder } = await running(a, 'cancelled there.mp4');
    const r = await call(b, 'get_render_status', { project_id: projectId, asset_id: assetId, cancel: true });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toMatch(/^Cancelled: the render was cancelled before it finished; its partial file was removed/);
    await expectStopped(assetId, folder);
  }, 120_000);
});
