// What the package ships and how it is published: `npm pack` carries exactly the built server (no maps of
// sources it does not carry, no stale files), and server.json agrees with package.json for the MCP Registry.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const server = JSON.parse(readFileSync(join(ROOT, 'server.json'), 'utf8'));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('the package', () => {
  it('ships the built server, one .js per source file and one self-contained .html per view, plus package.json, README and LICENSE', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout)[0].files as { path: string }[]).map((f) => f.path).sort();
    const all = walk(join(ROOT, 'src')).map((f) => relative(join(ROOT, 'src'), f));
    // The views (browser code) are bundled, each into one HTML file with its script inline.
    const sources = all.filter((f) => f.endsWith('.ts') && !f.startsWith('views/')).map((f) => `dist/${f.replace(/\.ts$/, '.js')}`);
    const views = all.filter((f) => f.startsWith('views/') && f.endsWith('.html')).map((f) => `dist/${f}`);
    expect(views.length).toBeGreaterThan(0);
    expect(files).toEqual(['LICENSE', 'README.md', ...sources, ...views, 'package.json'].sort());
    for (const v of views) expect(readFileSync(join(ROOT, v), 'utf8')).not.toMatch(/<script[^>]+src=|<link[^>]+href=|__VIEW_SCRIPT__/);
    expect(readFileSync(join(ROOT, 'dist/index.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
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
    expect(p).toMatchObject({ registryType: 'npm', identifier: pkg.name, version: pkg.version, transport: { type: 'stdio' } });
    const vars = Object.fromEntries((p.environmentVariables as { name: string; isSecret?: boolean }[]).map((v) => [v.name, v]));
    expect(vars.VJ_API_KEY?.isSecret).toBe(true);
    // Every variable it names is one cutroom reads.
    const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
    for (const name of Object.keys(vars)) expect(config, name).toContain(`env.${name}`);
  });
});
