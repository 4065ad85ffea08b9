// Issue 33: what the mix costs a preview. A 60 s edit of 12 cuts of 5 s from a 720p source whose picture moves
// (testsrc2) and whose sound is speech (flite, slt, reading sentences with pauses between them, 75 s), under a
// music bed (three-note chords changing every 2 s) laid over the whole edit. Previewed new (a fresh cache, a fresh
// server each time, so no segment is reused; the source's transcript, made once before, copied into each cache) with
// the bed as a plain overlay, and finished: the bed as music ducked under the speech (role "music": the speech is
// read from the cuts' sound first) and captions burned in from the transcript; pairs run in turn, A B A B, and the
// ratio taken pair by pair. Both level the dialogue and measure the mix (the defaults). Target: at most 1.3x.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUT_SENTENCES } from '../test/fixtures/cut-sentences.mjs';
import { concatSound, makeOnce, silence } from './media.mjs';
import { connect, stats } from './lib.mjs';

const MEDIA = join(tmpdir(), 'cutroom-bench-mix-v1');
const REPS = Number(process.env.BENCH_REPS ?? 3);
const SENTENCES = CUT_SENTENCES.slice(0, 6);

function exec(cmd, args) {
  const r = spawnSync(cmd, args, { maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
}

/** The source (720p moving picture, 75 s of speech with pauses) and the bed, made once. */
export function media() {
  mkdirSync(MEDIA, { recursive: true });
  const video = join(MEDIA, 'talk-720p.mp4');
  const bed = join(MEDIA, 'bed.wav');
  if (!existsSync(video)) {
    const parts = [];
    for (let i = 0; parts.length < 24; i++) {
      const wav = join(MEDIA, `s${parts.length}.wav`);
      exec('flite', ['-voice', 'slt', '-t', SENTENCES[i % SENTENCES.length], '-o', wav]);
      parts.push(wav);
    }
    const gap = silence(join(MEDIA, 'gap.wav'), 0.8);
    const speech = concatSound(
      parts.flatMap((p) => [p, gap]),
      join(MEDIA, 'speech.wav'),
      ['-ar', '48000'],
    );
    makeOnce(video, [
      '-f',
      'lavfi',
      '-i',
      'testsrc2=s=1280x720:r=30:d=75',
      '-i',
      speech,
      '-af',
      'apad',
      '-t',
      '75',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '60',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
    ]);
  }
  const chord =
    "aevalsrc='0.2*sin(2*PI*(220+55*floor(mod(t,8)/2))*t)+0.15*sin(2*PI*(277+55*floor(mod(t,8)/2))*t)+0.12*sin(2*PI*330*t)':s=48000:d=65";
  makeOnce(bed, ['-f', 'lavfi', '-i', chord, '-c:a', 'pcm_s16le']);
  return { video, bed };
}

/**
 * One project holding the source and the bed, and the source's transcript, made once (not timed): a data dir that
 * every run shares (a transcript's key names the media's place in it) and a cache dir whose inspections (the
 * transcript) are copied into each run's fresh cache.
 */
export async function prepared(video, bed) {
  const data = join(MEDIA, 'bench-data');
  const cache = join(MEDIA, 'bench-transcribed-cache');
  const idsFile = join(MEDIA, 'bench-ids.json');
  if (existsSync(idsFile)) return { data, cache, ...JSON.parse(readFileSync(idsFile, 'utf8')) };
  rmSync(data, { recursive: true, force: true });
  rmSync(cache, { recursive: true, force: true });
  const { client } = await connect({
    CUTROOM_DATA_DIR: data,
    CUTROOM_CACHE_DIR: cache,
    CUTROOM_ALLOWED_DIRS: MEDIA,
    CUTROOM_LOG_LEVEL: 'error',
    CUTROOM_RENDER_WAIT_MS: '55000',
  });
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, { timeout: 900_000 });
    if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
    return r.structuredContent;
  };
  const project = (await call('create_project', { name: 'mix', description: 'bench' })).project.id;
  const v = (await call('import_media', { project_id: project, path: video })).asset.id;
  const b = (await call('import_media', { project_id: project, path: bed })).asset.id;
  await call('transcribe_asset', { project_id: project, asset_id: v });
  await client.close();
  const ids = { project, v, b };
  writeFileSync(idsFile, JSON.stringify(ids));
  return { data, cache, ...ids };
}

async function previewOnce(p0, finished) {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-bench-mix-'));
  try {
    cpSync(join(p0.cache, 'inspections'), join(dir, 'cache', 'inspections'), { recursive: true });
    const { client } = await connect({
      CUTROOM_DATA_DIR: p0.data,
      CUTROOM_CACHE_DIR: join(dir, 'cache'),
      CUTROOM_ALLOWED_DIRS: MEDIA,
      CUTROOM_LOG_LEVEL: 'error',
      CUTROOM_RENDER_WAIT_MS: '55000',
    });
    const call = async (name, args) => {
      const r = await client.callTool({ name, arguments: args }, { timeout: 600_000 });
      if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
      return r.structuredContent;
    };
    const { project, v, b } = p0;
    const clips = Array.from({ length: 12 }, (_, i) => ({ asset_id: v, start: i * 6, end: i * 6 + 5 }));
    const overlay = { asset_id: b, at: 0, until: 60, gain_db: -6, ...(finished ? { role: 'music' } : {}) };
    const t = performance.now();
    const p = await call('preview_edit', {
      project_id: project,
      resolution: '1280x720',
      fps: 30,
      clips,
      overlays: [overlay],
      ...(finished ? { captions: { burn: true } } : {}),
    });
    const seconds = (performance.now() - t) / 1000;
    if (p.status !== 'done') throw new Error(`preview ${p.status}`);
    if (finished && p.warnings.some((w) => /transcri/.test(w)))
      throw new Error(`captions had no transcript: ${p.warnings.join('; ')}`);
    await client.close();
    return seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run() {
  const { video, bed } = media();
  const p0 = await prepared(video, bed);
  console.log(
    '60 s edit, 12 cuts of 5 s from a 720p moving picture with speech (flite slt), a chord bed over it; new previews, fresh cache each',
  );
  await previewOnce(p0, true); // warm-up (file cache, first ffmpeg start)
  const plain = [];
  const ducked = [];
  const ratios = [];
  for (let i = 0; i < REPS; i++) {
    const a = await previewOnce(p0, false);
    const b = await previewOnce(p0, true);
    plain.push(a);
    ducked.push(b);
    ratios.push(b / a);
  }
  const f = (s) => `median ${s.median.toFixed(2)} s (min ${s.min.toFixed(2)}, max ${s.max.toFixed(2)})`;
  console.log(`plain overlay:          ${f(stats(plain))}`);
  console.log(`ducked + captions:      ${f(stats(ducked))}`);
  const r = stats(ratios);
  console.log(
    `finished / plain, pair by pair: median ${r.median.toFixed(2)}x (min ${r.min.toFixed(2)}, max ${r.max.toFixed(2)}), n=${r.n} (target <= 1.3x)`,
  );
}
