// What a call whose arguments do not fit a tool's input schema gets back: the SDK answers with every issue zod found,
// one per element, so that 50,000 wrong clips made an error of 3 MB. Here a tool's input schema reports its first
// issues and a count of the rest, each path's keys quoted short: the same error, bounded like every result. And
// arguments that fit but carry a key the schema does not read are refused, each named with the field most likely
// meant (unknown-fields.ts), instead of being dropped while the agent believes them applied.

import type { z } from 'zod';
import { unknownFieldMessage, unknownFields } from '../unknown-fields.js';

/** Issues spelled out; the rest are counted. */
const MAX_ISSUES = 5;
/** A key of a path as an issue quotes it (a record's keys are the caller's). */
const KEY_CHARS = 60;

type Json = Record<string, unknown>;
type Issue = { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] };
type Result = { value?: unknown; issues?: readonly Issue[] };
interface StandardValidate {
  '~standard': { validate: (value: unknown) => Result | Promise<Result> } & Json;
}

const shortKey = (k: PropertyKey | { key: PropertyKey }) => {
  const key = typeof k === 'object' && k !== null && 'key' in k ? k.key : k;
  return typeof key === 'string' && key.length > KEY_CHARS ? `${key.slice(0, KEY_CHARS - 1)}…` : key;
};

function bounded(result: Result): Result {
  const issues = result.issues;
  if (!issues?.length) return result;
  const shown = issues.slice(0, MAX_ISSUES).map((i) => ({ ...i, ...(i.path ? { path: i.path.map(shortKey) } : {}) }));
  if (issues.length > MAX_ISSUES)
    shown.push({ message: `… ${issues.length - MAX_ISSUES} more problems of the same arguments` });
  return { issues: shown };
}

/** Schemas already bounded: they are module constants, shared by the server made for every HTTP request. */
const done = new WeakSet<object>();

/** A value that fits: refused when it carries keys the schema does not read. */
function readWhole(schema: z.ZodType, value: unknown, result: Result): Result {
  if (result.issues?.length) return result;
  const unknown = unknownFields(schema, value);
  return unknown.length ? { issues: unknown.map((f) => ({ message: unknownFieldMessage(f) })) } : result;
}

/**
 * The same schema, whose validation refuses keys it does not read and reports at most MAX_ISSUES issues (and a count
 * of the rest).
 */
export function boundIssues<T>(schema: T): T {
  if (!schema || typeof schema !== 'object' || done.has(schema)) return schema;
  done.add(schema);
  const std = (schema as unknown as StandardValidate)['~standard'];
  if (typeof std?.validate !== 'function') return schema;
  const validate = std.validate.bind(std);
  Object.defineProperty(schema, '~standard', {
    value: {
      ...std,
      validate: (value: unknown) => {
        const r = validate(value);
        const checked = (res: Result) => bounded(readWhole(schema as unknown as z.ZodType, value, res));
        return r instanceof Promise ? r.then(checked) : checked(r);
      },
    },
    configurable: true,
  });
  return schema;
}
