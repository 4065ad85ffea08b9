// Starts the built server with --http and connects the SDK's client over Streamable HTTP, as a hosted deployment
// is reached.
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { BIN, baseEnv, checkResultsAgainstSchemas } from './harness.js';

export interface HttpServer {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  base: string;
  proc: ChildProcess;
  stderr: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  stop: () => Promise<void>;
}

export async function startHttpServer(env: Record<string, string>, args: string[] = []): Promise<HttpServer> {
  const proc = spawn(process.execPath, [BIN, '--http', '--port', '0', ...args], {
    env: baseEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // (A liveness bound: a loaded machine starts a node process slowly.)
    const timer = setTimeout(() => reject(new Error(`no "listening" line in 60 s:\n${stderr}`)), 60_000);
    proc.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening:\n${stderr}${stdout}`)));
  });
  return {
    url,
    base: url.replace(/\/mcp$/, ''),
    proc,
    stderr: () => stderr + (stdout ? `\n[stdout] ${stdout}` : ''),
    exited,
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

export async function connectHttp(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'cutroom-http-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  await checkResultsAgainstSchemas(client);
  return client;
}
