// Issue 19's target: transcribe_asset on 10 minutes of speech with the default engine (PocketSphinx) takes at most
// 0.5x real time; a second call (cached) at most 0.1x the first. The speech: Debian's flite ("rms" voice) reading 20
// varied English sentences over and over, with a pause after each, to 10 minutes, as a 16 kHz WAV and as 720p video
// with AAC sound. Through the built server over stdio, a fresh cache dir for each first call. Also: the word accuracy
// of free recognition and the alignment of the known text (how many of its words were heard).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, stats } from './lib.mjs';
import { concatSound, makeOnce, silence } from './media.mjs';

const MEDIA = join(tmpdir(), 'cutroom-bench-media-v1');
const REPS = Number(process.env.BENCH_REPS ?? 3);
const SECONDS = 600;
const LINES = [
  'The lighthouse keeper walked along the shore before the sun came up.',
  'She saw a ship in the storm and rang the bell three times.',
  'Every night the light turned slowly over the dark water.',
  'The old road runs past the mill and down to the harbour.',
  'We sailed at noon with a cargo of apples and salt.',
  'A cold wind came from the north and the waves grew high.',
  'The children ran to the market to buy bread and fish.',
  'He wrote a letter to his brother in the city.',
  'Nobody knew where the small boat had gone that morning.',
  'The captain looked at the map and chose the western passage.',
  'Rain fell on the roof all afternoon and the river rose.',
  'My grandmother kept a garden full of roses and green beans.',
  'The train left the station late and arrived after dark.',
  'They built a bridge of stone across the narrow valley.',
  'The teacher asked the class to read the first chapter aloud.',
  'A black cat slept in the window of the bakery.',
  'The doctor said the fever would break by Sunday.',
  'We found an old photograph inside a box of books.',
  'The band played music in the square until midnight.',
  'At the end of the summer the family moved to the coast.',
];

function make() {
  mkdirSync(MEDIA, { recursive: true });
  const wav = join(MEDIA, 'speech-10min.wav');
  const video = join(MEDIA, 'speech-10min-720p.mp4');
  const text = join(MEDIA, 'speech-10min.txt');
  if (existsSync(wav) && existsSync(video) && existsSync(text)) return { wav, video, text };
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-bench-speech-'));
  const parts = LINES.map((line, i) => {
    const f = join(dir, `line${i}.wav`);
    const r = spawnSync('flite', ['-voice', 'rms', '-t', line, '-o', f]);
    if (r.status !== 0) throw new Error(`flite failed: ${r.stderr}`);
    return f;
  });
  // The lines in order, 0.6 s of silence after each, over and over to 10 minutes; the words said, in a text file.
  const gap = silence(join(dir, 'gap.wav'), 0.6);
  const files = [];
  const said = [];
  let t = 0;
  for (let i = 0; t < SECONDS; i++) {
    const dur = Number(
      spawnSync('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'format=duration',
        '-of',
        'csv=p=0',
        parts[i % LINES.length],
      ]).stdout.toString(),
    );
    if (t + dur > SECONDS) break;
    files.push(parts[i % LINES.length], gap);
    said.push(LINES[i % LINES.length]);
    t += dur + 0.6;
  }
  const tmp = `${wav}.part.wav`;
  concatSound(files, tmp, ['-af', `apad=whole_dur=${SECONDS}`, '-ar', '16000', '-ac', '1']);
  renameSync(tmp, wav);
  makeOnce(video, [
    ...['-f', 'lavfi', '-i', `testsrc2=s=1280x720:r=30:d=${SECONDS}`, '-i', wav],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-c:a', 'aac', '-b:a', '128k', '-shortest'],
  ]);
  writeFileSync(text, said.join(' '));
  rmSync(dir, { recursive: true, force: true });
  return { wav, video, text };
}

const keys = (s) =>
  s
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Words of `truth` found in `heard` in order (longest common subsequence), as a fraction of `truth`. */
function accuracy(truth, heard) {
  let prev = new Uint16Array(heard.length + 1);
  for (let i = truth.length - 1; i >= 0; i--) {
    const row = new Uint16Array(heard.length + 1);
    for (let j = heard.length - 1; j >= 0; j--)
      row[j] = truth[i] === heard[j] ? prev[j + 1] + 1 : Math.max(prev[j], row[j + 1]);
    prev = row;
  }
  return prev[0] / truth.length;
}

export async function run() {
  console.log('making 10 minutes of speech (cached between runs)...');
  const media = make();
  const { readFileSync } = await import('node:fs');
  const text = readFileSync(media.text, 'utf8');
  const truth = keys(text);
  const allowed = MEDIA;
  for (const [label, file] of [
    ['16 kHz WAV', media.wav],
    ['720p video, AAC sound', media.video],
  ]) {
    const firsts = [];
    const seconds = [];
    let acc = 0;
    for (let rep = 0; rep < REPS; rep++) {
      const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-transcribe-'));
      const { client } = await connect({
        CUTROOM_DATA_DIR: join(root, 'data'),
        CUTROOM_CACHE_DIR: join(root, 'cache'),
        CUTROOM_ALLOWED_DIRS: allowed,
        CUTROOM_LOG_LEVEL: 'error',
      });
      const call = (name, args) => client.callTool({ name, arguments: args }, { timeout: 1_800_000 });
      const project = (await call('create_project', { name: 'bench', description: 'speech' })).structuredContent.project
        .id;
      const asset = (await call('import_media', { project_id: project, path: file })).structuredContent.asset.id;
      let t0 = performance.now();
      const r = await call('transcribe_asset', { project_id: project, asset_id: asset });
      firsts.push(performance.now() - t0);
      if (r.isError) throw new Error(r.content[0].text);
      // The result is paged (sentences first); the resource has every word.
      const whole = async () =>
        JSON.parse(
          (await client.readResource({ uri: `vj://projects/${project}/assets/${asset}/transcript` })).contents[0].text,
        );
      acc = accuracy(
        truth,
        (await whole()).words.map((w) => w.word.toLowerCase()),
      );
      t0 = performance.now();
      await call('transcribe_asset', { project_id: project, asset_id: asset });
      seconds.push(performance.now() - t0);
      if (rep === 0) {
        t0 = performance.now();
        const a = await call('transcribe_asset', { project_id: project, asset_id: asset, text });
        const ms = performance.now() - t0;
        if (a.isError) throw new Error(a.content[0].text);
        const aligned = await whole();
        const w = aligned.words.length;
        console.log(
          `${label}: aligning the known text (${w} words): ${(ms / 1000).toFixed(1)} s (${(ms / 1000 / SECONDS).toFixed(3)}x real time), ${w - (aligned.unplaced?.length ?? 0)} of ${w} words heard`,
        );
      }
      await client.close();
      rmSync(root, { recursive: true, force: true });
    }
    const f = stats(firsts);
    const s = stats(seconds);
    console.log(
      `${label}: free recognition of ${SECONDS} s: median ${(f.median / 1000).toFixed(1)} s over ${REPS} => ${(f.median / 1000 / SECONDS).toFixed(3)}x real time (target <= 0.5x); word accuracy ${(acc * 100).toFixed(1)}%`,
    );
    console.log(
      `${label}: the same call again (cached): median ${s.median.toFixed(0)} ms => ${(s.median / f.median).toFixed(4)}x the first (target <= 0.1x)`,
    );
  }
}
