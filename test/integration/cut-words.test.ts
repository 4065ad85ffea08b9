// Never clip a word (issue 32, item 1), through the built server over stdio: speech whose true word times are known
// (flite's phone times), in four voices, two of them over a tonal music bed 10 dB under the speech, as 25 fps video.
// The known text is aligned, every sentence is cut by its word indices (and one by phrase), and each cut is read back
// from its edit: its sound at full level covers its first word's onset to its last word's end (5 ms tolerance), is
// heard no more than the handle beyond them, and the picture beyond the sound (whole frames) is muted.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUT_GAPS, CUT_SENTENCES } from '../fixtures/cut-sentences.mjs';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { WORD_CUT_FPS, heardSpan, makeWordCutMedia, type PlacedWord } from '../helpers/word-cut-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-cut-words-'));
const allowed = join(root, 'allowed');
const TOLERANCE = 0.005;
const HANDLE = 0.15;
const SENTENCES = [
  'The lighthouse keeper walked along the shore.',
  'She saw a ship in the storm and rang the bell.',
  'Nobody knew where the small boat had gone.',
];
const GAPS = [0.5, 0.3, 0.9];
const MEDIA = [
  { voice: 'slt', bed: undefined },
  { voice: 'rms', bed: 10 },
  { voice: 'awb', bed: undefined },
  { voice: 'kal', bed: 10 },
] as const;

type Seg = {
  video_start_time: string;
  video_end_time: string;
  audio_levels: { audio_level: number; start_time: string; end_time: string }[];
};
const structured = <R>(r: unknown): R => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as R;
};

let server: Spawned;
let projectId: string;
const assets: { voice: string; bed?: number; id: string; words: PlacedWord[] }[] = [];
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 300_000 });

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'cuts', description: 'cuts by words' }),
  ).project.id;
  for (const m of MEDIA) {
    const { video, words } = makeWordCutMedia(allowed, `${m.voice}${m.bed ?? ''}`, m.voice, SENTENCES, GAPS, m.bed);
    const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
      .asset.id;
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: id, text: SENTENCES.join(' ') }));
    assets.push({ voice: m.voice, ...(m.bed ? { bed: m.bed } : {}), id, words });
  }
}, 900_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** `voice` saying the cut sentences (under a bed `bed` dB down, or none), imported and aligned to their text. */
async function alignedSentences(name: string, voice: string, bed?: number) {
  const { video, words } = makeWordCutMedia(allowed, name, voice, CUT_SENTENCES, CUT_GAPS, bed);
  const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
    .asset.id;
  structured(await call('transcribe_asset', { project_id: projectId, asset_id: id, text: CUT_SENTENCES.join(' ') }));
  return { id, words, ids: (s: number) => words.flatMap((w, j) => (w.sentence === s ? [j] : [])) };
}

/** Words first..last of asset `id` composed alone: whether it was cut, its notes, and its sound's spans. */
async function cutAlone(id: string, first: number, last: number) {
  const c = structured<{ ready: boolean; edit_id: string; notes?: string[]; diagnostics: { message: string }[] }>(
    await call('compose_edit', {
      project_id: projectId,
      resolution: '160x90',
      fps: WORD_CUT_FPS,
      clips: [{ asset_id: id, words: [first, last] }],
    }),
  );
  const notes = c.notes ?? [];
  if (!c.ready) return { ready: false as const, notes, diagnostics: c.diagnostics };
  const seg = (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, c.edit_id))
    .video_series_sequential[0]!;
  return { ready: true as const, notes, ...heardSpan(seg) };
}

describe('clips cut by words', () => {
  it('keep every sample of their first and last words, with at most a handle of pause beside them, across voices and under a music bed', async () => {
    const problems: string[] = [];
    const refused: string[] = [];
    let cut = 0;
    for (const a of assets) {
      const sentences = SENTENCES.map((_, i) => {
        const ids = a.words.flatMap((w, j) => (w.sentence === i ? [j] : []));
        return { words: [ids[0]!, ids.at(-1)!] as const };
      });
      const first = sentences[1]!.words[0];
      // Three sentences by word indices, and "she saw a ship" by phrase (it ends inside its sentence, before "in").
      const clips = [
        ...sentences.map((s) => ({ clip: { words: s.words }, words: s.words })),
        { clip: { phrase: 'she saw a ship' }, words: [first, first + 3] as const },
      ];
      for (const [
        k,
        {
          clip,
          words: [first, last],
        },
      ] of clips.entries()) {
        const at = `${a.voice}${a.bed ? ` under a bed ${a.bed} dB down` : ''}, clip ${k + 1} (${a.words[first]!.word}..${a.words[last]!.word}, true ${a.words[first]!.start.toFixed(3)}-${a.words[last]!.end.toFixed(3)} s)`;
        const r = (await call('compose_edit', {
          project_id: projectId,
          resolution: '160x90',
          fps: WORD_CUT_FPS,
          clips: [{ asset_id: a.id, ...clip }],
        })) as {
          structuredContent?: { ready: boolean; edit_id: string; notes: string[]; diagnostics: { message: string }[] };
        };
        const c = r.structuredContent!;
        if (!c.ready) {
          // Words the alignment did not place are refused, never cut elsewhere; anything else is a failure.
          expect(c.diagnostics.map((d) => d.message).join('; '), at).toMatch(/^not heard: /);
          refused.push(at);
          continue;
        }
        cut++;
        const { inSec, outSec, heard, full } = heardSpan(
          (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, c.edit_id)).video_series_sequential[0]!,
        );
        const onset = a.words[first]!.start;
        const end = a.words[last]!.end;
        if (full.from > onset + TOLERANCE)
          problems.push(`${at}: starts ${Math.round((full.from - onset) * 1000)} ms into its first word`);
        if (full.to < end - TOLERANCE)
          problems.push(`${at}: ends ${Math.round((end - full.to) * 1000)} ms before its last word's end`);
        if (onset - heard.from > HANDLE + TOLERANCE)
          problems.push(`${at}: ${Math.round((onset - heard.from) * 1000)} ms of sound before its first word`);
        // The phrase ends inside its sentence: the pause after "ship" is the sentence's own, not dead air.
        if (k < 3 && heard.to - end > HANDLE + TOLERANCE)
          problems.push(`${at}: ${Math.round((heard.to - end) * 1000)} ms of sound after its last word`);
        // Beyond the sound, only the picture's rounding to whole frames (muted).
        expect(heard.from - inSec, at).toBeLessThanOrEqual(1 / WORD_CUT_FPS + 0.002);
        expect(outSec - heard.to, at).toBeLessThanOrEqual(1 / WORD_CUT_FPS + 0.002);
        expect(c.notes.join('\n')).toMatch(/heard in the sound/);
      }
    }
    expect(problems).toEqual([]);
    // Under the bed the alignment misses words (issue 32 item 5); most clips are still cut, and every one is judged.
    expect(cut, `refused: ${refused.join('; ')}`).toBeGreaterThanOrEqual(12);
  }, 900_000);

  it('inside sentences, where the words run into their neighbours, keep every sample of their first and last words and little of the neighbours', async () => {
    // The bench's sentences (cut-words), from each one's third word to its fourth from last: no pause on either side.
    // The alignment's boundary there errs by up to 0.12 s, and the kept word's fading end is often quieter than the
    // join: cut at the quietest point 40-120 ms beyond the boundary, rms's "roses|and" lost 22 ms of its z, awb's
    // "of|apples" 18 ms and "roses|and" 13 ms. Cut there (40-120 ms on the neighbour's side, and its fade), edges
    // carried 14-255 ms of the neighbour word's sound, most over 50 ms; where the transcript and a forced alignment
    // agree on a join a stop or a hiss marks, the cut goes 30 ms beyond it, or 8 ms past a sibilant's onset heard
    // there (the note says which): those carry less.
    const problems: string[] = [];
    const fragments: number[] = [];
    const close: string[] = [];
    let cut = 0;
    for (const voice of ['rms', 'awb']) {
      const { id, words, ids: idsOf } = await alignedSentences(`${voice}-inside`, voice);
      for (const s of CUT_SENTENCES.keys()) {
        const ids = idsOf(s);
        const [first, last] = [ids[2]!, ids.at(-4)!];
        const at = `${voice} (${words[first]!.word}..${words[last]!.word}, true ${words[first]!.start.toFixed(3)}-${words[last]!.end.toFixed(3)} s)`;
        const c = await cutAlone(id, first, last);
        if (!c.ready) {
          expect(c.diagnostics.map((d) => d.message).join('; '), at).toMatch(/^not heard: /);
          continue;
        }
        cut++;
        const { full, heard } = c;
        if (full.from > words[first]!.start + TOLERANCE)
          problems.push(`${at}: starts ${Math.round((full.from - words[first]!.start) * 1000)} ms into its first word`);
        if (full.to < words[last]!.end - TOLERANCE)
          problems.push(`${at}: ends ${Math.round((words[last]!.end - full.to) * 1000)} ms before its last word's end`);
        // The neighbours' sound heard (their true times: each runs into the cut's word, no pause between).
        const head = Math.max(0, words[first - 1]!.end - heard.from);
        const tail = Math.max(0, heard.to - words[last + 1]!.start);
        fragments.push(head, tail);
        const note = c.notes.find((n) => n.startsWith(`clip 1 is words ${first}-${last} `)) ?? '';
        const ms = (x: number) => Math.round(x * 1000);
        // Cut close: past where two alignments agree, or past the onset of a sibilant's hiss heard there.
        const closeBy = (side: string) =>
          new RegExp(`runs into the word ${side}, \\d+ ms past (where two alignments agree|the onset of the hiss)`);
        if (closeBy('before').test(note)) close.push(`${at} before: ${ms(head)} ms`);
        if (closeBy('after').test(note)) close.push(`${at} after: ${ms(tail)} ms`);
      }
    }
    expect(problems).toEqual([]);
    expect(cut).toBeGreaterThanOrEqual(12);
    // Edge by edge (28 here): at most 60 ms of the neighbour at 11 of them (before: at 4 of rms's 12, the closest
    // 14-57 ms); where cut close, at most 55 ms (30 ms, the 15 ms fade, what the alignments still err by).
    const all = fragments.map((f) => Math.round(f * 1000)).sort((x, y) => x - y);
    expect(
      all.filter((f) => f <= 60).length,
      `neighbour's sound at each edge (ms): ${all.join(' ')}`,
    ).toBeGreaterThanOrEqual(8);
    expect(close.length, close.join('; ')).toBeGreaterThanOrEqual(3);
    expect(close.filter((c) => Number(/(\d+) ms$/.exec(c)![1]) > 55)).toEqual([]);
  }, 600_000);

  it('where a word runs into a sibilant ("the|sun", "a|ship"), cut within 30 ms of the neighbour, the word whole', async () => {
    // Cut 30 ms past the boundary two alignments agree on, with a 15 ms fade, these edges carried 31-85 ms of the
    // neighbour (median 47). The hiss's onset heard in the sound (within -12..+10 ms of the true one on flite's
    // voices) places the cut 8 ms beyond it, faded over 5 ms.
    const problems: string[] = [];
    const edges: string[] = [];
    const placed: number[] = [];
    const ms = (x: number) => Math.round(x * 1000);
    for (const [voice, bed] of [
      ['slt', undefined],
      ['awb', 10],
    ] as const) {
      const { id, words, ids } = await alignedSentences(`${voice}-hiss`, voice, bed);
      // "shore before the|sun", "a|ship in the|storm", "We|sailed ...", "the|small boat ...", "the|square ...".
      const cuts: [number, number][] = [
        [ids(0)[6]!, ids(0)[8]!],
        [ids(1)[3]!, ids(1)[5]!],
        [ids(2)[1]!, ids(2).at(-1)!],
        [ids(4)[4]!, ids(4).at(-1)!],
        [ids(7)[6]!, ids(7).at(-1)!],
      ];
      for (const [first, last] of cuts) {
        const at = `${voice}${bed ? ` bed -${bed} dB` : ''} (${words[first]!.word}..${words[last]!.word})`;
        const c = await cutAlone(id, first, last);
        if (!c.ready) {
          problems.push(`${at}: not cut (${c.diagnostics.map((d) => d.message).join('; ')})`);
          continue;
        }
        const { full, heard } = c;
        if (full.from > words[first]!.start + TOLERANCE)
          problems.push(`${at}: starts ${ms(full.from - words[first]!.start)} ms into its first word`);
        if (full.to < words[last]!.end - TOLERANCE)
          problems.push(`${at}: ends ${ms(words[last]!.end - full.to)} ms before its last word's end`);
        const note = c.notes.find((n) => n.startsWith(`clip 1 is words ${first}-${last} `)) ?? '';
        // The neighbour's sound heard at each edge where the words run together (true times).
        const prev = words[first - 1];
        const next = words[last + 1];
        if (prev && words[first]!.start - prev.end < 0.001) {
          const head = ms(Math.max(0, prev.end - heard.from));
          const hiss = /runs into the word before, \d+ ms past the onset of the hiss/.test(note);
          edges.push(`${at} before${hiss ? ' (at the hiss)' : ''}: ${head} ms`);
          if (hiss) placed.push(head);
        }
        if (next && next.start - words[last]!.end < 0.001) {
          const tail = ms(Math.max(0, heard.to - next.start));
          const hiss = /runs into the word after, \d+ ms past the onset of the hiss/.test(note);
          edges.push(`${at} after${hiss ? ' (at the hiss)' : ''}: ${tail} ms`);
          if (hiss) placed.push(tail);
        }
      }
    }
    expect(problems).toEqual([]);
    // 14 edges at a sibilant's onset. Where the two alignments agree there (6 of them in a run on this machine; the
    // rest keep the reach of 40-120 ms), the hiss heard places the cut: each within 30 ms of the neighbour.
    expect(edges.length).toBe(14);
    expect(placed.length, edges.join('; ')).toBeGreaterThanOrEqual(5);
    expect(
      placed.filter((f) => f > 30),
      edges.join('; '),
    ).toEqual([]);
    expect(edges.filter((e) => Number(/(\d+) ms$/.exec(e)![1]) <= 30).length, edges.join('; ')).toBeGreaterThanOrEqual(
      7,
    );
  }, 900_000);

  it('keep a first word\'s sibilant whole where the transcript gave its hiss to the word before (kal: "We|sailed")', async () => {
    // kal's 8 kHz voice has a weak, band-limited s. Aligned to the text, "sailed" starts 0.2 s late (at its vowel),
    // so a cut from it began 76 ms into the s ("We|-ailed"). An edge that falls inside the kept word's hiss is moved
    // to where that hiss began.
    const { id, words, ids } = await alignedSentences('kal-sailed', 'kal');
    const problems: string[] = [];
    const notes: string[] = [];
    const ms = (x: number) => Math.round(x * 1000);
    // "We|sailed ... salt.", "a|ship in the|storm", "the|small boat ...", "the|square ...": each first word's s.
    for (const [first, last] of [
      [ids(2)[1]!, ids(2).at(-1)!],
      [ids(1)[3]!, ids(1)[5]!],
      [ids(4)[4]!, ids(4).at(-1)!],
      [ids(7)[6]!, ids(7).at(-1)!],
    ] as const) {
      const c = await cutAlone(id, first, last);
      if (!c.ready) continue; // refused as not heard: a diagnostic, not a clipped word
      notes.push(...c.notes);
      const at = `${words[first]!.word}..${words[last]!.word}`;
      if (c.full.from > words[first]!.start + TOLERANCE)
        problems.push(`${at}: starts ${ms(c.full.from - words[first]!.start)} ms into its first word`);
      if (c.full.to < words[last]!.end - TOLERANCE)
        problems.push(`${at}: ends ${ms(words[last]!.end - c.full.to)} ms before its last word's end`);
    }
    expect(problems, notes.join('\n')).toEqual([]);
    expect(notes.length).toBeGreaterThanOrEqual(3);
  }, 900_000);

  it('keep a final stop\'s release that a bed hides from the whole band ("came up." by rms under a bed)', async () => {
    // Under a chord bed 10 dB down, the burst of "up."'s p rises 35 dB above 2 kHz but not at all in the whole band's
    // energy: the pause was taken to start at the closure, 157 ms early, and the 0.15 s handle ended 12 ms short.
    const { id, words, ids } = await alignedSentences('rms-up', 'rms', 10);
    const [first, last] = [ids(0)[0]!, ids(0).at(-1)!];
    expect(words[last]!.word).toBe('up');
    const c = await cutAlone(id, first, last);
    expect(c.ready, c.notes.join('\n')).toBe(true);
    if (!c.ready) return;
    expect(c.full.to, c.notes.join('\n')).toBeGreaterThanOrEqual(words[last]!.end - TOLERANCE);
    expect(c.full.from, c.notes.join('\n')).toBeLessThanOrEqual(words[first]!.start + TOLERANCE);
  }, 900_000);

  it('under a bed 20 dB down, place a known text where it is said, and cut a run of it whole (kal)', async () => {
    // Recognition under the bed misheard a third of kal's words; matched to the text, 16 of its 88 words lay over
    // 0.2 s from where they are said ("Rain fell on" 1.2-1.9 s early), and the cut "on ... afternoon and" lost its
    // last word. Held to the whole text, the engine places them (2 left, bench/README.md).
    const { video, words } = makeWordCutMedia(allowed, 'kal-deep', 'kal', CUT_SENTENCES, CUT_GAPS, 20);
    const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
      .asset.id;
    const t = structured<{ words: { word: string; start_seconds: number; end_seconds: number }[] }>(
      await call('transcribe_asset', {
        project_id: projectId,
        asset_id: id,
        text: CUT_SENTENCES.join(' '),
        words: true,
      }),
    );
    expect(t.words.length).toBe(words.length);
    const off = t.words.flatMap((w, i) =>
      Math.abs(w.start_seconds - words[i]!.start) > 0.2 || Math.abs(w.end_seconds - words[i]!.end) > 0.2
        ? [
            `${w.word} ${w.start_seconds}-${w.end_seconds} (said ${words[i]!.start.toFixed(2)}-${words[i]!.end.toFixed(2)})`,
          ]
        : [],
    );
    expect(off.length, off.join('\n')).toBeLessThanOrEqual(4);
    const ids = words.flatMap((w, j) => (w.sentence === 5 ? [j] : []));
    const [first, last] = [ids[2]!, ids.at(-4)!];
    expect([words[first]!.word, words[last]!.word]).toEqual(['on', 'and']);
    const c = await cutAlone(id, first, last);
    expect(c.ready, c.notes.join('\n')).toBe(true);
    if (!c.ready) return;
    expect(c.full.from, c.notes.join('\n')).toBeLessThanOrEqual(words[first]!.start + TOLERANCE);
    expect(c.full.to, c.notes.join('\n')).toBeGreaterThanOrEqual(words[last]!.end - TOLERANCE);
  }, 900_000);

  it('find the pause between sentences that the alignment swallowed into a word (kal under a bed)', async () => {
    // Aligned under a bed 10 dB down, kal's sentences 1 and 2 run together in the transcript (the last word of one
    // stretched over the pause and into the next), and sentence 7 ends early with sentence 8 starting in the pause:
    // cut within 0.3 s of the transcript's boundary, the first cost 303 ms of its first word, the second 252 ms of its
    // last, the third 1.8 s of dead air. Every sentence, cut by its word indices, holds its words and a handle.
    const { video, words } = makeWordCutMedia(allowed, 'kal-swallowed', 'kal', CUT_SENTENCES, CUT_GAPS, 10);
    const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
      .asset.id;
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: id, text: CUT_SENTENCES.join(' ') }));
    const problems: string[] = [];
    let cut = 0;
    for (const s of CUT_SENTENCES.keys()) {
      const first = words.findIndex((w) => w.sentence === s);
      const last = words.findLastIndex((w) => w.sentence === s);
      const c = structured<{ ready: boolean; edit_id: string; diagnostics: { message: string }[] }>(
        await call('compose_edit', {
          project_id: projectId,
          resolution: '160x90',
          fps: WORD_CUT_FPS,
          clips: [{ asset_id: id, words: [first, last] }],
        }),
      );
      if (!c.ready) {
        expect(c.diagnostics.map((d) => d.message).join('; ')).toMatch(/^not heard: /);
        continue;
      }
      cut++;
      const { heard, full } = heardSpan(
        (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, c.edit_id)).video_series_sequential[0]!,
      );
      const at = `sentence ${s + 1} (true ${words[first]!.start.toFixed(3)}-${words[last]!.end.toFixed(3)} s)`;
      if (full.from > words[first]!.start + TOLERANCE)
        problems.push(`${at}: starts ${Math.round((full.from - words[first]!.start) * 1000)} ms into its first word`);
      if (full.to < words[last]!.end - TOLERANCE)
        problems.push(`${at}: ends ${Math.round((words[last]!.end - full.to) * 1000)} ms before its last word's end`);
      if (words[first]!.start - heard.from > HANDLE + TOLERANCE)
        problems.push(
          `${at}: ${Math.round((words[first]!.start - heard.from) * 1000)} ms of sound before its first word`,
        );
      if (heard.to - words[last]!.end > HANDLE + TOLERANCE)
        problems.push(`${at}: ${Math.round((heard.to - words[last]!.end) * 1000)} ms of sound after its last word`);
    }
    expect(problems).toEqual([]);
    expect(cut).toBeGreaterThanOrEqual(7);
  }, 600_000);

  it('keeps the handle asked for', async () => {
    const a = assets[0]!;
    const first = a.words.findIndex((w) => w.sentence === 2);
    const last = a.words.findLastIndex((w) => w.sentence === 2);
    const r = structured<{ ready: boolean; edit_id: string; notes: string[] }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: WORD_CUT_FPS,
        clips: [{ asset_id: a.id, words: [first, last], handle: 0.1 }],
      }),
    );
    const { heard, full } = heardSpan(
      (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, r.edit_id)).video_series_sequential[0]!,
    );
    expect(full.from).toBeLessThanOrEqual(a.words[first]!.start + TOLERANCE);
    expect(full.to).toBeGreaterThanOrEqual(a.words[last]!.end - TOLERANCE);
    expect(a.words[first]!.start - heard.from).toBeLessThanOrEqual(0.1 + TOLERANCE);
    expect(heard.to - a.words[last]!.end).toBeLessThanOrEqual(0.1 + TOLERANCE);
    expect(r.notes.join('\n')).toMatch(/0\.1 s before/);
  }, 300_000);
});

describe('words recognition did not place, though said', () => {
  it('are cut by where the sound between the heard words around them is speech', async () => {
    // Recognition leaves runs of said words unplaced (or doubtful beside them); a clip from the heard word before
    // such a run to the heard word after it was refused as "not heard". Every word of these texts was said.
    const judged: string[] = [];
    const refused: string[] = [];
    const problems: string[] = [];
    // Besides the media above, bench/cut-words.mjs's speech in slt, whose alignment leaves "and rang the" unplaced.
    const { video, words } = makeWordCutMedia(allowed, 'said', 'slt', CUT_SENTENCES, CUT_GAPS);
    const saidId = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: video }),
    ).asset.id;
    for (const a of [...assets, { voice: 'slt', id: saidId, words, text: CUT_SENTENCES.join(' ') }]) {
      const text = 'text' in a ? a.text : SENTENCES.join(' ');
      const t = structured<{ unplaced?: number[]; doubtful?: number[]; words: { word: string }[] }>(
        await call('transcribe_asset', { project_id: projectId, asset_id: a.id, text, words: true }),
      );
      const off = new Set([...(t.unplaced ?? []), ...(t.doubtful ?? [])]);
      for (let i = 1; i < t.words.length - 1; i++) {
        if (!off.has(i) || off.has(i - 1)) continue;
        let k = i;
        while (off.has(k + 1)) k++;
        if (k - i + 1 < 3 || k + 1 >= t.words.length) continue;
        const [first, last] = [i - 1, k + 1];
        const at = `${a.voice}${a.bed ? ` under a bed` : ''}, words ${first}-${last} (${a.words[first]!.word}..${a.words[last]!.word}, ${i}-${k} not placed)`;
        const c = structured<{ ready: boolean; edit_id: string; notes: string[]; diagnostics: { message: string }[] }>(
          await call('compose_edit', {
            project_id: projectId,
            resolution: '160x90',
            fps: WORD_CUT_FPS,
            clips: [{ asset_id: a.id, words: [first, last] }],
          }),
        );
        if (!c.ready) {
          // Where the sound does not hold enough speech between the heard words (the aligner may have stretched one of
          // them over the others), the clip is still refused: never a wrong cut.
          expect(c.diagnostics.map((d) => d.message).join('; '), at).toMatch(/^not heard: /);
          refused.push(at);
          i = k;
          continue;
        }
        expect(c.notes.join('\n'), at).toMatch(/unplaced, but the sound between their heard neighbours is speech/);
        const { heard, full } = heardSpan(
          (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, c.edit_id)).video_series_sequential[0]!,
        );
        const onset = a.words[first]!.start;
        const end = a.words[last]!.end;
        if (full.from > onset + TOLERANCE)
          problems.push(`${at}: starts ${Math.round((full.from - onset) * 1000)} ms into its first word`);
        if (full.to < end - TOLERANCE)
          problems.push(`${at}: ends ${Math.round((end - full.to) * 1000)} ms before its last word's end`);
        if (onset - heard.from > HANDLE + TOLERANCE)
          problems.push(`${at}: ${Math.round((onset - heard.from) * 1000)} ms of sound before its first word`);
        if (heard.to - end > HANDLE + TOLERANCE)
          problems.push(`${at}: ${Math.round((heard.to - end) * 1000)} ms of sound after its last word`);
        judged.push(at);
        i = k;
      }
    }
    expect(problems).toEqual([]);
    // The media must hold such a run for this test to say anything.
    expect(
      judged.length,
      `no run of 3 or more unplaced said words cut in the test media (refused: ${refused.join('; ')})`,
    ).toBeGreaterThan(0);
    console.log(`cut ${judged.length}: ${judged.join('; ')}; refused ${refused.length}: ${refused.join('; ')}`);
  }, 600_000);
});

describe('a short word the sound holds, though recognition doubted it', () => {
  it('is cut by, not refused as not heard (rms)', async () => {
    // rms's "a ship in the storm and rang the": recognition doubts "the" (74 ms, between "rang" and "bell"); the
    // forced alignment times it within 12 ms of where it is said, and the 0.107 s between its neighbours held 0.05 s
    // of speech by the measure, under the 0.12 s a word asked of it: every such cut was refused as "not heard".
    const { id, words, ids } = await alignedSentences('rms-short-word', 'rms');
    const [first, last] = [ids(1)[2]!, ids(1).at(-4)!];
    expect([words[first]!.word, words[last]!.word]).toEqual(['a', 'the']);
    const c = await cutAlone(id, first, last);
    expect(c.ready, [...c.notes, ...(c.ready ? [] : c.diagnostics.map((d) => d.message))].join('\n')).toBe(true);
    if (!c.ready) return;
    expect(c.full.from, c.notes.join('\n')).toBeLessThanOrEqual(words[first]!.start + TOLERANCE);
    expect(c.full.to, c.notes.join('\n')).toBeGreaterThanOrEqual(words[last]!.end - TOLERANCE);
  }, 600_000);
});

describe('words of a known text that were never said', () => {
  it('are unplaced or doubtful, and a clip by them is a diagnostic naming the nearest heard words, never a cut of other speech', async () => {
    const said = [
      'We ate our lunch by the river.',
      'He put the blue box on the table.',
      'The train left the station late.',
    ];
    const text = [
      'We ate our lunch by the river.',
      'It was sunny and warm.',
      'He put the red box on the shelf.',
      'He put the blue box on the table.',
      'The train left the station late.',
    ];
    const { video } = makeWordCutMedia(allowed, 'unsaid', 'rms', said, [0.4]);
    const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
      .asset.id;
    const t = structured<{ unplaced?: number[]; doubtful?: number[]; words: { index: number; word: string }[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: id, text: text.join(' '), words: true }),
    );
    const unheard = new Set([...(t.unplaced ?? []), ...(t.doubtful ?? [])]);
    // "sunny and warm" and "the red box on the shelf" are words 9-11 and 15-19 of the text: none of them was said.
    for (const i of [9, 10, 11, 15, 19]) expect(unheard.has(i), `word ${i} "${t.words[i]!.word}"`).toBe(true);
    const r = structured<{ ready: boolean; diagnostics: { severity: string; path: string; message: string }[] }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [
          { asset_id: id, phrase: 'sunny and warm' },
          { asset_id: id, phrase: 'the red box' },
          { asset_id: id, phrase: 'the blue box' },
        ],
      }),
    );
    expect(r.ready).toBe(false);
    const at = (k: number) => r.diagnostics.filter((d) => d.path === `/video_series_sequential/${k}`);
    expect(at(0)[0]?.message).toMatch(/^not heard: "sunny and warm\.".*the nearest heard words are "river\." \(word 6/);
    expect(at(1)[0]?.message).toMatch(/^not heard: "the red box"/);
    // What was said is cut as usual.
    expect(at(2)).toEqual([]);
  }, 300_000);

  it('inside a clip, are named in a warning with the correction that takes them out; said, they are not', async () => {
    // rms says the two sentences without "old" and "big"; the text has them. One unplaced or doubtful word between heard
    // ones is taken as a word the engine missed, and the speech around it filled the checks: "train left the old
    // station" was cut with no word of it, and captions would print "old". Asked whether the sound holds them, the
    // engine leaves them out: the cut (what was said) is made, with a warning naming them and the correction.
    const said = ['The train left the station late.', 'He put the blue box on the table.'];
    const text = 'The train left the old station late. He put the big blue box on the table.';
    const { video, words } = makeWordCutMedia(allowed, 'unsaid-inside', 'rms', said, [0.4]);
    const id = structured<{ asset: { id: string } }>(await call('import_media', { project_id: projectId, path: video }))
      .asset.id;
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: id, text }));
    const compose = async (phrase: string) =>
      structured<{
        ready: boolean;
        edit_id: string;
        diagnostics: { severity: string; message: string; hint?: string }[];
      }>(
        await call('compose_edit', {
          project_id: projectId,
          resolution: '160x90',
          fps: WORD_CUT_FPS,
          clips: [{ asset_id: id, phrase }],
        }),
      );
    const warned = (c: { diagnostics: { severity: string; message: string }[] }) =>
      c.diagnostics.filter((d) => d.message.startsWith('may not be said'));
    const old = await compose('train left the old station');
    expect(old.ready).toBe(true);
    expect(warned(old).map((d) => [d.severity, d.message])).toEqual([
      [
        'warning',
        expect.stringMatching(
          /^may not be said: "old" \(word 4\) of the text, aligned again around "left" and "station"/,
        ),
      ],
    ]);
    expect(warned(old)[0]!.hint).toMatch(/transcribe_asset with replace \[3, 4\] and text "the"/);
    const big = await compose('put the big blue box');
    expect(warned(big).map((d) => d.message)).toEqual([expect.stringMatching(/^may not be said: "big" \(word 10\)/)]);
    // The correction the hint gives, then the words said are cut whole.
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: id, replace: [3, 4], text: 'the' }));
    const corrected = await compose('train left the station');
    expect(corrected.ready, corrected.diagnostics.map((d) => d.message).join('; ')).toBe(true);
    expect(warned(corrected)).toEqual([]);
    const { full } = heardSpan(
      (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, corrected.edit_id))
        .video_series_sequential[0]!,
    );
    const [train, station] = [words[1]!, words[4]!];
    expect([train.word, station.word]).toEqual(['train', 'station']);
    expect(full.from).toBeLessThanOrEqual(train.start + TOLERANCE);
    expect(full.to).toBeGreaterThanOrEqual(station.end - TOLERANCE);
    // The same text said whole: nothing left out, the clip is cut.
    const whole = makeWordCutMedia(
      allowed,
      'said-inside',
      'rms',
      ['The train left the old station late.', 'He put the big blue box on the table.'],
      [0.4],
    );
    const wholeId = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: whole.video }),
    ).asset.id;
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: wholeId, text }));
    for (const phrase of ['train left the old station', 'put the big blue box']) {
      const c = structured<{ ready: boolean; diagnostics: { severity: string; message: string }[] }>(
        await call('compose_edit', {
          project_id: projectId,
          resolution: '160x90',
          fps: WORD_CUT_FPS,
          clips: [{ asset_id: wholeId, phrase }],
        }),
      );
      expect(c.ready, `${phrase}: ${c.diagnostics.map((d) => d.message).join('; ')}`).toBe(true);
      expect(warned(c), phrase).toEqual([]);
    }
  }, 300_000);
});
