// cutroom://exports/{export_id}/{file}: a timeline file export_edit wrote, as text (in parts when it is large).
import { ResourceNotFoundError, type McpServer } from '@modelcontextprotocol/server';
import type { ToolDeps } from '../workflow/deps.js';
import { FORMAT_MIME, exportFile, exportFiles, exportIds } from '../workflow/interchange.js';
import { DEFAULT_PART_BYTES, registerParted } from './parts.js';
import { one } from './projects.js';
import { openInside } from './read-inside.js';

const COMPLETION_LIMIT = 100;

export function register(server: McpServer, deps: ToolDeps): void {
  const dir = deps.exportsDir;
  if (!dir) return;
  registerParted(
    server,
    'export',
    'cutroom://exports/{export_id}/{file}',
    {
      list: undefined,
      complete: {
        export_id: async (value) =>
          (await exportIds(dir)).filter((id) => id.startsWith(value)).slice(0, COMPLETION_LIMIT),
        // The timeline files of the export named beside it.
        file: async (value, context) =>
          (await exportFiles(dir, context?.arguments?.export_id ?? ''))
            .filter((f) => f.startsWith(value))
            .slice(0, COMPLETION_LIMIT),
      },
    },
    {
      title: 'Exported timeline',
      description: 'A timeline file written by export_edit (OTIO, FCPXML or EDL), as text.',
    },
    deps.partBytes ?? DEFAULT_PART_BYTES,
    async (uri, variables) => {
      const found = await exportFile(dir, one(variables.export_id), one(variables.file), deps.kept);
      const body = found && (await openInside(found.path, dir));
      if (!found || !body)
        throw new ResourceNotFoundError(uri.href, 'no such export; export_edit returns the links to its files');
      return { body, mimeType: FORMAT_MIME[found.format], text: true };
    },
  );
}
