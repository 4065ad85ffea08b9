// Script tools: list_scripts.
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ScriptSummarySchema, summarizeScript } from '../api/summaries.js';
import type { ToolDeps } from '../workflow/deps.js';
import { guard, ok, requireUuid } from './result.js';

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ListScriptsInput = z.object({
  project_id: z.string(),
  limit: z.number().int().min(1).max(100).optional(),
});
const ListScriptsOutput = z.object({ scripts: z.array(ScriptSummarySchema) });

export function register(server: McpServer, { backend, logger }: ToolDeps): void {
  server.registerTool(
    'list_scripts',
    {
      title: 'List the scripts of a project',
      description:
        "A project's scripts (graphs of generation steps): id, name, the inputs a new generation needs, the steps in order; the whole graph at resource_uri.",
      inputSchema: ListScriptsInput,
      outputSchema: ListScriptsOutput,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: backend.kind === 'remote',
      },
    },
    ({ project_id, limit }, ctx) =>
      guard(
        'list_scripts',
        logger,
        async () => {
          const id = requireUuid(project_id, 'project_id', 'list_projects');
          const scripts = (await backend.listScripts(id, limit, { signal: ctx.mcpReq.signal })).map((s) =>
            summarizeScript(s, id),
          );
          const text = scripts.length
            ? scripts
                .map((s) => {
                  const inputs =
                    s.inputs
                      .map((i) => i.name)
                      .filter(Boolean)
                      .join(', ') || 'none';
                  return `- ${s.name ?? '(unnamed)'} — ${s.id}\n  inputs: ${inputs}\n  steps: ${s.graph.steps.join(' → ')}`;
                })
                .join('\n')
            : 'This project has no scripts.';
          return ok({ scripts }, text);
        },
        { what: `project ${project_id}`, listedBy: 'list_projects' },
      ),
  );
}
