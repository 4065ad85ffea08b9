// Media tools of the local backend (the service has no upload in its interface): list_media shows what the allowed
// folders hold without importing; import_media copies a file, a folder's media files or a list of paths into a project.
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AssetViewSchema, viewAsset } from '../api/summaries.js';
import type { ImportedMedia } from '../backend/types.js';
import type { ToolDeps } from '../workflow/deps.js';
import { progressFor } from './progress.js';
import { ToolError, guard, ok, requireUuid } from './result.js';

/** The most files one import_media call takes from a folder or a list; the most list_media lists. */
export const MAX_IMPORT_FILES = 200;
export const MAX_LISTED_FILES = 500;

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ImportMediaInput = z.object({
  project_id: z.string().describe('Project id (a UUID), as list_projects shows it'),
  path: z.string().min(1).optional().describe('A file, or a folder (every media file in it); relative paths start from the first allowed folder'),
  paths: z.array(z.string().min(1)).optional().describe(`Several files or folders at once (at most ${MAX_IMPORT_FILES} files a call)`),
  recursive: z.boolean().optional().describe("With a folder: its subfolders' media too (default false)"),
});
const ImportedFileSchema = z.object({
  path: z.string(),
  asset_id: z.string(),
  kind: z.enum(['video', 'audio', 'image']),
  duration_seconds: z.number().optional(),
  header_duration_seconds: z.number().optional().describe("What the file's header claims, when its media ends well before (duration_seconds is the real end)"),
  has_audio: z.boolean(),
});
const ImportMediaOutput = z.object({
  asset: AssetViewSchema.optional().describe('With one file: the new asset'),
  kind: z.enum(['video', 'audio', 'image']).optional(),
  duration_seconds: z.number().optional(),
  header_duration_seconds: z.number().optional().describe("What the file's header claims, when its media ends well before (duration_seconds is the real end)"),
  width: z.number().optional(),
  height: z.number().optional(),
  has_audio: z.boolean().optional(),
  imported: z.array(ImportedFileSchema).describe('Every file imported, in order'),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })).describe('Every file not imported, and why'),
});

const ListMediaInput = z.object({
  folder: z.string().optional().describe('A folder inside the allowed folders; default: each allowed folder'),
  recursive: z.boolean().optional().describe('Also list subfolders (default false)'),
});
const ListMediaOutput = z.object({
  folders: z.array(
    z.object({
      folder: z.string(),
      files: z.array(z.object({ path: z.string(), kind: z.enum(['video', 'audio', 'image']), size_bytes: z.number() })),
      truncated: z.boolean().describe(`More than ${MAX_LISTED_FILES} media files: the first are listed`),
    }),
  ),
});

const describeImported = (m: ImportedMedia) =>
  `${m.kind} ${m.asset.id}${m.duration_ms !== undefined ? `, ${m.duration_ms / 1000} s` : ''}${m.header_duration_ms !== undefined ? ` (its header claims ${m.header_duration_ms / 1000} s, but its media ends at ${(m.duration_ms ?? 0) / 1000} s: the real end is used)` : ''}${m.width ? `, ${m.width}x${m.height}` : ''}${m.kind === 'video' && !m.has_audio ? ', no sound' : ''}`;

export function register(server: McpServer, { backend, logger }: ToolDeps): void {
  const importMedia = backend.importMedia?.bind(backend);
  const targets = backend.mediaTargets?.bind(backend);
  const listMedia = backend.listMedia?.bind(backend);
  if (!importMedia || !targets || !listMedia) return;

  server.registerTool(
    'list_media',
    {
      title: 'List the media in a folder',
      description:
        'Lists the video, audio and image files (by their names) in a folder cutroom may read (CUTROOM_ALLOWED_DIRS), or in each of those folders, ' +
        `without importing anything: their paths, kinds and sizes, at most ${MAX_LISTED_FILES} a folder. Then import_media takes a file, a folder or a list.`,
      inputSchema: ListMediaInput,
      outputSchema: ListMediaOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ folder, recursive }, ctx) =>
      guard('list_media', logger, async () => {
        const listings = await listMedia(folder, { recursive: recursive ?? false, max: MAX_LISTED_FILES, signal: ctx.mcpReq.signal });
        const lines = listings.flatMap((l) => [
          `${l.folder}: ${l.files.length} media file${l.files.length === 1 ? '' : 's'}${l.truncated ? ` (the first ${MAX_LISTED_FILES})` : ''}`,
          ...l.files.slice(0, 50).map((f) => `  ${f.kind} ${f.path} (${(f.size_bytes / 1e6).toFixed(1)} MB)`),
          ...(l.files.length > 50 ? [`  … ${l.files.length - 50} more in structuredContent`] : []),
        ]);
        return ok({ folders: listings.map(({ folder: f, files, truncated }) => ({ folder: f, files, truncated })) }, lines.join('\n'));
      }),
  );

  server.registerTool(
    'import_media',
    {
      title: 'Import media into a project',
      description:
        'Copies video, audio and image files from this machine into a local project, as assets you can cut with compose_edit: one file (path), ' +
        `every media file of a folder (path naming a folder; recursive for its subfolders), or several (paths); at most ${MAX_IMPORT_FILES} files a call. ` +
        'Files must be inside the folders cutroom may read (CUTROOM_ALLOWED_DIRS, by default the folder cutroom was started in) and readable by ffprobe. ' +
        'Returns every file imported (asset id, kind, duration, sound) and every file skipped with the reason; with one file, also its asset. Sends progress notifications.',
      inputSchema: ImportMediaInput,
      outputSchema: ImportMediaOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ project_id, path, paths, recursive }, ctx) =>
      guard(
        'import_media',
        logger,
        async () => {
          const id = requireUuid(project_id, 'project_id', 'list_projects');
          const asked = [...(path !== undefined ? [path] : []), ...(paths ?? [])];
          if (!asked.length) throw new ToolError('nothing to import: give path (a file or a folder) or paths');
          // What each path names: a file, or a folder's media files.
          const files: string[] = [];
          const skipped: { path: string; reason: string }[] = [];
          let folders = 0;
          for (const p of asked) {
            const t = await targets(p, { recursive: recursive ?? false, max: MAX_IMPORT_FILES + 1, signal: ctx.mcpReq.signal });
            if (t.folder) folders++;
            files.push(...t.files);
            skipped.push(...t.skipped);
          }
          if (!files.length && !skipped.length) throw new ToolError(`${asked.join(', ')} holds no media files (by their names); list_media shows what a folder holds`);
          for (const extra of files.splice(MAX_IMPORT_FILES)) skipped.push({ path: extra, reason: `over ${MAX_IMPORT_FILES} files in one call: import it in another call` });
          const progress = progressFor(ctx);
          const imported: ImportedMedia[] = [];
          const done: z.infer<typeof ImportedFileSchema>[] = [];
          for (const [i, f] of files.entries()) {
            await progress(i, files.length, `importing ${f}`);
            try {
              const m = await importMedia(id, f, { signal: ctx.mcpReq.signal });
              imported.push(m);
              done.push({ path: f, asset_id: m.asset.id, kind: m.kind, ...(m.duration_ms !== undefined ? { duration_seconds: m.duration_ms / 1000 } : {}), ...(m.header_duration_ms !== undefined ? { header_duration_seconds: m.header_duration_ms / 1000 } : {}), has_audio: m.has_audio });
            } catch (err) {
              if (ctx.mcpReq.signal.aborted) throw err;
              // One file given alone fails as before: the error is the answer.
              if (asked.length === 1 && !folders) throw err;
              skipped.push({ path: f, reason: (err as Error).message });
            }
          }
          await progress(files.length, files.length, 'done');
          if (imported.length) server.sendResourceListChanged();
          const single = asked.length === 1 && !folders && imported.length === 1 ? imported[0]! : undefined;
          const out = {
            ...(single
              ? {
                  asset: viewAsset(single.asset),
                  kind: single.kind,
                  ...(single.duration_ms !== undefined ? { duration_seconds: single.duration_ms / 1000 } : {}),
                  ...(single.header_duration_ms !== undefined ? { header_duration_seconds: single.header_duration_ms / 1000 } : {}),
                  ...(single.width ? { width: single.width, height: single.height } : {}),
                  has_audio: single.has_audio,
                }
              : {}),
            imported: done,
            skipped,
          };
          const text = single
            ? `Imported ${describeImported(single)}`
            : [
                `Imported ${imported.length} file${imported.length === 1 ? '' : 's'}${skipped.length ? `, skipped ${skipped.length}` : ''}.`,
                ...imported.slice(0, 50).map((m, i) => `  ${done[i]!.path}: ${describeImported(m)}`),
                ...skipped.slice(0, 50).map((s) => `  skipped ${s.path}: ${s.reason}`),
              ].join('\n');
          return ok(out, text);
        },
        { what: `project ${project_id}`, listedBy: 'list_projects' },
      ),
  );
}
