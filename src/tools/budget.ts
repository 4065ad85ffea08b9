// Results an agent can afford: no tool result (its text and structuredContent, as JSON) over 24 KB, whatever a project
// or a folder holds. A long list is cut to the items that fit, and the result says what was left out and how to get it.
import type { CallToolResult } from '@modelcontextprotocol/server';

/** The most a tool result may weigh, as JSON. */
export const MAX_RESULT_BYTES = 24 * 1024;
/** What a paged result aims at: under the bound, with room for what a transport or a protocol version adds. */
const PAGE_BYTES = MAX_RESULT_BYTES - 1024;

export const resultBytes = (r: CallToolResult) => Buffer.byteLength(JSON.stringify(r));

/**
 * The result showing the most of `total` items that fits: `build(k)` makes the result showing the first k. At least one
 * item is shown when there is one (so that paging always moves on), even if that one alone is over the bound.
 */
export function fitting(
  total: number,
  build: (shown: number) => CallToolResult,
  max = PAGE_BYTES,
): { result: CallToolResult; shown: number } {
  const full = build(total);
  if (total <= 1 || resultBytes(full) <= max) return { result: full, shown: total };
  // The size grows with k: the largest k that fits, by bisection.
  let lo = 1;
  let hi = total - 1;
  let best = 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (resultBytes(build(mid)) <= max) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return { result: build(best), shown: best };
}

/** The longest head of a list whose JSON fits `bytes` (at least one item when there is one), and how many are left: for
 * results made of parts with budgets of their own. */
export function fitList<T>(items: readonly T[], bytes: number): { shown: T[]; leftOut: number } {
  let used = 2;
  let n = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (n > 0 && used + size > bytes) break;
    used += size;
    n++;
  }
  return { shown: items.slice(0, n), leftOut: items.length - n };
}

/** A text cut to `max` characters, with an ellipsis when cut. */
export const clipText = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** A text cut to at most `max` bytes of UTF-8 (never inside a character), saying how much was cut. */
export function clipBytes(s: string, max: number): string {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length <= max) return s;
  const note = ` … (${bytes.length} bytes in all, cut)`;
  return `${bytes
    .subarray(0, max - Buffer.byteLength(note))
    .toString('utf8')
    .replace(/\uFFFD+$/, '')}${note}`;
}
