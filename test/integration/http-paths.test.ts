// Over HTTP, no result names a file of the server's (issue 34, item 5): a caller over the network cannot open the
// server's files, so results name them by cutroom:// URI (readable with resources/read) and never by a path in the
// server's cache dir, data dir or temporary folder. The whole local workflow is driven over Streamable HTTP through
// the built server (create a project, import, compose, preview, render, follow the render, export and import a
// timeline, inspect, transcribe, search, tighten, find moments, delete), with failures on purpose, and every
// resource listed is read (whole, or joined from its parts: parts of 3 KiB here): no text, structured content, link,
// notification or resource body holds any of those folders. The media the caller imports are named by the path they
// gave (the folders they may import from are theirs to name).
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { textOf } from '../helpers/harness.js';
import { mediaProject } from '../helpers/media-project.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { makeSpeechMedia } from '../helpers/speech-media.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = 'paths-token-0123456789abcdef';
const root = mkdtempSync(join(tmpdir(), 'cutroom-paths-'));
const media = join(root, 'media');
const server = { cache: join(root, 'server-cache'), data: join(root, 'server-data'), tmp: join(root, 'server-tmp') };
let srv: HttpServer;
let hosted: HttpServer | undefined;
let service: FakeService | undefined;
let files: { wav: string; video: string };
let client: Client;
/** Everything the server answered: tool results and resource contents, by what was asked. */
const answers: { what: string; answer: unknown }[] = [];
/** The resources read that came in parts. */
const parted: string[] = [];

type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string; uri?: string }[];
};
async function call(name: string, args: Record<string, unknown>): Promise<Result> {
  const r = (await client.callTool({ name, arguments: args }, { timeout: 180_000 })) as Result;
  answers.push({ what: `${name} ${JSON.stringify(args).slice(0, 120)}`, answer: r });
  return r;
}
async function ok(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await call(name, args);
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  return r.structuredContent ?? {};
}
/** The server's folders an answer names, if any. */
const leaks = (answer: unknown) => {
  const text = JSON.stringify(answer);
  return Object.entries(server)
    .filter(([, dir]) => text.includes(dir))
    .map(([name]) => name);
};

beforeAll(async () => {
  for (const d of [media, ...Object.values(server)]) mkdirSync(d, { recursive: true });
  files = makeSpeechMedia(media);
  srv = await startHttpServer({
    CUTROOM_DATA_DIR: server.data,
    CUTROOM_CACHE_DIR: server.cache,
    TMPDIR: server.tmp,
    CUTROOM_ALLOWED_DIRS: media,
    CUTROOM_HTTP_TOKEN: TOKEN,
    CUTROOM_RESOURCE_PART_BYTES: '3072',
  });
  client = await connectHttp(srv.url, { authorization: `Bearer ${TOKEN}` });
  // What the server sends besides answers (a failed call's log line, progress) is searched too.
  client.setNotificationHandler(
    'notifications/message',
    (n) => void answers.push({ what: 'notifications/message', answer: n }),
  );
  client.setNotificationHandler(
    'notifications/progress',
    (n) => void answers.push({ what: 'notifications/progress', answer: n }),
  );
}, 120_000);
afterAll(async () => {
  await client?.close().catch(() => {});
  await srv?.stop();
  await hosted?.stop();
  await service?.stop();
});

/**
 * A resource read whole: its text or bytes, joined from its parts when it comes as a manifest (checked against the
 * manifest's size and sha256), and what was read on the way (the manifest's text).
 */
async function readWhole(
  uri: string,
): Promise<{ mimeType?: string; text?: string; bytes?: Buffer; manifest?: string }> {
  const first = (await client.readResource({ uri })).contents[0] as {
    mimeType?: string;
    text?: string;
    blob?: string;
    _meta?: Record<string, unknown>;
  };
  const manifest = first._meta?.['cutroom/parts'] as
    { mimeType: string; size: number; sha256: string; parts: { uri: string }[] } | undefined;
  if (!manifest)
    return first.blob !== undefined
      ? { mimeType: first.mimeType, bytes: Buffer.from(first.blob, 'base64') }
      : { mimeType: first.mimeType, text: first.text ?? '' };
  const parts: Buffer[] = [];
  for (const part of manifest.parts)
    parts.push(
      Buffer.from(((await client.readResource({ uri: part.uri })).contents[0] as { blob: string }).blob, 'base64'),
    );
  const bytes = Buffer.concat(parts);
  expect(bytes.length, uri).toBe(manifest.size);
  expect(createHash('sha256').update(bytes).digest('hex'), uri).toBe(manifest.sha256);
  const isText = /^(text\/|application\/(json|xml))/.test(manifest.mimeType);
  return {
    mimeType: manifest.mimeType,
    manifest: first.text,
    ...(isText ? { text: bytes.toString('utf8') } : { bytes }),
  };
}

/** Every resource listed, and every resource a result linked to, read; only text is kept (bytes name no path). */
async function readAll(): Promise<Set<string>> {
  const uris = new Set<string>();
  for (const a of answers)
    for (const c of (a.answer as Result).content ?? []) if (c.type === 'resource_link' && c.uri) uris.add(c.uri);
  const listed = await client.listResources();
  answers.push({ what: 'resources/list', answer: listed });
  for (const r of listed.resources) uris.add(r.uri);
  answers.push({ what: 'resources/templates/list', answer: await client.listResourceTemplates() });
  for (const uri of uris) {
    const read = await readWhole(uri).catch((e: Error) => ({ error: e.message }));
    if ('manifest' in read && read.manifest) parted.push(uri);
    answers.push({ what: `resources/read ${uri}`, answer: 'bytes' in read ? { mimeType: read.mimeType } : read });
  }
  return uris;
}
function expectNoLeak() {
  const leaked = answers.map((a) => ({ what: a.what, leaks: leaks(a.answer) })).filter((a) => a.leaks.length);
  expect(
    leaked,
    leaked
      .map(
        (l) =>
          `${l.what}: ${l.leaks.join(', ')}\n${JSON.stringify(answers.find((a) => a.what === l.what)?.answer).slice(0, 600)}`,
      )
      .join('\n\n'),
  ).toEqual([]);
}

describe('over HTTP, results name no file of the server', () => {
  it('drives the whole local workflow, failures included, and no answer holds the cache dir, the data dir or the temporary folder', async () => {
    // The handshake's instructions too: they named the data dir ("local projects in /srv/...").
    answers.push({ what: 'initialize instructions', answer: { instructions: client.getInstructions() } });
    expect(client.getInstructions()).toMatch(/local projects on the server/);
    const project = (
      (await ok('create_project', { name: 'paths', description: 'no server paths' })) as { project: { id: string } }
    ).project.id;
    await ok('list_media', {});
    const video = ((await ok('import_media', { project_id: project, path: files.video })) as { asset: { id: string } })
      .asset.id;
    const voice = ((await ok('import_media', { project_id: project, path: files.wav })) as { asset: { id: string } })
      .asset.id;
    await ok('get_project', { project_id: project });
    await call('list_scripts', { project_id: project });
    const clips = [
      { asset_id: video, start: 0, end: 2 },
      { asset_id: video, start: 4, end: 6 },
    ];
    const composed = (await ok('compose_edit', {
      project_id: project,
      clips,
      overlays: [{ asset_id: voice, at: 0, until: 2 }],
      resolution: '320x180',
      fps: 25,
    })) as { edit_id: string };
    const preview = await call('preview_edit', { project_id: project, edit_id: composed.edit_id, width: 320 });
    expect(preview.isError, textOf(preview)).toBeFalsy();
    const previewUri = (preview.structuredContent as { path: string }).path;
    expect(previewUri).toMatch(/^cutroom:\/\/previews\/[\w-]+\/preview\.mp4$/);
    expect(textOf(preview)).toContain(previewUri);
    // The URI serves the video itself (in parts).
    const played = await readWhole(previewUri);
    expect(played.mimeType).toBe('video/mp4');
    expect(played.bytes?.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const render = await call('render_edit', { project_id: project, edit_id: composed.edit_id });
    expect(render.isError, textOf(render)).toBeFalsy();
    const renderId = (render.structuredContent as { render: { asset_id: string } }).render.asset_id;
    // Followed until done (within 180 s: a liveness bound for a loaded machine): the finished render's answer names
    // its file.
    let status: Result | undefined;
    await waitFor(
      async () => {
        status = await call('get_render_status', { project_id: project, asset_id: renderId });
        return (status.structuredContent as { done?: boolean } | undefined)?.done || status.isError;
      },
      { what: 'the render to end', timeoutMs: 180_000, intervalMs: 500 },
    );
    expect((status!.structuredContent as { done?: boolean }).done, textOf(status)).toBe(true);
    for (const format of ['otio', 'fcpxml', 'edl'] as const) {
      const exported = await call('export_edit', { project_id: project, edit_id: composed.edit_id, format });
      expect(exported.isError, textOf(exported)).toBeFalsy();
      // Named by its resource URI, which import_edit takes back.
      const named = (exported.structuredContent as { path: string }).path;
      expect(named).toMatch(new RegExp(`^cutroom://exports/[\\w-]+/cutroom-edit\\.${format}$`));
      const back = await call('import_edit', { project_id: project, path: named });
      expect(back.isError, textOf(back)).toBeFalsy();
    }
    await call('export_edit', { project_id: project, edit_id: composed.edit_id, format: 'otio', media: 'download' });
    await call('inspect_asset', { project_id: project, asset_id: video });
    await call('transcribe_asset', { project_id: project, asset_id: video });
    await call('search_transcripts', { project_id: project, query: 'hello' });
    await call('find_moments', { project_id: project, query: 'the' });
    await call('tighten_edit', { project_id: project, edit_id: composed.edit_id });
    // Failures on purpose: a file outside the folders, one that is not media, ids that name nothing.
    await call('import_media', { project_id: project, path: join(server.cache, 'nothing.mp4') });
    await call('import_media', { project_id: project, path: join(media, 'missing.mp4') });
    await call('import_edit', { project_id: project, path: join(server.data, 'edits', 'nothing.otio') });
    await call('preview_edit', {
      project_id: project,
      clips: [{ asset_id: '00000000-0000-4000-8000-000000000000', start: 0, end: 1 }],
    });
    await call('get_render_status', { project_id: project, render_id: '00000000-0000-4000-8000-000000000000' });
    await call('inspect_asset', { project_id: project, asset_id: '00000000-0000-4000-8000-000000000000' });

    const uris = await readAll();
    await call('delete_asset', { project_id: project, asset_id: voice });
    await ok('delete_asset', { project_id: project, asset_id: voice, confirm: true });

    // The workflow ran (a test that only failed would find nothing), and named its files by URI; failures were
    // logged to the client too.
    expect(answers.filter((a) => a.what === 'notifications/message').length).toBeGreaterThanOrEqual(3);
    expect(
      answers.filter((a) => /^(preview_edit|render_edit|export_edit)/.test(a.what) && !(a.answer as Result).isError)
        .length,
    ).toBeGreaterThanOrEqual(5);
    expect([...uris].some((u) => u.startsWith('cutroom://previews/'))).toBe(true);
    // Timelines larger than a part (3 KiB here) came in parts, and were searched joined.
    expect(parted.filter((u) => u.startsWith('cutroom://exports/')).length).toBeGreaterThan(0);
    expectNoLeak();
  }, 600_000);

  it('on the service backend (hosted callers) too: previews, exports, inspections, renders and failures', async () => {
    service = await new FakeService().start();
    const { projectId, ids } = mediaProject(service, 'hosted paths');
    hosted = await startHttpServer({
      VJ_BACKEND: 'remote',
      VJ_API_URL: service.url,
      CUTROOM_DATA_DIR: server.data,
      CUTROOM_CACHE_DIR: server.cache,
      TMPDIR: server.tmp,
      CUTROOM_ALLOWED_DIRS: media,
    });
    await client.close();
    client = await connectHttp(hosted.url, { authorization: `Bearer ${service.apiKey}` });
    client.setNotificationHandler(
      'notifications/message',
      (n) => void answers.push({ what: 'notifications/message', answer: n }),
    );
    answers.length = 0;
    await ok('list_projects', {});
    await ok('get_project', { project_id: projectId });
    const clips = [
      { asset_id: ids.red, start: 0, end: 1 },
      { asset_id: ids.blue, start: 0, end: 1 },
    ];
    const composed = (await ok('compose_edit', {
      project_id: projectId,
      clips,
      overlays: [{ asset_id: ids.voice, at: 0 }],
      resolution: '320x180',
      fps: 25,
    })) as { edit_id: string };
    const preview = await ok('preview_edit', { project_id: projectId, edit_id: composed.edit_id, width: 160 });
    expect(preview.path).toMatch(/^cutroom:\/\/previews\//);
    await ok('inspect_asset', { project_id: projectId, asset_id: ids.red });
    for (const format of ['otio', 'fcpxml', 'edl'] as const) {
      const exported = await ok('export_edit', { project_id: projectId, edit_id: composed.edit_id, format });
      expect(exported.path).toMatch(/^cutroom:\/\/exports\//);
      await ok('import_edit', { project_id: projectId, path: exported.path });
    }
    await call('render_edit', { project_id: projectId, edit_id: composed.edit_id });
    // Failures on purpose: a file of the server's by path, an id that names nothing.
    await call('import_edit', {
      project_id: projectId,
      path: join(server.cache, 'callers', 'x', 'exports', 'e', 'cut.otio'),
    });
    await call('preview_edit', { preview_id: '20990101000000-deadbeef' });
    await call('inspect_asset', { project_id: projectId, asset_id: '00000000-0000-4000-8000-000000000000' });
    const uris = await readAll();
    expect([...uris].some((u) => u.startsWith('cutroom://exports/'))).toBe(true);
    expectNoLeak();
  }, 300_000);
});
