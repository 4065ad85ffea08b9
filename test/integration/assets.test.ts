// Assets by name, imported once, mapped and removed by hand, and results an agent can afford (issue 30, items 3 and 4,
// and the bound on results for the project and media tools), through the built server over stdio: on the local
// backend and against the test service.
import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { FakeService } from '../fixtures/service.mjs';
import { callerId } from '../../src/http/callers.js';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { connectHttp, startHttpServer } from '../helpers/http-server.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';
import { pidsMatching } from '../helpers/processes.js';
import { makeSpeechMedia } from '../helpers/speech-media.js';

const MAX_RESULT_BYTES = 24 * 1024;
type Result = { isError?: boolean; structuredContent?: unknown; content: { type: string; text?: string }[] };
type AssetView = {
  id: string;
  name?: string;
  kind?: string;
  render?: boolean;
  duration_seconds?: number;
  width?: number;
  height?: number;
  status?: string;
  asset_type?: string;
};
type Detail = {
  project: { assets: AssetView[]; assets_total: number; assets_offset: number; next_asset_offset?: number };
};
type Imported = {
  asset: AssetView & { url: string };
  already_imported?: boolean;
  kind: string;
  imported: { asset_id: string; already_imported?: boolean }[];
};

const structured = <T>(r: Result): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
const sizeOf = (r: Result) => Buffer.byteLength(JSON.stringify(r));
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const ffmpeg = (args: string[]) => {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args]);
  if (r.status !== 0) throw new Error(r.stderr.toString());
};

describe('on the local backend', () => {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-assets-'));
  const dataDir = join(root, 'data');
  const allowed = join(root, 'allowed');
  const outside = join(root, 'outside');
  const env = {
    CUTROOM_DATA_DIR: dataDir,
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_RENDER_WAIT_MS: '30000',
  };
  let srv: Spawned;
  let media: Record<string, string>;
  const call = async (s: Spawned, name: string, args: Record<string, unknown>) =>
    (await s.client.callTool({ name, arguments: args }, { timeout: 180_000 })) as Result;
  const newProject = async (s: Spawned, name: string) =>
    structured<{ project: { id: string } }>(await call(s, 'create_project', { name, description: '' })).project.id;
  const importFile = async (s: Spawned, project: string, path: string, extra: Record<string, unknown> = {}) =>
    structured<Imported>(await call(s, 'import_media', { project_id: project, path, ...extra }));
  const mediaFiles = (project: string) => readdirSync(join(dataDir, 'projects', project, 'media'));
  const assetsOf = async (project: string) =>
    structured<Detail>(await call(srv, 'get_project', { project_id: project })).project.assets;

  beforeAll(async () => {
    mkdirSync(allowed, { recursive: true });
    mkdirSync(outside, { recursive: true });
    media = makeAll() as Record<string, string>;
    copyFileSync(media.red!, join(allowed, 'harbour take.mp4'));
    copyFileSync(media.voice!, join(allowed, 'gull voice.m4a'));
    copyFileSync(media.still!, join(allowed, 'poster.png'));
    srv = await spawnServer(env);
  }, 60_000);
  afterAll(async () => {
    await srv?.close();
  });

  it('get_project shows each asset by name, kind, duration and size, and marks renders', async () => {
    const project = await newProject(srv, 'named');
    const video = await importFile(srv, project, join(allowed, 'harbour take.mp4'));
    expect(video.asset).toMatchObject({
      name: 'harbour take.mp4',
      kind: 'video',
      duration_seconds: 8,
      width: 320,
      height: 180,
    });
    const voice = (await importFile(srv, project, join(allowed, 'gull voice.m4a'))).asset.id;
    const still = (await importFile(srv, project, join(allowed, 'poster.png'))).asset.id;
    const r = await call(srv, 'render_edit', {
      project_id: project,
      resolution: '640x360',
      fps: 25,
      clips: [{ asset_id: video.asset.id, start: 0, end: 2 }],
      filename: 'teaser.mp4',
      wait: true,
    });
    const render = structured<{ render: { asset_id: string; done: boolean } }>(r).render;
    expect(render.done).toBe(true);

    const got = await call(srv, 'get_project', { project_id: project });
    const byId = Object.fromEntries(structured<Detail>(got).project.assets.map((a) => [a.id, a]));
    expect(byId[video.asset.id]).toMatchObject({
      name: 'harbour take.mp4',
      kind: 'video',
      duration_seconds: 8,
      width: 320,
      height: 180,
    });
    expect(byId[video.asset.id]!.render).toBeUndefined();
    expect(byId[voice]).toMatchObject({ name: 'gull voice.m4a', kind: 'audio', duration_seconds: 5 });
    expect(byId[voice]!.width).toBeUndefined();
    expect(byId[still]).toMatchObject({ name: 'poster.png', kind: 'image', width: 320, height: 180 });
    expect(byId[still]!.duration_seconds).toBeUndefined();
    expect(byId[render.asset_id]).toMatchObject({
      name: 'teaser.mp4',
      kind: 'video',
      render: true,
      duration_seconds: 2,
      width: 640,
      height: 360,
      asset_type: 'generated_video',
    });
    // The text lists each by name, kind, duration and size, then the id.
    const text = textOf(got);
    expect(text).toContain(`- harbour take.mp4 — video, 8 s, 320x180 — ${video.asset.id}`);
    expect(text).toContain(`- gull voice.m4a — audio, 5 s — ${voice}`);
    expect(text).toContain(`- poster.png — image, 320x180 — ${still}`);
    expect(text).toContain(`- teaser.mp4 — render, 2 s, 640x360 — ${render.asset_id}`);
  }, 120_000);

  describe('import_media is idempotent', () => {
    it('the same file twice, or its bytes under another name: one asset, already_imported, nothing copied; again: true copies', async () => {
      const project = await newProject(srv, 'once');
      const first = await importFile(srv, project, join(allowed, 'harbour take.mp4'));
      expect(first.already_imported).toBeUndefined();
      expect(mediaFiles(project)).toHaveLength(1);

      const second = await call(srv, 'import_media', { project_id: project, path: join(allowed, 'harbour take.mp4') });
      const s = structured<Imported>(second);
      expect(s).toMatchObject({
        already_imported: true,
        kind: 'video',
        asset: { id: first.asset.id, name: 'harbour take.mp4', duration_seconds: 8 },
      });
      expect(s.imported).toEqual([expect.objectContaining({ asset_id: first.asset.id, already_imported: true })]);
      expect(textOf(second)).toMatch(/^Already imported video harbour take\.mp4 — .* again: true imports a copy/);

      copyFileSync(media.red!, join(allowed, 'same bytes.mov'));
      const renamed = await importFile(srv, project, join(allowed, 'same bytes.mov'));
      expect(renamed).toMatchObject({ already_imported: true, asset: { id: first.asset.id } });
      expect(mediaFiles(project)).toHaveLength(1);
      expect((await assetsOf(project)).map((a) => a.id)).toEqual([first.asset.id]);

      const copy = await importFile(srv, project, join(allowed, 'same bytes.mov'), { again: true });
      expect(copy.already_imported).toBeUndefined();
      expect(copy.asset.id).not.toBe(first.asset.id);
      expect(copy.asset.name).toBe('same bytes.mov');
      expect(mediaFiles(project)).toHaveLength(2);
      expect(await assetsOf(project)).toHaveLength(2);
      // Another project holds its own copy.
      const other = await newProject(srv, 'elsewhere');
      expect((await importFile(srv, other, join(allowed, 'harbour take.mp4'))).already_imported).toBeUndefined();
      // Nothing left in staging.
      expect(readdirSync(join(dataDir, 'staging'))).toEqual([]);
    }, 60_000);

    it('an asset imported before hashes were kept is found by its size and content, and gets its hash', async () => {
      const project = await newProject(srv, 'older');
      const first = await importFile(srv, project, join(allowed, 'gull voice.m4a'));
      const recPath = join(dataDir, 'projects', project, 'assets', `${first.asset.id}.json`);
      // As an older version wrote it: no hash, size or media facts.
      const {
        sha256,
        size_bytes: _s,
        width: _w,
        height: _h,
        has_audio: _a,
        ...older
      } = JSON.parse(readFileSync(recPath, 'utf8'));
      expect(sha256).toMatch(/^[0-9a-f]{64}$/);
      writeFileSync(recPath, JSON.stringify(older));
      copyFileSync(media.voice!, join(allowed, 'gull again.m4a'));
      const again = await importFile(srv, project, join(allowed, 'gull again.m4a'));
      expect(again).toMatchObject({ already_imported: true, kind: 'audio', asset: { id: first.asset.id } });
      expect(JSON.parse(readFileSync(recPath, 'utf8')).sha256).toBe(sha256);
      // Content of the same size that differs is a new asset.
      const different = join(allowed, 'gull flipped.m4a');
      const bytes = readFileSync(media.voice!);
      bytes[bytes.length - 1] ^= 0xff;
      writeFileSync(different, bytes);
      expect((await importFile(srv, project, different)).already_imported).toBeUndefined();
      expect(await assetsOf(project)).toHaveLength(2);
    }, 60_000);

    it('two servers on one data dir importing the same file at once make one asset', async () => {
      const other = await spawnServer(env);
      try {
        for (let round = 0; round < 4; round++) {
          const project = await newProject(srv, `raced ${round}`);
          const file = join(allowed, `tone ${round}.wav`);
          ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=${300 + round * 100}:duration=1`, file]);
          const results = (
            await Promise.all(
              [srv, other, srv, other].map((s) => call(s, 'import_media', { project_id: project, path: file })),
            )
          ).map((r) => structured<Imported>(r));
          expect(new Set(results.map((r) => r.asset.id)).size).toBe(1);
          expect(results.filter((r) => !r.already_imported)).toHaveLength(1);
          expect(await assetsOf(project)).toHaveLength(1);
          expect(mediaFiles(project)).toHaveLength(1);
        }
      } finally {
        await other.close();
      }
    }, 120_000);
  });

  describe('delete_asset', () => {
    it('removes the record and its copy in the data dir, never the file it came from; refuses without confirm or a known id', async () => {
      const project = await newProject(srv, 'pruned');
      const source = join(allowed, 'harbour take.mp4');
      const before = sha(source);
      const a = await importFile(srv, project, source);
      const kept = (await importFile(srv, project, join(allowed, 'gull voice.m4a'))).asset.id;
      const copy = fileURLToPath(a.asset.url);
      expect(existsSync(copy)).toBe(true);

      const unconfirmed = await call(srv, 'delete_asset', { project_id: project, asset_id: a.asset.id });
      expect(unconfirmed.isError).toBe(true);
      expect(textOf(unconfirmed)).toMatch(/^nothing was deleted: deleting asset "harbour take\.mp4" .*confirm: true/);
      const typo = `${a.asset.id.slice(0, -1)}${a.asset.id.endsWith('0') ? '1' : '0'}`;
      const mistyped = await call(srv, 'delete_asset', { project_id: project, asset_id: typo, confirm: true });
      expect(mistyped.isError).toBe(true);
      expect(textOf(mistyped)).toBe(
        `no asset ${typo} in project ${project}; did you mean ${a.asset.id} (harbour take.mp4)? get_project lists its assets`,
      );
      expect(existsSync(copy)).toBe(true);

      const done = structured<{ deleted: boolean; name: string; file_removed: boolean }>(
        await call(srv, 'delete_asset', { project_id: project, asset_id: a.asset.id, confirm: true }),
      );
      expect(done).toMatchObject({ deleted: true, name: 'harbour take.mp4', file_removed: true });
      expect(existsSync(copy)).toBe(false);
      expect(existsSync(join(dataDir, 'projects', project, 'assets', `${a.asset.id}.json`))).toBe(false);
      expect(sha(source)).toBe(before);
      expect((await assetsOf(project)).map((x) => x.id)).toEqual([kept]);
      const listed = structured<{ projects: { id: string; asset_count: number }[] }>(
        await call(srv, 'list_projects', { limit: 100 }),
      ).projects;
      expect(listed.find((p) => p.id === project)?.asset_count).toBe(1);
      const twice = await call(srv, 'delete_asset', { project_id: project, asset_id: a.asset.id, confirm: true });
      expect(textOf(twice)).toMatch(/^no asset .* get_project lists its assets$/);
      // Imported again after its removal: a new asset, copied anew.
      expect((await importFile(srv, project, source)).already_imported).toBeUndefined();
    }, 60_000);

    it('never removes a file outside the data dir, even when a record names one', async () => {
      const project = await newProject(srv, 'tampered');
      const a = await importFile(srv, project, join(allowed, 'poster.png'));
      const precious = join(outside, 'precious.png');
      copyFileSync(media.still!, precious);
      const recPath = join(dataDir, 'projects', project, 'assets', `${a.asset.id}.json`);
      writeFileSync(recPath, JSON.stringify({ ...JSON.parse(readFileSync(recPath, 'utf8')), file: precious }));
      const done = structured<{ file_removed: boolean }>(
        await call(srv, 'delete_asset', { project_id: project, asset_id: a.asset.id, confirm: true }),
      );
      expect(done.file_removed).toBe(false);
      expect(existsSync(precious)).toBe(true);
      expect(existsSync(recPath)).toBe(false);
    });

    it('is refused while the asset is a render being made or one of its sources; a render stopped with its server blocks nothing', async () => {
      const s = await spawnServer(env, { tee: false });
      let stopped = false;
      try {
        const project = await newProject(s, 'rendering');
        const red = (await importFile(s, project, join(allowed, 'harbour take.mp4'))).asset.id;
        const spare = (await importFile(s, project, join(allowed, 'poster.png'))).asset.id;
        const long = {
          project_id: project,
          resolution: '1920x1080',
          clips: Array.from({ length: 12 }, () => ({ asset_id: red, start: 0, end: 8 })),
          filename: 'long.mp4',
        };
        const { render } = structured<{ render: { asset_id: string } }>(await call(s, 'render_edit', long));
        await expect
          .poll(() => pidsMatching(join(dataDir, 'projects', project)).length, { timeout: 15_000 })
          .toBeGreaterThan(0);
        for (const server of [s, srv]) {
          const source = await call(server, 'delete_asset', { project_id: project, asset_id: red, confirm: true });
          expect(source.isError).toBe(true);
          expect(textOf(source)).toBe(
            `nothing was deleted: asset ${red} (harbour take.mp4) is a source of render ${render.asset_id}, still being made; wait for it to end (get_render_status), then delete it`,
          );
          const itself = await call(server, 'delete_asset', {
            project_id: project,
            asset_id: render.asset_id,
            confirm: true,
          });
          expect(textOf(itself)).toBe(
            `nothing was deleted: asset ${render.asset_id} (long.mp4) is a render still being made; wait for it to end (get_render_status), then delete it`,
          );
        }
        // What no render reads may go meanwhile.
        expect(
          structured<{ deleted: boolean }>(
            await call(s, 'delete_asset', { project_id: project, asset_id: spare, confirm: true }),
          ).deleted,
        ).toBe(true);
        await s.close();
        stopped = true;
        await expect.poll(() => pidsMatching(join(dataDir, 'projects', project)).length, { timeout: 10_000 }).toBe(0);
        // The render was stopped with its server (failed): its source may go now, and the failed render too.
        expect(
          structured<{ deleted: boolean }>(
            await call(srv, 'delete_asset', { project_id: project, asset_id: red, confirm: true }),
          ).deleted,
        ).toBe(true);
        expect(
          structured<{ file_removed: boolean }>(
            await call(srv, 'delete_asset', { project_id: project, asset_id: render.asset_id, confirm: true }),
          ).file_removed,
        ).toBe(false);
        expect(await assetsOf(project)).toEqual([]);
        expect(mediaFiles(project)).toEqual([]);
      } finally {
        if (!stopped) await s.close();
      }
    }, 120_000);
  });

  describe('import_edit maps media by hand', () => {
    let project: string;
    let harbour: string;
    let gull: string;
    beforeAll(async () => {
      project = await newProject(srv, 'mapped');
      harbour = (await importFile(srv, project, join(allowed, 'harbour take.mp4'))).asset.id;
      gull = (await importFile(srv, project, join(allowed, 'gull voice.m4a'))).asset.id;
    }, 60_000);

    /** An export of the edit, with every trace of the project's assets renamed: as an editor's file from elsewhere. */
    const foreignFile = async (format: 'otio' | 'fcpxml' | 'edl') => {
      const edit = {
        project_id: project,
        resolution: '320x180',
        fps: 25,
        clips: [{ asset_id: harbour, start: 1, end: 3 }],
        overlays: [{ asset_id: gull, at: 0, until: 2 }],
        filename: 'mapped.mp4',
        format,
      };
      let text = readFileSync(structured<{ path: string }>(await call(srv, 'export_edit', edit)).path, 'utf8');
      for (const [id, other] of [
        [harbour, randomUUID()],
        [gull, randomUUID()],
      ] as const)
        text = text
          .replaceAll(id, other)
          .replaceAll(id.slice(0, 8), other.slice(0, 8))
          .replaceAll(id.slice(0, 8).toUpperCase(), other.slice(0, 8).toUpperCase());
      text = text
        .replaceAll('harbour take', 'interview final')
        .replaceAll('harbour%20take', 'interview%20final')
        .replaceAll('gull voice', 'narration')
        .replaceAll('gull%20voice', 'narration')
        .replaceAll(dataDir, '/elsewhere');
      expect(text).not.toContain(harbour);
      return text;
    };

    for (const format of ['otio', 'fcpxml', 'edl'] as const) {
      it(`${format}: media whose names match nothing is an error naming media_map, and media_map maps it`, async () => {
        const content = await foreignFile(format);
        const args = {
          project_id: project,
          content,
          format,
          ...(format === 'edl' ? { fps: 25, resolution: '320x180' } : {}),
        };
        const unmapped = structured<{ ready: boolean; diagnostics: { severity: string; message: string }[] }>(
          await call(srv, 'import_edit', args),
        );
        expect(unmapped.ready).toBe(false);
        const errors = unmapped.diagnostics.filter(
          (d) => d.severity === 'error' && /matches no asset of the project; map it with media_map/.test(d.message),
        );
        expect(errors.length, JSON.stringify(unmapped.diagnostics)).toBeGreaterThanOrEqual(2);

        const mapped = structured<{ ready: boolean; edit_id: string; mapped: string[]; diagnostics: unknown[] }>(
          await call(srv, 'import_edit', {
            ...args,
            media_map: { 'interview final.mp4': harbour, 'narration.m4a': gull },
          }),
        );
        expect(mapped.ready, JSON.stringify(mapped.diagnostics)).toBe(true);
        const edit = await storedEdit<{
          video_series_sequential: { video_id: string }[];
          audio_overlay: { audio_id: string }[];
        }>(srv.client, mapped.edit_id);
        expect(edit.video_series_sequential.map((c) => c.video_id)).toEqual([harbour]);
        expect(edit.audio_overlay.map((o) => o.audio_id)).toEqual([gull]);
        expect(mapped.mapped).toEqual([
          expect.stringMatching(
            new RegExp(
              `^cut 1 .*asset ${harbour} \\(harbour take\\.mp4\\), found by media_map "interview final\\.mp4"$`,
            ),
          ),
          expect.stringMatching(
            new RegExp(`^overlay 1 .*asset ${gull} \\(gull voice\\.m4a\\), found by media_map "narration\\.m4a"$`),
          ),
        ]);
      });
    }

    it('a name several assets share: says which (ids and names) and how to choose; a wrong id in media_map is refused', async () => {
      // Two files of other content than the project holds (else the import finds that asset).
      for (const [dir, src] of [
        ['a', media.black!],
        ['b', media.blue!],
      ] as const) {
        mkdirSync(join(allowed, dir), { recursive: true });
        copyFileSync(src, join(allowed, dir, 'take.mp4'));
      }
      const a = (await importFile(srv, project, join(allowed, 'a', 'take.mp4'))).asset.id;
      const b = (await importFile(srv, project, join(allowed, 'b', 'take.mp4'))).asset.id;
      const edl = [
        'TITLE: shared name',
        'FCM: NON-DROP FRAME',
        '',
        '001  AX       V     C        00:00:00:00 00:00:01:00 01:00:00:00 01:00:01:00',
        '* FROM CLIP NAME: take.mp4',
        '',
      ].join('\n');
      const args = { project_id: project, content: edl, fps: 25, resolution: '320x180' };
      const both = structured<{ ready: boolean; diagnostics: { severity: string; message: string }[] }>(
        await call(srv, 'import_edit', args),
      );
      expect(both.ready).toBe(false);
      const note = both.diagnostics.find((d) => d.severity === 'error' && /matches 2 assets/.test(d.message));
      expect(note?.message, JSON.stringify(both.diagnostics)).toContain(`${a} (take.mp4)`);
      expect(note!.message).toContain(`${b} (take.mp4)`);
      expect(note!.message).toContain('choose one with media_map: {"take.mp4": "<asset id>"}');

      const chosen = structured<{ ready: boolean; edit_id: string }>(
        await call(srv, 'import_edit', { ...args, media_map: { 'take.mp4': b } }),
      );
      expect(chosen.ready).toBe(true);
      expect(
        (await storedEdit<{ video_series_sequential: { video_id: string }[] }>(srv.client, chosen.edit_id))
          .video_series_sequential[0]!.video_id,
      ).toBe(b);

      const typo = `${b.slice(0, -1)}${b.endsWith('0') ? '1' : '0'}`;
      const wrong = await call(srv, 'import_edit', { ...args, media_map: { 'take.mp4': typo } });
      expect(wrong.isError).toBe(true);
      expect(textOf(wrong)).toBe(
        `media_map maps "take.mp4" to ${typo}, which is no asset of the project; did you mean ${b} (take.mp4)? get_project lists its assets`,
      );
    }, 60_000);
  });

  it('search_transcripts leaves renders out unless asked, and names the asset of each hit', async () => {
    const speech = join(allowed, 'speech');
    mkdirSync(speech, { recursive: true });
    const { video } = makeSpeechMedia(speech);
    const project = await newProject(srv, 'heard');
    const talk = (await importFile(srv, project, video)).asset.id;
    const r = structured<{ render: { asset_id: string; done: boolean } }>(
      await call(srv, 'render_edit', {
        project_id: project,
        resolution: '320x180',
        fps: 25,
        clips: [{ asset_id: talk, start: 0, end: 4.5 }],
        filename: 'keeper cut.mp4',
        wait: true,
      }),
    );
    expect(r.render.done).toBe(true);
    type Hits = { hits: { asset_id: string; name?: string }[]; searched: number };
    const sources = structured<Hits>(
      await call(srv, 'search_transcripts', { project_id: project, query: 'lighthouse keeper' }),
    );
    expect(sources.searched).toBe(1);
    expect(sources.hits.length).toBeGreaterThan(0);
    expect(sources.hits.every((h) => h.asset_id === talk && h.name === 'talk.mp4')).toBe(true);
    const all = structured<Hits>(
      await call(srv, 'search_transcripts', { project_id: project, query: 'lighthouse keeper', include_renders: true }),
    );
    expect(all.searched).toBe(2);
    expect(all.hits.find((h) => h.asset_id === r.render.asset_id)?.name).toBe('keeper cut.mp4');
    // Named, a render is searched without asking.
    const named = structured<Hits>(
      await call(srv, 'search_transcripts', {
        project_id: project,
        query: 'lighthouse keeper',
        asset_ids: [r.render.asset_id],
      }),
    );
    expect(named.hits.map((h) => h.asset_id)).toEqual([r.render.asset_id]);
  }, 180_000);

  describe('results stay under 24 KB whatever the project or folder holds', () => {
    it('get_project pages 300 assets with long names and reaches every one; the resource holds them all', async () => {
      const project = await newProject(srv, 'crowded');
      const one = await importFile(srv, project, join(allowed, 'harbour take.mp4'));
      // 299 more records in the backend's own shape (importing 300 files would only take longer).
      const dir = join(dataDir, 'projects', project, 'assets');
      const rec = JSON.parse(readFileSync(join(dir, `${one.asset.id}.json`), 'utf8'));
      const all = new Set([one.asset.id]);
      for (let i = 0; i < 299; i++) {
        const id = randomUUID();
        all.add(id);
        writeFileSync(
          join(dir, `${id}.json`),
          JSON.stringify({
            ...rec,
            id,
            keyname: id,
            sha256: undefined,
            original_name: `take ${String(i).padStart(3, '0')} ${'of the long harbour morning '.repeat(5)}.mp4`,
          }),
        );
      }
      const seen: string[] = [];
      let offset: number | undefined = 0;
      let pages = 0;
      while (offset !== undefined) {
        const r = await call(srv, 'get_project', { project_id: project, asset_offset: offset });
        expect(sizeOf(r)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
        const p: Detail['project'] = structured<Detail>(r).project;
        expect(p.assets_total).toBe(300);
        expect(p.assets_offset).toBe(offset);
        expect(p.assets.length).toBeGreaterThan(0);
        seen.push(...p.assets.map((a) => a.id));
        if (p.next_asset_offset !== undefined)
          expect(textOf(r)).toContain(`call again with asset_offset: ${p.next_asset_offset}`);
        offset = p.next_asset_offset;
        pages++;
      }
      expect(pages).toBeGreaterThan(1);
      expect(seen).toHaveLength(300);
      expect(new Set(seen)).toEqual(all);
      const resource = await srv.client.readResource({ uri: `vj://projects/${project}` });
      expect(JSON.parse((resource.contents[0] as { text: string }).text).assets).toHaveLength(300);
    }, 60_000);

    it('list_media pages a folder of 300 files and reaches every one; import_media of 200 files is summarised', async () => {
      const crowd = join(allowed, 'crowd');
      mkdirSync(crowd, { recursive: true });
      const names = Array.from(
        { length: 300 },
        (_, i) => `clip ${String(i).padStart(3, '0')} ${'from the long harbour morning '.repeat(4)}.m4a`,
      );
      // The same sound under every name: a listing reads no file, and an import of these finds one content.
      for (const n of names) copyFileSync(media.voice!, join(crowd, n));
      const seen: string[] = [];
      let offset: number | undefined = 0;
      while (offset !== undefined) {
        const r = await call(srv, 'list_media', { folder: crowd, offset });
        expect(sizeOf(r)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
        const out: { folders: { files: { path: string }[]; files_total: number }[]; next_offset?: number } =
          structured(r);
        expect(out.folders[0]!.files_total).toBe(300);
        expect(out.folders[0]!.files.length).toBeGreaterThan(0);
        seen.push(...out.folders[0]!.files.map((f) => f.path));
        offset = out.next_offset;
      }
      expect(seen).toEqual(names.map((n) => join(crowd, n)));

      const project = await newProject(srv, 'bulk');
      const r = await call(srv, 'import_media', { project_id: project, path: crowd });
      expect(sizeOf(r)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
      const out = structured<{
        imported: { already_imported?: boolean }[];
        skipped: { reason: string }[];
        left_out?: { imported: number; skipped: number };
      }>(r);
      // 200 taken (one copied, 199 found to be it); the 100 over the bound of a call are the next call's, not skipped.
      expect(out.imported.length + out.left_out!.imported).toBe(200);
      expect(out.skipped).toEqual([]);
      expect(out.left_out!.skipped).toBe(0);
      expect(out.imported.length).toBeGreaterThan(0);
      expect(textOf(r)).toMatch(/^Imported 200 files \(199 already in the project: not copied again\)\./);
      expect(textOf(r)).toMatch(/Not listed here: \d+ imported \(get_project lists them by name\)\./);
      expect(textOf(r)).toMatch(
        /100 more media files: call again with the same path, paths and recursive, and cursor: "/,
      );
      expect(await assetsOf(project)).toHaveLength(1);
    }, 120_000);
  });
});

describe('on the service', () => {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-assets-remote-'));
  const env = (service: FakeService) => ({
    VJ_API_KEY: service.apiKey,
    VJ_API_URL: service.url,
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_RENDER_WAIT_MS: '8000',
  });
  let service: FakeService;
  let srv: Spawned;
  let projectId: string;
  let ids: Record<MediaName, string>;
  const call = async (name: string, args: Record<string, unknown>, s = srv) =>
    (await s.client.callTool({ name, arguments: args }, { timeout: 60_000 })) as Result;

  beforeAll(async () => {
    service = await new FakeService().start();
    ({ projectId, ids } = mediaProject(service, 'beach'));
    srv = await spawnServer(env(service));
  });
  afterAll(async () => {
    await srv?.close();
    await service?.stop();
  });

  it('delete_asset is a clear error: the interface has no such call, and nothing is sent', async () => {
    service.reset();
    const r = await call('delete_asset', { project_id: projectId, asset_id: ids.red, confirm: true });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(textOf(r)).toMatch(
      /^the service at http:\/\/127\.0\.0\.1:\d+ has no call to delete an asset \(its interface has none\); nothing was deleted/,
    );
    expect(service.requests.filter((q) => q.method !== 'GET')).toEqual([]);
    expect(service.projects.get(projectId).assets.some((a: { id: string }) => a.id === ids.red)).toBe(true);
  });

  it('names a render by the file name render_edit gave it (remembered across restarts), marks it, and shows what is known of the media', async () => {
    const before = structured<Detail>(await call('get_project', { project_id: projectId })).project.assets;
    const red = before.find((a) => a.id === ids.red)!;
    // The service's own fields name the others (the file its download link saves as); nothing probed yet, so no
    // duration.
    expect(red).toMatchObject({ name: `red-${projectId.slice(0, 8)}.mp4`, kind: 'video' });
    expect(red.duration_seconds).toBeUndefined();
    expect(before.find((a) => a.id === ids.voice)).toMatchObject({ kind: 'audio' });

    const clips = [{ asset_id: ids.red, start: 0, end: 2 }];
    expect(
      structured<{ ready: boolean }>(
        await call('compose_edit', { project_id: projectId, clips, resolution: '320x180' }),
      ).ready,
    ).toBe(true);
    const { render } = structured<{ render: { asset_id: string } }>(
      await call('render_edit', { project_id: projectId, clips, resolution: '320x180', filename: 'beach teaser.mp4' }),
    );

    const r = await call('get_project', { project_id: projectId });
    const after = Object.fromEntries(structured<Detail>(r).project.assets.map((a) => [a.id, a]));
    expect(after[render.asset_id]).toMatchObject({ name: 'beach teaser.mp4', render: true, kind: 'video' });
    // Other generated videos of the service are sources, not renders.
    expect(after[ids.black]!.render).toBeUndefined();
    // The check measured red: its duration and size are known now, without another probe of every asset.
    expect(after[ids.red]).toMatchObject({ duration_seconds: 8, width: 320, height: 180 });
    expect(after[ids.black]!.duration_seconds).toBeUndefined();
    expect(textOf(r)).toContain(`- beach teaser.mp4 — render — ${render.asset_id}`);

    const next = await spawnServer(env(service));
    try {
      const again = structured<Detail>(await call('get_project', { project_id: projectId }, next)).project.assets;
      expect(again.find((a) => a.id === render.asset_id)).toMatchObject({ name: 'beach teaser.mp4', render: true });
    } finally {
      await next.close();
    }
  }, 60_000);

  it("over HTTP, the names a caller's renders were given are kept in a folder of their own, which replicas share", async () => {
    const dataDir = join(root, 'hosted-data');
    const hostedEnv = {
      VJ_BACKEND: 'remote',
      VJ_API_URL: service.url,
      CUTROOM_DATA_DIR: dataDir,
      CUTROOM_CACHE_DIR: join(root, 'hosted-cache'),
    };
    const [one, two] = await Promise.all([startHttpServer(hostedEnv), startHttpServer(hostedEnv)]);
    try {
      const a = await connectHttp(one.url, { 'x-api-key': service.apiKey });
      const r = (await a.callTool({
        name: 'render_edit',
        arguments: {
          project_id: projectId,
          clips: [{ asset_id: ids.blue, start: 0, end: 1 }],
          resolution: '320x180',
          filename: 'hosted cut.mp4',
        },
      })) as Result;
      const assetId = structured<{ render: { asset_id: string } }>(r).render.asset_id;
      const kept = join(dataDir, 'callers', callerId(service.apiKey), 'remembered-assets', `${assetId}.json`);
      expect(JSON.parse(readFileSync(kept, 'utf8'))).toEqual({ name: 'hosted cut.mp4', render: true });
      expect(existsSync(join(dataDir, 'remembered-assets'))).toBe(false);
      const b = await connectHttp(two.url, { 'x-api-key': service.apiKey });
      const got = structured<Detail>(
        (await b.callTool({ name: 'get_project', arguments: { project_id: projectId } })) as Result,
      ).project.assets;
      expect(got.find((x) => x.id === assetId)).toMatchObject({ name: 'hosted cut.mp4', render: true });
      await Promise.all([a.close(), b.close()]);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  }, 60_000);

  it('get_project "not found" names the project meant', async () => {
    const typo = `${projectId.slice(0, -1)}${projectId.endsWith('0') ? '1' : '0'}`;
    const r = await call('get_project', { project_id: typo });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      `project ${typo} not found; did you mean ${projectId} (beach)? Else list_projects shows the ids you can use`,
    );
    const short = await call('get_project', { project_id: projectId.slice(0, 13) });
    expect(textOf(short)).toMatch(new RegExp(`is not a UUID .*; did you mean ${projectId} \\(beach\\)\\?$`));
  });

  it('get_project pages 300 assets with their signed links under 24 KB; list_projects pages 100 long projects', async () => {
    const crowded = service.addProject({ name: 'crowded', assets: Array.from({ length: 300 }, () => ({})) });
    const seen = new Set<string>();
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const r = await call('get_project', { project_id: crowded.id, asset_offset: offset });
      expect(sizeOf(r)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
      const p: Detail['project'] = structured<Detail>(r).project;
      for (const a of p.assets) seen.add(a.id);
      offset = p.next_asset_offset;
    }
    expect(seen.size).toBe(300);

    const owner = service.addTenant('many-projects-key-0123456789');
    for (let i = 0; i < 100; i++)
      service.addProject({ name: `project ${i} ${'n'.repeat(180)}`, description: 'd'.repeat(5000), owner });
    const many = await spawnServer({ ...env(service), VJ_API_KEY: 'many-projects-key-0123456789' });
    try {
      const listed = new Set<string>();
      let from: number | undefined = 0;
      while (from !== undefined) {
        const r = await call('list_projects', { limit: 100, offset: from }, many);
        expect(sizeOf(r)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
        const out: { projects: { id: string; description: string }[]; next_offset?: number } = structured(r);
        expect(out.projects.length).toBeGreaterThan(0);
        for (const p of out.projects) {
          listed.add(p.id);
          expect(p.description.length).toBeLessThanOrEqual(200);
        }
        from = out.next_offset;
      }
      expect(listed.size).toBe(100);
    } finally {
      await many.close();
    }
  }, 60_000);
});
