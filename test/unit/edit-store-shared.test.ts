// Keeping an edit with a team's shared store (workflow/edit-store.ts, kept.ts): a store caught mid-write by another
// replica keeping the same edit (s3rver writes an object in place, so a read then fails) must not lose the edit_id.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeptFiles, type SharedKept } from '../../src/kept.js';
import { EditStore } from '../../src/workflow/edit-store.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-edit-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const edit = {
  video_series_sequential: [{ video_id: 'a1', video_start_time: '00:00:00.000', video_end_time: '00:00:01.000' }],
};

function store(name: string, shared: SharedKept) {
  const dir = join(root, name);
  return new EditStore(join(dir, 'edits'), 1000, new KeptFiles(shared, dir, 'data'));
}

describe('EditStore with a shared store', () => {
  it('keeps an edit under its id when the shared store fails to answer the read before the write', async () => {
    const put = new Map<string, Buffer>();
    const shared: SharedKept = {
      shown: 'a bucket',
      put: async (key, bytes) => {
        put.set(key, bytes);
      },
      get: async () => {
        throw new Error('InternalError: We encountered an internal error. Please try again.');
      },
    };
    const kept = await store('mid-write', shared).put({
      project_id: 'p1',
      edit: edit as never,
      options: { audio_fade_ms: 10 },
      notes: [],
    });
    expect(kept.edit_id).toMatch(/^edit-[0-9a-f]{16}$/);
    expect([...put.keys()]).toEqual([`data/edits/${kept.edit_id}.json`]);
    expect(JSON.parse(put.get(`data/edits/${kept.edit_id}.json`)!.toString('utf8'))).toMatchObject({
      edit_id: kept.edit_id,
    });
  });

  it('says so when the shared store cannot be written', async () => {
    const shared: SharedKept = {
      shown: 'a bucket',
      put: async () => {
        throw new Error('the bucket does not answer');
      },
      get: async () => undefined,
    };
    await expect(
      store('down', shared).put({ project_id: 'p1', edit: edit as never, options: { audio_fade_ms: 10 }, notes: [] }),
    ).rejects.toThrow(/does not answer/);
  });
});
