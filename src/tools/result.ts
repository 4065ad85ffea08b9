// Shaping tool results: structuredContent plus a short readable text, or an isError result whose one line
// tells the agent what to do next. Every handler runs inside guard(), so nothing escapes as a protocol error.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ServiceError } from '../api/errors.js';
import type { Logger } from '../log.js';
import { redact } from '../log.js';
import { UserFacingError as ToolError, isDiskFull } from '../errors.js';

export function ok<T extends object>(structured: T, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured as Record<string, unknown> };
}

export function fail(message: string): CallToolResult {
  return { content: [{ type: 'text', text: redact(message) }], isError: true };
}

/** An error a tool raises on purpose: its message is already written for the agent. */
export { UserFacingError as ToolError, requireUuid } from '../errors.js';

export interface Subject {
  /** e.g. "project 3f2b…" — named in not-found messages */
  what: string;
  /** the tool that lists valid ids for it */
  listedBy: string;
}

/** Turns any failure into one actionable line. */
export function explain(err: unknown, subject?: Subject): string {
  if (err instanceof ToolError) return err.message;
  if (err instanceof ServiceError) {
    switch (err.kind) {
      case 'timeout':
        return `${err.message}; it may be busy: try again, or raise VJ_TIMEOUT_MS`;
      case 'network':
      case 'invalid_response':
        return err.message;
      case 'cancelled':
        return 'cancelled before the service answered';
      case 'http':
        break;
    }
    const status = err.status ?? 0;
    const detail = err.detail ? ` (${err.detail})` : '';
    if (status === 401) return `the service rejected the API key (401): check VJ_API_KEY (on a hosted cutroom: the key your client sends)${detail}`;
    if (status === 403) return `the API key may not do this (403)${detail}: check VJ_API_KEY (on a hosted cutroom: the key your client sends) and the project's owner`;
    if (status === 404 && subject) return `${subject.what} not found; ${subject.listedBy} shows the ids you can use`;
    if (status === 404) return `not found (404)${detail}`;
    if (status === 422 || status === 400) return `the service rejected the request (${status})${detail || ''}; correct the arguments and call again`;
    if (status === 429) return `the service is rate limiting (429)${detail}; wait a little and try again`;
    if (status >= 500) return `the service failed (${status})${detail}; try again later`;
    return err.message;
  }
  const message = err instanceof Error ? err.message : String(err);
  // A full disk is not a bug: every tool says so in words, whatever it was writing.
  if (isDiskFull(err)) return `a disk cutroom writes to is full (${message}); nothing was kept: free space there (CUTROOM_CACHE_DIR or CUTROOM_DATA_DIR) and call again`;
  return `unexpected failure: ${message}`;
}

/**
 * A write (POST, DELETE) whose outcome is unknown (timeout, 5xx, a reset after sending) must never invite a blind
 * retry: the error says so and names the read that tells whether it was applied. Other errors pass through.
 */
export function unknownOutcome(err: unknown, what: string, howToTell: string): unknown {
  if (!(err instanceof ServiceError) || !err.maybeApplied) return err;
  const fact =
    err.kind === 'http' ? `the service failed (${err.status})${err.detail ? `: ${err.detail}` : ''}` : err.kind === 'cancelled' ? 'cancelled while waiting for the answer' : err.message.split(';')[0];
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
    if (!(err instanceof ToolError) && !(err instanceof ServiceError)) logger.debug(`${tool}: ${(err as Error)?.stack ?? err}`);
    return fail(logger.hide ? logger.hide(message) : message);
  }
}
