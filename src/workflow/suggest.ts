// "Did you mean" for ids that name nothing: held against the projects the caller has, or a project's assets, so the
// error names the id most likely meant (and what it is called).
import { assetName } from '../api/summaries.js';
import type { Project } from '../api/models.js';
import type { Backend } from '../backend/types.js';
import { didYouMean } from '../did-you-mean.js';
import { ServiceError } from '../api/errors.js';
import { UserFacingError, isUuid, requireUuid } from '../errors.js';

/** Projects looked at for a suggestion: the service's largest page. */
const PROJECTS_LOOKED_AT = 100;

/** "did you mean <id> (<name>)?" for a project id that names nothing, or undefined (also when listing fails). */
export async function suggestProject(
  backend: Backend,
  given: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const listed = await backend.listProjects(PROJECTS_LOOKED_AT, { signal }).catch(() => undefined);
  if (!listed) return undefined;
  return didYouMean(
    given,
    listed.projects.map((p) => ({ id: p.id, ...(p.name ? { name: p.name } : {}) })),
  );
}

/**
 * The project, or for an id that names none (404), an error that says which one was likely meant: every tool that
 * reads a project by id reads it through here.
 */
export async function projectOrSuggestion(
  backend: Backend,
  raw: string,
  signal?: AbortSignal,
): Promise<Awaited<ReturnType<Backend['getProject']>>> {
  const id = raw.trim();
  if (!isUuid(id)) {
    // A UUID with a character dropped or added is still worth a suggestion; anything else gets the usual refusal.
    const hint = idLike(id) ? await suggestProject(backend, id, signal) : undefined;
    if (hint) throw new UserFacingError(`project_id "${id.slice(0, 60)}" is not a UUID; ${hint}`);
    requireUuid(id, 'project_id', 'list_projects');
  }
  try {
    return await backend.getProject(id, { signal });
  } catch (err) {
    if (!(err instanceof ServiceError) || err.status !== 404) throw err;
    const hint = await suggestProject(backend, id, signal);
    throw new UserFacingError(
      `project ${id} not found; ${hint ? `${hint} Else ` : ''}list_projects shows the ids you can use`,
    );
  }
}

/** "did you mean <id> (<name>)?" for an asset id the project does not hold, or undefined. */
export function suggestAsset(project: Project, given: string): string | undefined {
  return didYouMean(
    given,
    (project.assets ?? []).map((a) => ({ id: a.id, ...(assetName(a) ? { name: assetName(a) } : {}) })),
  );
}

/** Worth a look for a suggestion: something shaped like an id (hex and dashes), not a name typed in its place. */
export const idLike = (given: string) => /^[0-9a-f-]{8,40}$/i.test(given.trim());
