// Media tools: import_media (local backend only; the service has no upload in its interface).
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AssetViewSchema, viewAsset } from '../api/summaries.js';
import type { ToolDeps } from './context.js';
import { guard, ok, requireUuid } from './result.js';

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ImportMediaInput = z.object({
  project_id: z.string().describe('Project id (a UUID), as list_projects shows it'),
  path: z.string().min(1).describe('Path of the file; relative paths start from the first allowed folder'),
});
const ImportMediaOutput = z.object({
  asset: AssetViewSchema,
  kind: z.enum(['video', 'audio', 'image']),
  duration_seconds: z.number().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
  has_audio: z.boolean(),
});

export function register(server: McpServer, { backend, logger }: ToolDeps): void {
  const importMedia = backend.importMedia?.bind(backend);
  if (!importMedia) return;
  server.registerTool(
    'import_media',
    {
      title: 'Import a media file into a project',
      description:
        'Copies a video, audio or image file from this machine into a local project, as an asset you can cut with compose_edit. ' +
        'The file must be inside the folders cutroom may read (CUTROOM_ALLOWED_DIRS, by default the folder cutroom was started in) and readable ' +
        'by ffprobe. Returns the new asset (id, kind) and what was measured (duration, size, whether it has sound).',
      inputSchema: ImportMediaInput,
      outputSchema: ImportMediaOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ project_id, path }, ctx) =>
      guard(
        'import_media',
        logger,
        async () => {
          const id = requireUuid(project_id, 'project_id', 'list_projects');
          const m = await importMedia(id, path, { signal: ctx.mcpReq.signal });
          server.sendResourceListChanged();
          const out = {
            asset: viewAsset(m.asset),
            kind: m.kind,
            ...(m.duration_ms !== undefined ? { duration_seconds: m.duration_ms / 1000 } : {}),
            ...(m.width ? { width: m.width, height: m.height } : {}),
            has_audio: m.has_audio,
          };
          const size = m.width ? `, ${m.width}x${m.height}` : '';
          const length = m.duration_ms !== undefined ? `, ${m.duration_ms / 1000} s` : '';
          return ok(out, `Imported ${m.kind} ${m.asset.id}${length}${size}${m.kind === 'video' && !m.has_audio ? ', no sound' : ''}`);
        },
        { what: `project ${project_id}`, listedBy: 'list_projects' },
      ),
  );
}
