// Arguments nobody reads: zod's objects drop a key they do not declare, so an agent that sends `reframe: "auto"` or
// `focus.zoom` believes it was applied. Here a value that fits a schema is walked beside it, and every key no object
// of the schema declares is named by its path, with the field the agent most likely meant: the same name elsewhere
// in the schema (focus.zoom -> crop.zoom), a name a character or two off (volum -> volume), or a word agents use for
// one of cutroom's fields (reframe -> clips[].focus: "auto"). Objects declared loose (z.looseObject) take any key.
import { z } from 'zod';
import { editDistance } from './did-you-mean.js';

type Key = string | number;
type Def = { type: string } & Record<string, unknown>;

export interface UnknownField {
  /** Where the key is, in the arguments (clips[0].focus.zoom). */
  path: Key[];
  /** The names the object at that place declares. */
  known: string[];
  /** The field the agent most likely meant, as a path pattern (clips[].focus: "auto"), if any. */
  meant?: string;
}

/** Words agents use for a field of another name, with the value that does what they ask where one is needed. */
const SYNONYMS: Record<string, string> = {
  reframe: 'focus: "auto"',
  auto_reframe: 'focus: "auto"',
  level: 'volume',
  gain: 'gain_db',
  in: 'start',
  out: 'end',
  source_in: 'start',
  source_out: 'end',
  asset: 'asset_id',
  id: 'asset_id',
  subtitles: 'captions',
  aspect_ratio: 'resolution',
  framerate: 'fps',
  frame_rate: 'fps',
  output_filename: 'filename',
};

const def = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under wrappers that do not change an object's keys. */
function unwrapped(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let i = 0; i < 32; i++) {
    const d = def(s);
    if ('innerType' in d) s = d.innerType as z.ZodType;
    else if (d.type === 'pipe') s = d.in as z.ZodType;
    else if (d.type === 'lazy') s = (d.getter as () => z.ZodType)();
    else return s;
  }
  return s;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function walk(schema: z.ZodType, value: unknown, path: Key[], out: UnknownField[]): void {
  const s = unwrapped(schema);
  const d = def(s);
  if (d.type === 'object' && isObject(value)) {
    const shape = d.shape as Record<string, z.ZodType>;
    for (const [key, v] of Object.entries(value)) {
      const field = shape[key];
      if (field) walk(field, v, [...path, key], out);
      // A declared catchall (a loose object, a record of extras) takes the key; none means zod drops it.
      else if (d.catchall === undefined || def(d.catchall as z.ZodType).type === 'never')
        out.push({ path: [...path, key], known: Object.keys(shape) });
    }
  } else if (d.type === 'array' && Array.isArray(value)) {
    value.forEach((v, i) => walk(d.element as z.ZodType, v, [...path, i], out));
  } else if (d.type === 'record' && isObject(value)) {
    for (const [key, v] of Object.entries(value)) walk(d.valueType as z.ZodType, v, [...path, key], out);
  } else if (d.type === 'union') {
    // The option the value fits is the one that reads it.
    const option = (d.options as z.ZodType[]).find((o) => o.safeParse(value).success);
    if (option) walk(option, value, path, out);
  } else if (d.type === 'intersection') {
    walk(d.left as z.ZodType, value, path, out);
    walk(d.right as z.ZodType, value, path, out);
  }
}

/** Every field's path in the schema, arrays written `[]` (clips[].focus): where a misplaced name may belong. */
function fieldPaths(schema: z.ZodType, prefix: string, out: Map<string, string[]>, depth = 0): void {
  if (depth > 8) return;
  const s = unwrapped(schema);
  const d = def(s);
  if (d.type === 'object') {
    for (const [key, field] of Object.entries(d.shape as Record<string, z.ZodType>)) {
      const at = prefix ? `${prefix}.${key}` : key;
      out.set(key, [...(out.get(key) ?? []), at]);
      fieldPaths(field, at, out, depth + 1);
    }
  } else if (d.type === 'array') fieldPaths(d.element as z.ZodType, `${prefix}[]`, out, depth + 1);
  else if (d.type === 'union' || d.type === 'intersection') {
    const parts = d.type === 'union' ? (d.options as z.ZodType[]) : [d.left as z.ZodType, d.right as z.ZodType];
    for (const o of parts) fieldPaths(o, prefix, out, depth + 1);
  }
}

/** A step of a path as an agent writes it: `[0]` for an index, `.name` after the first. */
function step(k: Key, i: number, index: (n: number) => string): string {
  if (typeof k === 'number') return index(k);
  return i ? `.${k}` : k;
}

/** A path as an agent writes it: clips[0].focus.zoom. */
export function pathText(path: readonly Key[]): string {
  return path.map((k, i) => step(k, i, (n) => `[${n}]`)).join('');
}

/** The pattern of a concrete path (clips[0].focus -> clips[].focus), to compare with fieldPaths. */
const pattern = (path: readonly Key[]) => path.map((k, i) => step(k, i, () => '[]')).join('');

/** The path pattern `meant` would have at the concrete path's place: its indices kept where the patterns agree. */
function concrete(meant: string, path: readonly Key[]): string {
  let text = meant;
  for (const k of path) if (typeof k === 'number') text = text.replace('[]', `[${k}]`);
  return text;
}

/** The field a key most likely means: a declared name near it, the same name elsewhere, or a synonym's. */
function meantFor(key: string, path: Key[], known: string[], paths: Map<string, string[]>): string | undefined {
  const parent = path.slice(0, -1);
  const here = (name: string) => pathText([...parent, name]);
  const lower = key.toLowerCase();
  const near = known
    .map((k) => ({ k, d: editDistance(lower, k.toLowerCase(), 2) }))
    .filter((x) => x.d <= Math.min(2, Math.floor(key.length / 3)))
    .sort((a, b) => a.d - b.d)[0];
  if (near) return here(near.k);
  const synonym = SYNONYMS[lower];
  const name = synonym?.split(':')[0] ?? lower;
  const rest = synonym?.slice(name.length) ?? '';
  if (known.includes(name)) return here(name) + rest;
  // The same name declared elsewhere: the place nearest this one (the longest common start).
  const elsewhere = paths.get(name);
  if (!elsewhere?.length) return undefined;
  const at = pattern(path);
  const shared = (p: string) => {
    let i = 0;
    while (i < p.length && p[i] === at[i]) i++;
    return i;
  };
  const best = [...elsewhere].sort((a, b) => shared(b) - shared(a) || a.length - b.length)[0]!;
  return concrete(best, path) + rest;
}

/** The keys of `value` that `schema` does not read, each with what the agent most likely meant. */
export function unknownFields(schema: z.ZodType, value: unknown): UnknownField[] {
  const found: UnknownField[] = [];
  walk(schema, value, [], found);
  if (!found.length) return found;
  const paths = new Map<string, string[]>();
  fieldPaths(schema, '', paths);
  return found.map((f) => {
    const meant = meantFor(String(f.path.at(-1)), f.path, f.known, paths);
    return meant ? { ...f, meant } : f;
  });
}

/** One line for an unknown field: what it is not, what the place takes, and the likely fix. */
export function unknownFieldMessage(f: UnknownField): string {
  const where = pathText(f.path);
  const owner = f.path.length > 1 ? pathText(f.path.slice(0, -1)).replace(/\[\d+\]$/, '') : '';
  const what = owner ? `is not a field of ${owner} (it takes ${f.known.join(', ')})` : 'is not an argument';
  return `${where} ${what}${f.meant ? `; did you mean ${f.meant}?` : ''}`;
}
