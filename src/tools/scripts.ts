// Script tools: list_scripts.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ScriptSummarySchema, summarizeScript, type ScriptSummary } from '../api/summaries.js';
import { defineTool, type HandlerDeps } from './define.js';
import { ok, requireUuid } from './result.js';

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ListScriptsInput = z.object({
  project_id: z.string(),
  limit: z.number().int().min(1).max(100).optional(),
});
const ListScriptsOutput = z.object({ scripts: z.array(ScriptSummarySchema) });

/** A script in list_scripts' text: its name and id, the inputs a generation needs, its steps. */
function scriptText(s: ScriptSummary): string {
  const inputs =
    s.inputs
      .map((i) => i.name)
      .filter(Boolean)
      .join(', ') || 'none';
  return `- ${s.name ?? '(unnamed)'} — ${s.id}\n  inputs: ${inputs}\n  steps: ${s.graph.steps.join(' → ')}`;
}

async function listScripts(
  { project_id, limit }: z.output<typeof ListScriptsInput>,
  ctx: ServerContext,
  { backend }: HandlerDeps,
) {
  const id = requireUuid(project_id, 'project_id', 'list_projects');
  const scripts = (await backend.listScripts(id, limit, { signal: ctx.mcpReq.signal })).map((s) =>
    summarizeScript(s, id),
  );
  const text = scripts.length ? scripts.map(scriptText).join('\n') : 'This project has no scripts.';
  return ok({ scripts }, text);
}

const listScriptsTool = defineTool({
  name: 'list_scripts',
  config: {
    title: 'List the scripts of a project',
    description:
      "A project's scripts (graphs of generation steps): the inputs a new generation needs and the steps in order; the whole graph at resource_uri.",
    inputSchema: ListScriptsInput,
    outputSchema: ListScriptsOutput,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: ({ project_id }) => ({ what: `project ${project_id}`, listedBy: 'list_projects' }),
  handler: listScripts,
});

export const scriptTools = [listScriptsTool];
