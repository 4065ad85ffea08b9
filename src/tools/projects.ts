// Project tools: list_projects, get_project, create_project, delete_project.
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ServiceError } from '../api/errors.js';
import {
  ProjectDetailSchema,
  ProjectSummarySchema,
  type ProjectDetail,
  type ProjectSummary,
  assetLine,
  detailProject,
  projectUri,
  summarizeProject,
} from '../api/summaries.js';
import type { Backend, ProjectWithProblems, RecordProblem } from '../backend/types.js';
import { withKnownFacts } from '../workflow/asset-facts.js';
import { idLike, suggestProject } from '../workflow/suggest.js';
import { clipText, fitting } from './budget.js';
import { defineTool, type HandlerDeps } from './define.js';
import { ToolError, ok, requireUuid, unknownOutcome } from './result.js';

// Records of the local backend that could not be read: listed beside the healthy ones, never hiding them (the first
// few: a data dir of broken records must not make an answer too large to read).
const MAX_PROBLEMS_SHOWN = 10;
const ProblemsSchema = z
  .array(
    z.object({
      path: z.string().describe('The file that could not be used'),
      message: z.string().describe('What is wrong with it, and what to do'),
    }),
  )
  .optional()
  .describe('Stored records that could not be read (local backend); everything else is listed as usual');
const problemsOf = (problems: RecordProblem[] | undefined) =>
  problems?.length
    ? {
        problems: problems.slice(0, MAX_PROBLEMS_SHOWN),
        ...(problems.length > MAX_PROBLEMS_SHOWN ? { problems_left_out: problems.length - MAX_PROBLEMS_SHOWN } : {}),
      }
    : {};
const problemsText = (problems: RecordProblem[] | undefined) =>
  problems?.length
    ? `\n${problems.length} record${problems.length === 1 ? '' : 's'} could not be read:\n${problems
        .slice(0, MAX_PROBLEMS_SHOWN)
        .map((p) => `- ${p.message}`)
        .join('\n')}` +
      (problems.length > MAX_PROBLEMS_SHOWN ? `\n… and ${problems.length - MAX_PROBLEMS_SHOWN} more like these` : '')
    : '';
/** A description in a listing: the start of it; get_project shows more, the project's resource all of it. */
const LISTED_DESCRIPTION = 200;
const SHOWN_DESCRIPTION = 1000;
/** Assets a get_project page shows at most; fewer when their links and names make it too large. */
const ASSETS_PER_PAGE = 50;

const projectId = z.string();
const listedBy = 'list_projects';
const projectSubject = (id: string) => ({ what: `project ${id}`, listedBy });

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ListProjectsInput = z.object({
  limit: z.number().int().min(1).max(100).optional().describe('Default 10'),
  offset: z.number().int().min(0).max(10000).optional().describe('A next_offset'),
});
const ProblemsLeftOut = z.number().int().optional();
const ListProjectsOutput = z.object({
  projects: z.array(ProjectSummarySchema),
  next_offset: z.number().int().optional(),
  problems: ProblemsSchema,
  problems_left_out: ProblemsLeftOut,
});
const GetProjectInput = z.object({
  project_id: projectId,
  asset_offset: z.number().int().min(0).optional().describe('A next_asset_offset'),
});
const GetProjectOutput = z.object({
  project: ProjectDetailSchema,
  problems: ProblemsSchema,
  problems_left_out: ProblemsLeftOut,
});
const CreateProjectInput = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(5000).describe('May be empty'),
  prompt_id: z.string().min(1).optional().describe('An existing prompt to start from'),
});
const CreateProjectOutput = z.object({ project: ProjectSummarySchema });
const DeleteProjectInput = z.object({
  project_id: projectId,
  confirm: z.boolean().optional().describe('true once the user agreed'),
});
const DeleteProjectOutput = z.object({ deleted: z.literal(true), project_id: z.string() });

/** list_projects' text for a page of projects from `offset`; `left` more after it, from `next`. */
function listedText(projects: ProjectSummary[], offset: number, left: number, next: number | undefined): string {
  const lines = projects.map((p) => `- ${p.name ?? '(unnamed)'} — ${p.id} (${p.asset_count ?? 0} assets)`);
  const head = `${projects.length} project${projects.length === 1 ? '' : 's'}${offset ? ` from offset ${offset}` : ''}:`;
  const more = next !== undefined ? `\n${left} more: call again with offset: ${next}.` : '';
  return `${head}\n${lines.join('\n')}${more}`;
}

/** list_projects' text when its page is empty. */
function noProjectsText(problems: RecordProblem[] | undefined, offset: number): string {
  if (problems?.length) return 'No readable projects.';
  if (offset) return `No projects from offset ${offset}.`;
  return 'No projects yet. create_project makes one.';
}

async function listProjects(
  { limit, offset = 0 }: z.output<typeof ListProjectsInput>,
  ctx: ServerContext,
  { backend }: HandlerDeps,
) {
  // The service pages by limit only: the first offset + limit are asked for, and the first offset skipped.
  const listed = await backend.listProjects(limit === undefined && !offset ? undefined : (limit ?? 10) + offset, {
    signal: ctx.mcpReq.signal,
  });
  const all = listed.projects
    .slice(offset)
    .map(summarizeProject)
    .map((p) => (p.description ? { ...p, description: clipText(p.description, LISTED_DESCRIPTION) } : p));
  const build = (k: number) => {
    const projects = all.slice(0, k);
    const next = k < all.length ? offset + k : undefined;
    const text = projects.length
      ? listedText(projects, offset, all.length - k, next)
      : noProjectsText(listed.problems, offset);
    return ok(
      { projects, ...(next !== undefined ? { next_offset: next } : {}), ...problemsOf(listed.problems) },
      text + problemsText(listed.problems),
    );
  };
  return fitting(all.length, build).result;
}

/** The project's id, checked; one that is not a UUID but looks like an id gets "did you mean". */
async function checkedProjectId(backend: Backend, given: string, signal: AbortSignal): Promise<string> {
  try {
    return requireUuid(given, 'project_id', listedBy);
  } catch (err) {
    const hint = idLike(given) ? await suggestProject(backend, given, signal) : undefined;
    throw hint ? new ToolError(`${(err as Error).message}; ${hint}`) : err;
  }
}

/** The project; one not found gets "did you mean" when a project's id is close. */
async function projectOrHint(backend: Backend, id: string, signal: AbortSignal): Promise<ProjectWithProblems> {
  return backend.getProject(id, { signal }).catch(async (err: unknown) => {
    const hint =
      err instanceof ServiceError && err.status === 404 ? await suggestProject(backend, id, signal) : undefined;
    throw hint ? new ToolError(`project ${id} not found; ${hint} Else list_projects shows the ids you can use`) : err;
  });
}

/** Which of a project's assets a get_project page shows, said after their count. */
function assetRange(total: number, shown: number, offset: number): string {
  if (shown >= total) return '';
  if (!shown) return ` (none from asset_offset ${offset})`;
  return ` (showing ${offset + 1}-${offset + shown})`;
}

/** get_project's text for a page of the project's assets. */
function projectText(project: ProjectDetail, total: number, offset: number, description: string | undefined): string {
  const cut = !!description && description.length > SHOWN_DESCRIPTION;
  const shown = project.assets.length;
  return [
    `${project.name ?? '(unnamed)'} — ${project.id}`,
    project.description
      ? `${project.description}${cut ? ` (the first ${SHOWN_DESCRIPTION} of its ${description.length} characters: the resource ${projectUri(project.id)} has it whole)` : ''}`
      : undefined,
    `${total} asset${total === 1 ? '' : 's'}${assetRange(total, shown, offset)}:`,
    ...project.assets.map(assetLine),
    project.next_asset_offset !== undefined
      ? `${total - project.next_asset_offset} more: call again with asset_offset: ${project.next_asset_offset} (the resource ${projectUri(project.id)} holds them all).`
      : undefined,
    project.links_expire_at ? `Signed links expire at ${project.links_expire_at}.` : undefined,
  ]
    .filter((l) => l !== undefined)
    .join('\n');
}

async function getProject(
  { project_id, asset_offset = 0 }: z.output<typeof GetProjectInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const { backend } = deps;
  const signal = ctx.mcpReq.signal;
  const id = await checkedProjectId(backend, project_id, signal);
  const got = await projectOrHint(backend, id, signal);
  const total = got.assets?.length ?? 0;
  // What is known of the page's media (recorded, probed or inspected); nothing is measured for a listing.
  const assets = await withKnownFacts(deps, got.assets ?? [], asset_offset, asset_offset + ASSETS_PER_PAGE);
  // A description of 5000 characters (the most create_project takes; a service's may be longer) would fill
  // the result twice over, in its text and its structuredContent.
  const description = got.description ?? undefined;
  const cut = !!description && description.length > SHOWN_DESCRIPTION;
  const build = (k: number) => {
    const detail = detailProject({ ...got, assets }, asset_offset, k);
    const project = cut ? { ...detail, description: clipText(description, SHOWN_DESCRIPTION) } : detail;
    const text = projectText(project, total, asset_offset, description);
    return ok({ project, ...problemsOf(got.problems) }, text + problemsText(got.problems));
  };
  return fitting(Math.max(0, Math.min(ASSETS_PER_PAGE, total - asset_offset)), build).result;
}

async function createProject(
  { name, description, prompt_id }: z.output<typeof CreateProjectInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const created = await deps.backend
    .createProject({ name, description, ...(prompt_id ? { prompt_id } : {}) }, { signal: ctx.mcpReq.signal })
    .catch((err: unknown) => {
      throw unknownOutcome(
        err,
        `creating project "${name}"`,
        `call list_projects and look for a project named "${name}" created just now; only if there is none, call create_project again`,
      );
    });
  deps.resourceListChanged();
  const project = summarizeProject(created);
  return ok({ project }, `Created project ${project.name ?? name} — ${project.id}`);
}

async function deleteProject(
  { project_id, confirm }: z.output<typeof DeleteProjectInput>,
  ctx: ServerContext,
  deps: HandlerDeps,
) {
  const { backend } = deps;
  const id = requireUuid(project_id, 'project_id', listedBy);
  if (confirm !== true) {
    const p = summarizeProject(await backend.getProject(id, { signal: ctx.mcpReq.signal }));
    throw new ToolError(
      `nothing was deleted: deleting project "${p.name ?? id}" (${id}, ${p.asset_count ?? 0} assets) cannot be undone. ` +
        'Ask the user to confirm, then call delete_project again with confirm: true.',
    );
  }
  await backend.deleteProject(id, { signal: ctx.mcpReq.signal }).catch((err: unknown) => {
    throw unknownOutcome(
      err,
      `deleting project ${id}`,
      `call get_project with this id: if it says not found, the project is gone; otherwise ask the user again before another delete_project`,
    );
  });
  deps.resourceListChanged();
  return ok({ deleted: true as const, project_id: id }, `Deleted project ${id}`);
}

const listProjectsTool = defineTool({
  name: 'list_projects',
  config: {
    title: 'List video projects',
    description: 'Your video projects, newest first, with their asset counts. For the assets: get_project.',
    inputSchema: ListProjectsInput,
    outputSchema: ListProjectsOutput,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  handler: listProjects,
});

const getProjectTool = defineTool({
  name: 'get_project',
  config: {
    title: 'Get a project and its assets',
    description:
      'A project and its assets (kind, duration, size, status) with signed links that expire: fetch again, never reuse. Paged: asset_offset.',
    inputSchema: GetProjectInput,
    outputSchema: GetProjectOutput,
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  subject: ({ project_id }) => projectSubject(project_id),
  handler: getProject,
});

const createProjectTool = defineTool({
  name: 'create_project',
  config: {
    title: 'Create a project',
    description:
      'Creates a project (from an existing prompt with prompt_id). Each call makes another: check list_projects first.',
    inputSchema: CreateProjectInput,
    outputSchema: CreateProjectOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  handler: createProject,
});

const deleteProjectTool = defineTool({
  name: 'delete_project',
  config: {
    title: 'Delete a project',
    description:
      'Deletes a project and all it holds, for good. Without confirm: true nothing is deleted and the error names what would go: ask the user first.',
    inputSchema: DeleteProjectInput,
    outputSchema: DeleteProjectOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  },
  subject: ({ project_id }) => projectSubject(project_id),
  handler: deleteProject,
});

export const projectTools = [listProjectsTool, getProjectTool, createProjectTool, deleteProjectTool];
