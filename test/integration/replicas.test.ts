// Replicas on one volume, as docs/hosting.md's deployment runs them: two servers, each in a pid namespace of its own
// (`unshare --pid --fork --mount-proc`, as two containers are), share a cache dir. The pid written in the first's
// markers means nothing to the second (and is dead there), so ownership must not rest on it: the second's
// evictions leave the preview the first is making alone, and it finishes.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { patternSource } from '../helpers/pattern-source.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-replicas-'));
const allowed = join(root, 'allowed');
const cache = join(root, 'cache');
let a: Spawned;
let b: Spawned;

// Each server under `sh` in a new pid namespace: sh is pid 1 there and node a small pid after it. In the second
// namespace, three short-lived subshells run first, so its node's pid differs from the first's and the first's
// pid is dead there.
const inNamespace = (spare: number) => [
  'unshare',
  '--pid',
  '--fork',
  '--mount-proc',
  'sh',
  '-c',
  `${'(true); '.repeat(spare)}"$0" "$@"`,
];

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  copyFileSync(patternSource(130), join(allowed, 'pattern.mp4'));
  const env = (name: string, extra: Record<string, string> = {}) => ({
    CUTROOM_DATA_DIR: join(root, name),
    CUTROOM_CACHE_DIR: cache,
    CUTROOM_ALLOWED_DIRS: allowed,
    ...extra,
  });
  a = await spawnServer(env('data-a', { CUTROOM_RENDER_WAIT_MS: '300' }), { wrap: inNamespace(0) });
  b = await spawnServer(env('data-b', { CUTROOM_PREVIEW_KEEP: '1' }), { wrap: inNamespace(3) });
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
});

type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };
const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const r = (await client.callTool({ name, arguments: args }, { timeout: 120_000 })) as Result;
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  return r.structuredContent!;
};
const projectWithPattern = async (client: Client) => {
  const project = (
    (await call(client, 'create_project', { name: 'replica', description: '' })).project as { id: string }
  ).id;
  const asset = (
    (await call(client, 'import_media', { project_id: project, path: join(allowed, 'pattern.mp4') })).asset as {
      id: string;
    }
  ).id;
  return { project, asset };
};

describe('two servers in separate pid namespaces on one cache dir', () => {
  it('do not take each other for dead: the second evicts around the preview the first is making, which finishes', async () => {
    const previews = join(cache, 'previews');
    const first = await projectWithPattern(a.client);
    const handle = await call(a.client, 'preview_edit', {
      project_id: first.project,
      resolution: '1920x1080',
      width: 1920,
      fps: 25,
      clips: [{ asset_id: first.asset, start: 0, end: 45 }],
    });
    expect(handle.status).toBe('rendering');
    const id = handle.preview_id as string;
    // The first's pid, as its marker names it, is not a process of the second's namespace.
    expect(readFileSync(join(previews, id, '.rendering'), 'utf8')).toMatch(/^\d+/);

    // The second finishes previews of its own with room for one: each one evicts.
    const second = await projectWithPattern(b.client);
    for (const end of [2, 3, 4]) {
      const done = await call(b.client, 'preview_edit', {
        project_id: second.project,
        resolution: '64x36',
        width: 64,
        fps: 25,
        clips: [{ asset_id: second.asset, start: 0, end }],
      });
      expect(done.status ?? 'done').not.toBe('rendering');
      expect(existsSync(join(previews, id))).toBe(true);
    }
    // The first's preview was never touched, and finishes.
    let result: Record<string, unknown> = handle;
    // Polled until done (each preview_edit {preview_id} waits up to 300 ms here), however slow the machine: no time is
    // asserted.
    const until = Date.now() + 150_000;
    while (result.status === 'rendering' && Date.now() < until)
      result = await call(a.client, 'preview_edit', { preview_id: id });
    expect(result.status ?? 'done').not.toBe('rendering');
    expect(result.measured_seconds).toBeCloseTo(45, 0);
    expect(existsSync(join(previews, id, 'preview.mp4'))).toBe(true);
    expect(readdirSync(previews).length).toBeGreaterThanOrEqual(2);
  }, 240_000);
});
