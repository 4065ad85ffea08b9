// Completion of resource template arguments that name things cutroom has made: render asset ids and previews.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';

let service: FakeService;
let srv: Spawned;
let projectId: string;
let ids: Record<MediaName, string>;

beforeAll(async () => {
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
  srv = await spawnServer({
    VJ_API_KEY: service.apiKey,
    VJ_API_URL: service.url,
    CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-cache-')),
  });
});
afterAll(async () => {
  await srv?.close();
  await service?.stop();
});

const complete = (uri: string, name: string, value: string, args?: Record<string, string>) =>
  srv.client
    .complete({
      ref: { type: 'ref/resource', uri },
      argument: { name, value },
      ...(args ? { context: { arguments: args } } : {}),
    })
    .then((r) => r.completion.values);

describe('completion', () => {
  it("offers a project's renders (generated videos), newest first, and nothing else of it", async () => {
    const p = service.addProject();
    const older = service.addAsset(p.id, { asset_type: 'generated_video' });
    const newer = service.addAsset(p.id, { asset_type: 'generated_video' });
    const voice = service.addAsset(p.id, { asset_type: 'audio' });
    older.created_at = '2026-01-01T10:00:00.000000';
    newer.created_at = '2026-01-02T10:00:00.000000';
    const template = 'vj://projects/{project_id}/renders/{asset_id}';
    expect(await complete(template, 'asset_id', '', { project_id: p.id })).toEqual([newer.id, older.id]);
    expect(await complete(template, 'asset_id', older.id.slice(0, 8), { project_id: p.id })).toEqual([older.id]);
    expect(await complete(template, 'asset_id', voice.id.slice(0, 8), { project_id: p.id })).toEqual([]);
    expect(await complete(template, 'asset_id', '', { project_id: 'not-a-uuid' })).toEqual([]);
  });

  it('offers the previews in the cache, newest first, and the files a preview has', async () => {
    const made: string[] = [];
    for (let i = 0; i < 2; i++) {
      // Two different edits (the same edit again would hand back the first preview).
      const r = await srv.client.callTool({
        name: 'preview_edit',
        arguments: { project_id: projectId, width: 160, clips: [{ asset_id: ids.red, start: 0, end: 1 + i * 0.04 }] },
      });
      if (r.isError) throw new Error(textOf(r));
      made.push((r.structuredContent as { preview_id: string }).preview_id);
    }
    const template = 'cutroom://previews/{preview_id}/{file}';
    const offered = await complete(template, 'preview_id', '');
    expect(offered).toEqual([made[1], made[0]]);
    expect(await complete(template, 'preview_id', made[1]!)).toEqual([made[1]]);
    expect(await complete(template, 'file', '', { preview_id: made[0]! })).toEqual(['preview.mp4', 'sheet.jpg']);
    expect(await complete(template, 'file', 'sh', { preview_id: made[0]! })).toEqual(['sheet.jpg']);
    expect(await complete(template, 'file', '', { preview_id: '20000101000000-00000000' })).toEqual([]);
  });

  it("offers a project's assets in the inspection and transcript templates (a transcript: no images)", async () => {
    const projects = await complete(
      'vj://projects/{project_id}/assets/{asset_id}/inspection',
      'project_id',
      projectId.slice(0, 6),
    );
    expect(projects).toContain(projectId);
    const inspectable = await complete('vj://projects/{project_id}/assets/{asset_id}/inspection', 'asset_id', '', {
      project_id: projectId,
    });
    expect([...inspectable].sort()).toEqual(Object.values(ids).sort());
    const audible = await complete('vj://projects/{project_id}/assets/{asset_id}/transcript', 'asset_id', '', {
      project_id: projectId,
    });
    expect([...audible].sort()).toEqual(
      Object.entries(ids)
        .filter(([name]) => name !== 'still')
        .map(([, id]) => id)
        .sort(),
    );
    expect(await complete('vj://projects/{project_id}/assets/{asset_id}/transcript', 'project_id', projectId)).toEqual([
      projectId,
    ]);
  });

  it("offers an export's files once its id is given", async () => {
    const r = await srv.client.callTool({
      name: 'export_edit',
      arguments: { project_id: projectId, format: 'fcpxml', clips: [{ asset_id: ids.red, start: 0, end: 1 }] },
    });
    if (r.isError) throw new Error(textOf(r));
    const { export_id: exportId, path } = r.structuredContent as { export_id: string; path: string };
    const file = path.split('/').pop()!;
    const template = 'cutroom://exports/{export_id}/{file}';
    expect(await complete(template, 'export_id', '')).toContain(exportId);
    expect(await complete(template, 'file', '', { export_id: exportId })).toEqual([file]);
    expect(await complete(template, 'file', 'zz', { export_id: exportId })).toEqual([]);
    expect(await complete(template, 'file', '', { export_id: '../etc' })).toEqual([]);
  });
});
