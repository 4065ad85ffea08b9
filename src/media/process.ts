// The one place processes are spawned: an argument array (no shell), stdin ignored, stdout/stderr piped (the
// server's own stdout belongs to the protocol), a wall-clock timeout, and a kill on cancellation.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redact } from '../log.js';
import { isOurSpace, parseTag, processAlive, processStart, writerTag } from '../owners.js';

/**
 * Every child cutroom spawned and that still runs: stopped on every way out of the process (stopChildren), since
 * nothing cutroom starts may outlive it.
 */
const children = new Set<ChildProcess>();

/**
 * The environment variable that names a child's parent (its writer tag and start time): a server starting after a
 * killed one finds the processes the dead one left by it (killOrphanedChildren), whatever they were writing.
 */
export const OWNER_ENV = 'CUTROOM_OWNER';
let ownerValue: string | undefined;
/** The environment children get (set once by the bin from its config); until then they inherit the process's. */
let baseEnvironment: Record<string, string> | undefined;
export function setChildEnvironment(env: Record<string, string>): void {
  baseEnvironment = env;
}
const ownerId = () => (ownerValue ??= `${writerTag()}:${processStart(process.pid) ?? '0'}`);

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called with each chunk of stderr (ffmpeg's -progress pipe:2 and messages). */
  onStderr?: (chunk: string) => void;
  /** Called with each chunk of stdout (ffmpeg's -progress pipe:1). */
  onStdout?: (chunk: string) => void;
  /** Sample the child's peak resident set size (Linux /proc), for benchmarks. */
  trackRss?: boolean;
  /** Keep at most this many bytes of stdout (default 8 MiB) and of stderr (the tail, default 64 KiB). */
  maxStdout?: number;
  maxStderr?: number;
  cwd?: string;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  /** Peak resident set size of the child in KiB, where the platform reports it (Linux). */
  maxRssKiB?: number;
}

const KILL_GRACE_MS = 2000;

/**
 * A filter graph longer than this goes to ffmpeg in a file (-filter_complex_script): Linux takes no single argument
 * over 128 KiB (spawn E2BIG), and a long edit's graph (400 cuts, or several music beds ducking under a long
 * dialogue) outgrows it.
 */
export const INLINE_GRAPH_CHARS = 64 * 1024;

export async function runProcess(command: string, args: string[], opts: RunOptions): Promise<RunResult> {
  const at = args.indexOf('-filter_complex');
  const graph = at >= 0 ? args[at + 1] : undefined;
  if (graph === undefined || graph.length <= INLINE_GRAPH_CHARS) return spawnAndWait(command, args, opts);
  // A folder of cutroom's own for the script, removed when the process ends, however it ends.
  const dir = await mkdtemp(join(tmpdir(), 'cutroom-graph-'));
  try {
    const file = join(dir, 'graph.txt');
    await writeFile(file, graph);
    return await spawnAndWait(
      command,
      [...args.slice(0, at), '-filter_complex_script', file, ...args.slice(at + 2)],
      opts,
    );
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

function spawnAndWait(command: string, args: string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    const maxStdout = opts.maxStdout ?? 8 * 1024 * 1024;
    const maxStderr = opts.maxStderr ?? 64 * 1024;
    const out: Buffer[] = [];
    let outSize = 0;
    let err = '';
    let timedOut = false;
    let cancelled = false;
    let settled = false;

    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: opts.cwd,
      windowsHide: true,
      ...(baseEnvironment ? { env: { ...baseEnvironment, [OWNER_ENV]: ownerId() } } : {}),
    });
    children.add(child);
    let killTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, opts.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      stop();
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });

    let maxRssKiB: number | undefined;
    const sampleRss = async () => {
      try {
        const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
        const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
        if (hwm) maxRssKiB = Math.max(maxRssKiB ?? 0, Number(hwm[1]));
      } catch {
        // gone already, or not Linux
      }
    };
    const rssTimer = opts.trackRss && child.pid ? setInterval(() => void sampleRss(), 100) : undefined;

    child.stdout.on('data', (d: Buffer) => {
      opts.onStdout?.(d.toString('utf8'));
      if (outSize < maxStdout) {
        out.push(d);
        outSize += d.length;
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      opts.onStderr?.(d);
      err += d;
      if (err.length > maxStderr * 2) err = err.slice(-maxStderr);
    });
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      children.delete(child);
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      if (rssTimer) clearInterval(rssTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out),
        stderr: err.slice(-maxStderr),
        timedOut,
        cancelled,
        ...(maxRssKiB ? { maxRssKiB } : {}),
      });
    };
    child.on('error', (e) => {
      err += `\n${e.message}`;
      finish(null, null);
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/** A media job (render, scan, sheet) that failed or was cancelled: each kind names its own subclass. */
export class MediaJobError extends Error {
  override name = 'MediaJobError';
  constructor(
    message: string,
    readonly cancelled = false,
  ) {
    super(message);
  }
}

/**
 * The last meaningful line of an ffmpeg/ffprobe stderr, for error messages: without the query strings of the links
 * it names (ffmpeg quotes its input, signature and all) or any registered secret.
 */
export function lastErrorLine(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(
      (l) =>
        l &&
        !/^(frame|size|time|bitrate|speed|progress|out_time|fps|stream_|total_size|dup_frames|drop_frames)=/.test(l),
    );
  return redact(lines.at(-1) ?? 'no message').slice(0, 300);
}

/**
 * Why a process failed, in words: its last meaningful stderr line; and when it wrote none, how it ended (its exit
 * code, or the signal that killed it), never an empty "no message".
 */
export function whyFailed(r: Pick<RunResult, 'code' | 'signal' | 'stderr'>): string {
  const said = r.stderr.split(/\r?\n/).some((l) => l.trim()) ? lastErrorLine(r.stderr) : undefined;
  const how = r.signal
    ? `killed by ${r.signal}${r.signal === 'SIGKILL' ? ' (out of memory, or stopped from outside)' : ''}`
    : `exit code ${r.code}`;
  return said ? `${said}; ${how}` : `${how}, with nothing on stderr`;
}

/**
 * Kills every ffmpeg whose command line names `marker` (a render's folder, part of its output path): ffmpeg
 * outlives a killed parent. Reads /proc, so Linux only; elsewhere an orphan runs to its end, writing to a
 * temporary name that nothing ever renames.
 */
export async function killOrphans(marker: string): Promise<number> {
  let killed = 0;
  const pids = await readdir('/proc').catch(() => [] as string[]);
  for (const pid of pids.filter((p) => /^\d+$/.test(p))) {
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!/ffmpeg[^/]*$/.test(argv[0] ?? '') || !argv.some((a) => a.includes(marker))) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // gone already
    }
  }
  return killed;
}

/**
 * Stops every child still running: SIGTERM, then SIGKILL for those still there after `graceMs`. For every way the
 * process ends (stdin closed, a signal, a drain that gave up): a preview handed to the background or a call still
 * running leaves no ffmpeg behind. Resolves with how many there were.
 */
export async function stopChildren(graceMs = KILL_GRACE_MS): Promise<number> {
  const running = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
  if (!running.length) return 0;
  const gone = Promise.all(
    running.map(
      (c) =>
        new Promise<void>((resolve) =>
          c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve()),
        ),
    ),
  );
  for (const c of running) c.kill('SIGTERM');
  const timer = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
  await Promise.race([gone, timer]);
  killChildrenNow();
  return running.length;
}

/** SIGKILL to every child still running, synchronously: for process.on('exit'), the last way out. */
export function killChildrenNow(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

/**
 * Kills the processes a dead cutroom left running (kill -9 gives its children no word): any process whose
 * OWNER_ENV names a server of our pid space that no longer runs (or whose pid now belongs to another process).
 * Processes of another pid space are left to the servers of that space. Reads /proc, so Linux only. Resolves
 * with how many were killed.
 */
export async function killOrphanedChildren(): Promise<number> {
  let killed = 0;
  const pids = await readdir('/proc').catch(() => [] as string[]);
  const prefix = `${OWNER_ENV}=`;
  for (const pid of pids.filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
    const env = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    const entry = env.split('\0').find((e) => e.startsWith(prefix));
    if (!entry) continue;
    const [tag, start] = entry.slice(prefix.length).split(':');
    const owner = parseTag(tag ?? '');
    if (!owner || !isOurSpace(owner) || owner.pid === process.pid) continue;
    if (processAlive(owner.pid) && processStart(owner.pid) === start) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // gone already, or not ours to kill
    }
  }
  return killed;
}
