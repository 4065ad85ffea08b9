// Resource templates: vj://projects/{project_id} and vj://projects/{project_id}/scripts/{script_id}.
// Resource failures are JSON-RPC errors (the protocol's way for resources); tools are where isError lives.
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type McpServer,
} from '@modelcontextprotocol/server';
import { ServiceError } from '../api/errors.js';
import { isUuid, shown } from '../errors.js';
import { detailProject, outlineGraph, projectUri, scriptOutlineMarkdown } from '../api/summaries.js';
import type { ToolDeps } from '../workflow/deps.js';
import { withKnownFacts } from '../workflow/asset-facts.js';
import { explain } from '../workflow/explain.js';
import { completeAssetId, completeProjectId } from '../workflow/completion.js';
import { renderStatus } from '../workflow/render-status.js';
import { stat } from 'node:fs/promises';
import { DEFAULT_PART_BYTES, registerParted, textBody } from './parts.js';
import { cutClipPath, previewHere, readFinishedPreview } from '../workflow/preview.js';
import { openInside } from './read-inside.js';

const COMPLETION_LIMIT = 100;

/** A template variable's value (the SDK gives a list for exploded variables). */
export function one(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

function failure(uri: string, err: unknown, what: string, listedBy: string): Error {
  if (err instanceof ServiceError && err.status === 404)
    return new ResourceNotFoundError(uri, `${what} not found; ${listedBy} shows the ids you can use`);
  return new ProtocolError(ProtocolErrorCode.InternalError, explain(err));
}

/** The assets vj://projects/{id} lists: its signed links change on every read, so it is not served in parts. */
export const PROJECT_RESOURCE_ASSETS = 1000;
const PREVIEW_FILES = ['preview.mp4', 'sheet.jpg', 'preview.json'] as const;

export function register(server: McpServer, deps: ToolDeps): void {
  const { backend, logger } = deps;
  /** Reads something of a project for a resource, with the same errors for every template. */
  const ofProject = async <T>(uri: URL, projectId: string, read: () => Promise<T>): Promise<T> => {
    if (!isUuid(projectId)) throw new ResourceNotFoundError(uri.href, `project id "${projectId}" is not a UUID`);
    try {
      return await read();
    } catch (err) {
      throw failure(uri.href, err, `project ${projectId}`, 'list_projects');
    }
  };
  const completeProject = completeProjectId(deps);

  server.registerResource(
    'project',
    new ResourceTemplate('vj://projects/{project_id}', {
      list: async () => {
        try {
          const { projects, problems } = await backend.listProjects(COMPLETION_LIMIT);
          for (const p of problems ?? []) logger.warn(`listing project resources: ${p.message}`);
          return {
            resources: projects.map((p) => ({
              uri: projectUri(p.id),
              name: p.name || p.id,
              description: `${p.description ?? ''} (${p.asset_count ?? p.assets?.length ?? 0} assets)`.trim(),
              mimeType: 'application/json',
            })),
          };
        } catch (err) {
          // A listing must not break the client's connection: say why on stderr and list nothing.
          logger.warn(`listing project resources: ${explain(err)}`);
          return { resources: [] };
        }
      },
      complete: { project_id: completeProject },
    }),
    {
      title: 'Video project',
      description: `A project with its assets (the first ${PROJECT_RESOURCE_ASSETS}) and their signed links (JSON).`,
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const id = one(variables.project_id);
      const project = await ofProject(uri, id, () => backend.getProject(id));
      const detail = detailProject(
        { ...project, assets: await withKnownFacts(deps, project.assets ?? []) },
        0,
        PROJECT_RESOURCE_ASSETS,
      );
      const left = detail.assets_total - detail.assets.length;
      const body =
        left > 0
          ? {
              ...detail,
              assets_left_out: `${left} more assets: get_project with asset_offset ${detail.assets.length} pages them`,
            }
          : detail;
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
    },
  );

  server.registerResource(
    'script',
    new ResourceTemplate('vj://projects/{project_id}/scripts/{script_id}', {
      list: undefined,
      complete: {
        project_id: completeProject,
        script_id: async (value, context) => {
          const projectId = context?.arguments?.project_id ?? '';
          if (!isUuid(projectId)) return [];
          try {
            const scripts = await backend.listScripts(projectId, COMPLETION_LIMIT);
            return scripts.map((s) => s.id).filter((id) => id.startsWith(value));
          } catch (err) {
            logger.warn(`completing script ids: ${explain(err)}`);
            return [];
          }
        },
      },
    }),
    {
      title: 'Generation script',
      description:
        "A project's script: its inputs, its graph as JSON, and an outline of the steps in dependency order.",
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const projectId = one(variables.project_id);
      const scriptId = one(variables.script_id);
      const scripts = await ofProject(uri, projectId, () => backend.listScripts(projectId, undefined));
      // The interface has no GET for one script: find it in the project's list.
      const script = scripts.find((s) => s.id === scriptId);
      if (!script)
        throw new ResourceNotFoundError(
          uri.href,
          `script ${scriptId} not found in project ${projectId}; list_scripts shows its scripts`,
        );
      const { steps, cycle } = outlineGraph(script.value);
      const body = {
        id: script.id,
        name: script.name ?? null,
        project_id: script.project_id ?? projectId,
        created_at: script.created_at ?? null,
        inputs: script.inputs ?? [],
        outline: steps,
        graph_has_cycle: cycle,
        graph: script.value ?? { nodes: [], edges: [] },
      };
      return {
        contents: [
          { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body, null, 2) },
          { uri: uri.href, mimeType: 'text/markdown', text: scriptOutlineMarkdown(script) },
        ],
      };
    },
  );

  /** Renders are the project's generated_video assets; newest first. */
  const completeRenderId = completeAssetId(deps, (a) => a.asset_type === 'generated_video');

  server.registerResource(
    'render',
    new ResourceTemplate('vj://projects/{project_id}/renders/{asset_id}', {
      list: undefined,
      complete: { project_id: completeProject, asset_id: completeRenderId },
    }),
    {
      title: 'Render',
      description:
        'A render started by render_edit: its status (while it runs, how far it has got) and, once done, its signed link (JSON).',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const projectId = one(variables.project_id);
      const assetId = one(variables.asset_id);
      const project = await ofProject(uri, projectId, () => backend.getProject(projectId));
      const asset = project.assets?.find((a) => a.id === assetId);
      if (!asset) throw new ResourceNotFoundError(uri.href, `no asset ${shown(assetId)} in project ${projectId}`);
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify(await renderStatus(backend, projectId, asset), null, 2),
          },
        ],
      };
    },
  );

  const cache = deps.runtime?.cache;
  if (cache) {
    registerParted(
      server,
      'preview',
      'cutroom://previews/{preview_id}/{file}',
      {
        list: undefined,
        complete: {
          preview_id: async (value) =>
            (await cache.ids()).filter((id) => id.startsWith(value)).slice(0, COMPLETION_LIMIT),
          // The files a preview has: only those present once its id is known.
          file: async (value, context) => {
            const id = context?.arguments?.preview_id ?? '';
            const names = PREVIEW_FILES.filter((f) => f.startsWith(value));
            if (!id) return names;
            const present = await Promise.all(
              names.map(async (f) => {
                const path = cache.fileOf(id, f);
                return path &&
                  (await stat(path).then(
                    () => true,
                    () => false,
                  ))
                  ? f
                  : undefined;
              }),
            );
            return present.filter((f) => f !== undefined);
          },
        },
      },
      {
        title: 'Local preview',
        description:
          'A preview made by preview_edit: preview.mp4 (the video), sheet.jpg (the contact sheet) or preview.json (the result, every cut listed); a large one in parts.',
      },
      deps.partBytes ?? DEFAULT_PART_BYTES,
      async (uri, variables) => {
        const id = one(variables.preview_id);
        if (one(variables.file) === 'preview.json' && deps.runtime) {
          // The whole result, every cut listed (a tool result lists the first that fit); a hosted caller sees no path
          // of the server's.
          const finished = await readFinishedPreview(deps.runtime, id).catch((err: unknown) => {
            throw new ProtocolError(ProtocolErrorCode.InternalError, explain(err));
          });
          if (!finished)
            throw new ResourceNotFoundError(
              uri.href,
              (await cache.inProgress(id))
                ? 'this preview is still rendering: preview_edit {preview_id} follows it'
                : 'no such preview (older previews are evicted); run preview_edit again',
            );
          const { sheetBytes: _sheet, ffmpegMaxRssKiB: _rss, ...result } = finished;
          const shown = deps.hosted
            ? {
                ...result,
                path: `cutroom://previews/${id}/preview.mp4`,
                sheet_path: `cutroom://previews/${id}/sheet.jpg`,
              }
            : result;
          return { body: textBody(JSON.stringify(shown)), mimeType: 'application/json', text: true };
        }
        const path = cache.fileOf(id, one(variables.file));
        if (!path)
          throw new ResourceNotFoundError(uri.href, "not a preview of cutroom's; preview_edit returns the links");
        // Made by a worker (or evicted here) and kept in the object store: fetched into this cache dir first.
        if (deps.runtime?.store)
          await previewHere(deps.runtime, id).catch((err: unknown) => {
            throw new ProtocolError(ProtocolErrorCode.InternalError, explain(err));
          });
        const body = await openInside(path, cache.root);
        if (!body) {
          const why = (await cache.inProgress(id))
            ? 'this preview is still rendering: preview_edit {preview_id} follows it'
            : 'this preview is gone (older previews are evicted); run preview_edit again';
          throw new ResourceNotFoundError(uri.href, why);
        }
        return { body, mimeType: path.endsWith('.mp4') ? 'video/mp4' : 'image/jpeg', text: false };
      },
    );
    // A cut's clip while its preview renders: watched before the whole preview is joined.
    registerParted(
      server,
      'preview-cut',
      'cutroom://previews/{preview_id}/cuts/{clip}',
      { list: undefined },
      {
        title: 'A cut of a preview still rendering',
        description:
          'One cut of a preview (picture and its own sound, mp4), playable as soon as it is rendered: the progress of preview_edit names it.',
      },
      deps.partBytes ?? DEFAULT_PART_BYTES,
      async (uri, variables) => {
        const rt = deps.runtime!;
        const id = one(variables.preview_id);
        const clip = /^(\d{1,5})\.mp4$/.exec(one(variables.clip));
        const path = clip
          ? await cutClipPath(rt, id, Number(clip[1]), deps.jobs?.preview).catch((err: unknown) => {
              throw new ResourceNotFoundError(uri.href, explain(err));
            })
          : undefined;
        const body = path && (await openInside(path, cache.root));
        if (!body) {
          // (Being made on a worker, with a queue, counts as in progress: a replica that did not start it asks Redis.)
          const why =
            (await cache.inProgress(id)) || (await deps.jobs?.preview.onQueue?.(rt, id))?.state === 'rendering'
              ? 'that cut is not rendered yet: the progress of preview_edit names each cut as it is ready'
              : 'no such clip: once a preview is done, play its preview.mp4';
          throw new ResourceNotFoundError(uri.href, why);
        }
        return { body, mimeType: 'video/mp4', text: false };
      },
    );
  }
}
