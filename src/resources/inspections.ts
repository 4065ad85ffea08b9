// vj://projects/{project_id}/assets/{asset_id}/inspection: what inspect_asset found (JSON), once the asset was
// inspected. Reading it never starts a scan.
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import { ServiceError } from '../api/errors.js';
import { UserFacingError, isUuid } from '../errors.js';
import type { ToolDeps } from '../tools/context.js';
import { explain } from '../tools/result.js';
import { storedInspection } from '../workflow/inspect.js';
import { one } from './projects.js';


export function register(server: McpServer, deps: ToolDeps): void {
  if (!deps.runtime?.inspections) return;
  server.registerResource(
    'inspection',
    new ResourceTemplate('vj://projects/{project_id}/assets/{asset_id}/inspection', { list: undefined }),
    {
      title: 'Asset inspection',
      description: "What inspect_asset found in an asset: kind, duration, shots, silences, loudness (JSON). Present once the asset was inspected.",
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const projectId = one(variables.project_id);
      const assetId = one(variables.asset_id);
      if (!isUuid(projectId) || !isUuid(assetId)) throw new ResourceNotFoundError(uri.href, 'project_id and asset_id must be UUIDs');
      let stored;
      try {
        stored = await storedInspection(deps, projectId, assetId);
      } catch (err) {
        if (err instanceof UserFacingError) throw new ResourceNotFoundError(uri.href, err.message);
        if (err instanceof ServiceError && err.status === 404) throw new ResourceNotFoundError(uri.href, `project ${projectId} not found; list_projects shows the ids you can use`);
        throw new ProtocolError(ProtocolErrorCode.InternalError, explain(err));
      }
      if (!stored) throw new ResourceNotFoundError(uri.href, `asset ${assetId} has not been inspected yet; call inspect_asset first`);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(stored.inspection, null, 2) }] };
    },
  );
}
