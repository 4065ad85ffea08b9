// find_moments' workflow: the project's sources with what is known of them (transcript, inspection), made now where
// missing within a bound per call, then ranked by the pure analysis (analysis/moments.ts).
import { assetName, isRender } from '../api/summaries.js';
import { aboutTerms, findMoments, type Moment, type MomentSource } from '../analysis/moments.js';
import type { Related } from '../analysis/related-words.js';
import { UserFacingError, shown } from '../errors.js';
import { inspect, locateAsset, storedInspection, type InspectDeps } from './inspect.js';
import { pronouncerFor } from './pronouncer.js';
import { NO_WORDNET, relatedWordsFor } from './related-words.js';
import { projectOrSuggestion } from './suggest.js';
import { SEARCH_TRANSCRIBE_SECONDS, hearable } from './search.js';
import { NO_SPEECH, holdsSpeech } from './speech-gate.js';
import { storedTranscript, transcribe } from './transcribe.js';
import type { Transcript } from './transcript.js';

/** Media transcribed in one call, at most (as search_transcripts); the rest is listed in missing. */
export const MOMENTS_TRANSCRIBE_SECONDS = SEARCH_TRANSCRIBE_SECONDS;
/** Media inspected (shots, loudness, motion) in one call, at most. */
export const MOMENTS_INSPECT_SECONDS = 3600;
export const DEFAULT_MOMENTS = 5;
export const MAX_MOMENTS = 20;
export const DEFAULT_MIN_SECONDS = 3;
export const DEFAULT_MAX_SECONDS = 30;
/** A subject is a few words: each is matched against every run of heard words. */
const MAX_ABOUT_CHARS = 200;

export interface MomentsRequest {
  assetIds?: string[];
  about?: string;
  count?: number;
  minSeconds?: number;
  maxSeconds?: number;
}

export interface MomentsResult {
  moments: (Moment & { name?: string })[];
  candidates: number;
  ranked: number;
  missing: { asset_id: string; reason: string }[];
  /** What the ranking could not use (WordNet not installed). */
  notes: string[];
  /** Ranked assets with no picture (a voiceover): their moments go into compose_edit's overlays, not its clips. */
  soundOnly: Set<string>;
}

export interface MomentsOptions {
  signal?: AbortSignal;
  onProgress?: (fraction: number, message: string) => void;
  debug?: (msg: string) => void;
}

export async function moments(
  deps: InspectDeps,
  projectId: string,
  req: MomentsRequest,
  opts: MomentsOptions = {},
): Promise<MomentsResult> {
  const pid = projectId.trim();
  const count = req.count ?? DEFAULT_MOMENTS;
  const minSeconds = req.minSeconds ?? DEFAULT_MIN_SECONDS;
  const maxSeconds = req.maxSeconds ?? Math.max(DEFAULT_MAX_SECONDS, minSeconds);
  if (!(count >= 1 && count <= MAX_MOMENTS))
    throw new UserFacingError(`count is ${count}; ask for 1 to ${MAX_MOMENTS} moments`);
  if (!(minSeconds >= 0.5) || !(maxSeconds >= minSeconds))
    throw new UserFacingError(
      `min_seconds ${minSeconds} and max_seconds ${maxSeconds}: give 0.5 s or more, and max_seconds at least min_seconds`,
    );
  if (req.about !== undefined && !req.about.trim())
    throw new UserFacingError('about is empty: give a subject (e.g. "the lighthouse"), or leave it out');
  if (req.about && req.about.length > MAX_ABOUT_CHARS)
    throw new UserFacingError(
      `about is ${req.about.length} characters long; give the subject in a few words (at most ${MAX_ABOUT_CHARS} characters)`,
    );
  const project = await projectOrSuggestion(deps.backend, pid, opts.signal);
  const assets = (project.assets ?? []).filter((a) =>
    req.assetIds ? req.assetIds.includes(a.id) : hearable(a) && !isRender(a),
  );
  const missing: MomentsResult['missing'] = [];
  const soundOnly = new Set<string>();
  for (const id of req.assetIds ?? [])
    if (!assets.some((a) => a.id === id)) missing.push({ asset_id: shown(id), reason: 'no such asset in the project' });
  let hearBudget = MOMENTS_TRANSCRIBE_SECONDS;
  let seeBudget = MOMENTS_INSPECT_SECONDS;
  const sources: MomentSource[] = [];
  const names = new Map<string, string>();
  for (const [n, a] of assets.entries()) {
    const progress = (from: number, to: number, what: string) => (f: number, m: string) =>
      opts.onProgress?.((n + from + (to - from) * f) / assets.length, `${what}: ${m} (${a.id})`);
    let facts;
    try {
      const { src } = await locateAsset(deps, pid, a.id, opts.signal);
      facts = deps.prober ? await deps.prober.probe(a.id, src, opts.signal) : undefined;
    } catch (err) {
      if (opts.signal?.aborted) throw new UserFacingError('find_moments was cancelled');
      missing.push({ asset_id: a.id, reason: `its media could not be read (${(err as Error).message})` });
      continue;
    }
    if (!facts) throw new UserFacingError('find_moments needs ffmpeg and ffprobe, which were not found');
    if (facts.isImage) continue;
    // Asked for no asset in particular, the moments are the pictures': sound alone (a music bed, a voiceover) is
    // ranked only when named.
    if (!req.assetIds && !facts.hasVideo) continue;
    const duration = (facts.durationMs ?? 0) / 1000;
    const gaps: string[] = [];
    const source: MomentSource = { asset_id: a.id, duration };
    if (!facts.hasVideo) soundOnly.add(a.id);

    // The inspection: shots, silences, loudness and motion.
    const seen = await storedInspection(deps, pid, a.id, opts.signal).catch(() => undefined);
    if (seen || duration <= seeBudget) {
      if (!seen) seeBudget -= duration;
      try {
        const { stored } = await inspect(deps, pid, a.id, {
          signal: opts.signal,
          onProgress: progress(0, 0.3, 'inspecting'),
          debug: opts.debug,
        });
        const ins = stored.inspection;
        Object.assign(source, {
          shots: ins.shots,
          silences: ins.silences,
          loudness: ins.loudness,
          ...(ins.scan.loudness_window_seconds ? { loudnessWindow: ins.scan.loudness_window_seconds } : {}),
          motion: stored.motion ?? null,
        });
      } catch (err) {
        if (opts.signal?.aborted) throw new UserFacingError('find_moments was cancelled');
        gaps.push(`not inspected: ${(err as Error).message}`);
      }
    } else
      gaps.push(
        `not inspected yet (${Math.round(duration)} s of media; a call inspects at most ${MOMENTS_INSPECT_SECONDS} s): call inspect_asset on it, or find_moments again`,
      );

    // The words.
    if (facts.hasAudio) {
      let t: Omit<Transcript, 'cached'> | undefined = (
        await storedTranscript(deps, pid, a.id, opts.signal).catch(() => undefined)
      )?.transcript;
      if (!t && duration > hearBudget)
        gaps.push(
          `not transcribed yet (${Math.round(duration)} s of media; a call transcribes at most ${MOMENTS_TRANSCRIBE_SECONDS} s): call transcribe_asset on it, or find_moments again`,
        );
      else if (!t && !(await holdsSpeech(deps, pid, a.id, opts.signal))) gaps.push(NO_SPEECH);
      else if (!t) {
        hearBudget -= duration;
        try {
          t = await transcribe(deps, pid, a.id, {
            signal: opts.signal,
            onProgress: progress(0.3, 1, 'transcribing'),
            debug: opts.debug,
          });
        } catch (err) {
          if (opts.signal?.aborted) throw new UserFacingError('find_moments was cancelled');
          gaps.push(`not transcribed: ${(err as Error).message}`);
        }
      }
      if (t) Object.assign(source, { words: t.words, sentences: t.sentences });
    }
    opts.onProgress?.((n + 1) / assets.length, `measured ${a.id}`);
    if (gaps.length)
      missing.push({
        asset_id: a.id,
        reason: `${gaps.join('; ')}${source.words || source.loudness || source.shots ? ' (ranked by what is known)' : ''}`,
      });
    if (source.words || source.loudness || source.shots) {
      sources.push(source);
      const name = assetName(a);
      if (name) names.set(a.id, name);
    }
  }
  const pronouncer = req.about ? await pronouncerFor(deps.runtime?.speech) : undefined;
  const notes: string[] = [];
  let related: { related?: Related; exceptions?: Map<string, string[]> } = {};
  if (req.about) {
    const wordnet = await relatedWordsFor(aboutTerms(req.about));
    if (!wordnet) notes.push(NO_WORDNET);
    else {
      // Each word of the subject's related words, at its best weight among them.
      const union: Related = new Map();
      for (const words of wordnet.related.values())
        for (const [w, weight] of words) if ((union.get(w) ?? 0) < weight) union.set(w, weight);
      related = { related: union, exceptions: wordnet.exceptions };
    }
  }
  const found = findMoments(sources, count, { about: req.about, minSeconds, maxSeconds, pronouncer, ...related });
  return {
    moments: found.moments.map((m) => (names.has(m.asset_id) ? { ...m, name: names.get(m.asset_id)! } : m)),
    candidates: found.candidates,
    ranked: sources.length,
    missing,
    notes,
    soundOnly,
  };
}
