// The SDK answers params that fail its own request schema with -32603 and a dump of the validator's issues; cutroom
// writes -32602 in one line instead, on stdio (stdio-wire) and over HTTP (bound-response, JSON bodies and SSE events).
import { describe, expect, it } from 'vitest';
import { boundResponse } from '../../src/http/bound-response.js';
import { plainError, plainErrorJson } from '../../src/plain-errors.js';

const dump = JSON.stringify(
  [
    {
      expected: 'string',
      code: 'invalid_type',
      path: ['params', 'arguments', 'project_id'],
      message: 'Invalid input: expected string, received number',
    },
  ],
  null,
  2,
);
const sdkAnswer = { jsonrpc: '2.0' as const, id: 7, error: { code: -32603, message: dump } };

describe('plain errors', () => {
  it('turns a validator dump sent as an internal error into -32602 in one line naming the field', () => {
    expect(plainError(sdkAnswer as never)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32602, message: 'Invalid params: arguments.project_id: expected string, received number' },
    });
  });

  it('leaves every other message as it is: real internal errors, results, notifications, text that only looks like JSON', () => {
    const real = { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'unexpected failure: boom' } };
    const listish = { jsonrpc: '2.0', id: 2, error: { code: -32603, message: '[not json' } };
    const result = { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: dump }] } };
    for (const m of [real, listish, result, { jsonrpc: '2.0', method: 'notifications/progress', params: {} }])
      expect(plainError(m as never)).toBe(m);
    expect(plainErrorJson(JSON.stringify(result))).toBe(JSON.stringify(result));
  });

  it('is applied over HTTP to a JSON answer and to an SSE event', async () => {
    const json = await boundResponse(
      new Response(JSON.stringify(sdkAnswer), { headers: { 'content-type': 'application/json' } }),
      () => 'prompts/get',
      () => {},
    );
    expect(JSON.parse(await json.text()).error).toEqual({
      code: -32602,
      message: 'Invalid params: arguments.project_id: expected string, received number',
    });
    const sse = await boundResponse(
      new Response(`event: message\ndata: ${JSON.stringify(sdkAnswer)}\n\n`, {
        headers: { 'content-type': 'text/event-stream' },
      }),
      () => 'prompts/get',
      () => {},
    );
    const data = (await sse.text())
      .split('\n')
      .find((l) => l.startsWith('data: '))!
      .slice(6);
    expect(JSON.parse(data).error.code).toBe(-32602);
  });
});
