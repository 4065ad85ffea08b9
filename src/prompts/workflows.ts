// MCP prompts: the workflows people start from, each a message that tells the assistant which tools to use in which
// order (the know-how in know-how.ts, filled in with the person's arguments). Project ids complete from the project
// list.
import { ProtocolError, ProtocolErrorCode, completable, type McpServer } from '@modelcontextprotocol/server';
import { isUuid } from '../errors.js';
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
      const field =
        a.name === 'project_id'
          ? completable(z.string().describe(a.description), completeProjectId(deps))
          : z.string().describe(a.description);
      shape[a.name] = a.required ? field : field.optional();
    }
    server.registerPrompt(
      w.name,
      { title: w.title, description: w.description, argsSchema: z.object(shape) },
      (args) => {
        const values = args as Record<string, string | undefined>;
        // An id that is not one is said now, as a prompt error, not written into tool calls that would all fail.
        const id = values.project_id?.trim() ?? '';
        if (!isUuid(id))
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `project_id ${JSON.stringify(id.slice(0, 60))} is not a UUID (like 3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e); list_projects shows the ids you can use`,
          );
        return say(w.steps({ ...values, project_id: id }, local).join('\n'));
      },
    );
  }
}
