// Project tools: list_projects, get_project, create_project, delete_project.
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  ProjectDetailSchema,
  ProjectSummarySchema,
  detailProject,
  summarizeProject,
} from '../api/summaries.js';
import type { RecordProblem } from '../backend/types.js';
import type { ToolDeps } from '../workflow/deps.js';
import { ToolError, guard, ok, requireUuid, unknownOutcome } from './result.js';

// Records of the local backend that could not be read: listed beside the healthy ones, never hiding them.
const ProblemsSchema = z
  .array(z.object({ path: z.string().describe('The file that could not be used'), message: z.string().describe('What is wrong with it, and what to do') }))
  .optional()
  .describe('Stored records that could not be read (local backend); everything else is listed as usual');
const problemsOf = (problems: RecordProblem[] | undefined) => (problems?.length ? { problems } : {});
const problemsText = (problems: RecordProblem[] | undefined) =>
  problems?.length ? `\n${problems.length} record${problems.length === 1 ? '' : 's'} could not be read:\n${problems.map((p) => `- ${p.message}`).join('\n')}` : '';

const projectId = z.string().describe('Project id (a UUID), as list_projects shows it');
const listedBy = 'list_projects';
const projectSubject = (id: string) => ({ what: `project ${id}`, listedBy });

// Schemas are built once, not per server instance: over HTTP a server is made for every request.
const ListProjectsInput = z.object({
  limit: z.number().int().min(1).max(100).optional().describe('How many projects to return, 1-100 (the service defaults to 10)'),
});
const ListProjectsOutput = z.object({ projects: z.array(ProjectSummarySchema), problems: ProblemsSchema });
const GetProjectInput = z.object({
  project_id: projectId,
  asset_offset: z.number().int().min(0).optional().describe('Index of the first asset to show (default 0); 50 are shown at a time'),
});
const GetProjectOutput = z.object({ project: ProjectDetailSchema, problems: ProblemsSchema });
const CreateProjectInput = z.object({
  name: z.string().trim().min(1).max(200).describe('Name of the project'),
  description: z.string().max(5000).describe('What the project is about; may be empty'),
  prompt_id: z.string().min(1).optional().describe('Id of an existing prompt to create the project with'),
});
const CreateProjectOutput = z.object({ project: ProjectSummarySchema });
const DeleteProjectInput = z.object({
  project_id: projectId,
  confirm: z.boolean().optional().describe('Must be true, and only after the user agreed to delete this project'),
});
const DeleteProjectOutput = z.object({ deleted: z.literal(true), project_id: z.string() });

export function register(server: McpServer, { backend, logger }: ToolDeps): void {
  const openWorldHint = backend.kind === 'remote';

  server.registerTool(
    'list_projects',
    {
      title: 'List video projects',
      description:
        'Lists your video projects, newest first as the service orders them: id, name, description, creation time and asset count. ' +
        'Start here to find a project id for the other tools. Assets are not included: call get_project for them.',
      inputSchema: ListProjectsInput,
      outputSchema: ListProjectsOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint },
    },
    ({ limit }, ctx) =>
      guard('list_projects', logger, async () => {
        const listed = await backend.listProjects(limit, { signal: ctx.mcpReq.signal });
        const projects = listed.projects.map(summarizeProject);
        const lines = projects.map((p) => `- ${p.name ?? '(unnamed)'} — ${p.id} (${p.asset_count ?? 0} assets)`);
        const text = projects.length
          ? `${projects.length} project${projects.length === 1 ? '' : 's'}:\n${lines.join('\n')}`
          : listed.problems?.length ? 'No readable projects.' : 'No projects yet. create_project makes one.';
        return ok({ projects, ...problemsOf(listed.problems) }, text + problemsText(listed.problems));
      }),
  );

  server.registerTool(
    'get_project',
    {
      title: 'Get a project and its assets',
      description:
        "Returns one project with its assets: each asset's id, type, status and its signed links (url, download_url). " +
        'The links expire (links_expire_at says when): fetch the project again for fresh ones rather than reusing old links. ' +
        'Shows 50 assets at a time; use asset_offset for the rest.',
      inputSchema: GetProjectInput,
      outputSchema: GetProjectOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint },
    },
    ({ project_id, asset_offset }, ctx) =>
      guard(
        'get_project',
        logger,
        async () => {
          const id = requireUuid(project_id, 'project_id', listedBy);
          const got = await backend.getProject(id, { signal: ctx.mcpReq.signal });
          const project = detailProject(got, asset_offset ?? 0);
          const shown = project.assets.length;
          const text = [
            `${project.name ?? '(unnamed)'} — ${project.id}`,
            project.description ? `${project.description}` : undefined,
            `${project.assets_total} asset${project.assets_total === 1 ? '' : 's'}${shown < project.assets_total ? ` (showing ${project.assets_offset + 1}-${project.assets_offset + shown})` : ''}:`,
            ...project.assets.map((a) => `- ${a.id} ${a.asset_type ?? 'asset'} ${a.status ?? ''}`.trimEnd()),
            project.links_expire_at ? `Signed links expire at ${project.links_expire_at}.` : undefined,
          ]
            .filter((l) => l !== undefined)
            .join('\n');
          return ok({ project, ...problemsOf(got.problems) }, text + problemsText(got.problems));
        },
        projectSubject(project_id),
      ),
  );

  server.registerTool(
    'create_project',
    {
      title: 'Create a project',
      description:
        'Creates a new video project and returns it (id, name, description). Optionally starts it from an existing prompt with prompt_id. ' +
        'Each call creates another project, so check list_projects first if the user may already have one.',
      inputSchema: CreateProjectInput,
      outputSchema: CreateProjectOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint },
    },
    ({ name, description, prompt_id }, ctx) =>
      guard('create_project', logger, async () => {
        const created = await backend
          .createProject({ name, description, ...(prompt_id ? { prompt_id } : {}) }, { signal: ctx.mcpReq.signal })
          .catch((err: unknown) => {
            throw unknownOutcome(
              err,
              `creating project "${name}"`,
              `call list_projects and look for a project named "${name}" created just now; only if there is none, call create_project again`,
            );
          });
        server.sendResourceListChanged();
        const project = summarizeProject(created);
        return ok({ project }, `Created project ${project.name ?? name} — ${project.id}`);
      }),
  );

  server.registerTool(
    'delete_project',
    {
      title: 'Delete a project',
      description:
        'Deletes a project and everything in it, for good. Ask the user first: without confirm: true this deletes nothing and ' +
        'returns an error naming the project, so you can show the user what would go.',
      inputSchema: DeleteProjectInput,
      outputSchema: DeleteProjectOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint },
    },
    ({ project_id, confirm }, ctx) =>
      guard(
        'delete_project',
        logger,
        async () => {
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
          server.sendResourceListChanged();
          return ok({ deleted: true as const, project_id: id }, `Deleted project ${id}`);
        },
        projectSubject(project_id),
      ),
  );
}
