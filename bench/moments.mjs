// Issue 32, item 8 (find_moments' share): how find_moments ranks planted good moments against filler, on speech made at
// bench time (test/fixtures/moment-media.mjs): 11 sentences, two planted moments (A: two sentences, B: one) about the
// lighthouse at full level over moving pictures cut into three shots each; filler off-topic, 12 dB quieter, on a still
// picture; a decoy off-topic at full level on the still picture. Per condition (flite voice; a music bed 10 or 20 dB
// under the speech; white noise), through the built server with a fresh cache: find_moments {about: "lighthouse"} and
// without about (count 10, 2-12 s). Figures: the rank of each plant's first moment, whether every moment in a plant
// comes before every moment outside them ("plants first"), the about signal of the plants' moments (how well the
// heard words match), and, without about, the decoy's rank.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from './lib.mjs';
import { ABOUT, makeMomentMedia, shareIn } from '../test/fixtures/moment-media.mjs';

const CONDITIONS = [
  { voice: 'slt' },
  { voice: 'rms' },
  { voice: 'awb' },
  { voice: 'kal' },
  { voice: 'rms', bedDb: 20 },
  { voice: 'rms', bedDb: 10 },
  { voice: 'slt', bedDb: 10 },
  { voice: 'rms', noiseDb: 21 },
];
const label = (c) =>
  `${c.voice}${c.bedDb !== undefined ? `, music bed ${c.bedDb} dB under` : ''}${c.noiseDb !== undefined ? `, white noise ${c.noiseDb} dB under` : ''}`;

export async function run() {
  const rows = [];
  // BENCH_CONDITIONS=3,7 runs only those (0-based).
  const only = process.env.BENCH_CONDITIONS?.split(',').map(Number);
  for (const c of only ? only.map((i) => CONDITIONS[i]) : CONDITIONS) {
    const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-moments-'));
    const allowed = join(root, 'allowed');
    const media = makeMomentMedia(allowed, c);
    const { client } = await connect({
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_CACHE_DIR: join(root, 'cache'),
      CUTROOM_ALLOWED_DIRS: allowed,
      CUTROOM_LOG_LEVEL: 'error',
    });
    const call = async (name, args) => {
      const r = await client.callTool({ name, arguments: args }, { timeout: 1_800_000 });
      if (r.isError) throw new Error(r.content[0].text);
      return r.structuredContent;
    };
    const project = (await call('create_project', { name: 'bench', description: 'moments' })).project.id;
    const asset = (await call('import_media', { project_id: project, path: media.video })).asset.id;
    const plantOf = (m) =>
      media.plants.find((p) => shareIn({ start: m.start_seconds, end: m.end_seconds }, p) >= 0.6)?.name;
    const figures = (found) => {
      const ms = found.moments;
      const rank = (name) => ms.findIndex((m) => plantOf(m) === name) + 1 || '-';
      const firstOutside = ms.findIndex((m) => !plantOf(m));
      const lastInside = ms.map((m, i) => (plantOf(m) ? i : -1)).reduce((a, b) => Math.max(a, b), -1);
      const about = ms.filter((m) => plantOf(m)).map((m) => m.signals.about ?? 0);
      return {
        A: rank('A'),
        B: rank('B'),
        first:
          lastInside >= 0 && (firstOutside < 0 || lastInside < firstOutside) && rank('A') !== '-' && rank('B') !== '-',
        about: about.length ? Math.min(...about).toFixed(2) : '-',
        decoy:
          ms.findIndex((m) => shareIn({ start: m.start_seconds, end: m.end_seconds }, media.decoy) >= 0.6) + 1 || '-',
      };
    };
    const t0 = performance.now();
    const found = await call('find_moments', {
      project_id: project,
      about: ABOUT,
      count: 10,
      min_seconds: 2,
      max_seconds: 12,
    });
    const withAbout = figures(found);
    const first = performance.now() - t0;
    const without = figures(
      await call('find_moments', { project_id: project, count: 10, min_seconds: 2, max_seconds: 12 }),
    );
    const transcript = await client.readResource({ uri: `vj://projects/${project}/assets/${asset}/transcript` }).then(
      (r) => JSON.parse(r.contents[0].text),
      () => ({ words: [], sentences: [] }),
    );
    const heard = transcript.words
      .filter((w) => /^light/i.test(w.word))
      .map((w) => w.word)
      .join(' ');
    for (const m of found.missing ?? []) console.log(`  missing: ${m.reason}`);
    if (!withAbout.first)
      console.log(
        `  ${transcript.words.length} words, ${transcript.sentences.length} sentences heard; top moments: ${found.moments
          .slice(0, 4)
          .map((m) => `${m.start_seconds}-${m.end_seconds} (${m.score})`)
          .join(
            ', ',
          )}; plants ${media.plants.map((p) => `${p.name} ${p.start.toFixed(2)}-${p.end.toFixed(2)}`).join(', ')}`,
      );
    rows.push({ c, withAbout, without, heard });
    console.log(
      `${label(c)}: about: A #${withAbout.A}, B #${withAbout.B}, plants first ${withAbout.first ? 'yes' : 'NO'}, about signal >= ${withAbout.about}; ` +
        `without about: A #${without.A}, B #${without.B}, plants first ${without.first ? 'yes' : 'NO'}, decoy #${without.decoy}; ` +
        `"light..." heard as: ${heard || '(none)'}; first call ${(first / 1000).toFixed(1)} s`,
    );
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
  const ok = rows.filter((r) => r.withAbout.first).length;
  const ok2 = rows.filter((r) => r.without.first).length;
  console.log(`plants ranked first: ${ok}/${rows.length} conditions with about, ${ok2}/${rows.length} without`);
}
