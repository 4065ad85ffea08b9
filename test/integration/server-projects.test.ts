// The built server, spawned over stdio and driven by the SDK's client, against the local test service.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { BIN, baseEnv, spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait.js';

let service: FakeService;
let srv: Spawned;
const listChanged: number[] = [];

beforeAll(async () => {
  service = await new FakeService({ apiKey: 'vj-secret-key-do-not-leak-42' }).start();
  srv = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_LOG_LEVEL: 'debug' });
  srv.client.setNotificationHandler('notifications/resources/list_changed', () => {
    listChanged.push(Date.now());
  });
});
afterAll(async () => {
  await srv?.close();
  await service?.stop();
});
beforeEach(() => service.reset());

const call = (name: string, args: Record<string, unknown> = {}) => srv.client.callTool({ name, arguments: args });

describe('tools/list', () => {
  it('lists exactly its tools, with titles, descriptions and honest annotations (snapshot)', async () => {
    const { tools } = await srv.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'compose_edit',
      'create_project',
      'delete_asset',
      'delete_project',
      'export_edit',
      'find_moments',
      'get_project',
      'get_render_status',
      'import_edit',
      'inspect_asset',
      'list_projects',
      'list_scripts',
      'preview_edit',
      'render_edit',
      'search_transcripts',
      'tighten_edit',
      'transcribe_asset',
    ]);
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.description!.length, t.name).toBeGreaterThan(60);
      expect(t.outputSchema, t.name).toBeDefined();
      // Every argument says what it is, but ids and names (the instructions say what ids are) and, beside edit_id
      // (whose
      // description says they are compose_edit's), the inline edit's arguments: each byte here is paid in every chat.
      const props = (t.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      const inline = props.edit_id?.description?.includes("compose_edit's arguments")
        ? [
            'project_id',
            'clips',
            'overlays',
            'edit',
            'resolution',
            'fps',
            'filename',
            'audio_fade_ms',
            'loudness',
            'level_dialogue',
            'captions',
          ]
        : [];
      for (const [arg, schema] of Object.entries(props)) {
        if (/_id$/.test(arg) || ['name', 'query', 'limit', 'format'].includes(arg) || inline.includes(arg)) continue;
        expect(schema.description, `${t.name}.${arg}`).toBeTruthy();
      }
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    // A read-only tool says it destroys nothing (clients that skip readOnlyHint assume destructive) and no more:
    // idempotentHint means something only when readOnlyHint is false (the spec), and each byte is paid in every chat.
    for (const t of tools.filter((t) => t.annotations?.readOnlyHint)) {
      expect(t.annotations, t.name).toMatchObject({ destructiveHint: false });
      expect(t.annotations, t.name).not.toHaveProperty('idempotentHint');
    }
    expect(byName.delete_project).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(byName.list_projects).toMatchObject({ readOnlyHint: true });
    expect(byName.create_project).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(byName.compose_edit).toMatchObject({ readOnlyHint: true });
    expect(byName.preview_edit).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.render_edit).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    // export_edit writes a file (and may fetch media); import_edit only reads and checks.
    expect(byName.export_edit).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: true });
    expect(byName.import_edit).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.transcribe_asset).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.search_transcripts).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.find_moments).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    // A new edit is kept beside the old one (as compose_edit keeps one): nothing is changed.
    expect(byName.tighten_edit).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    await expect(
      JSON.stringify(
        tools.sort((a, b) => a.name.localeCompare(b.name)),
        null,
        2,
      ),
    ).toMatchFileSnapshot('../__snapshots__/tools-remote.json');
  });

  it('introduces itself with a name, version, title and instructions', () => {
    const info = srv.client.getServerVersion();
    expect(info).toMatchObject({ name: 'cutroom', version: '0.1.0' });
    expect(info?.title).toBeTruthy();
    expect(srv.client.getInstructions()).toMatch(/list_projects/);
  });
});

describe('projects', () => {
  it('list_projects returns summaries and passes limit to the service', async () => {
    for (let i = 0; i < 3; i++) service.addProject({ name: `clip set ${i}`, assets: [{}, {}] });
    const r = await call('list_projects', { limit: 2 });
    expect(r.isError).toBeFalsy();
    const { projects } = r.structuredContent as {
      projects: { id: string; asset_count: number; resource_uri: string }[];
    };
    expect(projects).toHaveLength(2);
    expect(projects[0]!.asset_count).toBe(2);
    expect(projects[0]!.resource_uri).toBe(`vj://projects/${projects[0]!.id}`);
    expect(service.requests).toHaveLength(1);
    expect(service.requests[0]).toMatchObject({ method: 'GET', path: '/projects', query: { limit: '2' } });
    expect(service.requests[0]!.headers['x-api-key']).toBe(service.apiKey);
    expect(textOf(r)).toMatch(/clip set/);
  });

  it('list_projects refuses a limit out of range without calling the service', async () => {
    const r = await call('list_projects', { limit: 500 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/limit/);
    expect(service.requests).toHaveLength(0);
  });

  it('get_project returns the assets with their links and when the links expire', async () => {
    const p = service.addProject({
      name: 'beach',
      assets: [{ asset_type: 'generated_video' }, { asset_type: 'audio' }],
    });
    const r = await call('get_project', { project_id: p.id });
    expect(r.isError).toBeFalsy();
    const { project } = r.structuredContent as {
      project: { assets: { url: string; links_expire_at: string }[]; links_expire_at: string; assets_total: number };
    };
    expect(project.assets_total).toBe(2);
    expect(project.assets[0]!.url).toMatch(/Signature=/);
    const expiry = Date.parse(project.links_expire_at);
    expect(expiry).toBeGreaterThan(Date.now() + 3500_000);
    expect(expiry).toBeLessThan(Date.now() + 3700_000);
    expect(textOf(r)).toMatch(/expire at/);
  });

  it('checks ids are UUIDs before any request', async () => {
    const r = await call('get_project', { project_id: 'my beach project' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/not a UUID.*list_projects/);
    expect(service.requests).toHaveLength(0);
  });

  it('says a missing project is not found and where to find ids', async () => {
    const id = '4a1d2c3b-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
    const r = await call('get_project', { project_id: id });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(`project ${id} not found; list_projects shows the ids you can use`);
  });

  it('create_project sends name, description and prompt_id, and announces the list change', async () => {
    const before = listChanged.length;
    const r = await call('create_project', {
      name: 'Launch teaser',
      description: '30 s for socials',
      prompt_id: 'prompt-7',
    });
    expect(r.isError).toBeFalsy();
    const { project } = r.structuredContent as { project: { id: string; name: string } };
    expect(project.name).toBe('Launch teaser');
    expect(service.projects.has(project.id)).toBe(true);
    expect(service.requests[0]).toMatchObject({
      method: 'POST',
      path: '/projects',
      body: { name: 'Launch teaser', description: '30 s for socials', prompt_id: 'prompt-7' },
    });
    await expect.poll(() => listChanged.length).toBeGreaterThan(before);
  });

  it('create_project is not retried when the service fails', async () => {
    service.fail({ status: 503, body: '{"detail":"maintenance"}' }, { times: 5 });
    const r = await call('create_project', { name: 'x', description: '' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      'creating project "x" may or may not have reached the service (the service failed (503): maintenance). It was not resent: ' +
        'call list_projects and look for a project named "x" created just now; only if there is none, call create_project again',
    );
    expect(service.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it('delete_project without confirm deletes nothing and names what would go', async () => {
    const p = service.addProject({ name: 'keep me', assets: [{}] });
    const r = await call('delete_project', { project_id: p.id });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/nothing was deleted.*"keep me".*1 assets.*confirm: true/);
    expect(service.requests.some((q) => q.method === 'DELETE')).toBe(false);
    expect(service.projects.has(p.id)).toBe(true);
  });

  it('delete_project with confirm deletes and announces the list change', async () => {
    const p = service.addProject({ name: 'scratch' });
    const before = listChanged.length;
    const r = await call('delete_project', { project_id: p.id, confirm: true });
    expect(r.structuredContent).toEqual({ deleted: true, project_id: p.id });
    expect(service.projects.has(p.id)).toBe(false);
    expect(service.requests).toEqual([expect.objectContaining({ method: 'DELETE', path: `/projects/${p.id}` })]);
    await expect.poll(() => listChanged.length).toBeGreaterThan(before);
    const again = await call('delete_project', { project_id: p.id, confirm: true });
    expect(textOf(again)).toMatch(/not found; list_projects/);
  });
});

describe('scripts', () => {
  it('list_scripts gives inputs and the steps in dependency order', async () => {
    const p = service.addProject({ name: 'gen' });
    service.addScript(p.id);
    const r = await call('list_scripts', { project_id: p.id, limit: 5 });
    expect(r.isError).toBeFalsy();
    const { scripts } = r.structuredContent as {
      scripts: { inputs: { name: string }[]; graph: { steps: string[] } }[];
    };
    expect(scripts[0]!.inputs.map((i) => i.name)).toEqual(['topic', 'voice']);
    expect(scripts[0]!.graph.steps).toEqual([
      '1. Project flow [project flow]',
      '2. Render custom prompt [render custom prompt]',
      '3. Text to speech [text to speech]',
      '4. Speech to text [speech to text with time markers]',
      '5. Images from text [generate images from text]',
      '6. Video from assets [generate video from assets]',
    ]);
    expect(service.requests[0]).toMatchObject({ path: `/projects/${p.id}/scripts`, query: { limit: '5' } });
  });

  it('says when a project has no scripts', async () => {
    const p = service.addProject();
    const r = await call('list_scripts', { project_id: p.id });
    expect(textOf(r)).toBe('This project has no scripts.');
  });
});

describe('resources', () => {
  it('lists projects as resources and reads one with all its assets', async () => {
    const p = service.addProject({ name: 'resourceful', assets: [{}] });
    const { resources } = await srv.client.listResources();
    expect(resources.find((r) => r.uri === `vj://projects/${p.id}`)?.name).toBe('resourceful');
    const read = await srv.client.readResource({ uri: `vj://projects/${p.id}` });
    const body = JSON.parse((read.contents[0] as { text: string }).text);
    expect(body.assets).toHaveLength(1);
  });

  it('reads a script with its graph and an outline in dependency order', async () => {
    const p = service.addProject();
    const s = service.addScript(p.id);
    const read = await srv.client.readResource({ uri: `vj://projects/${p.id}/scripts/${s.id}` });
    const json = JSON.parse((read.contents.find((c) => c.mimeType === 'application/json') as { text: string }).text);
    expect(json.graph.nodes).toHaveLength(6);
    expect(json.outline.map((o: { job: string }) => o.job)[0]).toBe('project flow');
    const md = (read.contents.find((c) => c.mimeType === 'text/markdown') as { text: string }).text;
    expect(md).toMatch(
      /1\. Project flow — project flow\n2\. Render custom prompt — render custom prompt \(after Project flow\)/,
    );
  });

  it('answers a missing script with a resource error, not a crash', async () => {
    const p = service.addProject();
    await expect(
      srv.client.readResource({ uri: `vj://projects/${p.id}/scripts/5b0c1d2e-3f4a-4b5c-8d6e-7f8091a2b3c4` }),
    ).rejects.toThrow(/not found.*list_scripts/);
    const r = await call('list_projects', {});
    expect(r.isError).toBeFalsy();
  });

  it('completes project ids and script ids', async () => {
    const p = service.addProject();
    const s = service.addScript(p.id);
    const projects = await srv.client.complete({
      ref: { type: 'ref/resource', uri: 'vj://projects/{project_id}' },
      argument: { name: 'project_id', value: p.id.slice(0, 6) },
    });
    expect(projects.completion.values).toContain(p.id);
    const scripts = await srv.client.complete({
      ref: { type: 'ref/resource', uri: 'vj://projects/{project_id}/scripts/{script_id}' },
      argument: { name: 'script_id', value: '' },
      context: { arguments: { project_id: p.id } },
    });
    expect(scripts.completion.values).toEqual([s.id]);
  });
});

describe('failures', () => {
  it('retries a flaky GET and succeeds', async () => {
    service.fail(
      { status: 502, contentType: 'text/html', body: '<html><title>502 Bad Gateway</title></html>' },
      { times: 2 },
    );
    const r = await call('list_projects', {});
    expect(r.isError).toBeFalsy();
    expect(service.requests).toHaveLength(3);
  });

  it('turns an HTML error page into one line with no markup', async () => {
    service.fail({
      status: 500,
      contentType: 'text/html',
      body: '<!doctype html><html><head><title>Internal Server Error</title></head><body>trace...</body></html>',
    });
    const r = await call('list_projects', {});
    expect(textOf(r)).toBe('the service failed (500) (Internal Server Error); try again later');
  });

  it('the process survives bad arguments and unknown tools', async () => {
    const bad = await call('create_project', { name: 42 });
    expect(bad.isError).toBe(true);
    await expect(call('no_such_tool')).rejects.toThrow();
    expect((await call('list_projects', {})).isError).toBeFalsy();
  });

  it('wrote nothing but JSON-RPC to stdout, and never the key or a signed query to stderr', async () => {
    const lines = srv.stdoutLines();
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(lines.join('\n')).not.toContain(service.apiKey);
    const err = srv.stderr();
    expect(err).toMatch(/serving stdio/);
    expect(err).not.toContain(service.apiKey);
    expect(err).not.toMatch(/Signature=/);
  });
});

describe('other configurations', () => {
  it('reports a rejected key without showing it', async () => {
    const other = await spawnServer({ VJ_API_KEY: 'wrong-key-123456', VJ_API_URL: service.url });
    try {
      const r = await other.client.callTool({ name: 'list_projects', arguments: {} });
      expect(textOf(r)).toMatch(/^the service rejected the API key \(401\): check VJ_API_KEY/);
      expect(JSON.stringify(r)).not.toContain('wrong-key-123456');
      expect(other.stderr()).not.toContain('wrong-key-123456');
    } finally {
      await other.close();
    }
  });

  it('says when the service does not answer in time', async () => {
    const other = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, VJ_TIMEOUT_MS: '500' });
    try {
      // Answered only after the test (the next reset opens the gate): never in time, however slow the machine.
      service.fail({ holdUntil: service.gate(), status: 200, body: '[]' }, { times: 5 });
      const r = await other.client.callTool({ name: 'list_projects', arguments: {} });
      expect(textOf(r)).toMatch(/^the service did not answer within 0.5 s/);
    } finally {
      await other.close();
    }
  });

  it('never invites a blind retry of a create or delete whose outcome is unknown', async () => {
    const other = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, VJ_TIMEOUT_MS: '2000' });
    try {
      // A first call opens the connection to the service, so that the create's 2 s are the service's alone.
      expect((await other.client.callTool({ name: 'list_projects', arguments: {} })).isError).toBeFalsy();
      // The service applies the create, but only answers after the client gave up: held until the call has returned.
      const answer = service.gate();
      service.fail(
        { holdUntil: answer },
        { match: (q: { method: string; path: string }) => q.method === 'POST' && q.path === '/projects' },
      );
      const before = service.projects.size;
      const created = await other.client.callTool({
        name: 'create_project',
        arguments: { name: 'slow create', description: '' },
      });
      expect(created.isError).toBe(true);
      expect(textOf(created)).toBe(
        'creating project "slow create" may or may not have reached the service (the service did not answer within 2 s). It was not resent: ' +
          'call list_projects and look for a project named "slow create" created just now; only if there is none, call create_project again',
      );
      expect(textOf(created)).not.toMatch(/try again/);
      answer.open();
      // Following the advice finds the project: a retry would have made a duplicate. (The service, in this process,
      // may read the request only now, on a loaded machine: waited for, not assumed.)
      await waitFor(() => [...service.projects.values()].some((p) => p.name === 'slow create'), {
        what: 'the service to apply the create it was sent',
      });
      expect(service.projects.size).toBe(before + 1);
      expect(service.requests.filter((q) => q.method === 'POST')).toHaveLength(1);

      const p = service.addProject({ name: 'flaky delete' });
      service.fail(
        { status: 502, contentType: 'text/html', body: '<html><title>502 Bad Gateway</title></html>' },
        { match: (q: { method: string }) => q.method === 'DELETE' },
      );
      const deleted = await other.client.callTool({
        name: 'delete_project',
        arguments: { project_id: p.id, confirm: true },
      });
      expect(deleted.isError).toBe(true);
      expect(textOf(deleted)).toMatch(
        new RegExp(
          `^deleting project ${p.id} may or may not have reached the service \\(the service failed \\(502\\): 502 Bad Gateway\\)\\. It was not resent: call get_project`,
        ),
      );
      expect(service.requests.filter((q) => q.method === 'DELETE')).toHaveLength(1);

      // A refusal is definite: it is reported as such, not as an unknown outcome.
      service.fail(
        { status: 422, body: JSON.stringify({ detail: [{ loc: ['body', 'name'], msg: 'too long' }] }) },
        { match: (q: { method: string }) => q.method === 'POST' },
      );
      const refused = await other.client.callTool({
        name: 'create_project',
        arguments: { name: 'refused', description: '' },
      });
      expect(textOf(refused)).toMatch(/^the service rejected the request \(422\) \(body.name: too long\)/);
    } finally {
      await other.close();
    }
  });

  it('sends a bearer token when VJ_AUTH_HEADER=bearer', async () => {
    const bearer = await new FakeService({ authHeader: 'bearer' }).start();
    const other = await spawnServer({ VJ_API_KEY: bearer.apiKey, VJ_API_URL: bearer.url, VJ_AUTH_HEADER: 'bearer' });
    try {
      const r = await other.client.callTool({ name: 'list_projects', arguments: {} });
      expect(r.isError).toBeFalsy();
      expect(bearer.requests[0]!.headers.authorization).toBe(`Bearer ${bearer.apiKey}`);
    } finally {
      await other.close();
      await bearer.stop();
    }
  });

  it('serves a 2026-07-28 client (server/discover) as well as a 2025 one', async () => {
    const modern = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url }, { modern: true });
    try {
      const p = service.addProject({ name: 'modern era' });
      const r = await modern.client.callTool({ name: 'get_project', arguments: { project_id: p.id } });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { project: { name: string } }).project.name).toBe('modern era');
    } finally {
      await modern.close();
    }
  });

  it('refuses a bad configuration at start with one clear line', () => {
    const run = spawnSync(process.execPath, [BIN], {
      env: baseEnv({ VJ_TIMEOUT_MS: 'later', VJ_API_KEY: 'k-should-not-print' }),
      input: '',
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim()).toBe('cutroom: invalid configuration: VJ_TIMEOUT_MS must be a whole number');
  });
});
