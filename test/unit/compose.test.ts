// docker-compose.yml, checked without Docker (not available here): read as YAML (Python's yaml, which resolves the
// anchors and merge keys as Compose does), and each cutroom service's command and environment, with the Dockerfile's
// ENV under them, must be a configuration the bin accepts; every variable it sets must be one the code reads.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ROOT } from '../helpers/harness.js';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas?: number };
}

/** The file as Compose reads it, through Python's yaml (fails, never skips, without it: CI installs python3-yaml). */
function compose(): { services: Record<string, Service>; volumes: Record<string, unknown> } {
  const r = spawnSync(
    'python3',
    [
      '-c',
      'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))',
      join(ROOT, 'docker-compose.yml'),
    ],
    { encoding: 'utf8' },
  );
  if (r.error || r.status !== 0)
    throw new Error(
      `reading docker-compose.yml needs python3 with its yaml module (\`sudo apt-get install -y python3-yaml\`; scripts/system-deps.sh installs it): ${r.error?.message ?? r.stderr}`,
    );
  return JSON.parse(r.stdout);
}

/** Compose's ${VAR:-default} as it reads with VAR unset. */
const interpolate = (v: unknown) => String(v).replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');

/** The Dockerfile's runtime ENV (its last stage). */
function imageEnv(): Record<string, string> {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const last = text.slice(text.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const line of last.split('\n').filter((l) => l.startsWith('ENV ')))
    for (const m of line.matchAll(/([A-Z0-9_]+)=(\S+)/g)) env[m[1]!] = m[2]!;
  return env;
}

const c = compose();
const cutroom = Object.entries(c.services).filter(([, s]) => s.build === '.');
const role = (s: Service) => (s.command?.[0] === 'worker' ? 'worker' : 'http');
const count = (r: string) =>
  cutroom.filter(([, s]) => role(s) === r).reduce((n, [, s]) => n + (s.deploy?.replicas ?? 1), 0);
const envOf = (s: Service) =>
  Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));
const healthPort = (s: Service) => Number(/127\.0\.0\.1:(\d+)\/healthz/.exec(s.healthcheck?.test.join(' ') ?? '')?.[1]);

describe('docker-compose.yml', () => {
  it("runs Redis (the official image), two HTTP replicas and two workers of the Dockerfile's image", () => {
    expect(c.services.redis!.image).toMatch(/^redis:\d/);
    expect(c.services.redis!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(count('http')).toBe(2);
    expect(count('worker')).toBe(2);
  });

  it('gives each cutroom service a command the bin takes and an environment it accepts, every variable one it reads', () => {
    const read = new Set(
      [...readFileSync(join(ROOT, 'src/config.ts'), 'utf8').matchAll(/env\.([A-Z0-9_]+)/g)].map((m) => m[1]!),
    );
    const base = imageEnv();
    expect(base.CUTROOM_CACHE_DIR).toBeDefined();
    for (const [name, s] of cutroom) {
      const env = envOf(s);
      for (const k of Object.keys(env)) expect(read, `${name} sets ${k}`).toContain(k);
      const config = loadConfig({ ...base, ...env, HOME: '/home/node' }, s.command ?? []);
      expect(config.queueUrl, name).toBe('redis://redis:6379');
      expect(config.backend, name).toBe('remote');
      if (role(s) === 'worker') {
        expect(config.worker, name).toBeDefined();
        // Its healthcheck asks where the worker listens (loopback: the container's own check).
        expect(config.worker!.healthPort, name).toBe(healthPort(s));
        expect(config.worker!.healthHost).toBe('127.0.0.1');
      } else {
        expect(config.http, name).toBeDefined();
        expect(healthPort(s), name).toBe(config.http!.port);
        expect(
          s.ports?.some((p) => p.endsWith(`:${config.http!.port}`)),
          name,
        ).toBe(true);
      }
      expect(s.healthcheck, name).toBeDefined();
      expect(s.depends_on?.redis?.condition, name).toBe('service_healthy');
    }
  });

  it('shares one volume between every cutroom service, holding the cache dir and the data dir', () => {
    const mounts = cutroom.map(([, s]) => s.volumes ?? []);
    expect(new Set(mounts.map((m) => JSON.stringify(m))).size).toBe(1);
    const [volume, at] = mounts[0]![0]!.split(':') as [string, string];
    expect(Object.keys(c.volumes)).toContain(volume);
    for (const [name, s] of cutroom) {
      const config = loadConfig({ ...imageEnv(), ...envOf(s), HOME: '/home/node' }, s.command ?? []);
      expect(config.cacheDir.startsWith(`${at}/`), name).toBe(true);
      expect(config.dataDir.startsWith(`${at}/`), name).toBe(true);
    }
  });
});
