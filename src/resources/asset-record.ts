// What an asset's record resources share (its inspection, its transcript): the ids checked, the record read through
// workflow/, and the same answers for a bad id, a missing project and a record not made yet. The record is served
// as JSON, in parts when it is large (a 10-hour transcript is about 9 MB).
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { ServiceError } from '../api/errors.js';
import { UserFacingError, isUuid } from '../errors.js';
import { explain } from '../workflow/explain.js';
import { textBody, type Served } from './parts.js';
import { one } from './projects.js';

/** Opens `read(projectId, assetId)` as JSON; `notYet` says how to make the record when there is none. */
export function assetRecordReader<T>(
  read: (projectId: string, assetId: string) => Promise<T | undefined>,
  notYet: (assetId: string) => string,
) {
  return async (uri: URL, variables: Record<string, string | string[]>): Promise<Served> => {
    const projectId = one(variables.project_id);
    const assetId = one(variables.asset_id);
    if (!isUuid(projectId) || !isUuid(assetId))
      throw new ResourceNotFoundError(uri.href, 'project_id and asset_id must be UUIDs');
    let record: T | undefined;
    try {
      record = await read(projectId, assetId);
    } catch (err) {
      if (err instanceof UserFacingError) throw new ResourceNotFoundError(uri.href, err.message);
      if (err instanceof ServiceError && err.status === 404)
        throw new ResourceNotFoundError(
          uri.href,
          `project ${projectId} not found; list_projects shows the ids you can use`,
        );
      throw new ProtocolError(ProtocolErrorCode.InternalError, explain(err));
    }
    if (record === undefined) throw new ResourceNotFoundError(uri.href, notYet(assetId));
    return { body: textBody(JSON.stringify(record, null, 2)), mimeType: 'application/json', text: true };
  };
}
