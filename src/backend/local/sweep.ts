// Leftovers of writers that died (kill -9, a power cut): every temporary name in the data dir carries its writer's
// tag (owners.ts: the pid and its pid space), so a starting server can tell what is still being written from what
// never will be, even when the writer is a replica in another container.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isUuid } from '../../errors.js';
import { TAG, writerGone } from '../../owners.js';

/** Names that carry their writer's pid, by the folder they appear in. */
const IN_DATA_DIR = [
  new RegExp(`^\\.lock-(?:released-)?${TAG}-[0-9a-f]+$`),
  new RegExp(`\\.${TAG}\\.[0-9a-f]{8}\\.tmp$`),
];
const IN_STAGING = [new RegExp(`^${TAG}-[0-9a-f-]+\\.part$`)];
const IN_PROJECTS = [new RegExp(`^\\.new-${TAG}-`), new RegExp(`^\\.deleted-${TAG}-`)];
// Imports of older versions copied to "<asset id><ext>.<pid>.part". A render's files (its folder media/<asset id>/,
// or an earlier version's ".<id>.mp4.<hex>.part") are not swept by name: the render's record says whose they are,
// and the server that finds the render interrupted removes them (LocalBackend.reconcile).
const IN_PROJECT = [new RegExp(`\\.${TAG}\\.[0-9a-f]{8}\\.tmp$`), /^[0-9a-f-]{36}\.[a-z0-9]{1,5}\.(\d+)\.part$/];
/** Names from before pids were part of them: removed once they are old enough to be nobody's work. */
const UNOWNED_IN_PROJECTS = /^\.(new|deleted)-[0-9a-f]{8}-/;
const UNOWNED_AGE_MS = 3600_000;

async function names(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => [] as string[]);
}

/** Whether `name` in `dir` is a temporary name whose writer is gone (its mtime is the lease of another space's). */
async function deadWriter(dir: string, name: string, patterns: RegExp[]): Promise<boolean> {
  for (const p of patterns) {
    const m = p.exec(name);
    if (!m) continue;
    const touched = await stat(join(dir, name)).then(
      (s) => s.mtimeMs,
      () => Date.now(),
    );
    return writerGone(m[1]!, touched);
  }
  return false;
}

/** Removes what dead writers left in the data dir; returns the paths removed. */
export async function sweepLeftovers(dataDir: string): Promise<string[]> {
  const removed: string[] = [];
  const remove = async (path: string) => {
    await rm(path, { recursive: true, force: true });
    removed.push(path);
  };
  for (const n of await names(dataDir)) if (await deadWriter(dataDir, n, IN_DATA_DIR)) await remove(join(dataDir, n));
  const staging = join(dataDir, 'staging');
  for (const n of await names(staging)) if (await deadWriter(staging, n, IN_STAGING)) await remove(join(staging, n));
  const projects = join(dataDir, 'projects');
  for (const n of await names(projects)) {
    const path = join(projects, n);
    if (await deadWriter(projects, n, IN_PROJECTS)) await remove(path);
    else if (
      UNOWNED_IN_PROJECTS.test(n) &&
      Date.now() -
        (await stat(path).then(
          (s) => s.mtimeMs,
          () => Date.now(),
        )) >
        UNOWNED_AGE_MS
    )
      await remove(path);
    else if (isUuid(n)) {
      for (const sub of ['', 'assets', 'scripts', 'media']) {
        const dir = join(path, sub);
        for (const f of await names(dir)) if (await deadWriter(dir, f, IN_PROJECT)) await remove(join(dir, f));
      }
    }
  }
  return removed;
}
