// Small helpers shared by the benchmarks.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The server to measure: this checkout's build, or another's (BENCH_BIN, to pair a change with what it replaces). */
export const BIN = process.env.BENCH_BIN ?? join(ROOT, 'dist/index.js');

export function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, median: q(0.5), p90: q(0.9), p95: q(0.95), min: s[0], max: s[s.length - 1] };
}

export const fmt = (ms) => `${ms.toFixed(3)} ms`;

/** Runs fn `warmup` times uncounted, then `n` times, and returns the stats of the counted runs (ms). */
export async function timeIt(n, fn, warmup) {
  const samples = [];
  for (let i = 0; i < n + warmup; i++) {
    const t = performance.now();
    await fn();
    if (i >= warmup) samples.push(performance.now() - t);
  }
  return stats(samples);
}

/** A server (this build, or `bin`: another's) over stdio with this environment. */
export async function connect(env, bin = BIN) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'cutroom-bench', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}
