// Spawns the built server over stdio and connects the SDK's client to it, as a real MCP host does.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'dist/index.js');
const TEE = join(ROOT, 'test/fixtures/tee-stdout.mjs');

export interface Spawned {
  client: Client;
  stderr: () => string;
  /** Every line the server wrote to stdout so far. */
  stdoutLines: () => string[];
  close: () => Promise<void>;
  pid: number | null;
}

/** The environment the server sees: nothing from the developer's shell beyond PATH and HOME. */
export function baseEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...extra };
}

/** tee: false runs the server with no wrapper, so that `pid` is the server's own (to kill it). */
export async function spawnServer(env: Record<string, string>, opts: { modern?: boolean; tee?: boolean } = {}): Promise<Spawned> {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-stdout-'));
  const stdoutLog = join(dir, 'stdout.log');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: opts.tee === false ? [BIN] : [TEE, stdoutLog, process.execPath, BIN],
    env: baseEnv(env),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const client = new Client(
    { name: 'cutroom-tests', version: '1.0.0' },
    opts.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    stdoutLines: () => {
      try {
        return readFileSync(stdoutLog, 'utf8').split('\n').filter((l) => l.length > 0);
      } catch {
        return [];
      }
    },
    close: () => client.close(),
    pid: transport.pid,
  };
}

/** The text of a tool result's first text block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}
