// transcribe_asset and search_transcripts: hearing the footage (the words said, with their times) and finding
// where a phrase is said across a project.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { TimeInputSchema } from '../edit/model.js';
import {
  SEARCH_LISTEN_SECONDS,
  SEARCH_TRANSCRIBE_SECONDS,
  SearchHitSchema,
  searchTranscripts,
  type SearchHit,
  type SearchResult,
} from '../workflow/search.js';
import {
  MAX_TEXT_WORDS,
  cursorFor,
  TranscriptPageSchema,
  transcribe,
  transcriptPage,
  transcriptUri,
  type TranscriptPage,
} from '../workflow/transcribe.js';
import type { Transcript } from '../workflow/transcript.js';
import { correctTranscript } from '../workflow/correct-transcript.js';
import { defineTool, type HandlerDeps } from './define.js';
import { beating, progressFor } from './progress.js';
import { fitList } from './budget.js';
import { ToolError, ok, shown } from './result.js';

const TranscribeInput = z.object({
  project_id: z.string(),
  asset_id: z.string(),
  from: TimeInputSchema.optional().describe('Span start'),
  to: TimeInputSchema.optional().describe('Span end'),
  text: z.string().optional().describe(`What was said: at most ${MAX_TEXT_WORDS} English words, numbers spelled out`),
  words: z.boolean().optional().describe('Words too'),
  cursor: z.string().optional().describe('A next_cursor'),
  replace: z.array(z.number().int()).optional().describe('[first, last] words to correct'),
});

const SearchInput = z.object({
  project_id: z.string(),
  query: z.string().describe('A word or phrase'),
  asset_ids: z.array(z.string()).optional().describe('Only these'),
  include_renders: z.boolean().optional().describe('Renders too'),
  offset: z.number().int().min(0).optional().describe('A next_offset'),
  listen: z
    .boolean()
    .optional()
    .describe(`Also listen to the sound (slower; ${SEARCH_LISTEN_SECONDS} s of media a call)`),
});
const SearchOutput = z.object({
  hits: z.array(SearchHitSchema),
  hits_total: z.number().int(),
  next_offset: z.number().int().optional(),
  near_misses: z.array(SearchHitSchema).optional(),
  missing: z.array(z.object({ asset_id: z.string(), reason: z.string() })).optional(),
  searched: z.number().int(),
  listened: z.number().int().optional(),
  guessed: z.array(z.string()).optional(),
});

/** JSON bytes of hits (and of assets not searched) a result carries: a common word can be said hundreds of times. */
const HITS_BYTES = 13_000;
const NEAR_BYTES = 3_000;
const MISSING_BYTES = 3_000;

const hitLine = (h: SearchHit) =>
  `${h.name ? `${h.name} — ` : ''}${h.asset_id} ${h.start_seconds.toFixed(2)}-${h.end_seconds.toFixed(2)} s, ${h.words ? `words ${h.words[0]}-${h.words[1]}` : `cut ${h.cut![0]}-${h.cut![1]} s`}: ${h.match}${h.match === 'exact' ? '' : ` ${h.score}`} "${h.text}"${h.doubtful ? ` (doubtful words ${h.doubtful.join(', ')})` : ''}`;

/** Sentences spelled out in the text; the page's others are in structuredContent. */
const TEXT_SENTENCES = 8;

/** The most of the words (words: true) spelled out in the text; a cursor goes on from the first left out. */
const TEXT_WORDS_BYTES = 6_000;

/** The page's words in compact form ("12 storm 4.21-4.60"), as many as fit, then the call that lists the rest. */
function wordsText(t: Transcript, words: NonNullable<TranscriptPage['words']>): string[] {
  const said: string[] = [];
  let bytes = 0;
  for (const w of words) {
    const one = `${w.index} ${w.word} ${w.start_seconds.toFixed(2)}-${w.end_seconds.toFixed(2)}${w.doubtful ? ' ?' : ''}`;
    bytes += Buffer.byteLength(one) + 2;
    if (bytes > TEXT_WORDS_BYTES && said.length) break;
    said.push(one);
  }
  const lines = [`Words (index word start-end s): ${said.join('; ')}`];
  if (words.some((w) => w.doubtful))
    lines.push(
      'A word marked ? is doubtful (doubtful: true in structuredContent): it may be wrong; ask the person, and correct it with replace.',
    );
  if (said.length < words.length) {
    const next = words[said.length]!.index;
    lines.push(
      `… ${words.length - said.length} more words on this page (structuredContent.words); to read them here, call again with words: true and cursor "${cursorFor(t, next)}".`,
    );
  }
  return lines;
}

function describeTranscript(t: Transcript, page: TranscriptPage, correcting?: { first: number }): string {
  const range = correcting ? t.corrected?.find((r) => r[0] === correcting.first) : undefined;
  const lines = [
    ...(range
      ? [
          `Corrected: words ${range[0]}-${range[1]} are now "${t.words
            .slice(range[0], range[1]! + 1)
            .map((w) => w.word)
            .join(' ')
            .slice(
              0,
              200,
            )}", kept for this asset (captions, search and cuts by words use them); later words are numbered on from there.`,
        ]
      : []),
    `${t.aligned ? 'Aligned' : 'Recognised'} ${t.words.length} words, ${t.sentences.length} sentences in ${t.from_seconds}-${t.to_seconds} s of asset ${t.asset_id} (${t.engine.name}${t.engine.model ? ` ${t.engine.model}` : ''}${t.cached ? ', cached' : ''})${t.corrected?.length ? `, ${t.corrected.length} span${t.corrected.length === 1 ? '' : 's'} corrected` : ''}.`,
    ...page.sentences
      .slice(0, TEXT_SENTENCES)
      .map(
        (s) =>
          `[${s.start_seconds.toFixed(2)}-${s.end_seconds.toFixed(2)} s, words ${s.first_word}-${s.last_word}] ${s.text.length > 300 ? `${s.text.slice(0, 300)}…` : s.text}`,
      ),
  ];
  // A host may show the model only this text: what it leaves out is one exact call away.
  if (page.sentences.length > TEXT_SENTENCES && !page.words) {
    const ninth = page.sentences[TEXT_SENTENCES]!;
    lines.push(
      `… ${page.sentences.length - TEXT_SENTENCES} more sentences on this page (structuredContent.sentences); to read them here, call again with cursor "${cursorFor(t, ninth.first_word)}" (from word ${ninth.first_word}).`,
    );
  }
  if (page.words?.length) lines.push(...wordsText(t, page.words));
  if (t.unplaced?.length)
    lines.push(
      `${t.unplaced.length} word(s) were not heard and sit between their neighbours: ${t.unplaced
        .slice(0, 10)
        .map((i) => `${i} "${t.words[i]!.word}"`)
        .join(', ')}${t.unplaced.length > 10 ? ', …' : ''}`,
    );
  if (t.doubtful?.length)
    lines.push(
      `${t.doubtful.length} placed word(s) are doubtful (the sound does not support them; the text may hold words never said): ${t.doubtful
        .slice(0, 10)
        .map((i) => `${i} "${t.words[i]!.word}"`)
        .join(', ')}${t.doubtful.length > 10 ? ', …' : ''}`,
    );
  if (!t.words.length) lines.push('No words were heard.');
  for (const l of page.left_out ?? []) lines.push(`Left out: ${l}.`);
  const span = t.from_seconds > 0 || t.to_seconds < t.duration_seconds;
  // A clip's word indices are the whole asset's transcript's: a span's own count from 0 and would name other words.
  if (span)
    lines.push(
      "This is a span: its word indices count from its start, but a clip {asset_id, words} reads the whole asset's transcript. Cut these words by their times (start, end) or by phrase, or transcribe the whole asset.",
    );
  else lines.push('Cut by words in the edit tools: a clip {asset_id, phrase} or {asset_id, words: [first, last]}.');
  return lines.join('\n');
}

/** The corrections transcribe_asset takes: replace with text, over the whole transcript; else why not. */
function correction(
  input: z.output<typeof TranscribeInput>,
): { first: number; last: number; text: string } | undefined {
  const { replace, text, from, to, cursor } = input;
  if (replace === undefined) return undefined;
  if (replace.length !== 2)
    throw new ToolError(
      'replace is [first, last]: the first and last word the text corrects, as the transcript lists them',
    );
  if (text === undefined || !text.trim())
    throw new ToolError('replace needs text: the right words for those words of the transcript');
  if (from !== undefined || to !== undefined || cursor !== undefined)
    throw new ToolError(
      "replace names words of the whole transcript: leave from, to and cursor out (the page shown is the correction's)",
    );
  return { first: replace[0]!, last: replace[1]!, text };
}

async function transcribeAsset(input: z.output<typeof TranscribeInput>, ctx: ServerContext, deps: HandlerDeps) {
  const { project_id, asset_id, from, to, text, words, cursor } = input;
  const correcting = correction(input);
  const beat = beating(progressFor(ctx));
  try {
    const opts = { signal: ctx.mcpReq.signal, onProgress: beat.update, debug: (m: string) => deps.logger.debug(m) };
    const t = correcting
      ? await correctTranscript(deps, project_id, asset_id, correcting, opts)
      : await transcribe(deps, project_id, asset_id, { from, to, text, ...opts });
    beat.update(1, 'done');
    const uri = transcriptUri(project_id.trim(), t.asset_id);
    const near = correcting ? t.corrected?.find((r) => r[0] === correcting.first)?.[0] : undefined;
    const page = transcriptPage(t, { words, cursor, uri, ...(near !== undefined ? { near } : {}) });
    const out = ok(page, describeTranscript(t, page, correcting));
    out.content.push({
      type: 'resource_link',
      uri,
      name: 'transcript.json',
      mimeType: 'application/json',
      description: "The asset's transcript, whole (JSON)",
    });
    return out;
  } finally {
    beat.stop();
  }
}

/** A page of search hits (from `from`, `next` after it), the near misses and the assets not searched, as fitted. */
type SearchPage = {
  from: number;
  page: { shown: SearchHit[] };
  next: number | undefined;
  near: { shown: SearchHit[] };
  missing: { shown: SearchResult['missing'] };
};

/** Which hits this page holds, when it is not simply all of them: past the last, it says so. */
function pageSaid(from: number, shown: number, next: number | undefined, total: number): string {
  if (!from && next === undefined) return '';
  if (!shown) return `; none from offset ${from}: there are ${total}`;
  return `; hits ${from + 1}-${from + shown} here`;
}

/** search_transcripts' text: the count, the page's first hits, near misses, guessed sounds, assets not searched. */
function searchText(r: SearchResult, query: string, { from, page, next, near, missing }: SearchPage): string {
  return [
    `${r.hits.length} hit${r.hits.length === 1 ? '' : 's'} for "${shown(query, 200)}" in ${r.searched} transcript${r.searched === 1 ? '' : 's'}${r.listened !== undefined ? `, ${r.listened} listened to` : ''}${pageSaid(from, page.shown.length, next, r.hits.length)}.`,
    ...page.shown.slice(0, 20).map(hitLine),
    ...(page.shown.length > 20 ? [`… ${page.shown.length - 20} more in structuredContent.hits`] : []),
    ...(next !== undefined ? [`Left out: hits ${next + 1}-${r.hits.length}: call again with offset ${next}.`] : []),
    ...near.shown.slice(0, 5).map((h) => `Near miss: ${hitLine(h)}`),
    ...(r.near_misses.length > 5
      ? [
          `… ${r.near_misses.length - 5} more near misses${near.shown.length < r.near_misses.length ? ` (${near.shown.length} in structuredContent)` : ''}`,
        ]
      : []),
    ...(r.guessed
      ? [
          `Not in the dictionary (sound guessed from spelling): ${r.guessed
            .slice(0, 20)
            .map((w) => shown(w, 40))
            .join(', ')}.`,
        ]
      : []),
    ...missing.shown.slice(0, 10).map((m) => `Not searched: ${m.asset_id}: ${m.reason}`),
    ...(r.missing.length > 10 ? [`… ${r.missing.length - 10} more assets not searched`] : []),
  ].join('\n');
}

async function searchTranscriptsCall(
  { project_id, query, asset_ids, include_renders, offset, listen }: z.output<typeof SearchInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const beat = beating(progressFor(ctx));
  try {
    const r = await searchTranscripts(deps, project_id, query, asset_ids, {
      signal: ctx.mcpReq.signal,
      onProgress: beat.update,
      debug: (m) => deps.logger.debug(m),
      includeRenders: include_renders ?? false,
      listen: listen ?? false,
    });
    // Paged: the hits from offset on that fit; transcripts are cached, so the next page is quick.
    const from = Math.min(offset ?? 0, r.hits.length);
    const page = fitList(r.hits.slice(from), HITS_BYTES);
    const next = from + page.shown.length < r.hits.length ? from + page.shown.length : undefined;
    const near = fitList(r.near_misses, NEAR_BYTES);
    const missing = fitList(r.missing, MISSING_BYTES);
    return ok(
      {
        hits: page.shown,
        hits_total: r.hits.length,
        ...(next !== undefined ? { next_offset: next } : {}),
        ...(near.shown.length ? { near_misses: near.shown } : {}),
        ...(missing.shown.length ? { missing: missing.shown } : {}),
        searched: r.searched,
        ...(r.listened !== undefined ? { listened: r.listened } : {}),
        ...(r.guessed ? { guessed: r.guessed.slice(0, 20).map((w) => shown(w, 40)) } : {}),
      },
      searchText(r, query, { from, page, next, near, missing }),
    );
  } finally {
    beat.stop();
  }
}

const transcribeAssetTool = defineTool({
  name: 'transcribe_asset',
  config: {
    title: 'Hear what is said in a source',
    description:
      'Speech in a video or audio asset, offline (English): sentences (times, word ranges), paged. Recognition ' +
      'mishears (doubtful words: ask): text (what was said) is aligned and kept (unplaced: not heard); replace [first, last] ' +
      'corrects those words. Cached. Clips: {asset_id, phrase} or {asset_id, words: [first, last]}.',
    inputSchema: TranscribeInput,
    outputSchema: TranscriptPageSchema,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: ({ project_id }) => ({ what: `project ${project_id}`, listedBy: 'list_projects' }),
  handler: transcribeAsset,
});

const searchTranscriptsTool = defineTool({
  name: 'search_transcripts',
  config: {
    title: 'Find where a phrase is said',
    description: `Where a word or phrase is said in the project's videos and audio: exact (spelling) or sounds_like, scored 0-1; near_misses: worth a listen; doubtful: low confidence. listen: true also listens (heard hits: cut by start/end; others not heard: near misses). Transcribes ${SEARCH_TRANSCRIBE_SECONDS} s of media a call (the rest in missing). Cut a hit as {asset_id, words: [first, last]}.`,
    inputSchema: SearchInput,
    outputSchema: SearchOutput,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: ({ project_id }) => ({ what: `project ${project_id}`, listedBy: 'list_projects' }),
  handler: searchTranscriptsCall,
});

export const transcriptTools = [transcribeAssetTool, searchTranscriptsTool];
