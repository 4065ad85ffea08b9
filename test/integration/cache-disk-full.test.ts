// A full disk under the cache dir, for real (issue 22, item 5): a small tmpfs mounted as CUTROOM_CACHE_DIR and filled
// up (needs root; skipped, saying why, where mounting is refused). inspect_asset names the full disk and keeps
// nothing; with room again it works.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMedium } from '../fixtures/media.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-cachefull-'));
const cacheDir = join(root, 'cache');
const allowed = join(root, 'allowed');
mkdirSync(cacheDir, { recursive: true });
mkdirSync(allowed, { recursive: true });
const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', cacheDir], { encoding: 'utf8' });
const mounted = mount.status === 0;
if (!mounted)
  console.warn(
    `skipping the full cache disk test: mounting a tmpfs as the cache dir was refused (${(mount.stderr || mount.error?.message || '').trim()}); it needs root`,
  );

let srv: Spawned;
afterAll(async () => {
  await srv?.close();
  if (mounted) spawnSync('umount', ['-l', cacheDir]);
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!mounted)('a full disk under the cache dir', () => {
  let projectId: string;
  let assetId: string;
  beforeAll(async () => {
    srv = await spawnServer({
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_ALLOWED_DIRS: allowed,
      CUTROOM_CACHE_DIR: cacheDir,
    });
    const file = makeMedium('red', undefined, allowed) as string;
    projectId = (
      (await srv.client.callTool({ name: 'create_project', arguments: { name: 'full', description: '' } }))
        .structuredContent as { project: { id: string } }
    ).project.id;
    assetId = (
      (await srv.client.callTool({ name: 'import_media', arguments: { project_id: projectId, path: file } }))
        .structuredContent as { asset: { id: string } }
    ).asset.id;
  }, 60_000);

  it('inspect_asset says the cache disk is full, not "unexpected failure", and works again once there is room', async () => {
    const filler = join(cacheDir, 'filler.bin');
    // Fill it to the last block: the inspection's thumbnails and record find no room.
    spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { encoding: 'utf8' });
    const r = await srv.client.callTool(
      { name: 'inspect_asset', arguments: { project_id: projectId, asset_id: assetId } },
      { timeout: 60_000 },
    );
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(
      new RegExp(
        `^the (inspection|sheet) failed: the disk holding the cache dir \\(CUTROOM_CACHE_DIR=${cacheDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\) is full; nothing was kept`,
      ),
    );
    expect(textOf(r)).not.toMatch(/unexpected failure/);
    rmSync(filler);
    const again = await srv.client.callTool(
      { name: 'inspect_asset', arguments: { project_id: projectId, asset_id: assetId } },
      { timeout: 60_000 },
    );
    expect(again.isError, textOf(again)).toBeFalsy();
  }, 120_000);
});
