// A local-backend server spawned over stdio with a project of its own, as the media integration tests set it up:
// its data, cache and allowed folders under one temporary root, tool calls with a long timeout (renders wait), and
// each result's structured content (a failed call throws its text).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServer, textOf, type Spawned } from './harness.js';

/** A tool result's structured content; throws with the result's text where the tool failed. */
export function structuredOf<T>(result: unknown): T {
  const r = result as { isError?: boolean; structuredContent?: unknown };
  if (r.isError) throw new Error(textOf(result));
  return r.structuredContent as T;
}

/** A temporary root for one test file, with its `allowed` folder (the media the server may import) made. */
export function testRoot(name: string): { root: string; allowed: string } {
  const root = mkdtempSync(join(tmpdir(), `cutroom-${name}-`));
  const allowed = join(root, 'allowed');
  mkdirSync(allowed, { recursive: true });
  return { root, allowed };
}

/** The environment of a local server whose files live under `root` and may import from `allowed`. */
export function localEnv(root: string, allowed: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_RENDER_WAIT_MS: '55000',
    CUTROOM_LOG_LEVEL: 'error',
    ...extra,
  };
}

export interface LocalProject {
  server: Spawned;
  projectId: string;
  call: (name: string, args: Record<string, unknown>) => Promise<unknown>;
  /** Imports a file into the project; the new asset's id. */
  importMedia: (path: string) => Promise<string>;
}

/** Spawns the server and creates the project; `timeout` bounds each call (a liveness bound, not a measure). */
export async function localProject(
  dirs: { root: string; allowed: string },
  project: { name: string; description?: string },
  opts: { env?: Record<string, string>; timeout?: number } = {},
): Promise<LocalProject> {
  const server = await spawnServer(localEnv(dirs.root, dirs.allowed, opts.env));
  const timeout = opts.timeout ?? 180_000;
  const call = (name: string, args: Record<string, unknown>) =>
    server.client.callTool({ name, arguments: args }, { timeout });
  const projectId = structuredOf<{ project: { id: string } }>(
    await call('create_project', { name: project.name, description: project.description ?? '' }),
  ).project.id;
  const importMedia = async (path: string) =>
    structuredOf<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path })).asset.id;
  return { server, projectId, call, importMedia };
}
