// One way to declare a tool: a value made by defineTool (its name, its config as tools/list shows it, the subject its
// failures name, and a named handler), registered from a list by registerTools, the one place that calls the SDK's
// registerTool. What every tool shares is applied there, once, in this order (a call goes through it top to bottom):
//   1. Schemas: the input schema answers arguments that do not fit it in a bounded error (input-errors.ts), and both
//      schemas are listed compacted (listed-schema.ts). The SDK checks the arguments against it and answers those that
//      do not fit itself (an isError result that goes through none of the steps below).
//   2. Guard: the handler runs inside guard (result.ts), so any throw becomes an isError result of one line, explained
//      with the tool's subject; nothing escapes as a protocol error.
//   3. Paths hidden over HTTP: the result is shown with the server's folders replaced (workflow/remote-paths.ts).
//   4. Failures logged: an isError result, as shown after 3, is also a log notification (level "error", logger
//      "cutroom"), sent at the level the client set with logging/setLevel, on the call's own stream (HTTP too).
// Budgets are each tool's own (budget.ts: fitting, fitList): a result is built within them, and nothing here cuts it.
// annotations.openWorldHint, where a tool does not set it, is the backend's: a remote backend is the service.
import type { CallToolResult, McpServer, ServerContext, ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { ToolDeps } from '../workflow/deps.js';
import type { RemotePaths } from '../workflow/remote-paths.js';
import { boundIssues } from './input-errors.js';
import { compactJsonSchema } from './listed-schema.js';
import { guard, type Subject } from './result.js';

/** What a handler is given besides its arguments and the call's context. */
export interface HandlerDeps extends ToolDeps {
  /** Tells the client the resource list changed (a project or an asset came or went). */
  resourceListChanged(): void;
}

export interface ToolDefinition<Input extends z.ZodType = z.ZodType, Output extends z.ZodType = z.ZodType> {
  name: string;
  config: {
    title?: string;
    /** A function of the deps when it names a setting (preview_edit's wait). */
    description: string | ((deps: ToolDeps) => string);
    inputSchema: Input;
    outputSchema: Output;
    annotations: ToolAnnotations;
    _meta?: Record<string, unknown>;
  };
  /** Registered only where it can work (a backend with the calls it needs, a folder it writes to). Default: always. */
  offered?(deps: ToolDeps): boolean;
  /** What a failure names ("project … not found; list_projects shows the ids you can use"), from the arguments. */
  subject?(args: z.output<Input>): Subject | undefined;
  handler(args: z.output<Input>, ctx: ServerContext, deps: HandlerDeps): Promise<CallToolResult>;
}

/** A tool as a value, its handler's arguments typed by its input schema. */
export function defineTool<Input extends z.ZodType, Output extends z.ZodType>(
  tool: ToolDefinition<Input, Output>,
): ToolDefinition<Input, Output> {
  return tool;
}

/** The config the SDK is given: schemas bounded and compacted (step 1), the description and openWorldHint resolved. */
function listed(tool: ToolDefinition, deps: ToolDeps) {
  const { title, description, inputSchema, outputSchema, annotations, _meta } = tool.config;
  return {
    ...(title !== undefined ? { title } : {}),
    description: typeof description === 'function' ? description(deps) : description,
    inputSchema: compactJsonSchema(boundIssues(inputSchema), false),
    outputSchema: compactJsonSchema(outputSchema, true),
    annotations: { ...annotations, openWorldHint: annotations.openWorldHint ?? deps.backend.kind === 'remote' },
    ...(_meta ? { _meta } : {}),
  };
}

/** Step 3: the result with the server's folders replaced; a failure thrown (none passes guard) shown the same way. */
async function shown(paths: RemotePaths | undefined, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  if (!paths) return run();
  try {
    return paths.value(await run());
  } catch (err) {
    if (err instanceof Error) err.message = paths.text(err.message);
    throw err;
  }
}

/** Step 4: a failure's text, as the client is shown it, sent as a log notification too. */
async function logFailure(name: string, result: CallToolResult, ctx: unknown): Promise<void> {
  if (!result.isError) return;
  const log = (
    ctx as { mcpReq?: { log?: (level: 'error', data: unknown, logger?: string) => Promise<void> } } | undefined
  )?.mcpReq?.log;
  const text = result.content
    .map((c) => (c.type === 'text' ? c.text : ''))
    .join(' ')
    .trim();
  await log?.('error', `${name}: ${text}`, 'cutroom').catch(() => {});
}

/**
 * Registers each tool offered with the deps on `server`, in the list's order (tools/list's), each through the steps
 * at the top of this file. `paths`: over HTTP, what the caller is shown of the server's files.
 */
export function registerTools(
  server: McpServer,
  deps: ToolDeps,
  tools: readonly ToolDefinition[],
  paths?: RemotePaths,
): void {
  const handlerDeps: HandlerDeps = { ...deps, resourceListChanged: () => server.sendResourceListChanged() };
  for (const tool of tools) {
    if (tool.offered && !tool.offered(deps)) continue;
    server.registerTool(tool.name, listed(tool, deps), async (args, ctx) => {
      const result = await shown(paths, () =>
        guard(tool.name, deps.logger, () => tool.handler(args, ctx, handlerDeps), tool.subject?.(args)),
      );
      await logFailure(tool.name, result, ctx);
      return result;
    });
  }
}
