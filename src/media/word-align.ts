// Where words lie in a few seconds of sound, by forced alignment: PocketSphinx held to one sequence of words (a JSGF
// grammar that says exactly them, in order) places each word's start and end at its 10 ms frames. A recogniser's or
// a free alignment's word times are looser (they may run a word over the pause beside it, or put a boundary between
// two words a tenth of a second off); held to the sequence, the boundaries between words that run together come out
// within a few tens of milliseconds of where they are (bench/README.md, editor's scorecard). Spawned like
// recognition (speech.ts): an argument array, a time limit, a kill on cancel, the limiter; the window's sound decoded
// to a WAV file in the scratch folder, cleaned of a bed or noise as recognition cleans it, removed after.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monoSoundArgs, type MediaSource } from './input.js';
import type { Limiter } from './probe.js';
import { runProcess } from './process.js';
import { cleanSpeech, soundLevels, speechNeedsCleaning } from './speech-cleaning.js';
import { parseEngineOutput, processCheck, wavHeader, type SphinxEngine } from './speech.js';

const RATE = 16_000;
/** One frame of the engine's features (s): 0.8 prints a word's last frame, not where it ends. */
const ENGINE_FRAME = 0.01;
/**
 * The engine's boundaries lie a little early (the median of 311 boundaries between words that run together, on
 * flite's voices, whose phone times are known: 3 ms): moved by this.
 */
const FRAME_CENTRE_SEC = 0.003;

export interface AlignDeps {
  ffmpeg: string;
  limiter: Limiter;
  engine: SphinxEngine;
  scratchDir: string;
}

/** A word to place: its index (in the transcript) and its pronunciations (ARPAbet, "HH AH L OW"). */
export interface WordToAlign {
  index: number;
  pronunciations: string[];
}

/** A word placed in the sound: its index and where it starts and ends (s, on the source's clock). */
export interface AlignedWord {
  index: number;
  start: number;
  end: number;
}

/** Words' tokens in the run's grammar and dictionary: w<index>, whatever the words are spelled with. */
const token = (index: number) => `w${index}`;

/** The run's dictionary: each word's token with its pronunciations (variants as w12(2)). */
export function alignDictionary(words: WordToAlign[]): string {
  const lines: string[] = [];
  for (const w of words)
    w.pronunciations.forEach((p, i) => lines.push(`${token(w.index)}${i ? `(${i + 1})` : ''} ${p}`));
  return `${lines.join('\n')}\n`;
}

/**
 * A grammar that says the words in order, every one of them: with the outer words optional, the engine may leave
 * one out and place every other word one along (under a music bed, which it hears as vowels, it did). Words in
 * `optional` may be left out: asked whether the sound holds them, the engine leaves out a text's word never said.
 */
export function alignGrammar(words: WordToAlign[], optional?: ReadonlySet<number>): string {
  const said = words.map((w) => (optional?.has(w.index) ? `[${token(w.index)}]` : token(w.index)));
  return `#JSGF V1.0;\ngrammar align;\npublic <s> = ${said.join(' ')} ;\n`;
}

/** The engine's words as placed words: the tokens' indices, times moved onto the source's clock. */
export function alignedFrom(cli: SphinxEngine['cli'], stdout: string, offsetSec: number): AlignedWord[] {
  const out: AlignedWord[] = [];
  for (const w of parseEngineOutput(cli, stdout, offsetSec)) {
    const m = /^w(\d+)$/.exec(w.word);
    if (!m) continue;
    // 0.8 prints a word's last frame; 5.x its start and duration.
    const end = cli === '0.8' ? w.end + ENGINE_FRAME : w.end;
    out.push({
      index: Number(m[1]),
      start: Math.max(0, w.start + FRAME_CENTRE_SEC),
      end: Math.max(0, end + FRAME_CENTRE_SEC),
    });
  }
  return out;
}

/**
 * Places `words` (in order) in [from, to) of a source, those in `optional` only where the sound holds them. Returns
 * those the engine placed, in order; an empty list when it placed none (the grammar could not be matched). Throws a
 * SpeechError when a process fails.
 */
export async function alignWords(
  deps: AlignDeps,
  source: MediaSource,
  from: number,
  to: number,
  words: WordToAlign[],
  signal?: AbortSignal,
  optional?: ReadonlySet<number>,
): Promise<AlignedWord[]> {
  if (!words.length || !(to > from)) return [];
  const dir = join(deps.scratchDir, `align-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const timeoutMs = 60_000;
  const check = processCheck(timeoutMs);
  try {
    const raw = join(dir, 'sound.pcm');
    const decoded = await deps.limiter.run(() =>
      runProcess(deps.ffmpeg, monoSoundArgs(source, { from, seconds: to - from }, RATE, { out: `file:${raw}` }), {
        timeoutMs,
        ...(signal ? { signal } : {}),
      }),
    );
    check(decoded, 'ffmpeg');
    const samples = Math.floor((await stat(raw)).size / 2);
    if (samples < RATE / 10) return [];
    // Under a bed or noise the engine places words better on the cleaned sound, as it hears them (speech.ts).
    if (speechNeedsCleaning(await soundLevels(raw))) {
      await cleanSpeech(raw, join(dir, 'clean.pcm'));
      await rename(join(dir, 'clean.pcm'), raw);
    }
    const wav = join(dir, 'sound.wav');
    await writeFile(wav, Buffer.concat([wavHeader(samples), await readFile(raw)]));
    const dict = join(dir, 'words.dict');
    const grammar = join(dir, 'words.gram');
    await writeFile(dict, alignDictionary(words));
    await writeFile(grammar, alignGrammar(words, optional));
    const model = ['-hmm', deps.engine.model.hmm, '-dict', dict, '-jsgf', grammar];
    const args =
      deps.engine.cli === '0.8'
        ? // One utterance, however long its pauses: its voice-activity split would cut the sequence into parts, which
          // the grammar (the whole of it) then matches none of.
          ['-infile', wav, '-time', 'yes', '-logfn', '/dev/null', '-remove_silence', 'no', ...model]
        : ['single', ...model, wav];
    const r = await deps.limiter.run(() =>
      runProcess(deps.engine.bin, args, { timeoutMs, ...(signal ? { signal } : {}), maxStderr: 8 * 1024 }),
    );
    check(r, 'PocketSphinx');
    return alignedFrom(deps.engine.cli, r.stdout.toString('utf8'), from);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
