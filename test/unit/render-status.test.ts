import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/types.js';
import { pause, waitForRender } from '../../src/workflow/render-status.js';

/** A backend whose one render stays processing for `polls` reads, then is uploaded. */
function backendRendering(polls: number): Backend {
  let reads = 0;
  return {
    getProject: async () => ({ id: 'p', assets: [{ id: 'r', status: ++reads > polls ? 'uploaded' : 'processing', uploaded: reads > polls }] }),
  } as unknown as Backend;
}

describe('waitForRender', () => {
  it('leaves no abort listener behind on the caller\'s signal, however many polls it makes', async () => {
    const ac = new AbortController();
    const counts: number[] = [];
    const status = await waitForRender(backendRendering(15), 'p', { asset_id: 'r' }, {
      maxWaitMs: 60_000,
      pollMs: 1,
      signal: ac.signal,
      onProgress: () => {
        counts.push(getEventListeners(ac.signal, 'abort').length);
      },
    });
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
