// Waiting for a state, never for a time: a condition polled until it holds. The bound is a liveness bound (how long
// before the wait is called hung, generous for a loaded machine), not a timing target: a test that passes waits only
// as long as the state takes.

/**
 * Resolves with the condition's first truthy value; fails after `timeoutMs` (default 60 s) saying what it waited
 * for and what it last saw. The condition is asked at once, then every `intervalMs` (default 50 ms).
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  opts: { what: string; timeoutMs?: number; intervalMs?: number },
): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until)
      throw new Error(`waited ${timeoutMs / 1000} s for ${opts.what}; last saw ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
