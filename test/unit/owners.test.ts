// Writers judged across pid namespaces: a tag from our pid space is judged by its pid, one from another space (a
// replica in another container, another host) only by its lease. Through the real users of the rule: the data
// dir's lock, the sweep of the data dir, the preview cache's evictions.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withLock } from '../../src/backend/local/store.js';
import { sweepLeftovers } from '../../src/backend/local/sweep.js';
import { MARKER, PreviewCache } from '../../src/media/cache.js';
import { LEASE_STALE_MS, parseTag, pidSpace, writerGone, writerTag } from '../../src/owners.js';

/** A pid that ran and is gone in this namespace. */
const deadPid = (() => {
  const r = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
})();
/** A pid space that is not ours (another container's). */
const otherSpace = pidSpace() === 'deadbeef' ? 'feedface' : 'deadbeef';
const ago = (path: string, ms: number) => {
  const t = new Date(Date.now() - ms);
  utimesSync(path, t, t);
};

describe('writer tags', () => {
  it('name the pid and the pid space, and read back (a bare pid too)', () => {
    expect(writerTag()).toBe(`${process.pid}@${pidSpace()}`);
    expect(pidSpace()).toMatch(/^[0-9a-f]{8}$/);
    expect(parseTag(writerTag())).toEqual({ pid: process.pid, space: pidSpace() });
    expect(parseTag('123')).toEqual({ pid: 123 });
    expect(parseTag('12@nothex!')).toBeUndefined();
  });

  it('judge our space by pid, another by lease', () => {
    const now = Date.now();
    expect(writerGone(`${deadPid}@${pidSpace()}`, now)).toBe(true);
    expect(writerGone(String(deadPid), now)).toBe(true);
    expect(writerGone(writerTag(), now - 10 * LEASE_STALE_MS)).toBe(false);
    // The same dead-here pid in another space: alive while its lease is fresh.
    expect(writerGone(`${deadPid}@${otherSpace}`, now - 1000)).toBe(false);
    expect(writerGone(`${deadPid}@${otherSpace}`, now - LEASE_STALE_MS - 1000)).toBe(true);
    // A live pid of ours whose leased marker went stale: a reused pid or a frozen writer.
    expect(writerGone(`1@${pidSpace()}`, now - LEASE_STALE_MS - 1000, { leased: true })).toBe(true);
    expect(writerGone(`1@${pidSpace()}`, now - LEASE_STALE_MS - 1000)).toBe(false);
    expect(writerGone(undefined, now)).toBe(false);
  });
});

describe("the data dir's lock", () => {
  const lockedBy = (dataDir: string, owner: string, ageMs: number) => {
    const lock = join(dataDir, '.lock');
    mkdirSync(lock, { recursive: true });
    writeFileSync(join(lock, 'owner'), owner);
    ago(lock, ageMs);
    return lock;
  };

  it('is not broken while another container holds it with a fresh lease, though its pid is dead here', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cutroom-lock-'));
    const lock = lockedBy(dataDir, `${deadPid}@${otherSpace}`, 0);
    let ran = false;
    const taking = withLock(dataDir, async () => {
      ran = true;
    });
    await new Promise((r) => setTimeout(r, 600));
    expect(ran).toBe(false);
    // The other writer lets go: the lock is taken at once.
    spawnSync('rm', ['-rf', lock]);
    await taking;
    expect(ran).toBe(true);
  });

  it('is broken when its lease is stale (a replica that died), and at once when its owner is a dead pid of ours', async () => {
    for (const [owner, age] of [
      [`${deadPid}@${otherSpace}`, 11_000],
      [`${deadPid}@${pidSpace()}`, 0],
      [String(deadPid), 0],
    ] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), 'cutroom-lock-'));
      lockedBy(dataDir, owner, age);
      const started = Date.now();
      expect(await withLock(dataDir, async () => 'taken')).toBe('taken');
      expect(Date.now() - started).toBeLessThan(2000);
    }
  });
});

describe('the sweep of the data dir', () => {
  it("keeps another container's fresh temporary files and removes dead writers'", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cutroom-sweep-'));
    const staging = join(dataDir, 'staging');
    mkdirSync(staging, { recursive: true });
    const files = {
      otherFresh: join(staging, `${deadPid}@${otherSpace}-0f0e0d0c-aaaa-bbbb-cccc-000000000001.part`),
      otherStale: join(staging, `${deadPid}@${otherSpace}-0f0e0d0c-aaaa-bbbb-cccc-000000000002.part`),
      oursDead: join(staging, `${deadPid}@${pidSpace()}-0f0e0d0c-aaaa-bbbb-cccc-000000000003.part`),
      oursLive: join(staging, `${writerTag()}-0f0e0d0c-aaaa-bbbb-cccc-000000000004.part`),
      bareDead: join(dataDir, `index.json.${deadPid}.0a0b0c0d.tmp`),
    };
    for (const f of Object.values(files)) writeFileSync(f, 'x');
    ago(files.otherStale, LEASE_STALE_MS + 5000);
    await sweepLeftovers(dataDir);
    expect(Object.fromEntries(Object.entries(files).map(([k, f]) => [k, existsSync(f)]))).toEqual({
      otherFresh: true,
      otherStale: false,
      oursDead: false,
      oursLive: true,
      bareDead: false,
    });
  });
});

describe("the preview cache's evictions", () => {
  it('never take a preview another container is making while its lease is fresh; take it once it is stale', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-previews-'));
    const cache = new PreviewCache({ dir, keep: 1, maxBytes: 1 << 30 });
    const making = join(cache.root, '20261124000000-0a0b0c0d');
    mkdirSync(making, { recursive: true });
    writeFileSync(join(making, MARKER), `${deadPid}@${otherSpace}\n`);
    const mine = await cache.create();
    await cache.complete(mine.id, '{}');
    expect(existsSync(making)).toBe(true);
    expect(await cache.inProgress('20261124000000-0a0b0c0d')).toBe(true);
    ago(join(making, MARKER), LEASE_STALE_MS + 5000);
    expect(await cache.evict()).toContain('20261124000000-0a0b0c0d');
    expect(existsSync(making)).toBe(false);
  });
});
