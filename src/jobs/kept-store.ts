// The team's shared store of kept state (kept.ts): kept edits, transcripts, inspections, remembered names and exports
// every replica reads. In the bucket when one is configured (CUTROOM_S3_*, under <prefix>kept/), else in the queue's
// Redis (cutroom:kept:<key>, expiring KEPT_TTL_S after it was last written or read). A value is put whole (one PUT,
// one SET), so two replicas writing at once leave one whole value, never a mix.
import type { Redis } from 'ioredis';
import type { SharedKept } from '../kept.js';
import { PREFIX, within } from './connection.js';
import type { ObjectStore } from './object-store.js';

/** How long a value kept in Redis lives unread (the bucket's lifecycle rule says it there). */
export const KEPT_TTL_S = 30 * 24 * 3600;
/** How long a command may wait for Redis before the call says it does not answer. */
const REDIS_WAIT_MS = 5000;

export function bucketKept(objects: ObjectStore): SharedKept {
  return {
    shown: objects.shown,
    put: (key, bytes) => objects.putBytes(`kept/${key}`, bytes),
    get: (key) => objects.getBytes(`kept/${key}`),
  };
}

export function redisKept(conn: Redis, shown: string): SharedKept {
  const keyOf = (key: string) => `${PREFIX}:kept:${key}`;
  const away = (what: string) => (err: Error) => {
    throw new Error(`the job queue's Redis at ${shown} could not ${what} (${err.message}); try again once it answers`);
  };
  return {
    shown,
    put: async (key, bytes) => {
      await within(conn.set(keyOf(key), bytes, 'EX', KEPT_TTL_S), REDIS_WAIT_MS).catch(away('keep it'));
    },
    get: async (key) =>
      (await within(conn.getexBuffer(keyOf(key), 'EX', KEPT_TTL_S), REDIS_WAIT_MS).catch(
        away('read what another replica kept'),
      )) ?? undefined,
  };
}
