// What an asset's record resources share (its inspection, its transcript): the ids checked, the record read through
// workflow/, and the same answers for a bad id, a missing project and a record not made yet.
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type ReadResourceResult } from '@modelcontextprotocol/server';
import { ServiceError } from '../api/errors.js';
import { UserFacingError, isUuid } from '../errors.js';
import { explain } from '../workflow/explain.js';
import { one } from './projects.js';

/** Reads `read(projectId, assetId)` as JSON; `notYet` says how to make the record when there is none. */
export function assetRecordReader<T>(read: (projectId: string, assetId: string) => Promise<T | undefined>, notYet: (assetId: string) => string) {
  return async (uri: URL, variables: Record<string, string | string[]>): Promise<ReadResourceResult> => {
    const projectId = one(variables.project_id);
    const assetId = one(variables.asset_id);
    if (!isUuid(projectId) || !isUuid(assetId)) throw new ResourceNotFoundError(uri.href, 'project_id and asset_id must be UUIDs');
    let record: T | undefined;
    try {
      record = await read(projectId, assetId);
    } catch (err) {
      if (err instanceof UserFacingError) throw new ResourceNotFoundError(uri.href, err.message);
      if (err instanceof ServiceError && err.status === 404) throw new ResourceNotFoundError(uri.href, `project ${projectId} not found; list_projects shows the ids you can use`);
      throw new ProtocolError(ProtocolErrorCode.InternalError, explain(err));
    }
    if (record === undefined) throw new ResourceNotFoundError(uri.href, notYet(assetId));
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(record, null, 2) }] };
  };
}
