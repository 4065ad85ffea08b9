// Cues an editor accepts (issue 47, item 2), through the built server over stdio, on a vertical 1080x1920 edit like a
// user's: a talking clip muted (volume 0) under a flite voiceover (one run of flite, its true word times known) as
// dialogue from 1 s. The muted clip is never listened to nor captioned; recognised speech without sentence ends is cut
// into cues at the pauses between its true sentences; the unsure words are named by their index and time in the asset
// (the transcript's clock) and on the output, all of them; and with the script aligned no cue is under 1 s at any shape.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sayWithWordTimes, type TrueWord } from '../helpers/flite-words.js';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { WORD_CUT_FPS, makeWordCutMedia } from '../helpers/word-cut-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-captions-editor-'));
const allowed = join(root, 'allowed');
const SCRIPT = [
  'The old lighthouse stands alone on the rocks above the bay.',
  'Every night the keeper climbs the stairs to light the great lamp.',
  'Out in the dark, the fishing boats depend on that single beam of light.',
  'Storms come and go, but the light has never once failed them.',
  'Nobody in the village will forget his name.',
];
const TALK = ['The fisherman mended his nets by the harbour wall.', 'Gulls cried over the quiet water at dawn.'];
const VO_AT = 1;

type Cue = { start: number; end: number; text: string; lines: string[] };
type Word = { index: number; word: string; start_seconds: number; end_seconds: number };
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};
const secs = (tc: string) => {
  const [h, m, s] = tc.replace(',', '.').split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
};
function readCues(text: string): Cue[] {
  return text
    .replace(/^WEBVTT\n\n/, '')
    .trim()
    .split(/\n\n+/)
    .map((block) => {
      const lines = block.split('\n');
      const at = lines.findIndex((l) => l.includes('-->'));
      const [a, b] = lines[at]!.split(' --> ');
      const body = lines.slice(at + 1);
      return { start: secs(a!), end: secs(b!), text: body.join(' '), lines: body };
    });
}

let server: Spawned;
let projectId: string;
let vo: string;
let talk: string;
let truth: TrueWord[];
const progress: string[] = [];
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, undefined, {
    timeout: 600_000,
    onprogress: (p: { message?: string }) => void progress.push(p.message ?? ''),
  });

/** The edit at a resolution: the muted clip twice, the voiceover as dialogue from VO_AT s, captions burned. */
async function editAt(resolution: string): Promise<string> {
  const c = structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
    await call('compose_edit', {
      project_id: projectId,
      resolution,
      fps: WORD_CUT_FPS,
      clips: [
        { asset_id: talk, volume: 0 },
        { asset_id: talk, volume: 0 },
      ],
      overlays: [{ asset_id: vo, at: VO_AT, role: 'dialogue' }],
      captions: { burn: true },
    }),
  );
  expect(c.ready, JSON.stringify(c.diagnostics)).toBe(true);
  return c.edit_id;
}

/** The true sentences' spans on the output clock: [first word's start, last word's end]. */
function sentenceSpans(): { start: number; end: number }[] {
  let k = 0;
  return SCRIPT.map((s) => {
    const n = s.split(' ').length;
    const span = { start: truth[k]!.start + VO_AT, end: truth[k + n - 1]!.end + VO_AT };
    k += n;
    return span;
  });
}

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'captions-editor', description: 'captions-editor' }),
  ).project.id;
  const wav = join(allowed, 'vo.wav');
  truth = sayWithWordTimes(SCRIPT.join(' '), wav);
  vo = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: wav })).asset.id;
  const { video } = makeWordCutMedia(allowed, 'talk', 'slt', [...TALK, ...TALK], [0.4]);
  talk = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video })).asset
    .id;
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('captions an editor accepts', () => {
  it('recognised speech: a muted clip is neither heard nor captioned, cues break at the pauses between sentences, every unsure word named on both clocks', async () => {
    const editId = await editAt('1080x1920');
    progress.length = 0;
    const r = structured<{ path: string; warnings: string[] }>(
      await call('export_edit', { edit_id: editId, format: 'vtt' }),
    );
    const text = readFileSync(r.path, 'utf8');
    // The muted clip: never listened to for the captions, none of its words captioned, no warning about it.
    expect(progress.filter((m) => m.includes(talk))).toEqual([]);
    const inspected = structured<{ transcript: { exists: boolean } }>(
      await call('inspect_asset', { project_id: projectId, asset_id: talk }),
    );
    expect(inspected.transcript.exists, 'the muted clip was transcribed for the captions').toBe(false);
    for (const w of ['fisherman', 'harbour', 'gulls']) expect(text.toLowerCase()).not.toContain(w);
    expect(r.warnings.filter((w) => w.includes(talk))).toEqual([]);
    // No cue runs from one true sentence into the next (its end well inside the next sentence's speech).
    const cues = readCues(text);
    const spans = sentenceSpans();
    const across = cues.filter((c) =>
      spans.some((s, i) => i + 1 < spans.length && c.start < s.end - 0.05 && c.end > spans[i + 1]!.start + 0.2),
    );
    console.log(`recognised: ${cues.length} cues; ${cues.map((c) => `${c.start}-${c.end} ${c.text}`).join(' | ')}`);
    expect(across.map((c) => `${c.start}-${c.end} "${c.text}"`)).toEqual([]);
    // The unsure words: each by its index and time in the asset's transcript, and on the output clock; all of them.
    const words = structured<{ words: Word[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: vo, words: true }),
    ).words;
    const warning = r.warnings.find((w) => w.includes('speech recognition'))!;
    expect(warning).toBeDefined();
    console.log(warning);
    const unsure = Number(/it was unsure of (\d+)/.exec(warning)?.[1] ?? 0);
    const named = [
      ...warning.matchAll(/"([^"]+)" \(word (\d+) at ([\d.]+) s in the asset, ([\d.]+) s in the output\)/g),
    ];
    expect(named.length).toBe(Math.min(unsure, 30));
    for (const [, word, index, inAsset, onOutput] of named) {
      const w = words[Number(index)]!;
      expect(w.word).toBe(word);
      expect(Number(inAsset)).toBeCloseTo(w.start_seconds, 2);
      expect(Number(onOutput)).toBeCloseTo(w.start_seconds + VO_AT, 1);
    }
  });

  it('the script aligned: no cue under 1 s nor over 2 lines at any shape, and none runs across a sentence end', async () => {
    await call('transcribe_asset', { project_id: projectId, asset_id: vo, text: SCRIPT.join(' ') });
    const spans = sentenceSpans();
    for (const resolution of ['1080x1920', '1920x1080', '1080x1080']) {
      const editId = await editAt(resolution);
      const r = structured<{ path: string }>(await call('export_edit', { edit_id: editId, format: 'srt' }));
      const cues = readCues(readFileSync(r.path, 'utf8'));
      console.log(`${resolution}: ${cues.map((c) => `${c.start}-${c.end} ${c.lines.join(' / ')}`).join(' | ')}`);
      expect(cues.map((c) => c.text).join(' ')).toBe(SCRIPT.join(' ').replaceAll(',', ''));
      const short = cues.filter((c) => c.end - c.start < 1 - 1e-6);
      expect(short.map((c) => `${resolution} ${c.start}-${c.end} "${c.text}"`)).toEqual([]);
      for (const c of cues) {
        expect(c.lines.length).toBeLessThanOrEqual(2);
        for (const line of c.lines) expect(line.length).toBeLessThanOrEqual(42);
        expect(
          spans.filter((s, i) => i + 1 < spans.length && c.start < s.end - 0.05 && c.end > spans[i + 1]!.start + 0.2),
        ).toEqual([]);
      }
    }
  });
});
