// What a server takes from Redis to make a cut's clip (jobs/queue-clips.ts) and what a worker takes from a clip
// request (jobs/worker-clips.ts): only a segment's key, looked for in the server's own segment store, and only a
// request of the right shape. Redis is stood in for by the two calls the code makes.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { QueueClips } from '../../src/jobs/queue-clips.js';
import { clipAskOf } from '../../src/jobs/worker-clips.js';
import { PreviewCache } from '../../src/media/cache.js';
import { SegmentStore } from '../../src/media/segments.js';
import type { MediaRuntime } from '../../src/workflow/preview.js';

const ID = '20261126234230-ea65aeb1';
const KEY = 'a'.repeat(40);

function setup(progress: unknown, making: string | null = 'preview-1') {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-qclips-'));
  const cache = new PreviewCache({ dir, keep: 10, maxBytes: 1e9 });
  mkdirSync(join(cache.root, ID), { recursive: true });
  const rt = { ffmpeg: 'ffmpeg', cache, segments: new SegmentStore(join(dir, 'segments'), 1e9) } as unknown as MediaRuntime;
  const conn = { get: async () => making } as unknown as Redis;
  const queue = { getJob: async () => ({ progress }) } as unknown as Queue;
  return { dir, rt, clips: new QueueClips(conn, queue) };
}
const progress = (segments: unknown, ready = [0, 1]) => ({ id: ID, fraction: 0.5, message: '', cuts: 3, ready, segments });

describe("a cut's clip from a worker's progress", () => {
  it('is nothing to make when no worker makes the preview, another preview is named, or the cut is not ready', async () => {
    const none = setup(progress([{ cut: 1, key: KEY, seconds: 1 }]), null);
    expect(await none.clips.clip(none.rt, 'place', ID, 1)).toBeUndefined();
    const { rt, clips } = setup({ ...progress([{ cut: 1, key: KEY, seconds: 1 }]), id: '20261126234230-00000000' });
    expect(await clips.clip(rt, 'place', ID, 1)).toBeUndefined();
    const notReady = setup(progress([{ cut: 1, key: KEY, seconds: 1 }]));
    expect(await notReady.clips.clip(notReady.rt, 'place', ID, 2)).toBeUndefined();
    expect(await notReady.clips.clip(notReady.rt, 'place', '../x', 1)).toBeUndefined();
  });

  it('takes a segment only by its key: a path, or a key of another shape, from Redis is refused', async () => {
    for (const key of ['../../../../etc/passwd', `/${KEY}`, `${KEY}/..`, KEY.toUpperCase(), 'a'.repeat(41)]) {
      const { rt, clips } = setup(progress([{ cut: 1, key, seconds: 1 }]));
      await expect(clips.clip(rt, 'place', ID, 1)).rejects.toThrow(/cut 2's segment is not named by the worker/);
    }
    for (const seconds of [0, -1, Number.NaN, 1e9, '1']) {
      const { rt, clips } = setup(progress([{ cut: 1, key: KEY, seconds }]));
      await expect(clips.clip(rt, 'place', ID, 1)).rejects.toThrow(/segment is not named/);
    }
  });

  it('says so when the segment is not in this cache dir (a worker with another dir), and serves a clip made already', async () => {
    const { dir, rt, clips } = setup(progress([{ cut: 1, key: KEY, seconds: 1 }]));
    await expect(clips.clip(rt, 'place', ID, 1)).rejects.toThrow(/is not in this server's cache dir .*share CUTROOM_CACHE_DIR/);
    // A clip already made (by the worker, or another replica) is served as it is.
    const made = join(dir, 'previews', ID, 'cut-1.mp4');
    writeFileSync(made, 'made');
    expect(await clips.clip(rt, 'place', ID, 1)).toBe(made);
  });
});

describe('a request for a clip, as a worker reads it', () => {
  it('is taken only in its shape', () => {
    const ok = { job: 'preview-1', preview: ID, cut: 2, ask: 'ab'.repeat(12) };
    expect(clipAskOf(JSON.stringify(ok))).toEqual(ok);
    for (const bad of ['not json', '[]', JSON.stringify({ ...ok, cut: -1 }), JSON.stringify({ ...ok, cut: 1.5 }), JSON.stringify({ ...ok, ask: 'x' }), JSON.stringify({ ...ok, job: 7 })]) expect(clipAskOf(bad)).toBeUndefined();
  });
});
