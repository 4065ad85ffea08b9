// Any failure as one actionable line: what tools put in an isError result and resources in their errors.
import { ServiceError } from '../api/errors.js';
import { UserFacingError, isDiskFull } from '../errors.js';

export interface Subject {
  /** e.g. "project 3f2b…" — named in not-found messages */
  what: string;
  /** the tool that lists valid ids for it */
  listedBy: string;
}

/** Turns any failure into one actionable line. */
export function explain(err: unknown, subject?: Subject): string {
  if (err instanceof UserFacingError) return err.message;
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
    if (status === 401)
      return `the service rejected the API key (401): check VJ_API_KEY (on a hosted cutroom: the key your client sends)${detail}`;
    if (status === 403)
      return `the API key may not do this (403)${detail}: check VJ_API_KEY (on a hosted cutroom: the key your client sends) and the project's owner`;
    if (status === 404 && subject) return `${subject.what} not found; ${subject.listedBy} shows the ids you can use`;
    if (status === 404) return `not found (404)${detail}`;
    if (status === 422 || status === 400)
      return `the service rejected the request (${status})${detail || ''}; correct the arguments and call again`;
    if (status === 429) return `the service is rate limiting (429)${detail}; wait a little and try again`;
    if (status >= 500) return `the service failed (${status})${detail}; try again later`;
    return err.message;
  }
  const message = err instanceof Error ? err.message : String(err);
  // A full disk is not a bug: every tool says so in words, whatever it was writing.
  if (isDiskFull(err))
    return `a disk cutroom writes to is full (${message}); nothing was kept: free space there (CUTROOM_CACHE_DIR or CUTROOM_DATA_DIR) and call again`;
  return `unexpected failure: ${message}`;
}
