// Starting from a folder (issue 20, item 5) and the workflow prompts (item 4), through the built server over stdio:
// list_media shows what the allowed folders hold, import_media takes a folder or a list and says per file what it
// did; the prompts are listed with their arguments, name their tools, and complete project ids.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-folders-'));
const allowed = join(root, 'allowed');
const trip = join(allowed, 'trip');
const outside = join(root, 'outside');
let server: Spawned;
let projectId: string;

const ffmpeg = (args: string[]) => {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args]);
  if (r.status !== 0) throw new Error(r.stderr.toString());
};
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};
const call = (name: string, args: Record<string, unknown>, onprogress?: (p: { progress: number }) => void) =>
  server.client.callTool({ name, arguments: args }, { timeout: 120_000, ...(onprogress ? { onprogress } : {}) });

beforeAll(async () => {
  mkdirSync(join(trip, 'day2'), { recursive: true });
  mkdirSync(outside, { recursive: true });
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=320x180:d=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    join(trip, 'a beach.mp4'),
  ]);
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=s=320x180:d=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    join(trip, 'b harbour.mov'),
  ]);
  ffmpeg(['-f', 'lavfi', '-i', 'sine=d=1', join(trip, 'c waves.wav')]);
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=320x180:d=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    join(trip, 'day2', 'd hills.mp4'),
  ]);
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=320x180:d=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    join(outside, 'secret.mp4'),
  ]);
  writeFileSync(join(trip, 'notes.txt'), 'shot list');
  writeFileSync(join(trip, 'e broken.mp4'), 'not a video at all');
  writeFileSync(join(trip, '.hidden.mp4'), 'hidden');
  symlinkSync(join(outside, 'secret.mp4'), join(trip, 'f link.mp4'));
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'trip', description: 'a folder of clips' }),
  ).project.id;
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe('starting from a folder', () => {
  it('list_media shows the media files by name, without importing; links leading out are not listed', async () => {
    const r = structured<{
      folders: { folder: string; files: { path: string; kind: string; size_bytes: number }[]; truncated: boolean }[];
    }>(await call('list_media', { folder: 'trip' }));
    expect(r.folders).toHaveLength(1);
    expect(r.folders[0]!.files.map((f) => [f.path.slice(trip.length + 1), f.kind])).toEqual([
      ['a beach.mp4', 'video'],
      ['b harbour.mov', 'video'],
      ['c waves.wav', 'audio'],
      ['e broken.mp4', 'video'],
    ]);
    const deep = structured<{ folders: { files: { path: string }[] }[] }>(
      await call('list_media', { folder: 'trip', recursive: true }),
    );
    expect(deep.folders[0]!.files.map((f) => f.path)).toContain(join(trip, 'day2', 'd hills.mp4'));
    const every = structured<{ folders: { folder: string }[] }>(await call('list_media', {}));
    expect(every.folders.map((f) => f.folder)).toEqual([allowed]);
    // Nothing was imported.
    expect(
      structured<{ project: { assets: unknown[] } }>(await call('get_project', { project_id: projectId })).project
        .assets,
    ).toEqual([]);
    const out = await call('list_media', { folder: outside });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/is outside the folders cutroom may read/);
  });

  it('import_media takes a folder: every media file in it, per file what was imported and what was skipped and why, with progress', async () => {
    const progress: number[] = [];
    const r = structured<{
      imported: { path: string; asset_id: string; kind: string }[];
      skipped: { path: string; reason: string }[];
      asset?: unknown;
    }>(await call('import_media', { project_id: projectId, path: trip }, (p) => progress.push(p.progress)));
    expect(r.asset).toBeUndefined();
    expect(r.imported.map((f) => [f.path.slice(trip.length + 1), f.kind])).toEqual([
      ['a beach.mp4', 'video'],
      ['b harbour.mov', 'video'],
      ['c waves.wav', 'audio'],
    ]);
    const why = Object.fromEntries(r.skipped.map((s) => [s.path.slice(trip.length + 1), s.reason]));
    expect(why['notes.txt']).toBe('not a media file by its name');
    expect(why['e broken.mp4']).toMatch(/is not media cutroom can use/);
    expect(why['f link.mp4']).toBe('a link leading outside the folders cutroom may read');
    expect(Object.keys(why)).not.toContain('.hidden.mp4');
    expect(progress.length).toBeGreaterThanOrEqual(4);
    const assets = structured<{ project: { assets: { id: string }[] } }>(
      await call('get_project', { project_id: projectId }),
    ).project.assets;
    expect(assets.map((a) => a.id).sort()).toEqual(r.imported.map((f) => f.asset_id).sort());
  }, 120_000);

  it('import_media takes a list of paths, and a folder recursively', async () => {
    const list = structured<{ imported: { path: string }[]; skipped: { path: string; reason: string }[] }>(
      await call('import_media', {
        project_id: projectId,
        paths: [join(trip, 'day2', 'd hills.mp4'), join(trip, 'nope.mp4'), join(outside, 'secret.mp4')],
      }),
    );
    expect(list.imported.map((f) => f.path)).toEqual([join(trip, 'day2', 'd hills.mp4')]);
    expect(list.skipped.map((s) => s.reason)).toEqual([
      expect.stringMatching(/^no file at/),
      expect.stringMatching(/is outside the folders cutroom may read/),
    ]);
    const deep = structured<{ imported: { path: string }[] }>(
      await call('import_media', { project_id: projectId, path: 'trip/day2', recursive: true }),
    );
    expect(deep.imported.map((f) => f.path)).toEqual([join(trip, 'day2', 'd hills.mp4')]);
  }, 120_000);

  it('one file given alone answers as before: its asset, or the error', async () => {
    const one = structured<{ asset: { id: string }; kind: string; imported: unknown[] }>(
      await call('import_media', { project_id: projectId, path: join(trip, 'c waves.wav') }),
    );
    expect(one.kind).toBe('audio');
    expect(one.imported).toHaveLength(1);
    const bad = await call('import_media', { project_id: projectId, path: join(trip, 'notes.txt') });
    expect(bad.isError).toBe(true);
    const none = await call('import_media', { project_id: projectId });
    expect(textOf(none)).toMatch(/nothing to import/);
  }, 60_000);
});

describe('prompts', () => {
  it('offers at least four workflows with arguments, each naming the tools it uses', async () => {
    const { prompts } = await server.client.listPrompts();
    expect(prompts.length).toBeGreaterThanOrEqual(4);
    const tools = (await server.client.listTools()).tools.map((t) => t.name);
    for (const p of prompts) {
      expect(p.description, p.name).toMatch(/Uses /);
      expect(p.arguments?.find((a) => a.name === 'project_id')?.required, p.name).toBe(true);
      const named = [...p.description!.matchAll(/\b([a-z]+_[a-z_]+)\b/g)]
        .map((m) => m[1]!)
        .filter((n) => n !== 'project_id');
      expect(named.length, p.name).toBeGreaterThan(2);
      for (const n of named) expect(tools, `${p.name} names ${n}`).toContain(n);
    }
    const got = await server.client.getPrompt({
      name: 'rough_cut_from_folder',
      arguments: { project_id: projectId, folder: trip, brief: 'the sea' },
    });
    const text = (got.messages[0]!.content as { text: string }).text;
    expect(text).toContain(`list_media {folder: "${trip}"}`);
    expect(text).toContain(`import_media {project_id: "${projectId}", path: "${trip}"}`);
    expect(text).toContain('The brief: the sea.');
  });

  it('refuses wrong-typed arguments and a project id that is not one with -32602 in one line, and quotes what it writes into tool calls (issue 31, item 8)', async () => {
    const wrong = await server.client
      .getPrompt({ name: 'rough_cut_from_folder', arguments: { project_id: 5 as unknown as string, folder: trip } })
      .then(
        () => undefined,
        (e: { code?: number; message: string }) => e,
      );
    expect(wrong?.code).toBe(-32602);
    expect(wrong?.message).toMatch(/arguments\.project_id: expected string, received number/);
    expect(wrong?.message).not.toMatch(/\n|"code":/);
    const notId = await server.client.getPrompt({ name: 'review_preview', arguments: { project_id: 'lake' } }).then(
      () => undefined,
      (e: { code?: number; message: string }) => e,
    );
    expect(notId?.code).toBe(-32602);
    expect(notId?.message).toMatch(/project_id "lake" is not a UUID/);
    // A quote in a folder name stays inside the folder's string: it cannot add an argument to the call shown.
    const folder = `${trip}", recursive: true, path: "/etc`;
    const got = await server.client.getPrompt({
      name: 'rough_cut_from_folder',
      arguments: { project_id: projectId, folder },
    });
    const text = (got.messages[0]!.content as { text: string }).text;
    expect(text).toContain(`list_media {folder: ${JSON.stringify(folder)}}`);
    expect(text).not.toContain('path: "/etc"');
  });

  it("completes project ids in the prompts' arguments", async () => {
    const r = await server.client.complete({
      ref: { type: 'ref/prompt', name: 'review_preview' },
      argument: { name: 'project_id', value: projectId.slice(0, 5) },
    });
    expect(r.completion.values).toEqual([projectId]);
  });
});
