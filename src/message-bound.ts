// The bound on every message cutroom writes, on every transport: none over 8 MiB (the official TypeScript client
// closes a stdio connection on one over 10 MiB). An answer over it is replaced by one that says how large it was
// and what to do (a JSON-RPC error; for a tool call, an isError result); anything else over it (a notification, a
// request to the client) is dropped. Large resources are served in parts, far below it: this is the safety net.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/**
 * Over HTTP, the most one server-sent event may carry: 1 MiB, what the Python SDK's client (httpx2's SSE reader)
 * reads by default; a larger event fails its call. Results are sized to fit (the contact sheet, resource parts).
 */
export const MAX_SSE_EVENT_BYTES = 1024 * 1024;
const INTERNAL_ERROR = -32603;

const sized = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;

/** The UTF-8 length of `json`, or 0 when it is certainly within `limit` (no need to count). */
export function overLimit(json: string, limit = MAX_MESSAGE_BYTES): number {
  if (json.length * 3 <= limit) return 0;
  const bytes = Buffer.byteLength(json);
  return bytes > limit ? bytes : 0;
}

/** A result's own small fields besides its content (resultType, which 2026-07-28 requires; a short _meta). */
function envelope(result: unknown): Record<string, unknown> {
  if (!result || typeof result !== 'object') return {};
  return Object.fromEntries(
    Object.entries(result).filter(
      ([k, v]) => k !== 'content' && k !== 'structuredContent' && JSON.stringify(v ?? null).length <= 1024,
    ),
  );
}

/**
 * What to send instead of `message`, whose JSON is `bytes` long (over `limit`): `method` is that of the request it
 * answers, when known. No `replacement`: the message is dropped. `log` is one line for stderr.
 */
export function overBound(
  message: JSONRPCMessage,
  bytes: number,
  method: string | undefined,
  limit = MAX_MESSAGE_BYTES,
): { replacement?: JSONRPCMessage; log: string } {
  const m = message as { id?: string | number; method?: string; result?: unknown; error?: unknown };
  const size = `${sized(bytes)} (${bytes} bytes)`;
  if (!('result' in m) && !('error' in m)) {
    return {
      log: `dropped a ${m.method ?? 'message'} ${'id' in m ? 'request' : 'notification'} of ${size}: over the ${sized(limit)} a message may carry`,
    };
  }
  const what = method ? `the answer to ${method}` : 'the answer';
  const text = `${what} was ${size}, over the ${sized(limit)} one message may carry, so it was not sent: ask for less (a smaller limit, page or range; large resources are read in parts)`;
  const log = `${what} (id ${String(m.id)}) was ${size}: answered with an error instead`;
  const replacement =
    method === 'tools/call' && 'result' in m
      ? {
          jsonrpc: '2.0',
          id: m.id,
          result: { ...envelope(m.result), content: [{ type: 'text', text }], isError: true },
        }
      : { jsonrpc: '2.0', id: m.id, error: { code: INTERNAL_ERROR, message: text } };
  return { replacement: replacement as JSONRPCMessage, log };
}
