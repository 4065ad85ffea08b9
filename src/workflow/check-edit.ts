// Everything the edit tools do before acting: fetch the project, measure the media the edit uses, compose when
// given the short form, and lint. Shared by compose_edit, render_edit and preview_edit.
import type { Backend } from '../backend/types.js';
import {
  clipFromShot,
  composeEdit,
  sourceOutput,
  wholeSourceDefaults,
  type ClipInput,
  type ComposeClip,
} from '../edit/compose.js';
import { cutClock } from '../edit/cut-clock.js';
import {
  DEFAULT_WORD_HANDLE,
  SAID_SPEECH_PER_WORD,
  saidBetween,
  cutAroundEdges,
  findPhrase,
  transcriptEdges,
  unheardRuns,
  unheardSpan,
  unheardWords,
  type FrameGrid,
  type TimedWord,
  type WordCut,
} from '../edit/words.js';
import { DEFAULT_FPS } from '../edit/model.js';
import { CLOSE_LEAN, HISS_LEAN, hearEdges, speechRuns, speechSeconds, type HeardEdges } from '../media/word-edges.js';
import { joinClips, type HeardClip } from '../edit/clip-joins.js';
import { agreedBoundaries, runsOn, type Realigned } from '../analysis/word-joins.js';
import { askTheSound, realignEdges, sibilantEdges, type AskedRun } from './aligned-edges.js';
import type { Diagnostic } from '../edit/model.js';
import { assetProblem, classifyAsset, lintEdit, type LintResult } from '../edit/lint.js';
import { assetName } from '../api/summaries.js';
import { DEFAULT_FADE_MS, MAX_FADE_MS, summarizeTimeline, type TimelineSummary } from '../edit/plan.js';
import { UserFacingError, isDiskFull, shown } from '../errors.js';
import { sourceFromUrl } from '../media/input.js';
import { INSTALL_HINT } from '../media/locate.js';
import type { MediaProber } from '../media/probe.js';
import { projectOrSuggestion } from './suggest.js';
import { resolveEditInput, type EditInput, type EditRefInput } from './edit-input.js';
import { editUri, type EditStore } from './edit-store.js';
import { inspect } from './inspect.js';
import { StillTranscribing, stillTranscribingState, transcribe } from './transcribe.js';
import type { Transcript } from './transcript.js';
import type { MediaRuntime } from './media-runtime.js';
import type { CheckedEdit, ProjectAsset } from './checked-edit.js';

export interface CheckDeps {
  backend: Backend;
  prober?: MediaProber;
  /** Needed for clips given by shot (their asset is inspected, or its cached inspection reused). */
  runtime?: MediaRuntime;
}

/** The display sizes of a checked edit's measured video sources (a service frames a cut's focus by them). */
export function sourceSizes(assets: Map<string, ProjectAsset>): Map<string, { width: number; height: number }> {
  const out = new Map<string, { width: number; height: number }>();
  for (const [id, a] of assets)
    if (a.facts?.width && a.facts.height) out.set(id, { width: a.facts.width, height: a.facts.height });
  return out;
}

/**
 * A check may have to listen: a clip cut by words on an asset not transcribed yet. It reports progress meanwhile,
 * and waits at most `waitMs` (CUTROOM_RENDER_WAIT_MS) before handing over: the transcription goes on in the
 * background, and the check fails with one line naming transcribe_asset, which follows it to its end.
 */
export interface Listening {
  onProgress?: (fraction: number, message: string) => void;
  waitMs?: number;
  debug?: (msg: string) => void;
}

/** The asset ids an edit refers to, read leniently from whatever shape it came in. */
function referencedIds(input: EditInput): { video: Set<string>; audio: Set<string> } {
  const video = new Set<string>();
  const audio = new Set<string>();
  const add = (set: Set<string>, v: unknown) => typeof v === 'string' && v.trim() && set.add(v.trim());
  for (const c of input.clips ?? []) add(video, c.asset_id);
  for (const o of input.overlays ?? []) add(audio, o.asset_id);
  const list = (v: unknown) =>
    (Array.isArray(v) ? (v as unknown[]) : []).filter(
      (x): x is Record<string, unknown> => !!x && typeof x === 'object',
    );
  for (const s of list(input.edit?.video_series_sequential)) add(video, s.video_id);
  for (const s of list(input.edit?.audio_overlay)) add(audio, s.audio_id);
  return { video, audio };
}

/** The field of a whole edit that does what a clips-form option does (given with edit, the option does nothing). */
const EDIT_FIELD_OF = {
  resolution: 'video_output_resolution',
  fps: 'video_output_fps',
  filename: 'video_output_filename',
  captions: 'captions',
} as const;

export async function checkEdit(
  deps: CheckDeps,
  input: EditInput,
  signal?: AbortSignal,
  listening: Listening = {},
): Promise<CheckedEdit> {
  const handOverAt = listening.waitMs === undefined ? undefined : Date.now() + listening.waitMs;
  // Checked (with "did you mean" for a near id) when the project is read, before anything else uses it.
  const projectId = input.project_id.trim();
  const hasCompose = !!(input.clips || input.overlays);
  if (input.edit && hasCompose)
    throw new UserFacingError(
      'give either edit (a whole edit definition) or clips/overlays (the short form), not both',
    );
  if (!input.edit && !input.clips)
    throw new UserFacingError(
      'nothing to check: give clips (the short form) or edit (a whole edit definition); an edit_id an earlier compose_edit returned goes to preview_edit, render_edit or export_edit as it is (its edit is the resource cutroom://edits/{edit_id})',
    );

  const project = await projectOrSuggestion(deps.backend, projectId, signal);
  const assets = new Map<string, ProjectAsset>();
  for (const a of project.assets ?? []) {
    const name = assetName(a);
    assets.set(a.id, { id: a.id, ...(name ? { name } : {}), kind: classifyAsset(a.asset_type), asset: a });
  }

  const skipped: string[] = [];
  const refs = referencedIds(input);
  if (!deps.prober) {
    skipped.push(`media checks (clip and audio lengths, aspect ratio): ffprobe was not found; ${INSTALL_HINT}`);
  } else {
    const prober = deps.prober;
    await Promise.all(
      [...new Set([...refs.video, ...refs.audio])].map(async (id) => {
        const info = assets.get(id);
        if (!info) return;
        const src = sourceFromUrl(info.asset.url, { allowFile: deps.backend.kind === 'local' });
        if ('error' in src) {
          info.probeError = src.error;
          return;
        }
        info.source = src;
        try {
          const facts = await prober.probe(id, src, signal);
          info.facts = facts;
          if (info.kind === 'unknown') info.kind = facts.isImage ? 'image' : classifyAsset(undefined, facts);
        } catch (err) {
          if (signal?.aborted) throw err;
          info.probeError = (err as Error).message;
        }
      }),
    );
  }

  let raw: unknown = input.edit;
  const notes: string[] = [];
  const shotDiagnostics: Diagnostic[] = [];
  // Clips whose shot or words could not be resolved: their one diagnostic is said; what the linter would add about
  // the placeholder times they get ("the cut ends where it starts") is noise, and is left out.
  const unresolved = new Set<number>();
  const endless = new Set<number>();
  if (input.edit) {
    for (const k of ['resolution', 'fps', 'filename', 'captions'] as const) {
      if (input[k] !== undefined)
        shotDiagnostics.push({
          severity: 'warning',
          path: `/${k}`,
          message: `${k} does nothing with edit (a whole edit definition): it is for clips`,
          hint: `set ${EDIT_FIELD_OF[k]} in the edit instead`,
        });
    }
  } else {
    const byShot = await resolveShots(
      deps,
      projectId,
      input.clips ?? [],
      assets,
      notes,
      shotDiagnostics,
      unresolved,
      signal,
    );
    // The output the call does not name: the sources' (the size and rate most cuts have).
    // (Stills say nothing of it: a photo's size is not the video's.)
    const fromSources = sourceOutput(
      (input.clips ?? []).map((c) => {
        const a = assets.get(String(c.asset_id).trim());
        return a?.kind === 'video' ? a.facts : undefined;
      }),
    );
    const resolution = input.resolution ?? fromSources.resolution;
    const fps = input.fps ?? fromSources.fps;
    const taken = [
      input.resolution === undefined && fromSources.resolution ? fromSources.resolution : undefined,
      input.fps === undefined && fromSources.fps ? `${fromSources.fps} fps` : undefined,
    ].filter(Boolean);
    if (taken.length)
      notes.push(`output ${taken.join(' at ')}: the sources' (resolution or fps in the call sets another)`);
    const pending: StillTranscribing[] = [];
    const heard = new Map<number, HeardClip>();
    const byWords = await resolveWords(deps, projectId, byShot, assets, notes, shotDiagnostics, unresolved, {
      signal,
      onProgress: listening.onProgress,
      debug: listening.debug,
      handOverAt,
      pending,
      fadeSec:
        (input.audio_fade_ms !== undefined &&
        Number.isFinite(input.audio_fade_ms) &&
        input.audio_fade_ms >= 0 &&
        input.audio_fade_ms <= MAX_FADE_MS
          ? input.audio_fade_ms
          : DEFAULT_FADE_MS) / 1000,
      outputFps: typeof fps === 'number' && fps > 0 ? fps : DEFAULT_FPS,
      heard,
    });
    if (pending.length) throw new UserFacingError(stillTranscribing(projectId, pending, assets));
    // A clip with no end whose source could not be measured: said in the agent's own field, not the edit's.
    const resolved = byWords.map((c, i) => {
      const ms = assets.get(String(c.asset_id).trim())?.facts?.durationMs;
      const filled = wholeSourceDefaults(c, ms === undefined ? undefined : ms / 1000);
      if (filled.said) notes.push(`clip ${i + 1} plays ${filled.said}`);
      else if (filled.clip.end === undefined) endless.add(i);
      return filled.clip;
    });
    // Where clips meet: no sample twice, no hole (edit/clip-joins.ts). Diagnostics already said move with their clip.
    const joins = joinClips(resolved, heard, unresolved);
    const clips = joins.clips;
    notes.push(...joins.notes);
    if (joins.clips.length !== resolved.length) {
      for (const set of [unresolved, endless]) {
        const moved = [...set].map((i) => joins.placeOf[i]!);
        set.clear();
        for (const i of moved) set.add(i);
      }
      for (const d of shotDiagnostics) d.path = movedPath(d.path, joins.placeOf);
    }
    const audioDurations = new Map<string, number>();
    for (const id of refs.audio) {
      const ms = assets.get(id)?.facts?.durationMs;
      if (ms !== undefined) audioDurations.set(id, ms / 1000);
    }
    raw = composeEdit(
      {
        clips,
        overlays: input.overlays,
        resolution,
        fps,
        filename: input.filename,
        ...(input.captions ? { captions: input.captions } : {}),
      },
      audioDurations,
    );
  }
  // The finishing asked beside the clips (or beside a whole edit that does not say it itself).
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const r = raw as Record<string, unknown>;
    raw = {
      ...r,
      ...(input.loudness !== undefined && r.loudness === undefined ? { loudness: input.loudness } : {}),
      ...(input.level_dialogue !== undefined && r.level_dialogue === undefined
        ? { level_dialogue: input.level_dialogue }
        : {}),
    };
  }
  const lint = lintEdit(raw, assets);
  if (unresolved.size) {
    const placeholder = (d: Diagnostic) =>
      [...unresolved].some(
        (i) => d.path === `/video_series_sequential/${i}` || d.path.startsWith(`/video_series_sequential/${i}/`),
      );
    lint.diagnostics = lint.diagnostics.filter((d) => !placeholder(d));
  }
  for (const i of endless) {
    const at = `/video_series_sequential/${i}/video_end_time`;
    lint.diagnostics = lint.diagnostics.filter((d) => d.path !== at);
    shotDiagnostics.push({
      severity: 'error',
      path: at,
      message: `clip ${i + 1} gives no end, and its source's length is not known (it could not be measured)`,
      hint: `give clips[${i}].end, in seconds or as "00:00:05.000"`,
    });
  }
  if (shotDiagnostics.length) {
    lint.diagnostics.unshift(...shotDiagnostics);
    if (shotDiagnostics.some((d) => d.severity === 'error')) lint.ready = false;
  }
  // A source whose header claims more than its media holds: its real end decided the checks; say so.
  for (const [id, info] of assets) {
    const f = info.facts;
    if (f?.headerDurationMs === undefined || f.durationMs === undefined) continue;
    lint.diagnostics.push({
      severity: 'warning',
      path: '',
      message: `asset ${id}: its header says it lasts ${f.headerDurationMs / 1000} s, but its media ends at ${f.durationMs / 1000} s; cuts are checked against the real end`,
      hint: 're-export or remux the source if its length matters elsewhere',
    });
  }
  const fade = input.audio_fade_ms;
  if (fade !== undefined && !(Number.isFinite(fade) && fade >= 0 && fade <= MAX_FADE_MS)) {
    lint.diagnostics.push({
      severity: 'error',
      path: '/audio_fade_ms',
      message: `audio_fade_ms is ${fade}; it must be 0 to ${MAX_FADE_MS} milliseconds`,
      hint: `leave it out for the default ${DEFAULT_FADE_MS} ms, or give 0 for hard cuts`,
    });
    lint.ready = false;
  }
  return {
    ...lint,
    diagnostics: lint.diagnostics.map(bounded),
    notes: notes.map((n) => shown(n, NOTE_CHARS)),
    fadeMs: fade ?? DEFAULT_FADE_MS,
    project,
    projectId,
    assets,
    skipped,
    ...(lint.timeline ? { summary: shortIds(summarizeTimeline(lint.timeline)) } : {}),
  };
}

/** A diagnostic's path at a clip given, moved to the cut that clip became part of. */
function movedPath(path: string, placeOf: number[]): string {
  const m = /^\/video_series_sequential\/(\d+)(\/.*)?$/.exec(path);
  const to = m ? placeOf[Number(m[1])] : undefined;
  return m && to !== undefined ? `/video_series_sequential/${to}${m[2] ?? ''}` : path;
}

/** A summary whose asset ids are quoted short: an edit that is not ready may name an "asset" of any length. */
function shortIds(s: TimelineSummary): TimelineSummary {
  const short = <T extends { asset_id: string }>(x: T): T =>
    x.asset_id.length > 60 ? { ...x, asset_id: shown(x.asset_id) } : x;
  return { ...s, cuts: s.cuts.map(short), overlays: s.overlays.map(short) };
}

/**
 * The most of a diagnostic's message or hint, or of a note, a result carries: an input echoed in one can be any length.
 */
const MESSAGE_CHARS = 600;
const NOTE_CHARS = 400;
const bounded = (d: Diagnostic): Diagnostic => ({
  ...d,
  message: shown(d.message, MESSAGE_CHARS),
  ...(d.hint !== undefined ? { hint: shown(d.hint, MESSAGE_CHARS) } : {}),
});

/** " (its name)" after an asset's id in a note, when it has one. */
const named = (assets: Map<string, ProjectAsset>, id: string) =>
  assets.get(id)?.name ? ` (${assets.get(id)!.name})` : '';

/**
 * The edit a call names (its edit_id, or compose_edit's arguments inline), checked against the project as it is
 * now, and kept under its edit_id once ready. A stored edit's notes (which shot, which words) are referred to, not repeated.
 */
export async function checkAndKeep(
  deps: CheckDeps & { edits?: EditStore },
  raw: EditRefInput,
  signal?: AbortSignal,
  listening?: Listening,
): Promise<CheckedEdit> {
  const { input, stored } = await resolveEditInput(deps.edits, raw);
  const c = await checkEdit(deps, input, signal, listening);
  const own = c.notes;
  // Kept again with the notes it was composed with; the result points to them (compose_edit said them) instead.
  if (stored) c.notes = [...stored.notes.map((n) => shown(n, NOTE_CHARS)), ...own];
  await keepChecked(deps.edits, c, signal);
  if (stored?.notes.length && c.editId) {
    const n = stored.notes.length;
    c.notes = [
      `${n === 1 ? 'a note' : `${n} notes`} from composing it, as compose_edit said: in ${editUri(c.editId)}`,
      ...own,
    ];
  }
  return c;
}

/**
 * Keeps a ready edit under its edit_id (c.editId). Keeping is for later calls: when it fails, this one goes on, saying
 * so.
 */
export async function keepChecked(edits: EditStore | undefined, c: CheckedEdit, signal?: AbortSignal): Promise<void> {
  if (!c.ready || !c.edit || !edits) return;
  try {
    c.editId = (
      await edits.put({ project_id: c.projectId, edit: c.edit, options: { audio_fade_ms: c.fadeMs }, notes: c.notes })
    ).edit_id;
  } catch (err) {
    if (signal?.aborted) throw err;
    const why = isDiskFull(err)
      ? 'the disk holding the data dir (CUTROOM_DATA_DIR) is full'
      : `it could not be written (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    c.skipped.push(
      `keeping the edit under an edit_id: ${why}; give the edit's arguments inline to preview_edit, render_edit and export_edit, or free space and compose again`,
    );
  }
}

/**
 * Clips given by shot become plain in and out points, from the asset's shot list (its inspection: cached, or run
 * now). Each use is noted (which shot, which list); what is off is a diagnostic at the clip's place in the edit.
 */
async function resolveShots(
  deps: CheckDeps,
  projectId: string,
  clips: ClipInput[],
  assets: Map<string, ProjectAsset>,
  notes: string[],
  diagnostics: Diagnostic[],
  unresolved: Set<number>,
  signal?: AbortSignal,
): Promise<ClipInput[]> {
  const lists = new Map<
    string,
    Promise<{ shots: { index: number; start_seconds: number; end_seconds: number }[]; cached: boolean }>
  >();
  return Promise.all(
    clips.map(async (clip, i) => {
      if (clip.shot === undefined) return clip;
      const path = `/video_series_sequential/${i}`;
      const id = typeof clip.asset_id === 'string' ? clip.asset_id.trim() : '';
      const placeholder = () => {
        unresolved.add(i);
        return { ...clip, shot: undefined, start: 0, end: 0 };
      };
      const problem = assetProblem(id, assets, 'video');
      if (problem) {
        diagnostics.push({ severity: 'error', path: `${path}/video_id`, ...problem });
        return placeholder();
      }
      let list = lists.get(id);
      if (!list) {
        list = inspect(deps, projectId, id, { signal }).then((r) => ({
          shots: r.stored.inspection.shots,
          cached: r.cached,
        }));
        lists.set(id, list);
      }
      let found;
      try {
        found = await list;
      } catch (err) {
        if (signal?.aborted) throw err;
        diagnostics.push({
          severity: 'error',
          path,
          message: `shot ${clip.shot} of asset ${id} could not be found: ${(err as Error).message}`,
          hint: 'give start and end instead of shot',
        });
        return placeholder();
      }
      const shot = found.shots[clip.shot - 1];
      if (!shot) {
        diagnostics.push({
          severity: 'error',
          path,
          message: `asset ${id} has ${found.shots.length} shot${found.shots.length === 1 ? '' : 's'}; there is no shot ${clip.shot}`,
          hint: 'inspect_asset lists the shots with their numbers',
        });
        return placeholder();
      }
      const r = clipFromShot(clip, shot);
      notes.push(
        `clip ${i + 1} is shot ${shot.index} of asset ${id}${named(assets, id)} (${shot.start_seconds}-${shot.end_seconds} s) -> ${r.clip.start}-${r.clip.end} s, ` +
          `from its shot list (${found.shots.length} shots, inspect_asset; ${found.cached ? 'cached' : 'scanned now'})`,
      );
      if (r.problem)
        diagnostics.push({
          severity: 'warning',
          path,
          message: r.problem,
          hint: 'inspect_asset shows the shot; zoom with from/to to pick exact points',
        });
      return r.clip;
    }),
  );
}

/** The one line an edit call answers when transcripts it needs are still being made after its wait. */
function stillTranscribing(projectId: string, pending: StillTranscribing[], assets: Map<string, ProjectAsset>): string {
  const one = pending.length === 1;
  return (
    `${one ? 'asset' : 'assets'} ${pending.map((p) => `${p.assetId}${named(assets, p.assetId)}`).join(', ')} ${one ? 'is' : 'are'} still being transcribed ` +
    `for ${one ? 'a clip' : 'clips'} cut by words: ${pending.map((p) => stillTranscribingState(p)).join(', ')}. ${one ? 'It goes' : 'They go'} on in the background: ` +
    `follow ${one ? 'it' : 'each'} with transcribe_asset {project_id: "${projectId}", asset_id: "${pending[0]!.assetId}"}${one ? '' : ' (and the others alike)'} to its end, then call again`
  );
}

/**
 * Clips given by words ({asset_id, phrase, occurrence?} or {asset_id, words: [first, last]}) become in and out points
 * in the pauses around those words, from the asset's transcript (cached, or made now). Each use is noted (which
 * transcript, which words); what is off is a diagnostic at the clip's place in the edit. Transcripts still being
 * made at `handOverAt` are listed in `pending` (they go on in the background).
 */
async function resolveWords(
  deps: CheckDeps,
  projectId: string,
  clips: ClipInput[],
  assets: Map<string, ProjectAsset>,
  notes: string[],
  diagnostics: Diagnostic[],
  unresolved: Set<number>,
  opts: {
    signal?: AbortSignal;
    onProgress?: Listening['onProgress'];
    debug?: Listening['debug'];
    handOverAt?: number;
    pending: StillTranscribing[];
    fadeSec: number;
    outputFps: number;
    /** Filled with the clips cut by words (by their index): where their sound is heard, and the pause around it. */
    heard: Map<number, HeardClip>;
  },
): Promise<ComposeClip[]> {
  const heard = opts.heard;
  const { signal } = opts;
  const transcripts = new Map<string, Promise<Transcript>>();
  // Progress over every transcript being made: the mean of their fractions.
  const listening = new Map<string, number>();
  const listened = (id: string) => (fraction: number, message: string) => {
    listening.set(id, fraction);
    const mean = [...listening.values()].reduce((a, b) => a + b, 0) / listening.size;
    opts.onProgress?.(
      mean,
      `${message} (asset ${id}${listening.size > 1 ? `; ${listening.size} assets being transcribed` : ''})`,
    );
  };
  return Promise.all(
    clips.map(async (clip, i) => {
      if (clip.phrase === undefined && clip.words === undefined) {
        if (clip.occurrence !== undefined)
          diagnostics.push({
            severity: 'warning',
            path: `/video_series_sequential/${i}`,
            message: 'occurrence does nothing without phrase',
            hint: 'give phrase (what is said) with occurrence, or leave occurrence out',
          });
        if (clip.handle !== undefined)
          diagnostics.push({
            severity: 'warning',
            path: `/video_series_sequential/${i}`,
            message: 'handle does nothing without phrase or words',
            hint: 'give phrase or words with handle, or leave handle out',
          });
        const { handle: _handle, ...plain } = clip;
        return plain;
      }
      const path = `/video_series_sequential/${i}`;
      const { phrase, occurrence, words, handle = DEFAULT_WORD_HANDLE, ...rest } = clip;
      const fail = (message: string, hint: string, at = path) => {
        diagnostics.push({ severity: 'error', path: at, message, hint });
        unresolved.add(i);
        return { ...rest, start: 0, end: 0 };
      };
      if (phrase !== undefined && words !== undefined)
        return fail('a clip gives both phrase and words', 'give one: phrase (what is said) or words [first, last]');
      if (clip.shot !== undefined || clip.start !== undefined || clip.end !== undefined)
        return fail(
          'a clip cut by words gives start, end or shot too',
          'leave start, end and shot out: the words decide the in and out points',
        );
      const id = typeof clip.asset_id === 'string' ? clip.asset_id.trim() : '';
      const problem = assetProblem(id, assets, 'video');
      if (problem) return fail(problem.message, problem.hint, `${path}/video_id`);
      let made = transcripts.get(id);
      if (!made) {
        made = transcribe(deps, projectId, id, {
          signal,
          onProgress: listened(id),
          debug: opts.debug,
          ...(opts.handOverAt !== undefined ? { handOverAt: opts.handOverAt } : {}),
        });
        transcripts.set(id, made);
      }
      let t: Transcript;
      try {
        t = await made;
      } catch (err) {
        if (signal?.aborted) throw err;
        if (err instanceof StillTranscribing) {
          if (!opts.pending.some((p) => p.assetId === err.assetId)) opts.pending.push(err);
          unresolved.add(i);
          return { ...rest, start: 0, end: 0 };
        }
        return fail(`asset ${id} could not be transcribed: ${(err as Error).message}`, 'give start and end instead');
      }
      let first: number;
      let last: number;
      if (phrase !== undefined) {
        const hits = findPhrase(t.words, phrase);
        const n = occurrence ?? 1;
        if (!hits.length)
          return fail(
            `"${phrase.slice(0, 80)}" is not said in asset ${id}'s transcript (${t.words.length} words, ${t.aligned ? 'aligned to a text' : 'recognised'})`,
            'search_transcripts finds where a phrase is said; transcribe_asset with text aligns a known script, which finds every word of it',
          );
        if (n > hits.length)
          return fail(
            `"${phrase.slice(0, 80)}" is said ${hits.length} time${hits.length === 1 ? '' : 's'} in asset ${id}; there is no occurrence ${n}`,
            `give occurrence 1 to ${hits.length}`,
          );
        [first, last] = hits[n - 1]!;
      } else {
        [first, last] = words as [number, number];
        if (!(first <= last) || last >= t.words.length)
          return fail(
            `words [${first}, ${last}] are not in asset ${id}'s transcript, which has ${t.words.length} words (0 to ${t.words.length - 1})`,
            'give [first, last] with first <= last, as transcribe_asset lists them',
          );
      }
      // Words of a known text the sound does not hold are never cut by: that would cut whatever was said nearby.
      const unheardSet = unheardWords(t.words, t.unplaced, t.doubtful);
      const unheard = unheardSpan(t.words, first, last, unheardSet);
      const info = assets.get(id);
      const duration = info?.facts?.durationMs !== undefined ? info.facts.durationMs / 1000 : t.duration_seconds;
      // Where the transcript did not place some of the words, those around each edge placed again in the sound
      // (aligned-edges.ts): whether they were said after all, and where. (Placed words keep the transcript's times:
      // aligned again, the boundaries between words that run together came out no closer, bench/README.md.)
      // Where they run into a neighbour word, aligned again too: where both alignments agree on the boundary, the cut
      // goes close to it (word-edges.ts, CLOSE_LEAN).
      let realigned: Realigned | undefined;
      if ((unheard || runsOn(t.words, first, last)) && deps.runtime && info?.source && info.facts?.hasAudio) {
        try {
          realigned = await realignEdges(deps.runtime, info.source, t.words, first, last, duration, unheardSet, signal);
        } catch (err) {
          if (signal?.aborted) throw err;
          opts.debug?.(`words ${first}-${last} of ${id}: aligning them again failed (${(err as Error).message})`);
        }
      }
      // A text's words the speaker left out, inside the clip: the checks below weigh speech, which the words around
      // them hold; asked whether the sound holds each, the engine leaves them out.
      let asked: AskedRun[] | undefined;
      const off = new Set([...(t.unplaced ?? []), ...(t.doubtful ?? [])]);
      if (t.aligned && off.size && deps.runtime && info?.source && info.facts?.hasAudio) {
        try {
          asked = await askTheSound(deps.runtime, info.source, t.words, first, last, duration, off, signal);
        } catch (err) {
          if (signal?.aborted) throw err;
          opts.debug?.(`words ${first}-${last} of ${id}: asking the sound for them failed (${(err as Error).message})`);
        }
      }
      // Left out when asked: a warning, not a refusal. The cut holds what was said around it either way, and for a
      // voice the engine hears poorly (kal's) it leaves out words that were said (bench/README.md).
      const unsaid = asked?.filter((r) => r.unsaid.length) ?? [];
      let said: string | undefined;
      if (unheard) {
        said =
          (await saidAfterAll(deps, info, t, first, last, unheardSet, signal)) ??
          (await saidWhereAligned(deps, info, t, first, last, realigned, duration, signal));
        const kept = said ? undefined : saidWhenAsked(asked, first, last, unheardSet);
        if (kept) {
          said = kept.note;
          realigned = new Map([...kept.heard, ...(realigned ?? [])]);
        }
      }
      if (unheard && !said)
        return fail(
          unheard,
          'the text may hold words never said: cut by words the transcript places (transcribe_asset lists unplaced and doubtful ones), or give start and end',
        );
      const text = t.words
        .slice(first, last + 1)
        .map((w) => w.word)
        .join(' ');
      const quoted = `"${text.length > 80 ? `${text.slice(0, 80)}…` : text}"`;
      let cut: WordCut & HeardClip & { how: string };
      try {
        cut = await cutByWords(deps, info, t, first, last, {
          handle,
          fadeSec: opts.fadeSec,
          outputFps: opts.outputFps,
          // The words' times where some were unheard; else only where the words meet a neighbour.
          ...(unheard ? { realigned } : {}),
          ...(!unheard && realigned ? { agreed: agreedBoundaries(t.words, realigned, first, last) } : {}),
          ...(deps.runtime ? { sibilant: await sibilantEdges(deps.runtime, t.words, first, last) } : {}),
          signal,
          debug: opts.debug,
        });
      } catch (err) {
        if (!(err instanceof WordsNotFound)) throw err;
        return fail(
          `words ${first}-${last} of asset ${id} (${quoted}) were not found in the sound where the transcript puts them: ${err.message}`,
          'transcribe_asset with text aligns a known script again; or give start and end',
        );
      }
      notes.push(
        `clip ${i + 1} is words ${first}-${last} of asset ${id}${named(assets, id)} (${quoted}, ${t.words[first]!.start_seconds}-${t.words[last]!.end_seconds} s in its transcript, ` +
          `${t.aligned ? 'aligned to a text' : 'recognised'}, ${t.cached ? 'cached' : 'made now'}${said ? `; ${said}` : ''}) -> ${cut.start}-${cut.end} s: ${cut.how}`,
      );
      if (unsaid.length) {
        const [message, hint] = notSaid(t, unsaid);
        diagnostics.push({ severity: 'warning', path, message, hint });
      }
      heard.set(i, cut);
      return { ...rest, start: cut.start, end: cut.end, levels: cut.levels };
    }),
  );
}

/**
 * Whether words of a clip that recognition did not hear were said after all: the sound between the heard words
 * around each run of them holds enough speech (not pause) for its words. Then a note saying so;
 * else undefined (the clip is refused: a text's words never said sit in a pause or in no time at all).
 */
async function saidAfterAll(
  deps: CheckDeps,
  info: ProjectAsset | undefined,
  t: Transcript,
  first: number,
  last: number,
  unheard: Set<number>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const rt = deps.runtime;
  if (!rt || !info?.source || !info.facts?.hasAudio) return undefined;
  const duration = info.facts.durationMs !== undefined ? info.facts.durationMs / 1000 : t.duration_seconds;
  const runs = unheardRuns(t.words, first, last, unheard);
  // A clip's first or last word placed only by its share of letters has no edge to cut by, unless it is the run's
  // word beside the heard one outside the clip (its edge is that word's).
  if (runs.some((r) => (r.first < first && first <= r.last) || (r.first <= last && last < r.last))) return undefined;
  for (const r of runs) {
    try {
      const spoken = await speechSeconds(rt, info.source, r.from, r.to, duration, signal);
      if (!saidBetween(spoken, r.to - r.from, r.last - r.first + 1)) return undefined;
    } catch (err) {
      if (signal?.aborted) throw err;
      return undefined;
    }
  }
  return `words ${runs.map((r) => `${r.first}-${r.last}`).join(', ')} unplaced, but the sound between their heard neighbours is speech`;
}

/**
 * The warning for a clip over words of a text the speaker may have left out: which, where, and the correction that
 * takes them out of the transcript (the words the sound holds there, or the heard word beside them where it holds
 * none).
 */
function notSaid(t: Transcript, runs: AskedRun[]): [string, string] {
  const w = (i: number) => t.words[i]!;
  const quote = (ix: number[]) => `"${ix.map((i) => w(i).word).join(' ')}"`;
  const unsaid = runs.flatMap((r) => r.unsaid);
  const around = runs[0]!;
  const between = [around.before, around.after]
    .filter((i): i is number => i !== undefined)
    .map((i) => `"${w(i).word}"`)
    .join(' and ');
  const them = unsaid.length === 1 ? 'it' : 'them';
  const message =
    `may not be said: ${unsaid.map((i) => `"${w(i).word}" (word ${i})`).join(', ')} of the text` +
    `${between ? `, aligned again around ${between}, free to leave out what it did not hear: the engine left ${them} out` : ''}` +
    `; the cut holds what was said there, and captions from the transcript would print ${them}`;
  const r = runs[0]!;
  const runFirst = Math.min(...r.unsaid, ...r.kept);
  const runLast = Math.max(...r.unsaid, ...r.kept);
  // The words said there replace the run; where it holds none, a heard neighbour stands for itself.
  let [a, b, said] = [runFirst, runLast, r.kept];
  if (!said.length)
    [a, b, said] = r.before !== undefined ? [r.before, runLast, [r.before]] : [runFirst, r.after!, [r.after!]];
  const hint =
    `if the speaker left ${them} out, transcribe_asset with replace [${a}, ${b}] and text ${quote(said)} corrects the transcript` +
    `${runs.length > 1 ? ' (then call compose_edit again for the next)' : ''}; captions, search and cuts follow it`;
  return [message, hint];
}

/**
 * Whether a clip's unheard words were said after all by what the sound answered when asked (aligned-edges.ts): every
 * one of them kept, and placed in speech (not a pause: under a bed the engine hears vowels in the music). Then a note
 * and where they lie, which gives the clip edges where its first or last word is one of them; else undefined.
 */
function saidWhenAsked(
  asked: AskedRun[] | undefined,
  first: number,
  last: number,
  unheard: Set<number>,
): { note: string; heard: Realigned } | undefined {
  if (!asked) return undefined;
  const heard: Realigned = new Map(asked.flatMap((r) => [...r.heard]));
  for (let i = first; i <= last; i++) if (unheard.has(i) && !heard.has(i)) return undefined;
  const at = (x: number) => Math.round(x * 1000) / 1000;
  const inClip = [...heard].filter(([i]) => i >= first && i <= last && unheard.has(i)).sort((a, b) => a[0] - b[0]);
  return {
    note: `not placed by the transcript, but asked of the sound word by word (free to leave any out), it holds words ${inClip[0]![0]}-${inClip.at(-1)![0]} at ${at(inClip[0]![1].start)}-${at(inClip.at(-1)![1].end)} s, in speech`,
    heard,
  };
}

/** The sound around a clip's words does not hold them where they were put (a diagnostic at the clip, not a cut). */
class WordsNotFound extends Error {}

/**
 * Whether words of a clip that the transcript did not place (or doubted) lie in the sound after all, aligned again
 * around its edges (aligned-edges.ts): its first and last words placed, each at least MIN_ALIGNED_WORD long, and the
 * sound between them speech (not pause) for SAID_SPEECH_PER_WORD a word. Then a note saying so; else undefined. A
 * text's words never said are squeezed by an alignment into a pause or into no time at all, and are still refused.
 */
async function saidWhereAligned(
  deps: CheckDeps,
  info: ProjectAsset | undefined,
  t: Transcript,
  first: number,
  last: number,
  realigned: Realigned | undefined,
  duration: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const a = realigned?.get(first);
  const b = realigned?.get(last);
  const rt = deps.runtime;
  if (!rt || !info?.source || !a || !b || !(b.end > a.start)) return undefined;
  if (a.end - a.start < MIN_ALIGNED_WORD || b.end - b.start < MIN_ALIGNED_WORD) return undefined;
  try {
    const spoken = await speechSeconds(rt, info.source, a.start, b.end, duration, signal);
    if (spoken < SAID_SPEECH_PER_WORD * (last - first + 1)) return undefined;
  } catch (err) {
    if (signal?.aborted) throw err;
    return undefined;
  }
  const at = (x: number) => Math.round(x * 1000) / 1000;
  return `not placed by the transcript, but aligned again in the sound at ${at(a.start)}-${at(b.end)} s, which is speech there`;
}
/** An aligned word shorter than this (s) was squeezed in, not heard. */
const MIN_ALIGNED_WORD = 0.04;

/**
 * Where a clip by words is cut: its first word's onset and last word's end heard in the sound (a recogniser's times
 * are not sample-true; the words around each edge aligned again where PocketSphinx can, `realigned`), the sound kept a
 * handle beyond them (or to the quietest point of a shorter pause, or, where the words run into their neighbour, from
 * the boundary with the neighbour's part faded out), the picture on the whole frames around it with what lies beyond
 * the sound muted. Without ffmpeg or readable media, from the transcript's times alone (said in the note). Throws
 * WordsNotFound when the sound found does not hold the words.
 */
async function cutByWords(
  deps: CheckDeps,
  info: ProjectAsset | undefined,
  t: Transcript,
  first: number,
  last: number,
  opts: {
    handle: number;
    fadeSec: number;
    outputFps: number;
    realigned?: Realigned;
    /**
     * Boundaries with the neighbour words that two alignments agree on (analysis/word-joins.ts), where they run
     * together, and whether each is a sibilant's onset.
     */
    agreed?: { before?: number; after?: number; hissBefore?: true; hissAfter?: true };
    /** The first word starts (the last ends) with a sibilant beside a neighbour sound that is no obstruent. */
    sibilant?: { head?: true; tail?: true };
    signal?: AbortSignal;
    debug?: (msg: string) => void;
  },
): Promise<WordCut & HeardClip & { how: string }> {
  const words: TimedWord[] = t.words;
  // A word's times: as aligned again around the edges where they were, else the transcript's.
  const timeOf = (i: number) => {
    const w = words[i];
    if (!w) return undefined;
    return opts.realigned?.get(i) ?? { start: w.start_seconds, end: w.end_seconds };
  };
  const a = timeOf(first)!;
  const b = timeOf(last)!;
  const prev = timeOf(first - 1);
  const next = timeOf(last + 1);
  const tight = !!opts.realigned?.has(first) && !!opts.realigned.has(last);
  const duration = info?.facts?.durationMs !== undefined ? info.facts.durationMs / 1000 : t.duration_seconds;
  let edges: HeardEdges | ReturnType<typeof transcriptEdges> = transcriptEdges(words, first, last, duration);
  let heard = false;
  const rt = deps.runtime;
  if (rt && info?.source && info.facts?.hasAudio) {
    try {
      const endsSentence = (w: TimedWord | undefined) => !!w && /[.!?]["')\]]*$/.test(w.word);
      edges = await hearEdges(
        rt,
        info.source,
        {
          ...(prev ? { prevEnd: prev.end } : {}),
          start: a.start,
          firstEnd: a.end,
          lastStart: b.start,
          end: b.end,
          ...(next ? { nextStart: next.start } : {}),
          duration,
          sentenceStart: endsSentence(words[first - 1]),
          sentenceEnd: !!words[last + 1] && endsSentence(words[last]),
          ...(tight ? { tight: true } : {}),
          ...(opts.agreed?.before !== undefined ? { agreedBefore: opts.agreed.before } : {}),
          ...(opts.agreed?.after !== undefined ? { agreedAfter: opts.agreed.after } : {}),
          ...(opts.agreed?.hissBefore ? { hissBefore: true } : {}),
          ...(opts.agreed?.hissAfter ? { hissAfter: true } : {}),
          ...(opts.sibilant?.head ? { sibilantHead: true } : {}),
          ...(opts.sibilant?.tail ? { sibilantTail: true } : {}),
        },
        opts.signal,
      );
      heard = true;
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      opts.debug?.(
        `words ${first}-${last}: the sound around them could not be read (${(err as Error).message}); cut by the transcript's times`,
      );
    }
  }
  const at = (x: number) => Math.round(x * 1000) / 1000;
  // A word whose time swallowed the pause beside it (a sentence's last word run over the pause after it) may leave
  // the edges' windows meeting in that pause: too short a span (or one that ends before it starts) to be the words.
  // Then the words are the speech heard where they are.
  if (heard && rt && info?.source && !(edges.end - edges.onset >= MIN_HEARD)) {
    const runs = await speechRuns(rt, info.source, Math.max(0, a.start - RUN_MARGIN), b.end + RUN_MARGIN, opts.signal);
    const inside = runs.filter((r) => r.to > a.start && r.from < b.end);
    if (inside.length) {
      const onset = Math.max(inside[0]!.from, prev ? Math.min(a.start, prev.end) : 0);
      const end = Math.min(inside.at(-1)!.to, next ? Math.max(b.end, next.start) : duration);
      const before = runs.findLast((r) => r.to <= onset)?.to ?? Math.max(0, onset - RUN_MARGIN);
      const after = runs.find((r) => r.from >= end)?.from ?? Math.min(duration, end + RUN_MARGIN);
      edges = {
        onset,
        before: { from: before, to: onset, quietest: (before + onset) / 2 },
        end,
        after: { from: end, to: after, quietest: (end + after) / 2 },
      };
    }
  }
  // The sound found must hold the words: an onset after the end, or a span beside where they are, is no cut of them.
  if (heard) {
    const held = Math.min(edges.end, b.end) - Math.max(edges.onset, a.start);
    // (And some of where the transcript has them: an alignment may place them elsewhere in its window.)
    const inTranscript =
      Math.min(edges.end, words[last]!.end_seconds) - Math.max(edges.onset, words[first]!.start_seconds);
    // (Of the shorter of the two: a word run over a pause is longer than its sound.)
    const shorter = Math.min(b.end - a.start, edges.end - edges.onset);
    if (!(edges.end - edges.onset >= MIN_HEARD) || held < HELD_SHARE * shorter || !(inTranscript > 0))
      throw new WordsNotFound(
        `heard at ${at(edges.onset)}-${at(edges.end)} s, beside the words' ${at(a.start)}-${at(b.end)} s`,
      );
  }
  const f = info?.facts;
  let grid: FrameGrid | undefined;
  if (f?.frameRate && f.frameRate.num > 0 && f.frameRate.den > 0) {
    const frameSec = f.frameRate.den / f.frameRate.num;
    grid = {
      clock: (inSec) => cutClock({ inSec }, f).inSec,
      frameSec,
      firstSec: f.videoStartSec ?? 0,
      // The output counts each cut in its own frames: a rate other than the source's may end it up to a frame early.
      tailMarginSec: Math.abs(1 / opts.outputFps - frameSec) > 1e-6 ? 1 / opts.outputFps : 0,
    };
  }
  const cut = cutAroundEdges(edges, {
    handle: opts.handle,
    fadeSec: opts.fadeSec,
    duration,
    ...(grid ? { grid } : {}),
  });
  const edge = (short: boolean, runOn: boolean | undefined, side: 'before' | 'after') => {
    const hissHeard = side === 'before' ? 'runOnFadeBefore' in edges : 'runOnFadeAfter' in edges;
    if (runOn && hissHeard)
      return `where it runs into the word ${side}, ${HISS_LEAN * 1000} ms past the onset of the hiss heard between them, that word's part faded out`;
    if (runOn && opts.agreed?.[side] !== undefined)
      return `where it runs into the word ${side}, ${CLOSE_LEAN * 1000} ms past where two alignments agree they meet, that word's part faded out`;
    if (runOn) return `where it runs into the word ${side}, that word's part faded out`;
    return short ? `the quietest point of the shorter pause ${side}` : `${opts.handle} s ${side}`;
  };
  const where = () => {
    if (!heard) return "by the transcript's times; the sound could not be read";
    return `the words heard in the sound at ${at(edges.onset)}-${at(edges.end)} s${tight ? ', aligned again around each edge' : ''}`;
  };
  const how =
    `sound ${cut.soundIn}-${cut.soundOut} s (${where()}; ` +
    `${edge(cut.shortBefore, cut.runOnBefore, 'before')}, ${edge(cut.shortAfter, cut.runOnAfter, 'after')})` +
    (cut.start < cut.soundIn || cut.end > cut.soundOut
      ? `; the picture takes whole frames around it, muted beyond the sound`
      : '');
  return {
    ...cut,
    first,
    last,
    // The pause around the words as heard (where the neighbours' sound begins), for the joins to fill a hole with;
    // where the words run on, none: the edge itself.
    cleanFrom: 'runOnBefore' in edges && edges.runOnBefore ? at(edges.onset) : Math.min(cut.soundIn, edges.before.from),
    cleanTo: 'runOnAfter' in edges && edges.runOnAfter ? at(edges.end) : Math.max(cut.soundOut, edges.after.to),
    how,
  };
}
/** The sound found for words is this long (s) at least; the speech around them is searched this far beyond them. */
const MIN_HEARD = 0.05;
const RUN_MARGIN = 0.3;

/** At least this share of the words' time (or of the sound found, the shorter) must lie in the sound found for them. */
const HELD_SHARE = 0.5;

/**
 * One readable paragraph of diagnostics for the text block of a tool result. Past `max` lines (or `maxBytes`) it says
 * where the rest are (`rest`): a result's structuredContent, or, for an error result (which carries none),
 * compose_edit.
 */
export function describeDiagnostics(
  c: Pick<LintResult, 'diagnostics'>,
  max = 12,
  rest = 'structuredContent.diagnostics',
  maxBytes = 5000,
): string {
  const lines: string[] = [];
  let bytes = 0;
  for (const d of c.diagnostics.slice(0, max)) {
    const line = `- ${d.severity} at ${d.path || '/'}: ${d.message}${d.hint ? ` (${d.hint})` : ''}`;
    // Within `maxBytes` (at least one line): a long list of long hints must not fill a result alone.
    bytes += Buffer.byteLength(line) + 1;
    if (lines.length && bytes > maxBytes) break;
    lines.push(line);
  }
  if (c.diagnostics.length > lines.length) lines.push(`- … ${c.diagnostics.length - lines.length} more in ${rest}`);
  return lines.join('\n');
}

export function countBySeverity(c: Pick<LintResult, 'diagnostics'>): { errors: number; warnings: number } {
  const errors = c.diagnostics.filter((d) => d.severity === 'error').length;
  return { errors, warnings: c.diagnostics.length - errors };
}
