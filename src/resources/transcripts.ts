// vj://projects/{project_id}/assets/{asset_id}/transcript: what transcribe_asset heard in a whole asset (JSON), once
// it was transcribed. Reading it never starts the engine.
import type { McpServer } from '@modelcontextprotocol/server';
import type { ToolDeps } from '../workflow/deps.js';
import { assetRecordReader } from './asset-record.js';
import { DEFAULT_PART_BYTES, registerParted } from './parts.js';
import { storedTranscript } from '../workflow/transcribe.js';
import { markUnsure } from '../workflow/transcript.js';
import { completeAssetId, completeProjectId } from '../workflow/completion.js';

export function register(server: McpServer, deps: ToolDeps): void {
  if (!deps.runtime?.transcripts) return;
  registerParted(
    server,
    'transcript',
    'vj://projects/{project_id}/assets/{asset_id}/transcript',
    {
      list: undefined,
      complete: {
        project_id: completeProjectId(deps),
        asset_id: completeAssetId(deps, (a) => a.asset_type !== 'image'),
      },
    },
    {
      title: 'Asset transcript',
      description:
        'What transcribe_asset heard in a whole asset: its words with their times and its sentences (JSON). Present once the asset was transcribed.',
      mimeType: 'application/json',
    },
    deps.partBytes ?? DEFAULT_PART_BYTES,
    assetRecordReader(
      async (projectId, assetId) => {
        const stored = await storedTranscript(deps, projectId, assetId);
        return stored && markUnsure(stored.transcript);
      },
      (assetId) => `asset ${assetId} has not been transcribed yet; call transcribe_asset first`,
    ),
  );
}
