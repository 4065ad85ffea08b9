// Issue 32 item 5: speech under a music bed and noise. Word error rate of free recognition (PocketSphinx, the
// engine cutroom finds) per voice and condition, before (the sound as it is: clean 'never') and after (what cutroom
// does: clean 'auto', which takes a bed or noise off only where the pauses are loud against the speech), and with
// cleaning forced on clean speech ('always'), to show why it is not done there. The media are made at bench time
// (test/fixtures/speech-beds.mjs): flite voices slt, rms, awb, kal reading 8 lines; a tonal music bed 10 and 20 dB
// under the speech; noise 20 dB under. Recognition goes through cutroom's own recognize() (dist/), as the server
// runs it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';
import { BED_LINES, CONDITIONS, sayLines, wordErrorRate, writeWav } from '../test/fixtures/speech-beds.mjs';

const VOICES = (process.env.BENCH_VOICES ?? 'slt,rms,awb,kal').split(',');

export async function run() {
  const { recognize, locateSpeechEngine } = await import(join(ROOT, 'dist/media/speech.js'));
  const { soundLevels } = await import(join(ROOT, 'dist/media/speech-cleaning.js'));
  const { Limiter } = await import(join(ROOT, 'dist/media/probe.js'));
  const engine = await locateSpeechEngine({ searchPath: process.env.PATH });
  if (engine?.name !== 'pocketsphinx')
    throw new Error('PocketSphinx is not installed (apt-get install pocketsphinx pocketsphinx-en-us)');
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-bench-noise-'));
  const limiter = new Limiter(2);
  const said = BED_LINES.join(' ');
  const hear = async (file, clean) => {
    const r = await recognize({
      ffmpeg: 'ffmpeg',
      engine,
      limiter,
      source: { kind: 'file', path: file },
      fromSec: 0,
      toSec: 1e6,
      scratchDir: dir,
      pieces: 1,
      timeoutMs: 600_000,
      clean,
    });
    return { wer: wordErrorRate(said, r.words.map((w) => w.word).join(' ')), cleaned: r.cleaned };
  };
  const pct = (x) => `${(x * 100).toFixed(0)}%`.padStart(4);
  const rows = [];
  try {
    const jobs = [];
    for (const voice of VOICES) {
      const speech = sayLines(dir, voice);
      for (const [condition, make] of Object.entries(CONDITIONS)) {
        const file = writeWav(join(dir, `${voice}-${condition.replace(/\W+/g, '-')}.wav`), make(speech));
        const row = { voice, condition, seconds: speech.length / 16000 };
        rows.push(row);
        jobs.push(async () => {
          const { readFileSync, writeFileSync } = await import('node:fs');
          const raw = `${file}.pcm`;
          writeFileSync(raw, readFileSync(file).subarray(44));
          const l = await soundLevels(raw);
          row.gap = l.speechDb - l.pauseDb;
          row.before = (await hear(file, 'never')).wer;
          const after = await hear(file, 'auto');
          row.after = after.wer;
          row.cleaned = after.cleaned;
          if (condition === 'clean') row.forced = (await hear(file, 'always')).wer;
        });
      }
    }
    // Two recognitions at a time (the limiter), one job after another per slot.
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < jobs.length) await jobs[next++]();
      }),
    );
    console.log(
      `${BED_LINES.length} lines, ${BED_LINES.join(' ').split(' ').length} words per voice; WER before -> after (cleaned?), pauses' level under the speech`,
    );
    for (const r of rows) {
      console.log(
        `${r.voice.padEnd(4)} ${r.condition.padEnd(18)} ${pct(r.before)} -> ${pct(r.after)} ${r.cleaned ? 'cleaned' : 'as is  '}  pauses ${r.gap > 99 ? 'silent' : `${r.gap.toFixed(1)} dB under`}${r.forced !== undefined ? `; cleaning forced: ${pct(r.forced)}` : ''}`,
      );
    }
    for (const condition of Object.keys(CONDITIONS)) {
      const of = rows.filter((r) => r.condition === condition);
      const mean = (k) => of.reduce((a, r) => a + r[k], 0) / of.length;
      const noKal = of.filter((r) => r.voice !== 'kal');
      const meanNoKal = (k) => noKal.reduce((a, r) => a + r[k], 0) / (noKal.length || 1);
      console.log(
        `mean ${condition.padEnd(18)} ${pct(mean('before'))} -> ${pct(mean('after'))}   (slt, rms, awb: ${pct(meanNoKal('before'))} -> ${pct(meanNoKal('after'))})`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
