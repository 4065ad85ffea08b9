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
  return new ToolError(
    `${what} may or may not have reached the service (${whatHappened(err)}). It was not resent: ${howToTell}`,
  );
}

/** What befell a write whose outcome is unknown, as its error says it. */
function whatHappened(err: ServiceError): string {
  if (err.kind === 'http') return `the service failed (${err.status})${err.detail ? `: ${err.detail}` : ''}`;
  if (err.kind === 'cancelled') return 'cancelled while waiting for the answer';
  return err.message.split(';')[0] ?? err.message;
}

/**
 * A failure's line as the caller may be shown it: the logger's outward form (a hosted caller's), else its redaction.
 */
function outward(logger: Logger, message: string): string {
  if (logger.outward) return logger.outward(message);
  if (logger.hide) return logger.hide(message);
  return message;
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
    return fail(outward(logger, message));
  }
}
