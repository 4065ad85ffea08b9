// /metrics' text and its gate, on the real HTTP app behind a real listener on 127.0.0.1 (no queue: the queue's
// figures are tested against a real Redis in test/integration/queue-ops.test.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Callers } from '../../src/http/callers.js';
import { exposition } from '../../src/http/prometheus.js';
import { createHttpApp } from '../../src/http/serve-http.js';
import { BUCKETS, KINDS, countsByKind, kindOf, observe, type Histogram } from '../../src/jobs/metrics.js';
import { silentLogger } from '../../src/log.js';
import { loadConfig } from '../../src/config.js';

const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

/** The app as configured by `env`, told it listens on `host`, reached on 127.0.0.1. */
async function app(env: Record<string, string>, host: string): Promise<string> {
  const config = loadConfig({ VJ_API_KEY: 'k'.repeat(20), ...env }, ['--http']);
  const a = createHttpApp({
    backendKind: 'remote',
    http: { ...config.http!, host },
    callers: {} as Callers,
    logger: silentLogger,
  });
  const s = createServer(a.listener);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('/metrics', () => {
  it('counts every kind of job in a state, 0 included (an alert on waiting previews sees a 0, not nothing)', () => {
    expect([...KINDS].sort()).toEqual(['inspect', 'preview', 'render', 'transcribe']);
    const id = (kind: string) => `${kind}-${'a'.repeat(40)}`;
    expect(Object.fromEntries(countsByKind([], 0))).toEqual({ inspect: 0, transcribe: 0, render: 0, preview: 0 });
    expect(Object.fromEntries(countsByKind([id('preview'), id('preview'), id('render')], 5))).toEqual({
      inspect: 0,
      transcribe: 0,
      render: 1,
      preview: 2,
      other: 2,
    });
  });

  it('is refused beyond loopback without a token, and served with one', async () => {
    const open = await app({ CUTROOM_HTTP_ALLOWED_HOSTS: '127.0.0.1' }, '0.0.0.0');
    const refused = await fetch(`${open}/metrics`);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/set CUTROOM_METRICS_TOKEN/);
    const guarded = await app(
      { CUTROOM_HTTP_ALLOWED_HOSTS: '127.0.0.1', CUTROOM_METRICS_TOKEN: 'scrape-0123456789abcdef' },
      '0.0.0.0',
    );
    expect(
      (await fetch(`${guarded}/metrics`, { headers: { authorization: 'Bearer wrong-0123456789abcdef' } })).status,
    ).toBe(401);
    const ok = await fetch(`${guarded}/metrics`, { headers: { authorization: 'Bearer scrape-0123456789abcdef' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await ok.text()).toMatch(/^cutroom_info\{version="[^"]+",backend="remote",queue="none"\} 1$/m);
    // On loopback with no token at all it is open (only this machine reaches it), like /healthz.
    expect((await fetch(`${await app({}, '127.0.0.1')}/metrics`)).status).toBe(200);
  });

  it('writes the text format: label values escaped, histograms cumulative up to +Inf', () => {
    const durations = new Map<string, Histogram>();
    for (const s of [0.05, 0.3, 0.3, 7, 9999]) observe(durations, 'preview', s);
    const text = exposition(
      { version: '1"2\\3', backend: 'local', inFlight: 2, draining: false, uptimeS: 5 },
      {
        up: true,
        jobs: [{ kind: 'preview', state: 'waiting', count: 3 }],
        oldestWaitingS: 4.5,
        durations,
        waits: new Map(),
        failedTotal: new Map([['inspect', 2]]),
      },
      BUCKETS,
    );
    expect(text).toContain('cutroom_info{version="1\\"2\\\\3",backend="local",queue="redis"} 1');
    expect(text).toContain('cutroom_queue_jobs{kind="preview",state="waiting"} 3');
    expect(text).toContain('cutroom_queue_oldest_waiting_seconds 4.5');
    expect(text).toContain('cutroom_queue_job_duration_seconds_bucket{kind="preview",le="0.1"} 1');
    expect(text).toContain('cutroom_queue_job_duration_seconds_bucket{kind="preview",le="0.5"} 3');
    expect(text).toContain('cutroom_queue_job_duration_seconds_bucket{kind="preview",le="600"} 4');
    expect(text).toContain('cutroom_queue_job_duration_seconds_bucket{kind="preview",le="+Inf"} 5');
    expect(text).toContain('cutroom_queue_job_duration_seconds_count{kind="preview"} 5');
    expect(text).toContain('cutroom_queue_jobs_failed_total{kind="inspect"} 2');
    expect(text.endsWith('\n')).toBe(true);
    // Every line a comment or "name{labels} value".
    for (const line of text.trimEnd().split('\n'))
      expect(line).toMatch(/^(# (HELP|TYPE) \S+ .+|[a-z_]+(\{.*\})? [0-9.e+-]+|[a-z_]+(\{.*\})? \+Inf)$/);
    expect(kindOf(`preview-${'a'.repeat(40)}`)).toBe('preview');
    expect(kindOf('12')).toBe('other');
  });
});
