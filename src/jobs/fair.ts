// Fair between callers across workers: one caller's jobs run at most `limit` at once on all workers together
// (CUTROOM_HTTP_CALLER_FFMPEG), so one caller's fifty previews do not hold every worker while another's one waits.
// Each running job holds a lease in a sorted set per caller, renewed while it runs; a dead worker's lease lapses.
import type { Redis } from 'ioredis';
import { callerKey } from './connection.js';

// Atomically: drop lapsed leases, then take one if this job holds one already or the caller has room.
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

export interface Lease {
  release(): Promise<void>;
}

/** A slot of the caller's for this job, or undefined when the caller's jobs fill theirs (then try again later). */
export async function takeCallerSlot(
  conn: Redis,
  caller: string,
  limit: number,
  jobId: string,
  leaseMs: number,
): Promise<Lease | undefined> {
  const key = callerKey(caller);
  const now = Date.now();
  const got = (await conn.eval(
    TAKE,
    1,
    key,
    jobId,
    String(now),
    String(now - leaseMs),
    String(limit),
    String(leaseMs * 2),
  )) as number;
  if (got !== 1) return undefined;
  const renew = setInterval(
    () => void conn.zadd(key, String(Date.now()), jobId).catch(() => {}),
    Math.max(500, Math.round(leaseMs / 3)),
  );
  renew.unref();
  return {
    release: async () => {
      clearInterval(renew);
      await conn.zrem(key, jobId).catch(() => {});
    },
  };
}
