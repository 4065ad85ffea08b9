// The stdio wire: newline-delimited JSON-RPC on stdin/stdout, passed to serveStdio as its transport.
// Unlike the SDK's StdioServerTransport, no line can end the connection and no line goes unanswered: an
// oversized line is dropped as it streams in (never buffered whole) and answered -32600; a line that is not
// JSON is answered -32700; JSON that is not a JSON-RPC 2.0 message is answered -32600. Then the next line is read.
// No message is written over the bound (message-bound.ts).
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResponse,
  serializeMessage,
} from '@modelcontextprotocol/server';
import type { Readable, Writable } from 'node:stream';
import { MAX_MESSAGE_BYTES, overBound, overLimit } from './message-bound.js';
import { plainError } from './plain-errors.js';

/** The longest line (one message) read, in bytes; longer ones are answered with an error and dropped. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** How much of an oversized line is kept, to read its id from. */
export const OVERSIZED_HEAD_BYTES = 4 * 1024;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export type Line = { kind: 'line'; text: string } | { kind: 'oversized'; head: string; bytes: number; tail?: string };

/**
 * Splits a byte stream into lines (LF, with an optional CR before it). A line longer than `max` bytes is not
 * kept: only its first `headBytes` are, and its length is counted until its end.
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Set while discarding an oversized line: its head and its length so far. */
  private oversized: { head: Buffer; tail: Buffer; bytes: number } | undefined;

  constructor(
    private readonly max = MAX_LINE_BYTES,
    private readonly headBytes = OVERSIZED_HEAD_BYTES,
  ) {}

  push(chunk: Buffer): Line[] {
    const out: Line[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) break;
      out.push(this.endLine());
      start = nl + 1;
    }
    return out;
  }

  private take(part: Buffer): void {
    if (!part.length) return;
    if (this.oversized) {
      this.oversized.bytes += part.length;
      // The last bytes too: clients often write the id after params, at the very end.
      this.oversized.tail = Buffer.concat([this.oversized.tail, part]).subarray(-TAIL_BYTES);
      return;
    }
    if (this.size + part.length <= this.max) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    // Past the cap: keep the head, drop the rest as it arrives.
    const head = Buffer.concat([...this.chunks, part.subarray(0, Math.max(0, this.headBytes - this.size))]).subarray(
      0,
      this.headBytes,
    );
    this.oversized = {
      head: Buffer.from(head),
      tail: Buffer.from(part.subarray(-TAIL_BYTES)),
      bytes: this.size + part.length,
    };
    this.chunks = [];
    this.size = 0;
  }

  private endLine(): Line {
    if (this.oversized) {
      const { head, tail, bytes } = this.oversized;
      this.oversized = undefined;
      return { kind: 'oversized', head: head.toString('utf8'), tail: tail.toString('utf8'), bytes };
    }
    let buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    this.size = 0;
    if (buf.length && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
    return { kind: 'line', text: buf.toString('utf8') };
  }
}

/**
 * What the start of a message's text says about it: its id, the value of a top-level "id" member that comes
 * before any nested value (an object or array member ends the search, since what follows may be cut off), and
 * whether it is a response (a top-level "result" or "error" member before that point). Only a string or a
 * number counts as an id; anything else, or text that is not the start of a JSON object, gives null.
 */
export function readHead(head: string): { id: string | number | null; response: boolean } {
  let id: string | number | null = null;
  let response = false;
  const done = () => ({ id, response });
  let i = 0;
  const ws = () => {
    while (i < head.length && ' \t\r\n'.includes(head[i]!)) i++;
  };
  /** A JSON string token starting at i, decoded; undefined when it is cut off or malformed. */
  const str = (): string | undefined => {
    const from = i;
    i++;
    while (i < head.length) {
      const c = head[i]!;
      if (c === '\\') i += 2;
      else if (c === '"') {
        i++;
        try {
          return JSON.parse(head.slice(from, i)) as string;
        } catch {
          return undefined;
        }
      } else i++;
    }
    return undefined;
  };
  ws();
  if (head[i] !== '{') return done();
  i++;
  for (;;) {
    ws();
    if (head[i] !== '"') return done();
    const key = str();
    if (key === undefined) return done();
    if (key === 'result' || key === 'error') response = true;
    ws();
    if (head[i] !== ':') return done();
    i++;
    ws();
    const c = head[i];
    if (c === undefined || c === '{' || c === '[') return done();
    let value: unknown;
    if (c === '"') {
      value = str();
      if (value === undefined) return done();
    } else {
      const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(head.slice(i));
      if (!m) return done();
      i += m[0].length;
      // A number cut off by the end of the head is not the number that was sent.
      if (i >= head.length) return done();
      value = JSON.parse(m[0]);
    }
    if (key === 'id' && (typeof value === 'string' || typeof value === 'number')) id = value;
    ws();
    if (head[i] !== ',') return done();
    i++;
  }
}

/** How much of an oversized line's end is kept, to read an id written last. */
const TAIL_BYTES = 256;

/** An id that closes the message: `"id": 7}` or `"id": "a"}` at the very end (one brace: not a nested object's). */
export function idFromTail(tail: string): string | number | null {
  const m = /"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")\s*\}\s*\r?$/.exec(tail);
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return null;
  }
}

/** The id readHead finds, or null. */
export const idFromHead = (head: string): string | number | null => readHead(head).id;

export interface WireReply {
  code: number;
  message: string;
  id: string | number | null;
}

/**
 * What one line is: a message to deliver, an error to answer, or nothing to do (a blank line, or a malformed
 * response: a response is never answered). `log` says what was wrong, for one line on stderr.
 */
export function classifyLine(
  line: Line,
): { message: JSONRPCMessage } | { reply: WireReply; log: string } | { log?: string } {
  if (line.kind === 'oversized') {
    const mib = MAX_LINE_BYTES / (1024 * 1024);
    const log = `dropped a message of ${line.bytes} bytes (the limit is ${MAX_LINE_BYTES})`;
    const read = readHead(line.head);
    const { response } = read;
    const id = read.id ?? idFromTail(line.tail ?? '');
    if (response) return { log: `${log}: a response, not answered` };
    return {
      reply: {
        code: INVALID_REQUEST,
        message: `Invalid Request: the message is too large (${line.bytes} bytes; the limit is ${MAX_LINE_BYTES} bytes, ${mib} MiB)`,
        id,
      },
      log,
    };
  }
  if (!line.text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(line.text);
  } catch {
    return {
      reply: { code: PARSE_ERROR, message: 'Parse error: the line is not JSON', id: null },
      log: `a line of ${line.text.length} characters is not JSON`,
    };
  }
  if (isJSONRPCRequest(value) || isJSONRPCNotification(value) || isJSONRPCResponse(value))
    return { message: value as JSONRPCMessage };
  const obj =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  if (obj && ('result' in obj || 'error' in obj)) return { log: 'dropped a malformed JSON-RPC response' };
  const id = obj && (typeof obj.id === 'string' || typeof obj.id === 'number') ? obj.id : null;
  const why = invalidRequestReason(value, obj);
  return {
    reply: { code: INVALID_REQUEST, message: `Invalid Request: ${why}`, id },
    log: `answered an invalid message: ${why}`,
  };
}

/** Why a JSON value (and `obj`, the same value when it is a plain object) is not a JSON-RPC request. */
function invalidRequestReason(value: unknown, obj: Record<string, unknown> | undefined): string {
  if (Array.isArray(value)) return 'a batch (an array) is not accepted; send one message per line';
  if (!obj) return 'a JSON-RPC message is an object';
  if (obj.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (typeof obj.method !== 'string') return 'a request needs a method';
  return 'the message does not have the shape of a JSON-RPC 2.0 request or notification';
}

/** How long requests read before stdin ended may take to be answered before the process stops them. */
export const ANSWER_GRACE_MS = 120_000;
/** How long written output may take to leave for a reader that has stopped reading. */
const FLUSH_LIMIT_MS = 5_000;

const idKey = (id: string | number) => `${typeof id}:${id}`;

/**
 * Resolves once everything written to `out` has been handed to the OS (or it fails, or `limitMs` passes): writes
 * complete in order, so the callback of an empty write comes after every earlier one.
 */
function flushed(out: Writable, limitMs: number): Promise<void> {
  if (!out.writableLength || out.destroyed || out.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, limitMs);
    out.write('', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The MCP Transport serveStdio drives: start, send, close and the three callbacks. */
export class StdioWireTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private readonly splitter = new LineSplitter();
  private started = false;
  private closed = false;
  /** Requests read and not yet answered, by id (typed: 1 and "1" are two requests), with their methods. */
  private readonly pending = new Map<string, string>();
  private answered: (() => void) | undefined;
  private finishing: Promise<void> | undefined;

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    private readonly log: (line: string) => void = () => {},
    /** How long, after stdin ends, the requests already read may take to be answered. */
    private readonly answerGraceMs = ANSWER_GRACE_MS,
    /** The largest message written, in bytes (its line ending aside). */
    private readonly maxMessageBytes = MAX_MESSAGE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    for (const line of this.splitter.push(chunk)) {
      if (this.closed) return;
      const what = classifyLine(line);
      if ('message' in what) {
        const msg = what.message as { method?: string; id?: string | number; params?: { requestId?: unknown } };
        if (isJSONRPCRequest(what.message)) this.pending.set(idKey(what.message.id), what.message.method);
        // A cancelled request is never answered: stop waiting for it.
        else if (msg.method === 'notifications/cancelled') this.settle(msg.params?.requestId);
        this.onmessage?.(what.message);
        continue;
      }
      if (what.log) this.log(what.log);
      if ('reply' in what) {
        const { id, code, message } = what.reply;
        // A reply lost to a broken stdout is reported through onerror by send; nothing else to do here.
        this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch((err: Error) =>
          this.onerror?.(err),
        );
      }
    }
  };
  private readonly onStdinError = (err: Error) => this.onerror?.(err);
  private readonly onStdoutError = (err: Error) => {
    if (this.closed) return;
    this.onerror?.(err);
    void this.close();
  };
  // stdin ended (a script piped its requests in, or the client is leaving): answer what was asked, then close.
  private readonly onEnd = () => void this.finish(this.answerGraceMs).then(() => this.close());

  async start(): Promise<void> {
    if (this.started) throw new Error('the stdio wire is already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStdinError);
    this.stdin.on('end', this.onEnd);
    this.stdin.on('close', this.onEnd);
    this.stdout.on('error', this.onStdoutError);
    if (this.stdin.readableEnded || this.stdin.destroyed) setImmediate(this.onEnd);
  }

  send(original: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the stdio wire is closed'));
    const message = plainError(original);
    const m = message as { id?: unknown; result?: unknown; error?: unknown };
    const answers = 'result' in m || 'error' in m;
    const method =
      answers && (typeof m.id === 'string' || typeof m.id === 'number') ? this.pending.get(idKey(m.id)) : undefined;
    if (answers) this.settle(m.id);
    let line = serializeMessage(message);
    const bytes = overLimit(line.slice(0, -1), this.maxMessageBytes);
    if (bytes) {
      const { replacement, log } = overBound(message, bytes, method, this.maxMessageBytes);
      this.log(log);
      if (!replacement) return Promise.resolve();
      line = serializeMessage(replacement);
    }
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => {
        this.stdout.off('drain', onDrain);
        reject(err);
      };
      const onDrain = () => {
        this.stdout.off('error', onError);
        resolve();
      };
      this.stdout.once('error', onError);
      if (this.stdout.write(line)) {
        this.stdout.off('error', onError);
        resolve();
      } else {
        this.stdout.once('drain', onDrain);
      }
    });
  }

  private settle(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    this.pending.delete(idKey(id));
    if (!this.pending.size) this.answered?.();
  }

  /**
   * Before the process exits: waits (up to `graceMs`) for the requests already read to be answered, then (up to
   * FLUSH_LIMIT_MS, for a reader that stopped reading) for everything written to reach the pipe. Without this an
   * exit cuts an answer larger than the pipe's buffer short (Node writes to a pipe asynchronously).
   */
  /**
   * Ends the wait for answers that finish() began (a signal during the grace stdin's end gives): only flushing remains.
   */
  stopWaiting: () => void = () => {};

  finish(graceMs = 0): Promise<void> {
    this.finishing ??= (async () => {
      this.stdin.off('data', this.onData);
      if (this.pending.size && graceMs > 0 && !this.closed) {
        const since = Date.now();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          const done = () => {
            clearTimeout(timer);
            resolve();
          };
          this.answered = done;
          this.stopWaiting = done;
        });
        if (this.pending.size)
          this.log(
            `stdin closed: ${this.pending.size} request(s) still unanswered after ${Date.now() - since} ms; stopping`,
          );
      }
      await flushed(this.stdout, FLUSH_LIMIT_MS);
    })();
    return this.finishing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStdinError);
    this.stdin.off('end', this.onEnd);
    this.stdin.off('close', this.onEnd);
    // Late write failures after close are not news; keep a listener so they are not thrown either.
    this.stdout.off('error', this.onStdoutError);
    this.stdout.on('error', () => {});
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.onclose?.();
  }
}
