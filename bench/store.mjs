// Issue 8, item 17: list_projects on the local backend answers in a few milliseconds with 1,000 projects of 20
// assets each, through the built server over stdio.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, fmt, stats, timeIt as timeRuns } from './lib.mjs';

const PROJECTS = 1000;
const ASSETS = 20;
const ROUNDS = 300;
const WARMUP = 30;
const timeIt = (n, fn) => timeRuns(n, fn, WARMUP);

/** Writes a data dir as the local backend stores it (project.json with its asset count, one record per asset). */
function buildDataDir(root) {
  const dataDir = join(root, 'data');
  const t0 = Date.UTC(2026, 0, 1);
  for (let p = 0; p < PROJECTS; p++) {
    const id = randomUUID();
    const dir = join(dataDir, 'projects', id);
    mkdirSync(join(dir, 'assets'), { recursive: true });
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    const created = new Date(t0 + p * 60_000).toISOString().replace('Z', '000');
    writeFileSync(
      join(dir, 'project.json'),
      JSON.stringify(
        {
          id,
          name: `project ${p}`,
          description: 'a benchmark project with a description of ordinary length',
          data: '',
          created_at: created,
          owner_id: '00000000-0000-4000-8000-00000000c0de',
          asset_count: ASSETS,
        },
        null,
        2,
      ),
    );
    for (let a = 0; a < ASSETS; a++) {
      const aid = randomUUID();
      writeFileSync(
        join(dir, 'assets', `${aid}.json`),
        JSON.stringify(
          {
            id: aid,
            keyname: aid,
            asset_type: 'video',
            status: 'uploaded',
            uploaded: true,
            created_at: created,
            file: join(dir, 'media', `${aid}.mp4`),
            original_name: `clip${a}.mp4`,
            duration_ms: 8000,
          },
          null,
          2,
        ),
      );
    }
  }
  return dataDir;
}

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-store-'));
  try {
    const dataDir = buildDataDir(root);
    const { client } = await connect({
      CUTROOM_DATA_DIR: dataDir,
      CUTROOM_ALLOWED_DIRS: root,
      CUTROOM_CACHE_DIR: join(root, 'cache'),
    });
    const list = async () => {
      const r = await client.callTool({ name: 'list_projects', arguments: { limit: 100 } });
      if (r.isError || r.structuredContent.projects.length !== 100)
        throw new Error(`list_projects failed: ${JSON.stringify(r.content)}`);
      return r;
    };
    // The first listing finds no index and builds it from the 1,000 records.
    let t = performance.now();
    await list();
    const first = performance.now() - t;
    const steady = await timeIt(ROUNDS, list);
    const ping = await timeIt(ROUNDS, () => client.ping());
    // After another writer's change, the index is read again (once per change).
    const afterChange = [];
    for (let i = 0; i < 40; i++) {
      const c = await client.callTool({ name: 'create_project', arguments: { name: `new ${i}`, description: '' } });
      if (c.isError) throw new Error(JSON.stringify(c.content));
      t = performance.now();
      await list();
      afterChange.push(performance.now() - t);
    }
    const changed = stats(afterChange);
    // Without the index (deleted before each call): what every listing cost before it, roughly.
    const noIndex = [];
    for (let i = 0; i < 15; i++) {
      rmSync(join(dataDir, 'index.json'), { force: true });
      t = performance.now();
      await list();
      noIndex.push(performance.now() - t);
    }
    const rebuilt = stats(noIndex);
    await client.close();

    console.log(`data dir: ${PROJECTS} projects x ${ASSETS} assets; list_projects limit 100 over stdio`);
    console.log(`first listing (builds the index from every record):  ${fmt(first)}`);
    console.log(
      `list_projects, index unchanged:         median ${fmt(steady.median)}  p95 ${fmt(steady.p95)}  (n=${steady.n})`,
    );
    console.log(`  ping over stdio (transport only):     median ${fmt(ping.median)}`);
    console.log(
      `list_projects after a create_project:   median ${fmt(changed.median)}  p95 ${fmt(changed.p95)}  (n=${changed.n})`,
    );
    console.log(
      `list_projects with the index removed:   median ${fmt(rebuilt.median)}  p95 ${fmt(rebuilt.p95)}  (n=${rebuilt.n}; rebuilt every call)`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
