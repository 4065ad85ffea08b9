// Issue 31, item 3: what four hour-long transcriptions at once cost the server in memory. Target: the server's
// peak RSS stays under 400 MB. The sound is no speech (memory does not depend on what is said): a 1 s tone every
// 10 s, silence between, an hour of it in four files (different pitches, so four assets), FLAC. Through the built
// server over stdio (BENCH_BIN to measure another build), CUTROOM_MAX_FFMPEG=4 (BENCH_MAX_FFMPEG) so that the four
// run side by side; the server's RSS is sampled every 100 ms and its VmHWM read at the end.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, connect } from './lib.mjs';

const MEDIA = join(tmpdir(), 'cutroom-bench-media-v1');
const SECONDS = 3600;
const PITCHES = [330, 440, 550, 660];

function make() {
  mkdirSync(MEDIA, { recursive: true });
  return PITCHES.map((hz) => {
    const file = join(MEDIA, `tones-1h-${hz}.flac`);
    if (existsSync(file)) return file;
    const tmp = `${file}.part.flac`;
    const r = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `sine=f=${hz}:r=16000:d=${SECONDS},volume='if(lt(mod(t,10),1),0.5,0)':eval=frame`,
      '-ac',
      '1',
      '-c:a',
      'flac',
      tmp,
    ]);
    if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
    renameSync(tmp, file);
    return file;
  });
}

const status = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kib = (text, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN);
const mib = (k) => `${(k / 1024).toFixed(0)} MiB`;

export async function run() {
  console.log('making four hours of tone bursts (cached between runs)...');
  const files = make();
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-transcribe-memory-'));
  const maxFfmpeg = process.env.BENCH_MAX_FFMPEG ?? '4';
  const { client, transport } = await connect({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: MEDIA,
    CUTROOM_LOG_LEVEL: 'error',
    CUTROOM_MAX_FFMPEG: maxFfmpeg,
  });
  try {
    const pid = transport.pid;
    const call = (name, args) => client.callTool({ name, arguments: args }, { timeout: 3_600_000 });
    const project = (await call('create_project', { name: 'bench', description: 'memory' })).structuredContent.project
      .id;
    const assets = [];
    for (const f of files)
      assets.push((await call('import_media', { project_id: project, path: f })).structuredContent.asset.id);
    const idle = kib(status(pid), 'VmRSS');
    let sampled = idle;
    const timer = setInterval(() => {
      try {
        sampled = Math.max(sampled, kib(status(pid), 'VmRSS'));
      } catch {
        // gone
      }
    }, 100);
    const t0 = performance.now();
    const results = await Promise.all(
      assets.map((asset_id) => call('transcribe_asset', { project_id: project, asset_id })),
    );
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(timer);
    for (const r of results) if (r.isError) throw new Error(r.content[0].text);
    const end = status(pid);
    console.log(
      `server ${BIN === join(import.meta.dirname, '..', 'dist/index.js') ? '(this build)' : BIN}, CUTROOM_MAX_FFMPEG=${maxFfmpeg}: four ${SECONDS} s transcriptions at once in ${seconds.toFixed(0)} s`,
    );
    console.log(
      `server RSS: ${mib(idle)} idle before them; peak ${mib(Math.max(sampled, kib(end, 'VmHWM')))} (VmHWM ${mib(kib(end, 'VmHWM'))}, sampled ${mib(sampled)}); ${mib(kib(end, 'VmRSS'))} after (target: peak < 400 MB)`,
    );
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}
