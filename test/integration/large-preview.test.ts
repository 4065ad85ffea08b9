// A preview over 20 MB read whole by the official TypeScript client over stdio (issue 30, item 2). That client closes
// the connection on any message over 10 MiB; cutroom serves the video as a manifest and parts of 3 MiB, so the bytes
// read equal the file, no line the server writes passes 8 MiB, and the session goes on.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-large-preview-'));
const allowed = join(root, 'allowed');
let server: Spawned;
let preview: { preview_id: string; path: string };

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

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  // Noise does not compress: 2.5 s of it at 1280x720 makes a preview of about 28 MB.
  const source = join(allowed, 'noise.mp4');
  const made = spawnSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'nullsrc=s=1280x720:r=25:d=2.5,geq=random(1)*255:random(2)*255:random(3)*255',
    '-f',
    'lavfi',
    '-i',
    'anoisesrc=d=2.5:r=48000',
    '-shortest',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '24',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    source,
  ]);
  if (made.status !== 0) throw new Error(`ffmpeg: ${made.stderr}`);
  server = await spawnServer({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_ALLOWED_DIRS: allowed,
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
  const call = (name: string, args: Record<string, unknown>) =>
    server.client.callTool({ name, arguments: args }, { timeout: 120_000 });
  const projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'noise', description: 'a large preview' }),
  ).project.id;
  const asset = structured<{ asset: { id: string } }>(
    await call('import_media', { project_id: projectId, path: source }),
  ).asset.id;
  preview = structured(
    await call('preview_edit', {
      project_id: projectId,
      clips: [{ asset_id: asset, start: 0, end: 2.5 }],
      resolution: '1280x720',
      fps: 25,
      width: 1280,
    }),
  );
}, 180_000);
afterAll(async () => {
  await server?.close();
});

describe('a preview over 20 MB, read by the official TypeScript client over stdio', () => {
  it('is read whole through its parts: the bytes equal the file, no message passes 8 MiB, and the session stays usable', async () => {
    const onDisk = readFileSync(preview.path);
    expect(onDisk.length).toBeGreaterThan(20e6);
    const uri = `cutroom://previews/${preview.preview_id}/preview.mp4`;
    const read = await server.client.readResource({ uri });
    expect(read.contents).toHaveLength(1);
    const item = read.contents[0] as { mimeType: string; text: string; _meta?: Record<string, unknown> };
    const manifest = item._meta?.['cutroom/parts'] as Manifest;
    expect(item.mimeType).toBe('application/json');
    expect(JSON.parse(item.text)).toMatchObject(manifest);
    expect(manifest).toMatchObject({
      uri,
      mimeType: 'video/mp4',
      size: onDisk.length,
      sha256: createHash('sha256').update(onDisk).digest('hex'),
    });
    expect(manifest.parts.length).toBe(Math.ceil(onDisk.length / (3 * 1024 * 1024)));

    const parts: Buffer[] = [];
    for (const p of manifest.parts) {
      const got = (await server.client.readResource({ uri: p.uri })).contents[0] as { blob: string };
      const bytes = Buffer.from(got.blob, 'base64');
      expect(bytes.length).toBe(p.length);
      expect(p.offset).toBe(parts.reduce((n, b) => n + b.length, 0));
      parts.push(bytes);
    }
    expect(Buffer.concat(parts).equals(onDisk)).toBe(true);

    // The session goes on: a call, and the contact sheet (small: one blob).
    const again = structured<{ preview_id: string; status: string }>(
      await server.client.callTool({ name: 'preview_edit', arguments: { preview_id: preview.preview_id } }),
    );
    expect(again).toMatchObject({ preview_id: preview.preview_id, status: 'done' });
    const sheet = (await server.client.readResource({ uri: `cutroom://previews/${preview.preview_id}/sheet.jpg` }))
      .contents[0] as { mimeType: string; blob: string };
    expect(sheet.mimeType).toBe('image/jpeg');
    expect(Buffer.from(sheet.blob, 'base64').equals(readFileSync(join(preview.path, '..', 'sheet.jpg')))).toBe(true);

    // Every line the server wrote: the parts were the largest, each about 4 MiB.
    const sizes = server.stdoutLines().map((l) => Buffer.byteLength(l));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(Math.max(...sizes)).toBeGreaterThan(4 * 1024 * 1024);
  }, 180_000);
});
