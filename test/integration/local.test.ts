// The local backend through the built server: no account, projects on disk, renders by local ffmpeg.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { pidsMatching } from '../helpers/processes.js';
import { colourAt, colourName, probe, rmsDb } from '../helpers/inspect-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-local-'));
const dataDir = join(root, 'data');
const allowed = join(root, 'allowed');
const outside = join(root, 'outside');
const cacheDir = join(root, 'cache');
let media: Record<string, string>;

const env = (extra: Record<string, string> = {}) => ({
  CUTROOM_DATA_DIR: dataDir,
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: cacheDir,
  CUTROOM_RENDER_WAIT_MS: '30000',
  ...extra,
});

type Imported = { asset: { id: string; url: string }; kind: string; duration_seconds?: number; has_audio: boolean };
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};

let srv: Spawned;
beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  mkdirSync(outside, { recursive: true });
  media = makeAll();
  for (const [name, path] of Object.entries(media))
    copyFileSync(path, join(allowed, `${name}${path.slice(path.lastIndexOf('.'))}`));
  srv = await spawnServer(env());
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

const call = (s: Spawned, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }, { timeout: 120_000 });

describe('the local backend is the default without a key', () => {
  it('says so at start and in its instructions, and offers import_media (snapshot)', async () => {
    expect(srv.stderr()).toMatch(/serving stdio on the local backend \(local projects in /);
    expect(srv.client.getInstructions()).toMatch(/local backend .* import_media/i);
    const { tools } = await srv.client.listTools();
    expect(tools.map((t) => t.name)).toContain('import_media');
    for (const t of tools) expect(t.annotations?.openWorldHint, t.name).toBe(false);
    await expect(
      JSON.stringify(
        tools.sort((a, b) => a.name.localeCompare(b.name)),
        null,
        2,
      ),
    ).toMatchFileSnapshot('../__snapshots__/tools-local.json');
  });
});

describe('the whole workflow, locally', () => {
  let projectId: string;
  const ids: Record<string, string> = {};
  let renderId: string;

  it('creates a project with the example script attached', async () => {
    const { project } = structured<{ project: { id: string } }>(
      await call(srv, 'create_project', { name: 'Lake teaser', description: 'local test' }),
    );
    projectId = project.id;
    const { scripts } = structured<{ scripts: { name: string; graph: { steps: string[] } }[] }>(
      await call(srv, 'list_scripts', { project_id: projectId }),
    );
    expect(scripts).toHaveLength(1);
    expect(scripts[0]!.graph.steps.map((s) => s.replace(/^\d+\. /, ''))).toEqual([
      'Project flow [project flow]',
      'Render custom prompt [render custom prompt]',
      'Text to speech [text to speech]',
      'Speech to text with time markers [speech to text with time markers]',
      'Images from text [generate images from text]',
      'Video from assets [generate video from assets]',
    ]);
    const created = readdirSync(join(dataDir, 'projects'));
    expect(created).toContain(projectId);
  });

  it('imports video, audio and an image as what the probe found', async () => {
    for (const [name, file] of [
      ['red', 'red.mp4'],
      ['blue', 'blue.mp4'],
      ['voice', 'voice.m4a'],
      ['still', 'still.png'],
      ['mute', 'mute_yellow.mp4'],
    ] as const) {
      const r = structured<Imported>(
        await call(srv, 'import_media', { project_id: projectId, path: join(allowed, file) }),
      );
      ids[name] = r.asset.id;
      expect(r.asset.url).toMatch(/^file:\/\//);
      expect(existsSync(fileURLToPath(r.asset.url))).toBe(true);
    }
    const { project } = structured<{
      project: { assets: { id: string; asset_type: string; status: string; uploaded: boolean }[] };
    }>(await call(srv, 'get_project', { project_id: projectId }));
    const byId = Object.fromEntries(project.assets.map((a) => [a.id, a]));
    expect(byId[ids.red!]).toMatchObject({ asset_type: 'video', status: 'uploaded', uploaded: true });
    expect(byId[ids.voice!]!.asset_type).toBe('audio');
    expect(byId[ids.still!]!.asset_type).toBe('image');
  });

  it('composes and previews', async () => {
    const args = {
      project_id: projectId,
      resolution: '640x360',
      fps: 25,
      clips: [
        { asset_id: ids.red, start: 0, end: 2 },
        { asset_id: ids.blue, start: 1, end: 3, volume: 0 },
      ],
      overlays: [{ asset_id: ids.voice, at: 2.5, until: 3.5 }],
      filename: 'lake.mp4',
    };
    expect(structured<{ ready: boolean }>(await call(srv, 'compose_edit', args)).ready).toBe(true);
    const p = structured<{ measured_seconds: number; cuts: unknown[] }>(await call(srv, 'preview_edit', args));
    expect(Math.abs(p.measured_seconds - 4)).toBeLessThanOrEqual(0.04);
    expect(p.cuts).toHaveLength(2);
  });

  it('answers as the instructions say: a failure is an error result, an edit found not ready is not', async () => {
    expect(srv.client.getInstructions()).toMatch(
      /Every failure is an error result .*; an edit checked and found not ready is not one: .*ready: false/,
    );
    const notReady = await call(srv, 'compose_edit', {
      project_id: projectId,
      clips: [{ asset_id: ids.red, start: 0, end: 600 }],
    });
    expect(notReady.isError ?? false).toBe(false);
    expect(textOf(notReady)).toMatch(/^Not ready: /);
    expect((notReady.structuredContent as { ready: boolean }).ready).toBe(false);
    const failed = await call(srv, 'compose_edit', { project_id: randomUUID(), clips: [{ asset_id: ids.red }] });
    expect(failed.isError).toBe(true);
  });

  it('renders at full quality into a generated_video asset that goes processing -> uploaded', async () => {
    const args = {
      project_id: projectId,
      resolution: '1280x720',
      fps: 25,
      clips: [
        { asset_id: ids.red, start: 0, end: 2 },
        { asset_id: ids.blue, start: 1, end: 3, volume: 0 },
      ],
      overlays: [{ asset_id: ids.voice, at: 2.5, until: 3.5 }],
      filename: 'lake.mp4',
    };
    const started = structured<{ render: { asset_id: string; status: string } }>(await call(srv, 'render_edit', args));
    renderId = started.render.asset_id;
    expect(started.render.status).toBe('processing');
    const first = structured<{ status: string }>(
      await call(srv, 'get_render_status', { project_id: projectId, asset_id: renderId }),
    );
    expect(['processing', 'uploaded']).toContain(first.status);
    await expect
      .poll(
        async () =>
          structured<{ status: string }>(
            await call(srv, 'get_render_status', { project_id: projectId, asset_id: renderId }),
          ).status,
        { timeout: 60_000, interval: 500 },
      )
      .toBe('uploaded');
    const done = structured<{ url: string; done: boolean }>(
      await call(srv, 'get_render_status', { project_id: projectId, asset_id: renderId }),
    );
    const file = fileURLToPath(done.url);
    const m = probe(file);
    expect(m).toMatchObject({ width: 1280, height: 720 });
    expect(Math.abs(m.duration - 4)).toBeLessThanOrEqual(0.04);
    expect(colourName(colourAt(file, 1))).toBe('red');
    expect(colourName(colourAt(file, 3))).toBe('blue');
    expect(rmsDb(file, 2.1, 2.4)).toBeLessThan(-60);
    expect(rmsDb(file, 2.6, 3.4)).toBeGreaterThan(-30);
    const { project } = structured<{ project: { assets: { id: string; asset_type: string }[] } }>(
      await call(srv, 'get_project', { project_id: projectId }),
    );
    expect(project.assets.find((a) => a.id === renderId)?.asset_type).toBe('generated_video');
  }, 90_000);

  it('render_edit with wait follows a local render to its end', async () => {
    const r = structured<{ render: { done: boolean; url: string } }>(
      await call(srv, 'render_edit', {
        project_id: projectId,
        resolution: '320x180',
        clips: [{ asset_id: ids.blue, start: 0, end: 1 }],
        wait: true,
      }),
    );
    expect(r.render.done).toBe(true);
    expect(existsSync(fileURLToPath(r.render.url))).toBe(true);
  }, 60_000);

  it('render_edit {edit_id, filename} names the render, not the edit (issue 51, item 3)', async () => {
    const { edit_id } = structured<{ edit_id: string }>(
      await call(srv, 'compose_edit', {
        project_id: projectId,
        resolution: '320x180',
        clips: [{ asset_id: ids.red, start: 0, end: 1 }],
      }),
    );
    const r = await call(srv, 'render_edit', { edit_id, filename: 'Lake teaser v2.mp4', wait: true });
    const out = structured<{ render: { done: boolean; url: string }; edit_id: string }>(r);
    expect(out.edit_id).toBe(edit_id);
    expect(out.render.done).toBe(true);
    expect(fileURLToPath(out.render.url)).toMatch(/Lake teaser v2\.mp4$/);
    expect((r.content as { type: string; name?: string }[]).find((c) => c.type === 'resource_link')?.name).toBe(
      'Lake teaser v2.mp4',
    );
    // The kept edit still names its own file; a bad name is refused as the edit's own would be.
    const kept = JSON.stringify(await srv.client.readResource({ uri: `cutroom://edits/${edit_id}` }));
    expect(kept).toContain('video_output_filename');
    expect(kept).not.toContain('Lake teaser');
    const bad = await call(srv, 'render_edit', { edit_id, filename: '../up.mp4' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/filename: "\.\.\/up\.mp4" is a path; .*drop the folders: "up\.mp4"/);
  }, 60_000);

  it('keeps everything across a restart', async () => {
    const again = await spawnServer(env());
    try {
      const { project } = structured<{ project: { assets: { id: string; status: string }[] } }>(
        await call(again, 'get_project', { project_id: projectId }),
      );
      expect(project.assets.map((a) => a.id)).toEqual(expect.arrayContaining([...Object.values(ids), renderId]));
      expect(project.assets.find((a) => a.id === renderId)?.status).toBe('uploaded');
    } finally {
      await again.close();
    }
  });

  describe('import_media refuses', () => {
    let before: number;
    const refuse = async (path: string, pattern: RegExp) => {
      const r = await call(srv, 'import_media', { project_id: projectId, path });
      expect(r.isError, path).toBe(true);
      expect(textOf(r)).toMatch(pattern);
    };
    beforeAll(async () => {
      before = structured<{ project: { assets_total: number } }>(
        await call(srv, 'get_project', { project_id: projectId }),
      ).project.assets_total;
      copyFileSync(media.red!, join(outside, 'secret.mp4'));
      symlinkSync(join(outside, 'secret.mp4'), join(allowed, 'link-out.mp4'));
      writeFileSync(join(allowed, 'notes.txt'), 'not a video at all\n');
      mkdirSync(join(allowed, 'folder.mp4'), { recursive: true });
    });

    it('a file outside the allowed folders', () =>
      refuse(join(outside, 'secret.mp4'), /is outside the folders cutroom may read .*CUTROOM_ALLOWED_DIRS/));
    it('a symlink inside that leads outside', () =>
      refuse(
        join(allowed, 'link-out.mp4'),
        /link-out\.mp4 \(which is .*outside\/secret\.mp4\) is outside the folders/,
      ));
    it('a path that climbs out with ..', () =>
      refuse(join(allowed, '..', 'outside', 'secret.mp4'), /is outside the folders/));
    it('a file that is not there', () => refuse(join(allowed, 'missing.mp4'), /no file at .*missing\.mp4/));
    it('a folder with no media in it', () =>
      refuse(
        join(allowed, 'folder.mp4'),
        /folder\.mp4 holds no media files \(by their names\); list_media shows what a folder holds/,
      ));
    it('a file ffprobe cannot read', () =>
      refuse(join(allowed, 'notes.txt'), /is not media cutroom can use: ffprobe cannot read it/));
    it('a project id that is not a UUID', async () => {
      const r = await call(srv, 'import_media', { project_id: 'lake', path: join(allowed, 'red.mp4') });
      expect(textOf(r)).toMatch(/project_id "lake" is not a UUID/);
    });

    it('and adds nothing when it refuses; a relative path from the allowed folder works', async () => {
      expect(
        structured<{ project: { assets_total: number } }>(await call(srv, 'get_project', { project_id: projectId }))
          .project.assets_total,
      ).toBe(before);
      const r = structured<Imported>(await call(srv, 'import_media', { project_id: projectId, path: 'blue.mp4' }));
      expect(r.kind).toBe('video');
    });
  });
});

describe('names are names', () => {
  it('imports files named like patterns, protocols and options as what they hold; PNG and JPEG stills as images', async () => {
    const names = join(allowed, 'names');
    mkdirSync(names, { recursive: true });
    // An image sequence beside a video whose name is that sequence's pattern.
    copyFileSync(media.still!, join(names, 'img000.png'));
    copyFileSync(media.still!, join(names, 'img001.png'));
    copyFileSync(media.red!, join(names, 'img%03d.png'));
    copyFileSync(media.blue!, join(names, '-i x.mp4'));
    copyFileSync(media.voice!, join(names, 'a:b.mp4'));
    copyFileSync(media.still!, join(names, 'http:x.mp4'));
    copyFileSync(media.red!, join(names, 'clip*.mp4'));
    const jpeg = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'color=c=white:s=320x180:d=1',
      '-frames:v',
      '1',
      join(names, 'still.jpg'),
    ]);
    expect(jpeg.status).toBe(0);
    const project = structured<{ project: { id: string } }>(
      await call(srv, 'create_project', { name: 'names', description: '' }),
    ).project.id;
    const expected: [string, string, number | undefined][] = [
      ['img%03d.png', 'video', 8],
      ['img000.png', 'image', undefined],
      ['-i x.mp4', 'video', 6],
      ['a:b.mp4', 'audio', 5],
      ['http:x.mp4', 'image', undefined],
      ['clip*.mp4', 'video', 8],
      ['still.jpg', 'image', undefined],
    ];
    const ids: Record<string, string> = {};
    for (const [name, kind, seconds] of expected) {
      const r = structured<Imported & { width?: number }>(
        await call(srv, 'import_media', { project_id: project, path: join(names, name) }),
      );
      expect({ name, kind: r.kind, seconds: r.duration_seconds && Math.round(r.duration_seconds) }).toEqual({
        name,
        kind,
        seconds,
      });
      expect(readFileSync(fileURLToPath(r.asset.url)).equals(readFileSync(join(names, name))), name).toBe(true);
      ids[name] = r.asset.id;
    }
    // The stills are known as images when an edit uses them.
    const c = await call(srv, 'compose_edit', {
      project_id: project,
      clips: [
        { asset_id: ids['still.jpg'], start: 0, end: 1 },
        { asset_id: ids['img000.png'], start: 0, end: 1 },
      ],
    });
    const msgs = (c.structuredContent as { diagnostics: { message: string }[] }).diagnostics.map((d) => d.message);
    expect(msgs).toEqual([
      expect.stringMatching(/is an image; a cut needs a video/),
      expect.stringMatching(/is an image; a cut needs a video/),
    ]);
    // And the video named like a pattern plays as itself.
    const p = structured<{ measured_seconds: number }>(
      await call(srv, 'preview_edit', {
        project_id: project,
        resolution: '320x180',
        fps: 25,
        clips: [{ asset_id: ids['img%03d.png'], start: 0, end: 2 }],
      }),
    );
    expect(Math.abs(p.measured_seconds - 2)).toBeLessThanOrEqual(0.04);
  }, 60_000);
});

describe('two processes, one data dir', () => {
  it('lose nothing when both write at once', async () => {
    const a = await spawnServer(env());
    const b = await spawnServer(env());
    try {
      const shared = structured<{ project: { id: string } }>(
        await call(a, 'create_project', { name: 'shared', description: '' }),
      ).project.id;
      const jobs: Promise<unknown>[] = [];
      for (let i = 0; i < 8; i++) {
        jobs.push(
          call(a, 'create_project', { name: `from a ${i}`, description: '' }),
          call(b, 'create_project', { name: `from b ${i}`, description: '' }),
        );
        // again: a copy each time (the same content is otherwise imported once: see assets.test.ts).
        jobs.push(
          call(i % 2 ? a : b, 'import_media', { project_id: shared, path: join(allowed, 'voice.m4a'), again: true }),
        );
      }
      const results = await Promise.all(jobs);
      for (const r of results) expect((r as { isError?: boolean }).isError, textOf(r)).toBeFalsy();
      const { projects } = structured<{ projects: { name: string }[] }>(await call(b, 'list_projects', { limit: 100 }));
      const names = projects.map((p) => p.name);
      for (let i = 0; i < 8; i++) expect(names).toEqual(expect.arrayContaining([`from a ${i}`, `from b ${i}`]));
      const { project } = structured<{ project: { assets_total: number } }>(
        await call(a, 'get_project', { project_id: shared }),
      );
      expect(project.assets_total).toBe(8);
      // The count the listing keeps, written by both processes under the lock, lost none of them.
      for (const s of [a, b])
        expect(
          structured<{ projects: { id: string; asset_count: number }[] }>(
            await call(s, 'list_projects', { limit: 100 }),
          ).projects.find((p) => p.id === shared)?.asset_count,
        ).toBe(8);
      // No temporary files or locks left behind.
      expect(readdirSync(dataDir).filter((f) => f.startsWith('.'))).toEqual([]);
      expect(readdirSync(join(dataDir, 'projects')).filter((f) => f.startsWith('.'))).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});

/** A server (its own pid, no wrapper) rendering 96 s of 1080p in a new project, with ffmpeg running. */
async function startLongRender(
  name: string,
): Promise<{ server: Spawned; project: string; render: { asset_id: string } }> {
  const server = await spawnServer(env(), { tee: false });
  const project = structured<{ project: { id: string } }>(
    await call(server, 'create_project', { name, description: '' }),
  ).project.id;
  const red = structured<Imported>(
    await call(server, 'import_media', { project_id: project, path: join(allowed, 'red.mp4') }),
  ).asset.id;
  const long = {
    project_id: project,
    resolution: '1920x1080',
    clips: Array.from({ length: 12 }, () => ({ asset_id: red, start: 0, end: 8 })),
  };
  const { render } = structured<{ render: { asset_id: string } }>(await call(server, 'render_edit', long));
  await expect
    .poll(() => pidsMatching(join(dataDir, 'projects', project)).length, { timeout: 15_000 })
    .toBeGreaterThan(0);
  return { server, project, render };
}

describe('a render killed midway', () => {
  it('leaves a failed asset and no file posing as the render', async () => {
    const { server: victim, project, render } = await startLongRender('doomed');
    process.kill(victim.pid!, 'SIGKILL');
    const next = await spawnServer(env());
    try {
      const s = await call(next, 'get_render_status', { project_id: project, asset_id: render.asset_id });
      expect(s.structuredContent).toMatchObject({
        status: 'failed',
        done: false,
        failed: true,
        reason: expect.stringMatching(/interrupted/),
      });
      // The orphaned ffmpeg (it outlives its parent) was stopped by the server that found the render interrupted.
      await expect.poll(() => pidsMatching(join(dataDir, 'projects', project)).length, { timeout: 5000 }).toBe(0);
      expect(
        readdirSync(join(dataDir, 'projects', project, 'media')).filter((f) => f.includes(render.asset_id)),
      ).toEqual([]);
      const { project: p } = structured<{ project: { assets: { id: string; url?: string }[] } }>(
        await call(next, 'get_project', { project_id: project }),
      );
      expect(p.assets.find((a) => a.id === render.asset_id)?.url).toBeUndefined();
    } finally {
      await next.close();
      await victim.client.close().catch(() => {});
    }
  }, 60_000);
});

describe('a render when the client goes away', () => {
  it('is stopped with the server and marked failed, with no partial file left', async () => {
    const { server: s, project, render } = await startLongRender('left behind');
    await s.close(); // closes the server's stdin: it stops its renders and exits
    await expect.poll(() => pidsMatching(join(dataDir, 'projects', project)).length, { timeout: 10_000 }).toBe(0);
    const next = await spawnServer(env());
    try {
      const st = await call(next, 'get_render_status', { project_id: project, asset_id: render.asset_id });
      expect(st.structuredContent).toMatchObject({
        status: 'failed',
        failed: true,
        reason: 'the render was stopped before it finished',
      });
      expect(
        readdirSync(join(dataDir, 'projects', project, 'media')).filter((f) => f.includes(render.asset_id)),
      ).toEqual([]);
    } finally {
      await next.close();
    }
  }, 60_000);
});

describe('the asset count a listing shows', () => {
  const countOf = async (s: Spawned, id: string) =>
    structured<{ projects: { id: string; asset_count: number }[] }>(
      await call(s, 'list_projects', { limit: 100 }),
    ).projects.find((p) => p.id === id)?.asset_count;
  it('follows imports, is repaired after a crash left it short, and is rebuilt from the records without its index', async () => {
    const s = await spawnServer(env());
    try {
      const id = structured<{ project: { id: string } }>(
        await call(s, 'create_project', { name: 'counted', description: '' }),
      ).project.id;
      expect(await countOf(s, id)).toBe(0);
      const first = structured<Imported>(
        await call(s, 'import_media', { project_id: id, path: join(allowed, 'voice.m4a') }),
      ).asset.id;
      await call(s, 'import_media', { project_id: id, path: join(allowed, 'red.mp4') });
      expect(await countOf(s, id)).toBe(2);
      // As a writer killed between an asset record and the count leaves it: one record more than counted.
      const assets = join(dataDir, 'projects', id, 'assets');
      const extra = randomUUID();
      writeFileSync(
        join(assets, `${extra}.json`),
        readFileSync(join(assets, `${first}.json`), 'utf8').replaceAll(first, extra),
      );
      expect(await countOf(s, id)).toBe(2);
      // get_project counts the records and puts the stored count right.
      expect(
        structured<{ project: { assets_total: number } }>(await call(s, 'get_project', { project_id: id })).project
          .assets_total,
      ).toBe(3);
      expect(await countOf(s, id)).toBe(3);
      expect(JSON.parse(readFileSync(join(dataDir, 'projects', id, 'project.json'), 'utf8')).asset_count).toBe(3);
      // A record of an older version (no count) is counted from its assets folder.
      const recPath = join(dataDir, 'projects', id, 'project.json');
      const { asset_count: _, ...older } = JSON.parse(readFileSync(recPath, 'utf8'));
      writeFileSync(recPath, JSON.stringify(older));
      expect(await countOf(s, id)).toBe(3);
      // No index (an older version's data dir): rebuilt from the records, by another server too.
      rmSync(join(dataDir, 'index.json'));
      const other = await spawnServer(env());
      try {
        expect(await countOf(other, id)).toBe(3);
        expect(existsSync(join(dataDir, 'index.json'))).toBe(true);
      } finally {
        await other.close();
      }
    } finally {
      await s.close();
    }
  });
});

describe('bad records', () => {
  type Listed = {
    projects: { id: string; name: string; asset_count: number }[];
    problems?: { path: string; message: string }[];
  };
  it('are reported with their path beside everything healthy, by list_projects, get_project and resources/list', async () => {
    const s = await spawnServer(env());
    try {
      const make = async (name: string) =>
        structured<{ project: { id: string } }>(await call(s, 'create_project', { name, description: '' })).project.id;
      const [broken, typed, healthy] = [await make('half written'), await make('wrong types'), await make('healthy')];
      const asset = structured<Imported>(
        await call(s, 'import_media', { project_id: healthy, path: join(allowed, 'voice.m4a') }),
      ).asset.id;
      const rec = (id: string) => join(dataDir, 'projects', id, 'project.json');
      writeFileSync(rec(broken), '{"id": "half a rec');
      writeFileSync(rec(typed), JSON.stringify({ ...JSON.parse(readFileSync(rec(typed), 'utf8')), name: 123 }));
      const assets = join(dataDir, 'projects', healthy, 'assets');
      const badAssets = {
        array: '[]',
        null: 'null',
        noId: JSON.stringify({
          keyname: 'x',
          asset_type: 'video',
          status: 'uploaded',
          uploaded: true,
          created_at: '2026-01-01T00:00:00.000000',
          file: null,
        }),
      };
      const badIds = Object.fromEntries(
        Object.entries(badAssets).map(([k, text]) => {
          const id = randomUUID();
          writeFileSync(join(assets, `${id}.json`), text);
          return [k, id];
        }),
      );
      // Not even a file: a folder by a record's name.
      badIds.folder = randomUUID();
      mkdirSync(join(assets, `${badIds.folder}.json`));

      const check = async (srvUnderTest: Spawned) => {
        const l = await call(srvUnderTest, 'list_projects', { limit: 100 });
        expect(l.isError, textOf(l)).toBeFalsy();
        const listed = l.structuredContent as Listed;
        const ids = listed.projects.map((p) => p.id);
        expect(ids).toContain(healthy);
        expect(ids).not.toContain(broken);
        expect(ids).not.toContain(typed);
        expect(listed.problems).toEqual(
          expect.arrayContaining([
            {
              path: rec(broken),
              message: expect.stringMatching(
                /^the record .*project\.json is corrupt \(.*JSON.*\); fix it or move it out of the data dir/,
              ),
            },
            { path: rec(typed), message: expect.stringMatching(/is corrupt \(name: .*string.*\)/) },
          ]),
        );
        expect(textOf(l)).toContain(rec(broken));
        expect(textOf(l)).not.toMatch(/is not a function|unexpected failure/);

        const g = await call(srvUnderTest, 'get_project', { project_id: healthy });
        expect(g.isError, textOf(g)).toBeFalsy();
        const { project, problems } = g.structuredContent as {
          project: { assets: { id: string }[] };
          problems: { path: string; message: string }[];
        };
        expect(project.assets.map((a) => a.id)).toEqual([asset]);
        expect(problems.map((p) => p.path).sort()).toEqual(
          Object.values(badIds)
            .map((id) => join(assets, `${id}.json`))
            .sort(),
        );
        for (const p of problems)
          expect(p.message).toMatch(/(is corrupt|cannot be read) \(.+\); fix it or move it out/);

        const bad = await call(srvUnderTest, 'get_project', { project_id: typed });
        expect(bad.isError).toBe(true);
        expect(textOf(bad)).toContain(`the record ${rec(typed)} is corrupt (name:`);

        const { resources } = await srvUnderTest.client.listResources();
        const uris = resources.map((r) => r.uri);
        expect(uris).toContain(`vj://projects/${healthy}`);
        expect(uris).not.toContain(`vj://projects/${broken}`);
      };
      // The running server (its listing index predates the damage), then with the index gone (rebuilt from the
      // records).
      await check(s);
      expect(s.stderr()).toContain(`listing project resources: the record ${rec(broken)} is corrupt`);
      rmSync(join(dataDir, 'index.json'), { force: true });
      const fresh = await spawnServer(env());
      try {
        await check(fresh);
      } finally {
        await fresh.close();
      }
    } finally {
      await s.close();
    }
  });
});
