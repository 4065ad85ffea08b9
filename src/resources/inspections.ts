// vj://projects/{project_id}/assets/{asset_id}/inspection: what inspect_asset found (JSON), once the asset was
// inspected. Reading it never starts a scan.
import type { McpServer } from '@modelcontextprotocol/server';
import type { ToolDeps } from '../workflow/deps.js';
import { assetRecordReader } from './asset-record.js';
import { DEFAULT_PART_BYTES, registerParted } from './parts.js';
import { storedInspection } from '../workflow/inspect.js';
import { completeAssetId, completeProjectId } from '../workflow/completion.js';

export function register(server: McpServer, deps: ToolDeps): void {
  if (!deps.runtime?.inspections) return;
  registerParted(
    server,
    'inspection',
    'vj://projects/{project_id}/assets/{asset_id}/inspection',
    { list: undefined, complete: { project_id: completeProjectId(deps), asset_id: completeAssetId(deps) } },
    {
      title: 'Asset inspection',
      description:
        'What inspect_asset found in an asset: kind, duration, shots, silences, loudness (JSON). Present once the asset was inspected.',
      mimeType: 'application/json',
    },
    deps.partBytes ?? DEFAULT_PART_BYTES,
    assetRecordReader(
      async (projectId, assetId) => (await storedInspection(deps, projectId, assetId))?.inspection,
      (assetId) => `asset ${assetId} has not been inspected yet; call inspect_asset first`,
    ),
  );
}
