// Joins of cuts by words are crossfaded over the pause beyond them (issue 46, item 3: "cuts by words join with short
// crossfades of the sound, the picture still on whole frames"), through the built server over stdio: speech whose
// every word's true start and end is known (flite's phone times) over room tone (pink noise) 20 dB down, as 25 fps
// video; the known text aligned. Sentences cut by words and played out of order are rendered (render_edit) and
// previewed; at every join the room tone goes on at its level (each side faded out and in, it dipped about 4 dB over
// the 10 ms around the join, above 1 kHz), with no run of digital silence and no click; the sound handles the edit carries (what
// the crossfade may play beyond a cut) never reach a word; and the picture and the timeline's length are those of
// the same edit without them. Exported to OTIO or FCPXML and imported back, the joins are still crossfaded. Rendered
// two cuts per ffmpeg process (CUTROOM_FFMPEG_MAX_INPUTS=2), a join between chunks is crossfaded as any other, and
// the sound is the one-process render's, in sync to the sample.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUT_GAPS, CUT_SENTENCES } from '../fixtures/cut-sentences.mjs';
import { spawnServer, storedEdit, type Spawned } from '../helpers/harness.js';
import { localEnv, localProject, structuredOf, testRoot, type LocalProject } from '../helpers/local-project.js';
import { probe } from '../helpers/inspect-media.js';
import { ffmpeg, soundOf } from '../helpers/sound.js';
import { WORD_CUT_FPS, makeWordCutMedia, type PlacedWord } from '../helpers/word-cut-media.js';

const { root, allowed } = testRoot('join-crossfade');
const RATE = 48_000;
// (Five said, four cut: the source's sound ends with its last sentence's pause, and no cut reaches that end.)
const SENTENCES = CUT_SENTENCES.slice(0, 5);
const GAPS = CUT_GAPS.slice(0, 5);

type Seg = {
  video_id: string;
  video_start_time: string;
  video_end_time: string;
  audio_levels: unknown[];
  sound_handles?: { before?: number; after?: number };
};
type Edit = Record<string, unknown> & { video_series_sequential: Seg[] };
type Composed = { ready: boolean; edit_id: string; notes: string[]; diagnostics: { message: string }[] };
const sec = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);

let server: Spawned;
/** The same data, rendering two cuts per ffmpeg process (CUTROOM_FFMPEG_MAX_INPUTS=2): joins fall between chunks. */
let chunked: Spawned;
let projectId: string;
let assetId: string;
let words: PlacedWord[];
let call: LocalProject['call'];
let importMedia: LocalProject['importMedia'];
const compose = async (clips: Record<string, unknown>[]) =>
  structuredOf<Composed>(
    await call('compose_edit', { project_id: projectId, resolution: '160x90', fps: WORD_CUT_FPS, clips }),
  );
const sentence = (s: number) => words.flatMap((w, j) => (w.sentence === s ? [j] : []));

beforeAll(async () => {
  ({ server, projectId, call, importMedia } = await localProject(
    { root, allowed },
    { name: 'joins', description: 'crossfaded joins' },
    { timeout: 600_000 },
  ));
  chunked = await spawnServer(localEnv(root, allowed, { CUTROOM_FFMPEG_MAX_INPUTS: '2' }));
  const made = makeWordCutMedia(allowed, 'room', 'slt', SENTENCES, GAPS, 20, 'room');
  words = made.words;
  assetId = await importMedia(made.video);
  structuredOf(await call('transcribe_asset', { project_id: projectId, asset_id: assetId, text: SENTENCES.join(' ') }));
}, 900_000);
afterAll(async () => {
  await server?.close();
  await chunked?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Power (mean square) of `n` samples from `from`. */
const power = (x: Float32Array, from: number, n: number) => {
  let sum = 0;
  for (let i = from; i < from + n; i++) sum += x[i]! ** 2;
  return sum / n;
};
const db = (p: number) => 10 * Math.log10(p);

/**
 * A file's sound above 1 kHz (first channel, 48 kHz): pink noise's power lies in its low frequencies, whose few
 * cycles in 10 ms make one 10 ms window's level vary by 2 dB (standard deviation); above 1 kHz by 0.5 dB. A fade's dip
 * is heard at every frequency.
 */
function highs(file: string): Float32Array {
  const b = ffmpeg([
    '-i',
    file,
    '-map',
    '0:a:0',
    '-af',
    'pan=mono|c0=c0,highpass=f=1000:poles=2,highpass=f=1000:poles=2',
    '-ar',
    String(RATE),
    '-f',
    'f32le',
    'pipe:1',
  ]);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~3)));
}

/**
 * How the sound at each join (timeline seconds) compares with the room tone around it: the level over the 10 ms
 * centred on it against the mean over 10 ms windows centred 15-40 ms either side (dB), above 1 kHz; the longest run under -90 dBFS
 * anywhere but the timeline's first and last 80 ms (samples); and the largest sample step within 5 ms of the join
 * against 3x the 99th percentile step of the room tone around it.
 */
function judgeJoins(file: string, joins: number[]) {
  const x = soundOf(file);
  const high = highs(file);
  const w = RATE / 100;
  const found = joins.map((t) => {
    const at = Math.round(t * RATE);
    const around = [-8, -7, -6, -5, -4, -3, 3, 4, 5, 6, 7, 8].map((k) => power(high, at - w / 2 + (k * w) / 2, w));
    const mean = around.reduce((a, b) => a + b, 0) / around.length;
    const steps: number[] = [];
    for (const side of [-1, 1])
      for (let i = at + side * Math.round(0.02 * RATE); Math.abs(i - at) < 0.08 * RATE; i += side)
        steps.push(Math.abs(x[i]! - x[i - 1]!));
    steps.sort((a, b) => a - b);
    let step = 0;
    for (let i = at - RATE / 200; i < at + RATE / 200; i++) step = Math.max(step, Math.abs(x[i]! - x[i - 1]!));
    return {
      t,
      dip: db(power(high, at - w / 2, w)) - db(mean),
      click: step / (3 * steps[Math.floor(steps.length * 0.99)]!),
    };
  });
  let run = 0;
  let longest = 0;
  let silentAt = 0;
  for (let i = Math.round(0.08 * RATE); i < x.length - Math.round(0.08 * RATE); i++) {
    run = Math.abs(x[i]!) < 10 ** (-90 / 20) ? run + 1 : 0;
    if (run > longest) [longest, silentAt] = [run, (i - run + 1) / RATE];
  }
  return { joins: found, silentRun: longest, silentAt, sound: x };
}

describe('cuts by words one after another', () => {
  it('join with a crossfade over the pause: no dip, hole or click, no word beyond a cut, the picture unchanged', async () => {
    // Whole sentences out of order: every join lies in a pause (0.25-1.2 s long).
    const c = await compose(
      [0, 2, 1, 3].map((s) => ({ asset_id: assetId, words: [sentence(s)[0]!, sentence(s).at(-1)!] })),
    );
    expect(c.ready, c.diagnostics.map((d) => d.message).join('; ')).toBe(true);
    const edit = await storedEdit<Edit>(server.client, c.edit_id);
    const segs = edit.video_series_sequential;
    expect(segs).toHaveLength(4);
    // Each side of every join carries the pause beyond it; the outer edges none.
    segs.forEach((s, i) => {
      expect(!!s.sound_handles?.before, `cut ${i} before`).toBe(i > 0);
      expect(!!s.sound_handles?.after, `cut ${i} after`).toBe(i < segs.length - 1);
    });

    // Rendered, and the same edit without its handles (the joins faded out and in, as before).
    const render = async (e: Record<string, unknown>) => {
      const r = structuredOf<{ render: { done: boolean; url?: string } }>(
        await call('render_edit', { project_id: projectId, wait: true, ...e }),
      );
      expect(r.render.done).toBe(true);
      return fileURLToPath(r.render.url!);
    };
    const crossfaded = await render({ edit_id: c.edit_id });
    const plain = await render({
      edit: {
        ...edit,
        video_output_filename: 'plain.mp4',
        video_series_sequential: segs.map(({ sound_handles: _h, ...s }) => s),
      },
    });
    // The picture: the same frames, the timeline as long.
    const cut = segs.map((s) => Math.round((sec(s.video_end_time) - sec(s.video_start_time)) * WORD_CUT_FPS));
    const picture = probe(crossfaded);
    expect(picture).toEqual(probe(plain));
    expect(picture.videoFrames).toBe(cut.reduce((a, b) => a + b, 0));
    // Joins at the picture's cuts (the sound in sync: cutroom places each cut's sound with its picture).
    const joins = cut.slice(0, -1).map((_, k) => cut.slice(0, k + 1).reduce((a, b) => a + b, 0) / WORD_CUT_FPS);

    const judged = judgeJoins(crossfaded, joins);
    const before = judgeJoins(plain, joins);
    const x = judged.sound;
    const y = before.sound;
    expect(x.length).toBe(y.length);
    const said = (j: { joins: { t: number; dip: number; click: number }[] }) =>
      j.joins.map((k) => `${k.t.toFixed(2)} s: ${k.dip.toFixed(1)} dB, step ${k.click.toFixed(2)}x`).join('; ');
    console.error(`crossfaded: ${said(judged)}\nfaded out and in: ${said(before)}`);
    // The room tone holds its level across every join (each side faded out and in, it dipped about 4 dB); no hole,
    // no click.
    const mean = judged.joins.reduce((a, k) => a + k.dip, 0) / judged.joins.length;
    expect(Math.abs(mean), said(judged)).toBeLessThan(1);
    for (const k of judged.joins) expect(Math.abs(k.dip), said(judged)).toBeLessThan(1.5);
    expect(before.joins.reduce((a, k) => a + k.dip, 0) / before.joins.length, said(before)).toBeLessThan(-2);
    expect(judged.silentRun, `silent from ${judged.silentAt.toFixed(3)} s`).toBeLessThan(0.005 * RATE);
    for (const k of judged.joins) expect(k.click, said(judged)).toBeLessThan(1);
    // In sync, away from the joins: the two renders' sound the same but for the codec's noise.
    let diff = 0;
    let signal = 0;
    for (let i = 0; i < x.length; i++)
      if (joins.every((t) => Math.abs(i / RATE - t) > 0.05)) {
        diff += (x[i]! - y[i]!) ** 2;
        signal += y[i]! ** 2;
      }
    expect(db(diff / signal), 'the renders differ away from the joins').toBeLessThan(-30);

    // The preview crossfades as the render does.
    const p = structuredOf<{ path: string }>(await call('preview_edit', { project_id: projectId, edit_id: c.edit_id }));
    const previewed = judgeJoins(p.path, joins);
    console.error(`preview: ${said(previewed)}`);
    const previewMean = previewed.joins.reduce((a, k) => a + k.dip, 0) / previewed.joins.length;
    expect(Math.abs(previewMean), said(previewed)).toBeLessThan(1);
    for (const k of previewed.joins) expect(Math.abs(k.dip), said(previewed)).toBeLessThan(1.5);
    expect(previewed.silentRun, `silent from ${previewed.silentAt.toFixed(3)} s`).toBeLessThan(0.005 * RATE);
    for (const k of previewed.joins) expect(k.click, said(previewed)).toBeLessThan(1);
  }, 1_800_000);

  it('keep their crossfade through OTIO and FCPXML and back; an EDL says it cannot carry it', async () => {
    // The same joins as above, exported for an editor and imported back unchanged: the edit that comes back must join
    // as the one that went (without its sound handles, each join faded out and in: a dip of about 4 dB).
    const c = await compose(
      [0, 2, 1, 3].map((s) => ({ asset_id: assetId, words: [sentence(s)[0]!, sentence(s).at(-1)!] })),
    );
    expect(c.ready, c.diagnostics.map((d) => d.message).join('; ')).toBe(true);
    const sent = (await storedEdit<Edit>(server.client, c.edit_id)).video_series_sequential;
    const roundTrip = async (format: string) => {
      const out = structuredOf<{ path: string; warnings: string[] }>(
        await call('export_edit', { project_id: projectId, edit_id: c.edit_id, format }),
      );
      const back = structuredOf<Composed>(
        await call('import_edit', { project_id: projectId, path: out.path, resolution: '160x90' }),
      );
      expect(back.ready, back.diagnostics.map((d) => d.message).join('; ')).toBe(true);
      return {
        warnings: out.warnings,
        editId: back.edit_id,
        edit: await storedEdit<Edit>(server.client, back.edit_id),
      };
    };
    const crossfaded = (w: string) => /crossfaded/.test(w) && /after cuts 1, 2, 3/.test(w);
    for (const format of ['otio', 'fcpxml']) {
      const back = await roundTrip(format);
      const segs = back.edit.video_series_sequential;
      expect(segs.map((s) => [s.video_start_time, s.video_end_time])).toEqual(
        sent.map((s) => [s.video_start_time, s.video_end_time]),
      );
      const r = structuredOf<{ render: { done: boolean; url?: string } }>(
        await call('render_edit', { project_id: projectId, edit_id: back.editId, wait: true }),
      );
      expect(r.render.done).toBe(true);
      const cut = segs.map((s) => Math.round((sec(s.video_end_time) - sec(s.video_start_time)) * WORD_CUT_FPS));
      const joins = cut.slice(0, -1).map((_, k) => cut.slice(0, k + 1).reduce((a, b) => a + b, 0) / WORD_CUT_FPS);
      const judged = judgeJoins(fileURLToPath(r.render.url!), joins);
      const said = judged.joins.map((k) => `${k.t.toFixed(2)} s: ${k.dip.toFixed(1)} dB, step ${k.click.toFixed(2)}x`);
      console.error(`${format} round trip: ${said.join('; ')}`);
      for (const k of judged.joins) expect(Math.abs(k.dip), `${format}: ${said.join('; ')}`).toBeLessThan(1.5);
      for (const k of judged.joins) expect(k.click, `${format}: ${said.join('; ')}`).toBeLessThan(1);
      expect(judged.silentRun, `${format}: silent from ${judged.silentAt.toFixed(3)} s`).toBeLessThan(0.005 * RATE);
      // The handles come back as they went, and the file says an editor's application will not crossfade there.
      expect(
        segs.map((s) => s.sound_handles ?? {}),
        format,
      ).toEqual(sent.map((s) => s.sound_handles ?? {}));
      expect(back.warnings.filter(crossfaded), back.warnings.join('\n')).toHaveLength(1);
    }
    // An EDL has no room for them: the export says so, and the edit read back has none.
    const edl = await roundTrip('edl');
    expect(edl.warnings.filter(crossfaded), edl.warnings.join('\n')).toHaveLength(1);
    expect(edl.warnings.find(crossfaded)).toMatch(/EDL cannot carry/);
    expect(edl.edit.video_series_sequential.filter((s) => s.sound_handles)).toEqual([]);
  }, 1_800_000);

  it("carry sound handles that never reach a word: none where a cut's words run into their neighbour", async () => {
    // Whole sentences, and a cut inside a sentence (its words run into their neighbours), joined.
    const inner = sentence(2);
    const c = await compose([
      { asset_id: assetId, words: [sentence(0)[0]!, sentence(0).at(-1)!] },
      { asset_id: assetId, words: [inner[2]!, inner.at(-4)!] },
      { asset_id: assetId, words: [sentence(1)[0]!, sentence(1).at(-1)!] },
    ]);
    expect(c.ready, c.diagnostics.map((d) => d.message).join('; ')).toBe(true);
    const segs = (await storedEdit<Edit>(server.client, c.edit_id)).video_series_sequential;
    const reached: string[] = [];
    for (const [i, s] of segs.entries()) {
      const from = sec(s.video_start_time);
      const to = sec(s.video_end_time);
      const spans = [
        ...(s.sound_handles?.before ? [{ side: 'before', from: from - s.sound_handles.before, to: from }] : []),
        ...(s.sound_handles?.after ? [{ side: 'after', from: to, to: to + s.sound_handles.after }] : []),
      ];
      for (const h of spans)
        for (const w of words)
          if (w.start < h.to && w.end > h.from)
            reached.push(`cut ${i} ${h.side} ${h.from.toFixed(3)}-${h.to.toFixed(3)} s reaches "${w.word}"`);
    }
    expect(reached).toEqual([]);
    // The cut inside the sentence has the neighbour word right beside its edges: no handle there.
    expect(segs[1]!.sound_handles ?? {}).toEqual({});
  }, 1_800_000);
});

describe('a render in chunks (more cuts than one ffmpeg process takes)', () => {
  it('crossfades a join between chunks as one inside a chunk: no dip, hole or click, in sync with one process', async () => {
    // Six whole sentences, two per process: joins 2 and 4 fall between chunks, 1, 3 and 5 inside one. (Laid end to end
    // with their edges faded out and in, the joins between chunks dipped 5.1 and 5.9 dB.)
    const order = [0, 2, 1, 3, 0, 2];
    const c = await compose(order.map((s) => ({ asset_id: assetId, words: [sentence(s)[0]!, sentence(s).at(-1)!] })));
    expect(c.ready, c.diagnostics.map((d) => d.message).join('; ')).toBe(true);
    const edit = await storedEdit<Edit>(server.client, c.edit_id);
    const segs = edit.video_series_sequential;
    expect(
      segs.every((s, i) => (i > 0 ? !!s.sound_handles?.before : true) && (i < 5 ? !!s.sound_handles?.after : true)),
    ).toBe(true);
    const render = async (s: Spawned, name: string) => {
      const r = structuredOf<{ render: { done: boolean; url?: string } }>(
        await s.client.callTool(
          {
            name: 'render_edit',
            arguments: { project_id: projectId, wait: true, edit: { ...edit, video_output_filename: name } },
          },
          { timeout: 600_000 },
        ),
      );
      expect(r.render.done).toBe(true);
      return fileURLToPath(r.render.url!);
    };
    const one = await render(server, 'one-process.mp4');
    const chunks = await render(chunked, 'in-chunks.mp4');

    // The picture: the same frames, the timeline as long.
    const cut = segs.map((s) => Math.round((sec(s.video_end_time) - sec(s.video_start_time)) * WORD_CUT_FPS));
    const picture = probe(chunks);
    expect(picture).toEqual(probe(one));
    expect(picture.videoFrames).toBe(cut.reduce((a, b) => a + b, 0));
    const joins = cut.slice(0, -1).map((_, k) => cut.slice(0, k + 1).reduce((a, b) => a + b, 0) / WORD_CUT_FPS);

    const judged = judgeJoins(chunks, joins);
    const said = judged.joins.map((k) => `${k.t.toFixed(2)} s: ${k.dip.toFixed(1)} dB, step ${k.click.toFixed(2)}x`);
    console.error(`in chunks of two cuts: ${said.join('; ')}`);
    for (const k of judged.joins) expect(Math.abs(k.dip), said.join('; ')).toBeLessThan(1);
    for (const k of judged.joins) expect(k.click, said.join('; ')).toBeLessThan(1);
    expect(judged.silentRun, `silent from ${judged.silentAt.toFixed(3)} s`).toBeLessThan(0.005 * RATE);

    // In sync with the render made in one process, to the sample: each cut's first word lines up with no lag (the
    // lag, within 2 ms either way, that best lines up 100 ms of it), and the whole sound, joins included, is the same
    // but for the codec's noise.
    const x = judged.sound;
    const y = soundOf(one);
    expect(x.length).toBe(y.length);
    const lags = order.map((s, k) => {
      const w = words[sentence(s)[0]!]!;
      const from = Math.round(((k ? joins[k - 1]! : 0) + w.start - sec(segs[k]!.video_start_time)) * RATE);
      let best = { lag: 0, r: -Infinity };
      for (let lag = -96; lag <= 96; lag++) {
        let r = 0;
        for (let i = from; i < from + RATE / 10; i++) r += x[i + lag]! * y[i]!;
        if (r > best.r) best = { lag, r };
      }
      return best.lag;
    });
    expect(lags).toEqual(order.map(() => 0));
    let diff = 0;
    let signal = 0;
    for (let i = 0; i < x.length; i++) {
      diff += (x[i]! - y[i]!) ** 2;
      signal += y[i]! ** 2;
    }
    console.error(`in chunks against one process: ${db(diff / signal).toFixed(1)} dB`);
    expect(db(diff / signal), 'the render in chunks differs from the one made in one process').toBeLessThan(-40);

    // A preview with two cuts per process crossfades every join too (its sound is made in one process).
    const p = structuredOf<{ path: string }>(
      await chunked.client.callTool(
        { name: 'preview_edit', arguments: { project_id: projectId, edit_id: c.edit_id } },
        { timeout: 600_000 },
      ),
    );
    const previewed = judgeJoins(p.path, joins);
    const saidPreview = previewed.joins.map(
      (k) => `${k.t.toFixed(2)} s: ${k.dip.toFixed(1)} dB, step ${k.click.toFixed(2)}x`,
    );
    console.error(`preview, two cuts per process: ${saidPreview.join('; ')}`);
    for (const k of previewed.joins) expect(Math.abs(k.dip), saidPreview.join('; ')).toBeLessThan(1);
    for (const k of previewed.joins) expect(k.click, saidPreview.join('; ')).toBeLessThan(1);
    expect(previewed.silentRun, `silent from ${previewed.silentAt.toFixed(3)} s`).toBeLessThan(0.005 * RATE);
  }, 1_800_000);
});
