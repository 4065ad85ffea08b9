// /metrics as Prometheus' text exposition format (0.0.4): the server's own figures, and the queue's when one is
// configured (jobs/metrics.ts gathers them; this file only writes them out).
import type { Histogram, QueueSnapshot } from '../jobs/metrics.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface ServerFigures {
  version: string;
  backend: 'local' | 'remote';
  inFlight: number;
  draining: boolean;
  uptimeS: number;
}

/** A label value as the format wants it: backslash, double quote and newline escaped. */
const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string>) => {
  const e = Object.entries(l);
  return e.length ? `{${e.map(([k, v]) => `${k}="${esc(v)}"`).join(',')}}` : '';
};
/** Numbers as the format writes them (Go's float syntax: +Inf, no exponent surprises for integers). */
function num(n: number): string {
  if (n === Infinity) return '+Inf';
  if (Number.isInteger(n)) return String(n);
  return n.toPrecision(6).replace(/\.?0+$/, '');
}

class Writer {
  private lines: string[] = [];
  family(name: string, type: 'gauge' | 'counter' | 'histogram', help: string): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }
  sample(name: string, l: Record<string, string>, value: number): this {
    this.lines.push(`${name}${labels(l)} ${num(value)}`);
    return this;
  }
  histogram(name: string, l: Record<string, string>, h: Histogram, bounds: number[]): this {
    let cumulative = 0;
    bounds.forEach((b, i) => this.sample(`${name}_bucket`, { ...l, le: num(b) }, (cumulative += h.counts[i]!)));
    this.sample(`${name}_bucket`, { ...l, le: '+Inf' }, h.count);
    this.sample(`${name}_sum`, l, h.sum);
    return this.sample(`${name}_count`, l, h.count);
  }
  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

export function exposition(server: ServerFigures, queue: QueueSnapshot | undefined, bounds: number[]): string {
  const w = new Writer();
  w.family(
    'cutroom_info',
    'gauge',
    'The server: its version, backend and whether previews run on a job queue (always 1).',
  ).sample('cutroom_info', { version: server.version, backend: server.backend, queue: queue ? 'redis' : 'none' }, 1);
  w.family('cutroom_uptime_seconds', 'gauge', 'Seconds since this server started.').sample(
    'cutroom_uptime_seconds',
    {},
    server.uptimeS,
  );
  w.family('cutroom_http_calls_in_flight', 'gauge', 'MCP calls this server is answering now.').sample(
    'cutroom_http_calls_in_flight',
    {},
    server.inFlight,
  );
  w.family('cutroom_http_draining', 'gauge', '1 while this server drains before stopping.').sample(
    'cutroom_http_draining',
    {},
    server.draining ? 1 : 0,
  );
  if (!queue) return w.text();
  w.family(
    'cutroom_queue_up',
    'gauge',
    "1 when the queue's Redis answered this scrape; when 0 the job counts are absent.",
  ).sample('cutroom_queue_up', {}, queue.up ? 1 : 0);
  if (queue.up) {
    w.family(
      'cutroom_queue_jobs',
      'gauge',
      'Jobs in the queue by kind and state (failed: those kept, the last hour at most); the whole queue, the same from every replica.',
    );
    for (const j of queue.jobs) w.sample('cutroom_queue_jobs', { kind: j.kind, state: j.state }, j.count);
    w.family(
      'cutroom_queue_oldest_waiting_seconds',
      'gauge',
      "Age of the oldest job not running yet: waiting for a worker, or delayed (a retry's backoff, its caller's share); 0 when none.",
    ).sample('cutroom_queue_oldest_waiting_seconds', {}, queue.oldestWaitingS);
  }
  w.family(
    'cutroom_queue_job_duration_seconds',
    'histogram',
    "Completed jobs' run time on a worker, by kind, heard since this server started (every replica hears every job: do not sum replicas).",
  );
  for (const [kind, h] of queue.durations) w.histogram('cutroom_queue_job_duration_seconds', { kind }, h, bounds);
  w.family(
    'cutroom_queue_job_wait_seconds',
    'histogram',
    "Completed jobs' time from queued to started, by kind, heard since this server started.",
  );
  for (const [kind, h] of queue.waits) w.histogram('cutroom_queue_job_wait_seconds', { kind }, h, bounds);
  w.family(
    'cutroom_queue_jobs_failed_total',
    'counter',
    'Jobs that failed for good (retries spent, or not retried), by kind, heard since this server started.',
  );
  for (const [kind, n] of queue.failedTotal) w.sample('cutroom_queue_jobs_failed_total', { kind }, n);
  return w.text();
}
