// Where transcripts' corrections are kept and how a read transcript gets them (issue 47, item 1): per asset media, in
// the media runtime's corrections store (beside the transcripts, under keys of their own, never evicted: a person's
// words cannot be made again), read whenever a whole-asset transcript is, so that captions, search and cuts by words
// follow them from then on, after a restart too. This is the one place they are read and written.
import { applyCorrections } from '../analysis/transcript-corrections.js';
import type { MediaRuntime } from './media-runtime.js';
import type { StoredCorrections, StoredTranscript, TranscriptCorrection } from './transcript.js';

/** The key of an asset media's corrections (its locateAsset key). */
const keyOf = (mediaKey: string) => `corrections|whole|${mediaKey}`;

/** The corrections given to an asset media's whole transcript, in time order (none when there is no store). */
export async function readCorrections(rt: MediaRuntime | undefined, mediaKey: string): Promise<TranscriptCorrection[]> {
  const stored = await rt?.corrections?.get(keyOf(mediaKey));
  return stored?.v === 1 ? stored.corrections : [];
}

/** A whole-asset transcript as read: with its media's corrections laid over it. */
export async function withCorrections(
  rt: MediaRuntime | undefined,
  mediaKey: string,
  stored: StoredTranscript,
): Promise<StoredTranscript> {
  const corrections = await readCorrections(rt, mediaKey);
  if (!corrections.length) return stored;
  return { ...stored, transcript: applyCorrections(stored.transcript, corrections) };
}

/** Keeps a correction: it replaces those it overlaps (the newest words win). */
export async function addCorrection(
  rt: MediaRuntime,
  mediaKey: string,
  correction: TranscriptCorrection,
): Promise<void> {
  if (!rt.corrections) throw new Error('no store for corrections');
  const kept = (await readCorrections(rt, mediaKey)).filter((c) => c.to <= correction.from || c.from >= correction.to);
  const doc: StoredCorrections = { v: 1, corrections: [...kept, correction].sort((a, b) => a.from - b.from) };
  await rt.corrections.set(keyOf(mediaKey), doc);
}

/** Forgets an asset media's corrections (a whole script aligned since replaces every word). */
export async function clearCorrections(rt: MediaRuntime | undefined, mediaKey: string): Promise<void> {
  await rt?.corrections?.delete(keyOf(mediaKey));
}
