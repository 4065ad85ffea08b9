// Issue 34, item 3: the first frame in a second. The mix benchmark's media (a 720p moving picture with speech, a
// chord bed over the whole edit as a plain overlay): a new 60 s edit of 12 cuts of 5 s previewed at 640x360, then
// the same edit with one cut's in point moved (the loop), each composed first (compose_edit, untimed: the media
// probed, as in an agent's session) and previewed by edit_id. Timed from preview_edit's call: when its progress
// first says a cut is ready to play, when that cut's clip (cutroom://previews/{id}/cuts/{n}.mp4, what a view plays)
// has been read back, and when the whole preview is done. With BENCH_BASE_BIN (another checkout's dist/index.js), each
// round runs that build
// too, in turn, fresh cache each, and the whole preview is compared pair by pair.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, stats } from './lib.mjs';
import { media, prepared } from './mix.mjs';

const REPS = Number(process.env.BENCH_REPS ?? 3);
const BASE = process.env.BENCH_BASE_BIN;

async function connect(bin, env) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env: { PATH: process.env.BENCH_PATH ?? process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stderr: process.env.BENCH_DEBUG ? 'inherit' : 'ignore',
  });
  const client = new Client({ name: 'cutroom-bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/**
 * One preview_edit call: when its progress first named a ready cut, when that cut's clip was read back (watchable:
 * the bytes a view plays), and when the call returned with the whole preview (seconds from the call).
 */
async function timedPreview(client, args) {
  const t = performance.now();
  let first;
  let watchable;
  const r = await client.callTool(
    { name: 'preview_edit', arguments: args },
    {
      timeout: 600_000,
      resetTimeoutOnProgress: true,
      onprogress: (p) => {
        const uri = /ready to play \(cut \d+: (\S+)\)/.exec(p.message ?? '')?.[1];
        if (first !== undefined || !uri) return;
        first = (performance.now() - t) / 1000;
        watchable = client.readResource({ uri }).then((c) => {
          if (!c.contents[0]?.blob && !c.contents[0]?._meta) throw new Error('the clip came back empty');
          return (performance.now() - t) / 1000;
        });
      },
    },
  );
  const whole = (performance.now() - t) / 1000;
  if (r.isError) throw new Error(`preview_edit: ${r.content[0].text}`);
  if (r.structuredContent.status !== 'done') throw new Error(`preview ${r.structuredContent.status}`);
  return { first: first ?? whole, watchable: (await watchable) ?? whole, whole };
}

/** compose_edit (untimed: the media are probed as in an agent's session), then preview_edit {edit_id}, timed. */
async function composedPreview(client, edit) {
  const c = await client.callTool({ name: 'compose_edit', arguments: edit }, { timeout: 120_000 });
  if (c.isError) throw new Error(`compose_edit: ${c.content[0].text}`);
  return timedPreview(client, { edit_id: c.structuredContent.edit_id });
}

async function round(bin, p0) {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-bench-first-'));
  try {
    const client = await connect(bin, {
      CUTROOM_DATA_DIR: p0.data,
      CUTROOM_CACHE_DIR: join(dir, 'cache'),
      CUTROOM_ALLOWED_DIRS: p0.media,
      CUTROOM_LOG_LEVEL: process.env.BENCH_DEBUG ? 'debug' : 'error',
      CUTROOM_RENDER_WAIT_MS: '55000',
    });
    const clips = Array.from({ length: 12 }, (_, i) => ({ asset_id: p0.v, start: i * 6, end: i * 6 + 5 }));
    const edit = {
      project_id: p0.project,
      resolution: '1280x720',
      fps: 30,
      overlays: [{ asset_id: p0.b, at: 0, until: 60, gain_db: -6 }],
    };
    const fresh = await composedPreview(client, { ...edit, clips });
    const changed = clips.map((c, i) => (i === 6 ? { ...c, start: c.start + 0.5, end: c.end + 0.5 } : c));
    const loop = await composedPreview(client, { ...edit, clips: changed });
    await client.close();
    return { fresh, loop };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run() {
  const { video, bed } = media();
  const p0 = { ...(await prepared(video, bed)), media: join(video, '..') };
  console.log(
    '60 s edit, 12 cuts of 5 s from a 720p moving picture with speech (flite slt), a chord bed over it, previewed at 640x360; fresh cache each round',
  );
  await round(BIN, p0); // warm-up
  const rows = {
    first: [],
    watchable: [],
    whole: [],
    loopFirst: [],
    loop: [],
    loopRatio: [],
    base: [],
    vsBase: [],
    baseLoopRatio: [],
    baseWatchable: [],
  };
  for (let i = 0; i < REPS; i++) {
    const r = await round(BIN, p0);
    rows.first.push(r.fresh.first);
    rows.watchable.push(r.fresh.watchable);
    rows.whole.push(r.fresh.whole);
    rows.loopFirst.push(r.loop.first);
    rows.loop.push(r.loop.whole);
    rows.loopRatio.push(r.loop.whole / r.fresh.whole);
    if (BASE) {
      const b = await round(BASE, p0);
      rows.base.push(b.fresh.whole);
      rows.vsBase.push(r.fresh.whole / b.fresh.whole);
      rows.baseLoopRatio.push(b.loop.whole / b.fresh.whole);
      rows.baseWatchable.push(b.fresh.watchable);
    }
    console.log(
      `round ${i + 1}: first cut ready ${r.fresh.first.toFixed(2)} s, its clip read ${r.fresh.watchable.toFixed(2)} s, whole ${r.fresh.whole.toFixed(2)} s; one cut changed: first ready ${r.loop.first.toFixed(2)} s, whole ${r.loop.whole.toFixed(2)} s${BASE ? `; base whole ${rows.base.at(-1).toFixed(2)} s, one cut changed ${rows.baseLoopRatio.at(-1).toFixed(2)}x` : ''}`,
    );
  }
  const f = (s) => `median ${s.median.toFixed(2)} (min ${s.min.toFixed(2)}, max ${s.max.toFixed(2)})`;
  console.log(`new preview, first cut ready to play: ${f(stats(rows.first))} s`);
  console.log(`new preview, first cut's clip read:   ${f(stats(rows.watchable))} s (target <= 1 s)`);
  console.log(`new preview, whole:                   ${f(stats(rows.whole))} s`);
  console.log(`one cut changed, first ready:         ${f(stats(rows.loopFirst))} s`);
  console.log(
    `one cut changed, whole:               ${f(stats(rows.loop))} s => ${f(stats(rows.loopRatio))}x of a new preview, pair by pair (target <= 0.3x)`,
  );
  if (BASE)
    console.log(
      `base build, new preview whole:        ${f(stats(rows.base))} s => this / base ${f(stats(rows.vsBase))}x pair by pair (target <= 1x)`,
    );
  if (BASE) console.log(`base build, one cut changed:          ${f(stats(rows.baseLoopRatio))}x of its new preview`);
  if (BASE) console.log(`base build, first cut's clip read:    ${f(stats(rows.baseWatchable))} s`);
}
