// Issue 32 item 8, search: recall and precision of search_transcripts for planted words, including ones free
// recognition mishears, by spelling, by sound and by listening. Speech made at bench time (bench/search-media.mjs):
// flite's voices slt, rms, awb and kal say 12 lines in which 10 words are planted (18 occurrences), clean, under a
// music bed 20 and 10 dB under the speech and under pink noise 25 dB under. Each recording is an asset of a project
// on the built server; every planted word and 10 decoys (never said) are searched, with and without listen. A hit
// is right when it is a planted word and lies within 0.3 s of a true occurrence of it; every other hit is false.
// Each listening search is timed, the asset's first apart from the rest, as a fraction of the recording's length
// (issue 47, item 4: listening paid once per asset): on the wall clock (as the agent waits; it grows with the
// machine's load) and in CPU (the server's and its finished children's, ffmpeg and PocketSphinx, from /proc: what
// the search costs whatever else runs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from './lib.mjs';
import { CONDITIONS, DECOYS, PLANTED, VOICES, makeRecording } from './search-media.mjs';

const voices = process.env.BENCH_VOICES?.split(',') ?? VOICES;
const conditions = CONDITIONS.filter(
  (c) => !process.env.BENCH_CONDITIONS || process.env.BENCH_CONDITIONS.split(',').includes(c.name),
);
const MATCHES = ['exact', 'sounds_like', 'heard'];

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-search-'));
  const media = join(root, 'media');
  const { client, transport } = await connect({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: media,
    CUTROOM_LOG_LEVEL: 'error',
  });
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, { timeout: 1_800_000 });
    if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
    return r.structuredContent;
  };
  const total = {};
  const times = { first: [], rest: [] };
  const cpu = { first: [], rest: [] };
  /** CPU seconds of the server and of its children it has waited for (utime, stime, cutime, cstime). */
  const cpuSeconds = () =>
    readFileSync(`/proc/${transport.pid}/stat`, 'utf8')
      .slice(readFileSync(`/proc/${transport.pid}/stat`, 'utf8').lastIndexOf(')') + 2)
      .split(' ')
      .slice(11, 15)
      .reduce((n, t) => n + Number(t), 0) / 100;
  try {
    for (const condition of conditions) {
      for (const voice of voices) {
        const { wav, truth } = makeRecording(join(media, condition.name.replace(/\W+/g, '-')), voice, condition);
        const project = (
          await call('create_project', { name: `${voice} ${condition.name}`, description: 'search bench' })
        ).project.id;
        const asset = (await call('import_media', { project_id: project, path: wav })).asset.id;
        const { duration_seconds: length } = await call('transcribe_asset', { project_id: project, asset_id: asset });
        for (const listen of [false, true]) {
          const tally = {
            said: 0,
            found: 0,
            right: 0,
            wrong: 0,
            near: 0,
            missed: [],
            false: [],
            by: Object.fromEntries(MATCHES.map((m) => [m, 0])),
          };
          for (const [n, query] of [...PLANTED, ...DECOYS].entries()) {
            const began = performance.now();
            const cpuBefore = cpuSeconds();
            const r = await call('search_transcripts', {
              project_id: project,
              query,
              asset_ids: [asset],
              ...(listen ? { listen: true } : {}),
            });
            if (listen) {
              times[n ? 'rest' : 'first'].push((performance.now() - began) / 1000 / length);
              cpu[n ? 'rest' : 'first'].push((cpuSeconds() - cpuBefore) / length);
            }
            if (r.next_offset !== undefined) throw new Error('more hits than a page');
            const said = truth.filter((w) => w.word === query);
            const isRight = (h) => said.some((w) => Math.abs(h.start_seconds - w.start) <= 0.3);
            tally.said += said.length;
            for (const w of said) {
              const h = r.hits.find((x) => Math.abs(x.start_seconds - w.start) <= 0.3);
              if (h) {
                tally.found++;
                tally.by[h.match]++;
              } else tally.missed.push(`${query}@${w.start.toFixed(1)}`);
            }
            for (const h of r.hits) {
              if (isRight(h)) tally.right++;
              else {
                tally.wrong++;
                tally.false.push(`${query}~"${h.text}"(${h.match} ${h.score})`);
              }
            }
            tally.near += r.near_misses?.length ?? 0;
          }
          const key = `${condition.name}${listen ? ', listen' : ''}`;
          const t = (total[key] ??= { said: 0, found: 0, right: 0, wrong: 0, near: 0 });
          for (const k of Object.keys(t)) t[k] += tally[k];
          console.log(
            `${condition.name}, ${voice}${listen ? ', listen' : ''}: found ${tally.found}/${tally.said} (${MATCHES.map((m) => `${m} ${tally.by[m]}`).join(', ')}), false hits ${tally.wrong}, precision ${(tally.right / Math.max(1, tally.right + tally.wrong)).toFixed(2)}, near misses ${tally.near}` +
              (tally.missed.length ? `; missed ${tally.missed.join(' ')}` : '') +
              (tally.false.length ? `; false ${tally.false.join(' ')}` : ''),
          );
        }
      }
    }
    console.log('\nper condition, all voices:');
    for (const [key, t] of Object.entries(total))
      console.log(
        `${key}: recall ${t.found}/${t.said} = ${(t.found / t.said).toFixed(2)}, precision ${(t.right / Math.max(1, t.right + t.wrong)).toFixed(2)} (${t.wrong} false), near misses ${t.near}`,
      );
    const fraction = (xs) => {
      const s = [...xs].sort((a, b) => a - b);
      const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))]?.toFixed(3);
      return `median ${at(0.5)}, p90 ${at(0.9)}, max ${s.at(-1)?.toFixed(3)} (${s.length} searches)`;
    };
    console.log(`listening's wall time / speech length: an asset's first search ${fraction(times.first)}`);
    console.log(`  every later search of it ${fraction(times.rest)}`);
    console.log(`listening's CPU / speech length: an asset's first search ${fraction(cpu.first)}`);
    console.log(`  every later search of it ${fraction(cpu.rest)}`);
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}
