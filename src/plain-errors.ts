// Answers whose error a client can act on. The SDK answers a request whose params fail its own schema (prompts/get
// with a number for a string argument, tools/call with arguments that are not an object) with -32603, Internal
// error, and the validator's issues as a JSON dump. It is the caller's mistake, not the server's: every transport
// passes what it writes through here, and such an answer goes out as -32602, Invalid params, in one line naming the
// field and what it must be.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

const INTERNAL_ERROR = -32603;
const INVALID_PARAMS = -32602;

interface Issue {
  path?: unknown[];
  message?: string;
  expected?: string;
}

/** The issues of a validator's dump, or undefined when the text is not one. */
function issuesOf(text: string): Issue[] | undefined {
  if (!text.startsWith('[')) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed) || !parsed.length) return undefined;
    return parsed.every(
      (i) => i && typeof i === 'object' && typeof (i as Issue).message === 'string' && Array.isArray((i as Issue).path),
    )
      ? (parsed as Issue[])
      : undefined;
  } catch {
    return undefined;
  }
}

/** One line for a dump's issues: "arguments.project_id: expected string, received number". */
export function issuesLine(issues: Issue[], max = 3): string {
  const line = (i: Issue) => {
    const path = (i.path ?? [])
      .filter((p, k) => !(k === 0 && p === 'params'))
      .map(String)
      .join('.');
    return `${path || '(the params)'}: ${(i.message ?? '').replace(/^Invalid input: /, '')}`;
  };
  return `${issues.slice(0, max).map(line).join('; ')}${issues.length > max ? `; and ${issues.length - max} more` : ''}`;
}

/**
 * The message to write: `message` itself, or, for an answer carrying a validator's dump as an internal error, -32602 in
 * one line.
 */
export function plainError(message: JSONRPCMessage): JSONRPCMessage {
  const m = message as { error?: { code?: number; message?: string } };
  if (m.error?.code !== INTERNAL_ERROR || typeof m.error.message !== 'string') return message;
  const issues = issuesOf(m.error.message);
  if (!issues) return message;
  return {
    ...message,
    error: { code: INVALID_PARAMS, message: `Invalid params: ${issuesLine(issues)}` },
  } as JSONRPCMessage;
}

/** The same for a message's JSON text (HTTP bodies and events): unchanged unless it is such an answer. */
export function plainErrorJson(json: string): string {
  // Cheap test first: almost every message is not an internal error.
  if (!json.includes(String(INTERNAL_ERROR))) return json;
  try {
    const message = JSON.parse(json) as JSONRPCMessage;
    const plain = plainError(message);
    return plain === message ? json : JSON.stringify(plain);
  } catch {
    return json;
  }
}
