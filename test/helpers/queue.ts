// The job queue's parts for tests: a real redis-server on a free loopback port (no persistence: a restart empties
// it, as a lost Redis does), and real `cutroom worker`s as child processes.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { BIN, baseEnv } from './harness.js';

/** Fails (never skips) when redis-server is missing: CI installs it (scripts/system-deps.sh). */
export function requireRedisServer(): void {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error('redis-server is not installed, and the job queue\'s tests need it: `sudo apt-get install -y redis-server` (scripts/system-deps.sh installs it; no service needs enabling)');
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
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s:\n${out}`)), 10_000);
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

const ended = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => p.once('exit', () => r())));

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
    const timer = setTimeout(() => reject(new Error(`the worker did not start in 20 s:\n${stderr}`)), 20_000);
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
