// export_edit and import_edit through the built server: each format written, read as a resource, read back into
// the same edit, an editor's change taken back, and the ways they refuse. On the local backend and on a service
// whose media is fetched beside the export.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { FakeService } from '../fixtures/service.mjs';
import { checkResultsAgainstSchemas, spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';

type Time = string | number;
type Level = { audio_level: number; start_time: Time; end_time: Time };
type Edit = {
  video_output_fps: number;
  video_output_resolution: string;
  video_series_sequential: { video_id: string; video_start_time: Time; video_end_time: Time; audio_levels: Level[] }[];
  audio_overlay: { audio_id: string; audio_start_time: Time; audio_end_time: Time; audio_levels: Level[] }[];
};
type Exported = {
  export_id: string;
  path: string;
  media_dir?: string;
  media: { asset_id: string; reference: string }[];
  warnings: string[];
};
type Imported = {
  ready: boolean;
  edit_id?: string;
  edit?: Edit;
  diagnostics: { severity: string; path: string; message: string }[];
  mapped: string[];
};
type Result = {
  isError?: boolean;
  structuredContent?: unknown;
  content: { type: string; uri?: string; text?: string }[];
};

const call = async (s: Spawned, name: string, args: Record<string, unknown>) =>
  (await s.client.callTool({ name, arguments: args }, { timeout: 120_000 })) as Result;
const structured = <T>(r: Result): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
/** An edit's time ("HH:MM:SS.mmm", or seconds) in seconds. */
function sec(t: string | number): number {
  if (typeof t === 'number') return t;
  const m = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(t);
  if (!m) throw new Error(`not a time: ${t}`);
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}
/** A check's result with the edit its edit_id names (the result carries the id; the resource, the edit). */
async function withEdit<T>(s: Spawned, r: Result): Promise<T> {
  const x = structured<T & { edit_id?: string }>(r);
  return (x.edit_id ? { ...x, edit: await storedEdit<Edit>(s.client, x.edit_id) } : x) as T;
}
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

/**
 * An edit as the frames it plays: each cut's source span in the source's 25 fps frames; overlays in ms, or (for
 * FCPXML and EDL, which put them on the edit's frames) in frames of the edit.
 */
function shape(e: Edit, { withLevels = true, overlaysOnFrames = false } = {}) {
  const at = (t: Time) => (overlaysOnFrames ? Math.round(sec(t) * e.video_output_fps) : Math.round(sec(t) * 1000));
  return {
    fps: e.video_output_fps,
    resolution: e.video_output_resolution,
    cuts: e.video_series_sequential.map((c) => ({
      id: c.video_id,
      // cutroom starts a cut on the source frame at or after its in point; the out point is on the edit's frames.
      inFrame: Math.ceil(sec(c.video_start_time) * 25 - 1e-6),
      frames: Math.round((sec(c.video_end_time) - sec(c.video_start_time)) * e.video_output_fps),
      // Level windows as frames of the source from the cut's first frame.
      ...(withLevels
        ? {
            levels: c.audio_levels.map((l) => [
              l.audio_level,
              Math.ceil(sec(l.start_time) * 25 - 1e-6),
              Math.round((sec(l.end_time) - sec(l.start_time)) * 25),
            ]),
          }
        : {}),
    })),
    overlays: e.audio_overlay.map((o) => ({
      id: o.audio_id,
      at: at(o.audio_start_time),
      until: at(o.audio_end_time),
      ...(withLevels ? { levels: o.audio_levels.map((l) => [l.audio_level, at(l.start_time), at(l.end_time)]) } : {}),
    })),
  };
}

describe('on the local backend', () => {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-interchange-'));
  const allowed = join(root, 'allowed');
  const cacheDir = join(root, 'cache');
  const exportsDir = join(cacheDir, 'exports');
  let srv: Spawned;
  let projectId: string;
  const ids: Record<string, string> = {};
  const imported: Record<string, string> = {};
  let args: Record<string, unknown>;
  let composed: Edit;

  beforeAll(async () => {
    mkdirSync(allowed, { recursive: true });
    const media = makeAll() as Record<string, string>;
    srv = await spawnServer({
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_ALLOWED_DIRS: allowed,
      CUTROOM_CACHE_DIR: cacheDir,
    });
    projectId = structured<{ project: { id: string } }>(
      await call(srv, 'create_project', { name: 'handoff', description: '' }),
    ).project.id;
    for (const name of ['red', 'blue', 'voice'] as const) {
      // A name with a space and a '#', which each format must carry as it is.
      const file = join(allowed, `${name} take#1${media[name]!.slice(media[name]!.lastIndexOf('.'))}`);
      copyFileSync(media[name]!, file);
      imported[name] = file;
      ids[name] = structured<{ asset: { id: string } }>(
        await call(srv, 'import_media', { project_id: projectId, path: file }),
      ).asset.id;
    }
    args = {
      project_id: projectId,
      resolution: '640x360',
      fps: 29.97,
      clips: [
        { asset_id: ids.red, start: 1.03, end: 2.5, volume: 0.5 },
        { asset_id: ids.blue, start: 0.5, end: 2, volume: 0 },
        { asset_id: ids.red, start: 4, end: 5.2 },
      ],
      overlays: [{ asset_id: ids.voice, at: 1.2, until: 3.4, volume: 0.8 }],
      filename: 'handoff.mp4',
    };
    const c = await withEdit<{ ready: boolean; edit: Edit }>(srv, await call(srv, 'compose_edit', args));
    expect(c.ready).toBe(true);
    composed = c.edit;
  }, 120_000);
  afterAll(async () => {
    if (srv) await checkResultsAgainstSchemas(srv.client);
    await srv?.close();
  });

  it("writes a source's timecode as editors' media have it, and reads it back off (issue 21, items 1 and 2)", async () => {
    const file = join(allowed, 'camera tc.mov');
    const r = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=s=320x180:r=25:d=6',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-timecode',
      '01:00:10:00',
      file,
    ]);
    expect(r.status, r.stderr.toString()).toBe(0);
    const camera = structured<{ asset: { id: string } }>(
      await call(srv, 'import_media', { project_id: projectId, path: file }),
    ).asset.id;
    const edit = {
      project_id: projectId,
      resolution: '320x180',
      fps: 25,
      clips: [{ asset_id: camera, start: 2, end: 3 }],
      filename: 'tc.mp4',
    };
    const files: Record<string, string> = {};
    for (const format of ['otio', 'fcpxml', 'edl'] as const)
      files[format] = readFileSync(
        structured<{ path: string }>(await call(srv, 'export_edit', { ...edit, format })).path,
        'utf8',
      );
    // 01:00:10:00 at 25 fps is frame 90250 (3610 s); the cut's in point 2 s later.
    expect(files.fcpxml).toMatch(/<asset [^>]*start="3610s"/);
    expect(files.fcpxml).toMatch(/<asset-clip [^>]*start="3612s"/);
    const otio = JSON.parse(files.otio) as {
      tracks: {
        children: {
          children: {
            source_range: { start_time: { value: number } };
            media_references: { DEFAULT_MEDIA: { available_range: { start_time: { value: number } } } };
          }[];
        }[];
      };
    };
    const clip = otio.tracks.children[0]!.children[0]!;
    expect(clip.media_references.DEFAULT_MEDIA.available_range.start_time.value).toBe(90250);
    expect(clip.source_range.start_time.value).toBe(90300);
    expect(files.edl).toMatch(/ C {8}01:00:12:00 01:00:13:00 01:00:00:00 01:00:01:00/);
    for (const format of ['otio', 'fcpxml', 'edl'] as const) {
      const back = await withEdit<Imported>(
        srv,
        await call(srv, 'import_edit', {
          project_id: projectId,
          content: files[format],
          format,
          ...(format === 'edl' ? { resolution: '320x180' } : {}),
        }),
      );
      expect(back.ready, `${format}: ${JSON.stringify(back.diagnostics)}`).toBe(true);
      expect(
        back.edit!.video_series_sequential.map((c) => [c.video_id, c.video_start_time, c.video_end_time]),
        format,
      ).toEqual([[camera, '00:00:02.000', '00:00:03.000']]);
    }
  }, 60_000);

  it("edl: reads at the rate the file says, else at its sources' rate, and says when it assumed one (issue 21, item 4)", async () => {
    const out = structured<{ path: string }>(await call(srv, 'export_edit', { ...args, fps: 25, format: 'edl' }));
    const text = readFileSync(out.path, 'utf8');
    expect(text).toContain('* CUTROOM FPS: 25/1');
    // Said in the file: read at 25 (it was read at 30 before, every out point moved), no warning.
    const back = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', { project_id: projectId, content: text, format: 'edl', resolution: '640x360' }),
    );
    expect(back.edit!.video_output_fps).toBe(25);
    // Each cut back on the source frame it started on (the EDL counts the edit's frames: lengths come back to the
    // frame).
    const at25 = shape(
      (await withEdit<{ edit: Edit }>(srv, await call(srv, 'compose_edit', { ...args, fps: 25 }))).edit,
      { withLevels: false, overlaysOnFrames: true },
    );
    const read = shape(back.edit!, { withLevels: false, overlaysOnFrames: true });
    expect(read.cuts.map((c) => [c.id, c.inFrame])).toEqual(at25.cuts.map((c) => [c.id, c.inFrame]));
    read.cuts.forEach((c, i) => expect(Math.abs(c.frames - at25.cuts[i]!.frames)).toBeLessThanOrEqual(1));
    expect(back.diagnostics.map((d) => d.message).join(' ')).not.toMatch(/does not say its frame rate/);
    // Not said (a foreign EDL): its sources are at 25 fps, so 25, with a warning.
    const foreign = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', {
        project_id: projectId,
        content: text.replace(/^\* CUTROOM FPS: .*\n/m, ''),
        format: 'edl',
        resolution: '640x360',
      }),
    );
    expect(foreign.edit!.video_output_fps).toBe(25);
    expect(foreign.diagnostics.map((d) => d.message)).toContainEqual(
      expect.stringMatching(/does not say its frame rate; it was read at 25 fps, its sources' rate/),
    );
    // Given: as given.
    const given = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', {
        project_id: projectId,
        content: text,
        format: 'edl',
        fps: 50,
        resolution: '640x360',
      }),
    );
    expect(given.edit!.video_output_fps).toBe(50);
  }, 60_000);

  for (const format of ['otio', 'fcpxml', 'edl'] as const) {
    it(`${format}: writes the file, serves it as a resource, and reads it back into the same edit`, async () => {
      const r = await call(srv, 'export_edit', { ...args, format });
      const out = structured<Exported>(r);
      expect(out.path.startsWith(join(exportsDir, out.export_id))).toBe(true);
      const text = readFileSync(out.path, 'utf8');
      // Local media is referenced by the file the person imported, where it is (not the data dir's copy).
      expect(out.media.map((m) => m.reference).sort()).toEqual(Object.values(imported).sort());
      // Clips are named after the file the media was imported from, for an editor to recognise.
      expect(text).toContain('red take#1.mp4');
      const link = r.content.find((c) => c.type === 'resource_link');
      expect(link?.uri).toBe(`cutroom://exports/${out.export_id}/handoff.${format}`);
      const read = await srv.client.readResource({ uri: link!.uri! });
      expect((read.contents[0] as { text: string }).text).toBe(text);

      const back = await withEdit<Imported>(
        srv,
        await call(srv, 'import_edit', {
          project_id: projectId,
          path: out.path,
          ...(format === 'edl' ? { fps: 29.97, resolution: '640x360' } : {}),
        }),
      );
      expect(back.ready, JSON.stringify(back.diagnostics)).toBe(true);
      expect(back.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      // What no timeline format carries is said: the cuts' levelling (previews and renders even them out).
      expect(out.warnings.join(' ')).toMatch(/levelling .* is not done by an editor's application/);
      if (format === 'edl') {
        // An EDL carries no levels: it says so, and everything else comes back.
        expect(out.warnings.join(' ')).toMatch(/level/i);
        expect(shape(back.edit!, { withLevels: false, overlaysOnFrames: true })).toEqual(
          shape(composed, { withLevels: false, overlaysOnFrames: true }),
        );
        // The presets compose_edit takes mean the same to import_edit.
        const preset = await withEdit<Imported>(
          srv,
          await call(srv, 'import_edit', { project_id: projectId, path: out.path, fps: 29.97, resolution: '720p' }),
        );
        expect(preset.edit?.video_output_resolution).toBe('1280x720');
      } else {
        const overlaysOnFrames = format === 'fcpxml';
        expect(shape(back.edit!, { overlaysOnFrames })).toEqual(shape(composed, { overlaysOnFrames }));
      }
      expect(back.mapped).toHaveLength(4);
    });
  }

  it("points at cutroom's copy of a source whose imported file was moved or changed since", async () => {
    const moved = `${imported.red!}.away`;
    renameSync(imported.red!, moved);
    try {
      const out = structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'otio' }));
      const red = out.media.find((m) => m.asset_id === ids.red)!;
      expect(red.reference).not.toBe(imported.red);
      expect(existsSync(red.reference)).toBe(true);
      expect(out.media.find((m) => m.asset_id === ids.blue)!.reference).toBe(imported.blue);
    } finally {
      renameSync(moved, imported.red!);
    }
  });

  it('takes back what an editor changed in an OTIO file, and says what it could not take', async () => {
    const out = structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'otio' }));
    const doc = JSON.parse(readFileSync(out.path, 'utf8'));
    const [video, sound] = doc.tracks.children as {
      kind: string;
      children: { OTIO_SCHEMA: string; source_range?: { duration: { value: number } } }[];
    }[];
    expect(video!.kind).toBe('Video');
    // The editor trims 15 frames off the first cut, picture and sound, and puts a dissolve between cuts 2 and 3.
    for (const track of [video!, sound!]) track.children[0]!.source_range!.duration.value -= 15;
    video!.children.splice(2, 0, {
      OTIO_SCHEMA: 'Transition.1',
      name: 'Cross Dissolve',
      transition_type: 'SMPTE_Dissolve',
      in_offset: { OTIO_SCHEMA: 'RationalTime.1', rate: 29.97, value: 10 },
      out_offset: { OTIO_SCHEMA: 'RationalTime.1', rate: 29.97, value: 10 },
    } as never);
    const edited = join(allowed, 'editor.otio');
    writeFileSync(edited, JSON.stringify(doc));

    const back = await withEdit<Imported>(srv, await call(srv, 'import_edit', { project_id: projectId, path: edited }));
    const cuts = back.edit?.video_series_sequential ?? [];
    expect(back.ready, JSON.stringify(back.diagnostics)).toBe(true);
    expect(cuts).toHaveLength(3);
    const before = composed.video_series_sequential[0]!;
    // 15 frames in the clip's rate, which is the edit's (29.97) since the source's (25) is another: whole frames there.
    const length = (c: Edit['video_series_sequential'][number]) => sec(c.video_end_time) - sec(c.video_start_time);
    expect(Math.round((length(before) - length(cuts[0]!)) * 29.97)).toBe(15);
    expect(sec(cuts[0]!.video_start_time)).toBe(1.04);
    // Its level still covers all of it; the other cuts are as they were.
    expect(cuts[0]!.audio_levels).toEqual([
      { audio_level: 0.5, start_time: cuts[0]!.video_start_time, end_time: cuts[0]!.video_end_time },
    ]);
    expect(shape({ ...back.edit!, video_series_sequential: cuts.slice(1) })).toEqual(
      shape({ ...composed, video_series_sequential: composed.video_series_sequential.slice(1) }),
    );
    const note = back.diagnostics.find((d) => /dissolve|transition/i.test(d.message));
    expect(note, JSON.stringify(back.diagnostics)).toBeDefined();
    expect(note!.severity).toBe('warning');
  });

  it('says an overlay with no role will not duck under the speech, and how to give it one', async () => {
    const exported = structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'fcpxml' }));
    const back = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', { project_id: projectId, path: exported.path }),
    );
    const said = back.diagnostics.find((d) => d.path === '/audio_overlay/0');
    expect(said, JSON.stringify(back.diagnostics)).toMatchObject({
      severity: 'warning',
      message: expect.stringMatching(/has no role: it plays as dialogue and will not duck/),
    });
    // With a role in the file (music), nothing is said.
    const music = structured<Exported>(
      await call(srv, 'export_edit', {
        ...args,
        overlays: [{ asset_id: ids.voice, at: 1.2, until: 3.4, volume: 0.8, role: 'music' }],
        format: 'fcpxml',
      }),
    );
    const again = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', { project_id: projectId, path: music.path }),
    );
    expect(again.diagnostics.filter((d) => /has no role/.test(d.message))).toEqual([]);
  });

  it('otio: a clip with no source_range whose media has no available_range plays the whole asset it maps to (issue 31, item 10)', async () => {
    const rt = (value: number) => ({ OTIO_SCHEMA: 'RationalTime.1', rate: 25, value });
    const clip = (name: string, sourceRange: unknown) => ({
      OTIO_SCHEMA: 'Clip.2',
      name,
      source_range: sourceRange,
      media_references: {
        DEFAULT_MEDIA: {
          OTIO_SCHEMA: 'ExternalReference.1',
          name,
          target_url: `file:///elsewhere/${name}.mov`,
          available_range: null,
        },
      },
      active_media_reference_key: 'DEFAULT_MEDIA',
    });
    const doc = {
      OTIO_SCHEMA: 'Timeline.1',
      name: 'whole',
      global_start_time: rt(0),
      tracks: {
        OTIO_SCHEMA: 'Stack.1',
        children: [
          {
            OTIO_SCHEMA: 'Track.1',
            kind: 'Video',
            children: [
              clip('whole red', null),
              clip('part of blue', { OTIO_SCHEMA: 'TimeRange.1', start_time: rt(25), duration: rt(50) }),
            ],
          },
          // The picture's own sound, as editors write it: the whole of red again.
          { OTIO_SCHEMA: 'Track.1', kind: 'Audio', children: [clip('whole red', null)] },
        ],
      },
    };
    const back = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', {
        project_id: projectId,
        content: JSON.stringify(doc),
        format: 'otio',
        resolution: '320x180',
        media_map: { 'whole red': ids.red, 'part of blue': ids.blue },
      }),
    );
    expect(back.ready, JSON.stringify(back.diagnostics)).toBe(true);
    // red measures 8 s: all of it, then blue from 1 s to 3 s.
    expect(back.edit!.video_series_sequential.map((c) => [c.video_id, c.video_start_time, c.video_end_time])).toEqual([
      [ids.red, '00:00:00.000', '00:00:08.000'],
      [ids.blue, '00:00:01.000', '00:00:03.000'],
    ]);
    expect(back.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringMatching(
          /no source_range and its media no available_range: it plays the whole of asset .* \(8\.\d{3} s, as measured\)/,
        ),
      }),
    );
    expect(back.edit!.audio_overlay).toEqual([]);
    expect(back.diagnostics.map((d) => d.message).join(' ')).not.toMatch(/audio clip/);
  });

  it("edl: counts an event's timecodes as its FCM line says, and refuses a drop-frame label that does not exist (issue 31, item 9)", async () => {
    const list = (fcm: string, event: string) =>
      ['TITLE: tc', `FCM: ${fcm}`, '', `001  AX       V     C        ${event}`, '* FROM CLIP NAME: red', ''].join('\n');
    const importEdl = async (text: string) =>
      withEdit<Imported>(
        srv,
        await call(srv, 'import_edit', {
          project_id: projectId,
          content: text,
          format: 'edl',
          fps: 29.97,
          resolution: '320x180',
          media_map: { red: ids.red },
        }),
      );
    // A 1 s record written 01:00:00;00 to 01:00:01:00 in a non-drop-frame list: 30 frames (it was a 4.6 s cut).
    const ndf = await importEdl(list('NON-DROP FRAME', '00:00:02:00 00:00:03:00 01:00:00;00 01:00:01:00'));
    expect(ndf.ready, JSON.stringify(ndf.diagnostics)).toBe(true);
    const [cut] = ndf.edit!.video_series_sequential;
    expect(sec(cut!.video_start_time)).toBe(2);
    expect(sec(cut!.video_end_time) - sec(cut!.video_start_time)).toBeCloseTo(30 / 29.97, 2);
    // 00:01:00;00 is no label at 29.97 drop-frame: refused, saying so, not read as 00:00:59;28.
    const df = await call(srv, 'import_edit', {
      project_id: projectId,
      content: list('DROP FRAME', '00:00:02;00 00:00:03;00 00:01:00;00 00:01:01;00'),
      format: 'edl',
      fps: 29.97,
      resolution: '320x180',
      media_map: { red: ids.red },
    });
    expect(df.isError).toBe(true);
    expect(textOf(df)).toMatch(/"00:01:00;00" is no drop-frame label/);
  });

  it('sweeps an export a killed server left half-built, and leaves one another live server is building', async () => {
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    const dead = join(exportsDir, `.20000101000000-aaaaaaaa.${deadPid}.building`);
    const live = join(exportsDir, `.20000101000000-bbbbbbbb.${process.pid}.building`);
    for (const d of [dead, live]) {
      mkdirSync(join(d, 'media'), { recursive: true });
      writeFileSync(join(d, 'media', 'half.mp4.part'), 'partial');
    }
    structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'edl' }));
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(join(live, 'media', 'half.mp4.part'))).toBe(true);
  });

  it('serves no link or FIFO planted in the cache (several servers may share it): not what it points at, and no hang', async () => {
    const secret = join(root, 'secret.txt');
    writeFileSync(secret, 'SECRET-CONTENTS');
    const out = structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'edl' }));
    const planted = join(exportsDir, out.export_id, 'planted.edl');
    symlinkSync(secret, planted);
    await expect(srv.client.readResource({ uri: `cutroom://exports/${out.export_id}/planted.edl` })).rejects.toThrow(
      /no such export/,
    );
    // The export's own file, swapped for a link, is not served either.
    const own = join(exportsDir, out.export_id, basename(out.path));
    rmSync(own);
    symlinkSync(secret, own);
    await expect(
      srv.client.readResource({ uri: `cutroom://exports/${out.export_id}/${basename(out.path)}` }),
    ).rejects.toThrow(/no such export/);

    const p = structured<{ preview_id: string }>(await call(srv, 'preview_edit', { ...args, width: 160 }));
    const sheet = join(cacheDir, 'previews', p.preview_id, 'sheet.jpg');
    rmSync(sheet);
    symlinkSync(secret, sheet);
    await expect(srv.client.readResource({ uri: `cutroom://previews/${p.preview_id}/sheet.jpg` })).rejects.toThrow(
      /gone|not found/i,
    );
    rmSync(sheet);
    expect(spawnSync('mkfifo', [sheet]).status).toBe(0);
    // A FIFO would block a plain read until someone writes to it; the server must answer, and go on answering.
    await expect(
      srv.client.readResource({ uri: `cutroom://previews/${p.preview_id}/sheet.jpg` }, { timeout: 5000 }),
    ).rejects.toThrow(/gone|not found/i);
    expect((await call(srv, 'list_projects', {})).isError).toBeFalsy();
  });

  it('refuses an edit with errors and writes nothing', async () => {
    const before = existsSync(exportsDir) ? readdirSync(exportsDir) : [];
    const r = await call(srv, 'export_edit', {
      ...args,
      clips: [{ asset_id: ids.red, start: 0, end: 99 }],
      format: 'otio',
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/nothing was exported|not exported/i);
    expect(existsSync(exportsDir) ? readdirSync(exportsDir) : []).toEqual(before);
  });

  it('refuses an EDL at a rate its timecode cannot count, before writing anything', async () => {
    const before = existsSync(exportsDir) ? readdirSync(exportsDir) : [];
    const r = await call(srv, 'export_edit', { ...args, fps: 23.5, format: 'edl' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/EDL counts timecode at a whole frame rate .* 23\.5 fps: export it as otio or fcpxml/);
    expect(readdirSync(exportsDir)).toEqual(before);
  });

  it('bounds what it reads and lists: a huge timeline is refused, a long list of problems is cut short', async () => {
    const event = (i: number, reel: string) => {
      const tc = (f: number) =>
        `${String(Math.floor(f / 90000)).padStart(2, '0')}:${String(Math.floor(f / 1500) % 60).padStart(2, '0')}:${String(Math.floor(f / 25) % 60).padStart(2, '0')}:${String(f % 25).padStart(2, '0')}`;
      return `${String((i % 999) + 1).padStart(3, '0')}  ${reel.padEnd(8)} V     C        ${tc(0)} ${tc(25)} ${tc(90000 + i * 25)} ${tc(90000 + (i + 1) * 25)}`;
    };
    const edl = (n: number, reel: string) =>
      ['TITLE: long', 'FCM: NON-DROP FRAME', ...Array.from({ length: n }, (_, i) => event(i, reel))].join('\n');
    const huge = await call(srv, 'import_edit', { project_id: projectId, content: edl(5001, 'AX'), fps: 25 });
    expect(huge.isError).toBe(true);
    expect(textOf(huge)).toMatch(/holds 5001 clips; import_edit reads timelines of up to 5000/);

    const unmapped = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', { project_id: projectId, content: edl(150, 'NOSUCH'), fps: 25 }),
    );
    expect(unmapped.ready).toBe(false);
    expect(unmapped.diagnostics.filter((d) => /matches no asset of the project/.test(d.message))).toHaveLength(12);
    expect(unmapped.diagnostics.find((d) => /and 138 more like these/.test(d.message))).toMatchObject({
      severity: 'error',
    });
    // The check's own findings (one per unmapped cut) are capped the same way: a small file, a small answer.
    expect(unmapped.diagnostics.length).toBeLessThanOrEqual(26);
    const many = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', { project_id: projectId, content: edl(2000, `N${'x'.repeat(1500)}`), fps: 25 }),
    );
    expect(many.diagnostics.length).toBeLessThanOrEqual(26);
    // Names from the file are quoted short: the 1500-character reel is never echoed whole.
    expect(JSON.stringify(many)).not.toContain('x'.repeat(200));
    expect(JSON.stringify(many.diagnostics).length).toBeLessThan(100_000);
  });

  it('reads a path only from the exports folder and the allowed folders', async () => {
    const outside = join(root, 'outside.otio');
    const good = structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'otio' }));
    writeFileSync(outside, readFileSync(good.path));
    const r = await call(srv, 'import_edit', { project_id: projectId, path: outside });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/outside|not allowed|CUTROOM_ALLOWED_DIRS/i);
    const viaLink = await call(srv, 'import_edit', {
      project_id: projectId,
      path: join(allowed, '..', 'outside.otio'),
    });
    expect(viaLink.isError).toBe(true);
  });

  it('says what is wrong with a file it cannot read, and with media it cannot map', async () => {
    const garbage = await call(srv, 'import_edit', { project_id: projectId, content: 'hello, editor' });
    expect(garbage.isError).toBe(true);
    expect(textOf(garbage)).toMatch(/format could not be told .* give format/);
    const broken = await call(srv, 'import_edit', {
      project_id: projectId,
      content: '{"OTIO_SCHEMA": "Timeline.1", "tracks": ',
      format: 'otio',
    });
    expect(broken.isError).toBe(true);
    expect(textOf(broken)).toMatch(/OTIO|JSON/);

    const edl = [
      'TITLE: foreign',
      'FCM: NON-DROP FRAME',
      '',
      '001  AX       V     C        00:00:00:00 00:00:02:00 01:00:00:00 01:00:02:00',
      '* FROM CLIP NAME: somebody else.mov',
      '',
    ].join('\n');
    const unmapped = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', { project_id: projectId, content: edl, fps: 25 }),
    );
    expect(unmapped.ready).toBe(false);
    expect(unmapped.edit).toBeUndefined();
    const note = unmapped.diagnostics.find((d) => d.severity === 'error' && /somebody else\.mov/.test(d.message));
    expect(note, JSON.stringify(unmapped.diagnostics)).toMatchObject({ path: '/video_series_sequential/0' });
    expect(note!.message).toMatch(/matches no asset of the project/);
  });
});

describe('on a service, with the media fetched beside the file', () => {
  let service: FakeService;
  let srv: Spawned;
  let projectId: string;
  let ids: Record<MediaName, string>;
  let cacheDir: string;
  let args: Record<string, unknown>;

  beforeAll(async () => {
    service = await new FakeService().start();
    ({ projectId, ids } = mediaProject(service, 'remote handoff'));
    cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-interchange-remote-'));
    srv = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_CACHE_DIR: cacheDir });
    args = {
      project_id: projectId,
      resolution: '640x360',
      fps: 25,
      clips: [
        { asset_id: ids.red, start: 0, end: 2 },
        { asset_id: ids.blue, start: 1, end: 3, volume: 0.5 },
      ],
      overlays: [{ asset_id: ids.voice, at: 0.5, until: 2.5 }],
      filename: 'remote.mp4',
    };
  }, 120_000);
  afterAll(async () => {
    if (srv) await checkResultsAgainstSchemas(srv.client);
    await srv?.close();
    await service?.stop();
  });

  it('fetches each source once, in ranges and without the API key, and points the file at the copies', async () => {
    service.mediaLog = [];
    const out = structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'fcpxml', media: 'download' }));
    expect(out.media_dir).toBe(join(cacheDir, 'exports', out.export_id, 'media'));
    const files = readdirSync(out.media_dir!);
    expect(files).toHaveLength(3);
    const sources = makeAll() as Record<string, string>;
    for (const name of ['red', 'blue', 'voice'] as const) {
      const copy = files.find((f) => f.includes(ids[name]));
      expect(copy, name).toBeDefined();
      expect(sha(join(out.media_dir!, copy!))).toBe(sha(sources[name]!));
    }
    // (ffprobe's own reads, for the check, come with its user agent.)
    const fetches = (service.mediaLog as { range: string | null; headers: Record<string, string> }[]).filter(
      (l) => l.headers['user-agent'] === 'cutroom',
    );
    expect(fetches.map((l) => l.range)).toEqual(['bytes=0-16777215', 'bytes=0-16777215', 'bytes=0-16777215']);
    for (const l of service.mediaLog as { headers: Record<string, string> }[])
      expect(l.headers.authorization ?? '').not.toContain(service.apiKey);
    const text = readFileSync(out.path, 'utf8');
    expect(text).not.toMatch(/Signature=/);
    for (const m of out.media) expect(m.reference.startsWith(out.media_dir!)).toBe(true);
    expect(JSON.stringify(out)).not.toContain(service.apiKey);

    // The editor's file (the same, here) maps back through the asset ids in the copies' names.
    const back = await withEdit<Imported>(
      srv,
      await call(srv, 'import_edit', { project_id: projectId, path: out.path }),
    );
    expect(back.ready, JSON.stringify(back.diagnostics)).toBe(true);
    const composed = (await withEdit<{ edit: Edit }>(srv, await call(srv, 'compose_edit', args))).edit;
    expect(shape(back.edit!, { overlaysOnFrames: true })).toEqual(shape(composed, { overlaysOnFrames: true }));
  });

  it('says a link has expired and leaves nothing behind when a fetch is refused', async () => {
    const exportsDir = join(cacheDir, 'exports');
    const before = existsSync(exportsDir) ? readdirSync(exportsDir) : [];
    service.fail(
      { status: 403, contentType: 'application/xml', body: '<Error><Code>AccessDenied</Code></Error>' },
      { times: 1, match: (r: { path: string }) => r.path.startsWith('/media/') && r.path.startsWith('/media/blue-') },
    );
    const r = await call(srv, 'export_edit', { ...args, format: 'otio', media: 'download' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/fetching asset .* 403 \(the signed link may have expired.*nothing was exported/);
    expect(textOf(r)).not.toMatch(/Signature=|Expires=/);
    expect(readdirSync(exportsDir)).toEqual(before);
  });

  it("keeps a copy inside the export's folder whatever the service calls its asset (an id of ../.. wrote outside)", async () => {
    const red = (service.projects.get(projectId) as { assets: { id: string; keyname: string }[] }).assets.find(
      (a) => a.id === ids.red,
    )!;
    const escape = mkdtempSync(join(tmpdir(), 'cutroom-escape-'));
    const hostileId = `${'../'.repeat(12)}${escape.slice(1)}/app`;
    service.addAsset(projectId, { id: hostileId, keyname: red.keyname });
    const out = await call(srv, 'export_edit', {
      project_id: projectId,
      resolution: '640x360',
      fps: 25,
      clips: [{ asset_id: hostileId, start: 0, end: 1 }],
      format: 'otio',
      media: 'download',
    });
    expect(readdirSync(escape)).toEqual([]);
    expect(out.isError, textOf(out)).toBeFalsy();
    const exported = out.structuredContent as Exported;
    const files = readdirSync(exported.media_dir!);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/__id-[0-9a-f]{16}\.mp4$/);
    expect(sha(join(exported.media_dir!, files[0]!))).toBe(sha((makeAll() as Record<string, string>).red!));
  });

  it('with links, points at the signed links and warns that they expire', async () => {
    const out = structured<Exported>(await call(srv, 'export_edit', { ...args, format: 'otio' }));
    expect(out.media_dir).toBeUndefined();
    expect(out.warnings.join(' ')).toMatch(/signed links, which expire/);
    for (const m of out.media) expect(m.reference).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/media\/[^?]+$/);
  });
});
