// Why a process failed, in words: never "no message" (issue 31, item 10).
import { describe, expect, it } from 'vitest';
import { runProcess, whyFailed } from '../../src/media/process.js';

describe('whyFailed', () => {
  it('says the last line of stderr and how the process ended', async () => {
    const r = await runProcess('sh', ['-c', 'echo "first" >&2; echo "Invalid data found" >&2; exit 3'], {
      timeoutMs: 10_000,
    });
    expect(whyFailed(r)).toBe('Invalid data found; exit code 3');
  });

  it('says how it ended when it wrote nothing on stderr', async () => {
    const silent = await runProcess('sh', ['-c', 'exit 7'], { timeoutMs: 10_000 });
    expect(whyFailed(silent)).toBe('exit code 7, with nothing on stderr');
    const killed = await runProcess('sh', ['-c', 'kill -9 $$'], { timeoutMs: 10_000 });
    expect(whyFailed(killed)).toBe(
      'killed by SIGKILL (out of memory, or stopped from outside), with nothing on stderr',
    );
  });
});

describe('runProcess: a filter graph longer than one argument may be', () => {
  it('passes a graph of over 128 KiB in a file, and the process runs (spawn E2BIG before)', async () => {
    // One long number: a valid graph whatever its length.
    const graph = `[0:a]volume=1.${'0'.repeat(140_000)}[o]`;
    expect(graph.length).toBeGreaterThan(128 * 1024);
    const r = await runProcess(
      'ffmpeg',
      [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'anullsrc=r=8000:d=0.1',
        '-filter_complex',
        graph,
        '-map',
        '[o]',
        '-f',
        'null',
        '-',
      ],
      { timeoutMs: 60_000 },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  }, 60_000);
});
