// What killed writers leave in the data dir is removed by the next server to start; what live processes are
// writing is kept.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { pidSpace } from '../../src/owners.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-leftovers-'));
const dataDir = join(root, 'data');
const allowed = join(root, 'allowed');
const env = () => ({
  CUTROOM_DATA_DIR: dataDir,
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
});
const call = (s: Spawned, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }, { timeout: 60_000 });

let live: ChildProcess;
beforeAll(() => {
  mkdirSync(allowed, { recursive: true });
  // A process that stays alive for the test: its "writes in progress" must survive the sweep.
  live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
});
afterAll(() => {
  live?.kill('SIGKILL');
});

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

const prefixed = (p: string, o: Record<string, string>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [`${p} ${k}`, v]));

describe('leftovers of killed writers', () => {
  it('are removed by a starting server (imports and creates killed midway, trash, temp files); live writers keep theirs', async () => {
    const first = await spawnServer(env(), { tee: false });
    const project = (await call(first, 'create_project', { name: 'kept', description: '' })).structuredContent as {
      project: { id: string };
    };
    const id = project.project.id;

    // A real kill -9 in the middle of an import: a large file, killed while its staged copy is being written.
    const big = join(allowed, 'big.mp4');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 512 * 1024 * 1024);
    closeSync(fd);
    const staging = join(dataDir, 'staging');
    const importing = call(first, 'import_media', { project_id: id, path: big }).catch(() => undefined);
    const partOf = (pid: number) =>
      existsSync(staging)
        ? readdirSync(staging).filter((f) => f.startsWith(`${pid}@${pidSpace()}-`) && f.endsWith('.part'))
        : [];
    const deadline = Date.now() + 20_000;
    // Checked at every turn of the event loop (which must turn, to send the call): the copy takes a fraction of a
    // second.
    while (partOf(first.pid!).length === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(partOf(first.pid!), 'the import never started copying').toHaveLength(1);
    process.kill(first.pid!, 'SIGKILL');
    await importing;
    await first.client.close().catch(() => {});
    const killedPart = join(staging, partOf(first.pid!)[0]!);
    expect(existsSync(killedPart)).toBe(true);

    // Leftovers as other killed processes leave them, and the same names written by live processes.
    const dead = deadPid();
    const projects = join(dataDir, 'projects');
    const make = (pid: number | string) => {
      const paths = {
        staged: join(staging, `${pid}-${randomUUID()}.part`),
        newProject: join(projects, `.new-${pid}-${randomUUID()}`),
        trash: join(projects, `.deleted-${pid}-${randomUUID()}-${Date.now()}`),
        recordTmp: join(projects, id, 'assets', `${randomUUID()}.json.${pid}.0a1b2c3d.tmp`),
        indexTmp: join(dataDir, `index.json.${pid}.0a1b2c3d.tmp`),
        oldImportPart: join(projects, id, 'media', `${randomUUID()}.mp4.${pid}.part`),
        lockAttempt: join(dataDir, `.lock-${pid}-0a1b2c3d`),
      };
      for (const dir of [paths.newProject, paths.trash, paths.lockAttempt, join(projects, id, 'media')])
        mkdirSync(dir, { recursive: true });
      writeFileSync(join(paths.newProject, 'project.json'), '{}');
      writeFileSync(join(paths.trash, 'project.json'), '{}');
      for (const f of [paths.staged, paths.recordTmp, paths.indexTmp, paths.oldImportPart]) writeFileSync(f, 'partial');
      return paths;
    };
    // Names as this version writes them (the pid with its pid space) and as earlier ones did (the bare pid).
    // (Copies of imports named "<asset id><ext>.<pid>.part" are an earlier version's only: no tagged one is written.)
    const { oldImportPart: _never, ...taggedDead } = make(`${dead}@${pidSpace()}`);
    const ofDead = { ...prefixed('tagged', taggedDead), ...prefixed('bare', make(dead)) };
    const ofLive = { ...prefixed('tagged', make(`${live.pid!}@${pidSpace()}`)), ...prefixed('bare', make(live.pid!)) };

    const next = await spawnServer(env());
    try {
      await expect.poll(() => existsSync(killedPart), { timeout: 10_000 }).toBe(false);
      for (const [what, path] of Object.entries(ofDead))
        await expect.poll(() => existsSync(path), { timeout: 5000, message: `${what} of a dead process` }).toBe(false);
      for (const [what, path] of Object.entries(ofLive))
        expect(existsSync(path), `${what} of a live process`).toBe(true);
      // The sweep logs once it has removed everything: the last removal can come just before that line.
      await expect
        .poll(() => next.stderr(), { timeout: 5000 })
        .toMatch(/removed \d+ leftover\(s\) of stopped processes from the data dir: .*\.part/);
      // The project itself is untouched and lists with its asset count.
      const l = await call(next, 'list_projects', {});
      expect(l.isError, textOf(l)).toBeFalsy();
      expect((l.structuredContent as { projects: { id: string; asset_count: number }[] }).projects).toEqual([
        expect.objectContaining({ id, asset_count: 0 }),
      ]);
    } finally {
      await next.close();
    }
  }, 60_000);
});
