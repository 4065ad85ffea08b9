// tighten_edit's workflow: a kept edit, the transcripts of its sources (as stored: nothing is transcribed here), the
// plan (analysis/tighten.ts), and the tightened edit checked and kept under an edit_id of its own.
import { parseTimecode } from '../edit/timecode.js';
import { planTighten, type TightenOptions, type TightenPlan, type TightenSource } from '../analysis/tighten.js';
import { UserFacingError } from '../errors.js';
import { hearIslands } from '../media/filler-sound.js';
import { sourceFromUrl } from '../media/input.js';
import { checkAndKeep, type CheckDeps } from './check-edit.js';
import type { CheckedEdit } from './checked-edit.js';
import { resolveEditInput } from './edit-input.js';
import type { EditStore } from './edit-store.js';
import { inspect } from './inspect.js';
import { projectOrSuggestion } from './suggest.js';
import { storedTranscript } from './transcribe.js';

export interface Tightened {
  plan: TightenPlan;
  checked: CheckedEdit;
  /** The edit it was made from. */
  from: string;
  cutsBefore: number;
}

export async function tightenEdit(
  deps: CheckDeps & { edits?: EditStore },
  editId: string,
  opts: TightenOptions,
  signal?: AbortSignal,
): Promise<Tightened> {
  if (opts.maxPauseSeconds !== undefined && !(opts.maxPauseSeconds >= 0.3 && opts.maxPauseSeconds <= 60)) {
    throw new UserFacingError(
      `max_pause_seconds is ${opts.maxPauseSeconds}; give 0.3 to 60 seconds (the pause left around words is up to 0.3 s)`,
    );
  }
  const { stored } = await resolveEditInput(deps.edits, { edit_id: editId });
  if (!stored) throw new UserFacingError('give the edit_id of a kept edit (compose_edit returns one)');
  const sources = new Map<string, TightenSource>();
  const project = deps.runtime ? await projectOrSuggestion(deps.backend, stored.project_id, signal) : undefined;
  for (const id of new Set(stored.edit.video_series_sequential.map((s) => s.video_id))) {
    const t = await storedTranscript(deps, stored.project_id, id, signal).catch(() => undefined);
    if (!t?.transcript.words.length) continue;
    // The silences the sound holds (the inspection: cached, or made now), where the cut points best go.
    const seen = await inspect(deps, stored.project_id, id, { signal }).catch((err: unknown) => {
      if (signal?.aborted) throw err;
      return undefined;
    });
    sources.set(id, {
      words: t.transcript.words,
      duration: t.transcript.duration_seconds,
      ...(seen ? { silences: seen.stored.inspection.silences } : {}),
      unplaced: new Set([...(t.transcript.unplaced ?? []), ...(t.transcript.doubtful ?? [])]),
      // A transcript aligned to the person's own text holds the words said: a word alone in a filler-like island is
      // that word (a filler in the text is found by its word), so the sound is not asked.
      ...(t.transcript.aligned
        ? { aligned: true }
        : await heardFillers(deps, project?.assets?.find((a) => a.id === id)?.url, spansOf(stored.edit, id), signal)),
    });
  }
  const plan = planTighten(stored.edit, sources, opts);
  const checked = await checkAndKeep(
    deps,
    { project_id: stored.project_id, edit: plan.edit, audio_fade_ms: stored.options.audio_fade_ms },
    signal,
  );
  return { plan, checked, from: stored.edit_id, cutsBefore: stored.edit.video_series_sequential.length };
}

/** The spans of `id`'s cuts in an edit (source time), a little wider: the pauses around their edges are heard too. */
function spansOf(
  edit: { video_series_sequential: { video_id: string; video_start_time: string; video_end_time: string }[] },
  id: string,
) {
  const sec = (t: string) => {
    const r = parseTimecode(t);
    return r.ok ? r.ms / 1000 : NaN;
  };
  return edit.video_series_sequential
    .filter((s) => s.video_id === id)
    .map((s) => ({ from: Math.max(0, sec(s.video_start_time) - 0.5), to: sec(s.video_end_time) + 0.5 }));
}

/**
 * The islands of sound in a source's cuts that measure as fillers (media/filler-sound.ts), when its sound can be
 * read here; nothing when it cannot (the transcript's words are all there is, and the text says so).
 */
async function heardFillers(
  deps: CheckDeps,
  url: string | null | undefined,
  spans: { from: number; to: number }[],
  signal?: AbortSignal,
): Promise<{ heardFillers?: { from: number; to: number }[] }> {
  const rt = deps.runtime;
  if (!rt) return {};
  const src = sourceFromUrl(url, { allowFile: deps.backend.kind === 'local' });
  if ('error' in src) return {};
  try {
    const out: { from: number; to: number }[] = [];
    for (const span of spans) {
      if (!(span.to > span.from)) continue;
      for (const i of await hearIslands(rt, src, span.from, span.to, signal))
        if (i.filler && !out.some((o) => o.to > i.from && o.from < i.to)) out.push({ from: i.from, to: i.to });
    }
    return { heardFillers: out };
  } catch (err) {
    if (signal?.aborted) throw err;
    return {};
  }
}
