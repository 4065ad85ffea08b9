// Captions fit to publish (issue 47, items 1 and 2), through the built server over stdio, on speech whose true words
// are known (flite): cues never run across a cut into another source (a sentence split between two cuts of its own
// source runs on, said once where the cuts overlap); on a vertical output every cue is drawn in at most two lines,
// clear of the bottom fifth and the right edge where social apps draw their buttons, and `position: top` puts them at
// the top (read back from the preview's frames); SRT and VTT never carry a transcript's markup; and captions asked
// for before the speech was ever transcribed come with the same call, saying they come from recognition.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { WORD_CUT_FPS, makeWordCutMedia } from '../helpers/word-cut-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-captions-publish-'));
const allowed = join(root, 'allowed');
const KEEPER = ['The lighthouse keeper walked along the shore.', 'Nobody knew where the small boat had gone.'];
const SHIP = ['She saw a ship in the storm and rang the bell.'];
const AWB = ['The fisherman mended his nets by the harbour wall.', 'Gulls cried over the quiet water at dawn.'];

type Word = { index: number; word: string; start_seconds: number; end_seconds: number };
type Cue = { start: number; end: number; text: string; lines: string[] };
type PreviewCut = { index: number; asset_id: string; timeline_start: string; timeline_end: string };
type Preview = { path: string; warnings: string[]; cuts: PreviewCut[]; resolution: string };
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
const assets: Record<'keeper' | 'ship' | 'awb', string> = { keeper: '', ship: '', awb: '' };
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 600_000 });

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

/**
 * Per frame: the rows and columns where the caption colour (yellow) shows, as bands of rows (a line of text each)
 * and the box around them.
 */
function captionFrames(file: string): { width: number; height: number; frames: Caption[] } {
  const p = spawnSync(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', file],
    { encoding: 'utf8' },
  );
  const [width, height] = p.stdout.trim().split(',').map(Number) as [number, number];
  const r = spawnSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], {
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(r.stderr.toString());
  const size = width * height * 3;
  const frames: Caption[] = [];
  for (let f = 0; (f + 1) * size <= r.stdout.length; f++) {
    const rows: number[] = new Array<number>(height).fill(0);
    let left = width;
    let right = -1;
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const i = f * size + (y * width + x) * 3;
        if (r.stdout[i]! > 170 && r.stdout[i + 1]! > 170 && r.stdout[i + 2]! < 90) {
          rows[y]!++;
          left = Math.min(left, x);
          right = Math.max(right, x);
        }
      }
    const lit = rows.flatMap((n, y) => (n >= 2 ? [y] : []));
    let bands = 0;
    lit.forEach((y, k) => {
      // A band is a run of lit rows; a gap of a few rows inside one line (between a letter's parts) does not split it.
      if (k === 0 || y - lit[k - 1]! > 3) bands++;
    });
    frames.push(
      lit.length > 2
        ? { shown: true, bands, top: lit[0]!, bottom: lit.at(-1)!, left, right }
        : { shown: false, bands: 0, top: -1, bottom: -1, left: -1, right: -1 },
    );
  }
  return { width, height, frames };
}
type Caption = { shown: boolean; bands: number; top: number; bottom: number; left: number; right: number };

type Seg = {
  video_id: string;
  video_start_time: string;
  video_end_time: string;
  audio_levels: { audio_level: number; start_time: string; end_time: string }[];
};
type TrueWord = { word: string; start: number; end: number };
/** The true words of the media made, by name. */
const truth = new Map<string, TrueWord[]>();
const key = (w: string) => w.toLowerCase().replace(/[^a-z']/g, '');

/**
 * The true words each cut plays, in order, with how much of each is heard (0-1: inside the cut and above -30 dB by its
 * level windows; those heard less than half are left out); a word two consecutive cuts of one source both play counts in the first (the same word index).
 */
function heardWords(segs: Seg[], assetIds: string[], media: string[]): { word: string; heard: number }[] {
  const out: { word: string; heard: number }[] = [];
  let before: { asset: string; seen: Set<number> } | undefined;
  segs.forEach((seg, k) => {
    const from = secs(seg.video_start_time);
    const to = secs(seg.video_end_time);
    const windows = seg.audio_levels.map((l) => ({ level: l.audio_level, a: secs(l.start_time), b: secs(l.end_time) }));
    const audible = (t: number) => t >= from && t < to && (windows.find((w) => t >= w.a && t < w.b)?.level ?? 1) > 0.03;
    const seen = new Set<number>();
    truth.get(media[k]!)!.forEach((w, i) => {
      let n = 0;
      for (let t = w.start; t < w.end; t += 0.002) if (audible(t)) n++;
      const heard = (n * 0.002) / (w.end - w.start);
      if (heard < 0.5) return;
      seen.add(i);
      if (before?.asset === assetIds[k] && before.seen.has(i)) return;
      out.push({ word: key(w.word), heard });
    });
    before = { asset: assetIds[k]!, seen };
  });
  return out;
}

/**
 * The captioned words the sound does not explain, matched in order against what plays: each word heard whole (90% or
 * more) must be captioned, a word heard in part (50-90%: where a transcript's edge errs) may be, and nothing else.
 */
function unexplained(said: string[], played: { word: string; heard: number }[]): string[] {
  const problems: string[] = [];
  let k = 0;
  for (const w of said) {
    let j = k;
    while (j < played.length && !(played[j]!.word === w && played[j]!.heard >= 0.5)) {
      if (played[j]!.heard >= 0.9) problems.push(`"${played[j]!.word}" heard whole but not captioned before "${w}"`);
      j++;
    }
    if (j >= played.length) {
      problems.push(`"${w}" captioned but not heard there`);
      continue;
    }
    k = j + 1;
  }
  for (; k < played.length; k++)
    if (played[k]!.heard >= 0.9) problems.push(`"${played[k]!.word}" heard whole but not captioned`);
  return problems;
}

const sentenceRange = (sentences: string[], i: number): [number, number] => {
  const first = sentences.slice(0, i).reduce((n, s) => n + s.split(' ').length, 0);
  return [first, first + sentences[i]!.split(' ').length - 1];
};

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_LOG_LEVEL: 'error',
  });
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'captions to publish', description: 'captions' }),
  ).project.id;
  const keeper = makeWordCutMedia(allowed, 'keeper', 'slt', KEEPER, [0.8]);
  const ship = makeWordCutMedia(allowed, 'ship', 'rms', SHIP, [0.8]);
  truth.set('keeper', keeper.words);
  truth.set('ship', ship.words);
  const made = {
    keeper: keeper.video,
    ship: ship.video,
    awb: makeWordCutMedia(allowed, 'awb', 'awb', AWB, [0.8]).video,
  };
  for (const k of ['keeper', 'ship', 'awb'] as const)
    assets[k] = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: made[k] }),
    ).asset.id;
  // The two sources cut by words are aligned to their scripts (their words are known); awb's never transcribed.
  for (const [k, text] of [
    ['keeper', KEEPER],
    ['ship', SHIP],
  ] as const)
    structured<{ words: Word[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: assets[k], text: text.join(' '), words: true }),
    );
}, 900_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('captions fit to publish', () => {
  it('never runs a cue across a cut into another source; a sentence split between two cuts of its source runs on, each word once', async () => {
    const c = structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: '320x180',
        fps: WORD_CUT_FPS,
        clips: [
          // "The lighthouse", then "lighthouse keeper walked along the shore." (its first word said again at the join)
          { asset_id: assets.keeper, words: [0, 1] },
          { asset_id: assets.keeper, words: [1, 6] },
          // "Nobody knew where", then another source mid-sentence: "in the storm and rang"
          { asset_id: assets.keeper, words: [7, 9] },
          { asset_id: assets.ship, words: [5, 9] },
        ],
        captions: { burn: false },
      }),
    );
    expect(c.ready, JSON.stringify(c.diagnostics)).toBe(true);
    const preview = structured<Preview>(await call('preview_edit', { edit_id: c.edit_id, width: 320 }));
    const cuts = preview.cuts.map((k) => ({
      asset: k.asset_id,
      from: secs(k.timeline_start),
      to: secs(k.timeline_end),
    }));
    const srt = structured<{ path: string }>(await call('export_edit', { edit_id: c.edit_id, format: 'srt' }));
    const cues = readCues(readFileSync(srt.path, 'utf8'));
    // Every word heard whole (by its true times) captioned once, in order, and nothing that is not heard: "lighthouse"
    // is not captioned twice where the two cuts of its sentence overlap.
    const segs = (await storedEdit<{ video_series_sequential: Seg[] }>(server.client, c.edit_id))
      .video_series_sequential;
    // (The first two clips' sound overlaps: they are joined into one cut, issue 46, so each segment's source is read.)
    const played = heardWords(
      segs,
      segs.map((s) => s.video_id),
      segs.map((s) => (s.video_id === assets.ship ? 'ship' : 'keeper')),
    );
    const said = cues.flatMap((q) => q.text.split(' ').map(key));
    expect(unexplained(said, played), `captioned ${said.join(' ')}`).toEqual([]);
    expect(said.join(' ')).toMatch(/^the lighthouse keeper walked along the shore nobody knew where .*storm and rang/);
    expect(said.filter((w) => w === 'lighthouse')).toHaveLength(1);
    // No cue holds words of two sources: each lies inside the cuts of one asset.
    const shipStart = cuts.find((k) => k.asset === assets.ship)!.from;
    for (const q of cues) {
      const inside = q.end <= shipStart + 1e-3 || q.start >= shipStart - 1e-3;
      expect(inside, `"${q.text}" ${q.start}-${q.end} runs across the cut into the other source at ${shipStart}`).toBe(
        true,
      );
    }
  });

  it('draws every cue of a vertical output in at most two lines, clear of the bottom fifth and the right edge; top when asked', async () => {
    const compose = async (style: Record<string, unknown>) =>
      structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
        await call('compose_edit', {
          project_id: projectId,
          resolution: 'vertical',
          fps: WORD_CUT_FPS,
          clips: [{ asset_id: assets.keeper, words: sentenceRange(KEEPER, 0) }],
          captions: { burn: true, style: { color: '#FFFF00', ...style } },
        }),
      );
    const bottom = await compose({});
    expect(bottom.ready, JSON.stringify(bottom.diagnostics)).toBe(true);
    const preview = structured<Preview>(await call('preview_edit', { edit_id: bottom.edit_id, width: 360 }));
    const { width, height, frames } = captionFrames(preview.path);
    const shown = frames.filter((f) => f.shown);
    expect(shown.length, 'captions are drawn').toBeGreaterThan(10);
    for (const f of shown) {
      expect(f.bands, 'lines of a cue').toBeLessThanOrEqual(2);
      // Clear of the bottom fifth (social apps' caption, name and sound) and of the right edge (their buttons).
      expect(f.bottom / height).toBeLessThan(0.8);
      expect(f.right / width).toBeLessThan(0.87);
      expect(f.left).toBeGreaterThan(0);
    }
    // Every cue's lines, in the SRT of the same edit, are at most two.
    const srt = structured<{ path: string }>(await call('export_edit', { edit_id: bottom.edit_id, format: 'srt' }));
    for (const q of readCues(readFileSync(srt.path, 'utf8'))) expect(q.lines.length).toBeLessThanOrEqual(2);

    const top = await compose({ position: 'top' });
    const high = structured<Preview>(await call('preview_edit', { edit_id: top.edit_id, width: 360 }));
    const atTop = captionFrames(high.path);
    const topShown = atTop.frames.filter((f) => f.shown);
    expect(topShown.length).toBeGreaterThan(10);
    for (const f of topShown) expect(f.bottom / atTop.height).toBeLessThan(0.35);
  });

  it("never writes a transcript's markup into SRT or VTT as markup", async () => {
    const text = 'She saw a ship {\\fs400}in the <b>storm</b> and rang the <script>bell</script>.';
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: assets.ship, text }));
    const c = structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: '320x180',
        fps: WORD_CUT_FPS,
        clips: [{ asset_id: assets.ship, start: 0, end: 4.5 }],
        captions: { burn: false },
      }),
    );
    expect(c.ready, JSON.stringify(c.diagnostics)).toBe(true);
    const srt = readFileSync(
      structured<{ path: string }>(await call('export_edit', { edit_id: c.edit_id, format: 'srt' })).path,
      'utf8',
    );
    const srtText = readCues(srt)
      .map((q) => q.text)
      .join(' ');
    expect(srtText).toMatch(/storm/);
    expect(srtText).not.toMatch(/[<>{}\\]/);
    const vtt = readFileSync(
      structured<{ path: string }>(await call('export_edit', { edit_id: c.edit_id, format: 'vtt' })).path,
      'utf8',
    );
    const vttText = readCues(vtt)
      .map((q) => q.text)
      .join(' ');
    expect(vttText).toMatch(/storm/);
    expect(vttText).not.toMatch(/[<>]/);
    // Put back: the script without markup, for the other tests.
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: assets.ship, text: SHIP.join(' ') }));
  });

  it('captions speech never transcribed in the same call, and says they come from recognition', async () => {
    const preview = await call('preview_edit', {
      project_id: projectId,
      resolution: '320x180',
      fps: WORD_CUT_FPS,
      clips: [{ asset_id: assets.awb, start: 0, end: 6 }],
      captions: { burn: true, style: { color: '#FFFF00', size: 10 } },
    });
    const p = structured<Preview>(preview);
    const { frames } = captionFrames(p.path);
    expect(frames.filter((f) => f.shown).length, 'captions are burned in').toBeGreaterThan(10);
    const said = p.warnings.find((w) => w.startsWith('captions: '));
    expect(said, p.warnings.join('\n')).toMatch(/speech recognition, not a script/);
    expect(said).toMatch(/transcribe_asset \{project_id: "[^"]+", asset_id: "[^"]+", text: the right words, replace/);
    expect(p.warnings.join('\n')).not.toMatch(/has no transcript/);
  });
});
