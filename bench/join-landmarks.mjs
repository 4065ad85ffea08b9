// Issue 46 item 1: how close the sound itself places a join between run-together words (src/analysis/join-landmarks.ts),
// against flite's true boundaries. The sentences of cut-words in four voices, clean and under a bed 10 and 20 dB down
// (bench/cut-words.mjs makeMedia, through AAC as the server reads them); at every join where a word ending in no
// obstruent runs into one starting with s, sh or z (the cmudict's phones), the onset is searched for within 30 ms of
// a boundary put 0, 10, 20 and 25 ms early and late (what an agreed boundary errs by); its error, found - true (ms).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeMedia } from './cut-words.mjs';
import { parseCmudict, phoneNames } from '../dist/analysis/dictionary.js';
import { sibilantJoin, sibilantOnset } from '../dist/analysis/join-landmarks.js';

const VOICES = (process.env.BENCH_VOICES ?? 'slt,rms,awb,kal').split(',');
const BEDS = (process.env.BENCH_BEDS ?? 'clean,10,20').split(',');
const OFFSETS = [-0.025, -0.02, -0.01, 0, 0.01, 0.02, 0.025];
const DICT = '/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict';
const RATE = 16_000;

export async function run() {
  const dict = parseCmudict(readFileSync(DICT, 'utf8'));
  const ends = (w) => dict.lookup(w.toLowerCase()).map((p) => phoneNames(p).split(' ').at(-1));
  const starts = (w) => dict.lookup(w.toLowerCase()).map((p) => phoneNames(p).split(' ')[0]);
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-joins-'));
  const all = [];
  let searched = 0;
  try {
    for (const voice of VOICES)
      for (const bed of BEDS) {
        const dir = join(root, `${voice}-${bed}`);
        mkdirSync(dir);
        const { video, words } = makeMedia(dir, voice, bed);
        const b = spawnSync(
          'ffmpeg',
          ['-v', 'error', '-i', video, '-map', '0:a:0', '-ac', '1', '-ar', String(RATE), '-f', 's16le', '-'],
          { maxBuffer: 1 << 28 },
        ).stdout;
        const pcm = new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1)));
        const x = Float32Array.from(pcm, (v) => v / 32768);
        const errs = [];
        for (let i = 0; i + 1 < words.length; i++) {
          const [a, c] = [words[i], words[i + 1]];
          if (a.sentence !== c.sentence || c.start - a.end > 0.001 || !sibilantJoin(ends(a.word), starts(c.word)))
            continue;
          const from = a.end - 0.4;
          const seg = x.subarray(Math.round(from * RATE), Math.round((a.end + 0.4) * RATE));
          for (const o of OFFSETS) {
            searched++;
            const f = sibilantOnset(seg, RATE, 0.4 + o, 0.03);
            if (f !== undefined) errs.push((f - 0.4) * 1000);
          }
        }
        all.push(...errs);
        console.log(`${voice} ${bed === 'clean' ? 'clean' : `bed -${bed} dB`}: ${line(errs)}`);
      }
    console.log(`all: ${all.length} found of ${searched} searched; ${line(all)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function line(errs) {
  const e = [...errs].sort((a, b) => a - b);
  const q = (p) => e[Math.min(e.length - 1, Math.floor(e.length * p))]?.toFixed(0);
  const abs = e.map(Math.abs).sort((a, b) => a - b);
  return `error (found - true, ms) min ${q(0)} p5 ${q(0.05)} median ${q(0.5)} p95 ${q(0.95)} max ${q(1)}; |error| p90 ${abs[Math.floor(abs.length * 0.9)]?.toFixed(0)}`;
}
