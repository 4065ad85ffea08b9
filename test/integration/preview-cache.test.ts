// The preview cache under pressure, through built servers: many previews at once from two servers sharing one
// cache dir with a small CUTROOM_PREVIEW_KEEP, and a cache dir on a full disk.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';
import { patternSource } from '../helpers/pattern-source.js';

let service: FakeService;
let projectId: string;
let ids: Record<MediaName, string>;
let patternId: string;

beforeAll(async () => {
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
  service.media.set('pattern', patternSource(130));
  patternId = service.addAsset(projectId, { keyname: 'pattern', asset_type: 'generated_video', ext: 'mp4' }).id;
});
afterAll(async () => {
  await service?.stop();
});

type Result = {
  isError?: boolean;
  structuredContent?: { preview_id: string; status: string; path: string; sheet_path: string };
};

describe('concurrent previews on one cache dir', () => {
  const keep = 3;
  let cacheDir: string;
  let servers: Spawned[] = [];
  beforeAll(async () => {
    cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const env = {
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: cacheDir,
      CUTROOM_PREVIEW_KEEP: String(keep),
    };
    servers = await Promise.all([spawnServer(env), spawnServer(env)]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('never removes a preview in progress, of either server, and sweeps those whose process is gone', async () => {
    const root = join(cacheDir, 'previews');
    // Planted, older than anything the servers make: one in progress by a live process (this one), one whose
    // process is gone (a killed server's leftover), one finished.
    const plant = (id: string, owner?: number) => {
      mkdirSync(join(root, id), { recursive: true });
      writeFileSync(join(root, id, 'preview.mp4'), 'partial');
      if (owner !== undefined) writeFileSync(join(root, id, '.rendering'), `${owner}\n`);
    };
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    plant('20000101000000-aaaaaaaa', process.pid);
    plant('20000101000000-bbbbbbbb', deadPid);
    plant('20000101000000-cccccccc');
    // A live writer keeps its lease (the marker's mtime) fresh; one left untouched past a minute is taken for hung.
    const lease = setInterval(() => {
      const now = new Date();
      utimesSync(join(root, '20000101000000-aaaaaaaa', '.rendering'), now, now);
    }, 5_000);
    onTestFinished(() => clearInterval(lease));

    // 24 different edits at once, 12 to each server; each path must exist when its result arrives.
    const small = (i: number) => ({
      project_id: projectId,
      width: 64,
      clips: [{ asset_id: ids.blue, start: 0, end: 0.4 + i * 0.04 }],
    });
    const outcomes = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const client = servers[i % 2]!.client;
        let r = (await client.callTool({ name: 'preview_edit', arguments: small(i) }, { timeout: 300_000 })) as Result;
        // On a loaded machine a preview may outlast the render wait and be handed over: follow it as a client would.
        while (!r.isError && r.structuredContent?.status === 'rendering') {
          await new Promise((done) => setTimeout(done, 500));
          r = (await client.callTool(
            { name: 'preview_edit', arguments: { preview_id: r.structuredContent.preview_id } },
            { timeout: 300_000 },
          )) as Result;
        }
        const p = r.structuredContent;
        return {
          error: r.isError ? textOf(r) : undefined,
          existed: !!p && existsSync(p.path) && existsSync(p.sheet_path),
          id: p?.preview_id,
        };
      }),
    );
    expect(outcomes.filter((o) => o.error).map((o) => o.error)).toEqual([]);
    expect(outcomes.filter((o) => !o.existed).map((o) => o.id)).toEqual([]);

    expect(existsSync(join(root, '20000101000000-aaaaaaaa', 'preview.mp4')), 'in progress by a live process').toBe(
      true,
    );
    expect(existsSync(join(root, '20000101000000-bbbbbbbb')), 'in progress by a dead process').toBe(false);
    expect(existsSync(join(root, '20000101000000-cccccccc')), 'finished, old').toBe(false);
    // Once all have finished, one more preview leaves exactly `keep` finished ones (plus the one in progress).
    const last = (await servers[0]!.client.callTool({ name: 'preview_edit', arguments: small(24) })) as Result;
    expect(last.isError, textOf(last)).toBeFalsy();
    // (Each is held for a few seconds after it is returned, then counted like the others.)
    const finished = () =>
      readdirSync(root).filter((n) => n !== '20000101000000-aaaaaaaa' && !existsSync(join(root, n, '.rendering')));
    await expect
      .poll(() => ({ all: readdirSync(root).length, finished: finished().length }), { timeout: 30_000, interval: 500 })
      .toEqual({ all: keep + 1, finished: keep });
    const left = finished();
    expect(left).toHaveLength(keep);
    expect(left).toContain(last.structuredContent!.preview_id);
    for (const id of left)
      expect(readdirSync(join(root, id)).sort()).toEqual([
        'cut-0.mp4',
        'edit.key',
        'levels.json',
        'preview.json',
        'preview.mp4',
        'sheet.jpg',
      ]);
  }, 300_000);
});

describe('a full disk under the cache dir', () => {
  const mnt = mkdtempSync(join(tmpdir(), 'cutroom-full-'));
  let mounted = false;
  let refusal = '';
  let srv: Spawned | undefined;
  beforeAll(async () => {
    // 64 KiB: less than a second of the preview below.
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt], { encoding: 'utf8' });
    mounted = r.status === 0;
    refusal = (r.stderr || r.error?.message || '').trim();
    if (mounted)
      srv = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_CACHE_DIR: mnt });
  });
  afterAll(async () => {
    await srv?.close();
    if (mounted) spawnSync('umount', [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  });

  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
  // A moving picture: far more than 64 KiB of preview.
  const edit = () => ({
    project_id: projectId,
    width: 640,
    resolution: '640x360',
    clips: [{ asset_id: patternId, start: 0, end: 20 }],
  });

  it('says the disk holding the cache dir is full, and keeps nothing', async (ctx) => {
    if (!mounted)
      ctx.skip(`mounting a small tmpfs was refused (${refusal}); run the tests as root to exercise a full disk`);
    const r = await srv!.client.callTool({ name: 'preview_edit', arguments: edit() });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      `the preview failed: the disk holding the cache dir (CUTROOM_CACHE_DIR=${mnt}) is full; nothing was kept. ` +
        'Free space on it (older previews can go: lower CUTROOM_PREVIEW_KEEP or CUTROOM_PREVIEW_MAX_MB) or point CUTROOM_CACHE_DIR at a disk with room, then call preview_edit again',
    );
    expect(files(mnt)).toEqual([]);

    // Full before it starts: the same message.
    try {
      writeFileSync(join(mnt, 'filler'), Buffer.alloc(1024 * 1024));
    } catch {
      // filled to the last byte
    }
    const again = await srv!.client.callTool({ name: 'preview_edit', arguments: edit() });
    expect(textOf(again)).toMatch(/the disk holding the cache dir .* is full; nothing was kept/);
    expect(files(mnt)).toEqual([join(mnt, 'filler')]);
    rmSync(join(mnt, 'filler'));
    expect((await srv!.client.callTool({ name: 'list_projects', arguments: {} })).isError).toBeFalsy();
  }, 120_000);
});
