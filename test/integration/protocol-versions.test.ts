// Every session gets the content types its protocol version defines: resource_link only from 2025-06-18,
// audio only from 2025-03-26. Driven raw, on the local backend, so the version is exactly the one asked for.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMedium } from '../fixtures/media.mjs';
import { RawClient, type Reply } from '../helpers/raw-client.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-versions-'));
const allowed = join(root, 'allowed');
const env = {
  CUTROOM_DATA_DIR: join(root, 'data'),
  CUTROOM_CACHE_DIR: join(root, 'cache'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_RENDER_WAIT_MS: '30000',
};
const clients: RawClient[] = [];

beforeAll(() => {
  mkdirSync(allowed, { recursive: true });
  copyFileSync(makeMedium('red'), join(allowed, 'red.mp4'));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

type Content = { type: string; text?: string; uri?: string };

async function call(
  client: RawClient,
  name: string,
  args: Record<string, unknown>,
): Promise<{ content: Content[]; structuredContent?: Record<string, unknown>; isError?: boolean }> {
  const r: Reply = await client.request('tools/call', { name, arguments: args }, 90_000);
  if (!r.result) throw new Error(`${name}: ${JSON.stringify(r.error)}`);
  const result = r.result as { content: Content[]; isError?: boolean };
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result;
}

/** A session at `version` with a project holding the red clip; returns what preview_edit and render_edit gave. */
async function session(version: string) {
  const client = new RawClient(env);
  clients.push(client);
  const init = await client.initialize(version);
  expect(init.protocolVersion).toBe(version);
  const project = (
    await call(client, 'create_project', { name: `versions ${version}`, description: 'protocol versions test' })
  ).structuredContent!.project as { id: string };
  const asset = (await call(client, 'import_media', { project_id: project.id, path: join(allowed, 'red.mp4') }))
    .structuredContent!.asset as { id: string };
  const edit = {
    project_id: project.id,
    resolution: '320x180',
    fps: 25,
    clips: [{ asset_id: asset.id, start: 0, end: 1 }],
  };
  const preview = await call(client, 'preview_edit', edit);
  const render = await call(client, 'render_edit', { ...edit, wait: true });
  return { preview, render };
}

const types = (r: { content: Content[] }) => r.content.map((c) => c.type);

describe('content types by protocol version', () => {
  for (const [version, allowedTypes] of [
    ['2024-11-05', ['text', 'image', 'resource']],
    ['2025-03-26', ['text', 'image', 'audio', 'resource']],
  ] as const) {
    it(`a ${version} session gets no resource_link: the link's URI comes as text`, async () => {
      const { preview, render } = await session(version);
      for (const r of [preview, render]) for (const t of types(r)) expect(allowedTypes).toContain(t);
      expect(
        preview.content.some((c) => c.type === 'text' && /cutroom:\/\/previews\/[^/]+\/preview\.mp4/.test(c.text!)),
      ).toBe(true);
      const renderId = (render.structuredContent!.render as { asset_id: string }).asset_id;
      expect(render.content.some((c) => c.type === 'text' && c.text!.includes(`/renders/${renderId}`))).toBe(true);
    }, 120_000);
  }

  it('a 2025-06-18 session still gets resource_link items', async () => {
    const { preview, render } = await session('2025-06-18');
    expect(preview.content.find((c) => c.type === 'resource_link')?.uri).toMatch(
      /^cutroom:\/\/previews\/[^/]+\/preview\.mp4$/,
    );
    expect(render.content.find((c) => c.type === 'resource_link')?.uri).toMatch(
      /^vj:\/\/projects\/[^/]+\/renders\/[^/]+$/,
    );
  }, 120_000);
});
