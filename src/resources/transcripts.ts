// vj://projects/{project_id}/assets/{asset_id}/transcript: what transcribe_asset heard in a whole asset (JSON), once
// it was transcribed. Reading it never starts the engine.
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import { ServiceError } from '../api/errors.js';
import { UserFacingError, isUuid } from '../errors.js';
import type { ToolDeps } from '../tools/context.js';
import { explain } from '../tools/result.js';
import { storedTranscript } from '../workflow/transcribe.js';
import { completeAssetId, completeProjectId } from '../workflow/completion.js';
import { one } from './projects.js';

export function register(server: McpServer, deps: ToolDeps): void {
  if (!deps.runtime?.transcripts) return;
  server.registerResource(
    'transcript',
    new ResourceTemplate('vj://projects/{project_id}/assets/{asset_id}/transcript', { list: undefined, complete: { project_id: completeProjectId(deps), asset_id: completeAssetId(deps, (a) => a.asset_type !== 'image') } }),
    {
      title: 'Asset transcript',
      description: 'What transcribe_asset heard in a whole asset: its words with their times and its sentences (JSON). Present once the asset was transcribed.',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const projectId = one(variables.project_id);
      const assetId = one(variables.asset_id);
      if (!isUuid(projectId) || !isUuid(assetId)) throw new ResourceNotFoundError(uri.href, 'project_id and asset_id must be UUIDs');
      let stored;
      try {
        stored = await storedTranscript(deps, projectId, assetId);
      } catch (err) {
        if (err instanceof UserFacingError) throw new ResourceNotFoundError(uri.href, err.message);
        if (err instanceof ServiceError && err.status === 404) throw new ResourceNotFoundError(uri.href, `project ${projectId} not found; list_projects shows the ids you can use`);
        throw new ProtocolError(ProtocolErrorCode.InternalError, explain(err));
      }
      if (!stored) throw new ResourceNotFoundError(uri.href, `asset ${assetId} has not been transcribed yet; call transcribe_asset first`);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(stored.transcript, null, 2) }] };
    },
  );
}
