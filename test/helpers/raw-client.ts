// A client that speaks raw newline-delimited JSON-RPC to the built server: to send what no SDK client would
// (malformed lines, huge lines, an old protocol version) and read exactly what comes back.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BIN, baseEnv } from './harness.js';

export type Reply = {
  jsonrpc: string;
  id?: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  method?: string;
  params?: unknown;
};

export class RawClient {
  readonly child: ChildProcessWithoutNullStreams;
  readonly received: Reply[] = [];
  stderr = '';
  private buffer = '';
  private waiters: (() => void)[] = [];
  private nextId = 1;

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [BIN], { env: baseEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d: string) => {
      this.buffer += d;
      let nl;
      while ((nl = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (line.trim()) this.received.push(JSON.parse(line) as Reply);
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => {
      this.stderr += d;
    });
    this.child.stdin.on('error', () => {});
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Writes one line (a string as is, anything else as JSON), waiting for the pipe to take it. */
  async writeLine(line: unknown): Promise<void> {
    const text = typeof line === 'string' ? line : JSON.stringify(line);
    if (!this.child.stdin.write(`${text}\n`)) await new Promise((r) => this.child.stdin.once('drain', r));
  }

  /** The first message received (from now on or already) that matches, within timeoutMs. */
  async waitFor(match: (m: Reply) => boolean, timeoutMs = 20_000): Promise<Reply> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (!this.alive)
        throw new Error(`the server exited (${this.child.exitCode ?? this.child.signalCode}); stderr:\n${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no matching message within ${timeoutMs} ms; received ${JSON.stringify(this.received).slice(0, 2000)}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Sends a request and returns its response (result or error). */
  async request(method: string, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<Reply> {
    const id = `req-${this.nextId++}`;
    await this.writeLine({ jsonrpc: '2.0', id, method, params });
    return this.waitFor((m) => m.id === id && ('result' in m || 'error' in m), timeoutMs);
  }

  /** The 2025-era handshake at the given protocol version; returns the initialize result. */
  async initialize(protocolVersion: string): Promise<Record<string, unknown>> {
    const r = await this.request('initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'raw-test-client', version: '1.0.0' },
    });
    if (!r.result) throw new Error(`initialize failed: ${JSON.stringify(r.error)}`);
    await this.writeLine({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return r.result;
  }

  async close(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin.end();
    await exited;
  }
}
