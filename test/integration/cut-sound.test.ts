// The sound of cuts by words as an editor hears it (issue 46, items 1-3), through the built server over stdio: speech
// whose every word's true start and end is known (flite's phone times), the bench's sentences that run their words
// together, in a voice alone and in one under a tonal music bed 10 dB down, as 25 fps video; the known text aligned.
// Read back from the edits kept and from a preview: a sentence split over two clips plays no sample twice (it
// stuttered "to the | -o the"); under the bed the sound never drops to digital silence at a join (holes at every
// join); a single word, first or last in its sentence, is a cut that holds it (it was "the cut ends before it
// starts"); inside a sentence, where the words run together, the neighbour's part beside the cut fades in and out
// (its level stepped 0 -> 1 at the edge: clicks of 2.5x the click threshold).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUT_GAPS, CUT_SENTENCES } from '../fixtures/cut-sentences.mjs';
import { storedEdit, type Spawned } from '../helpers/harness.js';
import { localProject, structuredOf, testRoot, type LocalProject } from '../helpers/local-project.js';
import { soundOf } from '../helpers/sound.js';
import { WORD_CUT_FPS, heardSpan, makeWordCutMedia, type PlacedWord } from '../helpers/word-cut-media.js';

const { root, allowed } = testRoot('cut-sound');
const TOLERANCE = 0.005;
const SENTENCES = CUT_SENTENCES.slice(0, 4);
const GAPS = CUT_GAPS.slice(0, 4);

type Seg = {
  video_id: string;
  video_start_time: string;
  video_end_time: string;
  audio_levels: { audio_level: number; start_time: string; end_time: string }[];
};
type Composed = { ready: boolean; edit_id: string; notes: string[]; diagnostics: { message: string }[] };

let server: Spawned;
let projectId: string;
const media: { name: string; id: string; words: PlacedWord[]; video: string }[] = [];
let call: LocalProject['call'];
let importMedia: LocalProject['importMedia'];
const compose = async (clips: Record<string, unknown>[]) =>
  structuredOf<Composed>(
    await call('compose_edit', { project_id: projectId, resolution: '160x90', fps: WORD_CUT_FPS, clips }),
  );
const segments = async (c: Composed) =>
  (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, c.edit_id)).video_series_sequential;
const sentenceWords = (words: PlacedWord[], s: number) => words.flatMap((w, j) => (w.sentence === s ? [j] : []));

beforeAll(async () => {
  ({ server, projectId, call, importMedia } = await localProject(
    { root, allowed },
    { name: 'cut sound', description: 'the sound of cuts by words' },
    { timeout: 600_000 },
  ));
  for (const [voice, bed] of [
    ['slt', undefined],
    ['rms', 10],
  ] as const) {
    const name = `${voice}${bed ?? ''}`;
    const { video, words } = makeWordCutMedia(allowed, name, voice, SENTENCES, GAPS, bed);
    const id = await importMedia(video);
    structuredOf(await call('transcribe_asset', { project_id: projectId, asset_id: id, text: SENTENCES.join(' ') }));
    media.push({ name: bed ? `${voice} under a bed ${bed} dB down` : voice, id, words, video });
  }
}, 900_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a cut by words', () => {
  it('of a single word, first or last in its sentence, holds that word (never a cut that ends before it starts)', async () => {
    const problems: string[] = [];
    for (const m of media)
      for (const s of [0, 2]) {
        const ids = sentenceWords(m.words, s);
        for (const k of [ids[1]!, ids.at(-1)!]) {
          const at = `${m.name}: "${m.words[k]!.word}" alone`;
          const c = await compose([{ asset_id: m.id, words: [k, k] }]);
          if (!c.ready) {
            problems.push(`${at}: not cut (${c.diagnostics.map((d) => d.message).join('; ')})`);
            continue;
          }
          const { full } = heardSpan((await segments(c))[0]!);
          if (full.from > m.words[k]!.start + TOLERANCE || full.to < m.words[k]!.end - TOLERANCE)
            problems.push(
              `${at}: full level ${full.from.toFixed(3)}-${full.to.toFixed(3)} s, the word ${m.words[k]!.start.toFixed(3)}-${m.words[k]!.end.toFixed(3)} s`,
            );
        }
      }
    expect(problems).toEqual([]);
  }, 1_800_000);
});

describe('a cut by words inside a sentence', () => {
  it("fades out the neighbour's part beside each edge where the words run together (no click)", async () => {
    // There the edge lies in running speech, and the sound was switched on and off at it (its level stepping 0 -> 1
    // in one sample): a click. A click: a step between samples over 3x the speech's own 99th percentile step.
    const rate = 48_000;
    const problems: string[] = [];
    let cut = 0;
    for (const m of media)
      for (const s of [0, 1, 2]) {
        const ids = sentenceWords(m.words, s);
        const [first, last] = [ids[2]!, ids.at(-4)!];
        const at = `${m.name}: "${m.words[first]!.word}..${m.words[last]!.word}"`;
        const c = await compose([{ asset_id: m.id, words: [first, last] }]);
        if (!c.ready) {
          // Words the alignment did not place are refused (not heard), never cut elsewhere.
          expect(c.diagnostics.map((d) => d.message).join('; '), at).toMatch(/^not heard: /);
          continue;
        }
        cut++;
        const { inSec, heard, full } = heardSpan((await segments(c))[0]!);
        const p = structuredOf<{ path: string }>(
          await call('preview_edit', { project_id: projectId, edit_id: c.edit_id }),
        );
        const x = soundOf(p.path);
        const step = (i: number) => Math.abs(x[i]! - x[i - 1]!);
        // The speech's own steps, over the cut's words at full level (after whatever gain the preview applied).
        const steps: number[] = [];
        for (
          let i = Math.round((full.from - inSec + 0.02) * rate);
          i < Math.round((full.to - inSec - 0.02) * rate);
          i++
        )
          steps.push(step(i));
        steps.sort((a, b) => a - b);
        const click = 3 * steps[Math.floor(steps.length * 0.99)]!;
        for (const [edge, t] of [
          ['start', heard.from],
          ['end', heard.to],
        ] as const) {
          const centre = Math.round((t - inSec) * rate);
          let worst = 0;
          for (let i = Math.max(1, centre - 0.004 * rate); i < Math.min(x.length, centre + 0.004 * rate); i++)
            worst = Math.max(worst, step(i));
          if (worst > click)
            problems.push(
              `${at}: a step of ${worst.toFixed(4)} at its sound's ${edge} (speech's p99 x3: ${click.toFixed(4)})`,
            );
        }
      }
    expect(problems).toEqual([]);
    expect(cut).toBeGreaterThanOrEqual(4);
  }, 1_800_000);
});

describe('clips by words one after another', () => {
  it('of one sentence split in two play no sample twice, said in the notes', async () => {
    const problems: string[] = [];
    for (const m of media) {
      const ids = sentenceWords(m.words, 1);
      const k = ids[4]!;
      const c = await compose([
        { asset_id: m.id, words: [ids[0]!, k] },
        { asset_id: m.id, words: [k + 1, ids.at(-1)!] },
      ]);
      if (!c.ready) {
        problems.push(`${m.name}: not cut (${c.diagnostics.map((d) => d.message).join('; ')})`);
        continue;
      }
      const spans = (await segments(c)).map((seg) => heardSpan(seg).heard);
      for (let i = 1; i < spans.length; i++)
        if (spans[i]!.from < spans[i - 1]!.to - 0.0005)
          problems.push(`${m.name}: ${Math.round((spans[i - 1]!.to - spans[i]!.from) * 1000)} ms played twice`);
      if (spans.length === 1 || spans[1]!.from <= spans[0]!.to + 0.0005)
        expect(c.notes.join('\n'), m.name).toMatch(/nothing plays twice/);
    }
    expect(problems).toEqual([]);
  }, 1_800_000);

  it('under a music bed never drop to digital silence at a join', async () => {
    const m = media.find((x) => x.name.includes('bed'))!;
    const clips = [0, 2, 1, 3].map((s) => {
      const ids = sentenceWords(m.words, s);
      return { asset_id: m.id, words: [ids[0]!, ids.at(-1)!] };
    });
    const c = await compose(clips);
    expect(c.ready, c.diagnostics.map((d) => d.message).join('; ')).toBe(true);
    const p = structuredOf<{ path: string }>(await call('preview_edit', { project_id: projectId, edit_id: c.edit_id }));
    const x = soundOf(p.path);
    const rate = 48_000;
    // Digital silence: under -90 dBFS. Not at the timeline's own start and end (the first frame before the sound).
    const floor = 10 ** (-90 / 20);
    const holes: string[] = [];
    let run = 0;
    const from = Math.round(0.08 * rate);
    const to = x.length - Math.round(0.08 * rate);
    for (let i = from; i < to; i++) {
      run = Math.abs(x[i]!) < floor ? run + 1 : 0;
      if (run === Math.round(0.005 * rate)) holes.push(`${((i - run) / rate).toFixed(3)} s`);
    }
    expect(holes, 'runs over 5 ms under -90 dBFS').toEqual([]);
  }, 1_800_000);
});
