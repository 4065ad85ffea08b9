// What the package ships and how it is published: `npm pack` carries exactly the built server (no maps of
// sources it does not carry, no stale files), and server.json agrees with package.json for the MCP Registry.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const server = JSON.parse(readFileSync(join(ROOT, 'server.json'), 'utf8'));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe('the package', () => {
  it('ships the built server, one .js per source file and one self-contained .html per view, plus package.json, README and LICENSE', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout)[0].files as { path: string }[]).map((f) => f.path).sort();
    const all = walk(join(ROOT, 'src')).map((f) => relative(join(ROOT, 'src'), f));
    // The views (browser code) are bundled, each into one HTML file with its script inline.
    const sources = all
      .filter((f) => f.endsWith('.ts') && !f.startsWith('views/'))
      .map((f) => `dist/${f.replace(/\.ts$/, '.js')}`);
    const views = all.filter((f) => f.startsWith('views/') && f.endsWith('.html')).map((f) => `dist/${f}`);
    expect(views.length).toBeGreaterThan(0);
    expect(files).toEqual(['LICENSE', 'README.md', ...sources, ...views, 'package.json'].sort());
    for (const v of views)
      expect(readFileSync(join(ROOT, v), 'utf8')).not.toMatch(/<script[^>]+src=|<link[^>]+href=|__VIEW_SCRIPT__/);
    expect(readFileSync(join(ROOT, 'dist/index.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});

describe('a package packed from a fresh clone', () => {
  it('is built as npm prepares it (pack, a git or folder install), installs in an empty folder, and its bin serves', () => {
    // A copy of the sources without dist/ (as a clone is), sharing node_modules: packing it must build the server.
    const work = mkdtempSync(join(tmpdir(), 'cutroom-pack-'));
    const clone = join(work, 'clone');
    const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    for (const f of listed.stdout.split('\0').filter((f) => f && existsSync(join(ROOT, f)))) {
      mkdirSync(dirname(join(clone, f)), { recursive: true });
      copyFileSync(join(ROOT, f), join(clone, f));
    }
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    const npm = (args: string[], cwd: string) =>
      spawnSync('npm', [...args, '--no-audit', '--no-fund'], { cwd, encoding: 'utf8', timeout: 240_000 });
    const packed = npm(['pack', '--json', '--pack-destination', work], clone);
    expect(packed.status, packed.stderr).toBe(0);
    const tarball = join(
      work,
      (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[])[0]!.filename,
    );
    const files = (
      JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { files: { path: string }[] }[]
    )[0]!.files.map((f) => f.path);
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/views/preview-view.html');

    // Installed from the tarball alone in an empty folder: its dependencies come from the registry, no build runs.
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{"name":"try-cutroom","private":true}');
    const installed = npm(['install', '--omit=dev', tarball], app);
    expect(installed.status, installed.stderr).toBe(0);
    const bin = join(app, 'node_modules/.bin/cutroom');
    expect(existsSync(bin)).toBe(true);
    const lines = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pack', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n');
    const served = spawnSync(bin, [], {
      input: `${lines}\n`,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: work,
        CUTROOM_DATA_DIR: join(work, 'data'),
        CUTROOM_CACHE_DIR: join(work, 'cache'),
      },
    });
    expect(served.status, served.stderr).toBe(0);
    const replies = served.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result: { serverInfo?: { name: string }; tools?: unknown[] } });
    expect(replies.find((r) => r.id === 1)?.result.serverInfo?.name).toBe('cutroom');
    expect(replies.find((r) => r.id === 2)?.result.tools?.length).toBeGreaterThan(10);
  }, 300_000);
});

describe('server.json for the MCP Registry', () => {
  it('names the package and version package.json does, under its mcpName', () => {
    expect(server.$schema).toBe('https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json');
    expect(server.name).toBe(pkg.mcpName);
    expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(server.description.length).toBeGreaterThan(0);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect(server.version).toBe(pkg.version);
    expect(server.packages).toHaveLength(1);
    const [p] = server.packages;
    expect(p).toMatchObject({
      registryType: 'npm',
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: 'stdio' },
    });
    const vars = Object.fromEntries(
      (p.environmentVariables as { name: string; isSecret?: boolean }[]).map((v) => [v.name, v]),
    );
    expect(vars.VJ_API_KEY?.isSecret).toBe(true);
    // Every variable it names is one cutroom reads.
    const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
    for (const name of Object.keys(vars)) expect(config, name).toContain(`env.${name}`);
  });
});
