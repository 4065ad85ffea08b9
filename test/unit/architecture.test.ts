// ARCHITECTURE.md's rules of the house, checked on the imports of every source file: dependencies point down the
// list of rooms, the pure rooms do no I/O, only media/ spawns, only api/ calls out over HTTP, only jobs/ talks to
// the queue's Redis, only config.ts reads the environment, and tools and resources share code through a room below
// both.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

/** The rooms, top to bottom, as ARCHITECTURE.md lists them; the leaves last, usable by all. */
const ROOMS = [
  'index.ts',
  'http/',
  'assemble.ts',
  'stdio-wire.ts',
  'server.ts',
  'config.ts',
  'jobs/',
  'tools/',
  'resources/',
  'prompts/',
  'views/',
  'workflow/',
  'backend/',
  'api/',
  'media/',
  'interchange/',
  'analysis/',
  'edit/',
];
const LEAVES = [
  'log.ts',
  'errors.ts',
  'owners.ts',
  'open-allowed.ts',
  'did-you-mean.ts',
  'message-bound.ts',
  'plain-errors.ts',
  'version.ts',
];

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const roomOf = (file: string) => {
  const rel = relative(SRC, file);
  return rel.includes('/') ? `${rel.split('/')[0]}/` : rel;
};

const files = sources().map((file) => {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
  const local = specifiers
    .filter((s) => s.startsWith('.'))
    .map((s) => roomOf(normalize(join(dirname(file), s)).replace(/\.js$/, '.ts')));
  return { file: relative(SRC, file), room: roomOf(file), text, specifiers, local };
});

describe('the rooms of the house', () => {
  it('every source file is in a room ARCHITECTURE.md names, and the document lists them all', () => {
    const doc = readFileSync(join(SRC, '../ARCHITECTURE.md'), 'utf8');
    for (const f of files) expect([...ROOMS, ...LEAVES], f.file).toContain(f.room);
    for (const room of [...ROOMS, ...LEAVES]) expect(doc, room).toContain(`\`${room}\``);
  });

  it('dependencies point down the list; leaves use only leaves', () => {
    const wrong: string[] = [];
    for (const f of files) {
      for (const target of f.local) {
        if (target === f.room || LEAVES.includes(target)) continue;
        if (LEAVES.includes(f.room) || ROOMS.indexOf(target) < ROOMS.indexOf(f.room))
          wrong.push(`${f.file} -> ${target}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('tools and resources do not borrow from each other', () => {
    const wrong = files
      .filter(
        (f) =>
          (f.room === 'tools/' && f.local.includes('resources/')) ||
          (f.room === 'resources/' && f.local.includes('tools/')),
      )
      .map((f) => f.file);
    expect(wrong).toEqual([]);
  });

  it('edit/, interchange/ and analysis/ do no I/O: no file system, process, network or media room', () => {
    const io = /^(node:)?(fs|fs\/promises|child_process|net|http|https|dgram)$|^undici$/;
    const wrong = files
      .filter((f) => ['edit/', 'interchange/', 'analysis/'].includes(f.room))
      .flatMap((f) =>
        [
          ...f.specifiers.filter((s) => io.test(s)),
          ...f.local.filter((r) => ['media/', 'api/', 'backend/'].includes(r)),
        ].map((s) => `${f.file}: ${s}`),
      );
    expect(wrong).toEqual([]);
  });

  it('only media/ spawns processes, only api/ calls out over HTTP, only config.ts reads the environment', () => {
    const spawns = files.filter((f) => f.specifiers.some((s) => /^(node:)?child_process$/.test(s))).map((f) => f.room);
    expect([...new Set(spawns)]).toEqual(['media/']);
    const http = files.filter((f) => f.specifiers.includes('undici')).map((f) => f.room);
    expect([...new Set(http)]).toEqual(['api/']);
    const queue = files.filter((f) => f.specifiers.some((s) => s === 'bullmq' || s === 'ioredis')).map((f) => f.room);
    expect([...new Set(queue)]).toEqual(['jobs/']);
    // The bin hands process.env to config.ts (and the children's environment it derives); nobody else reads it.
    const env = files
      .filter((f) => /process\.env\b/.test(f.text) && !['config.ts', 'index.ts'].includes(f.file))
      .map((f) => f.file);
    expect(env).toEqual([]);
    const bin = files.find((f) => f.file === 'index.ts')!;
    expect([...bin.text.matchAll(/process\.env\b/g)].length).toBeGreaterThan(0);
    for (const line of bin.text.split('\n').filter((l) => /process\.env\b/.test(l)))
      expect(line).toMatch(/loadConfig\(process\.env|childEnvironment\(process\.env\)/);
  });
});
