// Correcting a transcript (issue 47, item 1): the right words for a span of an asset's whole transcript (a range of its
// words, a sentence), aligned to the sound between the words they replace (recognition held to them, as any known text
// is) and kept as a correction of that asset's media (corrections.ts), which every later read of the transcript
// carries: captions, search and cuts by words follow it. A whole script is transcribe_asset's own `text`.
import { textWords } from '../edit/words.js';
import { UserFacingError } from '../errors.js';
import { addCorrection } from './corrections.js';
import { locateAsset, type InspectDeps } from './inspect.js';
import { MAX_TEXT_WORDS, transcribe, type TranscribeOptions } from './transcribe.js';
import type { Transcript } from './transcript.js';

export interface CorrectionRequest {
  /** The words of the whole-asset transcript the text replaces, first to last. */
  first: number;
  last: number;
  text: string;
}

/** The shortest span (s) a correction is heard in: less holds no word. */
const MIN_SPAN = 0.05;

/**
 * Replaces words first..last of an asset's whole transcript (made first if there is none) with `text`, aligned to the
 * sound from the end of the word before them to the start of the word after; kept for the asset's media. Returns the
 * whole transcript as it reads from now on.
 */
export async function correctTranscript(
  deps: InspectDeps,
  projectId: string,
  assetId: string,
  req: CorrectionRequest,
  opts: Omit<TranscribeOptions, 'from' | 'to' | 'text'> = {},
): Promise<Transcript> {
  const rt = deps.runtime;
  if (!rt?.corrections) throw new UserFacingError('corrections need ffmpeg and a speech engine, which were not found');
  const said = textWords(req.text);
  if (!said.length) throw new UserFacingError('text holds no words: give the right words for the span replaced');
  if (said.length > MAX_TEXT_WORDS)
    throw new UserFacingError(
      `text has ${said.length} words; correct at most ${MAX_TEXT_WORDS} at once, or give the whole script as text without replace`,
    );
  const before = await transcribe(deps, projectId, assetId, opts);
  const words = before.words;
  const { first, last } = req;
  if (!Number.isInteger(first) || !Number.isInteger(last) || first < 0 || last < first || last >= words.length)
    throw new UserFacingError(
      words.length
        ? `replace [${first}, ${last}] is not a range of asset ${before.asset_id}'s transcript, which has words 0 to ${words.length - 1}; give [first, last] as transcribe_asset lists them (a sentence: its first_word and last_word)`
        : `asset ${before.asset_id}'s transcript has no words to replace; give the whole script as text, without replace`,
    );
  const prev = words[first - 1];
  const next = words[last + 1];
  const from = Math.min(prev ? prev.end_seconds : before.from_seconds, words[first]!.start_seconds);
  const to = Math.max(next ? next.start_seconds : before.to_seconds, words[last]!.end_seconds);
  if (!(to - from >= MIN_SPAN))
    throw new UserFacingError(
      `words ${first}-${last} of asset ${before.asset_id} take no time in its transcript (${from}-${to} s); widen the range to the words around them`,
    );
  const span = await transcribe(deps, projectId, assetId, { ...opts, from, to, text: req.text });
  const { key } = await locateAsset(deps, projectId, assetId, opts.signal);
  await addCorrection(rt, key, {
    from,
    to,
    words: span.words.map(({ index: _index, ...w }) => w),
    ends: said.map((w) => w.endsSentence),
    ...(span.unplaced?.length ? { unplaced: span.unplaced } : {}),
    ...(span.doubtful?.length ? { doubtful: span.doubtful } : {}),
  });
  return transcribe(deps, projectId, assetId, { ...(opts.signal ? { signal: opts.signal } : {}) });
}
