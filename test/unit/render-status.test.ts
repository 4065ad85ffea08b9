import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/types.js';
import { pause, waitForRender } from '../../src/workflow/render-status.js';

/** A backend whose one render stays processing for `polls` reads, then is uploaded. */
function backendRendering(polls: number): Backend {
  let reads = 0;
  return {
    getProject: async () => ({
      id: 'p',
      assets: [{ id: 'r', status: ++reads > polls ? 'uploaded' : 'processing', uploaded: reads > polls }],
    }),
  } as unknown as Backend;
}

describe('waitForRender', () => {
  it("leaves no abort listener behind on the caller's signal, however many polls it makes", async () => {
    const ac = new AbortController();
    const counts: number[] = [];
    const status = await waitForRender(
      backendRendering(15),
      'p',
      { asset_id: 'r' },
      {
        maxWaitMs: 60_000,
        pollMs: 1,
        signal: ac.signal,
        onProgress: () => {
          counts.push(getEventListeners(ac.signal, 'abort').length);
        },
      },
    );
    expect(status?.done).toBe(true);
    expect(counts).toHaveLength(15);
    expect(new Set(counts)).toEqual(new Set([0]));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('stops at once when the signal aborts during a pause', async () => {
    const ac = new AbortController();
    const waiting = pause(60_000, ac.signal);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    await waiting;
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});

describe('waitForRender on a render this process runs', () => {
  it('answers when the render ends, not at its next poll (however long the interval has grown)', async () => {
    let finish!: () => void;
    const ended = new Promise<void>((r) => (finish = r));
    let done = false;
    let reads = 0;
    const backend = {
      getProject: async () => {
        reads++;
        return { id: 'p', assets: [{ id: 'r', status: done ? 'uploaded' : 'processing', uploaded: done }] };
      },
      renderSettled: (id: string) => (id === 'r' ? ended : undefined),
    } as unknown as Backend;
    const ac = new AbortController();
    // One poll, then a pause of a minute: the render ends 50 ms into it.
    const waiting = waitForRender(
      backend,
      'p',
      { asset_id: 'r' },
      { maxWaitMs: 600_000, pollMs: 60_000, signal: ac.signal },
    );
    setTimeout(() => {
      done = true;
      finish();
    }, 50);
    const status = await waiting;
    expect(status?.done).toBe(true);
    expect(reads).toBe(2);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('polls as before after hearing the end, while the record is not yet done', async () => {
    let reads = 0;
    const backend = {
      getProject: async () => ({
        id: 'p',
        assets: [{ id: 'r', status: ++reads > 3 ? 'uploaded' : 'processing', uploaded: reads > 3 }],
      }),
      renderSettled: () => Promise.resolve(),
    } as unknown as Backend;
    const status = await waitForRender(backend, 'p', { asset_id: 'r' }, { maxWaitMs: 60_000, pollMs: 1 });
    expect(status?.done).toBe(true);
    expect(reads).toBe(4);
  });
});
