// preview_edit: the dry run. Renders the edit locally, small and fast, and shows the agent what it would get; given
// a preview_id instead of an edit, it follows a preview that outlasted its call to the same full result.
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { MAX_BYTES as MAX_SHEET_BYTES } from '../media/contact-sheet.js';
import { z } from 'zod';
import { isPreviewId } from '../media/cache.js';
import { INSTALL_HINT } from '../media/locate.js';
import { checkAndKeep, describeDiagnostics } from '../workflow/check-edit.js';
import type { CheckedEdit } from '../workflow/checked-edit.js';
import { captionsOf, dialogueWords, wordsByCut, type CaptionListening } from '../workflow/captions.js';
import { EditRefShape } from '../workflow/edit-input.js';
import { cutClipUri, previewJob, readFinishedPreview, startPreview } from '../workflow/preview.js';
import { PreviewSchema, type PreviewJob, type PreviewResult } from '../workflow/preview-types.js';
import type { MediaRuntime } from '../workflow/media-runtime.js';
import { PREVIEW_VIEW_URI, viewMeta } from '../workflow/views.js';
import { pause } from '../workflow/render-status.js';
import type { ToolDeps } from '../workflow/deps.js';
import { LeftOutSchema, refuseEdit } from './edit-results.js';
import { afterStage, beating, progressFor, type Progress } from './progress.js';
import { defineTool, type HandlerDeps } from './define.js';
import { ToolError, ok } from './result.js';
import { fitList } from './budget.js';

export const previewUri = (id: string, file: 'preview.mp4' | 'sheet.jpg' | 'preview.json') =>
  `cutroom://previews/${id}/${file}`;

/** One shape for both uses: the full preview once done; while rendering, its id and progress only. */
export const PreviewOutputSchema = PreviewSchema.partial().extend({
  preview_id: z.string(),
  status: z
    .enum(['done', 'rendering', 'cancelled'])
    .describe('rendering: only preview_id and progress; follow it with preview_edit {preview_id}'),
  progress: z.number().min(0).max(1).optional(),
  edit_id: z.string().optional(),
  cuts_total: z.number().int().optional().describe('When only the first cuts are listed: how many there are'),
  cuts_ready: z.number().int().optional(),
  overlays_total: z.number().int().optional(),
  left_out: LeftOutSchema,
});

/** JSON bytes a preview's cut list may take in a result at most; the text, the overlays and the rest come off 23 KB. */
const CUTS_BUDGET = 12_000;
const OVERLAYS_BUDGET = 3000;
const DIAGNOSTICS_BUDGET = 4000;
const RESULT_BYTES = 23 * 1024;
/** Cuts spelled out in the text: all of a short preview, else the flagged ones up to this many. */
const TEXT_CUTS = 12;

/** A hosted caller cannot open the server's files: their previews are named by resource URI instead of path. */
export function doneResult(
  p: PreviewResult,
  opts: { hosted?: boolean; editId?: string; notes?: string[]; warnings?: string[]; reserveBytes?: number } = {},
): CallToolResult {
  const { sheetBytes, ffmpegMaxRssKiB: _rss, ...made } = p;
  const preview = opts.hosted
    ? {
        ...made,
        path: previewUri(made.preview_id, 'preview.mp4'),
        sheet_path: previewUri(made.preview_id, 'sheet.jpg'),
      }
    : made;
  const warnings = [...preview.warnings, ...(opts.warnings ?? [])];
  const flagged = preview.cuts.filter((c) => c.flags.length);
  const parts = (l: { dialogue_lufs?: number; music_lufs?: number; effects_lufs?: number }) =>
    (['dialogue', 'music', 'effects'] as const)
      .flatMap((k) => (l[`${k}_lufs`] !== undefined ? [`${k} ${l[`${k}_lufs`]}`] : []))
      .join(', ');
  const cutLine = (c: (typeof preview.cuts)[number]) => {
    const l = c.loudness;
    const sound = l
      ? `mean ${l.mean_db} dB, peak ${l.peak_db} dB${l.lufs !== undefined ? `, ${l.lufs} LUFS` : ''}${parts(l) && (l.music_lufs ?? l.effects_lufs) !== undefined ? ` (${parts(l)})` : ''}${l.level_db ? `, levelled ${l.level_db > 0 ? '+' : ''}${l.level_db} dB` : ''}`
      : 'no sound measured';
    return `${c.index + 1}. ${c.timeline_start}-${c.timeline_end} ${c.asset_id} ${sound}${c.flags.length ? ` — ${c.flags.join('; ')}` : ''}`;
  };
  const m = preview.mix;
  const mixLine =
    m?.lufs !== undefined
      ? [
          `Mix: ${m.lufs} LUFS, true peak ${m.true_peak_db ?? '?'} dBTP${parts(m) ? `; ${parts(m)} LUFS` : ''}${m.target_lufs !== undefined ? `; target ${m.target_lufs} LUFS met by ${m.gain_db! > 0 ? '+' : ''}${m.gain_db} dB` : ''}`,
        ]
      : [];
  const listed = preview.cuts.length <= TEXT_CUTS ? preview.cuts : flagged.slice(0, TEXT_CUTS);
  const lines = [
    `Preview ${preview.resolution}, ${preview.measured_seconds} s (planned ${preview.planned_seconds} s), ${preview.cuts.length} cuts: ${preview.path}`,
    ...((opts.editId ?? preview.edit_id) ? [`edit_id: ${opts.editId ?? preview.edit_id}`] : []),
    ...mixLine,
    ...listed.map(cutLine),
    ...(listed.length < (preview.cuts.length <= TEXT_CUTS ? preview.cuts.length : flagged.length)
      ? [`… ${flagged.length - listed.length} more flagged cuts in structuredContent`]
      : []),
    ...warnings.map((w) => `Warning: ${w}`),
  ];
  lines.push(flagged.length ? `${flagged.length} of ${preview.cuts.length} cuts flagged.` : 'No cut was flagged.');
  if (preview.diagnostics.length) lines.push(describeDiagnostics(preview));
  if (opts.notes?.length)
    lines.push(
      `Notes: ${opts.notes.slice(0, 5).join('; ')}${opts.notes.length > 5 ? `; … ${opts.notes.length - 5} more` : ''}`,
    );
  const text = lines.join('\n');
  const leftOut: string[] = [];
  const whole = previewUri(preview.preview_id, 'preview.json');
  const diagnostics = fitList(preview.diagnostics, DIAGNOSTICS_BUDGET);
  if (diagnostics.leftOut) leftOut.push(`${diagnostics.leftOut} more warnings from the check: compose_edit lists them`);
  const allOverlays = preview.overlays ?? [];
  const overlays = fitList(allOverlays, OVERLAYS_BUDGET);
  if (overlays.leftOut)
    leftOut.push(
      `overlays ${overlays.shown.length + 1}-${allOverlays.length} of ${allOverlays.length}: ${whole} lists them all`,
    );
  // The cuts take what the text and the other lists leave (the few fixed fields and left_out take under 2 KB).
  const used =
    Buffer.byteLength(text) +
    Buffer.byteLength(JSON.stringify([diagnostics.shown, overlays.shown, warnings])) +
    2000 +
    (opts.reserveBytes ?? 0);
  const cuts = fitList(preview.cuts, Math.max(2000, Math.min(CUTS_BUDGET, RESULT_BYTES - used)));
  if (cuts.leftOut)
    leftOut.push(
      `cuts ${cuts.shown.length + 1}-${preview.cuts.length} of ${preview.cuts.length}: ${whole} lists them all`,
    );
  const structured = {
    status: 'done' as const,
    ...preview,
    ...((opts.editId ?? preview.edit_id) ? { edit_id: opts.editId ?? preview.edit_id } : {}),
    cuts: cuts.shown,
    ...(cuts.leftOut ? { cuts_total: preview.cuts.length } : {}),
    ...(preview.overlays ? { overlays: overlays.shown } : {}),
    ...(overlays.leftOut ? { overlays_total: allOverlays.length } : {}),
    warnings,
    diagnostics: diagnostics.shown,
    ...(leftOut.length ? { left_out: leftOut } : {}),
  };
  const result = ok(structured, text);
  result.content.push(
    // Inline when it fits the contact sheet's bound (as ffmpeg's lowest quality may not), else linked.
    sheetBytes.length <= MAX_SHEET_BYTES
      ? { type: 'image', data: sheetBytes.toString('base64'), mimeType: 'image/jpeg' }
      : {
          type: 'resource_link',
          uri: previewUri(preview.preview_id, 'sheet.jpg'),
          name: 'sheet.jpg',
          mimeType: 'image/jpeg',
          description: 'The contact sheet (too large to send inline)',
        },
    {
      type: 'resource_link',
      uri: previewUri(preview.preview_id, 'preview.mp4'),
      name: 'preview.mp4',
      mimeType: 'video/mp4',
      description: `Local preview, ${preview.measured_seconds} s`,
    },
  );
  return result;
}

export function renderingResult(
  id: string,
  progress: number | undefined,
  opts: { who?: string; job?: PreviewJob } = {},
): CallToolResult {
  const pct = progress === undefined ? '' : ` (${Math.floor(progress * 100)}% done)`;
  const ready = opts.job?.ready ?? [];
  const playable = ready.length
    ? ` ${ready.length} of ${opts.job!.cuts} cuts can be played now, each a clip: ${cutClipUri(id, ready[0]!)}${ready.length > 1 ? ` (and the same for cut indexes ${ready.slice(1, 12).join(', ')}${ready.length > 12 ? ', …' : ''})` : ''}.`
    : '';
  return ok(
    {
      preview_id: id,
      status: 'rendering',
      ...(progress === undefined ? {} : { progress: Math.round(progress * 1000) / 1000 }),
      ...(opts.job ? { cuts_ready: ready.length } : {}),
    },
    `The preview is still rendering${pct}${opts.who ?? ''}.${playable} Follow it with preview_edit {preview_id: "${id}"}; it returns the full preview once done.`,
  );
}

/**
 * Waits for a job for up to `waitMs`, passing its progress on, and at least every second (a client that resets
 * its timeout on progress keeps waiting). Resolves true when the job settled, false on time out or cancellation.
 */
export async function follow(
  job: PreviewJob,
  waitMs: number,
  signal: AbortSignal,
  progress: Progress,
  until?: () => boolean,
): Promise<boolean> {
  let sent = -1;
  let sentAt = 0;
  let sentMessage = '';
  const push = (fraction: number, message: string) => {
    let pct = Math.round(fraction * 1000) / 10;
    if (pct <= sent && message !== sentMessage && /ready to play/.test(message)) {
      // A cut became ready: said at once, a hair above the last value (progress only ever rises).
      pct = Math.min(99.9, Math.round((sent + 0.01) * 100) / 100);
      if (pct <= sent) return;
    } else if (pct <= sent) {
      // Nothing new (queued for an ffmpeg slot, tiling, measuring): a heartbeat a hair above the last value.
      if (Date.now() - sentAt < 900) return;
      pct = Math.min(99.9, Math.round((sent + 0.01) * 100) / 100);
      if (pct <= sent) return;
    }
    sent = pct;
    sentAt = Date.now();
    sentMessage = message;
    void progress(pct, 100, message);
  };
  let early: (() => void) | undefined;
  const listener = (f: number, m: string) => {
    push(f, m);
    if (until?.()) early?.();
  };
  job.listeners.add(listener);
  push(job.progress, job.message);
  const beat = setInterval(() => push(job.progress, job.message), 500);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await new Promise<boolean>((resolve) => {
      if (signal.aborted) return resolve(false);
      early = () => resolve(false);
      if (until?.()) return resolve(false);
      timer = setTimeout(() => resolve(false), waitMs);
      onAbort = () => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      job.done.then(
        () => resolve(true),
        () => resolve(true),
      );
    });
  } finally {
    clearInterval(beat);
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    job.listeners.delete(listener);
  }
}

/** The result of a settled job: the full preview, or its failure as a thrown one-line error. */
async function settledResult(
  job: PreviewJob,
  progress: Progress,
  opts: Parameters<typeof doneResult>[1],
): Promise<CallToolResult> {
  const result = await job.done;
  await progress(100, 100, 'done');
  return doneResult(result, opts);
}

export const needRuntime = (deps: ToolDeps, tool: string): MediaRuntime => {
  if (!deps.runtime) throw new ToolError(`${tool} needs ffmpeg and ffprobe, which were not found; ${INSTALL_HINT}`);
  return deps.runtime;
};

/**
 * Starts (or joins, or reuses) the preview of a checked, ready edit: its captions (the speech transcribed first where it
 * is not, with `listening`'s progress and wait) and dialogue's words first.
 */
export async function startCheckedPreview(
  deps: ToolDeps,
  rt: MediaRuntime,
  checked: CheckedEdit,
  width: number | undefined,
  signal: AbortSignal,
  listening: CaptionListening = {},
): Promise<PreviewJob> {
  const captions = checked.timeline?.captions?.burn ? await captionsOf(deps, checked, signal, listening) : undefined;
  const speechWords = await dialogueWords(deps, checked, signal);
  const sheetWords = await wordsByCut(deps, checked, signal);
  const opts = {
    width: width ?? 640,
    debug: (m: string) => deps.logger.debug(m),
    ...(checked.editId ? { editId: checked.editId } : {}),
    ...(captions ? { captions } : {}),
    ...(speechWords?.size ? { speechWords } : {}),
    ...(sheetWords.some((w) => w.length) ? { sheetWords } : {}),
  };
  // Through the job queue when there is one: the same preview, made by a worker.
  return deps.jobs ? deps.jobs.preview.start(rt, checked, opts, signal) : startPreview(rt, checked, opts);
}

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const PreviewEditInput = z.object({
  ...EditRefShape,
  width: z.number().int().min(64).max(1920).optional().describe('Default 640 px'),
  preview_id: z.string().optional().describe('Follow a preview still rendering'),
  cancel: z.boolean().optional().describe('With preview_id: stop it; nothing is kept'),
});

/**
 * What a call gave beside preview_id that makes or shapes a new preview (a client that fills every optional field
 * sends "" for the ones it means to leave out; project_id names nothing a preview_id does not).
 */
function editArguments(input: Record<string, unknown>): string[] {
  return Object.entries(input)
    .filter(([k, v]) => k !== 'project_id' && v !== undefined && !(typeof v === 'string' && !v.trim()))
    .map(([k]) => k);
}

/** How often a preview being made on a worker for another replica is asked after, while preview_edit waits for it. */
const QUEUE_ASK_MS = 500;

/** preview_edit {preview_id}: waits for a preview still rendering, or answers a finished one from the cache dir. */
async function followPreview(
  deps: ToolDeps,
  previewId: string,
  ctx: Parameters<typeof progressFor>[0],
): Promise<CallToolResult> {
  const rt = needRuntime(deps, 'preview_edit');
  const id = previewId.trim();
  if (!isPreviewId(id))
    throw new ToolError(
      `preview_id "${id.slice(0, 40)}" is not a preview id (like 20261122081500-3f2b8c1e); preview_edit returns it`,
    );
  const job = previewJob(rt, id) ?? deps.jobs?.preview.job(rt, id);
  // The preview the job made: a worker that took the job over from one that died made it under an id of its own,
  // and the id the caller was given names the job.
  let made = id;
  if (job) {
    const progress = progressFor(ctx);
    // Cancelling this call stops the waiting, not the preview.
    if (!(await follow(job, deps.renderWaitMs, ctx.mcpReq.signal, progress)))
      return renderingResult(id, job.progress, { job });
    if ('error' in job.settled!) throw job.settled.error;
    made = job.settled!.result.preview_id;
  }
  const finished = await readFinishedPreview(rt, made);
  if (finished) return doneResult(finished, { hosted: deps.hosted });
  if (await rt.cache.inProgress(id))
    return renderingResult(id, undefined, { who: ' in another cutroom process sharing the cache dir' });
  // Made on a worker for another replica (no shared cache dir to see it in), or under another id by a worker that
  // took its job over from one that died: the queue knows.
  const ask = deps.jobs?.preview.onQueue;
  if (ask) {
    let queued = await ask(rt, id);
    if (queued?.state === 'rendering') {
      // Waited for as a preview this server follows is (up to CUTROOM_RENDER_WAIT_MS), asking the queue meanwhile.
      const beat = beating(progressFor(ctx));
      const until = Date.now() + deps.renderWaitMs;
      try {
        while (queued?.state === 'rendering' && Date.now() < until && !ctx.mcpReq.signal.aborted) {
          beat.update(queued.fraction, queued.message);
          await pause(QUEUE_ASK_MS, ctx.mcpReq.signal);
          queued = await ask(rt, id);
        }
      } finally {
        beat.stop();
      }
      if (queued?.state === 'rendering') return renderingResult(id, queued.fraction, { who: ' on a cutroom worker' });
    }
    if (queued?.state === 'failed') throw new ToolError(queued.reason);
    // Made: under the id asked (its worker removed the mark on finishing), or under another.
    const done = await readFinishedPreview(rt, queued?.state === 'made' ? queued.id : made);
    if (done) return doneResult(done, { hosted: deps.hosted });
  }
  throw new ToolError(
    `preview ${id} is gone (older previews are evicted, and one whose server stopped is not kept); run preview_edit again`,
  );
}

/**
 * preview_edit {preview_id, cancel: true}: stops a preview still rendering, wherever it runs (this process, or any
 * worker of the queue whichever replica started it); a stopped preview's folder is removed.
 */
async function cancelPreview(deps: ToolDeps, previewId: string): Promise<CallToolResult> {
  const rt = needRuntime(deps, 'preview_edit');
  const id = previewId.trim();
  if (!isPreviewId(id))
    throw new ToolError(`preview_id "${id.slice(0, 40)}" is not a preview id (like 20261122081500-3f2b8c1e)`);
  let outcome = await deps.jobs?.preview.cancel?.(rt, id);
  const here = previewJob(rt, id);
  if (!outcome && here?.stop?.()) {
    await here.done.catch(() => {});
    outcome = 'stopped';
  }
  if (outcome === 'stopped')
    return ok({ preview_id: id, status: 'cancelled' }, `Cancelled preview ${id}: stopped, and nothing of it was kept.`);
  if (outcome === 'asked')
    return ok(
      { preview_id: id, status: 'rendering' },
      `Asked preview ${id} to stop; its worker has not stopped it yet. preview_edit {preview_id: "${id}"} says how it ended.`,
    );
  if (await readFinishedPreview(rt, id))
    return ok({ preview_id: id, status: 'done' }, `Nothing to cancel: preview ${id} is done (kept until evicted).`);
  if (await rt.cache.inProgress(id))
    throw new ToolError(
      `nothing was cancelled: preview ${id} is being made by another cutroom process sharing the cache dir, and only that process can stop it (with a job queue, any replica can)`,
    );
  throw new ToolError(`nothing to cancel: no preview ${id} is being made (it ended, failed or is gone)`);
}

/** A blank preview_id (a client filling every optional field) is no preview_id. */
const followsPreview = (previewId: string | undefined) => previewId !== undefined && !!previewId.trim();

/** preview_edit {preview_id} alone: follows that preview; anything else given that would shape a new one is refused. */
async function followGivenPreview(
  deps: ToolDeps,
  previewId: string,
  given: Record<string, unknown>,
  ctx: ServerContext,
): Promise<CallToolResult> {
  const also = editArguments(given);
  if (also.length)
    throw new ToolError(
      `give preview_id alone to follow a preview, or an edit without it to make one, not both (also given: ${also.join(', ')})`,
    );
  return followPreview(deps, previewId, ctx);
}

/** preview_edit of an edit: checks it, starts (or joins) its preview and follows it for up to the wait. */
async function makePreview(
  deps: ToolDeps,
  input: Omit<z.output<typeof PreviewEditInput>, 'width' | 'preview_id'>,
  width: number | undefined,
  ctx: ServerContext,
): Promise<CallToolResult> {
  const { logger } = deps;
  const rt = needRuntime(deps, 'preview_edit');
  const started = performance.now();
  const signal = ctx.mcpReq.signal;
  const progress = progressFor(ctx);
  const listen = beating(progress, { share: 0.5 });
  let job: PreviewJob;
  let checked: CheckedEdit;
  const warnings: string[] = [];
  try {
    checked = await checkAndKeep(deps, input, signal, {
      onProgress: listen.update,
      waitMs: deps.renderWaitMs,
      debug: (m) => logger.debug(m),
    });
    logger.debug(`preview_edit: checked the edit in ${(performance.now() - started).toFixed(0)} ms`);
    if (!checked.ready) return refuseEdit(checked, 'previewed');
    if (width !== undefined && checked.timeline && width > checked.timeline.width)
      warnings.push(
        `width ${width} is more than the edit's ${checked.timeline.width} px: a preview is never larger than the edit`,
      );
    // The captions' speech is heard now where it was not (its time counts against the wait too).
    job = await startCheckedPreview(deps, rt, checked, width, signal, {
      onProgress: listen.update,
      waitMs: Math.max(0, deps.renderWaitMs - (performance.now() - started)),
      debug: (m) => logger.debug(m),
    });
  } finally {
    listen.stop();
  }
  // Time spent listening (a clip cut by words) counts against the wait; the preview's progress goes on above it.
  const waitMs = listen.last < 0 ? deps.renderWaitMs : Math.max(0, deps.renderWaitMs - (performance.now() - started));
  const next = afterStage(progress, listen.last);
  const settled = await follow(job, waitMs, signal, next);
  if (!settled && signal.aborted) {
    // Cancelled while the caller still waited: stop it, and keep nothing (unless a view follows it too).
    if (job.abort()) await job.done.catch(() => {});
  } else job.release();
  if (!settled) {
    logger.debug(
      `preview_edit: handed preview ${job.id} over to preview_edit {preview_id} after ${(performance.now() - started).toFixed(0)} ms`,
    );
    return renderingResult(job.id, job.progress, { job });
  }
  logger.debug(`preview_edit: done in ${(performance.now() - started).toFixed(0)} ms`);
  return settledResult(job, next, {
    hosted: deps.hosted,
    ...(checked.editId ? { editId: checked.editId } : {}),
    notes: checked.notes,
    warnings,
  });
}

async function previewEdit(
  { width, preview_id, cancel, ...input }: z.output<typeof PreviewEditInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
): Promise<CallToolResult> {
  if (cancel) {
    if (preview_id === undefined || !followsPreview(preview_id))
      throw new ToolError('cancel needs preview_id, the preview to stop (a call still waiting stops when cancelled)');
    const also = editArguments({ ...input, width });
    if (also.length) throw new ToolError(`give preview_id alone with cancel (also given: ${also.join(', ')})`);
    return cancelPreview(deps, preview_id);
  }
  if (preview_id !== undefined && followsPreview(preview_id))
    return followGivenPreview(deps, preview_id, { ...input, width }, ctx);
  return makePreview(deps, input, width, ctx);
}

const previewEditTool = defineTool({
  name: 'preview_edit',
  config: {
    title: 'Preview an edit locally',
    description: (deps) =>
      'Dry run before render_edit: renders an edit (edit_id) here, small and fast; nothing sent. Returns a contact sheet ' +
      '(3 labelled frames a cut), loudness and flags per cut (black, frozen, silent, clipping, flash frame). ' +
      `After ${Math.round(deps.renderWaitMs / 1000)} s: status "rendering"; follow with preview_edit {preview_id}.`,
    inputSchema: PreviewEditInput,
    outputSchema: PreviewOutputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false },
    _meta: viewMeta(PREVIEW_VIEW_URI),
  },
  // Following a preview names no project.
  subject: ({ preview_id, project_id }) =>
    followsPreview(preview_id) ? undefined : { what: `project ${project_id}`, listedBy: 'list_projects' },
  handler: previewEdit,
});

export const previewTools = [previewEditTool];
