// The stdio wire of the built server, driven raw: no line kills the server and every bad line gets the
// JSON-RPC error its shape calls for, after which the server goes on serving.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, baseEnv } from '../helpers/harness.js';
import { RawClient, type Reply } from '../helpers/raw-client.js';
import { FakeService } from '../fixtures/service.mjs';

const root = mkdtempSync(join(tmpdir(), 'cutroom-wire-'));
let client: RawClient;

beforeAll(async () => {
  mkdirSync(join(root, 'allowed'), { recursive: true });
  client = new RawClient({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: join(root, 'allowed'),
  });
  await client.initialize('2025-06-18');
});
afterAll(async () => {
  await client?.close();
});

/** Replies that are errors with the given id (null included). */
const errorsWithId = (id: string | number | null) => client.received.filter((m) => m.error && m.id === id);

describe('the stdio wire', () => {
  it('answers a 12 MiB message with -32600 and its id, and keeps serving', async () => {
    const pad = 'x'.repeat(12 * 1024 * 1024);
    await client.writeLine(
      `{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"list_projects","arguments":{"pad":"${pad}"}}}`,
    );
    const reply = await client.waitFor((m) => m.id === 'big-1');
    expect(reply.error).toMatchObject({ code: -32600, message: expect.stringMatching(/too large.*10485760 bytes/) });
    expect(client.stderr).toMatch(/dropped a message of \d+ bytes/);
    expect((await client.request('tools/list')).result?.tools).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'list_projects' })]),
    );
    expect(client.alive).toBe(true);
  });

  it('answers a huge message whose id it cannot read with id null', async () => {
    const before = errorsWithId(null).length;
    const pad = 'y'.repeat(11 * 1024 * 1024);
    await client.writeLine(`{"jsonrpc":"2.0","params":{"pad":"${pad}"},"id":"late","method":"ping"}`);
    await client.waitFor(() => errorsWithId(null).length > before);
    expect(errorsWithId(null).at(-1)!.error!.code).toBe(-32600);
    expect(errorsWithId('late')).toEqual([]);
    expect((await client.request('ping')).result).toEqual({});
  });

  it('answers a line that is not JSON with -32700 and id null', async () => {
    const before = errorsWithId(null).length;
    await client.writeLine('{"jsonrpc": "2.0", "id": 3, "method": ');
    await client.waitFor(() => errorsWithId(null).length > before);
    expect(errorsWithId(null).at(-1)!.error!.code).toBe(-32700);
    expect((await client.request('ping')).result).toEqual({});
  });

  it('answers a batch with -32600 and id null, and runs none of it', async () => {
    const before = errorsWithId(null).length;
    await client.writeLine([{ jsonrpc: '2.0', id: 'in-batch', method: 'ping' }]);
    await client.waitFor(() => errorsWithId(null).length > before);
    expect(errorsWithId(null).at(-1)!.error!.code).toBe(-32600);
    expect((await client.request('ping')).result).toEqual({});
    expect(client.received.filter((m) => m.id === 'in-batch')).toEqual([]);
  });

  it('answers "jsonrpc": "1.0" and a request without a method with -32600 and their ids', async () => {
    await client.writeLine({ jsonrpc: '1.0', id: 'old', method: 'ping' });
    await client.writeLine({ jsonrpc: '2.0', id: 41 });
    expect((await client.waitFor((m) => m.id === 'old')).error?.code).toBe(-32600);
    expect((await client.waitFor((m) => m.id === 41)).error?.code).toBe(-32600);
  });

  it('never answers something that looks like a response, and is still alive after all of it', async () => {
    const count = client.received.length;
    await client.writeLine({ jsonrpc: '2.0', id: 'stray', result: 1, error: 2 });
    const list = await client.request('tools/list');
    expect(list.result?.tools).toBeInstanceOf(Array);
    expect(client.received.length).toBe(count + 1);
    expect(client.alive).toBe(true);
  });
});

describe('a client that sends its requests and closes stdin', () => {
  /**
   * Runs the server on a script of lines (stdin ends after them) in a shell pipeline whose reader starts reading
   * only after `lateMs`, as `cutroom < requests | (sleep 1; cat)` does: the pipe's 64 KiB fill and the server's
   * writes wait on it. Gives what the reader got and the server's exit status.
   */
  async function runScript(lines: unknown[], lateMs: number): Promise<{ out: string; code: number }> {
    const dir = mkdtempSync(join(root, 'script-'));
    writeFileSync(join(dir, 'in.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
    const pipeline = `(${q(process.execPath)} ${q(BIN)} < in.jsonl 2>/dev/null; echo $? > status) | (sleep ${lateMs / 1000}; cat)`;
    const child = spawn('sh', ['-c', pipeline], {
      cwd: dir,
      env: baseEnv({
        CUTROOM_DATA_DIR: join(root, 'script-data'),
        CUTROOM_CACHE_DIR: join(root, 'script-cache'),
        CUTROOM_ALLOWED_DIRS: join(root, 'allowed'),
      }),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    await new Promise((resolve) => child.on('close', resolve));
    return { out: Buffer.concat(chunks).toString('utf8'), code: Number(readFileSync(join(dir, 'status'), 'utf8')) };
  }

  it('gets every answer whole (tools/list is larger than the pipe), and the server exits 0', async () => {
    const script = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'script', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_projects', arguments: {} } },
      { jsonrpc: '2.0', id: 4, method: 'resources/templates/list' },
      // tools/list is small now (issue 30): three of them make more than the pipe holds.
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      { jsonrpc: '2.0', id: 6, method: 'tools/list' },
    ];
    for (const lateMs of [0, 400, 1500]) {
      const { out, code } = await runScript(script, lateMs);
      const replies = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Reply);
      expect(replies.map((r) => r.id).sort()).toEqual([1, 2, 3, 4, 5, 6]);
      expect(replies.every((r) => r.result && !r.error)).toBe(true);
      expect((replies.find((r) => r.id === 2)!.result!.tools as unknown[]).length).toBeGreaterThan(10);
      expect(out.length).toBeGreaterThan(64 * 1024);
      expect(code).toBe(0);
    }
  }, 60_000);

  it("stops on SIGTERM during the grace stdin's end gives, after flushing what is written (issue 31, item 10)", async () => {
    // A call the service never answers in time keeps the grace (up to 2 minutes) waiting.
    const service = await new FakeService().start();
    service.fail(
      { delayMs: 60_000, status: 200, body: '[]' },
      { match: (r: { path: string }) => r.path === '/projects' },
    );
    const raw = new RawClient({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      VJ_TIMEOUT_MS: '90000',
      CUTROOM_DATA_DIR: join(root, 'grace-data'),
      CUTROOM_CACHE_DIR: join(root, 'grace-cache'),
    });
    try {
      await raw.initialize('2025-06-18');
      await raw.writeLine({
        jsonrpc: '2.0',
        id: 'slow',
        method: 'tools/call',
        params: { name: 'list_projects', arguments: {} },
      });
      await raw.writeLine({ jsonrpc: '2.0', id: 'quick', method: 'ping' });
      await raw.waitFor((m) => m.id === 'quick');
      raw.child.stdin.end();
      await new Promise((r) => setTimeout(r, 500));
      expect(raw.alive).toBe(true); // still waiting for the slow call
      const sent = Date.now();
      raw.child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => raw.child.once('exit', (c) => resolve(c)));
      expect(Date.now() - sent).toBeLessThan(10_000);
      expect(code).toBe(0);
      // What was written before reached the reader whole: the ping's answer, one line each.
      expect(raw.received.find((m) => m.id === 'quick')?.result).toEqual({});
      expect(raw.stderr).toMatch(/SIGTERM while answering what stdin asked before it ended: stopping now/);
    } finally {
      await service.stop();
    }
  }, 60_000);
});
