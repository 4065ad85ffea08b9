// Media tools of the local backend (the service has no upload in its interface): list_media shows what the allowed
// folders hold without importing; import_media copies a file, a folder's media files or a list of paths into a project.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AssetViewSchema, assetName, viewAsset } from '../api/summaries.js';
import {
  SKIP_REASONS,
  WALK_ENTRIES,
  type ImportTarget,
  type MediaListing,
  type SkipKind,
} from '../backend/local/media-files.js';
import type { Backend, ImportedMedia } from '../backend/types.js';
import { fitting } from './budget.js';
import { defineTool, type HandlerDeps } from './define.js';
import { importItems, importSlice, type ImportItem } from './import-cursor.js';
import { progressFor, type Progress } from './progress.js';
import { importFromUrl } from '../workflow/url-import.js';
import { ToolError, ok, requireUuid } from './result.js';

/** The most files one import_media call takes from its folders and paths (next_cursor goes on). */
export const MAX_IMPORT_FILES = 200;

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ImportMediaInput = z.object({
  project_id: z.string(),
  path: z.string().min(1).optional().describe('A file or folder; relative to the first allowed folder'),
  url: z.string().min(1).optional().describe('Or an https link to a media file'),
  upload: z
    .strictObject({ filename: z.string().min(1).max(200), bytes: z.number().int().positive().optional() })
    .optional()
    .describe('Or a link the person uploads a file to (HTTP; tus)'),
  upload_id: z.string().min(1).optional().describe("An upload's asset, once uploaded"),
  paths: z.array(z.string().min(1)).optional().describe('Several'),
  recursive: z.boolean().optional().describe('Subfolders too'),
  again: z.boolean().optional().describe('Copy even content already imported'),
  cursor: z.string().optional().describe('A next_cursor'),
});
const ImportedFileSchema = z.object({
  path: z.string(),
  asset_id: z.string(),
  kind: z.enum(['video', 'audio', 'image']),
  duration_seconds: z.number().optional(),
  header_duration_seconds: z
    .number()
    .optional()
    .describe("What the file's header claims, when its media ends well before (duration_seconds is the real end)"),
  has_audio: z.boolean(),
  already_imported: z.boolean().optional(),
});
/** The walk stopped at its bound (WALK_ENTRIES a call): what it did not read. */
const TruncatedSchema = z.object({ entries_not_read: z.number().int(), folders_not_read: z.number().int() });
const ImportMediaOutput = z.object({
  asset: AssetViewSchema.optional().describe('With one file: its asset'),
  already_imported: z.boolean().optional(),
  kind: z.enum(['video', 'audio', 'image']).optional(),
  duration_seconds: z.number().optional(),
  header_duration_seconds: z
    .number()
    .optional()
    .describe("What the file's header claims, when its media ends well before (duration_seconds is the real end)"),
  width: z.number().optional(),
  height: z.number().optional(),
  has_audio: z.boolean().optional(),
  imported: z.array(ImportedFileSchema).describe('The files imported, in order'),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })).describe('The files not imported, and why'),
  left_out: z.object({ imported: z.number().int(), skipped: z.number().int() }).optional(),
  next_cursor: z.string().optional(),
  truncated: TruncatedSchema.optional(),
  upload: z
    .object({ upload_id: z.string(), url: z.string(), expires_at: z.string(), max_bytes: z.number() })
    .optional(),
});

const ListMediaInput = z.object({
  folder: z.string().optional().describe('Default: each allowed folder'),
  recursive: z.boolean().optional().describe('Subfolders too'),
  offset: z.number().int().min(0).max(100000).optional().describe('A next_offset'),
});
const ListMediaOutput = z.object({
  folders: z.array(
    z.object({
      folder: z.string(),
      files: z.array(z.object({ path: z.string(), kind: z.enum(['video', 'audio', 'image']), size_bytes: z.number() })),
      files_total: z.number().int(),
      skipped: z
        .array(z.object({ reason: z.string(), count: z.number().int(), paths: z.array(z.string()) }))
        .describe('Passed over, by reason (the first paths)'),
      truncated: TruncatedSchema.optional(),
    }),
  ),
  next_offset: z.number().int().optional(),
});

/** The most bytes of example paths list_media shows for what it passed over, over all its folders. */
const SKIPPED_PATHS_BYTES = 4096;
const SKIPPED_PATHS_EACH = 3;

/** What a listing passed over, counted by reason, with the first few paths of each (within a shared byte budget). */
function skippedGroups(listings: MediaListing[]) {
  let room = SKIPPED_PATHS_BYTES;
  return listings.map((l) => {
    const groups = new Map<SkipKind, { reason: string; count: number; paths: string[] }>();
    for (const s of l.skipped) {
      const g = groups.get(s.kind) ?? { reason: SKIP_REASONS[s.kind], count: 0, paths: [] };
      groups.set(s.kind, g);
      g.count++;
      if (g.paths.length < SKIPPED_PATHS_EACH && room >= s.path.length) {
        g.paths.push(s.path);
        room -= s.path.length;
      }
    }
    return [...groups.values()];
  });
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const truncatedLine = (t: { entries_not_read: number; folders_not_read: number }) =>
  `the walk stopped at its bound (${WALK_ENTRIES} entries a call): ${plural(t.entries_not_read, 'entry', 'entries')} not read and ${plural(t.folders_not_read, 'folder')} not opened; give subfolders as folders of their own`;

const describeImported = (m: ImportedMedia) => {
  const name = assetName(m.asset);
  return (
    `${m.kind} ${name ? `${name} — ` : ''}${m.asset.id}${m.duration_ms !== undefined ? `, ${m.duration_ms / 1000} s` : ''}` +
    `${m.header_duration_ms !== undefined ? ` (its header claims ${m.header_duration_ms / 1000} s, but its media ends at ${(m.duration_ms ?? 0) / 1000} s: the real end is used)` : ''}` +
    `${m.width ? `, ${m.width}x${m.height}` : ''}${m.kind === 'video' && !m.has_audio ? ', no sound' : ''}${m.already_imported ? ' (already in the project: nothing copied)' : ''}`
  );
};

/** The local backend's media calls; a backend without them (the service) is offered neither media tool. */
function localMedia(backend: Backend) {
  const { importMedia, mediaTargets, listMedia } = backend;
  if (!importMedia || !mediaTargets || !listMedia) return undefined;
  return {
    importMedia: importMedia.bind(backend),
    targets: mediaTargets.bind(backend),
    listMedia: listMedia.bind(backend),
  };
}
const offered = (deps: { backend: Backend }) => localMedia(deps.backend) !== undefined;

type Truncated = { entries_not_read: number; folders_not_read: number };
type SkippedGroup = { reason: string; count: number; paths: string[] };
type ListedFolder = {
  folder: string;
  files: MediaListing['files'];
  files_total: number;
  skipped: SkippedGroup[];
  truncated?: Truncated;
};

/** A folder in list_media's text: its count, the files on this page, what was passed over, where the walk stopped. */
function folderLines(l: ListedFolder): string[] {
  const passedOver = l.skipped
    .map(
      (g) =>
        `${g.count} ${g.reason}${g.paths.length ? ` (${g.paths.join(', ')}${g.count > g.paths.length ? ', …' : ''})` : ''}`,
    )
    .join('; ');
  return [
    `${l.folder}: ${plural(l.files_total, 'media file')}`,
    ...l.files.map((f) => `  ${f.kind} ${f.path} (${(f.size_bytes / 1e6).toFixed(1)} MB)`),
    ...(l.skipped.length ? [`  passed over: ${passedOver}`] : []),
    ...(l.truncated ? [`  ${truncatedLine(l.truncated)}`] : []),
  ];
}

async function listMedia(
  { folder, recursive, offset = 0 }: z.output<typeof ListMediaInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const listings = await localMedia(deps.backend)!.listMedia(folder, {
    recursive: recursive ?? false,
    signal: ctx.mcpReq.signal,
  });
  const skipped = skippedGroups(listings);
  // One page over every folder's files in turn, as many as fit.
  const all = listings.flatMap((l, i) => l.files.map((f) => ({ i, f })));
  const rest = all.slice(offset);
  const build = (k: number) => {
    const page = rest.slice(0, k);
    const next = k < rest.length ? offset + k : undefined;
    const folders = listings.map((l, i) => ({
      folder: l.folder,
      files: page.filter((p) => p.i === i).map((p) => p.f),
      files_total: l.files.length,
      skipped: skipped[i]!,
      ...(l.truncated ? { truncated: l.truncated } : {}),
    }));
    const lines = folders.flatMap(folderLines);
    if (next !== undefined)
      lines.push(
        `Showing files ${offset + 1}-${offset + k} of ${all.length}: call again with offset: ${next} for more.`,
      );
    else if (offset && !k) lines.push(`No files from offset ${offset} (${all.length} in all).`);
    return ok({ folders, ...(next !== undefined ? { next_offset: next } : {}) }, lines.join('\n'));
  };
  return fitting(rest.length, build).result;
}

type ImportedFile = z.infer<typeof ImportedFileSchema>;
type Skipped = { path: string; reason: string };

/** A file imported, as structuredContent lists it. */
const importedFile = (path: string, m: ImportedMedia): ImportedFile => ({
  path,
  asset_id: m.asset.id,
  kind: m.kind,
  ...(m.duration_ms !== undefined ? { duration_seconds: m.duration_ms / 1000 } : {}),
  ...(m.header_duration_ms !== undefined ? { header_duration_seconds: m.header_duration_ms / 1000 } : {}),
  has_audio: m.has_audio,
  ...(m.already_imported ? { already_imported: true } : {}),
});

/**
 * Imports the files a call takes, one by one, progress passed on; the entries passed over are listed as skipped.
 * A file that fails is skipped with its error, unless it was the one file asked for (`alone`): then the error is the
 * answer.
 */
async function importTaken(
  importOne: NonNullable<ReturnType<typeof localMedia>>['importMedia'],
  projectId: string,
  taken: ImportItem[],
  opts: { again: boolean | undefined; alone: boolean; files: number; progress: Progress; signal: AbortSignal },
) {
  const imported: ImportedMedia[] = [];
  const done: ImportedFile[] = [];
  const skipped: Skipped[] = [];
  let handled = 0;
  for (const it of taken) {
    if (it.hidden) continue;
    if (!it.file) {
      skipped.push({ path: it.path, reason: it.reason! });
      continue;
    }
    await opts.progress(handled++, opts.files, `importing ${it.path}`);
    try {
      const m = await importOne(projectId, it.path, {
        signal: opts.signal,
        ...(opts.again ? { again: opts.again } : {}),
      });
      imported.push(m);
      done.push(importedFile(it.path, m));
    } catch (err) {
      if (opts.signal.aborted) throw err;
      if (opts.alone) throw err;
      skipped.push({ path: it.path, reason: (err as Error).message });
    }
  }
  return { imported, done, skipped };
}

/** Where the walks of the folders asked stopped at their bound, summed; undefined when none did. */
function walkTruncated(found: ImportTarget[]): Truncated | undefined {
  return found.reduce<Truncated | undefined>(
    (sum, t) =>
      t.folder?.truncated
        ? {
            entries_not_read: (sum?.entries_not_read ?? 0) + t.folder.truncated.entries_not_read,
            folders_not_read: (sum?.folders_not_read ?? 0) + t.folder.truncated.folders_not_read,
          }
        : sum,
    undefined,
  );
}

/** What an import of many files says after its list: hidden entries left out, the walk's bound, the next call. */
function importNotes(hidden: number, truncated: Truncated | undefined, later: number, next: string | undefined) {
  return [
    ...(hidden ? [`Left out ${plural(hidden, 'hidden entry', 'hidden entries')} (names starting with a dot).`] : []),
    ...(truncated ? [`${truncatedLine(truncated)[0]!.toUpperCase()}${truncatedLine(truncated).slice(1)}.`] : []),
    ...(next
      ? [
          `${plural(later, 'more media file')}: call again with the same path, paths and recursive, and cursor: "${next}".`,
        ]
      : []),
  ];
}

/** import_media of one file: its asset and what it holds. */
function singleImportResult(single: ImportedMedia, done: ImportedFile[], skipped: Skipped[]) {
  const out = {
    asset: viewAsset(single.asset),
    ...(single.already_imported ? { already_imported: true } : {}),
    kind: single.kind,
    ...(single.duration_ms !== undefined ? { duration_seconds: single.duration_ms / 1000 } : {}),
    ...(single.header_duration_ms !== undefined ? { header_duration_seconds: single.header_duration_ms / 1000 } : {}),
    ...(single.width ? { width: single.width, height: single.height } : {}),
    has_audio: single.has_audio,
    imported: done,
    skipped,
  };
  const again = single.already_imported ? '. again: true imports a copy' : '';
  return ok(out, `${single.already_imported ? 'Already imported' : 'Imported'} ${describeImported(single)}${again}`);
}

/**
 * import_media of many files: as many of each list as fit, in proportion; the rest counted (get_project lists every
 * asset).
 */
function manyImportResult(
  imported: ImportedMedia[],
  done: ImportedFile[],
  skipped: Skipped[],
  more: string[],
  extra: { next_cursor?: string; truncated?: Truncated },
) {
  const known = imported.filter((m) => m.already_imported).length;
  const total = done.length + skipped.length;
  const build = (k: number) => {
    const ki = Math.min(done.length, Math.ceil((k * done.length) / Math.max(1, total)));
    const ks = Math.min(skipped.length, k - ki);
    const leftOut = { imported: done.length - ki, skipped: skipped.length - ks };
    const text = [
      `Imported ${imported.length} file${imported.length === 1 ? '' : 's'}${known ? ` (${known} already in the project: not copied again)` : ''}${skipped.length ? `, skipped ${skipped.length}` : ''}.`,
      ...imported.slice(0, ki).map((m, i) => `  ${done[i]!.path}: ${describeImported(m)}`),
      ...skipped.slice(0, ks).map((sk) => `  skipped ${sk.path}: ${sk.reason}`),
      ...(leftOut.imported || leftOut.skipped
        ? [
            `Not listed here: ${[
              leftOut.imported ? `${leftOut.imported} imported (get_project lists them by name)` : '',
              leftOut.skipped ? `${leftOut.skipped} skipped` : '',
            ]
              .filter(Boolean)
              .join(', ')}.`,
          ]
        : []),
      ...more,
    ].join('\n');
    return ok(
      {
        imported: done.slice(0, ki),
        skipped: skipped.slice(0, ks),
        ...(leftOut.imported || leftOut.skipped ? { left_out: leftOut } : {}),
        ...extra,
      },
      text,
    );
  };
  return fitting(total, build).result;
}

/** import_media {upload}: a signed link the person uploads one file to, resumably (http/uploads.ts takes it). */
async function openUpload(
  projectId: string,
  upload: { filename: string; bytes?: number | undefined },
  deps: HandlerDeps,
  signal: AbortSignal,
) {
  if (!deps.uploads)
    throw new ToolError(
      'uploads go to cutroom served over HTTP (--http), which this server is not: give path (a file on this machine) or url',
    );
  const cap = deps.uploads.maxBytes;
  if (upload.bytes !== undefined && upload.bytes > cap)
    throw new ToolError(
      `${upload.bytes} bytes is over this server's cap for an upload, ${cap} bytes (CUTROOM_UPLOAD_MAX_MB): use a smaller file, or url`,
    );
  // The project must be there before a person spends an hour uploading to it.
  await deps.backend.getProject(projectId, { signal });
  const max = upload.bytes ?? cap;
  const link = await deps.uploads.open(projectId, upload.filename, max);
  return ok(
    {
      imported: [],
      skipped: [],
      upload: { upload_id: link.id, url: link.url, expires_at: link.expiresAt, max_bytes: max },
    },
    `Upload link for the person (tus 1.0: any tus client, e.g. Uppy or tus-js-client, resumes it), up to ${max} bytes, until ${link.expiresAt}:\n${link.url}\n` +
      `When it is uploaded, import_media {project_id, upload_id: "${link.id}"} gives its asset.`,
  );
}

/** import_media {upload_id}: what became of an upload (its asset once complete). */
async function uploadedAsset(projectId: string, uploadId: string, deps: HandlerDeps) {
  const state = deps.uploads ? await deps.uploads.status(uploadId.trim()) : { state: 'unknown' as const };
  switch (state.state) {
    case 'unknown':
      throw new ToolError(`no upload ${shownId(uploadId)}: import_media {upload} gives a new upload link`);
    case 'waiting':
      throw new ToolError(`nothing has been uploaded yet; the link takes an upload until ${state.expiresAt}`);
    case 'receiving':
      throw new ToolError(
        `the upload is not complete: ${state.received} of ${state.total} bytes have arrived; call again once the person's upload finishes`,
      );
    case 'failed':
      throw new ToolError(`the upload arrived but was not imported: ${state.reason}`);
    case 'done':
      if (state.project !== projectId)
        throw new ToolError(`upload ${shownId(uploadId)} went into project ${state.project}, not ${projectId}`);
      return singleImportResult(state.media, [importedFile(assetName(state.media.asset) ?? uploadId, state.media)], []);
  }
}

const shownId = (id: string) => JSON.stringify(id.slice(0, 64));

async function importMedia(
  { project_id, path, paths, url, upload, upload_id, recursive, again, cursor }: z.output<typeof ImportMediaInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const media = localMedia(deps.backend)!;
  const id = requireUuid(project_id, 'project_id', 'list_projects');
  if (upload !== undefined || upload_id !== undefined) {
    const others = [path, paths, url, cursor, recursive, again].filter((v) => v !== undefined).length;
    if (others || (upload && upload_id))
      throw new ToolError('upload (a new upload link) and upload_id (its asset) each go alone with project_id');
    return upload ? openUpload(id, upload, deps, ctx.mcpReq.signal) : uploadedAsset(id, upload_id!, deps);
  }
  if (url !== undefined) {
    if (path !== undefined || paths !== undefined || cursor !== undefined || recursive !== undefined)
      throw new ToolError('url is imported alone: give url, or path/paths, in one call');
    if (!deps.fetchRules) throw new ToolError('this server does not import by URL');
    const progress = progressFor(ctx);
    let told = 0;
    const got = await importFromUrl(media.importMedia, id, url, {
      rules: deps.fetchRules,
      ...(deps.runtime?.scratchDir ? { scratchDir: deps.runtime.scratchDir } : {}),
      ...(again ? { again } : {}),
      signal: ctx.mcpReq.signal,
      // Told at each 1% (or MiB) more, not at every piece.
      onProgress: (bytes, total) => {
        if (bytes - told < Math.max(1 << 20, (total ?? 0) / 100)) return;
        told = bytes;
        void progress(bytes, total, 'fetching').catch(() => {});
      },
    });
    if (!got.media.already_imported) deps.resourceListChanged();
    return singleImportResult(got.media, [importedFile(got.name, got.media)], []);
  }
  const asked = [...(path !== undefined ? [path] : []), ...(paths ?? [])];
  if (!asked.length) throw new ToolError('nothing to import: give path (a file or a folder) or paths');
  // What each path names (a file, or a folder's media files and what it passed over), in one order; this
  // call takes its part of it from the cursor on.
  const found = await media.targets(asked, { recursive: recursive ?? false, signal: ctx.mcpReq.signal });
  // One path given alone that names nothing importable fails as before: the error is the answer.
  if (asked.length === 1 && found[0]!.error !== undefined) throw new ToolError(found[0]!.error);
  const folders = found.filter((t) => t.folder).length;
  const items = importItems(found);
  if (!items.some((it) => !it.hidden))
    throw new ToolError(
      `${asked.join(', ')} holds no media files (by their names); list_media shows what a folder holds`,
    );
  const { taken, later, next } = importSlice(items, {
    asked,
    recursive: recursive ?? false,
    ...(cursor !== undefined ? { cursor } : {}),
    max: MAX_IMPORT_FILES,
  });
  const hidden = taken.filter((it) => it.hidden).length;
  const files = taken.filter((it) => it.file).length;
  const progress = progressFor(ctx);
  const { imported, done, skipped } = await importTaken(media.importMedia, id, taken, {
    again,
    alone: asked.length === 1 && !folders,
    files,
    progress,
    signal: ctx.mcpReq.signal,
  });
  // (The files past the bound are not skipped: the next call takes them, as the text's last line says.)
  await progress(files, files, 'done');
  if (imported.some((m) => !m.already_imported)) deps.resourceListChanged();
  const truncated = walkTruncated(found);
  const single = asked.length === 1 && !folders && imported.length === 1 ? imported[0]! : undefined;
  if (single) return singleImportResult(single, done, skipped);
  const more = importNotes(hidden, truncated, later.length, next);
  const extra = { ...(next ? { next_cursor: next } : {}), ...(truncated ? { truncated } : {}) };
  return manyImportResult(imported, done, skipped, more, extra);
}

const listMediaTool = defineTool({
  name: 'list_media',
  config: {
    title: 'List the media in a folder',
    description:
      'The media files (by name) in an allowed folder, or in each: path, kind, size; what was passed over, counted by reason. Imports nothing. Paged: offset.',
    inputSchema: ListMediaInput,
    outputSchema: ListMediaOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  offered,
  handler: listMedia,
});

const importMediaTool = defineTool({
  name: 'import_media',
  config: {
    title: 'Import media into a project',
    description: `Copies media files from this machine (the allowed folders) into a local project: a file, a folder's media, or paths (or fetches a url); ${MAX_IMPORT_FILES} a call, next_cursor goes on. Content already there is not copied again (already_imported). Returns each file's asset, or why it was skipped.`,
    inputSchema: ImportMediaInput,
    outputSchema: ImportMediaOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  offered,
  subject: ({ project_id }) => ({ what: `project ${project_id}`, listedBy: 'list_projects' }),
  handler: importMedia,
});

export const mediaTools = [listMediaTool, importMediaTool];
