// What the media work is given (MediaRuntime): ffmpeg and its process limit, the caches (previews and their
// segments, inspections, reframes, transcripts and their corrections), the speech engine and its limit, a scratch folder, and the store of
// finished previews every replica reads (PreviewStore). Built by assemble.ts: one per caller over HTTP, one per cache
// folder on a worker.
import type { PreviewCache } from '../media/cache.js';
import type { InspectionCache } from '../media/inspect-cache.js';
import type { Limiter, MediaProber } from '../media/probe.js';
import type { StoredScan } from '../media/reframe.js';
import type { StoredPhonePass } from '../media/phone-pass.js';
import type { SegmentStore } from '../media/segments.js';
import type { SpeechEngine } from '../media/speech.js';
import type { StoredInspection } from './inspection.js';
import type { StoredCorrections, StoredTranscript } from './transcript.js';

export interface MediaRuntime {
  ffmpeg: string;
  /** At most this many ffmpeg processes at once (previews and local renders). */
  limiter: Limiter;
  cache: PreviewCache;
  maxInputs: number;
  font?: string;
  prober?: MediaProber;
  /** Rendered cuts of previews, joined into the next previews that hold them (CUTROOM_CACHE_DIR/segments). */
  segments: SegmentStore;
  /** What inspect_asset found, per asset (memory and CUTROOM_CACHE_DIR/inspections). */
  inspections?: InspectionCache<StoredInspection>;
  /** Where the action of focus "auto" cuts is, per media and range (beside the inspections). */
  reframes?: InspectionCache<StoredScan>;
  /** What transcribe_asset heard, per asset and span (beside the inspections). */
  transcripts?: InspectionCache<StoredTranscript>;
  /** Each asset's phone pass for listening searches, with the sound it heard (CUTROOM_CACHE_DIR/listening). */
  phonePasses?: InspectionCache<StoredPhonePass>;
  /** The corrections given to whole-asset transcripts, per asset media (beside them, never evicted). */
  corrections?: InspectionCache<StoredCorrections>;
  /** The speech engine, when one is installed. */
  speech?: SpeechEngine;
  /** At most this many transcriptions at once (transcribe_asset, search, clips cut by words); the rest wait. */
  listening: Limiter;
  /** cutroom's scratch folder for intermediate files (decoded sound). */
  scratchDir?: string;
  /** Where finished previews are kept for every replica (CUTROOM_S3_*); absent, the cache dir is shared. */
  store?: PreviewStore;
}

/** A store of finished previews beside the cache dir (jobs/preview-store.ts): workers put, servers fetch. */
export interface PreviewStore {
  /** Copies a finished preview's folder from this cache dir to the store (its record last); kept there once. */
  put(id: string): Promise<void>;
  /** Brings a finished preview from the store into this cache dir; false when the store has none of that id. */
  fetch(id: string): Promise<boolean>;
  /** Copies one file of a preview still being made (a cut's clip, asked for meanwhile) to the store. */
  putFile(id: string, name: string): Promise<void>;
  /** Reads one file of a preview from the store to `to` (renamed when whole); false when the store has none. */
  getFile(id: string, name: string, to: string): Promise<boolean>;
}
