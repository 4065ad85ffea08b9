// delete_asset: removes an asset from a local project. The service's interface has no call for it: there it says so.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ServiceError } from '../api/errors.js';
import { assetName } from '../api/summaries.js';
import { suggestAsset } from '../workflow/suggest.js';
import { defineTool, type HandlerDeps } from './define.js';
import { ToolError, ok, requireUuid, shown } from './result.js';

const DeleteAssetInput = z.object({
  project_id: z.string(),
  asset_id: z.string(),
  confirm: z.boolean().optional().describe('true once the user agreed'),
});
const DeleteAssetOutput = z.object({
  deleted: z.literal(true),
  project_id: z.string(),
  asset_id: z.string(),
  name: z.string().optional(),
  file_removed: z.boolean(),
});

async function deleteAsset(
  { project_id, asset_id, confirm }: z.output<typeof DeleteAssetInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const { backend } = deps;
  const remove = backend.deleteAsset?.bind(backend);
  if (!remove) {
    throw new ToolError(
      `${backend.description} has no call to delete an asset (its interface has none); nothing was deleted: remove it with the service's own tools`,
    );
  }
  const signal = ctx.mcpReq.signal;
  const pid = requireUuid(project_id, 'project_id', 'list_projects');
  const project = await backend.getProject(pid, { signal });
  const aid = asset_id.trim();
  const asset = project.assets?.find((a) => a.id === aid);
  if (!asset) {
    const hint = suggestAsset(project, aid);
    throw new ToolError(
      `no asset ${shown(aid)} in project ${pid}; ${hint ? `${hint} ` : ''}get_project lists its assets`,
    );
  }
  const name = assetName(asset);
  if (confirm !== true) {
    throw new ToolError(
      `nothing was deleted: deleting asset ${name ? `"${name}" ` : ''}(${aid}, ${asset.asset_type ?? 'asset'}) cannot be undone. ` +
        'Ask the user to confirm, then call delete_asset again with confirm: true.',
    );
  }
  const gone = await remove(pid, aid, { signal }).catch((err: unknown) => {
    // Deleted by another server between the look and the delete.
    if (err instanceof ServiceError && err.status === 404)
      throw new ToolError(`asset ${aid} is gone already (deleted meanwhile?); get_project lists the project's assets`);
    throw err;
  });
  deps.resourceListChanged();
  const label = gone.name ?? name;
  return ok(
    {
      deleted: true as const,
      project_id: pid,
      asset_id: aid,
      ...(label ? { name: label } : {}),
      file_removed: gone.file_removed,
    },
    `Deleted asset ${label ? `"${label}" ` : ''}${aid}${gone.file_removed ? ' and its copy in the data dir' : ''}.`,
  );
}

const deleteAssetTool = defineTool({
  name: 'delete_asset',
  config: {
    title: 'Delete an asset',
    description:
      'Removes an asset of a local project for good (its copy in the data dir; never the file it came from). Without confirm: true nothing is deleted: ask the user first. Not on the service.',
    inputSchema: DeleteAssetInput,
    outputSchema: DeleteAssetOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  },
  subject: ({ project_id }) => ({ what: `project ${project_id}`, listedBy: 'list_projects' }),
  handler: deleteAsset,
});

export const assetTools = [deleteAssetTool];
