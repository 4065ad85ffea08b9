// cutroom://exports/{export_id}/{file}: a timeline file export_edit wrote, as text.
import { ResourceNotFoundError, ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import { readFile } from 'node:fs/promises';
import type { ToolDeps } from '../tools/context.js';
import { FORMAT_MIME, exportFile, exportIds } from '../workflow/interchange.js';
import { one } from './projects.js';

const COMPLETION_LIMIT = 100;

export function register(server: McpServer, deps: ToolDeps): void {
  const dir = deps.exportsDir;
  if (!dir) return;
  server.registerResource(
    'export',
    new ResourceTemplate('cutroom://exports/{export_id}/{file}', {
      list: undefined,
      complete: { export_id: async (value) => (await exportIds(dir)).filter((id) => id.startsWith(value)).slice(0, COMPLETION_LIMIT) },
    }),
    { title: 'Exported timeline', description: 'A timeline file written by export_edit (OTIO, FCPXML or EDL), as text.' },
    async (uri, variables) => {
      const found = await exportFile(dir, one(variables.export_id), one(variables.file));
      if (!found) throw new ResourceNotFoundError(uri.href, 'no such export; export_edit returns the links to its files');
      return { contents: [{ uri: uri.href, mimeType: FORMAT_MIME[found.format], text: await readFile(found.path, 'utf8') }] };
    },
  );
}
