// Issue 9's target: inspect_asset on a 10-minute 1080p source (2 s GOP, known hard cuts, some inside GOPs) takes
// at most 0.25x one full-decode scene-detection pass (ffmpeg scdet over every frame) of the same file, and finds the
// same cuts. Paired rounds, order alternating; a fresh cache dir for every inspect_asset run. Then an hour of such
// footage (the 10 minutes six times, joined by stream copy).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeOnce } from './media.mjs';
import { connect, stats } from './lib.mjs';

const MEDIA = join(tmpdir(), 'cutroom-bench-media-v1');
const REPS = Number(process.env.BENCH_REPS ?? 3);
const FPS = 30;
const SECONDS = 600;
const THRESHOLD = 10;
/** Simple, cheap sources; a few move (testsrc2, testsrc), most hold still between cuts. */
const SOURCES = [
  'smptehdbars',
  'testsrc2',
  'rgbtestsrc',
  'color=c=0x3060a0',
  'testsrc',
  'yuvtestsrc',
  'pal75bars',
  'color=c=0xc08040',
  'smptebars',
];

/** Shot starts (frames): every 13-23 s at frames that are not keyframes, plus cut-and-backs inside a GOP. */
function plan() {
  const shots = [];
  let f = 0;
  let i = 0;
  while (f < SECONDS * FPS) {
    shots.push([f, SOURCES[i % SOURCES.length]]);
    // Every fifth shot holds a 10-frame insert of another source in the middle of a GOP (a cut and a cut back).
    const len = (13 + ((i * 7) % 11)) * FPS + 7 + (i % 5) * 3;
    if (i % 5 === 2) {
      const mid = f + Math.floor(len / 2 / 60) * 60 + 25;
      shots.push([mid, SOURCES[(i + 4) % SOURCES.length]], [mid + 10, SOURCES[i % SOURCES.length]]);
    }
    f += len;
    i++;
  }
  return shots.filter(([s]) => s < SECONDS * FPS);
}

export function make10min() {
  mkdirSync(MEDIA, { recursive: true });
  const out = join(MEDIA, 'inspect-1080p-10min-g60.mp4');
  if (existsSync(out)) return out;
  const shots = plan();
  const args = [];
  const chains = [];
  shots.forEach(([first, src], k) => {
    const frames = (shots[k + 1]?.[0] ?? SECONDS * FPS) - first;
    args.push('-f', 'lavfi', '-i', `${src}${src.includes('=') ? ':' : '='}s=1920x1080:r=${FPS}`);
    chains.push(`[${k}:v]trim=end_frame=${frames},setpts=PTS-STARTPTS,format=yuv420p,setsar=1[v${k}]`);
  });
  args.push('-f', 'lavfi', '-i', `sine=f=440:r=48000:d=${SECONDS}`);
  const graph = `${chains.join(';')};${shots.map((_, k) => `[v${k}]`).join('')}concat=n=${shots.length}:v=1:a=0[v]`;
  console.log(`making a 10-minute 1080p source with ${shots.length - 1} cuts (once; cached in ${MEDIA})...`);
  return makeOnce(out, [
    ...args,
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    '-map',
    `${shots.length}:a`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '60',
    '-keyint_min',
    '60',
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-t',
    String(SECONDS),
    '-movflags',
    '+faststart',
  ]);
}

function makeHour(tenMin) {
  const out = join(MEDIA, 'inspect-1080p-60min-g60.mp4');
  if (existsSync(out)) return out;
  const list = join(MEDIA, 'inspect-hour.txt');
  writeFileSync(list, Array.from({ length: 6 }, () => `file '${tenMin}'`).join('\n'));
  return makeOnce(out, ['-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', '-movflags', '+faststart']);
}

/** The reference: one full decode with scdet; its wall time and the cut times. */
function reference(file) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const c = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-nostdin',
        '-nostats',
        '-i',
        file,
        '-map',
        '0:v:0',
        '-vf',
        `scdet=threshold=${THRESHOLD},metadata=mode=print:key=lavfi.scd.time`,
        '-f',
        'null',
        '-',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) =>
      code === 0
        ? resolve({
            seconds: (performance.now() - t) / 1000,
            cuts: [...err.matchAll(/pts_time:(\S+)/g)].map((m) => Number(m[1])),
          })
        : reject(new Error(err.slice(-500))),
    );
  });
}

async function inspectOnce(file) {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-inspect-'));
  const { client } = await connect({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: MEDIA,
    CUTROOM_LOG_LEVEL: 'error',
  });
  try {
    const p = await client.callTool({ name: 'create_project', arguments: { name: 'bench', description: 'inspect' } });
    const projectId = p.structuredContent.project.id;
    const imp = await client.callTool(
      { name: 'import_media', arguments: { project_id: projectId, path: file } },
      { timeout: 600_000 },
    );
    if (imp.isError) throw new Error(JSON.stringify(imp.content));
    const t = performance.now();
    const r = await client.callTool(
      { name: 'inspect_asset', arguments: { project_id: projectId, asset_id: imp.structuredContent.asset.id } },
      { timeout: 3_600_000, resetTimeoutOnProgress: true, onprogress: () => {} },
    );
    const seconds = (performance.now() - t) / 1000;
    if (r.isError) throw new Error(JSON.stringify(r.content));
    return { seconds, result: r.structuredContent };
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function compare(label, cuts, ref) {
  const found = cuts.map((s) => s.start_seconds).slice(1);
  const half = 0.5 / FPS;
  const same = found.length === ref.length && found.every((t, i) => Math.abs(t - ref[i]) < half);
  console.log(
    `${label}: ${found.length} cuts found, reference ${ref.length}: ${same ? 'the same cuts, to the frame' : 'DIFFERENT'}`,
  );
  if (!same) {
    const missing = ref.filter((t) => !found.some((f) => Math.abs(f - t) < half));
    const extra = found.filter((t) => !ref.some((f) => Math.abs(f - t) < half));
    console.log(`  missing: ${missing.slice(0, 10).join(', ')}; extra: ${extra.slice(0, 10).join(', ')}`);
  }
  return same;
}

/** Paired rounds of the reference and inspect_asset on one file, order alternating; the cuts compared. */
async function paired(file, label) {
  const refs = [];
  const mine = [];
  const ratios = [];
  let last;
  for (let i = 0; i < REPS; i++) {
    // Alternate the order so that drifting load does not favour either side.
    const pair =
      i % 2 === 0
        ? [await reference(file), await inspectOnce(file)]
        : (([b, a]) => [a, b])([await inspectOnce(file), await reference(file)]);
    const [ref, ins] = pair;
    refs.push(ref.seconds);
    mine.push(ins.seconds);
    ratios.push(ins.seconds / ref.seconds);
    last = { ref, ins };
    console.log(
      `${label} round ${i + 1}: full scdet pass ${ref.seconds.toFixed(1)} s, inspect_asset ${ins.seconds.toFixed(1)} s (${ins.result.scan.shots}, ${ins.result.scan.frames_decoded}/${ins.result.scan.frames_total} frames decoded) => ${(ins.seconds / ref.seconds).toFixed(3)}x`,
    );
  }
  return { last, r: stats(refs), m: stats(mine), ratio: stats(ratios).median };
}

/**
 * Footage that moves in every shot (issue 23): 3 minutes of 1280x720 at 30 fps, keyframes every 2 s exactly, from 9
 * lavfi sources that scroll, turn or evolve, each with film grain (temporal noise), encoded by x264 `veryfast` (CRF 23,
 * B-frames as most encoders make them): 37 cuts planned, none on a keyframe, 12 of them in 6 cut-and-backs of 10
 * frames. Neighbouring keyframes differ everywhere, so every GOP but a few is a candidate.
 */
const MOVING = [
  ['testsrc2', 'scroll=h=0.004'],
  ['smptehdbars', 'scroll=h=-0.003:v=0.002'],
  ['gradients=speed=0.03', ''],
  ['cellauto=rule=110', ''],
  ['color=c=0x3060a0', 'noise=alls=40:allf=t+u'],
  ['rgbtestsrc', 'rotate=a=t*0.4:c=black'],
  ['life=mold=10:ratio=0.2:death_color=#C83232:life_color=#00ff00', ''],
  ['yuvtestsrc', 'scroll=v=0.003'],
  ['testsrc', 'scroll=h=0.002:v=-0.002'],
];
const MOVING_SECONDS = 180;

function planMoving() {
  const shots = [];
  let f = 0;
  let i = 0;
  while (f < MOVING_SECONDS * FPS) {
    shots.push([f, i % MOVING.length]);
    const len = (4 + ((i * 5) % 6)) * FPS + 7 + (i % 5) * 3;
    if (i % 4 === 2) {
      const mid = f + Math.floor(len / 2 / 60) * 60 + 25;
      if (mid + 10 < f + len) shots.push([mid, (i + 4) % MOVING.length], [mid + 10, i % MOVING.length]);
    }
    f += len;
    i++;
  }
  return shots.filter(([s]) => s < MOVING_SECONDS * FPS);
}

// BENCH_GRAIN=0: the same shots without the film grain (clean synthetic motion; cheaper P-frames, calmer keyframes).
const GRAIN = process.env.BENCH_GRAIN !== '0';

export function makeMoving() {
  mkdirSync(MEDIA, { recursive: true });
  const out = join(MEDIA, `inspect-720p-3min-moving-veryfast${GRAIN ? '' : '-nograin'}.mp4`);
  if (existsSync(out)) return out;
  const shots = planMoving();
  const args = [];
  const chains = [];
  shots.forEach(([first, si], k) => {
    const frames = (shots[k + 1]?.[0] ?? MOVING_SECONDS * FPS) - first;
    const [src, motion] = MOVING[si];
    args.push('-f', 'lavfi', '-i', `${src}${src.includes('=') ? ':' : '='}s=1280x720:r=${FPS}`);
    chains.push(
      `[${k}:v]trim=end_frame=${frames},setpts=PTS-STARTPTS,format=yuv420p${motion ? `,${motion}` : ''}${GRAIN ? ',noise=alls=6:allf=t' : ''},setsar=1[v${k}]`,
    );
  });
  args.push('-f', 'lavfi', '-i', `sine=f=440:r=48000:d=${MOVING_SECONDS}`);
  const graph = `${chains.join(';')};${shots.map((_, k) => `[v${k}]`).join('')}concat=n=${shots.length}:v=1:a=0[v]`;
  console.log(`making 3 minutes of moving 720p with ${shots.length - 1} cuts (once; cached in ${MEDIA})...`);
  return makeOnce(out, [
    ...args,
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    '-map',
    `${shots.length}:a`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-g',
    '60',
    '-keyint_min',
    '60',
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-t',
    String(MOVING_SECONDS),
    '-movflags',
    '+faststart',
  ]);
}

async function runMoving() {
  const file = makeMoving();
  const { last, r, m, ratio } = await paired(file, 'moving');
  // Some planned cuts join two patterns too alike for scdet at threshold 10: the reference decides what a cut is.
  console.log(`moving: the reference finds ${last.ref.cuts.length} of the ${planMoving().length - 1} cuts planned`);
  compare('inspect_asset, moving 3 min', last.ins.result.shots, last.ref.cuts);
  console.log(`moving: full scdet pass median ${r.median.toFixed(1)} s, inspect_asset median ${m.median.toFixed(1)} s`);
  console.log(
    `=> ${(m.median / r.median).toFixed(3)}x of medians, ${ratio.toFixed(3)}x median of paired rounds (target <= 0.4x)`,
  );
}

export async function run() {
  // BENCH_INSPECT=still or =moving runs one of the two footages; both by default.
  if (process.env.BENCH_INSPECT !== 'still') await runMoving();
  if (process.env.BENCH_INSPECT === 'moving') return;
  const file = make10min();
  const expected = plan()
    .slice(1)
    .map(([f]) => f / FPS);
  const { last, r, m, ratio } = await paired(file, '10 min');
  const refMatchesPlan =
    last.ref.cuts.length === expected.length && last.ref.cuts.every((t, i) => Math.abs(t - expected[i]) < 0.5 / FPS);
  console.log(
    `reference vs the cuts the source was made with: ${refMatchesPlan ? 'equal' : 'DIFFERENT'} (${last.ref.cuts.length} vs ${expected.length})`,
  );
  compare('inspect_asset, 10 min', last.ins.result.shots, last.ref.cuts);
  console.log(`full scdet pass, 10 min 1080p: median ${r.median.toFixed(1)} s over ${REPS}`);
  console.log(`inspect_asset (whole tool call: scan, sound, sheet): median ${m.median.toFixed(1)} s`);
  console.log(
    `=> ${(m.median / r.median).toFixed(3)}x of medians, ${ratio.toFixed(3)}x median of paired rounds (target <= 0.25x)`,
  );

  if (process.env.BENCH_HOUR !== '0') {
    const hour = makeHour(file);
    const ins = await inspectOnce(hour);
    console.log(
      `an hour (the 10 min six times, stream copy): inspect_asset ${ins.seconds.toFixed(1)} s (${ins.result.scan.shots}, ${ins.result.scan.frames_decoded}/${ins.result.scan.frames_total} frames decoded, ${ins.result.shots.length} shots); ` +
        `a full scdet pass, extrapolated from 10 min: ~${(6 * r.median).toFixed(0)} s`,
    );
    if (process.env.BENCH_HOUR_REFERENCE === '1') {
      const ref = await reference(hour);
      console.log(
        `an hour, full scdet pass measured: ${ref.seconds.toFixed(1)} s => ${(ins.seconds / ref.seconds).toFixed(3)}x`,
      );
      compare('inspect_asset, an hour', ins.result.shots, ref.cuts);
    }
  }
}
