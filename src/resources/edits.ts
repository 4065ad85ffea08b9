// cutroom://edits/{edit_id}: an edit compose_edit (or import_edit) checked and kept, whole: the canonical edit as the
// service takes it, its project, the options cutroom renders it with, and how it was resolved (notes). Tool results
// list a long edit's cuts only in part; this is where all of them are, in parts when larger than one message.
import { ResourceNotFoundError, type McpServer } from '@modelcontextprotocol/server';
import type { ToolDeps } from '../workflow/deps.js';
import { one } from './projects.js';
import { DEFAULT_PART_BYTES, registerParted, textBody } from './parts.js';

const COMPLETION_LIMIT = 100;

export function register(server: McpServer, deps: ToolDeps): void {
  const store = deps.edits;
  if (!store) return;
  registerParted(
    server,
    'edit',
    'cutroom://edits/{edit_id}',
    {
      list: undefined,
      complete: {
        edit_id: async (value) =>
          (await store.ids())
            .map((e) => e.id)
            .filter((id) => id.startsWith(value))
            .slice(0, COMPLETION_LIMIT),
      },
    },
    {
      title: 'Checked edit',
      description:
        'An edit kept by compose_edit or import_edit, whole (JSON): give its edit_id to preview_edit, render_edit or export_edit.',
      mimeType: 'application/json',
    },
    deps.partBytes ?? DEFAULT_PART_BYTES,
    async (uri, variables) => {
      const stored = await store.get(one(variables.edit_id));
      if (!stored)
        throw new ResourceNotFoundError(
          uri.href,
          'no such edit is kept here; compose_edit returns edit ids (composing the same edit again gives back its id)',
        );
      return { body: textBody(JSON.stringify(stored, null, 2)), mimeType: 'application/json', text: true };
    },
  );
}
