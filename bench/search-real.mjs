// Issue 47 item 4, a real voice as a check on listening's rules (tuned on flite's voices, bench/search.mjs): the five
// LibriVox sentences of Debian's pocketsphinx-testdata (a woman reading "Sense and Sensibility", 25 s) joined into one
// asset. Their transcripts give the words said per sentence, not their times: a hit for a word said is right when it
// lies in a sentence that says it (at most as many as it says there); every other hit is false, and words never said
// (the flite bench's 20, and sound-alikes of words said: "leather" for "leisure", "powder" for "power") count false
// hits. Searched with and without listen, each query once the asset has its phone pass.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from './lib.mjs';
import { DECOYS, PLANTED } from './search-media.mjs';

const DATA = '/usr/share/pocketsphinx/test/data/librivox';
/** Words said, each a query: content words of the five sentences. */
const SAID = [
  'dashwood',
  'leisure',
  'consider',
  'prudently',
  'power',
  'disposed',
  'selfish',
  'hearted',
  'married',
  'amiable',
  'woman',
  'respectable',
  'himself',
  'young',
  'cold',
];
/** Never said: the flite bench's words and sound-alikes of words said. */
const UNSAID = [...PLANTED, ...DECOYS, 'leather', 'powder', 'shellfish', 'golden', 'hurried', 'dashboard', 'desire'];
const SILENCE = 0.5;

function sentences() {
  const out = [];
  for (const line of readFileSync(join(DATA, 'transcription'), 'utf8').trim().split('\n')) {
    const m = /^<s> (.*) <\/s> \((.*)\)$/.exec(line.trim());
    if (m) out.push({ words: m[1].split(' '), file: join(DATA, `${m[2]}.wav`) });
  }
  return out;
}

export async function run() {
  if (!existsSync(DATA)) {
    console.log(`search-real: ${DATA} not found (Debian's pocketsphinx-testdata); skipped`);
    return;
  }
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-search-real-'));
  const media = join(root, 'media');
  mkdirSync(media, { recursive: true });
  const said = sentences();
  // The sentences one after the other with half a second of silence between: each one's span on the asset's clock.
  let at = 0;
  for (const s of said) {
    const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', s.file], {
      encoding: 'utf8',
    });
    s.from = at;
    s.to = at + Number(probe.stdout.trim());
    at = s.to + SILENCE;
  }
  const wav = join(media, 'librivox.wav');
  const inputs = said.flatMap((s) => ['-i', s.file]);
  const chain = said.map((_, k) => `[${k}:a]apad=pad_dur=${SILENCE}[a${k}]`).join(';');
  const r = spawnSync('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    ...inputs,
    '-filter_complex',
    `${chain};${said.map((_, k) => `[a${k}]`).join('')}concat=n=${said.length}:v=0:a=1[o]`,
    '-map',
    '[o]',
    '-ar',
    '16000',
    '-ac',
    '1',
    wav,
  ]);
  if (r.status !== 0) throw new Error(`ffmpeg: ${r.stderr}`);
  const { client } = await connect({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: media,
    CUTROOM_LOG_LEVEL: 'error',
  });
  const call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args }, { timeout: 1_800_000 });
    if (res.isError) throw new Error(`${name}: ${res.content[0].text}`);
    return res.structuredContent;
  };
  try {
    const project = (await call('create_project', { name: 'librivox', description: 'search bench, real voice' }))
      .project.id;
    const asset = (await call('import_media', { project_id: project, path: wav })).asset.id;
    await call('transcribe_asset', { project_id: project, asset_id: asset });
    for (const listen of [false, true]) {
      const t = { said: 0, found: 0, wrong: 0, right: 0, missed: [], false: [] };
      for (const query of [...SAID, ...UNSAID]) {
        const res = await call('search_transcripts', {
          project_id: project,
          query,
          asset_ids: [asset],
          ...(listen ? { listen: true } : {}),
        });
        for (const s of said) {
          const times = s.words.filter((w) => w === query).length;
          const inside = res.hits.filter((h) => h.start_seconds >= s.from - 0.3 && h.start_seconds < s.to);
          t.said += times;
          t.found += Math.min(times, inside.length);
          t.right += Math.min(times, inside.length);
          if (inside.length < times) t.missed.push(`${query}@${s.from.toFixed(1)}`);
          for (const h of inside.slice(times)) t.false.push(`${query}~"${h.text}"(${h.match} ${h.score})`);
          t.wrong += Math.max(0, inside.length - times);
        }
        const outside = res.hits.filter(
          (h) => !said.some((s) => h.start_seconds >= s.from - 0.3 && h.start_seconds < s.to),
        );
        t.wrong += outside.length;
        for (const h of outside) t.false.push(`${query}~"${h.text}"(${h.match} ${h.score})`);
      }
      console.log(
        `librivox${listen ? ', listen' : ''}: found ${t.found}/${t.said} = ${(t.found / t.said).toFixed(2)}, false hits ${t.wrong}, precision ${(t.right / Math.max(1, t.right + t.wrong)).toFixed(2)}` +
          (t.missed.length ? `; missed ${t.missed.join(' ')}` : '') +
          (t.false.length ? `; false ${t.false.join(' ')}` : ''),
      );
    }
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}
