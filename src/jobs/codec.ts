// Job data as JSON: what workflow/ hands a job (a checked edit holds Maps) survives the trip through Redis, and the
// same work always gets the same job id (content-addressed: a repeated request joins the running job).
import { createHash } from 'node:crypto';

const MAP = '$map';
const SET = '$set';

function tag(_key: string, value: unknown): unknown {
  if (value instanceof Map) return { [MAP]: [...value.entries()] };
  if (value instanceof Set) return { [SET]: [...value] };
  return value;
}

function untag(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === MAP) return new Map((value as Record<string, [unknown, unknown][]>)[MAP]);
    if (keys.length === 1 && keys[0] === SET) return new Set((value as Record<string, unknown[]>)[SET]);
  }
  return value;
}

export const encode = (value: unknown): string => JSON.stringify(value, tag);
export const decode = <T>(text: string): T => JSON.parse(text, untag) as T;

/** Strings in code-unit order: the same on every machine, whatever its locale. */
function compareCodeUnits(a: string, b: string): number {
  if (a < b) return -1;
  if (a > b) return 1;
  return 0;
}

/**
 * The job id of a piece of work: a hash of what it is. A link's query (a signature, an expiry) changes on every
 * fetch of the same media, so it is left out; objects' keys are sorted so that their order does not matter.
 */
export function jobIdOf(kind: string, what: unknown): string {
  const canonical = JSON.stringify(what, function (this: unknown, key, value: unknown) {
    const v = tag(key, value);
    if (typeof v === 'string' && /^https?:\/\/[^\s?#]+\?/i.test(v)) return v.slice(0, v.indexOf('?'));
    if (v && typeof v === 'object' && !Array.isArray(v))
      return Object.fromEntries(Object.entries(v).sort(([a], [b]) => compareCodeUnits(a, b)));
    return v;
  });
  // (No ':' in a BullMQ job id; and a kind first, so that an operator sees what a job is.)
  return `${kind}-${createHash('sha256').update(canonical).digest('hex').slice(0, 40)}`;
}
