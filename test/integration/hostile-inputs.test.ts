// What an attacker or an unlucky agent sends, through the built server on the local backend: inputs far from the
// schema, inputs a result would echo (ids, paths, queries of any length), long file names, long edits. Every answer
// is an isError result or a result within the 24 KB bound (the harness holds every result to it and to its tool's
// outputSchema), never a protocol error; and tools/list is portable to clients with a narrow JSON Schema dialect.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { RESULT_BOUND_BYTES, resultBytes, spawnServer, textOf, type Spawned } from '../helpers/harness.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-hostile-'));
const allowed = join(root, 'allowed');
const env = {
  CUTROOM_DATA_DIR: join(root, 'data'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_CACHE_DIR: join(root, 'cache'),
};
/** A name as long as a file's name may be (255 bytes). */
const longName = (i: number) => `${i}-${'n'.repeat(245)}.mp4`;

let srv: Spawned;
let projectId: string;
const ids: Record<string, string> = {};
const call = (name: string, args: Record<string, unknown>) =>
  srv.client.callTool({ name, arguments: args }, { timeout: 180_000 });
const structured = <T>(r: unknown): T => {
  const res = r as { isError?: boolean; structuredContent?: unknown };
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};

beforeAll(async () => {
  mkdirSync(join(allowed, 'long'), { recursive: true });
  const media = makeAll();
  for (const [name, path] of Object.entries(media))
    copyFileSync(path, join(allowed, `${name}${path.slice(path.lastIndexOf('.'))}`));
  for (let i = 0; i < 6; i++) copyFileSync(media.red!, join(allowed, 'long', longName(i)));
  srv = await spawnServer(env);
  projectId = structured<{ project: { id: string } }>(
    await call('create_project', { name: 'hostile', description: '' }),
  ).project.id;
  for (const file of ['red.mp4', 'blue.mp4', 'voice.m4a'])
    ids[file.split('.')[0]!] = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: join(allowed, file) }),
    ).asset.id;
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

type Node = Record<string, unknown>;
/**
 * What the MCP Inspector's strict check (2.12) reports as not portable: a `type` array, or a schema that constrains
 * nothing.
 */
function portabilityProblems(schema: unknown, at: string, found: string[] = []): string[] {
  if (!schema || typeof schema !== 'object') return found;
  const node = schema as Node;
  if (Array.isArray(node.type)) found.push(`${at}: type ${JSON.stringify(node.type)}`);
  const sub = (s: unknown, where: string) => {
    const keys = s && typeof s === 'object' ? Object.keys(s) : [];
    if (s && typeof s === 'object' && keys.every((k) => ['description', 'title', 'default', 'examples'].includes(k)))
      found.push(`${where}: constrains nothing`);
    portabilityProblems(s, where, found);
  };
  for (const [k, v] of Object.entries((node.properties as Node | undefined) ?? {})) sub(v, `${at}.properties.${k}`);
  for (const k of ['items', 'additionalProperties', 'not'])
    if (node[k] && typeof node[k] === 'object') sub(node[k], `${at}.${k}`);
  for (const k of ['anyOf', 'oneOf', 'allOf', 'prefixItems'])
    if (Array.isArray(node[k])) (node[k] as unknown[]).forEach((s, i) => sub(s, `${at}.${k}[${i}]`));
  return found;
}

describe('tools/list', () => {
  it('is portable on both backends: no type arrays, no schema that constrains nothing', async () => {
    const remote = await spawnServer({
      ...env,
      VJ_BACKEND: 'remote',
      VJ_API_KEY: 'not-used-here',
      VJ_API_URL: 'http://127.0.0.1:9',
    });
    try {
      for (const s of [srv, remote]) {
        const { tools } = await s.client.listTools();
        const problems = tools.flatMap((t) => [
          ...portabilityProblems(t.inputSchema, `${t.name}.inputSchema`),
          ...portabilityProblems(t.outputSchema, `${t.name}.outputSchema`),
        ]);
        expect(problems).toEqual([]);
      }
    } finally {
      await remote.close();
    }
  });
});

describe('the listed schemas and validation', () => {
  it('every argument the listed input schema rejects, the server rejects too (a field at a time, of each tool that acts on valid input)', async () => {
    const composed = structured<{ edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [{ asset_id: ids.red, start: 0, end: 1 }],
        resolution: '320x180',
      }),
    );
    const valid: Record<string, Record<string, unknown>> = {
      list_projects: {},
      get_project: { project_id: projectId },
      create_project: { name: 'n', description: 'd' },
      list_scripts: { project_id: projectId },
      compose_edit: { project_id: projectId, clips: [{ asset_id: ids.red, start: 0, end: 1 }] },
      get_render_status: { project_id: projectId, asset_id: ids.red },
      inspect_asset: { project_id: projectId, asset_id: ids.red },
      export_edit: { edit_id: composed.edit_id, format: 'otio' },
      list_media: {},
      import_media: { project_id: projectId, path: join(allowed, 'red.mp4') },
      search_transcripts: { project_id: projectId, query: 'x', asset_ids: [ids.voice] },
    };
    const ajv = new Ajv2020({ strict: false });
    const values = [null, true, -1, 1.5, 1e300, '', 'x', [], {}, [1], [{}], { a: 1 }];
    const accepted: string[] = [];
    for (const tool of (await srv.client.listTools()).tools.filter((t) => t.name in valid)) {
      const validate = ajv.compile(tool.inputSchema);
      for (const field of [...Object.keys(tool.inputSchema.properties ?? {}), 'unknown_field']) {
        for (const value of values) {
          const args = { ...valid[tool.name], [field]: value };
          if (validate(args)) continue;
          const r = await call(tool.name, args);
          if (!r.isError) accepted.push(`${tool.name}.${field} = ${JSON.stringify(value)}`);
        }
      }
    }
    expect(accepted).toEqual([]);
  }, 300_000);
});

describe('arguments far from the schema', () => {
  it('an argument or field no tool reads is refused with its path and the field meant, not dropped', async () => {
    const clip = { asset_id: ids.red, start: 0, end: 1 };
    const top = await call('compose_edit', { project_id: projectId, clips: [clip], reframe: 'auto' });
    expect(top.isError).toBe(true);
    expect(textOf(top)).toMatch(/reframe is not an argument; did you mean clips\[\]\.focus: "auto"\?/);
    // Inline in a tool that declares the edit's fields loosely, checked against compose_edit's.
    const nested = await call('preview_edit', {
      project_id: projectId,
      clips: [{ ...clip, focus: { x: 0.5, y: 0.5, zoom: 2 } }],
    });
    expect(nested.isError).toBe(true);
    expect(textOf(nested)).toMatch(/clips\[0\]\.focus\.zoom is not a field .*did you mean clips\[0\]\.crop\.zoom\?/);
    const other = await call('list_projects', { limit: 5, colour: 'red' });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/colour is not an argument/);
    // The same call without the key is taken.
    const ok = structured<{ edit_id: string }>(await call('compose_edit', { project_id: projectId, clips: [clip] }));
    expect(ok.edit_id).toMatch(/\S/);
  }, 120_000);

  it('50,000 wrong clips get the first problems and a count, not one line each', async () => {
    const r = await call('compose_edit', { project_id: projectId, clips: Array(50_000).fill(1) });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(
      /^Input validation error: Invalid arguments for tool compose_edit: clips\.0: Invalid input: expected object, received number, .*clips\.4: .*, … 49995 more problems of the same arguments$/,
    );
    expect(resultBytes(r)).toBeLessThan(1000);
  });

  it('an empty edit_id beside an inline edit (a client that fills every field) is no edit_id', async () => {
    const r = await call('export_edit', {
      edit_id: ' ',
      project_id: projectId,
      clips: [{ asset_id: ids.red, start: 0, end: 1 }],
      format: 'edl',
      resolution: '320x180',
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    // Alone, it is still refused as what it is.
    expect(textOf(await call('export_edit', { edit_id: '', format: 'edl' }))).toMatch(/^edit_id "" is not an edit id/);
  });

  it('a map keyed by a huge name quotes the key short', async () => {
    const key = 'K'.repeat(200_000);
    const r = await call('import_edit', { project_id: projectId, content: 'TITLE: x', media_map: { [key]: 5 } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/media_map\.K{59}…: Invalid input: expected string, received number/);
    expect(resultBytes(r)).toBeLessThan(1000);
  });
});

describe('inputs a result would echo', () => {
  const big = `ZZZZ-${'Z'.repeat(300_000)}`;
  const cases: [string, () => Record<string, unknown>][] = [
    ['get_render_status', () => ({ project_id: projectId, asset_id: big })],
    ['inspect_asset', () => ({ project_id: projectId, asset_id: big })],
    ['transcribe_asset', () => ({ project_id: projectId, asset_id: big })],
    ['delete_asset', () => ({ project_id: projectId, asset_id: big, confirm: true })],
    ['list_media', () => ({ folder: big })],
    ['import_media', () => ({ project_id: projectId, path: big })],
    ['import_edit', () => ({ project_id: projectId, path: big })],
    ['compose_edit', () => ({ project_id: projectId, clips: [{ asset_id: big, start: 0, end: 1 }] })],
    ['preview_edit', () => ({ project_id: projectId, clips: [{ asset_id: big, start: 0, end: 1 }] })],
    [
      'render_edit',
      () => ({
        project_id: projectId,
        clips: [{ asset_id: big, start: 0, end: 1 }],
        overlays: [{ asset_id: big, at: 0 }],
      }),
    ],
    [
      'export_edit',
      () => ({
        project_id: projectId,
        format: 'otio',
        edit: { video_series_sequential: [{ video_id: big, video_start_time: 0, video_end_time: 1 }] },
      }),
    ],
    ['search_transcripts', () => ({ project_id: projectId, query: big, asset_ids: [ids.voice] })],
    ['search_transcripts', () => ({ project_id: projectId, query: 'hello', asset_ids: [big, `${big}-2`] })],
    ['find_moments', () => ({ project_id: projectId, asset_ids: [big, `${big}-2`] })],
    ['tighten_edit', () => ({ edit_id: big })],
  ];
  for (const [tool, args] of cases) {
    it(`${tool} ${JSON.stringify(Object.keys(args()))}: quoted short`, async () => {
      const r = await call(tool, args());
      expect(resultBytes(r)).toBeLessThan(4096);
      expect(textOf(r)).toContain('ZZZZ-ZZZZ');
    });
  }
});

describe('long names and descriptions', () => {
  it('a project described in 5000 three-byte characters: get_project shows the start within the bound, its resource all of it', async () => {
    const description = '€'.repeat(5000);
    const id = structured<{ project: { id: string } }>(
      await call('create_project', { name: '€'.repeat(200), description }),
    ).project.id;
    await call('import_media', { project_id: id, path: join(allowed, 'red.mp4') });
    const r = await call('get_project', { project_id: id });
    expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
    const p = structured<{ project: { description: string; assets: unknown[] } }>(r);
    expect(p.project.assets).toHaveLength(1);
    expect(p.project.description).toBe(`${'€'.repeat(999)}…`);
    expect(textOf(r)).toContain(
      `(the first 1000 of its 5000 characters: the resource vj://projects/${id} has it whole)`,
    );
    const whole = JSON.parse(
      ((await srv.client.readResource({ uri: `vj://projects/${id}` })).contents[0] as { text: string }).text,
    ) as { description: string };
    expect(whole.description).toBe(description);
  });
});

describe('long file names', () => {
  it('40 clips of unknown assets in a project of long-named videos: every edit tool answers within the bound, names cut short', async () => {
    const imported = structured<{ imported: unknown[] }>(
      await call('import_media', { project_id: projectId, path: join(allowed, 'long'), again: true }),
    );
    expect(imported.imported).toHaveLength(6);
    const clips = Array.from({ length: 40 }, (_, i) => ({
      asset_id: `00000000-0000-4000-8000-0000000000${String(i).padStart(2, '0')}`,
      start: 0,
      end: 1,
    }));
    for (const tool of ['compose_edit', 'preview_edit', 'render_edit', 'export_edit']) {
      const r = await call(tool, {
        project_id: projectId,
        clips,
        ...(tool === 'export_edit' ? { format: 'edl' } : {}),
      });
      expect(resultBytes(r), tool).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
      expect(textOf(r)).toMatch(/^Not ready: no asset 00000000-0000-4000-8000-000000000000 in this project/);
      // The hint names the project's videos, each name cut to what identifies it.
      expect(textOf(r)).toMatch(/video assets: .*\(\d-n{57}…\)/);
    }
  }, 120_000);
});

describe('long edits', () => {
  it('an EDL export of 1000 cuts with volumes (one warning each: an EDL has no volume) lists the first within the bound, counting the rest', async () => {
    const clips = Array.from({ length: 1000 }, (_, i) => ({
      asset_id: i % 2 ? ids.red : ids.blue,
      start: (i % 50) / 10,
      end: (i % 50) / 10 + 0.5,
      volume: 0.5,
    }));
    const r = await call('export_edit', { project_id: projectId, clips, format: 'edl', resolution: '320x180' });
    expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
    const e = structured<{ warnings: string[]; left_out?: string[] }>(r);
    expect(e.warnings[0]).toBe('cut 1: its audio levels are not carried (an EDL has no volume)');
    // (and one more, last: the levelling an editor's application does not do)
    expect(e.warnings.length).toBeLessThan(1000);
    expect(e.left_out).toContain(`${1001 - e.warnings.length} more warnings (1001 in all), of the kinds listed`);
    expect(textOf(r)).toContain('… 993 more warnings (structuredContent.warnings, left_out)');
  }, 120_000);

  it('a preview of 100 cuts and 100 overlays lists the first of each within the bound; preview.json has them all', async () => {
    const clips = Array.from({ length: 100 }, (_, i) => ({
      asset_id: i % 2 ? ids.red : ids.blue,
      start: 0,
      end: 0.04 + (i % 3) * 0.02,
    }));
    const overlays = Array.from({ length: 100 }, (_, i) => ({
      asset_id: ids.voice,
      at: i * 0.01,
      until: i * 0.01 + 0.5,
    }));
    const r = await call('preview_edit', { project_id: projectId, clips, overlays, resolution: '320x180' });
    expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
    const p = structured<{ preview_id: string; overlays: unknown[]; overlays_total?: number; left_out?: string[] }>(r);
    expect(p.overlays_total).toBe(100);
    expect(p.overlays.length).toBeGreaterThan(5);
    expect(p.overlays.length).toBeLessThan(100);
    expect(p.left_out?.join(' ')).toContain(
      `overlays ${p.overlays.length + 1}-100 of 100: cutroom://previews/${p.preview_id}/preview.json lists them all`,
    );
    const whole = JSON.parse(
      (
        (await srv.client.readResource({ uri: `cutroom://previews/${p.preview_id}/preview.json` })).contents[0] as {
          text: string;
        }
      ).text,
    ) as { overlays: unknown[]; cuts: unknown[] };
    expect(whole.overlays).toHaveLength(100);
    expect(whole.cuts).toHaveLength(100);
  }, 180_000);
});
