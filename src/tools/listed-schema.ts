// Tool schemas as tools/list carries them, compacted: every byte of tools/list is paid in every chat, and the
// JSON Schema zod writes carries bytes no client needs. The zod schema still validates; only its JSON form changes:
// no `$schema` line (2020-12 is MCP's default dialect), no bounds that only restate a safe integer, and in output
// schemas no descriptions (a model reads the tool's description and the result, not the output schema) and no
// `additionalProperties: false` (a client need not reject fields it does not know). And portable: no empty schemas,
// no `type` arrays.

type Json = Record<string, unknown>;
const SAFE = Number.MAX_SAFE_INTEGER;

const isEmptySchema = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;

function compact(node: unknown, output: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, output));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$schema') continue;
    // Portable to every client (the MCP Inspector's strict check): `items: {}` and `additionalProperties: {}` say
    // what their absence says, and a client that reads one `type` per schema (Gemini's dialect) takes anyOf branches.
    if ((k === 'items' || k === 'additionalProperties') && isEmptySchema(v)) continue;
    if (k === 'type' && Array.isArray(v) && v.length > 1 && !('anyOf' in (node as Json))) {
      out.anyOf = v.map((t) => ({ type: t }));
      continue;
    }
    if ((k === 'minimum' && v === -SAFE) || (k === 'maximum' && v === SAFE)) continue;
    if (output && (k === 'description' || (k === 'additionalProperties' && v === false))) continue;
    // Inside `properties`, keys are field names, not keywords: a field called "description" stays.
    out[k] =
      k === 'properties' && v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v as Json).map(([f, s]) => [f, compact(s, output)]))
        : compact(v, output);
  }
  return out;
}

interface StandardJson {
  '~standard': { jsonSchema?: { input: (o: unknown) => unknown; output: (o: unknown) => unknown } } & Json;
}

/** Schemas already compacted: they are module constants, shared by the server made for every HTTP request. */
const done = new WeakSet<object>();

/** The same schema, whose JSON Schema (Standard JSON Schema, which the SDK reads for tools/list) is compacted. */
export function compactJsonSchema<T>(schema: T, output: boolean): T {
  if (!schema || typeof schema !== 'object' || done.has(schema)) return schema;
  done.add(schema);
  const std = (schema as unknown as StandardJson)['~standard'];
  const json = std?.jsonSchema;
  if (!json) return schema;
  Object.defineProperty(schema, '~standard', {
    value: {
      ...std,
      jsonSchema: {
        input: (o: unknown) => compact(json.input(o), output),
        output: (o: unknown) => compact(json.output(o), output),
      },
    },
    configurable: true,
  });
  return schema;
}
