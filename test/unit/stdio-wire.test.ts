import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  LineSplitter,
  StdioWireTransport,
  classifyLine,
  idFromHead,
  idFromTail,
  readHead,
} from '../../src/stdio-wire.js';

const texts = (lines: ReturnType<LineSplitter['push']>) =>
  lines.map((l) => (l.kind === 'line' ? l.text : `<${l.bytes} bytes: ${l.head}>`));

describe('LineSplitter', () => {
  it('splits on LF, drops a CR before it, and joins a line across chunks', () => {
    const s = new LineSplitter();
    expect(texts(s.push(Buffer.from('{"a":1}\r\n{"b":')))).toEqual(['{"a":1}']);
    expect(texts(s.push(Buffer.from('2}')))).toEqual([]);
    expect(texts(s.push(Buffer.from('\n\nx\n')))).toEqual(['{"b":2}', '', 'x']);
  });

  it('keeps a multi-byte character split between chunks whole', () => {
    const s = new LineSplitter();
    const bytes = Buffer.from('"é"\n');
    expect(texts([...s.push(bytes.subarray(0, 2)), ...s.push(bytes.subarray(2))])).toEqual(['"é"']);
  });

  it('keeps a line of exactly the limit, and drops a longer one keeping only its head and its length', () => {
    const s = new LineSplitter(10, 4);
    expect(texts(s.push(Buffer.from('0123456789\n')))).toEqual(['0123456789']);
    expect(texts(s.push(Buffer.from('0123456')))).toEqual([]);
    expect(texts(s.push(Buffer.from('789A')))).toEqual([]);
    expect(texts(s.push(Buffer.from('BCD\nnext\n')))).toEqual(['<14 bytes: 0123>', 'next']);
  });

  it('does not hold on to an oversized line while it streams in', () => {
    const s = new LineSplitter(1024, 16);
    for (let i = 0; i < 1000; i++) s.push(Buffer.alloc(1024, 0x61));
    // Only the head is kept: the splitter's buffers stay empty however long the line grows.
    const inner = s as unknown as { chunks: Buffer[]; size: number; oversized: { head: Buffer; bytes: number } };
    expect(inner.chunks).toEqual([]);
    expect(inner.oversized.head.length).toBe(16);
    expect(texts(s.push(Buffer.from('\n')))).toEqual([`<${1000 * 1024} bytes: ${'a'.repeat(16)}>`]);
  });
});

describe('idFromHead', () => {
  it('reads a string or number id that comes before any nested value', () => {
    expect(idFromHead('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"')).toBe(7);
    expect(idFromHead(' { "id" : "a\\"b" , "params": [1,')).toBe('a"b');
    expect(idFromHead('{"jsonrpc":"2.0","method":"m","id":-1.5e3,"params":')).toBe(-1500);
  });

  it('gives null when the id comes after a nested value, is cut off, or is not a string or number', () => {
    expect(idFromHead('{"jsonrpc":"2.0","params":{"id":3},"id":4')).toBeNull();
    expect(idFromHead('{"jsonrpc":"2.0","id":"abc')).toBeNull();
    expect(idFromHead('{"jsonrpc":"2.0","id":12')).toBeNull();
    expect(idFromHead('{"id":null,"method":"x"')).toBeNull();
    expect(idFromHead('{"id":true,')).toBeNull();
    expect(idFromHead('[{"id":1},')).toBeNull();
    expect(idFromHead('garbage')).toBeNull();
  });
});

describe('idFromTail', () => {
  it('reads an id written last (as the SDK client writes it), and only the top-level one', () => {
    expect(idFromTail('...long content"}},"jsonrpc":"2.0","id":42}')).toBe(42);
    expect(idFromTail('xx"},"id":"req-7"}\r')).toBe('req-7');
    // An "id" that closes a nested object is not the message's.
    expect(idFromTail('"params":{"arguments":{"id":3}}}')).toBeNull();
    expect(idFromTail('"params":{"x":1,"id":3}}')).toBeNull();
    expect(idFromTail('"id":true}')).toBeNull();
    expect(idFromTail('')).toBeNull();
  });

  it('answers an oversized request whose id comes last with that id (the client would wait for it forever)', () => {
    const s = new LineSplitter(1024, 16);
    const body = `{"method":"tools/call","params":{"arguments":{"content":"${'x'.repeat(5000)}"}},"jsonrpc":"2.0","id":19}\n`;
    const [line] = s.push(Buffer.from(body));
    expect(line).toMatchObject({ kind: 'oversized' });
    expect(classifyLine(line!)).toMatchObject({ reply: { code: -32600, id: 19 } });
  });
});

describe('readHead', () => {
  it('tells a response by a top-level result or error member', () => {
    expect(readHead('{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"')).toEqual({
      id: 9,
      response: true,
    });
    expect(readHead('{"jsonrpc":"2.0","error":{"code":1,')).toEqual({ id: null, response: true });
    expect(readHead('{"jsonrpc":"2.0","id":9,"method":"x","params":{"result":')).toEqual({ id: 9, response: false });
  });
});

describe('classifyLine', () => {
  it('answers an oversized request with -32600 and its id, but not an oversized response', () => {
    expect(
      classifyLine({
        kind: 'oversized',
        head: '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{',
        bytes: 11e6,
      }),
    ).toMatchObject({
      reply: {
        code: -32600,
        id: 'a',
        message: expect.stringMatching(/too large \(11000000 bytes; the limit is 10485760 bytes/),
      },
    });
    const response = classifyLine({ kind: 'oversized', head: '{"jsonrpc":"2.0","id":"a","result":{', bytes: 11e6 });
    expect(response).not.toHaveProperty('reply');
    expect(response).toHaveProperty('log');
  });

  const line = (text: string) => classifyLine({ kind: 'line', text });
  it('delivers requests, notifications and responses', () => {
    expect(line('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toHaveProperty('message');
    expect(line('{"jsonrpc":"2.0","method":"notifications/initialized"}')).toHaveProperty('message');
    expect(line('{"jsonrpc":"2.0","id":1,"result":{}}')).toHaveProperty('message');
  });
  it('answers what is not JSON-RPC 2.0, with the id when it can be read', () => {
    expect(line('not json')).toMatchObject({ reply: { code: -32700, id: null } });
    expect(line('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')).toMatchObject({ reply: { code: -32600, id: null } });
    expect(line('{"jsonrpc":"1.0","id":"x","method":"ping"}')).toMatchObject({ reply: { code: -32600, id: 'x' } });
    expect(line('{"jsonrpc":"2.0","id":5}')).toMatchObject({ reply: { code: -32600, id: 5 } });
    expect(line('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}')).toMatchObject({ reply: { code: -32600, id: null } });
    expect(line('42')).toMatchObject({ reply: { code: -32600, id: null } });
  });
  it('never answers a response, nor a blank line', () => {
    expect(line('{"jsonrpc":"2.0","id":1,"result":{},"error":{}}')).not.toHaveProperty('reply');
    expect(line('{"jsonrpc":"1.0","id":1,"error":"x"}')).not.toHaveProperty('reply');
    expect(line('   ')).toEqual({});
  });
});

describe('StdioWireTransport', () => {
  it('answers a bad line, delivers the next message, and closes when stdin ends', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const logged: string[] = [];
    const t = new StdioWireTransport(stdin, stdout, (l) => logged.push(l));
    const got: unknown[] = [];
    let closed = false;
    t.onmessage = (m) => got.push(m);
    t.onclose = () => {
      closed = true;
    };
    await t.start();
    stdin.write('nope\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(String(stdout.read()))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error/) },
    });
    expect(got).toEqual([{ jsonrpc: '2.0', id: 2, method: 'ping' }]);
    expect(logged).toHaveLength(1);
    await t.send({ jsonrpc: '2.0', id: 2, result: {} });
    stdin.end();
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(true);
  });

  /** A transport over a PassThrough stdin, started, with what it delivers and whether it closed. */
  async function wire(graceMs?: number) {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const logged: string[] = [];
    const t = new StdioWireTransport(stdin, stdout, (l) => logged.push(l), graceMs);
    const state = { closed: false, got: [] as unknown[] };
    t.onmessage = (m) => state.got.push(m);
    t.onclose = () => {
      state.closed = true;
    };
    await t.start();
    return { stdin, stdout, t, state, logged };
  }
  const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

  it('when stdin ends, answers the requests already read before it closes (a script that pipes its requests in)', async () => {
    const { stdin, stdout, t, state } = await wire();
    stdin.end('{"jsonrpc":"2.0","id":"a","method":"tools/list"}\n{"jsonrpc":"2.0","id":7,"method":"ping"}\n');
    await tick();
    expect(state.got).toHaveLength(2);
    expect(state.closed).toBe(false);
    await t.send({ jsonrpc: '2.0', id: 'a', result: { tools: [] } });
    await tick();
    expect(state.closed).toBe(false);
    // An answer to "7" (a string) is not the answer to 7.
    await t.send({ jsonrpc: '2.0', id: '7', result: {} } as never).catch(() => {});
    await tick();
    expect(state.closed).toBe(false);
    await t.send({ jsonrpc: '2.0', id: 7, result: {} });
    await tick();
    expect(state.closed).toBe(true);
    const lines = String(stdout.read())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: unknown });
    expect(lines.map((l) => l.id)).toEqual(['a', '7', 7]);
  });

  it('does not wait for a request the client cancelled', async () => {
    const { stdin, state } = await wire();
    stdin.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"preview_edit"}}\n');
    stdin.end('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}\n');
    await tick();
    expect(state.closed).toBe(true);
  });

  it('stops waiting after its grace period, and says so', async () => {
    const { stdin, state, logged } = await wire(60);
    stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await tick();
    expect(state.closed).toBe(false);
    await tick(120);
    expect(state.closed).toBe(true);
    const after = Number(/1 request\(s\) still unanswered after (\d+) ms/.exec(logged.join('\n'))?.[1]);
    expect(after).toBeGreaterThanOrEqual(59);
  });

  it('says how long it waited when told to stop before its grace period ends, not the period', async () => {
    const { stdin, t, state, logged } = await wire(120_000);
    stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await tick();
    expect(state.closed).toBe(false);
    t.stopWaiting();
    await tick();
    expect(state.closed).toBe(true);
    const after = Number(/1 request\(s\) still unanswered after (\d+) ms/.exec(logged.join('\n'))?.[1]);
    expect(after).toBeLessThan(60_000);
  });
});
