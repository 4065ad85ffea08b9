// Speech made at test time: Debian's flite (its "rms" voice, which PocketSphinx reads well) says known sentences at
// known offsets, laid on a timeline with silence between them; as an audio file and as a video with that sound.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sayWithWordTimes, type TrueWord } from './flite-words.js';

function run(cmd: string, args: string[]): Buffer {
  const r = spawnSync(cmd, args, { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}

export const SENTENCES = [
  { at: 0.5, text: 'The lighthouse keeper walked along the shore.' },
  { at: 5.0, text: 'She saw a ship in the storm.' },
  { at: 9.0, text: 'Every night the light turned slowly.' },
];
export const SPEECH_SECONDS = 13;
export const ALL_TEXT = SENTENCES.map((s) => s.text).join(' ');

/** Where the voice starts in each sentence's placement: the first sample above -30 dBFS after its offset. */
export function speechOnsets(wav: string): number[] {
  const b = run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-i',
    wav,
    '-ac',
    '1',
    '-ar',
    '16000',
    '-f',
    's16le',
    '-',
  ]);
  const s = new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1)));
  return SENTENCES.map(({ at }) => {
    for (let i = Math.round(at * 16000); i < s.length; i++) if (Math.abs(s[i]!) > 1000) return i / 16000;
    return NaN;
  });
}

/** speech.wav (16 kHz mono) and talk.mp4 (a grey picture with that sound) in `dir`. */
export function makeSpeechMedia(dir: string): { wav: string; video: string } {
  const parts = SENTENCES.map((s, i) => {
    const f = join(dir, `sentence${i}.wav`);
    run('flite', ['-voice', 'rms', '-t', s.text, '-o', f]);
    return f;
  });
  const wav = join(dir, 'speech.wav');
  const inputs = parts.flatMap((p) => ['-i', p]);
  const delays = SENTENCES.map((s, i) => `[${i}:a]adelay=${Math.round(s.at * 1000)}:all=1[d${i}]`).join(';');
  const mix = `${delays};${SENTENCES.map((_, i) => `[d${i}]`).join('')}amix=inputs=${SENTENCES.length}:normalize=0,apad,atrim=0:${SPEECH_SECONDS}[a]`;
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    ...inputs,
    '-filter_complex',
    mix,
    '-map',
    '[a]',
    '-ar',
    '16000',
    '-ac',
    '1',
    wav,
  ]);
  const video = join(dir, 'talk.mp4');
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `color=c=gray:s=320x180:r=25:d=${SPEECH_SECONDS}`,
    '-i',
    wav,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-shortest',
    video,
  ]);
  return { wav, video };
}

/** Sentences a long recording says over and over (varied, so that alignment has more than a few words to hold to). */
const LONG_LINES = [
  'The harbour master counted the boats before the tide turned.',
  'A grey heron stood in the shallow water near the pier.',
  'We carried the nets up the hill to dry in the wind.',
  'The baker opened his shop at six and sold warm bread.',
  'Two gulls fought over a fish on the wet stones.',
  'In the evening the fishermen mended their sails by lamplight.',
  'The postman brought a parcel from the island across the bay.',
  'Snow covered the lighthouse roof for the first time in years.',
];

/**
 * A long recording of speech (flite's "rms" voice) for tests that need many words: the lines above, each followed by
 * 0.6 s of silence, repeated to `seconds`, as a 16 kHz mono WAV; and the text said, in order.
 */
export function makeLongSpeech(dir: string, seconds: number): { wav: string; text: string } {
  const parts = LONG_LINES.map((line, i) => {
    const f = join(dir, `long${i}.wav`);
    run('flite', ['-voice', 'rms', '-t', line, '-o', f]);
    return {
      f,
      line,
      sec: Number(run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', f]).toString()),
    };
  });
  const gap = join(dir, 'long-gap.wav');
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'anullsrc=r=16000:cl=mono',
    '-t',
    '0.6',
    '-c:a',
    'pcm_s16le',
    gap,
  ]);
  const list: string[] = [];
  const said: string[] = [];
  for (let i = 0, t = 0; ; i++) {
    const p = parts[i % parts.length]!;
    if (t + p.sec > seconds) break;
    list.push(`file '${p.f}'`, `file '${gap}'`);
    said.push(p.line);
    t += p.sec + 0.6;
  }
  const listFile = join(dir, 'long-list.txt');
  writeFileSync(listFile, `${list.join('\n')}\n`);
  const wav = join(dir, 'long-speech.wav');
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    listFile,
    '-af',
    `apad=whole_dur=${seconds}`,
    '-ar',
    '16000',
    '-ac',
    '1',
    '-c:a',
    'pcm_s16le',
    wav,
  ]);
  return { wav, text: said.join(' ') };
}

/**
 * A video of `wav` said `times` over, on a picture of `color` (distinct colours make distinct files, so distinct
 * assets): speech that takes the engine a while to hear.
 */
export function makeLoopedTalk(dir: string, wav: string, name: string, times: number, color: string): string {
  const out = join(dir, name);
  const looped = join(dir, `${name}.wav`);
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-stream_loop',
    String(times - 1),
    '-i',
    wav,
    '-c',
    'copy',
    looped,
  ]);
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `color=c=${color}:s=160x90:r=10`,
    '-i',
    looped,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-b:a',
    '64k',
    '-shortest',
    out,
  ]);
  return out;
}

/**
 * `seconds` of sound that is no speech but costs the engine little: a 1 s tone every 10 s, silence between (FLAC,
 * small on disk). For measuring what a long transcription holds, not what it hears.
 */
export function makeToneBursts(dir: string, name: string, seconds: number, hz = 440): string {
  const out = join(dir, name);
  run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `sine=f=${hz}:r=16000:d=${seconds},volume='if(lt(mod(t,10),1),0.5,0)':eval=frame`,
    '-ac',
    '1',
    '-c:a',
    'flac',
    out,
  ]);
  return out;
}

/**
 * Parts said by flite one after the other, each followed by its pause (seconds; flite adds about 0.25 s of its own),
 * as `speech.wav` (16 kHz mono) and `speech.mov` (a grey picture with that sound) in `dir`, with every word's true
 * start and end on their clock (each part starts where the padded one before it ends, to the sample).
 */
export function makeSpokenParts(
  dir: string,
  parts: readonly (readonly [string, number])[],
  voice = 'slt',
): { wav: string; video: string; truth: TrueWord[]; seconds: number } {
  const RATE = 16_000;
  const ff = (args: string[]) => run('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args]);
  const truth: TrueWord[] = [];
  const files: string[] = [];
  let at = 0;
  parts.forEach(([text, pause], i) => {
    const said = join(dir, `part${i}.wav`);
    const words = sayWithWordTimes(text, said, voice);
    const padded = join(dir, `padded${i}.wav`);
    ff(['-i', said, '-af', `apad=pad_len=${Math.round(pause * RATE)}`, '-ar', String(RATE), '-ac', '1', padded]);
    truth.push(...words.map((w) => ({ word: w.word, start: at + w.start, end: at + w.end })));
    const samples = run('ffprobe', ['-v', 'error', '-show_entries', 'stream=duration_ts', '-of', 'csv=p=0', padded]);
    at += Number(samples.toString().trim()) / RATE;
    files.push(padded);
  });
  const wav = join(dir, 'speech.wav');
  const joined = `${files.map((_, i) => `[${i}:a]`).join('')}concat=n=${files.length}:v=0:a=1[a]`;
  ff([...files.flatMap((f) => ['-i', f]), '-filter_complex', joined, '-map', '[a]', wav]);
  const video = join(dir, 'speech.mov');
  ff([
    ...['-f', 'lavfi', '-i', `color=c=gray:s=320x180:r=25:d=${at}`, '-i', wav],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'pcm_s16le', '-shortest', video],
  ]);
  return { wav, video, truth, seconds: at };
}
