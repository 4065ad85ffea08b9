// Redis away and back (issue 50, item 4): a real redis-server restarted empty (no persistence, as a lost Redis) under
// an HTTP server and a `cutroom worker` with one slot. The job whose record went with Redis is stopped on its worker
// (its slot free for the next job, though its media is still held), and each process says the outage once, with its
// length, instead of a line per retry.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer } from '../helpers/http-server.js';
import { queueSuite, startedJobs } from '../helpers/queue.js';

const suite = queueSuite();

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const t = Date.now();
  while (!(await check())) {
    if (Date.now() - t > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Redis restarted empty', () => {
  it('the lost job is stopped on its worker, and each process says the outage once, with its length', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cutroom-outage-'));
    const w = await suite.worker({ CUTROOM_CACHE_DIR: cacheDir, CUTROOM_WORKER_CONCURRENCY: '1' });
    const s = await startHttpServer({
      VJ_BACKEND: 'remote',
      VJ_API_URL: suite.service.url,
      CUTROOM_CACHE_DIR: cacheDir,
      CUTROOM_QUEUE_URL: suite.redis.url,
      CUTROOM_RENDER_WAIT_MS: '55000',
    });
    suite.defer(() => s.stop());
    const client = await connectHttp(s.url, { 'x-api-key': suite.service.apiKey });
    suite.defer(() => client.close());
    const preview = (end: number, voice = true) =>
      client.callTool(
        {
          name: 'preview_edit',
          arguments: {
            project_id: suite.projectId,
            resolution: '320x180',
            fps: 25,
            clips: [{ asset_id: suite.ids.red, start: 0, end }],
            ...(voice ? { overlays: [{ asset_id: suite.ids.voice, at: 0, until: 1 }] } : {}),
          },
        },
        { timeout: 120_000 },
      );
    // Once as served (the server has probed the media), then with the voiceover held until the test ends: the
    // worker's job waits for it, however fast the machine.
    const first = await preview(1);
    expect(first.isError, textOf(first)).toBeFalsy();
    suite.service.fail(
      { trickle: suite.service.gate() },
      { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
    );
    const held = preview(1.5);
    await until('the worker running the held preview', () => startedJobs(w).length === 2);
    const lost = startedJobs(w)[1]!.job;

    // Away until the server has felt it (its connections retrying), then back empty.
    await suite.redis.stop();
    await until('the server retrying', () => /Redis at \S+ is unreachable|Unhandled error event/.test(s.stderr()));
    await suite.redis.restart();
    // The call ends saying the job is gone.
    const ended = await held;
    expect(ended.isError).toBe(true);
    expect(textOf(ended)).toMatch(/gone from the queue/);
    // The worker stops it: its one slot takes the next job, though the held media never came.
    await until('the worker stopping the lost job', () => w.stderr().includes(`job ${lost}: its record is gone`));
    const next = await preview(1.2, false);
    expect(next.isError, textOf(next)).toBeFalsy();
    expect(startedJobs(w).length).toBe(3);

    // The server said the outage once, and that Redis was back with how long it was away; never a line per retry.
    // The worker too, if its connections felt it (one may have been between commands all along).
    expect([...s.stderr().matchAll(/Redis at \S+ is unreachable/g)]).toHaveLength(1);
    expect(s.stderr()).toMatch(/Redis at \S+ is back after \d+\.\d s/);
    for (const [who, log] of [
      ['server', s.stderr()],
      ['worker', w.stderr()],
    ] as const) {
      expect(log, who).not.toMatch(/Unhandled error event|queue: connect/);
      const said = [...log.matchAll(/Redis at \S+ is unreachable/g)].length;
      expect(said, who).toBeLessThanOrEqual(1);
      if (said) expect(log, who).toMatch(/Redis at \S+ is back after \d+\.\d s/);
    }
  }, 180_000);
});
