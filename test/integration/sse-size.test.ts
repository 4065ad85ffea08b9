// Messages every SDK reads (issue 48): over HTTP on protocol 2025-11-25 every answer comes as server-sent events, and
// the Python SDK's client refuses an event over 1 MiB ("Server-sent event exceeded the 1048576 byte limit"). A
// 30-cut preview of busy footage (its contact sheet the largest part of the result) and every part of its video
// must each come in events under that. The Python SDK cannot be installed here (no PyPI; Debian 12 has no
// python3-mcp, and its httpx, anyio and pydantic are older than the SDK needs), so a raw HTTP reader stands in for
// it: it sends what the Python client sends and measures each event's data as httpx2's reader does, in bytes; the
// TypeScript SDK client then reads the same preview and parts.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../helpers/harness.js';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';

const TOKEN = 'sse-size-token-0123456789abcdef';
/** What httpx2's SSE reader takes by default, per event. */
const PYTHON_EVENT_LIMIT = 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), 'cutroom-sse-'));
let srv: HttpServer;
let client: Client;
let projectId: string;
let assetId: string;

/** Busy footage: a moving test pattern under strong noise (JPEG frames of it are large), 12 s at 25 fps. */
function busyFootage(dir: string): string {
  const file = join(dir, 'busy.mp4');
  const r = spawnSync('ffmpeg', [
    '-v', 'error', '-y',
    '-f', 'lavfi', '-i', 'testsrc2=s=640x360:r=25:d=12,noise=alls=60:allf=t',
    '-f', 'lavfi', '-i', 'sine=f=300:d=12:sample_rate=48000',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18', '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-shortest', file,
  ]); // prettier-ignore
  if (r.status !== 0) throw new Error(String(r.stderr));
  return file;
}

/** One POST as a 2025-11-25 client sends it, its answer read as server-sent events: each event's data and its size. */
async function post(body: unknown): Promise<{ type: string; events: { data: string; bytes: number }[] }> {
  const res = await fetch(srv.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${TOKEN}`,
    },
    body: JSON.stringify(body),
  });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (!type.startsWith('text/event-stream')) return { type, events: [{ data: text, bytes: Buffer.byteLength(text) }] };
  const events = text
    .split(/\r?\n\r?\n/)
    .map((block) =>
      block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter(Boolean)
    .map((data) => ({ data, bytes: Buffer.byteLength(data) }));
  return { type, events };
}

/** The JSON-RPC answer to request `id` among the events. */
const answerTo = (events: { data: string }[], id: number) =>
  events.map((e) => JSON.parse(e.data) as { id?: number; result?: Record<string, unknown> }).find((m) => m.id === id)!;

beforeAll(async () => {
  const allowed = join(root, 'allowed');
  mkdirSync(allowed, { recursive: true });
  const file = busyFootage(allowed);
  srv = await startHttpServer({
    CUTROOM_HTTP_TOKEN: TOKEN,
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: allowed,
  });
  client = new Client({ name: 'sse-size', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(srv.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  const made = await client.callTool({ name: 'create_project', arguments: { name: 'busy', description: 'x' } });
  projectId = (made.structuredContent as { project: { id: string } }).project.id;
  const imported = await client.callTool({ name: 'import_media', arguments: { project_id: projectId, path: file } });
  assetId = (imported.structuredContent as { asset: { id: string } }).asset.id;
}, 120_000);

afterAll(async () => {
  await client?.close();
  await srv?.stop();
});

describe('a 30-cut preview over HTTP on 2025-11-25', () => {
  let previewId = '';
  it('comes in events under 1 MiB each, its contact sheet inline', async () => {
    const clips = Array.from({ length: 30 }, (_, i) => ({ asset_id: assetId, start: i * 0.4, end: i * 0.4 + 0.4 }));
    let args: Record<string, unknown> = { project_id: projectId, clips, resolution: '640x360', fps: 25 };
    const events: { data: string; bytes: number }[] = [];
    let result: { isError?: boolean; content: { type: string; data?: string }[]; structuredContent?: unknown };
    // On a loaded machine the preview may outlast its call: followed with preview_edit {preview_id} until done, every
    // event of every call measured.
    for (let id = 7; ; id++) {
      const call = await post({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'preview_edit', arguments: args, _meta: { progressToken: `p${id}` } },
      });
      expect(call.type).toMatch(/^text\/event-stream/);
      events.push(...call.events);
      result = answerTo(call.events, id).result as typeof result;
      expect(result.isError, textOf(result)).toBeFalsy();
      const out = result.structuredContent as { preview_id: string; status?: string };
      previewId = out.preview_id;
      if (out.status !== 'rendering') break;
      args = { preview_id: previewId };
    }
    const sheet = result.content.find((c) => c.type === 'image')!;
    // Busy footage: the sheet is large (it was over 1 MiB in a message before), yet every event fits.
    expect(Buffer.from(sheet.data!, 'base64').length).toBeGreaterThan(400 * 1024);
    for (const e of events) expect(e.bytes).toBeLessThanOrEqual(PYTHON_EVENT_LIMIT);
  }, 300_000);

  it('its video is read in parts, each in an event under 1 MiB, and the parts join into the whole', async () => {
    const uri = `cutroom://previews/${previewId}/preview.mp4`;
    const first = await post({ jsonrpc: '2.0', id: 8000, method: 'resources/read', params: { uri } });
    for (const e of first.events) expect(e.bytes).toBeLessThanOrEqual(PYTHON_EVENT_LIMIT);
    const manifest = JSON.parse((answerTo(first.events, 8000).result!.contents as { text: string }[])[0]!.text) as {
      size: number;
      sha256: string;
      parts: { uri: string; length: number }[];
    };
    expect(manifest.parts.length).toBeGreaterThan(1);
    const bytes: Buffer[] = [];
    for (const [i, part] of manifest.parts.entries()) {
      const read = await post({ jsonrpc: '2.0', id: 100 + i, method: 'resources/read', params: { uri: part.uri } });
      for (const e of read.events) expect(e.bytes, part.uri).toBeLessThanOrEqual(PYTHON_EVENT_LIMIT);
      const blob = (answerTo(read.events, 100 + i).result!.contents as { blob: string }[])[0]!.blob;
      bytes.push(Buffer.from(blob, 'base64'));
    }
    const whole = Buffer.concat(bytes);
    expect(whole.length).toBe(manifest.size);
    expect(createHash('sha256').update(whole).digest('hex')).toBe(manifest.sha256);
  }, 120_000);

  it('the TypeScript SDK client reads the same preview and parts', async () => {
    const read = await client.readResource({ uri: `cutroom://previews/${previewId}/preview.mp4` });
    const manifest = JSON.parse((read.contents[0] as { text: string }).text) as { parts: { uri: string }[] };
    const part = await client.readResource({ uri: manifest.parts[0]!.uri });
    expect((part.contents[0] as { blob: string }).blob.length).toBeGreaterThan(0);
  }, 60_000);
});
