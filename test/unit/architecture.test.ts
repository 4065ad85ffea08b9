// ARCHITECTURE.md's rules of the house, checked on the imports of every source file: dependencies point down the
// list of rooms, the pure rooms do no I/O, only media/ spawns, only api/ calls out over HTTP, only jobs/ talks to
// the queue's Redis, only config.ts reads the environment, tools and resources share code through a room below
// both, and no file imports itself through others (no circle, type-only imports included).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

/** The rooms, top to bottom, as ARCHITECTURE.md lists them; the leaves last, usable by all. */
const ROOMS = [
  'index.ts',
  'http/',
  'auth/',
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
  'unknown-fields.ts',
  'message-bound.ts',
  'plain-errors.ts',
  'version.ts',
  'kept.ts',
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

/**
 * What a file's text imports: `import` and `export ... from` (type-only too, over several lines), a bare
 * `import '...'`, and `import('...')` of a literal. For every file in src/, the list TypeScript's own
 * ts.preProcessFile finds.
 */
const IMPORTS = /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gms;
const specifiersOf = (text: string) => [...text.matchAll(IMPORTS)].map((m) => (m[1] ?? m[2] ?? m[3])!);

/** The source files a file imports (paths relative to src/, as `file` is). */
const importedFiles = (file: string, specifiers: string[]) =>
  specifiers.filter((s) => s.startsWith('.')).map((s) => normalize(join(dirname(file), s)).replace(/\.js$/, '.ts'));

const files = sources().map((file) => {
  const text = readFileSync(file, 'utf8');
  const specifiers = specifiersOf(text);
  const imported = importedFiles(relative(SRC, file), specifiers);
  const local = imported.map((f) => roomOf(join(SRC, f)));
  return { file: relative(SRC, file), room: roomOf(file), text, specifiers, imported, local };
});

/**
 * The import circles of a graph of files, each as a path (`a -> b -> c -> a`): the strongly connected components
 * (Tarjan), and in each the shortest circle through every file of it not already on one shown.
 */
function circlesOf(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) components.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);

  /** The shortest path inside the component from `from` back to itself (breadth first). */
  const circleThrough = (from: string, component: string[]): string[] => {
    const cameFrom = new Map<string, string>();
    const queue = [from];
    while (queue.length) {
      const file = queue.shift()!;
      for (const next of graph.get(file) ?? []) {
        if (!component.includes(next) || cameFrom.has(next)) continue;
        cameFrom.set(next, file);
        if (next === from) {
          const path: string[] = [];
          for (let at = file; at !== from; at = cameFrom.get(at)!) path.unshift(at);
          return [from, ...path, from];
        }
        queue.push(next);
      }
    }
    return [from];
  };
  const out: string[] = [];
  for (const component of components.sort((a, b) => a[0]!.localeCompare(b[0]!))) {
    const shown = new Set<string>();
    for (const file of component) {
      if (shown.has(file)) continue;
      const circle = circleThrough(file, component);
      for (const f of circle) shown.add(f);
      out.push(circle.join(' -> '));
    }
  }
  return out;
}

/** The import graph of files given by their path (relative to src/) and text. */
const graphOf = (texts: Record<string, string>) =>
  new Map(Object.entries(texts).map(([file, text]) => [file, importedFiles(file, specifiersOf(text))]));

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

describe('no import circles', () => {
  it('no file imports itself through others, type-only imports and re-exports included', () => {
    const graph = new Map(files.map((f) => [f.file, f.imported]));
    expect(circlesOf(graph)).toEqual([]);
  });

  it('the check sees a circle through `import type`, `export * from`, an import over lines and import()', () => {
    expect(
      circlesOf(
        graphOf({
          'workflow/a.ts': "import type { B } from './b.js';\nimport { c } from '../edit/c.js';",
          'workflow/b.ts': "// b\nexport * from './a.js';",
          'edit/c.ts': "import {\n  type D,\n  d,\n} from '../workflow/d.js';\nexport const c = d;",
          'workflow/d.ts': "export { c as d } from '../edit/c.js';",
          'workflow/e.ts': "import { a } from './a.js';\nconst f = () => import('./f.js');",
          'workflow/f.ts': "import './e.js';",
          'workflow/g.ts': "import type { A } from './a.js';",
        }),
      ),
    ).toEqual([
      'edit/c.ts -> workflow/d.ts -> edit/c.ts',
      'workflow/a.ts -> workflow/b.ts -> workflow/a.ts',
      'workflow/e.ts -> workflow/f.ts -> workflow/e.ts',
    ]);
  });
});
