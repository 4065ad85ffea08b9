// A hostile service cannot make cutroom read local files or other hosts: its asset links are read only over
// http(s), only from the host they name, with no redirect followed.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

let service: FakeService;
let srv: Spawned;
let cacheDir: string;
let media: Record<string, string>;
/** Paths the "other host" was asked for: it must never be asked. */
const otherHits: string[] = [];
let other: Server;
let redirector: Server;
let otherUrl: string;
let redirectUrl: string;

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
};

beforeAll(async () => {
  media = makeAll();
  service = await new FakeService().start();
  cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-hostile-'));
  // Another origin (another port) that would serve real media if asked.
  other = createServer((req, res) => {
    otherHits.push(req.url ?? '');
    res.writeHead(404).end();
  });
  otherUrl = await listen(other);
  redirector = createServer((req, res) => res.writeHead(302, { location: `${otherUrl}/stolen.mp4` }).end());
  redirectUrl = await listen(redirector);
  srv = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_CACHE_DIR: cacheDir });
});
afterAll(async () => {
  await srv?.close();
  await service?.stop();
  other?.close();
  redirector?.close();
});

/** A project with one honest clip and one asset whose link the service chose. */
function projectWith(url: string) {
  const p = service.addProject({ name: 'hostile' });
  const keyname = `red-${p.id.slice(0, 8)}`;
  service.media.set(keyname, media.red!);
  const honest = service.addAsset(p.id, { keyname }).id;
  const hostile = service.addAsset(p.id, { url }).id;
  return { projectId: p.id, honest, hostile };
}

const previewsKept = () =>
  existsSync(join(cacheDir, 'previews')) ? readdirSync(join(cacheDir, 'previews')).length : 0;

const preview = (projectId: string, clips: { asset_id: string; start: number; end: number }[]) =>
  srv.client.callTool(
    { name: 'preview_edit', arguments: { project_id: projectId, clips, resolution: '320x180', fps: 25 } },
    { timeout: 60_000 },
  );

describe('a hostile service', () => {
  it('cannot make preview_edit read a local file through a file: link', async () => {
    const { projectId, honest, hostile } = projectWith(pathToFileURL(media.blue!).href);
    const before = previewsKept();
    const r = await preview(projectId, [
      { asset_id: honest, start: 0, end: 1 },
      { asset_id: hostile, start: 0, end: 1 },
    ]);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      `asset ${hostile} could not be read (the asset url is a file: link, which cutroom reads only from its local backend, never from a service); get_project shows its status and link`,
    );
    expect((r.content as { type: string }[]).some((c) => c.type === 'image')).toBe(false);
    expect(previewsKept()).toBe(before);
    // compose_edit says the same, as a warning at the cut: the length could not be checked.
    const composed = await srv.client.callTool({
      name: 'compose_edit',
      arguments: { project_id: projectId, clips: [{ asset_id: hostile, start: 0, end: 1 }] },
    });
    expect(JSON.stringify(composed.structuredContent)).toMatch(
      /file: link, which cutroom reads only from its local backend/,
    );
  });

  it('cannot make ffmpeg follow a redirect to another host', async () => {
    const { projectId, honest, hostile } = projectWith(`${redirectUrl}/clip.mp4?Signature=abc`);
    const r = await preview(projectId, [
      { asset_id: honest, start: 0, end: 1 },
      { asset_id: hostile, start: 0, end: 1 },
    ]);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(new RegExp(`^asset ${hostile} could not be read \\(ffprobe cannot read it`));
    expect(otherHits).toEqual([]);
    // The honest asset of the same service still previews.
    const ok = await preview(projectId, [{ asset_id: honest, start: 0, end: 1 }]);
    expect(ok.isError).toBeFalsy();
    expect(otherHits).toEqual([]);
  });
});
