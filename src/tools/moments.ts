// find_moments: the project's best spans, ranked, with the signals behind the rank and a clip for compose_edit.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  DEFAULT_MAX_SECONDS,
  DEFAULT_MIN_SECONDS,
  DEFAULT_MOMENTS,
  MAX_MOMENTS,
  MOMENTS_INSPECT_SECONDS,
  MOMENTS_TRANSCRIBE_SECONDS,
  moments,
  type MomentsResult,
} from '../workflow/moments.js';
import { fitList } from './budget.js';
import { defineTool, type HandlerDeps } from './define.js';
import { beating, progressFor } from './progress.js';
import { ok } from './result.js';

const Input = z.object({
  project_id: z.string(),
  asset_ids: z.array(z.string()).optional().describe('Only these'),
  about: z.string().optional().describe('A subject, matched by spelling, sound or sense'),
  count: z.number().int().optional().describe(`1-${MAX_MOMENTS}; default ${DEFAULT_MOMENTS}`),
  min_seconds: z.number().optional().describe(`Default ${DEFAULT_MIN_SECONDS}`),
  max_seconds: z.number().optional().describe(`Default ${DEFAULT_MAX_SECONDS}`),
});
const num = z.number().optional();
const MomentSchema = z.object({
  asset_id: z.string(),
  name: z.string().optional(),
  start_seconds: z.number(),
  end_seconds: z.number(),
  score: z.number(),
  signals: z.object({
    about: num,
    about_heard: z.string().optional(),
    sentences: num,
    sentences_cut: num,
    words_per_second: num,
    loudness_db: num,
    louder_than_source_db: num,
    peak_db: num,
    motion: num,
    cuts: num,
    cuts_per_minute: num,
  }),
  reason: z.string(),
  clip: z.object({ asset_id: z.string(), words: z.array(z.number().int()).optional(), start: num, end: num }),
  text: z.string().optional(),
});
const Output = z.object({
  moments: z.array(MomentSchema),
  candidates: z.number().int(),
  ranked: z.number().int(),
  missing: z.array(z.object({ asset_id: z.string(), reason: z.string() })).optional(),
  left_out: z.array(z.string()).optional(),
});

const MOMENTS_BYTES = 14_000;
const MISSING_BYTES = 3_000;

/** A moment in find_moments' text: where, its score, why, the start of its words, and its clip as compose_edit takes it. */
const momentLine = (m: MomentsResult['moments'][number], i: number) =>
  `${i + 1}. ${m.asset_id} ${m.start_seconds.toFixed(2)}-${m.end_seconds.toFixed(2)} s, score ${m.score}: ${m.reason}${m.text ? ` — "${m.text.slice(0, 80)}${m.text.length > 80 ? '…' : ''}"` : ''}\n   clip: ${JSON.stringify(m.clip)}`;

async function findMoments(
  { project_id, asset_ids, about, count, min_seconds, max_seconds }: z.output<typeof Input>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const beat = beating(progressFor(ctx));
  try {
    const r = await moments(
      deps,
      project_id,
      { assetIds: asset_ids, about, count, minSeconds: min_seconds, maxSeconds: max_seconds },
      { signal: ctx.mcpReq.signal, onProgress: beat.update, debug: (m) => deps.logger.debug(m) },
    );
    beat.update(1, 'done');
    const shownMoments = fitList(r.moments, MOMENTS_BYTES);
    const missing = fitList(r.missing, MISSING_BYTES);
    const leftOut = [
      ...(shownMoments.leftOut ? [`${shownMoments.leftOut} moments: ask for fewer (count)`] : []),
      ...(missing.leftOut ? [`${missing.leftOut} assets in missing: name them in asset_ids`] : []),
      ...r.notes,
    ];
    const lines = [
      `${r.moments.length} moment${r.moments.length === 1 ? '' : 's'} of ${r.candidates} candidates in ${r.ranked} source${r.ranked === 1 ? '' : 's'}, best first.`,
      ...shownMoments.shown.map(momentLine),
      ...missing.shown.slice(0, 10).map((m) => `Missing: ${m.asset_id}: ${m.reason}`),
      ...leftOut.map((l) => `Left out: ${l}.`),
      ...(r.moments.some((m) => !r.soundOnly.has(m.asset_id))
        ? ['Each clip goes into compose_edit clips as it is (copy it from its line).']
        : []),
      // compose_edit's clips are pictures: a voiceover's moment plays as an overlay, from its start for its length.
      ...(r.moments.some((m) => r.soundOnly.has(m.asset_id))
        ? [
            'A moment of sound alone goes into compose_edit overlays: {asset_id, from: its start, at: where it plays, until: at plus its length}.',
          ]
        : []),
    ];
    return ok(
      {
        moments: shownMoments.shown,
        candidates: r.candidates,
        ranked: r.ranked,
        ...(missing.shown.length ? { missing: missing.shown } : {}),
        ...(leftOut.length ? { left_out: leftOut } : {}),
      },
      lines.join('\n'),
    );
  } finally {
    beat.stop();
  }
}

const findMomentsTool = defineTool({
  name: 'find_moments',
  config: {
    title: 'Rank the moments worth cutting',
    description:
      "Ranked spans of the project's videos (audio if named), whole sentences (else shots), with signals " +
      '(speech, loudness, peaks, motion, cuts/min), a reason and a clip for compose_edit. ' +
      `Transcribes ${MOMENTS_TRANSCRIBE_SECONDS} s and inspects ${MOMENTS_INSPECT_SECONDS} s of media a call; the rest is in missing.`,
    inputSchema: Input,
    outputSchema: Output,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: ({ project_id }) => ({ what: `project ${project_id}`, listedBy: 'list_projects' }),
  handler: findMoments,
});

export const momentTools = [findMomentsTool];
