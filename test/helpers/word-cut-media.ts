// Speech with every word's true start and end (flite's own phone times, test/helpers/flite-words.ts): sentences said
// one by one in a voice, laid on a timeline with pauses between them, optionally over a tonal music bed (three sines
// under a slow swell), a steady tone or room tone a given number of dB under the speech; as a 25 fps video with AAC
// sound.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sayWithWordTimes } from './flite-words.js';

export interface PlacedWord {
  word: string;
  start: number;
  end: number;
  sentence: number;
}

function run(cmd: string, args: string[]): Buffer {
  const r = spawnSync(cmd, args, { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}

function pcm(file: string): Int16Array {
  const b = run('ffmpeg', ['-v', 'error', '-i', file, '-ac', '1', '-ar', '16000', '-f', 's16le', '-']);
  return new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1)));
}

/** RMS in dBFS of the samples inside the given spans. */
function rmsDb(s: Int16Array, spans: { start: number; end: number }[]): number {
  let sum = 0;
  let n = 0;
  for (const w of spans)
    for (let i = Math.round(w.start * 16000); i < Math.min(s.length, Math.round(w.end * 16000)); i++) {
      sum += (s[i]! / 32768) ** 2;
      n++;
    }
  return 10 * Math.log10(sum / n);
}

export const WORD_CUT_FPS = 25;
/** The steady tone of the `tone` bed (a hum's or a held note's): a whole number of samples a period at 16 and 48 kHz. */
export const TONE_HZ = 500;

/**
 * `sentences` said in `voice` after `lead` s of silence, with `gaps` between them; `bedDb` under the speech, or none:
 * the tonal music bed, `room` tone (steady pink noise, as a room's hiss), or a steady `tone` (a sine at `toneHz`).
 */
export function makeWordCutMedia(
  dir: string,
  name: string,
  voice: string,
  sentences: string[],
  gaps: number[],
  bedDb?: number,
  bed: 'music' | 'room' | 'tone' = 'music',
  toneHz = TONE_HZ,
): { video: string; words: PlacedWord[] } {
  const words: PlacedWord[] = [];
  const list: string[] = [];
  const silence = (sec: number, file: string) =>
    run('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'anullsrc=r=16000:cl=mono',
      '-t',
      String(sec),
      '-c:a',
      'pcm_s16le',
      file,
    ]);
  let t = 0.7;
  silence(t, join(dir, `${name}-lead.wav`));
  list.push(`file '${join(dir, `${name}-lead.wav`)}'`);
  sentences.forEach((text, i) => {
    const said = join(dir, `${name}-s${i}.wav`);
    const ws = sayWithWordTimes(text, said, voice);
    const even = join(dir, `${name}-s${i}-16k.wav`);
    run('ffmpeg', ['-v', 'error', '-y', '-i', said, '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', even]);
    const sec = Number(
      run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', even]).toString(),
    );
    for (const w of ws) words.push({ word: w.word, start: t + w.start, end: t + w.end, sentence: i });
    const gap = join(dir, `${name}-gap${i}.wav`);
    silence(gaps[i % gaps.length]!, gap);
    list.push(`file '${even}'`, `file '${gap}'`);
    t += sec + gaps[i % gaps.length]!;
  });
  writeFileSync(join(dir, `${name}-list.txt`), `${list.join('\n')}\n`);
  const speech = join(dir, `${name}-speech.wav`);
  run('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    join(dir, `${name}-list.txt`),
    '-c:a',
    'pcm_s16le',
    speech,
  ]);
  let sound = speech;
  if (bedDb !== undefined) {
    const raw = join(dir, `${name}-bed.wav`);
    const chord =
      bed === 'room'
        ? `anoisesrc=c=pink:r=16000:a=0.2:seed=11,atrim=0:${t.toFixed(3)}[o]`
        : bed === 'tone'
          ? `sine=f=${toneHz}:r=16000,atrim=0:${t.toFixed(3)}[o]`
          : `sine=f=220:r=16000[a];sine=f=261.6:r=16000[b];sine=f=329.6:r=16000[c];[a][b][c]amix=inputs=3:normalize=0,aeval='val(0)*(0.6+0.4*sin(2*PI*t/3))',atrim=0:${t.toFixed(3)}[o]`;
    run('ffmpeg', ['-v', 'error', '-y', '-filter_complex', chord, '-map', '[o]', '-c:a', 'pcm_s16le', raw]);
    const gain = rmsDb(pcm(speech), words) - bedDb - rmsDb(pcm(raw), [{ start: 0, end: t }]);
    sound = join(dir, `${name}-mix.wav`);
    run('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      speech,
      '-i',
      raw,
      '-filter_complex',
      `[1:a]volume=${gain.toFixed(2)}dB[b];[0:a][b]amix=inputs=2:normalize=0:duration=first[o]`,
      '-map',
      '[o]',
      '-c:a',
      'pcm_s16le',
      sound,
    ]);
  }
  const video = join(dir, `${name}.mp4`);
  run('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `color=c=gray:s=160x90:r=${WORD_CUT_FPS}:d=${(t + 0.5).toFixed(3)}`,
    '-i',
    sound,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-af',
    'apad',
    '-shortest',
    video,
  ]);
  return { video, words };
}

const sec = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);

/**
 * What a cut plays, read from its edit: its in point moved to the frame it means (the frame starting within 0.5 ms
 * before it, else the next), its out point, and where its sound is heard at all and at full level (1 ms steps).
 */
export function heardSpan(
  seg: {
    video_start_time: string;
    video_end_time: string;
    audio_levels: { audio_level: number; start_time: string; end_time: string }[];
  },
  fps = WORD_CUT_FPS,
) {
  const written = sec(seg.video_start_time);
  const inSec = Math.max(written, Math.ceil((written - 0.0005 - 1e-6) * fps) / fps);
  const outSec = sec(seg.video_end_time);
  const windows = seg.audio_levels.map((l) => ({ level: l.audio_level, from: sec(l.start_time), to: sec(l.end_time) }));
  const levelAt = (x: number) => windows.find((w) => x >= w.from && x < w.to)?.level ?? 1;
  const top = windows.length ? Math.max(...windows.map((w) => w.level)) : 1;
  let heard: { from: number; to: number } | undefined;
  let full: { from: number; to: number } | undefined;
  for (let x = inSec; x < outSec - 1e-9; x += 0.001) {
    const l = levelAt(x + 1e-6);
    if (l > 0) heard = heard ? { from: heard.from, to: x + 0.001 } : { from: x, to: x + 0.001 };
    if (l >= top - 1e-9) full = full ? { from: full.from, to: x + 0.001 } : { from: x, to: x + 0.001 };
  }
  return { inSec, outSec, heard: heard ?? { from: inSec, to: inSec }, full: full ?? { from: inSec, to: inSec } };
}
