// What a transcript is: an asset's words and sentences with their times, as heard or as a known text aligned to the
// sound (its schema, which the transcript resource and transcribe_asset's pages serve), and what is cached of it per
// asset and span (StoredTranscript, what the media runtime's transcripts hold), and the corrections a person gave it
// (StoredCorrections, beside them). Making one is transcribe.ts; correcting one, corrections.ts.
import { z } from 'zod';
import type { Correction } from '../analysis/transcript-corrections.js';
import { LOW_CONFIDENCE } from '../edit/words.js';

export const TranscriptWordSchema = z.object({
  index: z.number().int(),
  word: z.string(),
  start_seconds: z.number(),
  end_seconds: z.number(),
  confidence: z.number().min(0).max(1).optional().describe("The engine's posterior for the word, where it gives one"),
  doubtful: z
    .literal(true)
    .optional()
    .describe(
      'true: the word may be wrong (recognised with confidence under 0.5, or a text word not heard): captions name it; ask the person',
    ),
});

export const TranscriptSentenceSchema = z.object({
  index: z.number().int(),
  text: z.string(),
  start_seconds: z.number(),
  end_seconds: z.number(),
  first_word: z.number().int(),
  last_word: z.number().int(),
});

export const TranscriptSchema = z.object({
  asset_id: z.string(),
  engine: z.object({ name: z.string(), model: z.string().optional() }),
  language: z.string().describe("The language the engine heard in (its model's)"),
  duration_seconds: z.number().describe('Of the asset'),
  from_seconds: z.number().describe("The span heard: its start on the asset's clock"),
  to_seconds: z.number(),
  aligned: z
    .boolean()
    .describe('true: the words are a known text (text), each placed in time; false: what the engine recognised'),
  words: z.array(TranscriptWordSchema).describe('In time order, inside the asset'),
  sentences: z
    .array(TranscriptSentenceSchema)
    .describe("At the text's sentence ends when aligned; else at pauses of 0.6 s or more"),
  unplaced: z
    .array(z.number().int())
    .optional()
    .describe(
      'Aligned only: indices of the words the engine did not hear; they share the time between their placed neighbours',
    ),
  cleaned: z
    .literal(true)
    .optional()
    .describe('A music bed or noise heard in the pauses was taken off before recognition'),
  doubtful: z
    .array(z.number().int())
    .optional()
    .describe(
      'Aligned only: placed words the sound does not support (squeezed or unsure beside unheard words); not cut by',
    ),
  corrected: z
    .array(z.array(z.number().int()).length(2))
    .optional()
    .describe('[first, last] word ranges given as corrections (transcribe_asset with replace): the right words'),
  cached: z.boolean(),
});
export type Transcript = z.infer<typeof TranscriptSchema>;

/**
 * The words of a transcript that may be wrong, which captions name and transcribe_asset marks `doubtful`: recognised
 * words the engine was unsure of (confidence under LOW_CONFIDENCE); from a text, words not heard in the sound
 * (unplaced) or doubtful. A word a correction gave is sure.
 */
export function unsureWords(t: Omit<Transcript, 'cached'>): Set<number> {
  const given = new Set<number>();
  for (const [a = 0, b = -1] of t.corrected ?? []) for (let i = a; i <= b; i++) given.add(i);
  const off = new Set([...(t.unplaced ?? []), ...(t.doubtful ?? [])]);
  const unsure = new Set<number>();
  for (const w of t.words) {
    if (given.has(w.index)) continue;
    if (t.aligned ? off.has(w.index) : w.confidence !== undefined && w.confidence < LOW_CONFIDENCE) unsure.add(w.index);
  }
  return unsure;
}

/** `t` with each word that may be wrong (unsureWords) marked `doubtful: true`, so an agent can ask about them. */
export function markUnsure<T extends Omit<Transcript, 'cached'>>(t: T): T {
  const unsure = unsureWords(t);
  if (!unsure.size) return t;
  return { ...t, words: t.words.map((w) => (unsure.has(w.index) ? { ...w, doubtful: true as const } : w)) };
}

export interface StoredTranscript {
  transcript: Omit<Transcript, 'cached'>;
  /** The hash of the text it was aligned to, when aligned. */
  textHash?: string;
  /** How the text's words were timed (TEXT_TIMING): an alignment timed otherwise is made again when asked for. */
  timing?: number;
}

/** 2: the text's words take the times the sound gives them (text-timing.ts); before, recognition's match alone. */
export const TEXT_TIMING = 2;

/**
 * A correction of a span of a whole-asset transcript (transcribe_asset with replace): the right words, aligned to the
 * sound between the words they replaced, on the asset's clock. Applied over whatever transcript the asset has (it
 * replaces the words inside [from, to]), so it outlives a transcript made again.
 */
export type TranscriptCorrection = Correction;

/** What is kept per asset media: its corrections, in time order, none overlapping. */
export interface StoredCorrections {
  v: 1;
  corrections: TranscriptCorrection[];
}
