// Shaping tool results: structuredContent plus a short readable text, or an isError result whose one line
// tells the agent what to do next. Every handler runs inside guard(), so nothing escapes as a protocol error.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ServiceError } from '../api/errors.js';
import type { Logger } from '../log.js';
import { redact } from '../log.js';
import { UserFacingError as ToolError } from '../errors.js';
import { clipBytes } from './budget.js';

export function ok<T extends object>(structured: T, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured as Record<string, unknown> };
}

/** The most an error's text carries: one line that says what to do is short; an input it echoes can be any length. */
const MAX_ERROR_BYTES = 16 * 1024;

export function fail(message: string): CallToolResult {
  return { content: [{ type: 'text', text: clipBytes(redact(message), MAX_ERROR_BYTES) }], isError: true };
}

/** An error a tool raises on purpose: its message is already written for the agent. */
export { UserFacingError as ToolError, requireUuid, shown } from '../errors.js';

export { explain, type Subject } from '../workflow/explain.js';
import { explain, type Subject } from '../workflow/explain.js';

/**
 * A write (POST, DELETE) whose outcome is unknown (timeout, 5xx, a reset after sending) must never invite a blind
 * retry: the error says so and names the read that tells whether it was applied. Other errors pass through.
 */
export function unknownOutcome(err: unknown, what: string, howToTell: string): unknown {
  if (!(err instanceof ServiceError) || !err.maybeApplied) return err;
  const fact =
    err.kind === 'http'
      ? `the service failed (${err.status})${err.detail ? `: ${err.detail}` : ''}`
      : err.kind === 'cancelled'
        ? 'cancelled while waiting for the answer'
        : err.message.split(';')[0];
  return new ToolError(`${what} may or may not have reached the service (${fact}). It was not resent: ${howToTell}`);
}

/** Runs a handler; any throw becomes an isError result (logged to stderr) instead of a protocol error. */
export async function guard(
  tool: string,
  logger: Logger,
  fn: () => Promise<CallToolResult>,
  subject?: Subject,
): Promise<CallToolResult> {
  try {
    return await fn();
  } catch (err) {
    const message = explain(err, subject);
    if (!(err instanceof ToolError)) logger.warn(`${tool}: ${message}`);
    if (!(err instanceof ToolError) && !(err instanceof ServiceError))
      logger.debug(`${tool}: ${(err as Error)?.stack ?? err}`);
    return fail(logger.outward ? logger.outward(message) : logger.hide ? logger.hide(message) : message);
  }
}
