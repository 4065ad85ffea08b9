// The captions of a checked edit (issue 33, item 5; issue 47, item 1): the transcripts of the assets whose speech it
// plays (every cut's, every overlay's that is not music or effects), made now where missing (with progress; within the
// call's wait, then handed over to transcribe_asset), laid on the output clock and grouped into cues that fit the
// output's picture by edit/captions.ts. Shared by preview_edit and render_edit (burned in) and export_edit (srt, vtt).
// What the cues cannot vouch for is said in warnings: speech not transcribed, and words that come from recognition
// rather than a script, with those it was unsure of named so that an agent can ask the person and correct them.
import {
  captionLayout,
  cuesOf,
  heardAssets,
  lineFitsLayout,
  wordsOnTimeline,
  type CaptionSource,
  type Cue,
  type PlacedWord,
} from '../edit/captions.js';
import { CAPTION_RULES } from '../edit/captions.js';
import { LOW_CONFIDENCE } from '../edit/words.js';
import { UserFacingError } from '../errors.js';
import type { CheckedEdit } from './checked-edit.js';
import type { InspectDeps } from './inspect.js';
import { StillTranscribing, stillTranscribingState, storedTranscript, transcribe } from './transcribe.js';
import { unsureWords, type Transcript } from './transcript.js';

export interface EditCaptions {
  cues: Cue[];
  /** What the cues cannot vouch for (speech not transcribed, words recognised or unsure): said, with the fix. */
  warnings: string[];
}

/** How captions hear what is not transcribed yet: progress, and when to hand the transcription over. */
export interface CaptionListening {
  onProgress?: (fraction: number, message: string) => void;
  /** How long (ms) the call may wait for transcriptions; past it they go on in the background. */
  waitMs?: number;
  debug?: (msg: string) => void;
}

/** A recognised word under this confidence is unsure (the engine's posterior; search's `doubtful` too). */
export const UNSURE_CONFIDENCE = LOW_CONFIDENCE;
/** Unsure words named in a warning, at most (a few bytes each; past it, the call that lists them is named). */
const NAMED_UNSURE = 30;

/**
 * The assets whose speech the edit lets be heard: cuts with sound, overlays that are neither music nor effects, each
 * unless muted throughout (volume 0, gain at -30 dB or under): speech not heard is neither transcribed nor captioned.
 */
function speakingAssets(checked: CheckedEdit): Set<string> {
  const t = checked.timeline!;
  const speaking = new Set<string>();
  const heard = heardAssets(t);
  for (const c of t.cuts)
    if (heard.has(c.assetId) && checked.assets.get(c.assetId)?.facts?.hasAudio !== false) speaking.add(c.assetId);
  for (const o of t.overlays)
    if (heard.has(o.assetId) && o.role !== 'music' && o.role !== 'effects') speaking.add(o.assetId);
  return speaking;
}

const named = (checked: CheckedEdit, id: string) =>
  `${id}${checked.assets.get(id)?.name ? ` (${checked.assets.get(id)!.name})` : ''}`;

/**
 * The transcripts of the assets whose speech plays: cached, or made now (all at once, progress their mean). One still
 * being made when the wait is over ends the call with what to follow; one that cannot be made is left out and named.
 */
async function transcriptsOf(
  deps: InspectDeps,
  checked: CheckedEdit,
  ids: string[],
  signal: AbortSignal | undefined,
  listening: CaptionListening,
): Promise<{ transcripts: Map<string, Transcript>; missing: { id: string; why: string }[] }> {
  const transcripts = new Map<string, Transcript>();
  const missing: { id: string; why: string }[] = [];
  const pending: StillTranscribing[] = [];
  const heard = new Map<string, number>();
  const handOverAt = listening.waitMs === undefined ? undefined : Date.now() + listening.waitMs;
  const progress = (id: string) => (fraction: number, message: string) => {
    heard.set(id, fraction);
    const mean = [...heard.values()].reduce((a, b) => a + b, 0) / heard.size;
    listening.onProgress?.(mean, `${message} (asset ${id}, for the captions)`);
  };
  await Promise.all(
    ids.map(async (id) => {
      try {
        const stored = await storedTranscript(deps, checked.projectId, id, signal);
        if (stored) {
          transcripts.set(id, { ...stored.transcript, cached: true });
          return;
        }
        if (!deps.runtime?.speech || !deps.runtime.transcripts) {
          missing.push({ id, why: 'no speech engine is installed here to transcribe it' });
          return;
        }
        const made = await transcribe(deps, checked.projectId, id, {
          signal,
          onProgress: progress(id),
          debug: listening.debug,
          ...(handOverAt !== undefined ? { handOverAt } : {}),
        });
        transcripts.set(id, made);
      } catch (err) {
        if (signal?.aborted) throw err;
        if (err instanceof StillTranscribing) pending.push(err);
        else missing.push({ id, why: (err as Error).message });
      }
    }),
  );
  if (pending.length) {
    const one = pending.length === 1;
    throw new UserFacingError(
      `${one ? 'asset' : 'assets'} ${pending.map((p) => named(checked, p.assetId)).join(', ')} ${one ? 'is' : 'are'} still being transcribed for the captions: ` +
        `${pending.map((p) => stillTranscribingState(p)).join(', ')}. ${one ? 'It goes' : 'They go'} on in the background: follow ${one ? 'it' : 'each'} with ` +
        `transcribe_asset {project_id: "${checked.projectId}", asset_id: "${pending[0]!.assetId}"}${one ? '' : ' (and the others alike)'} to its end, then call again`,
    );
  }
  return { transcripts, missing };
}

/** Whether a word of a transcript was given by a person (a correction or a script) rather than guessed. */
function givenWords(t: Transcript): Set<number> {
  const given = new Set<number>();
  for (const [a = 0, b = -1] of t.corrected ?? []) for (let i = a; i <= b; i++) given.add(i);
  return given;
}

/**
 * The words captioned from one asset that may be wrong (unsureWords: the words transcribe_asset marks `doubtful`):
 * from recognition, those it was unsure of (confidence under UNSURE_CONFIDENCE); from a script, those not heard in
 * the sound or doubtful (their times are guessed). A word a correction gave is sure.
 */
function unsureOf(t: Transcript, placed: PlacedWord[]): PlacedWord[] {
  const unsure = unsureWords(t);
  return placed.filter((p) => p.source !== undefined && unsure.has(p.source));
}

/** The warning that says where an asset's captioned words come from, and names those that may be wrong. */
function sourceWarning(checked: CheckedEdit, id: string, t: Transcript, placed: PlacedWord[]): string | undefined {
  const unsure = unsureOf(t, placed);
  const given = givenWords(t);
  const fix = `transcribe_asset {project_id: "${checked.projectId}", asset_id: "${id}", text: the right words, replace: [first, last]} corrects a span (text alone: the whole script)`;
  // Each word by its index in the asset's transcript (what replace takes) and its time there, then on the output.
  const list = unsure
    .slice(0, NAMED_UNSURE)
    .map(
      (p) =>
        `"${p.word}" (word ${p.source} at ${t.words[p.source!]!.start_seconds.toFixed(2)} s in the asset, ${p.start.toFixed(2)} s in the output)`,
    )
    .join(', ');
  const more =
    unsure.length > NAMED_UNSURE
      ? `, and ${unsure.length - NAMED_UNSURE} more (transcribe_asset {project_id: "${checked.projectId}", asset_id: "${id}", words: true} lists every word; structuredContent.words gives each its confidence)`
      : '';
  if (t.aligned) {
    if (!unsure.length) return undefined;
    return `captions: asset ${named(checked, id)} is captioned from its script, but ${unsure.length} of its ${placed.length} captioned words were not heard in the sound (their times are guessed): ${list}${more}; ${fix}`;
  }
  const recognised = placed.filter((p) => p.source !== undefined && !given.has(p.source)).length;
  if (!recognised) return undefined;
  return (
    `captions: asset ${named(checked, id)} is captioned from speech recognition, not a script: ${recognised} of its ${placed.length} captioned words were recognised and may be wrong` +
    `${unsure.length ? `; it was unsure of ${unsure.length}: ${list}${more}` : ''}. Ask the person for the right words; ${fix}`
  );
}

/** The warning for speech that plays but has no transcript. */
function missingWarning(checked: CheckedEdit, missing: { id: string; why: string }[]): string {
  const t = checked.timeline!;
  const ids = missing.map((m) => m.id).sort();
  const one = ids.length === 1;
  return (
    `captions: ${one ? 'asset' : 'assets'} ${ids.map((id) => named(checked, id)).join(', ')} ${one ? 'has' : 'have'} no transcript (${missing[0]!.why}), so ${one ? 'its' : 'their'} speech is not captioned; ` +
    `transcribe_asset {project_id: "${checked.projectId}", asset_id: "${ids[0]}"${one ? '' : ', …'}} (with text: the words said, for exact captions), then call again` +
    (t.overlays.some((o) => o.role === undefined && ids.includes(o.assetId))
      ? '; an overlay of music or effects: give it role "music" or "effects", which are never captioned'
      : '')
  );
}

/**
 * The cues of a checked edit on its output clock, broken into lines that fit its picture (at its own size: a smaller
 * preview scales the same lines), from its speech's transcripts, made now where missing.
 */
export async function captionsOf(
  deps: InspectDeps,
  checked: CheckedEdit,
  signal?: AbortSignal,
  listening: CaptionListening = {},
): Promise<EditCaptions> {
  const t = checked.timeline;
  if (!t) return { cues: [], warnings: [] };
  const ids = [...speakingAssets(checked)].sort();
  const { transcripts, missing } = await transcriptsOf(deps, checked, ids, signal, listening);
  const sources = new Map<string, CaptionSource>();
  for (const [id, tr] of transcripts)
    sources.set(id, { words: tr.words, sentences: tr.sentences, aligned: !!tr.aligned });
  const placed = wordsOnTimeline(t, sources);
  const style = t.captions?.style;
  const fits = style ? lineFitsLayout(captionLayout(style, t.width, t.height)) : undefined;
  const cues = cuesOf(placed, CAPTION_RULES, fits);
  const warnings: string[] = [];
  if (missing.length) warnings.push(missingWarning(checked, missing));
  for (const [id, tr] of transcripts) {
    const own = placed.filter((p) => p.asset === id);
    if (!own.length) continue;
    const said = sourceWarning(checked, id, tr, own);
    if (said) warnings.push(said);
  }
  return { cues, warnings };
}

/**
 * The words each cut holds (heard whole in it, as captions place them), from the transcripts there are (none is made):
 * what the contact sheet says under a cut's frames. Empty lists where a cut's source has no transcript.
 */
export async function wordsByCut(deps: InspectDeps, checked: CheckedEdit, signal?: AbortSignal): Promise<string[][]> {
  const t = checked.timeline;
  if (!t) return [];
  const sources = new Map<string, CaptionSource>();
  await Promise.all(
    [...new Set(t.cuts.map((c) => c.assetId))].map(async (id) => {
      const stored = await storedTranscript(deps, checked.projectId, id, signal).catch((err: unknown) => {
        if (signal?.aborted) throw err;
        return undefined;
      });
      if (stored) sources.set(id, { words: stored.transcript.words, sentences: stored.transcript.sentences });
    }),
  );
  const byCut = t.cuts.map((): string[] => []);
  const { overlays: _o, ...cutsOnly } = t;
  for (const w of wordsOnTimeline({ ...cutsOnly, overlays: [] }, sources)) {
    const index = Number(w.item.slice(1));
    const at = t.cuts.findIndex((c) => c.index === index);
    if (at >= 0) byCut[at]!.push(w.word);
  }
  return byCut;
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
