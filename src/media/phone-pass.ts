// Listening paid once per asset (issue 47, item 4): PocketSphinx's phone recogniser (0.8's pocketsphinx_continuous
// -allphone with context-independent phones, about 0.06 x real time of CPU) heard over the whole asset once, on the
// sound keyword spotting hears (decoded and cleaned as keywords.ts cleans it), which is kept in a file beside the
// phones; each later query spots its phrase only in the short spans the phones point to, cut from that file and
// joined into one pass (spotInSpans). Spawned under the same rules as recognition: argument arrays, a time limit, a
// kill on cancel, the limiter, scratch files removed.
import { copyFile, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseFeatureMean, parsePhonePass, weightedMean, type HeardPhone, type Span } from '../analysis/phone-pass.js';
import { writeFileAtomic } from './inspect-cache.js';
import {
  dictionaryOf,
  kwsFileOf,
  parseSpotted,
  soundToHear,
  spotterArgs,
  startingMeanArgs,
  type SpotRequest,
  type Spotted,
} from './keywords.js';
import { runProcess } from './process.js';
import { SpeechError, processCheck, splitToPieces, wavHeader } from './speech.js';

const RATE = 16_000;

export interface PhonePassRequest extends Omit<SpotRequest, 'phrases' | 'pronunciations'> {
  /** Where to keep the sound heard (16 kHz mono s16le, cleaned as keyword spotting hears it) for later queries. */
  soundPath: string;
}

export interface PhonePass {
  phones: HeardPhone[];
  /** Samples in the kept sound. */
  samples: number;
  /** The asset's feature (cepstral) mean as the pass ended: every later spotting run starts from it. */
  featureMean?: number[];
}

/**
 * A phone pass as kept beside the transcript: each phone as [id, start, end] (seconds), the kept sound's length and
 * the asset's feature mean.
 */
export interface StoredPhonePass {
  phones: [number, number, number][];
  samples: number;
  featureMean?: number[];
}

export const storedPhonePass = (p: PhonePass): StoredPhonePass => ({
  phones: p.phones.map((h) => [h.phone, h.start, h.end]),
  samples: p.samples,
  ...(p.featureMean ? { featureMean: p.featureMean } : {}),
});
export const phonePassOf = (s: StoredPhonePass): PhonePass => ({
  phones: s.phones.map(([phone, start, end]) => ({ phone, start, end })),
  samples: s.samples,
  ...(s.featureMean ? { featureMean: s.featureMean } : {}),
});

/** Whether the sound a stored pass heard is still kept whole at `path` (it may have been removed with the cache). */
export async function soundKept(path: string, samples: number): Promise<boolean> {
  return stat(path).then(
    (s) => s.size === samples * 2,
    () => false,
  );
}

/**
 * The phone recogniser's arguments for one file: context-independent phones under the model's phone bigrams; its log
 * to `log` (it prints the feature mean).
 */
const phoneArgs = (file: string, hmm: string, phoneLm: string, log: string) => [
  '-infile',
  file,
  '-time',
  'yes',
  '-logfn',
  log,
  '-hmm',
  hmm,
  '-allphone',
  phoneLm,
  '-allphone_ci',
  'yes',
  '-backtrace',
  'yes',
  '-lw',
  '2.0',
];

/** The model's phone language model (en-us-phone.lm.bin beside en-us.lm.bin). */
export const phoneLmOf = (lm: string): string => lm.replace(/[^/]*$/, 'en-us-phone.lm.bin');

/** The asset's span heard as phones, in pieces split where it is quiet; its sound kept at `soundPath`. */
export async function hearPhones(req: PhonePassRequest): Promise<PhonePass> {
  if (req.engine.cli !== '0.8') throw new SpeechError("listening needs PocketSphinx 0.8's pocketsphinx_continuous");
  const dir = join(req.scratchDir, `phones-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const deadline = Date.now() + req.timeoutMs;
  const check = processCheck(req.timeoutMs);
  try {
    const { raw, samples } = await soundToHear(req, dir, deadline, check);
    // Kept before the pieces are cut (splitToPieces removes the file it splits).
    const kept = `${req.soundPath}.${randomBytes(4).toString('hex')}.tmp`;
    await copyFile(raw, kept);
    if (!samples) {
      await writeFileAtomic(req.soundPath, Buffer.alloc(0));
      await rm(kept, { force: true });
      return { phones: [], samples: 0 };
    }
    const { points, files } = await splitToPieces(raw, samples, req.pieces, dir);
    let done = 0;
    const pieces = await Promise.all(
      files.map(async (file, k) => {
        const log = join(dir, `piece${k}.log`);
        const r = await req.limiter.run(() =>
          runProcess(req.engine.bin, phoneArgs(file, req.engine.model.hmm, phoneLmOf(req.engine.model.lm), log), {
            timeoutMs: Math.max(1000, deadline - Date.now()),
            signal: req.signal,
            maxStderr: 8 * 1024,
          }),
        );
        check(r, 'PocketSphinx');
        done += points[k + 1]! - points[k]!;
        req.onProgress?.(done / samples);
        const mean = parseFeatureMean(await readFile(log, 'utf8').catch(() => ''));
        return {
          phones: parsePhonePass(r.stdout.toString('utf8'), req.fromSec + points[k]! / RATE),
          mean: { mean, weight: points[k + 1]! - points[k]! },
        };
      }),
    );
    await rename(kept, req.soundPath);
    const featureMean = weightedMean(pieces.map((p) => p.mean));
    return { phones: pieces.flatMap((p) => p.phones), samples, ...(featureMean ? { featureMean } : {}) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Silence between two spans joined into one pass: the spotter starts each afresh. (Joined end to end instead, the
 * bench found the same words and one more false hit on kal. A span scores under the whole asset where it holds too
 * little speech before the word for the features' running mean to settle: analysis/phone-pass.ts CANDIDATE_PAD.)
 */
const GAP_SECONDS = 0.3;

export interface SpanSpotRequest extends Omit<SpotRequest, 'source' | 'fromSec' | 'toSec' | 'pieces' | 'ffmpeg'> {
  /** The kept sound (hearPhones) and its length in samples; its sample 0 is `fromSec` on the asset's clock. */
  sound: { path: string; samples: number; fromSec: number };
  /** The asset's feature mean (hearPhones): the pass starts from it, so the first span scores as the others. */
  featureMean?: number[];
  spans: Span[];
}

/**
 * The phrases spotted in the spans of the kept sound only: the spans cut from it, joined with a little silence into
 * one file, heard in one pass, every detection mapped back to the asset's clock.
 */
export async function spotInSpans(req: SpanSpotRequest): Promise<Spotted[]> {
  const spans = req.spans
    .map((s) => ({
      from: Math.max(0, Math.floor((s.from - req.sound.fromSec) * RATE)),
      to: Math.min(req.sound.samples, Math.ceil((s.to - req.sound.fromSec) * RATE)),
    }))
    .filter((s) => s.to > s.from);
  if (!spans.length || !req.phrases.length) return [];
  const dir = join(req.scratchDir, `spans-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const check = processCheck(req.timeoutMs);
  try {
    const gap = Buffer.alloc(Math.round(GAP_SECONDS * RATE) * 2);
    const parts: Buffer[] = [];
    /** Where each span begins in the joined file (samples) and on the asset's clock (seconds). */
    const placed: { at: number; length: number; clock: number }[] = [];
    let at = 0;
    const fh = await open(req.sound.path, 'r');
    try {
      for (const s of spans) {
        const pcm = Buffer.alloc((s.to - s.from) * 2);
        await fh.read(pcm, 0, pcm.length, s.from * 2);
        parts.push(gap, pcm);
        at += gap.length / 2;
        placed.push({ at, length: s.to - s.from, clock: req.sound.fromSec + s.from / RATE });
        at += s.to - s.from;
      }
    } finally {
      await fh.close();
    }
    parts.push(gap);
    at += gap.length / 2;
    const wav = join(dir, 'spans.wav');
    const dict = join(dir, 'words.dict');
    const kws = join(dir, 'phrases.kws');
    await writeFile(wav, Buffer.concat([wavHeader(at), ...parts]));
    await writeFile(dict, dictionaryOf(req.pronunciations));
    await writeFile(kws, kwsFileOf(req.phrases));
    const args = [
      ...spotterArgs(wav, req.engine.model.hmm, dict, kws),
      ...(await startingMeanArgs(req.engine.model.hmm, dir, req.featureMean)),
    ];
    const r = await req.limiter.run(() =>
      runProcess(req.engine.bin, args, {
        timeoutMs: req.timeoutMs,
        signal: req.signal,
        maxStderr: 8 * 1024,
      }),
    );
    check(r, 'PocketSphinx');
    req.onProgress?.(1);
    const texts = req.phrases.map((p) => p.text);
    const out: Spotted[] = [];
    for (const d of parseSpotted(r.stdout.toString('utf8'), texts, 0)) {
      // The span it began in (a detection in the silence between two belongs to the next).
      const span = placed.find((p) => d.start * RATE < p.at + p.length) ?? placed.at(-1)!;
      const shift = span.clock - span.at / RATE;
      out.push({ ...d, start: Math.max(span.clock, d.start + shift), end: d.end + shift });
    }
    return out.sort((a, b) => a.start - b.start);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
