// An error whose message is already written for the agent: said as is, without "unexpected failure".
export class UserFacingError extends Error {
  override name = 'UserFacingError';
}

/**
 * A value from a request (an id, a path, a query) as a message quotes it: at most `max` characters. A message that
 * echoed an input whole would be as long as the input, and results are bounded (24 KB).
 */
export const shown = (value: string, max = 60): string => (value.length > max ? `${value.slice(0, max - 1)}…` : value);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (v: string) => UUID.test(v);

/** Ids are checked before any request, so a typo never costs a round trip. */
export function requireUuid(value: string, field: string, listedBy: string): string {
  const v = value.trim();
  if (!UUID.test(v)) {
    throw new UserFacingError(
      `${field} "${shown(v)}" is not a UUID (like 3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e); ${listedBy} shows the ids you can use`,
    );
  }
  return v;
}

/** A failure because a disk (or the user's quota) is full: an errno of ENOSPC or EDQUOT, or ffmpeg saying so. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return (
    code === 'ENOSPC' ||
    code === 'EDQUOT' ||
    /No space left on device|ENOSPC|Disk quota exceeded/i.test((err as Error | undefined)?.message ?? '')
  );
}

/** What a tool says when the disk under cutroom's cache dir filled up while it worked. */
export const cacheDiskFull = (what: string, cacheDir: string) =>
  new UserFacingError(
    `${what} failed: the disk holding the cache dir (CUTROOM_CACHE_DIR=${cacheDir}) is full; nothing was kept. ` +
      'Free space on it (older previews, inspections and transcripts can go) or point CUTROOM_CACHE_DIR at a disk with room, then call again',
  );
