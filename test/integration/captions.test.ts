// Captions (issue 33, item 5), through the built server over stdio: speech whose true word times are known (flite's
// phone times) on a plain grey picture, its known text aligned (transcribe_asset), cut by words into an edit that
// leaves its middle sentence out. The SRT and VTT export_edit writes are read against the aligned words mapped through
// the cuts (a cut-away word never appears), and captions burned in a known colour are found frame by frame in the
// preview (segments joined) and in a local render (one graph) against the cues' times, within a frame.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onFrameMs } from '../../src/edit/timecode.js';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { WORD_CUT_FPS, makeWordCutMedia } from '../helpers/word-cut-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-captions-'));
const allowed = join(root, 'allowed');
const SENTENCES = [
  'The lighthouse keeper walked along the shore.',
  'She saw a ship in the storm and rang the bell.',
  'Nobody knew where the small boat had gone.',
];
const GAPS = [0.5, 0.3, 0.9];
const W = 320;
const H = 180;
const FRAME = 1 / WORD_CUT_FPS;

type Word = { index: number; word: string; start_seconds: number; end_seconds: number };
type Seg = { video_start_time: string; video_end_time: string };
type Cue = { start: number; end: number; text: string };
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};
const secs = (tc: string) => {
  const [h, m, s] = tc.replace(',', '.').split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
};

let server: Spawned;
let projectId: string;
let words: Word[];
let editId: string;
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 300_000 });

/** Cues of an SRT or VTT file. */
function readCues(text: string): Cue[] {
  return text
    .replace(/^WEBVTT\n\n/, '')
    .trim()
    .split(/\n\n+/)
    .map((block) => {
      const lines = block.split('\n');
      const at = lines.findIndex((l) => l.includes('-->'));
      const [a, b] = lines[at]!.split(' --> ');
      return { start: secs(a!), end: secs(b!), text: lines.slice(at + 1).join(' ') };
    });
}

/** Per frame of a video, whether the caption colour (yellow) shows: pixels strongly yellow on the grey picture. */
function yellowFrames(file: string): boolean[] {
  const r = spawnSync(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${W}x${H}`, '-'],
    { maxBuffer: 1 << 30 },
  );
  if (r.status !== 0) throw new Error(r.stderr.toString());
  const size = W * H * 3;
  const out: boolean[] = [];
  for (let f = 0; (f + 1) * size <= r.stdout.length; f++) {
    let n = 0;
    for (let i = f * size; i < (f + 1) * size; i += 3)
      if (r.stdout[i]! > 170 && r.stdout[i + 1]! > 170 && r.stdout[i + 2]! < 90) n++;
    out.push(n > 15);
  }
  return out;
}

/** Frames whose caption state is not what the cues say, beyond one frame of any cue's edge. */
function mismatches(frames: boolean[], cues: Cue[]): string[] {
  const bad: string[] = [];
  frames.forEach((on, k) => {
    const t = k * FRAME;
    const want = cues.some((c) => t >= c.start - 1e-6 && t < c.end - 1e-6);
    const nearEdge = cues.some((c) => Math.abs(t - c.start) <= FRAME + 1e-6 || Math.abs(t - c.end) <= FRAME + 1e-6);
    if (on !== want && !nearEdge)
      bad.push(
        `frame ${k} (${t.toFixed(2)} s): ${on ? 'caption shown' : 'no caption'}, the cues say ${want ? 'one' : 'none'}`,
      );
  });
  return bad;
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
    await call('create_project', { name: 'captions', description: 'captions' }),
  ).project.id;
  const { video } = makeWordCutMedia(allowed, 'talk', 'slt', SENTENCES, GAPS);
  const asset = structured<{ asset: { id: string } }>(
    await call('import_media', { project_id: projectId, path: video }),
  ).asset.id;
  words = structured<{ words: Word[] }>(
    await call('transcribe_asset', { project_id: projectId, asset_id: asset, text: SENTENCES.join(' '), words: true }),
  ).words;
  const sentence = (i: number) => {
    const first = SENTENCES.slice(0, i).reduce((n, s) => n + s.split(' ').length, 0);
    return [first, first + SENTENCES[i]!.split(' ').length - 1];
  };
  // The first and last sentences, the middle one cut away.
  const c = structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
    await call('compose_edit', {
      project_id: projectId,
      resolution: `${W}x${H}`,
      fps: WORD_CUT_FPS,
      clips: [
        { asset_id: asset, words: sentence(0) },
        { asset_id: asset, words: sentence(2) },
      ],
      captions: { burn: true, style: { size: 12, color: '#FFFF00' } },
    }),
  );
  expect(c.ready, JSON.stringify(c.diagnostics)).toBe(true);
  editId = c.edit_id;
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/**
 * The aligned words the edit plays, on the output clock: each cut's words inside its source range (held inside it),
 * from the cut's first output frame (where its sound starts) to the next cut's.
 */
async function playedWords(): Promise<{ word: string; start: number; end: number }[]> {
  const cuts = (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, editId)).video_series_sequential;
  const out: { word: string; start: number; end: number }[] = [];
  const rate = { num: WORD_CUT_FPS, den: 1 };
  let placed = 0;
  for (const cut of cuts) {
    const from = secs(cut.video_start_time);
    const to = secs(cut.video_end_time);
    const at = onFrameMs(placed * 1000, rate) / 1000;
    const end = onFrameMs((placed + to - from) * 1000, rate) / 1000;
    for (const w of words)
      if ((w.start_seconds + w.end_seconds) / 2 >= from && (w.start_seconds + w.end_seconds) / 2 < to)
        out.push({
          word: w.word,
          start: at + Math.max(0, w.start_seconds - from),
          end: Math.min(end, at + w.end_seconds - from),
        });
    placed += to - from;
  }
  return out;
}

describe('captions', () => {
  it('export_edit writes SRT and VTT cues on the output clock: the aligned words mapped through the cuts, the cut-away sentence absent', async () => {
    const played = await playedWords();
    expect(played.map((w) => w.word).join(' ')).toBe(`${SENTENCES[0]} ${SENTENCES[2]}`);
    for (const format of ['srt', 'vtt'] as const) {
      const r = structured<{ path: string; warnings: string[] }>(
        await call('export_edit', { edit_id: editId, format }),
      );
      expect(r.path.endsWith(`.${format}`)).toBe(true);
      const text = readFileSync(r.path, 'utf8');
      if (format === 'vtt') expect(text.startsWith('WEBVTT\n\n')).toBe(true);
      const cues = readCues(text);
      // Every word played, in order, once; none of the sentence cut away.
      expect(cues.map((c) => c.text).join(' ')).toBe(played.map((w) => w.word).join(' '));
      for (const gone of ['ship', 'storm', 'bell']) expect(text.toLowerCase()).not.toContain(gone);
      let k = 0;
      for (const cue of cues) {
        const n = cue.text.split(' ').length;
        const first = played[k]!;
        const last = played[k + n - 1]!;
        k += n;
        expect(cue.start, `"${cue.text}" starts with its first word`).toBeCloseTo(first.start, 2);
        expect(cue.end, `"${cue.text}" lasts to its last word's end`).toBeGreaterThanOrEqual(last.end - 0.002);
        expect(cue.end - cue.start).toBeLessThanOrEqual(7);
        expect(cue.end - last.end).toBeLessThanOrEqual(1);
        for (const line of cue.text.split('\n')) expect(line.length).toBeLessThanOrEqual(42 * 2 + 1);
      }
      // Cues end before the next begins, and each lies inside one cut (the sentence ends where the cut does).
      for (let i = 1; i < cues.length; i++) expect(cues[i]!.start).toBeGreaterThanOrEqual(cues[i - 1]!.end - 1e-9);
    }
  });

  it('burns the captions into the preview (segments) and a local render (one graph), shown on the frames of their cues within a frame', async () => {
    const srt = structured<{ path: string }>(await call('export_edit', { edit_id: editId, format: 'srt' }));
    const cues = readCues(readFileSync(srt.path, 'utf8'));
    const preview = structured<{ path: string; warnings: string[] }>(await call('preview_edit', { edit_id: editId }));
    const shown = yellowFrames(preview.path);
    expect(shown.filter(Boolean).length, 'the preview shows captions').toBeGreaterThan(10);
    expect(mismatches(shown, cues)).toEqual([]);

    const render = structured<{ render: { done: boolean; url?: string } }>(
      await call('render_edit', { edit_id: editId, wait: true }),
    );
    expect(render.render.done).toBe(true);
    const file = render.render.url!.startsWith('file:') ? fileURLToPath(render.render.url!) : render.render.url!;
    const rendered = yellowFrames(file);
    expect(rendered.filter(Boolean).length, 'the render shows captions').toBeGreaterThan(10);
    expect(mismatches(rendered, cues)).toEqual([]);

    // Without burn: the same cuts, no caption on any frame (a segment's key follows its captions).
    const plain = structured<{ edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        edit: { ...(await storedEdit<Record<string, unknown>>(server.client, editId)), captions: { burn: false } },
      }),
    );
    const none = structured<{ path: string }>(await call('preview_edit', { edit_id: plain.edit_id }));
    expect(yellowFrames(none.path).filter(Boolean)).toEqual([]);
  });
});
