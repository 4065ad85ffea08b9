// A worker's /healthz (CUTROOM_WORKER_HEALTH_PORT): 200 while it takes jobs and its Redis answers, 503 when Redis
// does not answer (down, or hung) or it is draining, so that an orchestrator restarts it or stops counting on it.
// Nothing else is served. It is a listener of its own, which index.ts starts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WorkerHealth } from '../jobs/worker.js';

export interface WorkerHealthOptions {
  health(): Promise<WorkerHealth>;
  startedAt: number;
}

/** The state /healthz reports in a word: ok, or the first reason it is not. */
function healthStatus(h: WorkerHealth): string {
  if (h.ok) return 'ok';
  if (h.draining) return 'draining';
  if (!h.answers) return 'redis unreachable';
  return 'not running';
}

export function workerHealthListener(opts: WorkerHealthOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const send = (
    res: ServerResponse,
    status: number,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
    res.end(JSON.stringify(body));
  };
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz') return send(res, 404, { error: 'only GET /healthz is served here' });
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(res, 405, { error: 'GET /healthz' }, { allow: 'GET, HEAD' });
    void opts.health().then(
      (h) => {
        send(res, h.ok ? 200 : 503, {
          status: healthStatus(h),
          redis: h.redis,
          redis_answers: h.answers,
          jobs_active: h.active,
          concurrency: h.concurrency,
          draining: h.draining,
          uptime_s: Math.round((Date.now() - opts.startedAt) / 1000),
        });
      },
      (err: Error) => send(res, 503, { status: 'error', error: err.message }),
    );
  };
}
