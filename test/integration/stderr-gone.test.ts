// A server whose stderr reader is gone (a host that closed the pipe, a wrapper that died) keeps answering on stdout,
// quietly: found when servers left by a killed test run spun on one core for 40 minutes, each failed log write
// raising an uncaught EPIPE that was logged to the same stderr, and so on.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { expect, it } from 'vitest';
import { BIN, baseEnv } from '../helpers/harness.js';

/** CPU time the process has used, seconds (utime + stime from /proc, in clock ticks of 1/100 s). */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

it('keeps answering, and stays idle, after its stderr reader is gone', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-stderr-'));
  const child = spawn(process.execPath, [BIN], {
    env: baseEnv({
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_CACHE_DIR: join(root, 'cache'),
      CUTROOM_LOG_LEVEL: 'debug',
    }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => void (out += d.toString()));
    const answer = async (id: number) => {
      await expect.poll(() => out.split('\n').some((l) => l.includes(`"id":${id}`)), { timeout: 15_000 }).toBe(true);
      return JSON.parse(out.split('\n').find((l) => l.includes(`"id":${id}`))!) as {
        result?: unknown;
        error?: unknown;
      };
    };
    const send = (m: unknown) => child.stdin!.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect((await answer(1)).result).toBeDefined();
    // The reader of its stderr goes away: every log line from now on fails to be written.
    child.stderr!.destroy();
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    for (let id = 2; id < 6; id++) {
      send({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'list_projects', arguments: { limit: 'not a number' } },
      });
      expect((await answer(id)).result).toBeDefined();
    }
    // Idle now: a server caught in a loop of failed log writes spends a whole core; an idle one next to nothing.
    const before = cpuSeconds(child.pid!);
    await new Promise((r) => setTimeout(r, 2000));
    expect(cpuSeconds(child.pid!) - before).toBeLessThan(0.5);
    // And it still stops when its client goes.
    const exited = once(child, 'exit');
    child.stdin!.end();
    await exited;
  } finally {
    child.kill('SIGKILL');
  }
}, 60_000);
