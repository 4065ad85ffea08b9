// Issue 46 item 6: the filler measure alone (src/analysis/filler-sound.ts, as built in dist/), outside the server, on
// sound whose truth is known. Each flite voice says carrier sentences with items between them, each item alone
// between pauses: "uh" and "um" (fillers: found when a filler island covers half of one) and words people say alone
// ("no", "well", "oh", "I", "a", ...: taken when a filler island covers half of one), clean and under the scorecard's
// chord bed 10 and 20 dB down; then the LibriVox recordings of Debian's pocketsphinx-testdata (read speech, no filler
// in their text), each measured alone: how many islands between pauses, how many taken for fillers.
// BENCH_MEASURE names another build's filler-sound.js to measure the same sound with (a before/after pair).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { concatSound } from './media.mjs';

const VOICES = (process.env.BENCH_VOICES ?? 'slt,rms,awb,kal').split(',');
const BEDS = (process.env.BENCH_BEDS ?? 'clean,10,20').split(',');
const RATE = 16_000;
const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
const CARRIERS = [
  'we are so happy to see you all here tonight',
  'the lamp turned slowly over the water',
  'and the bell rang three times',
  'she saw a ship in the storm',
];
const FILLERS = ['uh', 'um', 'uh', 'um'];
const ALONE = ['yes', 'no', 'well', 'oh', 'I', 'a', 'and', 'the', 'so', 'now', 'right', 'why', 'okay', 'wow', 'hi'];
const PAUSE_S = 0.4;

function exec(cmd, args) {
  const r = spawnSync(cmd, args, { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}
const samplesOf = (file) => {
  const b = exec('ffmpeg', [
    '-v',
    'error',
    '-i',
    file,
    '-map',
    '0:a:0',
    '-ac',
    '1',
    '-ar',
    String(RATE),
    '-f',
    's16le',
    '-',
  ]);
  const pcm = new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1)));
  return Float32Array.from(pcm, (v) => v / 32768);
};

/**
 * `items` each said alone by `voice` after a carrier sentence, PAUSE_S more after each part than flite leaves; under
 * the chord bed `bed` dB under the speech (as bench/scorecard.mjs lays it) unless clean. The samples and each item's
 * true span (its first phone's start to its last's end).
 */
export function spoken(dir, voice, items, bed) {
  const parts = items.flatMap((item, i) => [
    { text: CARRIERS[i % CARRIERS.length], item: false },
    { text: item, item: true },
  ]);
  parts.push({ text: CARRIERS[items.length % CARRIERS.length], item: false });
  const truth = [];
  const files = [];
  let at = 0;
  parts.forEach((p, i) => {
    const wav = join(dir, `p${i}.wav`);
    const segs = exec('flite', ['-voice', voice, '-t', p.text, '-o', wav, '-psdur'])
      .toString()
      .trim()
      .split(/\s+/)
      .map((s) => ({ phone: s.slice(0, s.lastIndexOf(':')), end: Number(s.slice(s.lastIndexOf(':') + 1)) }));
    const first = segs.findIndex((s) => s.phone !== 'pau');
    const last = segs.findLastIndex((s) => s.phone !== 'pau');
    truth.push({ ...p, start: at + segs[first - 1].end, end: at + segs[last].end });
    const padded = join(dir, `pp${i}.wav`);
    exec('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      wav,
      '-af',
      `apad=pad_len=${Math.round(PAUSE_S * RATE)}`,
      '-ar',
      String(RATE),
      '-ac',
      '1',
      padded,
    ]);
    at +=
      Number(exec('ffprobe', ['-v', 'error', '-show_entries', 'stream=duration_ts', '-of', 'csv=p=0', padded])) / RATE;
    files.push(padded);
  });
  const wav = concatSound(files, join(dir, 'all.wav'));
  if (bed === 'clean') return { samples: samplesOf(wav), truth };
  const s = samplesOf(wav);
  let sum = 0;
  let n = 0;
  for (const p of truth)
    for (let i = Math.round(p.start * RATE); i < Math.min(s.length, Math.round(p.end * RATE)); i++) {
      sum += s[i] ** 2;
      n++;
    }
  const gain = 10 * Math.log10(sum / n) - Number(bed) - 10 * Math.log10(1.5 * 0.44);
  const mixed = join(dir, 'mixed.wav');
  exec('ffmpeg', [
    ...['-v', 'error', '-y', '-i', wav, '-filter_complex'],
    `sine=f=220:r=${RATE}[a];sine=f=261.6:r=${RATE}[b];sine=f=329.6:r=${RATE}[c];[a][b][c]amix=inputs=3:normalize=0,aeval='val(0)*(0.6+0.4*sin(2*PI*t/3))',volume=${gain.toFixed(2)}dB[bed];[0:a][bed]amix=inputs=2:normalize=0:duration=first[o]`,
    ...['-map', '[o]', '-c:a', 'pcm_s16le', mixed],
  ]);
  return { samples: samplesOf(mixed), truth };
}

/** The items a filler island covers half of or more. */
const taken = (islands, truth) =>
  truth.filter(
    (p) =>
      p.item &&
      islands.some((i) => i.filler && Math.min(i.to, p.end) - Math.max(i.from, p.start) >= (p.end - p.start) / 2),
  );

export async function run() {
  const measure = process.env.BENCH_MEASURE
    ? pathToFileURL(resolve(process.env.BENCH_MEASURE)).href
    : new URL('../dist/analysis/filler-sound.js', import.meta.url).href;
  const { soundIslands } = await import(measure);
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-fillers-'));
  try {
    console.log(
      '| voice | sound | fillers found (of 4) | words said alone taken for fillers (of 15) | carrier speech taken |',
    );
    console.log('|---|---|---|---|---|');
    const totals = { found: 0, fillers: 0, alone: 0, words: 0 };
    for (const voice of VOICES)
      for (const bed of BEDS) {
        const dir = mkdtempSync(join(root, `${voice}-${bed}-`));
        const f = spoken(join(dir), voice, FILLERS, bed);
        const fIslands = soundIslands(f.samples, RATE);
        const found = taken(fIslands, f.truth).length;
        const aDir = mkdtempSync(join(root, `${voice}-${bed}-alone-`));
        const a = spoken(aDir, voice, ALONE, bed);
        const aIslands = soundIslands(a.samples, RATE);
        const alone = taken(aIslands, a.truth).map((p) => p.text);
        // Carrier sentences a filler island lies in (a sentence's word between its own short pauses).
        const carriers = [f, a]
          .flatMap((m, k) =>
            m.truth
              .filter((p) => !p.item)
              .filter((p) => (k ? aIslands : fIslands).some((i) => i.filler && i.from < p.end && i.to > p.start)),
          )
          .map((p) => p.text.split(' ').slice(0, 3).join(' '));
        totals.found += found;
        totals.fillers += FILLERS.length;
        totals.alone += alone.length;
        totals.words += ALONE.length;
        console.log(
          `| ${voice} | ${bed === 'clean' ? 'clean' : `bed -${bed} dB`} | ${found} | ${alone.length}${alone.length ? ` (${alone.join(', ')})` : ''} | ${carriers.length}${carriers.length ? ` (${carriers.join('; ')})` : ''} |`,
        );
      }
    console.log(
      `all: fillers found ${totals.found} of ${totals.fillers}; words said alone taken ${totals.alone} of ${totals.words}`,
    );
    if (existsSync(LIBRIVOX)) {
      let islands = 0;
      const fillers = [];
      for (const f of readdirSync(LIBRIVOX).filter((n) => n.endsWith('.wav'))) {
        const found = soundIslands(samplesOf(join(LIBRIVOX, f)), RATE);
        islands += found.length;
        for (const i of found.filter((x) => x.filler))
          fillers.push(`${f.replace(/.*-(\d+)\.wav$/, '$1')} ${i.from.toFixed(2)}-${i.to.toFixed(2)} s`);
      }
      console.log(
        `LibriVox (5 recordings, each alone): ${islands} islands between pauses, ${fillers.length} taken for fillers${fillers.length ? ` (${fillers.join(', ')})` : ''}`,
      );
    } else console.log('LibriVox recordings not found (apt-get install pocketsphinx-testdata)');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
