// Speech for the search benchmark, made at bench time: flite's voices say lines in which words are planted, and the
// true time of every word is known (flite's own segment times, as test/helpers/flite-words.ts reads them). Each
// recording can be laid under a music bed (a tonal chord that changes every 2 s) or light noise, at a level in dB
// under the speech's RMS.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SEARCH_LINES } from '../test/fixtures/search-lines.mjs';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.error}`);
  return r.stdout;
}

/** Lines said; the planted words are among them (each said 2-4 times in all). */
export const LINES = SEARCH_LINES;
/** Words planted in the lines: every occurrence must be found. */
export const PLANTED = [
  'lighthouse',
  'keeper',
  'harbour',
  'captain',
  'fisherman',
  'heron',
  'postman',
  'island',
  'market',
  'parcel',
];
/** Words never said: any hit for them is a false one. */
export const DECOYS = [
  'mountain',
  'teacher',
  'bicycle',
  'doctor',
  'garden',
  'station',
  'window',
  'kitchen',
  'blanket',
  'dinosaur',
];

export const VOICES = ['slt', 'rms', 'awb', 'kal'];
/** The conditions: clean, a music bed 20 and 10 dB under the speech, and noise 25 dB under. */
export const CONDITIONS = [
  { name: 'clean' },
  { name: 'music -20 dB', bed: 'music', under: 20 },
  { name: 'music -10 dB', bed: 'music', under: 10 },
  { name: 'noise -25 dB', bed: 'noise', under: 25 },
];

const words = (text) => text.split(/[^A-Za-z']+/).filter(Boolean);
const phonesAlone = (word, voice) =>
  run('flite', ['-voice', voice, '-t', word, 'none', '-ps'])
    .trim()
    .split(/\s+/)
    .filter((p) => p && p !== 'pau');

/** Says `text` in `voice` into `wav`; every word with its true start and end (as test/helpers/flite-words.ts). */
export function sayWithWordTimes(text, wav, voice) {
  const segments = run('flite', ['-voice', voice, '-t', text, '-o', wav, '-psdur'])
    .trim()
    .split(/\s+/)
    .map((s) => ({ phone: s.slice(0, s.lastIndexOf(':')), end: Number(s.slice(s.lastIndexOf(':') + 1)) }));
  const out = [];
  let k = 0;
  let prevEnd = 0;
  for (const word of words(text)) {
    const want = phonesAlone(word, voice).length;
    while (k < segments.length && segments[k].phone === 'pau') prevEnd = segments[k++].end;
    if (segments.slice(k, k + want).some((s) => s.phone === 'pau') || k + want > segments.length)
      throw new Error(`"${word}" was said otherwise in context`);
    out.push({ word: word.toLowerCase(), start: prevEnd, end: segments[k + want - 1].end });
    prevEnd = segments[k + want - 1].end;
    k += want;
  }
  return out;
}

/** A file's RMS level, dB. */
const rmsDb = (file) => {
  const r = spawnSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-nostdin',
      '-i',
      file,
      '-af',
      'astats=measure_overall=RMS_level:measure_perchannel=none',
      '-f',
      'null',
      '-',
    ],
    { encoding: 'utf8' },
  );
  return Number(/RMS level dB: (-?[\d.]+)/.exec(r.stderr)[1]);
};

/**
 * The lines said by `voice`, one after the other with 0.5 s between them, as a 16 kHz WAV under `dir`, laid under
 * `condition`'s bed; and the true words with their times on the recording's clock.
 */
export function makeRecording(dir, voice, condition) {
  mkdirSync(dir, { recursive: true });
  const clean = join(dir, `${voice}-clean.wav`);
  const truth = sayWithWordTimes(LINES.join(' '), join(dir, `${voice}-flite.wav`), voice);
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-i',
    join(dir, `${voice}-flite.wav`),
    '-af',
    'apad=pad_dur=0.5',
    '-ar',
    '16000',
    '-ac',
    '1',
    clean,
  ]);
  if (!condition.bed) return { wav: clean, truth };
  const duration = truth.at(-1).end + 0.5;
  const speechDb = rmsDb(clean);
  const bed = join(dir, `${voice}-${condition.bed}.wav`);
  // A chord of three sines whose root steps every 2 s (a tonal bed, steady where speech pauses), or pink noise.
  const src =
    condition.bed === 'music'
      ? `aevalsrc='0.3*sin(2*PI*t*(220*pow(2,mod(floor(t/2)*5,12)/12)))+0.2*sin(2*PI*t*(277*pow(2,mod(floor(t/2)*5,12)/12)))+0.2*sin(2*PI*t*(330*pow(2,mod(floor(t/2)*5,12)/12)))':s=16000:d=${duration}`
      : `anoisesrc=c=pink:r=16000:a=0.3:seed=1:d=${duration}`; // a fixed seed: the same noise every run
  run('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', src, '-ac', '1', bed]);
  const gain = speechDb - condition.under - rmsDb(bed);
  const out = join(dir, `${voice}-${condition.bed}-${condition.under}.wav`);
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-i',
    clean,
    '-i',
    bed,
    '-filter_complex',
    `[1:a]volume=${gain.toFixed(2)}dB[b];[0:a][b]amix=inputs=2:normalize=0:duration=first[a]`,
    '-map',
    '[a]',
    '-ar',
    '16000',
    '-ac',
    '1',
    out,
  ]);
  return { wav: out, truth };
}
