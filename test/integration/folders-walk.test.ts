// Walking folders (issue 31, item 5), through the built server over stdio: links back up the tree are followed once
// (each folder by device and inode, each file once however many names lead to it); the walk is bounded in depth
// and in entries, and whatever it passes over is counted with its reason in list_media and import_media; a folder
// of more than 200 files is imported call after call with a cursor; names that are not UTF-8 are shown in a form
// that imports them; a permission denied says so; one bad entry in `paths` is skipped, not the call.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

type Result = { isError?: boolean; structuredContent?: unknown; content: { type: string; text?: string }[] };
type Group = { reason: string; count: number; paths: string[] };
type Folder = {
  folder: string;
  files: { path: string; kind: string }[];
  files_total: number;
  skipped: Group[];
  truncated?: { entries_not_read: number; folders_not_read: number };
};
type Listing = { folders: Folder[]; next_offset?: number };
type Imported = {
  imported: { path: string; asset_id: string; already_imported?: boolean }[];
  skipped: { path: string; reason: string }[];
  left_out?: { imported: number; skipped: number };
  next_cursor?: string;
  asset?: { id: string; name?: string; url: string };
};

const root = mkdtempSync(join(tmpdir(), 'cutroom-walk-'));
const allowed = join(root, 'allowed');
const outside = join(root, 'outside');
let srv: Spawned;

const structured = <T>(r: Result): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
const call = async (s: Spawned, name: string, args: Record<string, unknown>, timeout = 120_000) =>
  (await s.client.callTool({ name, arguments: args }, { timeout })) as Result;
const newProject = async (s: Spawned, name: string) =>
  structured<{ project: { id: string } }>(await call(s, 'create_project', { name, description: '' })).project.id;
const tone = (path: string | Buffer, freq: number) => {
  const tmp = join(root, `tone-${freq}.wav`);
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=${freq}:duration=0.3`, tmp]);
  if (r.status !== 0) throw new Error(r.stderr.toString());
  copyFileSync(tmp, path);
};
const listing = async (folder: string, recursive = true) =>
  structured<Listing>(await call(srv, 'list_media', { folder, recursive })).folders[0]!;
const group = (f: Folder, reason: RegExp) => f.skipped.find((g) => reason.test(g.reason));

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  mkdirSync(outside, { recursive: true });
  srv = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

describe('links', () => {
  it('links to . and .. are followed once: each folder is walked once, each file listed and imported once', async () => {
    const loops = join(allowed, 'loops');
    mkdirSync(join(loops, 'sub'), { recursive: true });
    tone(join(loops, 'clip.wav'), 440);
    tone(join(loops, 'sub', 'deep.wav'), 880);
    for (const n of ['l1', 'l2', 'l3', 'l4']) symlinkSync('.', join(loops, n));
    symlinkSync('..', join(loops, 'sub', 'up'));
    const f = structured<Listing>(await call(srv, 'list_media', { folder: loops, recursive: true }, 60_000))
      .folders[0]!;
    expect(f.files.map((x) => x.path)).toEqual([join(loops, 'clip.wav'), join(loops, 'sub', 'deep.wav')]);
    expect(f.files_total).toBe(2);
    const again = group(f, /folder listed already/);
    expect(again?.count).toBe(5);
    expect(f.truncated).toBeUndefined();

    const project = await newProject(srv, 'loops');
    const r = structured<Imported>(
      await call(srv, 'import_media', { project_id: project, path: loops, recursive: true }),
    );
    expect(r.imported.map((x) => x.path)).toEqual([join(loops, 'clip.wav'), join(loops, 'sub', 'deep.wav')]);
    expect(new Set(r.imported.map((x) => x.asset_id)).size).toBe(2);
    expect(
      r.skipped
        .filter((s) => /listed already/.test(s.reason))
        .map((s) => s.path)
        .sort(),
    ).toEqual([...['l1', 'l2', 'l3', 'l4'].map((n) => join(loops, n)), join(loops, 'sub', 'up')].sort());
    const assets = structured<{ project: { assets_total: number } }>(
      await call(srv, 'get_project', { project_id: project }),
    ).project.assets_total;
    expect(assets).toBe(2);
  }, 180_000);

  it('a file with several names is listed once, by a name that is not a link; a broken link is named as one', async () => {
    const names = join(allowed, 'names');
    mkdirSync(join(names, 'media'), { recursive: true });
    tone(join(names, 'real.wav'), 500);
    tone(join(names, 'media', 'm.wav'), 600);
    symlinkSync('real.wav', join(names, 'alias.wav'));
    linkSync(join(names, 'real.wav'), join(names, 'z hard.wav'));
    symlinkSync('media', join(names, 'a view'));
    symlinkSync('nothing.wav', join(names, 'gone.wav'));
    const f = await listing(names);
    expect(f.files.map((x) => x.path)).toEqual([join(names, 'media', 'm.wav'), join(names, 'real.wav')]);
    expect(group(f, /another name/)?.paths.sort()).toEqual([join(names, 'alias.wav'), join(names, 'z hard.wav')]);
    expect(group(f, /folder listed already/)?.paths).toEqual([join(names, 'a view')]);
    expect(group(f, /a link to nothing/)?.paths).toEqual([join(names, 'gone.wav')]);
    expect(f.skipped.map((g) => g.reason)).not.toContain('a link leading outside the folders cutroom may read');
  });
});

describe('bounds, and what they leave out', () => {
  it('a folder more than 8 levels down is not walked, and is counted with its path and reason', async () => {
    const levels = Array.from({ length: 10 }, (_, i) => `d${i + 1}`);
    const bottom = join(allowed, 'depth', ...levels);
    mkdirSync(bottom, { recursive: true });
    tone(join(bottom, 'bottom.wav'), 700);
    tone(join(allowed, 'depth', 'top.wav'), 710);
    const f = await listing(join(allowed, 'depth'));
    expect(f.files.map((x) => x.path)).toEqual([join(allowed, 'depth', 'top.wav')]);
    const deep = group(f, /levels? down/);
    expect(deep).toMatchObject({ count: 1, paths: [join(allowed, 'depth', ...levels.slice(0, 9))] });
    // Listed from nearer, it is there.
    expect((await listing(join(allowed, 'depth', 'd1', 'd2'))).files.map((x) => x.path)).toEqual([
      join(bottom, 'bottom.wav'),
    ]);
    // Not recursive: the subfolder is counted, not walked.
    expect(group(await listing(join(allowed, 'depth'), false), /recursive/)).toMatchObject({
      count: 1,
      paths: [join(allowed, 'depth', 'd1')],
    });

    const project = await newProject(srv, 'depth');
    const r = structured<Imported>(
      await call(srv, 'import_media', { project_id: project, path: join(allowed, 'depth'), recursive: true }),
    );
    expect(r.imported.map((x) => x.path)).toEqual([join(allowed, 'depth', 'top.wav')]);
    expect(r.skipped).toEqual([
      { path: join(allowed, 'depth', ...levels.slice(0, 9)), reason: expect.stringMatching(/levels? down/) },
    ]);
  }, 60_000);

  it('a walk reads at most 20,000 entries: what it did not read is counted, never left out silently', async () => {
    const many = join(allowed, 'many');
    mkdirSync(join(many, 'zz later'), { recursive: true });
    for (let i = 0; i < 20_010; i++) writeFileSync(join(many, `n${String(i).padStart(5, '0')}.txt`), '');
    tone(join(many, 'zz last.wav'), 720);
    tone(join(many, 'zz later', 'in.wav'), 730);
    const f = await listing(many);
    expect(f.files).toEqual([]);
    expect(f.truncated).toEqual({ entries_not_read: 12, folders_not_read: 0 });
    expect(group(f, /not a media file/)?.count).toBe(20_000);
    expect(textOf(await call(srv, 'list_media', { folder: many, recursive: true }))).toMatch(/12 entries not read/);
    // The bound is the call's: a folder after it is not opened, and counted.
    mkdirSync(join(allowed, 'after many'), { recursive: true });
    tone(join(allowed, 'after many', 'after.wav'), 740);
    const project = await newProject(srv, 'many');
    const r = await call(srv, 'import_media', { project_id: project, paths: [many, join(allowed, 'after many')] });
    const out = structured<Imported & { truncated?: unknown }>(r);
    expect(out.truncated).toEqual({ entries_not_read: 12, folders_not_read: 1 });
    expect(out.imported).toEqual([]);
    expect(out.skipped.length + out.left_out!.skipped).toBe(20_000 + 2);
    expect(textOf(r)).toMatch(/12 entries not read and 1 folder not opened/);
  }, 120_000);
});

describe('importing a folder past 200 files', () => {
  it('next_cursor goes on where a call stopped; every file is taken once over the calls', async () => {
    const crowd = join(allowed, 'crowd');
    mkdirSync(crowd, { recursive: true });
    tone(join(root, 'crowd.wav'), 330);
    const names = Array.from({ length: 205 }, (_, i) => join(crowd, `take ${String(i).padStart(3, '0')}.wav`));
    for (const n of names) copyFileSync(join(root, 'crowd.wav'), n);
    const project = await newProject(srv, 'crowd');
    const first = await call(srv, 'import_media', { project_id: project, path: crowd });
    const a = structured<Imported>(first);
    expect(a.next_cursor).toEqual(expect.any(String));
    expect(a.imported.length + (a.left_out?.imported ?? 0)).toBe(200);
    // The 5 left for the next call are not "skipped": the text says there are 5 more and how to take them.
    expect(a.skipped).toEqual([]);
    expect(textOf(first)).toMatch(/^Imported 200 files[ .]/);
    expect(textOf(first)).not.toMatch(/skipped/);
    expect(textOf(first)).toContain(
      `5 more media files: call again with the same path, paths and recursive, and cursor: "${a.next_cursor}".`,
    );
    // Another call's cursor is refused.
    const wrong = await call(srv, 'import_media', {
      project_id: project,
      path: join(allowed, 'names'),
      cursor: a.next_cursor,
    });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(/cursor/);
    // The cursor names where the call stopped, not how far: a file gone before it shifts nothing, one added after it
    // comes.
    rmSync(names[10]!);
    copyFileSync(join(root, 'crowd.wav'), join(crowd, 'take 999.wav'));
    const b = structured<Imported>(
      await call(srv, 'import_media', { project_id: project, path: crowd, cursor: a.next_cursor }),
    );
    expect(b.next_cursor).toBeUndefined();
    expect(b.left_out).toBeUndefined();
    expect(b.imported.map((x) => x.path)).toEqual([...names.slice(200), join(crowd, 'take 999.wav')]);
    expect(b.skipped).toEqual([]);
  }, 180_000);
});

describe('names', () => {
  it('a name that is not UTF-8 is shown in a form that imports it; a name that looks like that form stays its own', async () => {
    const dir = join(allowed, 'latin1');
    mkdirSync(dir, { recursive: true });
    tone(Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.wav')]), 900);
    tone(join(dir, 'lit\\xE9.wav'), 910);
    const f = await listing(dir);
    const shown = f.files.map((x) => x.path);
    expect(shown).toHaveLength(2);
    for (const p of shown) expect(p).not.toContain('\uFFFD');
    const latin = shown.find((p) => p.includes('caf'))!;
    const literal = shown.find((p) => p.includes('lit'))!;
    expect(latin).not.toBe(literal);
    const project = await newProject(srv, 'names');
    for (const [p, raw] of [
      [latin, Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.wav')])],
      [literal, join(dir, 'lit\\xE9.wav')],
    ] as const) {
      const r = structured<Imported>(await call(srv, 'import_media', { project_id: project, path: p }));
      expect(readFileSync(fileURLToPath(r.asset!.url)).equals(readFileSync(raw)), p).toBe(true);
      expect(r.asset!.name).toBe(p.slice(dir.length + 1));
    }
    // The literal name, typed as it is, finds its file too.
    expect(
      structured<Imported & { already_imported?: boolean }>(
        await call(srv, 'import_media', { project_id: project, path: join(dir, 'lit\\xE9.wav') }),
      ).already_imported,
    ).toBe(true);
  }, 60_000);
});

describe('paths', () => {
  it('one bad entry in paths is skipped with its reason; the others are imported', async () => {
    tone(join(allowed, 'good.wav'), 950);
    mkdirSync(join(outside, 'folder'), { recursive: true });
    tone(join(outside, 'folder', 'secret.wav'), 960);
    const project = await newProject(srv, 'paths');
    const r = structured<Imported>(
      await call(srv, 'import_media', {
        project_id: project,
        paths: [join(outside, 'folder'), join(allowed, 'good.wav'), join(allowed, 'no such folder')],
      }),
    );
    expect(r.imported.map((x) => x.path)).toEqual([join(allowed, 'good.wav')]);
    expect(r.skipped).toEqual([
      { path: join(outside, 'folder'), reason: expect.stringMatching(/is outside the folders cutroom may read/) },
      { path: join(allowed, 'no such folder'), reason: expect.stringMatching(/^no file at/) },
    ]);
  }, 60_000);
});

describe('permission denied (a server without the power to override file modes)', () => {
  const locked = join(root, 'locked-allowed');
  let weak: Spawned;
  beforeAll(async () => {
    mkdirSync(join(locked, 'shut'), { recursive: true });
    tone(join(locked, 'shut', 'in.wav'), 970);
    tone(join(locked, 'secret.wav'), 980);
    tone(join(locked, 'open.wav'), 990);
    chmodSync(join(locked, 'shut'), 0o000);
    chmodSync(join(locked, 'secret.wav'), 0o000);
    // Root reads everything: run the server without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH.
    const drop = '-dac_override,-dac_read_search';
    weak = await spawnServer(
      {
        CUTROOM_DATA_DIR: join(root, 'data-weak'),
        CUTROOM_ALLOWED_DIRS: locked,
        CUTROOM_CACHE_DIR: join(root, 'cache-weak'),
      },
      { wrap: ['setpriv', `--inh-caps=${drop}`, `--bounding-set=${drop}`, '--'] },
    );
  }, 60_000);
  afterAll(async () => {
    await weak?.close();
    chmodSync(join(locked, 'shut'), 0o755);
  });

  it('says permission denied, not no file; an unreadable folder is counted, and the rest imported', async () => {
    const project = await newProject(weak, 'locked');
    for (const p of [join(locked, 'shut', 'in.wav'), join(locked, 'secret.wav')]) {
      const r = await call(weak, 'import_media', { project_id: project, path: p });
      expect(r.isError, p).toBe(true);
      expect(textOf(r), p).toMatch(/permission denied/);
      expect(textOf(r), p).not.toMatch(/no file/);
    }
    const l = structured<Listing>(await call(weak, 'list_media', { recursive: true })).folders[0]!;
    expect(group(l, /permission denied/)?.paths).toEqual([join(locked, 'shut')]);
    const r = structured<Imported>(
      await call(weak, 'import_media', { project_id: project, path: locked, recursive: true }),
    );
    expect(r.imported.map((x) => x.path)).toEqual([join(locked, 'open.wav')]);
    expect(r.skipped).toEqual([
      { path: join(locked, 'secret.wav'), reason: expect.stringMatching(/permission denied/) },
      { path: join(locked, 'shut'), reason: expect.stringMatching(/permission denied/) },
    ]);
  }, 60_000);
});
