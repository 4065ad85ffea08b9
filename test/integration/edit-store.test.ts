// The edit store (compose_edit's edit_id) as an unlucky user and an attacker would try it, through the built server on
// the local backend: edit ids that are not ours, a file in CUTROOM_DATA_DIR/edits edited by hand or cut short, two
// servers on one data dir composing at once, and a full disk under the data dir (a small tmpfs: needs root; skipped,
// saying why, where mounting is refused).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { resultBytes, spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-edit-store-'));
const allowed = join(root, 'allowed');
const env = (dataDir: string) => ({
  CUTROOM_DATA_DIR: dataDir,
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
});

type Cut = { video_id: string; video_start_time: string; video_end_time: string };
type Check = { ready: boolean; edit_id?: string; skipped_checks: string[] };
const call = (s: Spawned, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }, { timeout: 120_000 });
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};

/** A project on `srv` with the red and blue test videos imported. */
async function project(srv: Spawned): Promise<{ projectId: string; red: string; blue: string }> {
  const projectId = structured<{ project: { id: string } }>(
    await call(srv, 'create_project', { name: 'edit store', description: '' }),
  ).project.id;
  const id = async (file: string) =>
    structured<{ asset: { id: string } }>(
      await call(srv, 'import_media', { project_id: projectId, path: join(allowed, file) }),
    ).asset.id;
  return { projectId, red: await id('red.mp4'), blue: await id('blue.mp4') };
}

beforeAll(() => {
  mkdirSync(allowed, { recursive: true });
  for (const [name, path] of Object.entries(makeAll()))
    copyFileSync(path, join(allowed, `${name}${path.slice(path.lastIndexOf('.'))}`));
});
afterAll(() => {
  // Unmounted here as well as after its tests: a run that filters them out still leaves nothing mounted.
  if (mounted) spawnSync('umount', ['-l', fullData]);
  rmSync(root, { recursive: true, force: true });
});

describe('edit files that are not what their name says', () => {
  const dataDir = join(root, 'data');
  let srv: Spawned;
  let p: Awaited<ReturnType<typeof project>>;
  const redEdit = () => ({ project_id: p.projectId, clips: [{ asset_id: p.red, start: 0, end: 2 }] });
  const fileOf = (id: string) => join(dataDir, 'edits', `${id}.json`);

  beforeAll(async () => {
    srv = await spawnServer(env(dataDir));
    p = await project(srv);
  }, 60_000);
  afterAll(async () => {
    await srv?.close();
  });

  it('an edit file edited by hand (another cut, same edit_id) is not served as that edit: composing again puts the real one back', async () => {
    const id = structured<Check>(await call(srv, 'compose_edit', redEdit())).edit_id!;
    const stored = JSON.parse(readFileSync(fileOf(id), 'utf8')) as { edit: { video_series_sequential: Cut[] } };
    Object.assign(stored.edit.video_series_sequential[0]!, { video_id: p.blue, video_end_time: '00:00:05.000' });
    writeFileSync(fileOf(id), JSON.stringify(stored));
    // Named by its id, it is no edit of ours...
    const named = await call(srv, 'export_edit', { edit_id: id, format: 'edl' });
    expect(named.isError).toBe(true);
    expect(textOf(named)).toMatch(new RegExp(`^no edit ${id} is kept here: compose_edit returns edit ids`));
    // ...and the same edit composed again gets the same id, naming what was composed (not the file's other cut).
    expect(structured<Check>(await call(srv, 'compose_edit', redEdit())).edit_id).toBe(id);
    expect((await storedEdit<{ video_series_sequential: Cut[] }>(srv.client, id)).video_series_sequential).toEqual([
      expect.objectContaining({ video_id: p.red, video_start_time: '00:00:00.000', video_end_time: '00:00:02.000' }),
    ]);
  });

  it('an edit file moved to another project, or cut short, is no edit; the error suggests no id for the one given', async () => {
    const id = structured<Check>(
      await call(srv, 'compose_edit', { ...redEdit(), clips: [{ asset_id: p.red, start: 1, end: 3 }] }),
    ).edit_id!;
    const other = structured<{ project: { id: string } }>(
      await call(srv, 'create_project', { name: 'elsewhere', description: '' }),
    ).project.id;
    const stored = JSON.parse(readFileSync(fileOf(id), 'utf8')) as { project_id: string };
    writeFileSync(fileOf(id), JSON.stringify({ ...stored, project_id: other }));
    const moved = await call(srv, 'preview_edit', { edit_id: id });
    expect(textOf(moved)).toBe(
      `no edit ${id} is kept here: compose_edit returns edit ids (composing the same edit again gives back its id)`,
    );
    writeFileSync(fileOf(id), '{"project_id": "cut sh');
    const cut = await call(srv, 'render_edit', { edit_id: id });
    expect(textOf(cut)).toBe(
      `no edit ${id} is kept here: compose_edit returns edit ids (composing the same edit again gives back its id)`,
    );
    const read = srv.client.readResource({ uri: `cutroom://edits/${id}` });
    await expect(read).rejects.toThrow(/no such edit is kept here/);
  });

  it('an edit larger than one message (60,000 cuts, 14 MiB) is read in parts that join into it', async () => {
    const clips = Array.from({ length: 60_000 }, (_, i) => ({
      asset_id: i % 2 ? p.red : p.blue,
      start: (i % 50) / 10,
      end: (i % 50) / 10 + 0.5,
    }));
    const c = structured<Check & { left_out?: string[] }>(
      await call(srv, 'compose_edit', { project_id: p.projectId, clips }),
    );
    const uri = `cutroom://edits/${c.edit_id}`;
    expect(c.left_out?.join(' ')).toContain(`${uri} has them all`);
    const first = (await srv.client.readResource({ uri })).contents[0] as {
      text: string;
      _meta?: Record<string, unknown>;
    };
    const manifest = first._meta?.['cutroom/parts'] as {
      size: number;
      sha256: string;
      parts: { uri: string; length: number }[];
    };
    expect(manifest.parts.length).toBeGreaterThan(1);
    const parts: Buffer[] = [];
    for (const part of manifest.parts)
      parts.push(
        Buffer.from(
          ((await srv.client.readResource({ uri: part.uri })).contents[0] as { blob: string }).blob,
          'base64',
        ),
      );
    const whole = Buffer.concat(parts);
    expect(whole.length).toBe(manifest.size);
    expect(createHash('sha256').update(whole).digest('hex')).toBe(manifest.sha256);
    const edit = JSON.parse(whole.toString('utf8')) as { edit_id: string; edit: { video_series_sequential: Cut[] } };
    expect(edit.edit_id).toBe(c.edit_id);
    expect(edit.edit.video_series_sequential).toHaveLength(60_000);
  }, 120_000);

  it('edit ids that are not ours (paths, huge, unicode, NUL) are refused in one bounded line, reading no file', async () => {
    writeFileSync(join(root, 'secret.json'), JSON.stringify({ edit_id: 'x' }));
    for (const hostile of [
      '../../secret',
      `edit-${'../'.repeat(6)}secret`,
      'e'.repeat(200_000),
      'edit-ééééééééééééééé',
      'edit-0123456789abcde\u0000',
      '',
    ]) {
      const r = await call(srv, 'preview_edit', { edit_id: hostile });
      expect(r.isError, JSON.stringify(hostile.slice(0, 20))).toBe(true);
      expect(textOf(r)).toMatch(/is not an edit id \(like edit-3f2b8c1e4d5a4b6c\)/);
      expect(resultBytes(r)).toBeLessThan(400);
      await expect(
        srv.client.readResource({ uri: `cutroom://edits/${encodeURIComponent(hostile.slice(0, 1000))}` }),
      ).rejects.toThrow();
    }
    expect(readdirSync(join(dataDir, 'edits')).every((n) => /^edit-[0-9a-f]{16}\.json$/.test(n))).toBe(true);
  });
});

describe('two servers on one data dir', () => {
  const dataDir = join(root, 'shared-data');
  let a: Spawned;
  let b: Spawned;
  beforeAll(async () => {
    a = await spawnServer(env(dataDir));
    b = await spawnServer(env(dataDir));
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('composing the same and different edits at once, each gets one id that works on the other server', async () => {
    const p = await project(a);
    const edit = (i: number) => ({
      project_id: p.projectId,
      clips: [{ asset_id: i % 2 ? p.red : p.blue, start: 0, end: 1 + (i % 8) / 4 }],
    });
    // Both servers compose edits 0-7 at once: the same edit gets the same id on either.
    const both = await Promise.all(
      [a, b].flatMap((s) => Array.from({ length: 8 }, (_, i) => call(s, 'compose_edit', edit(i)))),
    );
    const ids = both.map((r) => structured<Check>(r).edit_id!);
    expect(ids.slice(0, 8)).toEqual(ids.slice(8));
    expect(new Set(ids).size).toBe(8);
    for (const [i, id] of ids.slice(0, 8).entries()) {
      const from = i % 2 ? a : b;
      expect(
        (await storedEdit<{ video_series_sequential: Cut[] }>(from.client, id)).video_series_sequential[0]!.video_id,
      ).toBe(i % 2 ? p.red : p.blue);
    }
    expect(readdirSync(join(dataDir, 'edits')).sort()).toEqual(
      ids
        .slice(0, 8)
        .map((id) => `${id}.json`)
        .sort(),
    );
  }, 120_000);

  it('past 1000 edits composed by both at once, the 1000 most recently used are kept, the newest all readable on either', async () => {
    const p = await project(a);
    const made: string[] = [];
    for (let k = 0; k < 1100; k += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          call(j % 2 ? a : b, 'compose_edit', {
            project_id: p.projectId,
            clips: [{ asset_id: p.red, start: 0, end: 0.1 + (k + j) / 1000 }],
          }),
        ),
      );
      made.push(...batch.map((r) => structured<Check>(r).edit_id!));
    }
    expect(new Set(made).size).toBe(1100);
    const kept = readdirSync(join(dataDir, 'edits'));
    expect(kept).toHaveLength(1000);
    expect(kept.every((n) => /^edit-[0-9a-f]{16}\.json$/.test(n))).toBe(true);
    for (const id of made.slice(-200)) expect(kept).toContain(`${id}.json`);
    for (const [i, id] of made.slice(-10).entries())
      expect(await storedEdit(i % 2 ? a.client : b.client, id)).toHaveProperty('video_series_sequential');
  }, 300_000);
});

// A full disk under the data dir: keeping the edit fails, but nothing that only needed the cache dir does.
const fullData = join(root, 'full-data');
mkdirSync(fullData, { recursive: true });
const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', fullData], { encoding: 'utf8' });
const mounted = mount.status === 0;
if (!mounted)
  console.warn(
    `skipping the full-disk tests of the edit store: mounting a tmpfs as the data dir was refused (${(mount.stderr || mount.error?.message || '').trim()}); they need root`,
  );

describe.skipIf(!mounted)('a full disk under the data dir', () => {
  let srv: Spawned;
  let p: Awaited<ReturnType<typeof project>>;
  beforeAll(async () => {
    srv = await spawnServer(env(fullData));
    p = await project(srv);
    const fd = openSync(join(fullData, 'filler'), 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(4096, 1));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      closeSync(fd);
    }
  }, 60_000);
  afterAll(async () => {
    await srv?.close();
    spawnSync('umount', ['-l', fullData]);
  });

  it('an edit given inline is still previewed and exported (the cache dir has room); compose_edit checks it and says it could not keep it', async () => {
    const inline = { project_id: p.projectId, clips: [{ asset_id: p.red, start: 0, end: 1.5 }], resolution: '320x180' };
    const preview = await call(srv, 'preview_edit', inline);
    expect(preview.isError, textOf(preview)).toBeFalsy();
    expect((preview.structuredContent as { edit_id?: string }).edit_id).toBeUndefined();
    const exported = await call(srv, 'export_edit', { ...inline, format: 'edl' });
    expect(exported.isError, textOf(exported)).toBeFalsy();
    const composed = await call(srv, 'compose_edit', inline);
    const c = structured<Check>(composed);
    expect(c.ready).toBe(true);
    expect(c.edit_id).toBeUndefined();
    expect(c.skipped_checks).toEqual([
      expect.stringMatching(
        /^keeping the edit under an edit_id: the disk holding the data dir \(CUTROOM_DATA_DIR\) is full; give the edit's arguments inline/,
      ),
    ]);
    expect(textOf(composed)).toMatch(/\nSkipped: keeping the edit under an edit_id: the disk holding the data dir/);
    expect(textOf(composed)).not.toContain(fullData);
    expect(readdirSync(join(fullData, 'edits')).filter((n) => !/^edit-[0-9a-f]{16}\.json$/.test(n))).toEqual([]);
    // Space again: the same edit is kept.
    rmSync(join(fullData, 'filler'));
    const kept = structured<Check>(await call(srv, 'compose_edit', inline));
    expect(kept.edit_id).toMatch(/^edit-[0-9a-f]{16}$/);
    expect(existsSync(join(fullData, 'edits', `${kept.edit_id}.json`))).toBe(true);
  }, 120_000);
});
