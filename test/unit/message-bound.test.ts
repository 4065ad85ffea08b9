// The bound on every message cutroom writes (message-bound.ts), where each transport applies it: the stdio wire, and
// the HTTP answer (a JSON body or an SSE stream). Small limits stand in for 8 MiB.
import { PassThrough } from 'node:stream';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { boundResponse } from '../../src/http/bound-response.js';
import { MAX_MESSAGE_BYTES, overBound } from '../../src/message-bound.js';
import { StdioWireTransport } from '../../src/stdio-wire.js';

const big = (n: number) => 'x'.repeat(n);
const toolResult = (id: number, text: string) => ({
  jsonrpc: '2.0' as const,
  id,
  result: { content: [{ type: 'text', text }], structuredContent: { text } },
});

describe('overBound', () => {
  it("turns a tool call's answer into an isError result, any other answer into a JSON-RPC error, each saying the size and what to do", () => {
    const tool = overBound(toolResult(3, ''), 9_437_184, 'tools/call');
    expect(tool.replacement).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: {
        content: [
          {
            type: 'text',
            text: 'the answer to tools/call was 9.0 MiB (9437184 bytes), over the 8.0 MiB one message may carry, so it was not sent: ask for less (a smaller limit, page or range; large resources are read in parts)',
          },
        ],
        isError: true,
      },
    });
    const read = overBound({ jsonrpc: '2.0', id: 'r', result: { contents: [] } }, 9_000_000, 'resources/read');
    expect(read.replacement).toMatchObject({
      jsonrpc: '2.0',
      id: 'r',
      error: {
        code: -32603,
        message: expect.stringMatching(
          /^the answer to resources\/read was 8\.6 MiB \(9000000 bytes\), over the 8\.0 MiB/,
        ),
      },
    });
    expect(read.log).toMatch(/^the answer to resources\/read \(id r\) was 8\.6 MiB/);
    // An error answer too large is still an error (never an isError result), whatever it answered.
    expect(
      overBound({ jsonrpc: '2.0', id: 4, error: { code: 1, message: big(10) } }, 9e6, 'tools/call').replacement,
    ).toMatchObject({ id: 4, error: { code: -32603 } });
  });

  it("keeps a tool result's own small fields (resultType, which 2026-07-28 requires)", () => {
    const modern = {
      jsonrpc: '2.0' as const,
      id: 5,
      result: { resultType: 'complete', _meta: { big: big(2000) }, content: [], structuredContent: {} },
    };
    expect(overBound(modern, 9e6, 'tools/call').replacement).toEqual({
      jsonrpc: '2.0',
      id: 5,
      result: { resultType: 'complete', content: [expect.objectContaining({ type: 'text' })], isError: true },
    });
  });

  it('drops a notification or a request to the client', () => {
    expect(overBound({ jsonrpc: '2.0', method: 'notifications/message', params: {} }, 9e6, undefined)).toEqual({
      log: expect.stringMatching(/^dropped a notifications\/message notification of 8\.6 MiB/),
    });
    expect(
      overBound({ jsonrpc: '2.0', id: 9, method: 'sampling/createMessage', params: {} }, 9e6, undefined).replacement,
    ).toBeUndefined();
  });
});

describe('the stdio wire', () => {
  /** A wire with a limit of `limit` bytes, fed requests on stdin; what it wrote, as messages, and what it logged. */
  async function wire(limit: number) {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const logs: string[] = [];
    let out = '';
    stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const t = new StdioWireTransport(stdin, stdout, (l) => logs.push(l), 0, limit);
    await t.start();
    const ask = (id: number, method: string) =>
      new Promise<void>((resolve) => {
        t.onmessage = () => resolve();
        stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: {} })}\n`);
      });
    const written = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => ({ bytes: Buffer.byteLength(l), message: JSON.parse(l) as Record<string, unknown> }));
    return { t, ask, written, logs };
  }

  it('writes nothing over its limit: a tool call answered too large gets an isError result, a read an error, a notification is dropped', async () => {
    const limit = 4096;
    const { t, ask, written, logs } = await wire(limit);
    await ask(1, 'tools/call');
    await ask(2, 'resources/read');
    const answer = toolResult(1, big(5000));
    await t.send(answer);
    await t.send({ jsonrpc: '2.0', id: 2, result: { contents: [{ uri: 'a://b', text: big(5000) }] } });
    await t.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: big(5000) } });
    await t.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'small' } });
    const out = written();
    expect(out.map((o) => o.bytes <= limit)).toEqual([true, true, true]);
    expect(out[0]!.message).toMatchObject({
      id: 1,
      result: {
        isError: true,
        content: [
          {
            type: 'text',
            text: `the answer to tools/call was 10 KiB (${Buffer.byteLength(JSON.stringify(answer))} bytes), over the 4 KiB one message may carry, so it was not sent: ask for less (a smaller limit, page or range; large resources are read in parts)`,
          },
        ],
      },
    });
    expect(out[0]!.message.result).not.toHaveProperty('structuredContent');
    expect(out[1]!.message).toMatchObject({
      id: 2,
      error: { code: -32603, message: expect.stringMatching(/^the answer to resources\/read was/) },
    });
    expect(out[2]!.message).toMatchObject({ method: 'notifications/message', params: { data: 'small' } });
    expect(logs).toEqual([
      expect.stringMatching(/^the answer to tools\/call \(id 1\)/),
      expect.stringMatching(/^the answer to resources\/read \(id 2\)/),
      expect.stringMatching(/^dropped a notifications\/message notification/),
    ]);
    await t.close();
  });

  it('writes a message of exactly its limit as it is', async () => {
    const { t, ask, written } = await wire(4096);
    await ask(1, 'tools/call');
    const message = toolResult(1, '');
    const pad = 4096 - Buffer.byteLength(JSON.stringify(message));
    const exact = toolResult(1, big(Math.floor(pad / 2)));
    (exact.result.structuredContent as { text: string }).text = big(pad - Math.floor(pad / 2));
    await t.send(exact);
    expect(written()).toEqual([{ bytes: 4096, message: exact }]);
    await t.close();
  });

  it('is 8 MiB by default', () => {
    expect(MAX_MESSAGE_BYTES).toBe(8 * 1024 * 1024);
  });
});

describe('boundResponse (HTTP)', () => {
  const methods = new Map<unknown, string>([
    [1, 'tools/call'],
    [2, 'resources/read'],
  ]);
  const methodOf = (id: unknown) => methods.get(id);

  it('bounds a JSON body: one message, or each of a batch', async () => {
    const logs: string[] = [];
    const one = await boundResponse(
      Response.json(toolResult(1, big(5000)), { headers: { 'content-type': 'application/json', 'x-kept': 'yes' } }),
      methodOf,
      (l) => logs.push(l),
      4096,
    );
    expect(one.status).toBe(200);
    expect(one.headers.get('x-kept')).toBe('yes');
    expect(await one.json()).toMatchObject({ id: 1, result: { isError: true } });
    const small = toolResult(1, 'fine');
    expect(await (await boundResponse(Response.json(small), methodOf, (l) => logs.push(l), 4096)).json()).toEqual(
      small,
    );
    const batch = await boundResponse(
      Response.json([small, { jsonrpc: '2.0', id: 2, result: { contents: [{ uri: 'a://b', text: big(5000) }] } }]),
      methodOf,
      (l) => logs.push(l),
      4096,
    );
    expect(await batch.json()).toEqual([
      small,
      expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32603 }) }),
    ]);
    expect(logs).toHaveLength(2);
  });

  it('bounds an SSE stream event by event, across chunk boundaries, keeping the rest of each event and the keep-alives', async () => {
    const frames = [
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } })}\n\n`,
      ': keepalive\n\n',
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: big(6000) } })}\n\n`,
      `event: message\nid: 7\ndata: ${JSON.stringify(toolResult(1, big(6000)))}\n\n`,
    ];
    const text = frames.join('');
    // Cut into uneven chunks, one of them between the two newlines that end an event.
    const cuts = [10, frames[0]!.length - 1, frames[0]!.length + 5, 3000, 9000, text.length];
    const chunks = cuts.map((end, i) => text.slice(i ? cuts[i - 1] : 0, end));
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
        c.close();
      },
    });
    const logs: string[] = [];
    const out = await (
      await boundResponse(
        new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
        methodOf,
        (l) => logs.push(l),
        4096,
      )
    ).text();
    const events = out.split('\n\n').filter(Boolean);
    expect(events).toHaveLength(3);
    expect(events[0]).toBe(frames[0]!.trimEnd());
    expect(events[1]).toBe(': keepalive');
    expect(events[2]).toMatch(/^event: message\nid: 7\ndata: /);
    expect(JSON.parse(events[2]!.split('data: ')[1]!)).toMatchObject({
      id: 1,
      result: { isError: true, content: [{ text: expect.stringMatching(/^the answer to tools\/call was/) }] },
    });
    expect(logs).toEqual([
      expect.stringMatching(/^dropped a notifications\/message notification/),
      expect.stringMatching(/^the answer to tools\/call \(id 1\)/),
    ]);
  });

  it("bounds what the SDK's own handler streams: a notification, then the result, both too large", async () => {
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: 't', version: '1' }, { capabilities: { logging: {} } });
      server.registerTool('chatty', { inputSchema: z.object({}) }, async (_args, ctx) => {
        await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: big(6000) } });
        return { content: [{ type: 'text', text: big(6000) }] };
      });
      return server;
    }, {});
    const callTool = (name: string) =>
      handler.fetch(
        new Request('http://localhost/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
        }),
      );
    const logs: string[] = [];
    const streamed = await boundResponse(await callTool('chatty'), methodOf, (l) => logs.push(l), 4096);
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = (await streamed.text()).split('\n\n').filter(Boolean);
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.split('data: ')[1]!)).toMatchObject({ id: 1, result: { isError: true } });
    expect(logs).toEqual([
      expect.stringMatching(/^dropped a notifications\/message notification/),
      expect.stringMatching(/^the answer to tools\/call \(id 1\)/),
    ]);
  });
});
