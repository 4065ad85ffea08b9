// A source whose header lies about its length (a 2 s Matroska file whose header says 10 hours): cutroom measures
// where its media really ends and says so, a cut in the missing part is refused, and a render is "uploaded" only
// when its file has what was asked (streams, and a length within a frame). An honest source whose keyframes are far
// apart (50 s GOPs) keeps the length its header gives (issue 31, item 6).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RenderPlan } from '../../src/edit/plan.js';
import { verifyOutput } from '../../src/media/render.js';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-lying-'));
const allowed = join(root, 'allowed');
let srv: Spawned;

const ffmpeg = (args: string[]) => {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-v', 'error', '-y', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
};

/** 2 s of picture and sound in Matroska, its Segment Info Duration (EBML 0x4489) rewritten to 10 hours. */
function lyingMkv(path: string): void {
  const honest = `${path}.honest.mkv`;
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=s=320x240:r=25:d=2',
    '-f',
    'lavfi',
    '-i',
    'sine=d=2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-shortest',
    honest,
  ]);
  const b = readFileSync(honest);
  const at = b.indexOf(Buffer.from([0x44, 0x89]));
  const size = b[at + 2]! & 0x7f;
  if (size === 8) b.writeDoubleBE(36_000_000, at + 3);
  else if (size === 4) b.writeFloatBE(36_000_000, at + 3);
  else throw new Error(`unexpected Duration size ${size}`);
  writeFileSync(path, b);
  // The lie is in place: ffprobe believes the header.
  const said = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path], {
    encoding: 'utf8',
  });
  expect(Number(said.stdout.trim())).toBe(36000);
}

type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
};
const call = async (name: string, args: Record<string, unknown>) =>
  (await srv.client.callTool({ name, arguments: args }, { timeout: 120_000 })) as Result;

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  lyingMkv(join(allowed, 'liar.mkv'));
  // 90 s of picture and sound with keyframes at 0 and 50 s only: a seek near the end lands 40 s back.
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=s=64x36:r=25:d=90',
    '-f',
    'lavfi',
    '-i',
    'sine=d=90',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '1250',
    '-keyint_min',
    '1250',
    '-sc_threshold',
    '0',
    '-c:a',
    'aac',
    '-shortest',
    join(allowed, 'long-gop.mp4'),
  ]);
  srv = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: allowed,
  });
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

describe('a source whose header claims 10 hours and holds 2 s', () => {
  it('is imported at its real length, saying what the header claimed; cuts past its real end are refused; one inside renders', async () => {
    const project = (
      (await call('create_project', { name: 'liar', description: '' })).structuredContent!.project as { id: string }
    ).id;
    const imported = await call('import_media', { project_id: project, path: join(allowed, 'liar.mkv') });
    expect(imported.isError, textOf(imported)).toBeFalsy();
    expect(imported.structuredContent!.duration_seconds).toBeGreaterThan(1.9);
    expect(imported.structuredContent!.duration_seconds).toBeLessThan(2.2);
    expect(imported.structuredContent!.header_duration_seconds).toBe(36000);
    expect(textOf(imported)).toMatch(/its header claims 36000 s, but its media ends at 2\.\d+ s/);
    const asset = (imported.structuredContent!.asset as { id: string }).id;

    // A cut in the part that is not there: refused before anything is rendered, on every edit tool.
    for (const tool of ['compose_edit', 'preview_edit', 'render_edit']) {
      const r = await call(tool, { project_id: project, clips: [{ asset_id: asset, start: 100, end: 102 }] });
      const text = textOf(r);
      expect(text, tool).toMatch(/beyond|past|ends at|longer than/i);
      expect(text, tool).not.toMatch(/unexpected failure|ENOENT/);
      if (tool === 'compose_edit') expect(r.structuredContent!.ready).toBe(false);
      else expect(r.isError, tool).toBe(true);
    }
    // A cut inside its real length: checked with a warning that names the lie, previewed and rendered.
    const inside = {
      project_id: project,
      clips: [{ asset_id: asset, start: 0.2, end: 1.8 }],
      resolution: '320x240',
      fps: 25,
    };
    const composed = await call('compose_edit', inside);
    expect(composed.structuredContent!.ready).toBe(true);
    expect(JSON.stringify(composed.structuredContent!.diagnostics)).toMatch(
      /its header says it lasts 36000 s, but its media ends at 2\.\d+ s/,
    );
    const preview = await call('preview_edit', inside);
    expect(preview.isError, textOf(preview)).toBeFalsy();
    expect(preview.structuredContent!.measured_seconds).toBeCloseTo(1.6, 1);
    const render = await call('render_edit', { ...inside, wait: true });
    expect(render.isError, textOf(render)).toBeFalsy();
    expect(
      render.structuredContent!.status ?? (render.structuredContent!.render as { status?: string } | undefined)?.status,
    ).toMatch(/uploaded|done/);
  }, 120_000);
});

describe('an honest source whose keyframes are 50 s apart', () => {
  it('is imported at the length its header gives, and a cut near its end is checked ready and previewed', async () => {
    const keyframes = spawnSync(
      'ffprobe',
      [
        '-v',
        'error',
        '-select_streams',
        'v',
        '-skip_frame',
        'nokey',
        '-show_entries',
        'frame=pts_time',
        '-of',
        'csv=p=0',
        join(allowed, 'long-gop.mp4'),
      ],
      { encoding: 'utf8' },
    );
    expect(keyframes.stdout.split(/\s+/).filter(Boolean).map(parseFloat)).toEqual([0, 50]);
    const project = (
      (await call('create_project', { name: 'long gop', description: '' })).structuredContent!.project as { id: string }
    ).id;
    const imported = await call('import_media', { project_id: project, path: join(allowed, 'long-gop.mp4') });
    expect(imported.isError, textOf(imported)).toBeFalsy();
    expect(imported.structuredContent!.duration_seconds).toBeCloseTo(90, 1);
    expect(imported.structuredContent!.header_duration_seconds).toBeUndefined();
    expect(textOf(imported)).not.toMatch(/header claims/);
    const asset = (imported.structuredContent!.asset as { id: string }).id;
    const nearEnd = {
      project_id: project,
      clips: [{ asset_id: asset, start: 86, end: 89 }],
      resolution: '320x240',
      fps: 25,
    };
    const composed = await call('compose_edit', nearEnd);
    expect(composed.structuredContent!.ready, JSON.stringify(composed.structuredContent!.diagnostics)).toBe(true);
    expect(JSON.stringify(composed.structuredContent!.diagnostics)).not.toMatch(/header says/);
    const preview = await call('preview_edit', nearEnd);
    expect(preview.isError, textOf(preview)).toBeFalsy();
    expect(preview.structuredContent!.measured_seconds).toBeCloseTo(3, 1);
  }, 120_000);
});

describe('a render is uploaded only when its file has what was asked', () => {
  const plan = { totalSec: 2, fpsNum: 25, fpsDen: 1 } as RenderPlan;
  const made = (name: string, args: string[]) => {
    const file = join(root, name);
    ffmpeg([...args, file]);
    return file;
  };

  it('finds a file with sound and no picture, one with no sound, and a picture or sound cut short; passes a whole one', async () => {
    const whole = made('whole.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=s=64x36:r=25:d=2',
      '-f',
      'lavfi',
      '-i',
      'sine=d=2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-shortest',
    ]);
    const soundOnly = made('sound-only.mp4', ['-f', 'lavfi', '-i', 'sine=d=2', '-c:a', 'aac']);
    const silent = made('silent.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=s=64x36:r=25:d=2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
    ]);
    const shortPicture = made('short-picture.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=s=64x36:r=25:d=1',
      '-f',
      'lavfi',
      '-i',
      'sine=d=2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
    ]);
    const shortSound = made('short-sound.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=s=64x36:r=25:d=2',
      '-f',
      'lavfi',
      '-i',
      'sine=d=1',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
    ]);
    expect(await verifyOutput('ffprobe', whole, plan)).toBeUndefined();
    expect(await verifyOutput('ffprobe', soundOnly, plan)).toBe('it has no picture');
    expect(await verifyOutput('ffprobe', silent, plan)).toBe('it has no sound');
    expect(await verifyOutput('ffprobe', shortPicture, plan)).toMatch(
      /its picture lasts 1\.000 s, not the planned 2\.000 s/,
    );
    expect(await verifyOutput('ffprobe', shortSound, plan)).toMatch(
      /its sound lasts 1\.0\d+ s, not the planned 2\.000 s/,
    );
  });
});
