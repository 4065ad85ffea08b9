// A clip cut by words leaves the server as it was checked (issue 32, item 1): its sound at full level holds its first
// and last words, the picture beyond the sound (whole frames) is muted by the cut's own audio_levels, and those levels
// reach the service's create-edit unchanged and survive export to FCPXML and OTIO and import back; an EDL, which has
// no volume, says it dropped them. Through the built server over stdio, against the test service (signed links over
// HTTP), with flite speech whose true word times are known.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { WORD_CUT_FPS, heardSpan, makeWordCutMedia, type PlacedWord } from '../helpers/word-cut-media.js';

const SENTENCES = ['The lighthouse keeper walked along the shore.', 'She saw a ship in the storm and rang the bell.'];
const TOLERANCE = 0.005;
type Level = { audio_level: number; start_time: string; end_time: string };
type Seg = { video_id: string; video_start_time: string; video_end_time: string; audio_levels: Level[] };
type Edit = { video_series_sequential: Seg[] };
type Result = { isError?: boolean; structuredContent?: unknown };

const root = mkdtempSync(join(tmpdir(), 'cutroom-word-delivery-'));
let service: FakeService;
let srv: Spawned;
let projectId: string;
let assetId: string;
let words: PlacedWord[];

const call = async (name: string, args: Record<string, unknown>) =>
  (await srv.client.callTool({ name, arguments: args }, { timeout: 240_000 })) as Result;
const structured = <T>(r: Result): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
const sec = (tc: string) => tc.split(':').reduce((s, p) => s * 60 + Number(p), 0);
/** A segment's level at every millisecond of its span (outside every window the level is 1, as DESIGN.md says). */
const levels = (s: Seg) => {
  const w = s.audio_levels.map((l) => ({
    level: l.audio_level,
    from: Math.round(sec(l.start_time) * 1000),
    to: Math.round(sec(l.end_time) * 1000),
  }));
  const out: number[] = [];
  for (let ms = Math.round(sec(s.video_start_time) * 1000); ms < Math.round(sec(s.video_end_time) * 1000); ms++)
    out.push(Number((w.find((x) => ms >= x.from && ms < x.to)?.level ?? 1).toFixed(3)));
  return out;
};

beforeAll(async () => {
  words = makeWordCutMedia(root, 'delivery', 'slt', SENTENCES, [0.9]).words;
  service = new FakeService();
  await service.start();
  const project = service.addProject({ name: 'delivery' });
  const keyname = `delivery-${project.id.slice(0, 8)}`;
  service.media.set(keyname, join(root, 'delivery.mp4'));
  projectId = project.id;
  assetId = service.addAsset(project.id, { keyname, asset_type: 'video', ext: 'mp4' }).id;
  srv = await spawnServer({
    VJ_API_KEY: service.apiKey,
    VJ_API_URL: service.url,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_RENDER_WAIT_MS: '8000',
    CUTROOM_LOG_LEVEL: 'error',
  });
  structured(await call('transcribe_asset', { project_id: projectId, asset_id: assetId, text: SENTENCES.join(' ') }));
}, 300_000);
afterAll(async () => {
  await srv?.close();
  await service?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('a clip cut by words on the service backend', () => {
  it('holds its words, mutes the picture beyond its sound, and sends those levels to the service and into FCPXML and OTIO', async () => {
    // The second sentence, after a 0.9 s pause: its sound starts in the pause, its picture on the frame before.
    const ids = words.flatMap((w, j) => (w.sentence === 1 ? [j] : []));
    const [first, last] = [ids[0]!, ids.at(-1)!];
    const composed = structured<{ ready: boolean; edit_id: string; notes: string[] }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: WORD_CUT_FPS,
        clips: [{ asset_id: assetId, words: [first, last] }],
      }),
    );
    expect(composed.ready).toBe(true);
    const edit = await storedEdit<Edit>(srv.client, composed.edit_id);
    const seg = edit.video_series_sequential[0]!;
    const { full, heard, inSec, outSec } = heardSpan(seg);
    expect(full.from, composed.notes.join('\n')).toBeLessThanOrEqual(words[first]!.start + TOLERANCE);
    expect(full.to).toBeGreaterThanOrEqual(words[last]!.end - TOLERANCE);
    // What lies beyond the sound inside the cut's whole frames is silent: the levels carry a 0 window at each side
    // that has one, and nothing is heard there.
    expect(seg.audio_levels.length).toBeGreaterThan(0);
    expect(seg.audio_levels.some((l) => l.audio_level === 0)).toBe(true);
    expect(heard.from).toBeGreaterThanOrEqual(inSec);
    expect(heard.to).toBeLessThanOrEqual(outSec);

    // render_edit sends exactly this cut, levels and all, in one create-edit.
    service.reset();
    structured(await call('render_edit', { project_id: projectId, edit_id: composed.edit_id }));
    const sent = service.requests.filter((r: { path: string }) => r.path.endsWith('/create-edit'));
    expect(sent).toHaveLength(1);
    const sentSeg = (sent[0]!.body as Edit).video_series_sequential[0]!;
    expect([sentSeg.video_id, sentSeg.video_start_time, sentSeg.video_end_time]).toEqual([
      seg.video_id,
      seg.video_start_time,
      seg.video_end_time,
    ]);
    expect(sentSeg.audio_levels).toEqual(seg.audio_levels);

    // Exported and read back: FCPXML (adjust-volume keyframes) and OTIO (cutroom's metadata) play the same level
    // at every millisecond (FCPXML leaves out a window at full level, which is the same).
    for (const format of ['fcpxml', 'otio'] as const) {
      const out = structured<{ path: string }>(
        await call('export_edit', { project_id: projectId, edit_id: composed.edit_id, format }),
      );
      const back = structured<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
        await call('import_edit', { project_id: projectId, content: readFileSync(out.path, 'utf8'), format }),
      );
      expect(back.ready, `${format}: ${JSON.stringify(back.diagnostics)}`).toBe(true);
      const again = (await storedEdit<Edit>(srv.client, back.edit_id)).video_series_sequential[0]!;
      expect([again.video_id, again.video_start_time, again.video_end_time], format).toEqual([
        seg.video_id,
        seg.video_start_time,
        seg.video_end_time,
      ]);
      expect(levels(again), format).toEqual(levels(seg));
    }
    // An EDL has no volume: it says so rather than dropping the muting silently.
    const edl = structured<{ warnings?: string[] }>(
      await call('export_edit', { project_id: projectId, edit_id: composed.edit_id, format: 'edl' }),
    );
    expect((edl.warnings ?? []).join('\n')).toMatch(/cut 1: its audio levels are not carried/);
  }, 300_000);
});
