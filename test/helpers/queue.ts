// The job queue's parts for tests: a real redis-server on a free loopback port (no persistence: a restart empties
// it, as a lost Redis does), and real `cutroom worker`s as child processes.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { BIN, baseEnv } from './harness.js';
import { mediaProject, type MediaName } from './media-project.js';

/** Fails (never skips) when redis-server is missing: CI installs it (scripts/system-deps.sh). */
export function requireRedisServer(): void {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0)
    throw new Error(
      "redis-server is not installed, and the job queue's tests need it: `sudo apt-get install -y redis-server` (scripts/system-deps.sh installs it; no service needs enabling)",
    );
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  url: string;
  port: number;
  proc: () => ChildProcess;
  /** Kills it (SIGKILL: nothing saved) and starts an empty one on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function startOn(port: number): Promise<ChildProcess> {
  const proc = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    // (Liveness bounds, here and below: a loaded machine starts processes slowly, a node one loading the AWS SDK most.)
    const timer = setTimeout(() => reject(new Error(`redis-server did not start in 30 s:\n${out}`)), 30_000);
    const on = (d: Buffer) => {
      out += d.toString('utf8');
      if (/Ready to accept connections/i.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout!.on('data', on);
    proc.stderr!.on('data', on);
    proc.once('exit', (code) => reject(new Error(`redis-server exited ${code}:\n${out}`)));
  });
  return proc;
}

const ended = (p: ChildProcess) =>
  p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((r) => p.once('exit', () => r()));

export async function startRedis(): Promise<RedisServer> {
  requireRedisServer();
  const port = await freePort();
  let proc = await startOn(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    proc: () => proc,
    restart: async () => {
      proc.kill('SIGKILL');
      await ended(proc);
      proc = await startOn(port);
    },
    stop: async () => {
      proc.kill('SIGKILL');
      await ended(proc);
    },
  };
}

export interface WorkerProcess {
  proc: ChildProcess;
  pid: number;
  stderr: () => string;
  stop(): Promise<void>;
}

/** A `cutroom worker`, ready once it said it runs. */
export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const proc = spawn(process.execPath, [BIN, 'worker'], { env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start in 60 s:\n${stderr}`)), 60_000);
    proc.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
      if (/cutroom worker: running/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`the worker exited ${code}:\n${stderr}`)));
  });
  return {
    proc,
    pid: proc.pid!,
    stderr: () => stderr + (stdout ? `\n[stdout, which a worker never writes] ${stdout}` : ''),
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await ended(proc);
      clearTimeout(timer);
    },
  };
}

/** A job a worker said it started: "job <kind>-<hex>: started preview <id>" or "... started the <what>". */
export interface StartedJob {
  job: string;
  kind: string;
  /** The preview's id, for a preview. */
  preview?: string;
}
export function startedJobs(w: WorkerProcess): StartedJob[] {
  return [...w.stderr().matchAll(/job ((\w+)-[0-9a-f]+): started (?:preview (\S+)|the \w+)/g)].map((m) => ({
    job: m[1]!,
    kind: m[2]!,
    ...(m[3] ? { preview: m[3] } : {}),
  }));
}

export interface QueueSuite {
  /** The suite's redis-server (started before the file's tests, stopped after them). */
  readonly redis: RedisServer;
  /** The test service with the generated media in a project (only with `service: true`); reset after each test. */
  readonly service: FakeService;
  readonly projectId: string;
  readonly ids: Record<MediaName, string>;
  /** Runs `fn` after the current test, the last deferred first (processes, clients, queues). */
  defer(fn: () => Promise<void>): void;
  /** A `cutroom worker` on the suite's Redis, stopped after the test. */
  worker(env: Record<string, string>): Promise<WorkerProcess>;
}

/**
 * The setup the job queue's test files share: one real redis-server for the file, the test service with the
 * generated media (unless `service: false`), and what each test started stopped after it. Call it at the top of a
 * test file; its fields are there once the file's tests run.
 */
export function queueSuite(opts: { service?: boolean } = {}): QueueSuite {
  const withService = opts.service !== false;
  let redis: RedisServer | undefined;
  let service: FakeService | undefined;
  let project: { projectId: string; ids: Record<MediaName, string> } | undefined;
  const cleanup: (() => Promise<void>)[] = [];
  const there = <T>(v: T | undefined, what: string): T => {
    if (v === undefined)
      throw new Error(
        `queueSuite: ${what} is there once the file's tests run${what === 'the service' && !withService ? ' (and only with service: true)' : ''}`,
      );
    return v;
  };
  beforeAll(async () => {
    redis = await startRedis();
    if (withService) {
      service = await new FakeService().start();
      project = mediaProject(service);
    }
  });
  afterEach(async () => {
    service?.reset();
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => {});
  });
  afterAll(async () => {
    await service?.stop();
    await redis?.stop();
  });
  const suite: QueueSuite = {
    get redis() {
      return there(redis, 'Redis');
    },
    get service() {
      return there(service, 'the service');
    },
    get projectId() {
      return there(project, 'the service').projectId;
    },
    get ids() {
      return there(project, 'the service').ids;
    },
    defer: (fn) => void cleanup.push(fn),
    worker: async (env) => {
      const w = await startWorker({ CUTROOM_QUEUE_URL: suite.redis.url, ...env });
      cleanup.push(() => w.stop());
      return w;
    },
  };
  return suite;
}
