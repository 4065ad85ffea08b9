// A full disk under the data dir, for real: a small tmpfs mounted as the data dir (needs root; skipped, saying
// why, where mounting is refused).
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMedium } from '../fixtures/media.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-full-'));
const dataDir = join(root, 'data');
const allowed = join(root, 'allowed');
mkdirSync(dataDir, { recursive: true });
mkdirSync(allowed, { recursive: true });
const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dataDir], { encoding: 'utf8' });
const mounted = mount.status === 0;
if (!mounted)
  console.warn(
    `skipping the full-disk tests: mounting a tmpfs as the data dir was refused (${(mount.stderr || mount.error?.message || '').trim()}); they need root`,
  );

const env = () => ({
  CUTROOM_DATA_DIR: dataDir,
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
});
const call = (s: Spawned, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }, { timeout: 60_000 });
const fullMessage = `the disk holding the data dir ${dataDir} is full; nothing was changed: free some space there (or move CUTROOM_DATA_DIR) and try again`;

/** Every file under dir whose name says it is partial. */
function partials(dir: string): string[] {
  const found: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (/\.(part|tmp)$|^\.new-|^\.lock-/.test(e.name)) found.push(join(e.parentPath, e.name));
  }
  return found;
}

let srv: Spawned;
beforeAll(async () => {
  if (mounted) srv = await spawnServer(env());
}, 30_000);
afterAll(async () => {
  await srv?.close();
  if (mounted) spawnSync('umount', ['-l', dataDir]);
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!mounted)('a full disk under the data dir', () => {
  let project: string;
  const filler = join(dataDir, 'filler');

  it('an import larger than the space left is refused by name, leaving no partial file and no asset', async () => {
    project = (
      (await call(srv, 'create_project', { name: 'on a small disk', description: '' })).structuredContent as {
        project: { id: string };
      }
    ).project.id;
    // Real media (13 MB of PCM), so that no version refuses it for its content before copying it.
    const big = join(allowed, 'big.wav');
    const made = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000:duration=70',
      '-ac',
      '2',
      big,
    ]);
    expect(made.status).toBe(0);
    const r = await call(srv, 'import_media', { project_id: project, path: big });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(fullMessage);
    expect(partials(dataDir)).toEqual([]);
    expect(readdirSync(join(dataDir, 'projects', project, 'assets'))).toEqual([]);
    const g = await call(srv, 'get_project', { project_id: project });
    expect((g.structuredContent as { project: { assets_total: number } }).project.assets_total).toBe(0);
    // A small file still fits.
    copyFileSync(makeMedium('voice'), join(allowed, 'voice.m4a'));
    const small = await call(srv, 'import_media', { project_id: project, path: join(allowed, 'voice.m4a') });
    expect(small.isError, textOf(small)).toBeFalsy();
  });

  it('create_project and import_media on a disk with no space at all say so; listing still works; freeing space is enough', async () => {
    const fd = openSync(filler, 'w');
    const chunk = Buffer.alloc(64 * 1024, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      closeSync(fd);
    }
    const c = await call(srv, 'create_project', { name: 'no room', description: '' });
    expect(c.isError).toBe(true);
    expect(textOf(c)).toBe(fullMessage);
    // again: a copy (the project holds this content already, which would be found without writing anything).
    const i = await call(srv, 'import_media', { project_id: project, path: join(allowed, 'voice.m4a'), again: true });
    expect(textOf(i)).toBe(fullMessage);
    expect(partials(dataDir)).toEqual([]);
    for (const s of [srv, await spawnServer(env())]) {
      const l = await call(s, 'list_projects', {});
      expect(l.isError, textOf(l)).toBeFalsy();
      expect(
        (l.structuredContent as { projects: { id: string; name: string; asset_count: number }[] }).projects,
      ).toEqual([expect.objectContaining({ id: project, asset_count: 1 })]);
      if (s !== srv) await s.close();
    }
    rmSync(filler);
    const again = await call(srv, 'create_project', { name: 'room again', description: '' });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(existsSync(join(dataDir, 'projects'))).toBe(true);
  });
});
