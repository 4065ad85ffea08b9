// search_transcripts: where a word or phrase is said across a project, by spelling and by sound in the assets'
// transcripts (analysis/sound-search.ts), and on request by listening to the sound for it (PocketSphinx's keyword
// spotting, media/keywords.ts), merged (analysis/heard.ts). Transcripts are read through transcribe.ts.
import { NO_SPEECH, holdsSpeech } from './speech-gate.js';
import { z } from 'zod';
import type { Asset } from '../api/models.js';
import { assetName, isRender } from '../api/summaries.js';
import { phoneNames, type Cmudict } from '../analysis/dictionary.js';
import {
  HEARD_RULES,
  contestsOf,
  joinDetections,
  mergeHeard,
  rivalWords,
  spotThreshold,
  vetoRivals,
  type Detection,
  type FoundHit,
  type Rival,
} from '../analysis/heard.js';
import { searchBySound, type Pronouncer, type SoundSearch } from '../analysis/sound-search.js';
import { classifyAsset } from '../edit/lint.js';
import { textWords, type TimedWord } from '../edit/words.js';
import { UserFacingError, shown } from '../errors.js';
import { candidateSpans } from '../analysis/phone-pass.js';
import { spotContests, spotKeywords, type Spotted } from '../media/keywords.js';
import { spotInSpans } from '../media/phone-pass.js';
import type { MediaSource } from '../media/input.js';
import { SpeechError, type SpeechEngine } from '../media/speech.js';
import { locateAsset, type InspectDeps } from './inspect.js';
import { keptPhonePass, type KeptPass } from './phone-pass.js';
import { dictionaryFor, pronouncerFor } from './pronouncer.js';
import { projectOrSuggestion } from './suggest.js';
import { storedTranscript, transcribe, type TranscribeOptions } from './transcribe.js';
import type { Transcript } from './transcript.js';

export const SearchHitSchema = z.object({
  asset_id: z.string(),
  name: z.string().optional(),
  start_seconds: z.number(),
  end_seconds: z.number(),
  text: z.string().describe('The words heard there, as the transcript has them'),
  words: z
    .array(z.number().int())
    .min(2)
    .max(2)
    .optional()
    .describe("[first, last] word indices in the asset's transcript"),
  match: z.enum(['exact', 'sounds_like', 'heard']),
  score: z.number(),
  doubtful: z.array(z.number().int()).optional(),
  cut: z.array(z.number()).min(2).max(2).optional(),
});
export type SearchHit = z.infer<typeof SearchHitSchema>;

/** Media a search transcribes in one call, at most; past it assets are listed as missing. */
export const SEARCH_TRANSCRIBE_SECONDS = 600;
/** Media a search listens to in one call, at most (keyword spotting takes about a tenth of real time per core). */
export const SEARCH_LISTEN_SECONDS = 600;

export interface SearchResult {
  hits: SearchHit[];
  near_misses: SearchHit[];
  /** Assets not searched (or not listened to): not yet transcribed past the bound, or that could not be. */
  missing: { asset_id: string; reason: string }[];
  searched: number;
  /** Assets listened to. */
  listened?: number;
  /** Query words the dictionary lacks: their sound was guessed from their spelling. */
  guessed?: string[];
}

export interface SearchOptions extends TranscribeOptions {
  includeRenders?: boolean;
  listen?: boolean;
}

/** Assets that carry speech: videos and audio of the project (images have none). */
export function hearable(a: Asset): boolean {
  const kind = classifyAsset(a.asset_type);
  return (kind === 'video' || kind === 'audio' || kind === 'unknown') && a.status !== 'failed';
}

/** How the query's words sound: the engine's dictionary (pronouncer.ts, read once) and a pronouncer over it. */
async function soundsFor(
  engine: SpeechEngine | undefined,
  debug?: (m: string) => void,
): Promise<{ pronouncer: Pronouncer; dict?: Cmudict }> {
  const [dict, pronouncer] = await Promise.all([dictionaryFor(engine, debug), pronouncerFor(engine, debug)]);
  return { pronouncer, ...(dict ? { dict } : {}) };
}

/** Contests (heard.ts contestsOf) heard per asset and search, at most: the query's best-scored detections first. */
const MAX_CONTESTS = 8;
/** Contests' thresholds per phone: lenient, so that both readings are scored wherever either fits at all. */
const CONTEST_PER_PHONE = 8;

/** What listening heard: the query's detections and its rival words' (heard.ts rivalWords) in the same pass. */
interface Heard {
  query: Detection[];
  rivals: Detection[];
}

/** What listening heard, per asset media and phrase: a next page of the same search does not listen again. */
const heardBefore = new Map<string, Heard>();
const contested = new Map<string, Rival[]>();
const remember = (key: string, value: Heard) => {
  if (heardBefore.size >= 64) heardBefore.delete(heardBefore.keys().next().value!);
  heardBefore.set(key, value);
};

/**
 * A phrase across the project's transcripts (whole assets): exact spellings (case and punctuation ignored) and runs
 * of heard words that sound like it, with near misses; with `listen`, the sound is listened to for it as well.
 * Assets not transcribed yet are transcribed first, up to SEARCH_TRANSCRIBE_SECONDS of media per call, and listened
 * to up to SEARCH_LISTEN_SECONDS; the rest are listed as missing. Renders are searched only when named in assetIds
 * or with includeRenders: they repeat what their sources say.
 */
export async function searchTranscripts(
  deps: InspectDeps,
  projectId: string,
  query: string,
  assetIds: string[] | undefined,
  opts: SearchOptions = {},
): Promise<SearchResult> {
  const pid = projectId.trim();
  const queryWords = textWords(query).map((w) => w.key);
  if (!queryWords.length)
    throw new UserFacingError('query holds no words; give a word or a phrase to find, e.g. "the lighthouse"');
  const project = await projectOrSuggestion(deps.backend, pid, opts.signal);
  const assets = (project.assets ?? []).filter((a) =>
    assetIds ? assetIds.includes(a.id) : hearable(a) && (opts.includeRenders || !isRender(a)),
  );
  const missing: SearchResult['missing'] = [];
  for (const id of assetIds ?? [])
    if (!assets.some((a) => a.id === id)) missing.push({ asset_id: shown(id), reason: 'no such asset in the project' });
  const engine = deps.runtime?.speech;
  const { pronouncer, dict } = await soundsFor(engine, opts.debug);
  const guessed = dict ? queryWords.filter((w) => !dict.has(w)) : [];
  const listener = opts.listen ? listenerFor(deps, queryWords, pronouncer) : undefined;

  const hits: SearchHit[] = [];
  const nearMisses: SearchHit[] = [];
  let budget = SEARCH_TRANSCRIBE_SECONDS;
  let listenBudget = SEARCH_LISTEN_SECONDS;
  let searched = 0;
  let listened = 0;
  for (const [n, a] of assets.entries()) {
    const progress = (f: number, m: string) => opts.onProgress?.((n + f) / assets.length, `${m} (${a.id})`);
    let t: Transcript | undefined;
    const stored = await storedTranscript(deps, pid, a.id, opts.signal).catch(() => undefined);
    if (stored) t = { ...stored.transcript, cached: true };
    else {
      const facts = deps.prober
        ? await locateAsset(deps, pid, a.id, opts.signal)
            .then((l) => deps.prober!.probe(a.id, l.src, opts.signal))
            .catch(() => undefined)
        : undefined;
      if (!facts) {
        missing.push({ asset_id: a.id, reason: 'its media could not be read' });
        continue;
      }
      if (facts.isImage || !facts.hasAudio) continue;
      const length = (facts.durationMs ?? 0) / 1000;
      if (length > budget) {
        missing.push({
          asset_id: a.id,
          reason: `not transcribed yet (${Math.round(length)} s of media; a search transcribes at most ${SEARCH_TRANSCRIBE_SECONDS} s a call): call transcribe_asset on it, or search again`,
        });
        continue;
      }
      if (!(await holdsSpeech(deps, pid, a.id, opts.signal))) {
        missing.push({ asset_id: a.id, reason: NO_SPEECH });
        continue;
      }
      budget -= length;
      try {
        t = await transcribe(deps, pid, a.id, {
          signal: opts.signal,
          onProgress: (f, m) => progress(listener ? f / 2 : f, m),
          debug: opts.debug,
        });
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        missing.push({ asset_id: a.id, reason: (err as Error).message });
        continue;
      }
    }
    searched++;
    const bySound = searchBySound(t.words, query, pronouncer);
    let found: { hits: FoundHit[]; near_misses: FoundHit[] } = bySound;
    if (listener) {
      const length = t.duration_seconds;
      if ('error' in listener) missing.push({ asset_id: a.id, reason: `not listened to: ${listener.error}` });
      else if (length > listenBudget)
        missing.push({
          asset_id: a.id,
          reason: `not listened to (${Math.round(length)} s of media; a search listens to at most ${SEARCH_LISTEN_SECONDS} s a call): search it again with asset_ids`,
        });
      else {
        listenBudget -= length;
        try {
          const heard = await listener.listen(pid, a.id, t.words, opts.signal, (f, m) => progress(0.5 + f / 2, m));
          const detections = await listener.contest(pid, a.id, t.words, bySound, heard.query, opts.signal);
          found = vetoRivals(
            t.words,
            mergeHeard(t.words, bySound, detections, query, listener.phones, pronouncer),
            heard.query,
            heard.rivals,
          );
          listened++;
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          missing.push({ asset_id: a.id, reason: `not listened to: ${(err as Error).message}` });
        }
      }
    }
    const named = (h: FoundHit): SearchHit => ({
      asset_id: a.id,
      ...(assetName(a) ? { name: assetName(a) } : {}),
      ...h,
    });
    hits.push(...found.hits.map(named));
    nearMisses.push(...found.near_misses.map(named));
  }
  return {
    hits,
    near_misses: nearMisses,
    missing,
    searched,
    ...(listener ? { listened } : {}),
    ...(guessed.length ? { guessed } : {}),
  };
}

/** Listening for the query's words with the engine, or why it cannot. */
function listenerFor(deps: InspectDeps, queryWords: string[], pronouncer: Pronouncer) {
  const rt = deps.runtime;
  const engine = rt?.speech;
  if (!rt?.scratchDir || !engine || engine.name !== 'pocketsphinx')
    return { error: 'listening needs PocketSphinx (pocketsphinx_continuous) and ffmpeg' };
  if (engine.cli !== '0.8') return { error: "listening needs PocketSphinx 0.8's pocketsphinx_continuous" };
  const pronunciations = new Map<string, string[]>();
  for (const w of queryWords) pronunciations.set(w, pronouncer.pronounce(w).map(phoneNames));
  if ([...pronunciations.values()].some((v) => !v.length || v.some((p) => !p)))
    return { error: 'the query holds a word with no sound to listen for' };
  const phones = queryWords.reduce((sum, w) => sum + pronouncer.pronounce(w)[0]!.length, 0);
  /** The whole query's pronunciations (the product of its words' variants, the first 16), for the phone pass. */
  const said = queryWords
    .reduce<Uint8Array[]>(
      (heads, w) =>
        heads.flatMap((h) => pronouncer.pronounce(w).map((v) => Uint8Array.from([...h, ...v]))).slice(0, 16),
      [new Uint8Array(0)],
    )
    .filter((v) => v.length);
  const phrase = queryWords.join(' ');
  const threshold = spotThreshold(phones);
  const scratchDir = rt.scratchDir;
  /** What every pass of the engine over a whole asset shares: the tools, its source and span, its time limit. */
  const overWhole = async (assetId: string, src: MediaSource, signal: AbortSignal | undefined) => {
    const duration = ((await deps.prober!.probe(assetId, src, signal)).durationMs ?? 0) / 1000;
    return {
      ffmpeg: rt.ffmpeg,
      engine,
      limiter: rt.limiter,
      source: src,
      fromSec: 0,
      toSec: duration,
      scratchDir,
      timeoutMs: Math.max(60_000, duration * 2000),
      ...(signal ? { signal } : {}),
    };
  };
  /** The asset's phone pass (heard once, kept beside its transcript), where the runtime keeps them. */
  const passes = new Map<string, KeptPass>();
  const passOf = async (
    assetId: string,
    key: string,
    src: MediaSource,
    signal: AbortSignal | undefined,
    onProgress: (f: number, m: string) => void,
  ): Promise<KeptPass | undefined> => {
    const kept = rt.phonePasses;
    if (!kept || engine.cli !== '0.8') return undefined;
    let pass = passes.get(key);
    if (!pass) {
      const { toSec } = await overWhole(assetId, src, signal);
      pass = await keptPhonePass({ ...rt, phonePasses: kept, scratchDir }, engine, key, src, toSec, signal, (f) =>
        onProgress(f * 0.9, 'listening to the asset once (a phone pass kept for every later search of it)'),
      );
      passes.set(key, pass);
    }
    return pass;
  };
  /** The engine's failure as one line for the agent; anything else as it is. */
  const userError = (err: unknown): unknown =>
    err instanceof SpeechError ? new UserFacingError(err.cancelled ? 'the search was cancelled' : err.message) : err;
  return {
    phones,
    /**
     * The detections with, for those only a competing reading can settle (heard.ts contestsOf: over words
     * recognition was sure of, or over unsure ones where the detection is long enough to be a hit), the query and
     * those words spotted against each other on that span (at most MAX_CONTESTS per asset, all in one short pass).
     */
    async contest(
      pid: string,
      assetId: string,
      words: TimedWord[],
      found: SoundSearch,
      detections: Detection[],
      signal: AbortSignal | undefined,
    ): Promise<Detection[]> {
      const contests = contestsOf(words, found, detections, HEARD_RULES, { query: phrase, phones, pronouncer })
        .filter((c) => c.heard.split(' ').every((w) => pronouncer.pronounce(w).length))
        .sort((a, b) => b.detection.confidence - a.detection.confidence)
        .slice(0, MAX_CONTESTS);
      if (!contests.length) return detections;
      const { src, key } = await locateAsset(deps, pid, assetId, signal);
      const memo = `${key}|${phrase}|contest|${contests.map((c) => `${c.from},${c.to},${c.heard}`).join('|')}`;
      let rivals = contested.get(memo);
      if (!rivals) {
        const heardWords = new Map(pronunciations);
        for (const c of contests)
          for (const w of c.heard.split(' '))
            if (!heardWords.has(w)) heardWords.set(w, pronouncer.pronounce(w).map(phoneNames));
        const lenient = (text: string) => ({
          text,
          threshold: Number(
            `1e-${CONTEST_PER_PHONE * text.split(' ').reduce((n, w) => n + pronouncer.pronounce(w)[0]!.length, 0)}`,
          ),
        });
        const whole = await overWhole(assetId, src, signal);
        const pass = passes.get(key);
        try {
          const spotted = await rt.listening.run(() =>
            spotContests({
              ...whole,
              ...(pass ? { sound: { path: pass.soundPath, samples: pass.samples } } : {}),
              ...(pass?.featureMean ? { featureMean: pass.featureMean } : {}),
              contests: contests.map((c) => ({ from: c.from, to: c.to, phrases: [lenient(phrase), lenient(c.heard)] })),
              pronunciations: heardWords,
            }),
          );
          const best = (s: Spotted[], text: string) =>
            Math.max(0, ...s.filter((x) => x.phrase === text).map((x) => x.confidence));
          rivals = spotted.map((s, k) => ({ query: best(s, phrase), heard: best(s, contests[k]!.heard) }));
        } catch (err) {
          throw userError(err);
        }
        if (contested.size >= 64) contested.delete(contested.keys().next().value!);
        contested.set(memo, rivals);
      }
      const settled = new Map(contests.map((c, k) => [c.detection.start, rivals![k]!]));
      return joinDetections(detections.filter((d) => d.confidence >= HEARD_RULES.likely)).map((d) =>
        settled.has(d.start) ? { ...d, rival: settled.get(d.start)! } : d,
      );
    },
    /**
     * The query's detections in the asset: spotted in the spans its phone pass points to (the pass heard once and
     * kept), or, where the runtime keeps no passes, over the whole asset.
     */
    async listen(
      pid: string,
      assetId: string,
      words: TimedWord[],
      signal: AbortSignal | undefined,
      onProgress: (f: number, m: string) => void,
    ): Promise<Heard> {
      const { src, key } = await locateAsset(deps, pid, assetId, signal);
      const rivals = rivalWords(words, phrase, phones, pronouncer);
      const memo = `${key}|${phrase}|${threshold}|${rivals.join(',')}`;
      const known = heardBefore.get(memo);
      if (known) return known;
      // The rival words are spotted in the same pass as the query: the same sound and context, so scores compare.
      const phrases = [
        { text: phrase, threshold },
        ...rivals.map((w) => ({ text: w, threshold: spotThreshold(pronouncer.pronounce(w)[0]!.length) })),
      ];
      const withRivals = new Map(pronunciations);
      for (const w of rivals) if (!withRivals.has(w)) withRivals.set(w, pronouncer.pronounce(w).map(phoneNames));
      try {
        const pass = await passOf(assetId, key, src, signal, onProgress);
        const spans = pass ? candidateSpans(pass.phones, said) : [];
        if (pass)
          onProgress(
            0.9,
            `listening for the query in ${spans.reduce((n, s) => n + s.to - s.from, 0).toFixed(1)} s of the asset, where its ${pass.stored ? 'stored ' : ''}phone pass points`,
          );
        const spotted = pass
          ? await rt.listening.run(() =>
              spotInSpans({
                engine,
                limiter: rt.limiter,
                scratchDir,
                sound: { path: pass.soundPath, samples: pass.samples, fromSec: 0 },
                ...(pass.featureMean ? { featureMean: pass.featureMean } : {}),
                spans,
                phrases,
                pronunciations: withRivals,
                timeoutMs: 60_000 + spans.reduce((n, s) => n + s.to - s.from, 0) * 2000,
                ...(signal ? { signal } : {}),
              }),
            )
          : await rt.listening.run(async () =>
              spotKeywords({
                ...(await overWhole(assetId, src, signal)),
                phrases,
                pronunciations: withRivals,
                pieces: Math.max(1, rt.limiter.limit),
                onProgress: (f) => onProgress(f, 'listening for the query'),
              }),
            );
        const of = (text: string) =>
          spotted.filter((d) => d.phrase === text).map(({ start, end, confidence }) => ({ start, end, confidence }));
        const heard = { query: of(phrase), rivals: rivals.flatMap(of) };
        remember(memo, heard);
        return heard;
      } catch (err) {
        throw userError(err);
      }
    },
  };
}
