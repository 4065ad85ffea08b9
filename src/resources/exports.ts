// cutroom://exports/{export_id}/{file}: a timeline file export_edit wrote, as text.
import { ResourceNotFoundError, ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import type { ToolDeps } from '../workflow/deps.js';
import { FORMAT_MIME, exportFile, exportFiles, exportIds } from '../workflow/interchange.js';
import { one } from './projects.js';
import { readInside } from './read-inside.js';

const COMPLETION_LIMIT = 100;
/** No timeline file cutroom writes comes near this. */
const MAX_EXPORT_BYTES = 50 * 1024 * 1024;

export function register(server: McpServer, deps: ToolDeps): void {
  const dir = deps.exportsDir;
  if (!dir) return;
  server.registerResource(
    'export',
    new ResourceTemplate('cutroom://exports/{export_id}/{file}', {
      list: undefined,
      complete: {
        export_id: async (value) => (await exportIds(dir)).filter((id) => id.startsWith(value)).slice(0, COMPLETION_LIMIT),
        // The timeline files of the export named beside it.
        file: async (value, context) => (await exportFiles(dir, context?.arguments?.export_id ?? '')).filter((f) => f.startsWith(value)).slice(0, COMPLETION_LIMIT),
      },
    }),
    { title: 'Exported timeline', description: 'A timeline file written by export_edit (OTIO, FCPXML or EDL), as text.' },
    async (uri, variables) => {
      const found = await exportFile(dir, one(variables.export_id), one(variables.file));
      const read = found && (await readInside(found.path, dir, MAX_EXPORT_BYTES));
      if (!found || !read || 'missing' in read) throw new ResourceNotFoundError(uri.href, 'no such export; export_edit returns the links to its files');
      if ('tooLarge' in read) throw new ResourceNotFoundError(uri.href, 'this is not a timeline file export_edit wrote (it is too large)');
      return { contents: [{ uri: uri.href, mimeType: FORMAT_MIME[found.format], text: read.data.toString('utf8') }] };
    },
  );
}
