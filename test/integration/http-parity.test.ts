// Every protocol behaviour the same over stdio and Streamable HTTP, tested on both: content types by the session's
// protocol version (a 2025-03-26 client gets no resource_link), a notifications/cancelled sent as its own request
// stops the call it names (and its ffmpeg), list changes advertised only where a notification can arrive, and
// logging (logging/setLevel, and a tool's failure as a log notification).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, type Reply } from '../helpers/raw-client.js';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { patternSource } from '../helpers/pattern-source.js';
import { pidsMatching } from '../helpers/processes.js';

const TOKEN = 'parity-token-0123456789abcdef';
const root = mkdtempSync(join(tmpdir(), 'cutroom-parity-'));
const allowed = join(root, 'allowed');
const env = (name: string) => ({
  CUTROOM_DATA_DIR: join(root, name, 'data'),
  CUTROOM_CACHE_DIR: join(root, name, 'cache'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_HTTP_TOKEN: TOKEN,
});
let srv: HttpServer;

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  copyFileSync(patternSource(130), join(allowed, 'pattern.mp4'));
  srv = await startHttpServer(env('http'));
}, 60_000);
afterAll(async () => {
  await srv?.stop();
});

/** One JSON-RPC message POSTed as a 2025-era client does; the replies, from a JSON body or an SSE stream. */
async function post(
  message: Record<string, unknown>,
  opts: { version?: string; signal?: AbortSignal } = {},
): Promise<{ status: number; replies: Reply[] }> {
  const res = await fetch(srv.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKEN}`,
      ...(opts.version ? { 'mcp-protocol-version': opts.version } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    signal: opts.signal,
  });
  const text = await res.text();
  const replies = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => JSON.parse(l.slice(5)) as Reply)
    : text.trim()
      ? [JSON.parse(text) as Reply]
      : [];
  return { status: res.status, replies };
}
const result = (replies: Reply[], id: number) => replies.find((r) => r.id === id);
const initialize = (version: string) =>
  post(
    {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'parity', version: '1' } },
    },
    { version },
  );

/** The stdio server, driven raw at a protocol version. */
async function stdio(version: string): Promise<{ client: RawClient; init: Record<string, unknown> }> {
  const client = new RawClient({ ...env(`stdio-${version}`) });
  const init = await client.initialize(version);
  return { client, init };
}

async function projectAndAsset(call: (name: string, args: Record<string, unknown>) => Promise<Reply | undefined>) {
  const made = await call('create_project', { name: 'parity', description: '' });
  const project = (made!.result!.structuredContent as { project: { id: string } }).project.id;
  const imported = await call('import_media', { project_id: project, path: join(allowed, 'pattern.mp4') });
  const asset = (imported!.result!.structuredContent as { asset: { id: string } }).asset.id;
  return { project, asset };
}
let nextId = 100;
const httpCall = (version: string) => async (name: string, args: Record<string, unknown>) => {
  const id = nextId++;
  return result((await post({ id, method: 'tools/call', params: { name, arguments: args } }, { version })).replies, id);
};

describe('the same protocol on both transports', () => {
  it('a 2025-03-26 session gets no resource_link (its link comes as text), over HTTP as on stdio; 2025-06-18 gets them', async () => {
    for (const version of ['2025-03-26', '2025-06-18']) {
      expect((await initialize(version)).status).toBe(200);
      const { project, asset } = await projectAndAsset(httpCall(version));
      const exported = await httpCall(version)('export_edit', {
        project_id: project,
        format: 'edl',
        clips: [{ asset_id: asset, start: 0, end: 2 }],
      });
      const types = (exported!.result!.content as { type: string }[]).map((c) => c.type);
      if (version === '2025-03-26') {
        expect(types).not.toContain('resource_link');
        expect(JSON.stringify(exported!.result!.content)).toMatch(
          /Resource cutroom:\/\/exports\/.*read it with resources\/read/,
        );
      } else expect(types).toContain('resource_link');
    }
    // A 2025-03-26 client sends no MCP-Protocol-Version header (it came in 2025-06-18): that version is assumed.
    const id = nextId++;
    const bare = result(
      (await post({ id, method: 'tools/call', params: { name: 'list_media', arguments: {} } })).replies,
      id,
    );
    expect(bare?.result).toBeDefined();
    const { client } = await stdio('2025-03-26');
    try {
      const { project, asset } = await projectAndAsset((name, args) =>
        client.request('tools/call', { name, arguments: args }),
      );
      const exported = await client.request('tools/call', {
        name: 'export_edit',
        arguments: { project_id: project, format: 'edl', clips: [{ asset_id: asset, start: 0, end: 2 }] },
      });
      expect((exported.result!.content as { type: string }[]).map((c) => c.type)).not.toContain('resource_link');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('advertises list changes on stdio only: over stateless HTTP no notification can follow an answer', async () => {
    const overHttp = result((await initialize('2025-06-18')).replies, 1)!.result!.capabilities as Record<
      string,
      { listChanged?: boolean }
    >;
    expect(overHttp.resources?.listChanged).toBe(false);
    expect(overHttp.tools?.listChanged).toBe(false);
    expect(overHttp.prompts?.listChanged).toBe(false);
    const { client, init } = await stdio('2025-06-18');
    await client.close();
    expect((init.capabilities as Record<string, { listChanged?: boolean }>).resources?.listChanged).toBe(true);
  });

  it('answers logging/setLevel on both, and sends a failed call as a log notification at the level set', async () => {
    for (const version of ['2025-03-26', '2025-06-18']) {
      const caps = result((await initialize(version)).replies, 1)!.result!.capabilities as Record<string, unknown>;
      expect(caps.logging).toEqual({});
      const set = await post({ id: 7, method: 'logging/setLevel', params: { level: 'info' } }, { version });
      expect(result(set.replies, 7)).toMatchObject({ result: {} });
    }
    // A failing call over HTTP (2025-era, no level set on this instance): its answer stream carries the log line.
    const failed = await post(
      {
        id: 8,
        method: 'tools/call',
        params: { name: 'get_project', arguments: { project_id: '00000000-0000-4000-8000-000000000000' } },
      },
      { version: '2025-06-18' },
    );
    expect(result(failed.replies, 8)!.result!.isError).toBe(true);
    const logged = failed.replies.find((r) => r.method === 'notifications/message');
    expect(logged?.params).toMatchObject({
      level: 'error',
      logger: 'cutroom',
      data: expect.stringMatching(/^get_project: .*not found/),
    });

    const { client } = await stdio('2025-06-18');
    try {
      expect((await client.request('logging/setLevel', { level: 'error' })).result).toEqual({});
      await client.request('tools/call', {
        name: 'get_project',
        arguments: { project_id: '00000000-0000-4000-8000-000000000000' },
      });
      const note = await client.waitFor((m) => m.method === 'notifications/message');
      expect(note.params).toMatchObject({ level: 'error', data: expect.stringMatching(/^get_project: /) });
      // Above the level set, nothing is sent.
      expect((await client.request('logging/setLevel', { level: 'emergency' })).result).toEqual({});
      const before = client.received.filter((m) => m.method === 'notifications/message').length;
      await client.request('tools/call', {
        name: 'get_project',
        arguments: { project_id: '00000000-0000-4000-8000-000000000000' },
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(client.received.filter((m) => m.method === 'notifications/message').length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('over HTTP, a notifications/cancelled POSTed on its own stops the call it names and its ffmpeg, as on stdio', async () => {
    const version = '2025-06-18';
    await initialize(version);
    const { project, asset } = await projectAndAsset(httpCall(version));
    const cache = join(root, 'http', 'cache');
    const ffmpegs = () =>
      pidsMatching(cache).filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ffmpeg';
        } catch {
          return false;
        }
      });
    const id = nextId++;
    const started = Date.now();
    // The call's answer stream stays open, as an SDK client keeps it, while the cancellation goes in a POST of its own.
    const long = post(
      {
        id,
        method: 'tools/call',
        params: {
          name: 'preview_edit',
          arguments: {
            project_id: project,
            resolution: '1920x1080',
            width: 1920,
            fps: 25,
            clips: [{ asset_id: asset, start: 0, end: 120 }],
          },
        },
      },
      { version },
    );
    await expect.poll(() => ffmpegs().length, { timeout: 20_000 }).toBeGreaterThan(0);
    const cancelled = await post(
      { method: 'notifications/cancelled', params: { requestId: id, reason: 'the user changed their mind' } },
      { version },
    );
    expect(cancelled.status).toBe(202);
    await expect.poll(() => ffmpegs(), { timeout: 5000 }).toEqual([]);
    const answer = await long;
    // Stopped well before the preview's ~20 s, and nothing was kept.
    expect(Date.now() - started).toBeLessThan(15_000);
    const done = result(answer.replies, id);
    if (done?.result) expect(done.result.isError).toBe(true);
  }, 60_000);
});
