// The captions of a checked edit (issue 33, item 5): the cached transcripts of the assets whose speech it plays (every
// cut's, every overlay's that is not music or effects), laid on the output clock and grouped into cues by
// edit/captions.ts. Shared by preview_edit and render_edit (burned in) and export_edit (srt, vtt). Transcripts are
// read,
// never made here: an asset without one is named in a warning with transcribe_asset, and captions come from the rest.
import { cuesOf, wordsOnTimeline, type Cue } from '../edit/captions.js';
import type { TimedWord } from '../edit/words.js';
import type { CheckedEdit } from './checked-edit.js';
import type { InspectDeps } from './inspect.js';
import { storedTranscript } from './transcribe.js';

export interface EditCaptions {
  cues: Cue[];
  /** Assets whose speech plays but has no transcript (or it could not be read): said, with the fix. */
  warnings: string[];
}

/** The cues of a checked edit on its output clock, from the transcripts made so far. */
export async function captionsOf(deps: InspectDeps, checked: CheckedEdit, signal?: AbortSignal): Promise<EditCaptions> {
  const t = checked.timeline;
  if (!t) return { cues: [], warnings: [] };
  const speaking = new Set<string>();
  for (const c of t.cuts) if (checked.assets.get(c.assetId)?.facts?.hasAudio !== false) speaking.add(c.assetId);
  for (const o of t.overlays) if (o.role !== 'music' && o.role !== 'effects') speaking.add(o.assetId);
  const words = new Map<string, TimedWord[]>();
  const missing: string[] = [];
  await Promise.all(
    [...speaking].map(async (id) => {
      try {
        const stored = await storedTranscript(deps, checked.projectId, id, signal);
        if (stored) words.set(id, stored.transcript.words);
        else missing.push(id);
      } catch (err) {
        if (signal?.aborted) throw err;
        missing.push(id);
      }
    }),
  );
  const warnings: string[] = [];
  if (missing.length) {
    const named = missing
      .sort()
      .map((id) => `${id}${checked.assets.get(id)?.name ? ` (${checked.assets.get(id)!.name})` : ''}`);
    const one = missing.length === 1;
    warnings.push(
      `captions: ${one ? 'asset' : 'assets'} ${named.join(', ')} ${one ? 'has' : 'have'} no transcript, so ${one ? 'its' : 'their'} speech is not captioned; ` +
        `transcribe_asset {project_id: "${checked.projectId}", asset_id: "${missing.sort()[0]}"${one ? '' : ', …'}} (with text: the words said, for exact captions), then call again` +
        (t.overlays.some((o) => o.role === undefined && missing.includes(o.assetId))
          ? '; an overlay of music or effects: give it role "music" or "effects", which are never captioned'
          : ''),
    );
  }
  return { cues: cuesOf(wordsOnTimeline(t, words)), warnings };
}

/**
 * The words of the dialogue's transcripts (cuts' sound and overlays that are neither music nor effects), by asset:
 * where music ducks, speech is taken from them where they exist (heard in the sound elsewhere). Only assets with a
 * transcript are in the map; none is made.
 */
export async function dialogueWords(
  deps: InspectDeps,
  checked: CheckedEdit,
  signal?: AbortSignal,
): Promise<Map<string, { start: number; end: number }[]>> {
  const t = checked.timeline;
  const words = new Map<string, { start: number; end: number }[]>();
  // (Only where music ducks is speech asked for.)
  if (!t || !t.overlays.some((o) => !!o.duckDb)) return words;
  const ids = new Set([
    ...t.cuts.map((c) => c.assetId),
    ...t.overlays.filter((o) => o.role !== 'music' && o.role !== 'effects').map((o) => o.assetId),
  ]);
  await Promise.all(
    [...ids].map(async (id) => {
      const stored = await storedTranscript(deps, checked.projectId, id, signal).catch((err: unknown) => {
        if (signal?.aborted) throw err;
        return undefined;
      });
      if (stored)
        words.set(
          id,
          stored.transcript.words.map((w) => ({ start: w.start_seconds, end: w.end_seconds })),
        );
    }),
  );
  return words;
}
