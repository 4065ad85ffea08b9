// Hearing the footage: an asset's words with their times, made once per asset and media and cached beside its
// inspection; a known text aligned to the sound; phrase search across a project; and the words a clip is cut by.
// Everything that uses words reads them through here (DESIGN.md), never by running the engine itself.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseTimecode } from '../edit/timecode.js';
import { timeTextBySound } from './text-timing.js';
import { alignText, heardWords, sentencesOf, textWords, type TextWord, type TimedWord } from '../edit/words.js';
import { UserFacingError, cacheDiskFull, isDiskFull, shown } from '../errors.js';
import { SPEECH_INSTALL_HINT, recognize, vocabulary, SpeechError } from '../media/speech.js';
import type { InspectionCache } from '../media/inspect-cache.js';
import type { MediaSource } from '../media/input.js';
import { clearCorrections, withCorrections } from './corrections.js';
import { locateAsset, type InspectDeps } from './inspect.js';
import { TranscriptionJobs } from './transcription-jobs.js';
import { sliceTranscript } from '../analysis/transcript-span.js';
import {
  markUnsure,
  TranscriptSchema,
  TranscriptSentenceSchema,
  TranscriptWordSchema,
  type StoredTranscript,
  type Transcript,
  TEXT_TIMING,
} from './transcript.js';

/**
 * What transcribe_asset answers: the transcript in pages a result can carry (24 KB at most, whatever the asset's
 * length). Sentences with their word ranges by default; the words themselves on request. A page covers words
 * [start, end); next_cursor starts the next. The whole is the transcript resource.
 */
export const TranscriptPageSchema = TranscriptSchema.omit({
  words: true,
  sentences: true,
  unplaced: true,
  doubtful: true,
}).extend({
  word_count: z.number().int(),
  sentence_count: z.number().int(),
  sentences: z.array(TranscriptSentenceSchema),
  words: z.array(TranscriptWordSchema).optional(),
  unplaced: z.array(z.number().int()).optional(),
  doubtful: z.array(z.number().int()).optional(),
  next_cursor: z.string().optional(),
  left_out: z.array(z.string()).optional(),
});
export type TranscriptPage = z.infer<typeof TranscriptPageSchema>;

/** JSON bytes of sentences, words and unplaced indices a page may carry. */
const PAGE_BYTES = { sentences: 14_000, sentencesBesideWords: 5_000, words: 11_000, unplaced: 1_500 };

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v)) + 1;

/** The longest run of items from the start that fits `bytes` (at least one). */
function fitting<T>(items: T[], bytes: number): T[] {
  let used = 2;
  let n = 0;
  for (const item of items) {
    const size = jsonBytes(item);
    if (n && used + size > bytes) break;
    used += size;
    n++;
  }
  return items.slice(0, n);
}

/**
 * A cursor for the page starting at word `n` of this transcript: the word and a tag of the transcript (its asset,
 * span and words), so that a cursor of another asset, span or text (a recognised transcript aligned since) is
 * refused rather than read as an index into words it never counted.
 */
const transcriptTag = (t: Transcript) =>
  createHash('sha256')
    .update(JSON.stringify([t.asset_id, t.from_seconds, t.to_seconds, t.words.map((w) => [w.word, w.start_seconds])]))
    .digest('hex')
    .slice(0, 8);
const cursorAt = (n: number, tag: string) => `w${n}.${tag}`;
/** The cursor of the page that starts at word `n` of this transcript (a result's text names it for a host that shows only text). */
export const cursorFor = (t: Transcript, n: number) => cursorAt(n, transcriptTag(t));
function readCursor(cursor: string): { n: number; tag: string } | undefined {
  const m = /^w(\d{1,9})\.([0-9a-f]{8})$/.exec(cursor.trim());
  return m ? { n: Number(m[1]), tag: m[2]! } : undefined;
}

/** One page of a transcript, from the word a cursor names (the first by default, or the sentence of word `near`). */
export function transcriptPage(
  t: Transcript,
  opts: { words?: boolean; cursor?: string; uri: string; near?: number },
): TranscriptPage {
  const { words: all, sentences: allSentences, unplaced: allUnplaced, doubtful: allDoubtful, ...about } = markUnsure(t);
  const tag = transcriptTag(t);
  // `near`: the page that starts with the sentence holding that word (a correction's first word).
  let start = opts.near === undefined ? 0 : (allSentences.find((s) => s.last_word >= opts.near!)?.first_word ?? 0);
  if (opts.cursor !== undefined) {
    const c = readCursor(opts.cursor);
    const quoted = `cursor "${shown(opts.cursor, 30)}"`;
    if (c && c.tag !== tag)
      throw new UserFacingError(
        `${quoted} is a page of another transcript (another asset, span or text, or one made again since); leave cursor out to start again, with the from, to and text of the call that returned it`,
      );
    if (!c || c.n >= Math.max(1, all.length))
      throw new UserFacingError(
        `${quoted} is not a page of this transcript (it has ${all.length} words); give the next_cursor a result returned, or leave cursor out for the first page`,
      );
    start = c.n;
  }
  const from = allSentences.findIndex((s) => s.last_word >= start);
  const rest = from < 0 ? [] : allSentences.slice(from);
  let sentences: typeof allSentences;
  let words: typeof all | undefined;
  let end: number;
  if (opts.words) {
    words = fitting(all.slice(start), PAGE_BYTES.words);
    end = start + words.length;
    const overlapping = rest.filter((s) => s.first_word < end);
    sentences = fitting(overlapping, PAGE_BYTES.sentencesBesideWords);
    if (sentences.length < overlapping.length) {
      // Not every sentence fitted: the page ends with the last one listed, and so do its words.
      end = Math.max(start + 1, sentences.at(-1)!.last_word + 1);
      words = words.slice(0, end - start);
    }
  } else {
    sentences = fitting(rest, PAGE_BYTES.sentences);
    end = sentences.length ? sentences.at(-1)!.last_word + 1 : all.length;
  }
  const leftOut: string[] = [];
  const next = end < all.length ? cursorAt(end, tag) : undefined;
  if (next)
    leftOut.push(
      `words ${end}-${all.length - 1} and their sentences: call again with cursor "${next}", or read ${opts.uri} for the whole`,
    );
  if (!opts.words && all.length) leftOut.push('the words one by one: call with words: true');
  const unplacedHere = allUnplaced?.filter((i) => i >= start && i < end);
  const doubtfulHere = allDoubtful?.filter((i) => i >= start && i < end);
  const unplaced = unplacedHere && fitting(unplacedHere, PAGE_BYTES.unplaced);
  if (unplaced && unplacedHere && unplaced.length < unplacedHere.length)
    leftOut.push(
      `${unplacedHere.length - unplaced.length} more unplaced words of this page: the resource lists them all`,
    );
  return {
    ...about,
    word_count: all.length,
    sentence_count: allSentences.length,
    sentences,
    ...(words ? { words } : {}),
    ...(unplaced?.length ? { unplaced } : {}),
    ...(doubtfulHere?.length ? { doubtful: doubtfulHere.slice(0, 200) } : {}),
    ...(next ? { next_cursor: next } : {}),
    ...(leftOut.length ? { left_out: leftOut } : {}),
  };
}

/** The longest known text aligned at once (the alignment's table grows with its words times the words heard). */
export const MAX_TEXT_WORDS = 5000;

export const transcriptUri = (projectId: string, assetId: string) =>
  `vj://projects/${projectId}/assets/${assetId}/transcript`;

export interface TranscribeOptions {
  from?: string | number;
  to?: string | number;
  text?: string;
  signal?: AbortSignal;
  onProgress?: (fraction: number, message: string) => void;
  debug?: (msg: string) => void;
  /**
   * Stop waiting at this time (ms since the epoch) when the transcript is being made: it goes on in the background
   * (transcribe_asset joins it) and StillTranscribing is thrown.
   */
  handOverAt?: number;
}

/** A transcript still being made when its caller stopped waiting: it goes on in the background. */
export class StillTranscribing extends UserFacingError {
  constructor(
    readonly assetId: string,
    /** Fraction heard so far, and what the job is doing ("listening", or what it waits for). */
    readonly fraction: number,
    readonly stage: string,
    /** Seconds since it started. */
    readonly seconds: number,
  ) {
    super(
      `asset ${assetId} is still being transcribed (${stillTranscribingState({ fraction, stage, seconds })}), in the background: follow it with transcribe_asset, then call again`,
    );
  }
}

/** "37% heard after 45 s", or what it waits for. */
export const stillTranscribingState = (s: { fraction: number; stage: string; seconds: number }) =>
  s.stage === 'listening' || s.fraction > 0
    ? `${Math.floor(s.fraction * 100)}% heard after ${Math.round(s.seconds)} s`
    : s.stage;

function tools(deps: InspectDeps) {
  const rt = deps.runtime;
  if (!rt?.transcripts || !deps.prober || !rt.scratchDir)
    throw new UserFacingError(
      'transcribe_asset needs ffmpeg and ffprobe, which were not found; install ffmpeg (Debian/Ubuntu: sudo apt-get install -y ffmpeg)',
    );
  if (!rt.speech) throw new UserFacingError(`no speech engine is installed: ${SPEECH_INSTALL_HINT}`);
  return {
    rt,
    cache: rt.transcripts,
    engine: rt.speech,
    prober: deps.prober,
    scratchDir: rt.scratchDir,
    listening: rt.listening,
  };
}

function seconds(v: string | number | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const r = parseTimecode(v);
  if (!r.ok) throw new UserFacingError(`${name} is not a time: give seconds (12.5) or HH:MM:SS.mmm`);
  return r.ms / 1000;
}

const spanKey = (from: number, to: number, duration: number) =>
  from <= 0 && to >= duration ? 'whole' : `${from.toFixed(3)}-${to.toFixed(3)}`;

/**
 * An aligned transcript is kept under its span's key, a recognised one under a key of its own beside it: a free
 * transcription, however late it finishes, in this process or another sharing the cache dir, never writes over
 * an alignment. The alignment is read first.
 */
const heardKey = (key: string) => `${key}|heard`;
async function readTranscript(
  cache: InspectionCache<StoredTranscript>,
  key: string,
): Promise<StoredTranscript | undefined> {
  const primary = await cache.get(key);
  if (primary?.transcript.aligned) return inRange(primary);
  // (A recognised transcript written under the span's key by an older cutroom is still read.)
  const found = (await cache.get(heardKey(key))) ?? primary;
  return found && inRange(found);
}

/** A transcript whose confidences lie in 0-1 (one kept by an older cutroom may hold PocketSphinx's 1.001). */
function inRange(stored: StoredTranscript): StoredTranscript {
  const words = stored.transcript.words;
  if (!words.some((w) => w.confidence !== undefined && w.confidence > 1)) return stored;
  const clamped = words.map((w) => (w.confidence !== undefined && w.confidence > 1 ? { ...w, confidence: 1 } : w));
  return { ...stored, transcript: { ...stored.transcript, words: clamped } };
}

/** The whole-asset transcript cached for an asset's media, with its corrections, if there is one. */
export async function storedTranscript(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  signal?: AbortSignal,
): Promise<StoredTranscript | undefined> {
  const rt = deps.runtime;
  if (!rt?.transcripts) return undefined;
  const { key } = await locateAsset(deps, projectId, assetId, signal);
  const stored = await readTranscript(rt.transcripts, `transcript|whole|${key}`);
  return stored && withCorrections(rt, key, stored);
}

interface Made {
  stored: StoredTranscript;
  /** false: another transcription's (an alignment that was written meanwhile). */
  made: boolean;
}
const underWay = new WeakMap<InspectionCache<StoredTranscript>, TranscriptionJobs<Made>>();
const jobsOf = (cache: InspectionCache<StoredTranscript>) => {
  let jobs = underWay.get(cache);
  if (!jobs) underWay.set(cache, (jobs = new TranscriptionJobs<Made>()));
  return jobs;
};

/**
 * The words of an asset (or of a span of it): cached, or heard now. With `text`, the text is aligned to the sound
 * (recognition held to its words) and becomes the asset's transcript for that span from then on.
 *
 * One transcript is made once, whoever asks: a call asking for what is being made joins it (a free one joins an
 * alignment under way, which will be the transcript), and alignments of one span run one after the other, in the
 * order they were asked for. At most `listening.limit` transcriptions run at once; the rest wait their turn.
 */
export async function transcribe(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  opts: TranscribeOptions = {},
): Promise<Transcript> {
  const { rt, cache, engine, prober } = tools(deps);
  const { asset, src, key } = await locateAsset(deps, projectId, assetId, opts.signal);
  let facts;
  try {
    facts = await prober.probe(asset.id, src, opts.signal);
  } catch (err) {
    if (opts.signal?.aborted) throw new UserFacingError('the transcription was cancelled');
    throw new UserFacingError(
      `asset ${asset.id} could not be read (${(err as Error).message}); get_project shows its status and link`,
    );
  }
  if (facts.isImage || !facts.hasAudio) {
    throw new UserFacingError(
      `asset ${asset.id} has no sound to transcribe (${facts.isImage ? 'it is an image' : 'it has no audio track'}); transcribe a video with sound or an audio asset`,
    );
  }
  const duration = (facts.durationMs ?? 0) / 1000;
  const from = Math.max(0, seconds(opts.from, 'from') ?? 0);
  const to = Math.min(duration, seconds(opts.to, 'to') ?? duration);
  if (!(to > from))
    throw new UserFacingError(
      `the span ${from}-${to} s holds nothing of asset ${asset.id} (it lasts ${duration} s); give from before to, inside it`,
    );
  const cacheKey = `transcript|${spanKey(from, to, duration)}|${key}`;
  const whole = spanKey(from, to, duration) === 'whole';
  /** What is answered: a whole-asset transcript with its corrections (a whole script aligned anew has none left). */
  const answer = async (t: Omit<Transcript, 'cached'>, cached: boolean): Promise<Transcript> => {
    if (!whole) return { ...t, cached };
    if (text && !cached) {
      await clearCorrections(rt, key);
      return { ...t, cached };
    }
    return { ...(await withCorrections(rt, key, { transcript: t })).transcript, cached };
  };

  const text = opts.text?.trim() ? textWords(opts.text) : undefined;
  if (opts.text !== undefined && !text?.length)
    throw new UserFacingError(
      'text holds no words to align; give what was said, or leave text out to recognise the speech',
    );
  if (text && text.length > MAX_TEXT_WORDS)
    throw new UserFacingError(
      `text has ${text.length} words; align at most ${MAX_TEXT_WORDS} at once: give a span (from, to) and the words said in it`,
    );
  const textHash = text
    ? createHash('sha256')
        .update(text.map((w) => w.word).join(' '))
        .digest('hex')
        .slice(0, 32)
    : undefined;

  // Held to the text's words the engine knows; the others cannot be heard and are placed between their neighbours.
  let held: string[] | undefined;
  if (text && engine.name === 'pocketsphinx') {
    const known = await vocabulary(engine);
    held = [...new Set(text.map((w) => w.key).filter((k) => known.has(k)))];
    if (!held.length)
      throw new UserFacingError(
        "none of the words of text is in the speech engine's English dictionary, so none can be placed; give the text in English words (numbers written out)",
      );
  }

  const hit = await readTranscript(cache, cacheKey);
  // A span read without text answers from the kept whole-asset transcript (with its corrections): the same words.
  if (!whole && !text) {
    const kept = await readTranscript(cache, `transcript|whole|${key}`);
    const withFixes = kept && (await withCorrections(rt, key, kept));
    if (withFixes && (!hit?.transcript.aligned || keptOver(withFixes.transcript, from, to))) {
      opts.debug?.(`transcribe ${asset.id}: ${from}-${to} s read from the whole asset's kept transcript`);
      return { ...sliceTranscript(withFixes.transcript, from, to), cached: true };
    }
  }
  if (hit && (!text || (hit.textHash === textHash && hit.timing === TEXT_TIMING))) {
    opts.debug?.(
      `transcribe ${asset.id}: reusing the transcript cached for ${cacheKey.split('|').slice(0, 3).join('|')}`,
    );
    return answer(hit.transcript, true);
  }

  // Nothing is awaited from the cache's answer to the job's start: a job that wrote meanwhile is still listed.
  const jobs = jobsOf(cache);
  const alignments = `${cacheKey}|text:`;
  let job = text ? jobs.find(`${alignments}${textHash}`) : (jobs.latest(alignments) ?? jobs.find(heardKey(cacheKey)));
  if (!job) {
    const before = text ? jobs.latest(alignments) : undefined;
    const work: HearWork = {
      assetId: asset.id,
      src,
      from,
      to,
      duration,
      cacheKey,
      ...(text ? { text, textHash } : {}),
      ...(held ? { held } : {}),
    };
    // With a job queue the listening runs on a worker (hearJob there), which writes the transcript in the cache dir.
    const queue = deps.jobs;
    job = jobs.start(
      text ? `${alignments}${textHash}` : heardKey(cacheKey),
      async (signal, progress): Promise<Made> => {
        if (before) {
          progress(0, 'waiting for the alignment asked for before');
          await before.done.catch(() => {});
        }
        if (queue) {
          const made = await queue.run<Made>('transcribe', rt.cache.opts.dir, work, { signal, onProgress: progress });
          // The worker's cache dir may be its own: the transcript is kept here too, where the worker keeps it (an
          // alignment under the span's key, words heard under their own), and so in the team's store for every replica.
          await cache.set(made.stored.transcript.aligned ? cacheKey : heardKey(cacheKey), made.stored).catch(() => {});
          return made;
        }
        return hear(deps, work, signal, progress, opts.debug);
      },
    );
  }
  const { stored, made } = await jobs.follow(
    job,
    opts,
    (j) => new StillTranscribing(asset.id, j.progress, j.message, (Date.now() - j.started) / 1000),
  );
  return answer(stored.transcript, !made);
}

/**
 * Whether the whole transcript is given words over [from, to] (aligned to a script, or corrected there): then it
 * answers a span read rather than an alignment of that span alone.
 */
const keptOver = (t: Omit<Transcript, 'cached'>, from: number, to: number) =>
  t.aligned ||
  (t.corrected ?? []).some(([a = 0, b = -1]) => {
    const first = t.words[a];
    const last = t.words[b];
    return !!first && !!last && first.start_seconds < to && last.end_seconds > from;
  });

/** What one transcription hears: an asset's media, a span, and the text to align to it (when given). */
export interface HearWork {
  assetId: string;
  src: MediaSource;
  from: number;
  to: number;
  duration: number;
  cacheKey: string;
  text?: TextWord[];
  textHash?: string;
  /** The text's words the engine knows (PocketSphinx: recognition is held to them). */
  held?: string[];
}

/** Listens now, in this process (a turn of the listening limit), and writes the transcript in the cache. */
async function hear(
  deps: InspectDeps,
  work: HearWork,
  signal: AbortSignal,
  progress: (fraction: number, message: string) => void,
  debug?: (msg: string) => void,
): Promise<Made> {
  const { rt, cache, engine, scratchDir, listening } = tools(deps);
  const { assetId, src, from, to, duration, cacheKey, text, textHash, held } = work;
  progress(0, `waiting for a free slot (${listening.limit} transcription${listening.limit === 1 ? '' : 's'} at once)`);
  return listening.run(async () => {
    if (signal.aborted) throw new UserFacingError('the transcription was cancelled; nothing was kept');
    const t0 = performance.now();
    progress(0, 'listening');
    let heard;
    let language;
    let cleaned;
    try {
      ({
        words: heard,
        language,
        cleaned,
      } = await recognize({
        ffmpeg: rt.ffmpeg,
        engine,
        limiter: rt.limiter,
        source: src,
        fromSec: from,
        toSec: to,
        ...(held ? { words: held } : {}),
        scratchDir,
        pieces: Math.max(1, rt.limiter.limit),
        timeoutMs: Math.max(120_000, (to - from) * 4000),
        signal,
        onProgress: (f) => progress(f * (text ? 0.9 : 0.98), 'listening'),
      }));
    } catch (err) {
      if (isDiskFull(err) && !(err instanceof SpeechError && err.cancelled))
        throw cacheDiskFull('the transcription', rt.cache.opts.dir);
      if (err instanceof SpeechError)
        throw new UserFacingError(
          err.cancelled
            ? 'the transcription was cancelled; nothing was kept'
            : `the transcription failed: ${err.message}`,
        );
      throw err;
    }
    debug?.(
      `transcribe ${assetId}: heard ${heard.length} words${cleaned ? ' (a bed or noise taken off first)' : ''} in ${(to - from).toFixed(1)} s of sound in ${(performance.now() - t0).toFixed(0)} ms`,
    );
    const inside = heard
      .filter((h) => h.end > from && h.start < to)
      .map((h) => ({ ...h, start: Math.max(from, h.start), end: Math.min(to, h.end) }));

    let words: TimedWord[];
    let unplaced: number[] | undefined;
    let doubtful: number[] | undefined;
    if (text) {
      ({ words, unplaced, doubtful } = alignText(text, inside, { from, to }));
      // Recognition's match is the guide; the sound, held to the whole text, gives the times.
      progress(0.9, 'aligning the text to the sound');
      words = await cancelledAsSaid(signal, () =>
        timeTextBySound(
          rt,
          engine,
          scratchDir,
          src,
          { from, to },
          words,
          text.map((w) => w.endsSentence),
          heardAsSaid(words, unplaced, doubtful),
          signal,
          (f) => progress(0.9 + f * 0.08, 'aligning the text to the sound'),
          debug,
        ),
      );
    } else {
      words = heardWords(inside);
    }
    const transcript: Omit<Transcript, 'cached'> = {
      asset_id: assetId,
      engine: { name: engine.name, model: engine.modelName },
      language,
      duration_seconds: Math.round(duration * 1000) / 1000,
      from_seconds: Math.round(from * 1000) / 1000,
      to_seconds: Math.round(to * 1000) / 1000,
      aligned: !!text,
      words,
      sentences: sentencesOf(
        words,
        text?.map((w) => w.endsSentence),
      ),
      ...(unplaced ? { unplaced } : {}),
      ...(cleaned ? { cleaned: true as const } : {}),
      ...(doubtful?.length ? { doubtful } : {}),
    };
    if (text) {
      const stored = { transcript, textHash, timing: TEXT_TIMING };
      await cache.set(cacheKey, stored);
      return { stored, made: true };
    }
    // An alignment written meanwhile (by this process or another) is the asset's transcript: it is the answer.
    const now = await cache.get(cacheKey);
    if (now?.transcript.aligned) return { stored: now, made: false };
    const stored = { transcript };
    await cache.set(heardKey(cacheKey), stored);
    return { stored, made: true };
  });
}

/** `work`, whose failure after a cancel (or success: a pass may stop between runs) is the cancel, said as such. */
async function cancelledAsSaid<R>(signal: AbortSignal, work: () => Promise<R>): Promise<R> {
  const cancelled = () => new UserFacingError('the transcription was cancelled; nothing was kept');
  try {
    const r = await work();
    if (signal.aborted) throw cancelled();
    return r;
  } catch (err) {
    if (signal.aborted) throw cancelled();
    throw err;
  }
}

/** The words recognition heard as themselves and did not doubt. */
function heardAsSaid(words: TimedWord[], unplaced: number[] = [], doubtful: number[] = []): Set<number> {
  const off = new Set([...unplaced, ...doubtful]);
  return new Set(words.flatMap((w) => (off.has(w.index) ? [] : [w.index])));
}

/** A transcription run by a worker of the job queue (on the cache dir the server shares). */
export const hearJob = (
  deps: Omit<InspectDeps, 'backend' | 'jobs'>,
  work: HearWork,
  signal: AbortSignal,
  progress: (fraction: number, message: string) => void,
  debug?: (msg: string) => void,
) => hear(deps as InspectDeps, work, signal, progress, debug);
