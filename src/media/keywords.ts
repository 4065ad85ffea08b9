// Listening for words: PocketSphinx's keyword spotting (0.8's pocketsphinx_continuous -kws) over a span of a source,
// for a search that must not depend on what free recognition made of the sound. Spawned under the same rules as
// recognition (speech.ts): argument arrays, a time limit, a kill on cancel, the limiter, and the sound decoded to a
// file in the scratch folder, cleaned of a bed or noise as recognition cleans it, and heard in pieces split where it
// is quiet.
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { featParamsWithMean } from '../analysis/phone-pass.js';
import { inputArgs, type MediaSource } from './input.js';
import type { Limiter } from './probe.js';
import { runProcess } from './process.js';
import { cleanSpeech, soundLevels, speechNeedsCleaning } from './speech-cleaning.js';
import { SpeechError, processCheck, splitToPieces, wavHeader, type SphinxEngine } from './speech.js';

export interface SpotRequest {
  ffmpeg: string;
  engine: SphinxEngine;
  limiter: Limiter;
  source: MediaSource;
  fromSec: number;
  toSec: number;
  /** Phrases to listen for (lower-case words, each in `pronunciations`) and the threshold of each (e.g. 1e-24). */
  phrases: { text: string; threshold: number }[];
  /** Every pronunciation of every phrase word, as ARPAbet ("L AY T"): the engine's dictionary for this run. */
  pronunciations: Map<string, string[]>;
  scratchDir: string;
  pieces: number;
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/**
 * A phrase heard, seconds on the asset's clock, and the spotter's score of it (0-1: the phrase against a free phone
 * loop).
 */
export interface Spotted {
  phrase: string;
  start: number;
  end: number;
  confidence: number;
}

const RATE = 16_000;

/** The dictionary file of a run: only the phrases' words (keyword spotting needs no other), variants as `w(2)`. */
export function dictionaryOf(pronunciations: Map<string, string[]>): string {
  const lines: string[] = [];
  for (const [word, variants] of [...pronunciations].sort(([a], [b]) => (a < b ? -1 : 1)))
    variants.forEach((p, i) => lines.push(`${word}${i ? `(${i + 1})` : ''} ${p}`));
  return `${lines.join('\n')}\n`;
}

/** The -kws file: a phrase a line with its threshold. */
export const kwsFileOf = (phrases: SpotRequest['phrases']): string =>
  `${phrases.map((p) => `${p.text} /${p.threshold.toExponential(0)}/`).join('\n')}\n`;

/**
 * Arguments that start the spotter's feature normalisation from `mean` (the asset's own, heard by its phone pass):
 * a changed copy of the model's feat.params written in `dir`. Without it the running mean starts from the model's
 * stock value, far from a voice's own, and words in the first seconds of a run score low or are not spotted at all
 * (kal's first "lighthouse" 0.83, "captain" 0.79 and "fisherman" unspotted; 0.90, 0.87, 0.85 from the asset's mean:
 * bench/README.md, search). None where no mean is known.
 */
export async function startingMeanArgs(hmm: string, dir: string, mean: number[] | undefined): Promise<string[]> {
  if (!mean?.length) return [];
  const params = await readFile(join(hmm, 'feat.params'), 'utf8').catch(() => undefined);
  if (params === undefined) return ['-cmninit', mean.map((v) => v.toFixed(2)).join(',')];
  const file = join(dir, 'feat.params');
  await writeFile(file, featParamsWithMean(params, mean));
  return ['-featparams', file];
}

/** The spotter's arguments for one file: the phrases of `kws` under `dict`'s pronunciations, times printed, no log. */
export const spotterArgs = (file: string, hmm: string, dict: string, kws: string): string[] => [
  '-infile',
  file,
  '-time',
  'yes',
  '-logfn',
  '/dev/null',
  '-hmm',
  hmm,
  '-dict',
  dict,
  '-kws',
  kws,
];

/** Detections from 0.8's -time output: `phrase words  start end score` lines (the phrase may hold spaces). */
export function parseSpotted(stdout: string, phrases: string[], offsetSec: number): Spotted[] {
  const out: Spotted[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^(.+?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)$/.exec(line.trim());
    const phrase = m?.[1]!.replace(/\s+/g, ' ');
    if (m && phrase && phrases.includes(phrase))
      out.push({ phrase, start: Number(m[2]) + offsetSec, end: Number(m[3]) + offsetSec, confidence: Number(m[4]) });
  }
  return out;
}

/** The span of the source as 16 kHz mono PCM in `dir`, cleaned of a bed or noise as recognition cleans it. */
export async function soundToHear(
  req: Omit<SpotRequest, 'phrases' | 'pieces' | 'pronunciations'>,
  dir: string,
  deadline: number,
  check: ReturnType<typeof processCheck>,
): Promise<{ raw: string; samples: number }> {
  const span = Math.max(0, req.toSec - req.fromSec);
  const raw = join(dir, 'sound.pcm');
  const decoded = await req.limiter.run(() =>
    runProcess(
      req.ffmpeg,
      [
        '-hide_banner',
        '-nostdin',
        '-v',
        'error',
        '-nostats',
        '-ss',
        String(req.fromSec),
        '-t',
        String(span),
        ...inputArgs(req.source),
        '-vn',
        '-ac',
        '1',
        '-ar',
        String(RATE),
        '-f',
        's16le',
        '-y',
        `file:${raw}`,
      ],
      {
        timeoutMs: Math.max(1000, deadline - Date.now()),
        signal: req.signal,
      },
    ),
  );
  check(decoded, 'ffmpeg');
  const samples = Math.floor((await stat(raw)).size / 2);
  // Under a bed or noise the spotter finds more of the words, and as surely, on the cleaned sound (bench/README.md).
  if (samples && speechNeedsCleaning(await soundLevels(raw))) {
    await cleanSpeech(raw, join(dir, 'clean.pcm'));
    await rename(join(dir, 'clean.pcm'), raw);
  }
  return { raw, samples };
}

/** One run of the spotter within the request's deadline, through its limiter: what it printed. */
async function runSpotter(
  req: Pick<SpotRequest, 'engine' | 'limiter' | 'signal'>,
  args: string[],
  deadline: number,
  check: ReturnType<typeof processCheck>,
): Promise<string> {
  const r = await req.limiter.run(() =>
    runProcess(req.engine.bin, args, {
      timeoutMs: Math.max(1000, deadline - Date.now()),
      signal: req.signal,
      maxStderr: 8 * 1024,
    }),
  );
  check(r, 'PocketSphinx');
  return r.stdout.toString('utf8');
}

/** Listens to a span of a source for the phrases: every detection, in time order. */
export async function spotKeywords(req: SpotRequest): Promise<Spotted[]> {
  if (req.engine.cli !== '0.8')
    throw new SpeechError(
      "listening needs PocketSphinx 0.8's pocketsphinx_continuous (keyword spotting through 5.x's command line is not supported yet)",
    );
  const dir = join(req.scratchDir, `listen-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const deadline = Date.now() + req.timeoutMs;
  const check = processCheck(req.timeoutMs);
  try {
    const { raw, samples } = await soundToHear(req, dir, deadline, check);
    if (!samples || !req.phrases.length) return [];
    const dict = join(dir, 'words.dict');
    const kws = join(dir, 'phrases.kws');
    await writeFile(dict, dictionaryOf(req.pronunciations));
    await writeFile(kws, kwsFileOf(req.phrases));

    const { points, files } = await splitToPieces(raw, samples, req.pieces, dir);

    const texts = req.phrases.map((p) => p.text);
    let done = 0;
    const results = await Promise.all(
      files.map(async (file, k) => {
        const heard = await runSpotter(req, spotterArgs(file, req.engine.model.hmm, dict, kws), deadline, check);
        done += points[k + 1]! - points[k]!;
        req.onProgress?.(done / samples);
        return parseSpotted(heard, texts, req.fromSec + points[k]! / RATE);
      }),
    );
    return results.flat().sort((a, b) => a.start - b.start);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Short spans of the sound to hear again, each for its own phrases (seconds on the asset's clock). */
export interface ContestRequest extends Omit<SpotRequest, 'phrases' | 'pieces' | 'onProgress'> {
  contests: { from: number; to: number; phrases: SpotRequest['phrases'] }[];
  /** The span's sound already decoded and cleaned (16 kHz mono s16le, from `fromSec`): not decoded again. */
  sound?: { path: string; samples: number };
  /** The asset's feature mean (its phone pass's): each short span is heard from it (startingMeanArgs). */
  featureMean?: number[];
}

/** Silence between two contests' spans joined into one pass: the spotter hears each as an utterance of its own. */
const CONTEST_GAP_SECONDS = 0.3;

/**
 * Each contest's span spotted for its phrases, on the same sound as spotKeywords hears (the span `fromSec`-`toSec`
 * decoded and cleaned once): the detections per contest. The spans are joined, with a little silence between, into
 * one pass over every contest's phrases: one model load for the search (about 0.07 s of CPU), not one per contest (a
 * contest alone cost 0.10-0.15 s, one more in the joined pass about 0.05 s: bench/README.md, search). Each span is
 * heard after the ones before it rather than afresh from the asset's mean, and beside other contests' phrases: on the
 * bench most scores moved by under 0.005, a few by up to 0.05, and no hit or miss changed. A detection counts for
 * the span it begins in, and only where its phrase is one of that contest's.
 */
export async function spotContests(req: ContestRequest): Promise<Spotted[][]> {
  if (!req.contests.length) return [];
  const dir = join(req.scratchDir, `contest-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const deadline = Date.now() + req.timeoutMs;
  const check = processCheck(req.timeoutMs);
  try {
    const { path: raw, samples } =
      req.sound ?? (({ raw, samples }) => ({ path: raw, samples }))(await soundToHear(req, dir, deadline, check));
    const gap = Buffer.alloc(Math.round(CONTEST_GAP_SECONDS * RATE) * 2);
    const parts: Buffer[] = [];
    /** Each contest's span in the joined file (samples) and on the asset's clock (seconds); none where empty. */
    const placed: ({ at: number; length: number; clock: number } | undefined)[] = [];
    let at = 0;
    const fh = await open(raw, 'r');
    try {
      for (const c of req.contests) {
        const from = Math.max(0, Math.floor((c.from - req.fromSec) * RATE));
        const to = Math.min(samples, Math.ceil((c.to - req.fromSec) * RATE));
        if (to <= from) {
          placed.push(undefined);
          continue;
        }
        const pcm = Buffer.alloc((to - from) * 2);
        await fh.read(pcm, 0, pcm.length, from * 2);
        parts.push(gap, pcm);
        at += gap.length / 2;
        placed.push({ at, length: to - from, clock: req.fromSec + from / RATE });
        at += to - from;
      }
    } finally {
      await fh.close();
    }
    const out: Spotted[][] = req.contests.map(() => []);
    if (!parts.length) return out;
    parts.push(gap);
    at += gap.length / 2;
    const phrases = new Map(req.contests.flatMap((c) => c.phrases.map((p) => [p.text, p] as const)));
    const wav = join(dir, 'contests.wav');
    const dict = join(dir, 'words.dict');
    const kws = join(dir, 'contests.kws');
    await writeFile(wav, Buffer.concat([wavHeader(at), ...parts]));
    await writeFile(dict, dictionaryOf(req.pronunciations));
    await writeFile(kws, kwsFileOf([...phrases.values()]));
    const args = [
      ...spotterArgs(wav, req.engine.model.hmm, dict, kws),
      ...(await startingMeanArgs(req.engine.model.hmm, dir, req.featureMean)),
    ];
    const heard = await runSpotter(req, args, deadline, check);
    for (const d of parseSpotted(heard, [...phrases.keys()], 0)) {
      // The span it began in (a detection in the silence before a span belongs to it).
      const k = placed.findIndex((p) => p !== undefined && d.start * RATE < p.at + p.length);
      const span = placed[k];
      if (!span || !req.contests[k]!.phrases.some((p) => p.text === d.phrase)) continue;
      const shift = span.clock - span.at / RATE;
      out[k]!.push({ ...d, start: Math.max(span.clock, d.start + shift), end: d.end + shift });
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
