// Edits by id on a hosted cutroom (Streamable HTTP, the remote backend, a server instance per request): each caller's
// edits are kept in their own folder of the data dir, so caller B can neither use nor read nor be offered caller A's
// edit_id, whatever the tool, the resource or the completion; A's edit works on any request of A's.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerId } from '../../src/http/callers.js';
import { FakeService } from '../fixtures/service.mjs';
import { textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';

const keyB = 'tenant-b-key-0123456789';
const root = mkdtempSync(join(tmpdir(), 'cutroom-http-edits-'));
let service: FakeService;
let srv: HttpServer;
let alice: Client;
let bob: Client;
let projectA: string;
let ids: Record<MediaName, string>;

type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
};
const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args }, { timeout: 120_000 })) as Result;

beforeAll(async () => {
  service = await new FakeService().start();
  ({ projectId: projectA, ids } = mediaProject(service, "alice's project"));
  service.addTenant(keyB);
  srv = await startHttpServer({
    VJ_BACKEND: 'remote',
    VJ_API_URL: service.url,
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
  });
  alice = await connectHttp(srv.url, { 'x-api-key': service.apiKey });
  bob = await connectHttp(srv.url, { 'x-api-key': keyB });
}, 60_000);
afterAll(async () => {
  await alice?.close();
  await bob?.close();
  await srv?.stop();
  await service?.stop();
});

describe("one caller's edit_id is no other's", () => {
  it("B cannot preview, render, export, read or complete A's edit; A's works on every request", async () => {
    const composed = await call(alice, 'compose_edit', {
      project_id: projectA,
      clips: [{ asset_id: ids.red, start: 0, end: 2 }],
    });
    const editId = composed.structuredContent?.edit_id as string;
    expect(editId).toMatch(/^edit-[0-9a-f]{16}$/);
    expect(existsSync(join(root, 'data', 'callers', callerId(service.apiKey), 'edits', `${editId}.json`))).toBe(true);
    expect(existsSync(join(root, 'data', 'callers', callerId(keyB), 'edits', `${editId}.json`))).toBe(false);

    const creates = () => service.requests.filter((r: { path: string }) => r.path.endsWith('/create-edit')).length;
    const before = creates();
    for (const [tool, extra] of [
      ['preview_edit', {}],
      ['render_edit', {}],
      ['export_edit', { format: 'otio' }],
      ['render_edit', { project_id: projectA }],
    ] as const) {
      const r = await call(bob, tool, { edit_id: editId, ...extra });
      expect(r.isError, tool).toBe(true);
      expect(textOf(r)).toBe(
        `no edit ${editId} is kept here: compose_edit returns edit ids (composing the same edit again gives back its id)`,
      );
    }
    // A typo of A's id is suggested to A, never to B.
    const typo = `${editId.slice(0, -1)}${editId.endsWith('0') ? '1' : '0'}`;
    expect(textOf(await call(bob, 'preview_edit', { edit_id: typo }))).not.toContain(editId);
    expect(textOf(await call(alice, 'export_edit', { edit_id: typo, format: 'otio' }))).toContain(
      `did you mean ${editId}?`,
    );
    await expect(bob.readResource({ uri: `cutroom://edits/${editId}` })).rejects.toThrow(/no such edit is kept here/);
    const offered = await bob.complete({
      ref: { type: 'ref/resource', uri: 'cutroom://edits/{edit_id}' },
      argument: { name: 'edit_id', value: 'edit-' },
    });
    expect(offered.completion.values).toEqual([]);
    expect(creates()).toBe(before);

    // B composing the same edit cannot: the project is not theirs on the service.
    const stolen = await call(bob, 'compose_edit', {
      project_id: projectA,
      clips: [{ asset_id: ids.red, start: 0, end: 2 }],
    });
    expect(stolen.isError).toBe(true);

    // A's edit, on another request (another server instance): read, completed and exported.
    expect(
      JSON.parse((await alice.readResource({ uri: `cutroom://edits/${editId}` })).contents[0]!.text as string),
    ).toMatchObject({ edit_id: editId, project_id: projectA });
    const mine = await alice.complete({
      ref: { type: 'ref/resource', uri: 'cutroom://edits/{edit_id}' },
      argument: { name: 'edit_id', value: 'edit-' },
    });
    expect(mine.completion.values).toEqual([editId]);
    const exported = await call(alice, 'export_edit', { edit_id: editId, format: 'otio' });
    expect(exported.isError, textOf(exported)).toBeFalsy();
  }, 120_000);
});
