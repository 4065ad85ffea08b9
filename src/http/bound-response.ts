// The bound on messages over HTTP (message-bound.ts): the SDK's answer, a JSON body (one message or a batch) or an
// SSE stream, with every message over 8 MiB, or every SSE event over 1 MiB (what the Python SDK's client reads),
// replaced (an answer) or dropped (anything else). The stream is rewritten one event at a time; an event within the
// bound passes unchanged.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { MAX_MESSAGE_BYTES, MAX_SSE_EVENT_BYTES, overBound, overLimit } from '../message-bound.js';
import { plainErrorJson } from '../plain-errors.js';

/** The method of the request a given id answers, when it was one of this POST's. */
export type MethodOf = (id: unknown) => string | undefined;

/** One message's JSON, or what replaces it ('' when it is dropped). */
function bounded(raw: string, methodOf: MethodOf, log: (line: string) => void, limit: number): string {
  const json = plainErrorJson(raw);
  const bytes = overLimit(json, limit);
  if (!bytes) return json;
  const message = JSON.parse(json) as JSONRPCMessage & { id?: unknown };
  const { replacement, log: line } = overBound(message, bytes, methodOf(message.id), limit);
  log(line);
  return replacement ? JSON.stringify(replacement) : '';
}

/** An SSE event (its blank line included) with its data bounded; '' when its message is dropped. */
function boundedEvent(event: string, methodOf: MethodOf, log: (line: string) => void, limit: number): string {
  if (!overLimit(event, limit) && !event.includes('-32603')) return event;
  const lines = event.replace(/\n+$/, '').split('\n');
  const data = lines
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).replace(/^ /, ''))
    .join('\n');
  if (!data) return event;
  const json = bounded(data, methodOf, log, limit);
  if (!json) return '';
  return `${lines.filter((l) => !l.startsWith('data:')).join('\n')}\ndata: ${json}\n\n`.replace(/^\n/, '');
}

function sseBound(
  body: ReadableStream<Uint8Array>,
  methodOf: MethodOf,
  log: (line: string) => void,
  limit: number,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  /** How far `pending` is known to hold no event end. */
  let scanned = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        for (;;) {
          const end = pending.indexOf('\n\n', Math.max(0, scanned - 1));
          if (end === -1) {
            scanned = pending.length;
            return;
          }
          const event = boundedEvent(pending.slice(0, end + 2), methodOf, log, limit);
          pending = pending.slice(end + 2);
          scanned = 0;
          if (event) controller.enqueue(encoder.encode(event));
        }
      },
      flush(controller) {
        pending += decoder.decode();
        if (pending) controller.enqueue(encoder.encode(pending));
      },
    }),
  );
}

/** The SDK's response with every message over `limit` replaced or dropped. */
export async function boundResponse(
  response: Response,
  methodOf: MethodOf,
  log: (line: string) => void,
  limit = MAX_MESSAGE_BYTES,
): Promise<Response> {
  const type = response.headers.get('content-type') ?? '';
  if (!response.body) return response;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  const init = { status: response.status, statusText: response.statusText, headers };
  if (/^text\/event-stream/i.test(type))
    return new Response(sseBound(response.body, methodOf, log, Math.min(limit, MAX_SSE_EVENT_BYTES)), init);
  if (!/^application\/json/i.test(type)) return response;
  const text = await response.text();
  if (!overLimit(text, limit) && !text.includes('-32603')) return new Response(text, init);
  const parsed = JSON.parse(text) as unknown;
  const body = Array.isArray(parsed)
    ? `[${parsed
        .map((m) => bounded(JSON.stringify(m), methodOf, log, limit))
        .filter(Boolean)
        .join(',')}]`
    : bounded(text, methodOf, log, limit);
  return body ? new Response(body, init) : new Response(null, { ...init, status: 202 });
}
