// The inspection cache on disk: bounded, oldest first, thumbnails with their record.
import { existsSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InspectionCache } from '../../src/media/inspect-cache.js';

describe('InspectionCache on disk', () => {
  it('keeps the newest inspections within its bound, removing the thumbnails of those it drops', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-inspections-'));
    const cache = new InspectionCache<{ n: number }>(dir, 1, 2);
    const thumbs: string[] = [];
    for (const [i, key] of ['a', 'b', 'c'].entries()) {
      const path = await cache.thumbsPathOf(key);
      writeFileSync(path, 'jpeg');
      thumbs.push(path);
      await cache.set(key, { n: i });
      // Distinct times, oldest first: a, b, c.
      const t = new Date(Date.now() - (3 - i) * 60_000);
      utimesSync(path.replace('.keyframes.mjpeg', '.json'), t, t);
    }
    // The third set trimmed already: the oldest went, record and thumbnails.
    expect(existsSync(thumbs[0]!)).toBe(false);
    expect(await cache.trim()).toBe(0);
    expect(existsSync(thumbs[1]!) && existsSync(thumbs[2]!)).toBe(true);
    expect(readdirSync(cache.root).filter((n) => n.endsWith('.json'))).toHaveLength(2);
    // A fresh cache (nothing in memory) finds the kept ones, not the dropped one.
    const again = new InspectionCache<{ n: number }>(dir, 1, 2);
    expect(await again.get('c')).toEqual({ n: 2 });
    expect(await again.get('a')).toBeUndefined();
  });

  it('keeps within a bound of bytes too, a record and its sound together, the newest always', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-listening-'));
    const cache = new InspectionCache<{ n: number }>(dir, 1, 100, 'listening', undefined, 2500);
    const sounds: string[] = [];
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) {
      const path = await cache.soundPathOf(key);
      writeFileSync(path, Buffer.alloc(key === 'd' ? 4000 : 1000));
      sounds.push(path);
      await cache.set(key, { n: i });
      const t = new Date(Date.now() - (4 - i) * 60_000);
      utimesSync(path.replace('.sound.pcm', '.json'), t, t);
    }
    // After c: a, b and c hold about 3000 bytes, so a went. After d (4000 bytes alone, over the bound): only d stays.
    expect(sounds.map((p) => existsSync(p))).toEqual([false, false, false, true]);
    expect(await cache.get('d')).toEqual({ n: 3 });
    expect(await new InspectionCache<{ n: number }>(dir, 1, 100, 'listening').get('c')).toBeUndefined();
  });
});
