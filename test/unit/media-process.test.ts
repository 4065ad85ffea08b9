// Why a process failed, in words: never "no message" (issue 31, item 10).
import { describe, expect, it } from 'vitest';
import { runProcess, whyFailed } from '../../src/media/process.js';

describe('whyFailed', () => {
  it('says the last line of stderr and how the process ended', async () => {
    const r = await runProcess('sh', ['-c', 'echo "first" >&2; echo "Invalid data found" >&2; exit 3'], { timeoutMs: 10_000 });
    expect(whyFailed(r)).toBe('Invalid data found; exit code 3');
  });

  it('says how it ended when it wrote nothing on stderr', async () => {
    const silent = await runProcess('sh', ['-c', 'exit 7'], { timeoutMs: 10_000 });
    expect(whyFailed(silent)).toBe('exit code 7, with nothing on stderr');
    const killed = await runProcess('sh', ['-c', 'kill -9 $$'], { timeoutMs: 10_000 });
    expect(whyFailed(killed)).toBe('killed by SIGKILL (out of memory, or stopped from outside), with nothing on stderr');
  });
});
