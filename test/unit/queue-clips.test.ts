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
import type { MediaRuntime } from '../../src/workflow/media-runtime.js';

const ID = '20261126234230-ea65aeb1';
const KEY = 'a'.repeat(40);

function setup(progress: unknown, making: string | null = 'preview-1') {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-qclips-'));
  const cache = new PreviewCache({ dir, keep: 10, maxBytes: 1e9 });
  mkdirSync(join(cache.root, ID), { recursive: true });
  const rt = {
    ffmpeg: 'ffmpeg',
    cache,
    segments: new SegmentStore(join(dir, 'segments'), 1e9),
  } as unknown as MediaRuntime;
  const conn = { get: async () => making } as unknown as Redis;
  const queue = { getJob: async () => ({ progress }) } as unknown as Queue;
  return { dir, rt, clips: new QueueClips(conn, queue) };
}
const progress = (segments: unknown, ready = [0, 1]) => ({
  id: ID,
  fraction: 0.5,
  message: '',
  cuts: 3,
  ready,
  segments,
});

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
    await expect(clips.clip(rt, 'place', ID, 1)).rejects.toThrow(
      /is not in this server's cache dir .*share CUTROOM_CACHE_DIR/,
    );
    // A clip already made (by the worker, or another replica) is served as it is.
    const made = join(dir, 'previews', ID, 'cut-1.mp4');
    writeFileSync(made, 'made');
    expect(await clips.clip(rt, 'place', ID, 1)).toBe(made);
  });
});

describe("a cut's clip asked of the worker (an object store)", () => {
  /** A Redis where the job makes preview ID, whose worker answers `answer` (or nothing), heard by `heard` workers. */
  function asking(opts: { heard: number; answer?: string; made?: boolean; stillMaking?: boolean; waitMs?: number }) {
    const { rt } = setup(progress([], [0, 1]));
    const got: string[] = [];
    const store = {
      getFile: async (_id: string, name: string, to: string) => (got.push(name), writeFileSync(to, 'clip'), true),
    };
    const published: string[] = [];
    const conn = {
      get: async () => 'preview-1',
      exists: async (key: string) =>
        key.includes(':making:') ? (opts.stillMaking === false ? 0 : 1) : opts.made ? 1 : 0,
      publish: async (_c: string, m: string) => (published.push(m), opts.heard),
      multi: () => ({
        exists: () => ({
          get: () => ({
            exec: async () => [
              [null, opts.made ? 1 : 0],
              [null, opts.answer ?? null],
            ],
          }),
        }),
      }),
    } as unknown as Redis;
    const queue = { getJob: async () => ({ progress: progress([], [0, 1]) }) } as unknown as Queue;
    return {
      rt: { ...rt, store } as unknown as MediaRuntime,
      clips: new QueueClips(conn, queue, opts.waitMs ?? 30_000),
      published,
      got,
    };
  }

  it('says so when no worker hears the request', async () => {
    const { rt, clips } = asking({ heard: 0 });
    await expect(clips.clip(rt, 'place', ID, 1)).rejects.toThrow(
      /no cutroom worker heard the request for cut 2's clip/,
    );
  });

  it("gives the worker's answer when it could not make it", async () => {
    const { rt, clips, published } = asking({ heard: 1, answer: 'cut 2 is not rendered yet' });
    await expect(clips.clip(rt, 'place', ID, 1)).rejects.toThrow(/^cut 2 is not rendered yet$/);
    expect(JSON.parse(published[0]!)).toMatchObject({ job: 'preview-1', preview: ID, cut: 1 });
  });

  it('bounds the wait for an answer with an error that says so', async () => {
    const { rt, clips } = asking({ heard: 1, waitMs: 600 });
    const at = Date.now();
    await expect(clips.clip(rt, 'place', ID, 1)).rejects.toThrow(/did not make cut 2's clip within 1 s: ask again/);
    expect(Date.now() - at).toBeLessThan(3000);
  });

  it('reads back a clip the worker made (asked before or now), and stops asking once the preview is no longer being made', async () => {
    const made = asking({ heard: 1, made: true });
    const path = await made.clips.clip(made.rt, 'place', ID, 1);
    expect(path).toMatch(/\.clips\/.*-cut-1\.mp4$/);
    expect(made.got).toEqual(['cut-1.mp4']);
    expect(made.published).toEqual([]);
    const finished = asking({ heard: 1, stillMaking: false });
    expect(await finished.clips.clip(finished.rt, 'place', ID, 1)).toBeUndefined();
  });
});

describe('a request for a clip, as a worker reads it', () => {
  it('is taken only in its shape', () => {
    const ok = { job: 'preview-1', preview: ID, cut: 2, ask: 'ab'.repeat(12) };
    expect(clipAskOf(JSON.stringify(ok))).toEqual(ok);
    for (const bad of [
      'not json',
      '[]',
      JSON.stringify({ ...ok, cut: -1 }),
      JSON.stringify({ ...ok, cut: 1.5 }),
      JSON.stringify({ ...ok, ask: 'x' }),
      JSON.stringify({ ...ok, job: 7 }),
    ])
      expect(clipAskOf(bad)).toBeUndefined();
  });
});
