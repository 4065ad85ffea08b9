// "Did you mean" for ids that name nothing: held against the projects the caller has, or a project's assets, so the
// error names the id most likely meant (and what it is called).
import { assetName } from '../api/summaries.js';
import type { Project } from '../api/models.js';
import type { Backend } from '../backend/types.js';
import { didYouMean } from '../did-you-mean.js';

/** Projects looked at for a suggestion: the service's largest page. */
const PROJECTS_LOOKED_AT = 100;

/** "did you mean <id> (<name>)?" for a project id that names nothing, or undefined (also when listing fails). */
export async function suggestProject(backend: Backend, given: string, signal?: AbortSignal): Promise<string | undefined> {
  const listed = await backend.listProjects(PROJECTS_LOOKED_AT, { signal }).catch(() => undefined);
  if (!listed) return undefined;
  return didYouMean(given, listed.projects.map((p) => ({ id: p.id, ...(p.name ? { name: p.name } : {}) })));
}

/** "did you mean <id> (<name>)?" for an asset id the project does not hold, or undefined. */
export function suggestAsset(project: Project, given: string): string | undefined {
  return didYouMean(given, (project.assets ?? []).map((a) => ({ id: a.id, ...(assetName(a) ? { name: assetName(a) } : {}) })));
}

/** Worth a look for a suggestion: something shaped like an id (hex and dashes), not a name typed in its place. */
export const idLike = (given: string) => /^[0-9a-f-]{8,40}$/i.test(given.trim());
