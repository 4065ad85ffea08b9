// The stdio wire of the built server, driven raw: no line kills the server and every bad line gets the
// JSON-RPC error its shape calls for, after which the server goes on serving.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient } from '../helpers/raw-client.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-wire-'));
let client: RawClient;

beforeAll(async () => {
  mkdirSync(join(root, 'allowed'), { recursive: true });
  client = new RawClient({ CUTROOM_DATA_DIR: join(root, 'data'), CUTROOM_CACHE_DIR: join(root, 'cache'), CUTROOM_ALLOWED_DIRS: join(root, 'allowed') });
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
    await client.writeLine(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"list_projects","arguments":{"pad":"${pad}"}}}`);
    const reply = await client.waitFor((m) => m.id === 'big-1');
    expect(reply.error).toMatchObject({ code: -32600, message: expect.stringMatching(/too large.*10485760 bytes/) });
    expect(client.stderr).toMatch(/dropped a message of \d+ bytes/);
    expect((await client.request('tools/list')).result?.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'list_projects' })]));
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
