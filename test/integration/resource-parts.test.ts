// Every resource whose body can pass one message is served in parts (issue 30, item 2): a transcript, an inspection
// and an exported timeline over the part size (3 KiB here, CUTROOM_RESOURCE_PART_BYTES) are read as a manifest and
// parts that join into the whole; the project resource lists at most 1000 assets and says how to page the rest.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { patternSource } from '../helpers/pattern-source.js';
import { makeSpeechMedia } from '../helpers/speech-media.js';

const PART = 3072;
const root = mkdtempSync(join(tmpdir(), 'cutroom-parts-'));
const allowed = join(root, 'allowed');
let server: Spawned;
/** The same folders with the default part size: it sends these resources whole. */
let whole: Spawned;
let projectId: string;
let pattern: string;
let talk: string;

type Manifest = {
  uri: string;
  mimeType: string;
  size: number;
  sha256: string;
  parts: { uri: string; offset: number; length: number }[];
};
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};
const call = (name: string, args: Record<string, unknown>) =>
  server.client.callTool({ name, arguments: args }, { timeout: 120_000 });

/** Reads `uri`, which must answer with a manifest, and every part it names; the joined bytes and the manifest. */
async function readInParts(uri: string): Promise<{ bytes: Buffer; manifest: Manifest }> {
  const item = (await server.client.readResource({ uri })).contents[0] as {
    mimeType: string;
    text: string;
    _meta?: Record<string, unknown>;
  };
  const manifest = item._meta?.['cutroom/parts'] as Manifest;
  expect(manifest, `${uri} was served whole`).toBeDefined();
  expect(JSON.parse(item.text)).toMatchObject(manifest);
  expect(manifest.parts.length).toBe(Math.ceil(manifest.size / PART));
  expect(manifest.parts.length).toBeGreaterThan(1);
  const parts: Buffer[] = [];
  for (const p of manifest.parts) {
    const blob = ((await server.client.readResource({ uri: p.uri })).contents[0] as { blob: string }).blob;
    parts.push(Buffer.from(blob, 'base64'));
  }
  const bytes = Buffer.concat(parts);
  expect(bytes.length).toBe(manifest.size);
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(manifest.sha256);
  return { bytes, manifest };
}

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  pattern = join(allowed, 'pattern.mp4');
  copyFileSync(patternSource(130), pattern);
  talk = makeSpeechMedia(allowed).video;
  const env = {
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  };
  server = await spawnServer({ ...env, CUTROOM_RESOURCE_PART_BYTES: String(PART) });
  whole = await spawnServer(env);
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'parts', description: 'resources in parts' }),
  ).project.id;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await whole?.close();
});

/** The resource as the server with the default part size sends it: whole, as text. */
async function wholeText(uri: string): Promise<string> {
  const item = (await whole.client.readResource({ uri })).contents[0] as { text?: string };
  expect(item.text).toBeDefined();
  return item.text!;
}

describe('resources over the part size', () => {
  it('an exported timeline: the parts join into the file export_edit wrote', async () => {
    const asset = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: pattern }),
    ).asset.id;
    const clips = Array.from({ length: 8 }, (_, i) => ({ asset_id: asset, start: i * 10, end: i * 10 + 2 }));
    const result = await call('export_edit', {
      project_id: projectId,
      clips,
      resolution: '320x180',
      fps: 25,
      format: 'otio',
    });
    const exported = structured<{ path: string }>(result);
    const uri = (result as { content: { type: string; uri?: string }[] }).content.find(
      (c) => c.type === 'resource_link',
    )!.uri!;
    const { bytes, manifest } = await readInParts(uri);
    expect(manifest.mimeType).toMatch(/json/);
    expect(bytes.equals(readFileSync(exported.path))).toBe(true);
  }, 120_000);

  it('an inspection: the parts join into its JSON', async () => {
    const asset = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: pattern }),
    ).asset.id;
    structured(await call('inspect_asset', { project_id: projectId, asset_id: asset }));
    const uri = `vj://projects/${projectId}/assets/${asset}/inspection`;
    const { bytes, manifest } = await readInParts(uri);
    expect(manifest.mimeType).toBe('application/json');
    expect(bytes.toString('utf8')).toBe(await wholeText(uri));
    expect(JSON.parse(bytes.toString('utf8'))).toMatchObject({ asset_id: asset });
  }, 120_000);

  it('a transcript: the parts join into its JSON', async () => {
    const asset = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: talk }),
    ).asset.id;
    structured(await call('transcribe_asset', { project_id: projectId, asset_id: asset }));
    const uri = `vj://projects/${projectId}/assets/${asset}/transcript`;
    const { bytes } = await readInParts(uri);
    expect(bytes.toString('utf8')).toBe(await wholeText(uri));
    const transcript = JSON.parse(bytes.toString('utf8')) as { asset_id: string; words: { word: string }[] };
    expect(transcript.asset_id).toBe(asset);
    expect(transcript.words.length).toBeGreaterThan(5);
  }, 180_000);
});

describe('the project resource', () => {
  it('lists the first 1000 assets and says get_project pages the rest', async () => {
    const service = await new FakeService().start();
    const other = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: join(root, 'remote-cache'),
    });
    try {
      const project = service.addProject({ name: 'many assets' });
      for (let i = 0; i < 1005; i++) service.addAsset(project.id, { keyname: `clip-${i}` });
      const read = await other.client.readResource({ uri: `vj://projects/${project.id}` });
      const body = JSON.parse((read.contents[0] as { text: string }).text) as {
        assets: unknown[];
        assets_total: number;
        assets_left_out?: string;
      };
      expect(body.assets).toHaveLength(1000);
      expect(body.assets_total).toBe(1005);
      expect(body.assets_left_out).toBe('5 more assets: get_project with asset_offset 1000 pages them');
      const page = await other.client.callTool({
        name: 'get_project',
        arguments: { project_id: project.id, asset_offset: 1000 },
      });
      expect(structured<{ project: { assets: unknown[] } }>(page).project.assets).toHaveLength(5);
    } finally {
      await other.close();
      await service.stop();
    }
  }, 60_000);
});
