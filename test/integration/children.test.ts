// Nothing cutroom starts outlives it: a preview's ffmpeg (running in the background, or in a call the drain gave up
// on) is stopped on every way out of the process, and a server killed with -9 (its children get no word) leaves
// processes and scratch that the next server on the cache dir stops and sweeps.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { connectHttp, startHttpServer } from '../helpers/http-server.js';
import { patternSource } from '../helpers/pattern-source.js';
import { pidsMatching } from '../helpers/processes.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-children-'));
const allowed = join(root, 'allowed');
let source: string;

beforeAll(() => {
  mkdirSync(allowed, { recursive: true });
  // 130 s of a moving pattern: previewed at 1920x1080, its one ffmpeg runs for many seconds.
  source = join(allowed, 'pattern.mp4');
  copyFileSync(patternSource(130), source);
});
afterAll(() => {
  // A failed test must not leave a 20 s encode behind on a shared machine.
  for (const pid of ffmpegsUnder(root)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

/** The ffmpeg processes whose command line names a path under `dir`, or that work in a folder under it. */
function ffmpegsUnder(dir: string): number[] {
  return pidsMatching(dir).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ffmpeg';
    } catch {
      return false;
    }
  });
}

const exitOf = (pid: number) =>
  new Promise<void>((resolve) => {
    const t = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(t);
        resolve();
      }
    }, 20);
  });

function env(name: string, extra: Record<string, string> = {}) {
  const dir = join(root, name);
  return {
    dir,
    cache: join(dir, 'cache'),
    vars: {
      CUTROOM_DATA_DIR: join(dir, 'data'),
      CUTROOM_CACHE_DIR: join(dir, 'cache'),
      CUTROOM_ALLOWED_DIRS: allowed,
      ...extra,
    },
  };
}

type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };
const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const r = (await client.callTool({ name, arguments: args }, { timeout: 120_000 })) as Result;
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  return r.structuredContent!;
};

/** Imports the pattern and previews all of it at 1920x1080; resolves once the preview's ffmpeg runs. */
async function startPreview(client: Client, cache: string, opts: { await?: boolean } = {}) {
  const project = (
    (await call(client, 'create_project', { name: 'children', description: '' })).project as { id: string }
  ).id;
  const asset = ((await call(client, 'import_media', { project_id: project, path: source })).asset as { id: string })
    .id;
  const preview = call(client, 'preview_edit', {
    project_id: project,
    resolution: '1920x1080',
    width: 1920,
    fps: 25,
    clips: [{ asset_id: asset, start: 0, end: 128 }],
  });
  if (opts.await !== false) {
    const handle = await preview;
    expect(handle.status).toBe('rendering');
  } else preview.catch(() => {});
  await expect.poll(() => ffmpegsUnder(cache).length, { timeout: 20_000 }).toBeGreaterThan(0);
}

describe('the ffmpeg of a preview in the background', () => {
  for (const how of ['SIGTERM', 'SIGINT', 'SIGHUP', 'stdin closed'] as const) {
    it(`is stopped when the stdio server ends by ${how}`, async () => {
      const { cache, vars } = env(`stdio-${how.replace(' ', '-')}`, { CUTROOM_RENDER_WAIT_MS: '300' });
      const s: Spawned = await spawnServer(vars, { tee: false });
      try {
        await startPreview(s.client, cache);
        if (how === 'stdin closed') await s.close();
        else process.kill(s.pid!, how);
        await exitOf(s.pid!);
        expect(ffmpegsUnder(cache)).toEqual([]);
      } finally {
        await s.close().catch(() => {});
      }
    }, 60_000);
  }
});

describe('over HTTP, SIGTERM with a preview call the drain gives up on', () => {
  it('exits with no ffmpeg left running', async () => {
    const token = 'children-token-0123456789abcdef';
    const { cache, vars } = env('http', { CUTROOM_HTTP_TOKEN: token, CUTROOM_HTTP_DRAIN_MS: '300' });
    const srv = await startHttpServer(vars);
    try {
      const client = await connectHttp(srv.url, { authorization: `Bearer ${token}` });
      await startPreview(client, cache, { await: false });
      srv.proc.kill('SIGTERM');
      expect(await srv.exited).toBe(0);
      expect(srv.stderr()).toMatch(/calls still in flight after 300 ms; stopping anyway/);
      expect(ffmpegsUnder(cache)).toEqual([]);
    } finally {
      await srv.stop();
    }
  }, 60_000);
});

describe('a server killed with -9 during a preview', () => {
  it('leaves an ffmpeg that the next server on the cache dir stops, and scratch that it sweeps', async () => {
    const { cache, vars } = env('killed', { CUTROOM_RENDER_WAIT_MS: '300' });
    const victim = await spawnServer(vars, { tee: false });
    await startPreview(victim.client, cache);
    process.kill(victim.pid!, 'SIGKILL');
    await exitOf(victim.pid!);
    await victim.close().catch(() => {});
    // ffmpeg outlives a parent killed with -9: nothing the victim did could stop it.
    const orphans = ffmpegsUnder(cache);
    expect(orphans.length).toBeGreaterThan(0);
    const next = await spawnServer(vars);
    try {
      await expect.poll(() => ffmpegsUnder(cache), { timeout: 10_000 }).toEqual([]);
      // What the dead server was making is gone: its unfinished preview folder and its segment scratch.
      const previews = join(cache, 'previews');
      await expect
        .poll(
          () =>
            (existsSync(previews) ? readdirSync(previews) : []).filter(
              (n) => !existsSync(join(previews, n, 'preview.json')),
            ),
          { timeout: 10_000 },
        )
        .toEqual([]);
      const segments = join(cache, 'segments');
      await expect
        .poll(() => (existsSync(segments) ? readdirSync(segments) : []).filter((n) => n.startsWith('.')), {
          timeout: 10_000,
        })
        .toEqual([]);
      // (Any server starting in this pid space stops such orphans: under a parallel test run another file's server
      // may be the one that does, so the log line is not asserted here.)
    } finally {
      await next.close();
    }
  }, 90_000);
});
