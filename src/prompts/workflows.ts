// MCP prompts: the workflows people start from, each a message that tells the assistant which tools to use in which
// order (the know-how in know-how.ts, filled in with the person's arguments). Project ids complete from the project
// list.
import { completable, type McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Backend } from '../backend/types.js';
import type { Logger } from '../log.js';
import { completeProjectId } from '../workflow/completion.js';
import { WORKFLOWS } from './know-how.js';

export interface PromptDeps {
  backend: Backend;
  logger: Logger;
}

const say = (text: string) => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] });

export function register(server: McpServer, deps: PromptDeps): void {
  const local = deps.backend.kind === 'local';
  for (const w of WORKFLOWS) {
    const shape: Record<string, z.ZodType> = {};
    for (const a of w.args) {
      const field = a.name === 'project_id' ? completable(z.string().describe(a.description), completeProjectId(deps)) : z.string().describe(a.description);
      shape[a.name] = a.required ? field : field.optional();
    }
    server.registerPrompt(w.name, { title: w.title, description: w.description, argsSchema: z.object(shape) }, (args) => say(w.steps(args as Record<string, string | undefined>, local).join('\n')));
  }
}
