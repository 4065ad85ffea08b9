// Completions shared by resource templates and prompts: project ids from the project list, asset ids of the project
// named in the other arguments.
import type { Asset } from '../api/models.js';
import type { Backend } from '../backend/types.js';
import { isUuid } from '../errors.js';
import type { Logger } from '../log.js';

const COMPLETION_LIMIT = 100;

/** Completes a project id from the project list. */
export function completeProjectId({ backend, logger }: { backend: Backend; logger: Logger }) {
  return async (value: string): Promise<string[]> => {
    try {
      const { projects } = await backend.listProjects(COMPLETION_LIMIT);
      return projects
        .map((p) => p.id)
        .filter((id) => id.startsWith(value))
        .slice(0, COMPLETION_LIMIT);
    } catch (err) {
      logger.warn(`completing project ids: ${(err as Error).message}`);
      return [];
    }
  };
}

/** Completes an asset id of the project named in the other arguments, among the assets `keep` takes. */
export function completeAssetId(
  { backend, logger }: { backend: Backend; logger: Logger },
  keep: (a: Asset) => boolean = () => true,
) {
  return async (value: string, context?: { arguments?: Record<string, string> }): Promise<string[]> => {
    const projectId = context?.arguments?.project_id ?? '';
    if (!isUuid(projectId)) return [];
    try {
      const project = await backend.getProject(projectId);
      return (project.assets ?? [])
        .filter((a) => keep(a) && a.id.startsWith(value))
        .sort((a, b) => (b.created_at ?? '').localeCompare(a.created_at ?? ''))
        .map((a) => a.id)
        .slice(0, COMPLETION_LIMIT);
    } catch (err) {
      logger.warn(`completing asset ids: ${(err as Error).message}`);
      return [];
    }
  };
}
