// Spawns the built server over stdio and connects the SDK's client to it, as a real MCP host does.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'dist/index.js');
const TEE = join(ROOT, 'test/fixtures/tee-stdout.mjs');

export interface Spawned {
  client: Client;
  stderr: () => string;
  /** Every line the server wrote to stdout so far. */
  stdoutLines: () => string[];
  close: () => Promise<void>;
  pid: number | null;
}

/** The environment the server sees: nothing from the developer's shell beyond PATH and HOME. */
export function baseEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...extra };
}

/** tee: false runs the server with no wrapper, so that `pid` is the server's own (to kill it). */
export async function spawnServer(
  env: Record<string, string>,
  opts: { modern?: boolean; tee?: boolean; wrap?: string[]; capabilities?: Record<string, unknown> } = {},
): Promise<Spawned> {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-stdout-'));
  const stdoutLog = join(dir, 'stdout.log');
  // wrap: a command the server runs under (e.g. unshare, for a pid namespace of its own), given node and the bin.
  const argv = opts.wrap
    ? [...opts.wrap, process.execPath, BIN]
    : opts.tee === false
      ? [process.execPath, BIN]
      : [process.execPath, TEE, stdoutLog, process.execPath, BIN];
  const transport = new StdioClientTransport({
    command: argv[0]!,
    args: argv.slice(1),
    env: baseEnv(env),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const client = new Client(
    { name: 'cutroom-tests', version: '1.0.0' },
    {
      ...(opts.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(opts.capabilities ? { capabilities: opts.capabilities } : {}),
    },
  );
  await client.connect(transport);
  await checkResultsAgainstSchemas(client);
  return {
    client,
    stderr: () => stderr,
    stdoutLines: () => {
      try {
        // (A last line with no newline yet is a message still being written: not a line so far.)
        const lines = readFileSync(stdoutLog, 'utf8').split('\n');
        return lines.slice(0, -1).filter((l) => l.length > 0);
      } catch {
        return [];
      }
    },
    close: () => client.close(),
    pid: transport.pid,
  };
}

/** The text of a tool result's first text block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/** The most a tool result may carry (its text blocks plus its structuredContent as JSON): 24 KB. */
export const RESULT_BOUND_BYTES = 24 * 1024;

/** What a result costs an agent: the bytes of its text blocks and of its structuredContent as JSON. */
export function resultBytes(result: unknown): number {
  const r = result as { content?: { type: string; text?: string }[]; structuredContent?: unknown };
  const text = (r.content ?? [])
    .filter((c) => c.type === 'text')
    .reduce((n, c) => n + Buffer.byteLength(c.text ?? ''), 0);
  return text + (r.structuredContent === undefined ? 0 : Buffer.byteLength(JSON.stringify(r.structuredContent)));
}

/** Every tool result that did not conform to its tool's outputSchema, across the whole test file. */
export const nonConforming: { tool: string; errors: string; result: unknown }[] = [];

/**
 * Makes the client check every tool result against the tool's declared outputSchema with ajv, as strict
 * clients (MCP Inspector, the TypeScript SDK v1) do: a result whose structuredContent does not conform, error
 * results included, is recorded and fails the call loudly. The schemas come from tools/list, as a client gets them.
 * A result over RESULT_BOUND_BYTES fails the call too.
 */
export async function checkResultsAgainstSchemas(client: Client): Promise<void> {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const validators = new Map<string, ValidateFunction>();
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const tool of page.tools) if (tool.outputSchema) validators.set(tool.name, ajv.compile(tool.outputSchema));
    cursor = page.nextCursor;
  } while (cursor);
  const callTool = client.callTool.bind(client);
  client.callTool = async (params, options) => {
    const result = await callTool(params, options);
    // Every result of every test is held to the bound a client can afford, whatever the media behind it.
    const bytes = resultBytes(result);
    if (bytes > RESULT_BOUND_BYTES)
      throw new Error(
        `${params.name} returned ${bytes} bytes of text and structuredContent, over the ${RESULT_BOUND_BYTES} a result may carry`,
      );
    const validate = validators.get(params.name);
    if (validate && result.structuredContent !== undefined && !validate(result.structuredContent)) {
      const errors = ajv.errorsText(validate.errors);
      nonConforming.push({ tool: params.name, errors, result });
      throw new Error(
        `${params.name} returned structuredContent that does not match its outputSchema${result.isError ? ' (an error result)' : ''}: ${errors}`,
      );
    }
    return result;
  };
}

/** The canonical edit an edit_id names, as its resource (cutroom://edits/{id}) serves it. */
export async function storedEdit<E = Record<string, unknown>>(client: Client, editId: string): Promise<E> {
  const read = await client.readResource({ uri: `cutroom://edits/${editId}` });
  const first = read.contents[0] as { text?: string } | undefined;
  return (JSON.parse(first?.text ?? '{}') as { edit: E }).edit;
}
