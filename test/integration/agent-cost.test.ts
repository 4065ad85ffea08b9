// What an agent pays and whether it works blind (issue 30), through the built server over stdio: the bytes of
// tools/list before a word is said (printed, and held to budget), the edit's shape declared once, the whole workflow
// through edit_id (and across a restart), a long edit and a 10-minute transcript answered within the bound, "did you
// mean" for ids that name nothing, and the workflows as skills.
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAll } from '../fixtures/media.mjs';
import { FakeService } from '../fixtures/service.mjs';
import { RESULT_BOUND_BYTES, resultBytes, spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { makeLongSpeech } from '../helpers/speech-media.js';

const root = mkdtempSync(join(tmpdir(), 'cutroom-agent-cost-'));
const allowed = join(root, 'allowed');
const env = {
  CUTROOM_DATA_DIR: join(root, 'data'),
  CUTROOM_CACHE_DIR: join(root, 'cache'),
  CUTROOM_ALLOWED_DIRS: allowed,
  CUTROOM_RENDER_WAIT_MS: '30000',
};

type Result = {
  isError?: boolean;
  structuredContent?: unknown;
  content: { type: string; text?: string; uri?: string }[];
};
const structured = <T>(r: unknown): T => {
  const res = r as Result;
  if (res.isError) throw new Error(textOf(r));
  return res.structuredContent as T;
};

/** What tools/list costs: the part a model reads (names, descriptions, input schemas) and the whole, compact JSON. */
async function costOf(
  s: Spawned,
): Promise<{ tools: number; modelFacing: number; whole: number; list: { name: string; inputSchema: unknown }[] }> {
  const { tools } = await s.client.listTools();
  const modelFacing = Buffer.byteLength(
    JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))),
  );
  return { tools: tools.length, modelFacing, whole: Buffer.byteLength(JSON.stringify(tools)), list: tools };
}

let local: Spawned;
let service: FakeService;
let remote: Spawned;
let projectId: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  mkdirSync(allowed, { recursive: true });
  const media = makeAll(allowed) as Record<string, string>;
  local = await spawnServer(env);
  service = await new FakeService().start();
  remote = await spawnServer({
    VJ_API_KEY: service.apiKey,
    VJ_API_URL: service.url,
    CUTROOM_DATA_DIR: join(root, 'remote-data'),
    CUTROOM_CACHE_DIR: join(root, 'remote-cache'),
  });
  projectId = structured<{ project: { id: string } }>(
    await local.client.callTool({ name: 'create_project', arguments: { name: 'cost', description: '' } }),
  ).project.id;
  for (const name of ['red', 'blue', 'voice']) {
    ids[name] = structured<{ asset: { id: string } }>(
      await local.client.callTool({ name: 'import_media', arguments: { project_id: projectId, path: media[name] } }),
    ).asset.id;
  }
}, 120_000);
afterAll(async () => {
  await local?.close();
  await remote?.close();
  await service?.stop();
});

/**
 * What tools/list may cost, in bytes of JSON. The part a model reads (names, descriptions, input schemas) is paid in
 * every chat: 20 KB. The whole list adds titles, annotations and output schemas, which clients check results
 * against but models do not read: 40 KB (issue 30).
 */
const MODEL_FACING_BUDGET = 20 * 1024;
const WHOLE_LIST_BUDGET = 40 * 1024;

const call = (name: string, args: Record<string, unknown>, s = local) =>
  s.client.callTool({ name, arguments: args }, { timeout: 180_000 }) as Promise<Result>;

describe('what an agent pays before the first word', () => {
  it('keeps tools/list within budget on both backends: the part a model reads <= 20 KB, the whole <= 40 KB (printed)', async () => {
    for (const [backend, s] of [
      ['local', local],
      ['remote', remote],
    ] as const) {
      const c = await costOf(s);
      console.log(
        `tools/list, ${backend} backend: ${c.tools} tools, model-facing ${c.modelFacing} bytes (budget ${MODEL_FACING_BUDGET}), whole ${c.whole} bytes (budget ${WHOLE_LIST_BUDGET})`,
      );
      expect(c.modelFacing, backend).toBeLessThanOrEqual(MODEL_FACING_BUDGET);
      expect(c.whole, backend).toBeLessThanOrEqual(WHOLE_LIST_BUDGET);
    }
  });

  it("declares the edit's shape once: only compose_edit spells out a clip; the others take edit_id or the same arguments by type", async () => {
    const { list } = await costOf(local);
    type Schema = { properties?: Record<string, { items?: { properties?: Record<string, unknown> } }> };
    const spelled = list
      .filter((t) => (t.inputSchema as Schema).properties?.clips?.items?.properties)
      .map((t) => t.name);
    expect(spelled).toEqual(['compose_edit']);
    for (const name of ['preview_edit', 'render_edit', 'export_edit']) {
      const props = (list.find((t) => t.name === name)!.inputSchema as Schema).properties!;
      expect(Object.keys(props), name).toEqual(
        expect.arrayContaining(['edit_id', 'project_id', 'clips', 'overlays', 'edit']),
      );
    }
    // The time format is said once, in the instructions, not in every field.
    const json = JSON.stringify(list);
    expect(json).not.toMatch(/HH:MM:SS/);
    expect(local.client.getInstructions()).toMatch(/Times are seconds \(65\.25\) or HH:MM:SS/);
  });
});

describe('the workflow through edit_id', () => {
  const clips = () => [
    { asset_id: ids.red, start: 1, end: 3 },
    { asset_id: ids.blue, start: 0.5, end: 2 },
  ];

  it('compose keeps the edit; preview, export and render take its edit_id; each answer within the bound', async () => {
    const c = structured<{ ready: boolean; edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: clips(),
        overlays: [{ asset_id: ids.voice, at: 0 }],
        resolution: '320x180',
        fps: 25,
        filename: 'cost.mp4',
      }),
    );
    expect(c.ready).toBe(true);
    const edit = await storedEdit<{
      video_series_sequential: unknown[];
      audio_overlay: unknown[];
      video_output_filename: string;
    }>(local.client, c.edit_id);
    expect(edit.video_series_sequential).toHaveLength(2);
    expect(edit.video_output_filename).toBe('cost.mp4');

    const p = structured<{ status: string; edit_id: string; cuts: unknown[]; measured_seconds: number }>(
      await call('preview_edit', { edit_id: c.edit_id }),
    );
    expect(p).toMatchObject({ status: 'done', edit_id: c.edit_id });
    expect(p.cuts).toHaveLength(2);
    expect(Math.abs(p.measured_seconds - 3.5)).toBeLessThan(0.05);

    const x = structured<{ edit_id: string; path: string }>(
      await call('export_edit', { edit_id: c.edit_id, format: 'otio' }),
    );
    expect(x.edit_id).toBe(c.edit_id);

    const r = structured<{ edit_id: string; render: { done: boolean; asset_id: string } }>(
      await call('render_edit', { edit_id: c.edit_id, wait: true }),
    );
    expect(r.edit_id).toBe(c.edit_id);
    expect(r.render.done).toBe(true);
    const project = structured<{ project: { assets: { id: string; name?: string; render?: boolean }[] } }>(
      await call('get_project', { project_id: projectId }),
    );
    expect(project.project.assets.find((a) => a.id === r.render.asset_id)).toMatchObject({
      name: 'cost.mp4',
      render: true,
    });
  }, 180_000);

  it("still takes compose_edit's arguments inline, and gives the same edit the same id", async () => {
    const composed = structured<{ edit_id: string }>(
      await call('compose_edit', { project_id: projectId, clips: clips(), resolution: '320x180' }),
    );
    const inline = structured<{ edit_id: string; status: string }>(
      await call('preview_edit', { project_id: projectId, clips: clips(), resolution: '320x180' }),
    );
    expect(inline.status).toBe('done');
    expect(inline.edit_id).toBe(composed.edit_id);
  }, 120_000);

  it('says plainly what is wrong with an edit_id or an inline edit, with "did you mean" for a near id', async () => {
    const { edit_id } = structured<{ edit_id: string }>(
      await call('compose_edit', { project_id: projectId, clips: clips(), resolution: '320x180' }),
    );
    const both = await call('preview_edit', { edit_id, clips: clips() });
    expect(both.isError).toBe(true);
    expect(textOf(both)).toMatch(/give edit_id or the edit's arguments \(clips\), not both/);
    const typo = `${edit_id.slice(0, -1)}${edit_id.endsWith('0') ? '1' : '0'}`;
    const near = await call('render_edit', { edit_id: typo });
    expect(near.isError).toBe(true);
    expect(textOf(near)).toContain(`did you mean ${edit_id}?`);
    const other = structured<{ project: { id: string } }>(
      await call('create_project', { name: 'other', description: '' }),
    ).project.id;
    const wrong = await call('export_edit', { edit_id, project_id: other, format: 'edl' });
    expect(textOf(wrong)).toMatch(new RegExp(`edit ${edit_id} belongs to project ${projectId}, not ${other}`));
    const bad = await call('preview_edit', {
      project_id: projectId,
      clips: [{ asset_id: ids.red, start: 'soon' }, 'x'],
    });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/not as compose_edit takes them: clips\.1: /);
    // An asset id one character off is named, with its file name.
    const typoAsset = `${ids.red!.slice(0, -1)}${ids.red!.endsWith('0') ? '1' : '0'}`;
    const r = structured<{ diagnostics: { message: string }[] }>(
      await call('compose_edit', { project_id: projectId, clips: [{ asset_id: typoAsset, start: 0, end: 1 }] }),
    );
    expect(r.diagnostics[0]!.message).toBe(`no asset ${typoAsset} in this project; did you mean ${ids.red} (red.mp4)?`);
  }, 120_000);

  it('keeps edit ids across a restart, in the data dir', async () => {
    const { edit_id } = structured<{ edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: clips(),
        resolution: '320x180',
        filename: 'restart.mp4',
      }),
    );
    const again = await spawnServer(env);
    try {
      const p = structured<{ status: string; edit_id: string }>(
        await again.client.callTool({ name: 'preview_edit', arguments: { edit_id } }, { timeout: 120_000 }),
      );
      expect(p).toMatchObject({ status: 'done', edit_id });
    } finally {
      await again.close();
    }
  }, 120_000);
});

describe('results within 24 KB, whatever their length', () => {
  it('a 1000-cut edit: the first cuts listed, the rest named, every cut in the edit resource', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({
      asset_id: i % 2 ? ids.red : ids.blue,
      start: (i % 5) * 0.5,
      end: (i % 5) * 0.5 + 0.4,
    }));
    const r = await call('compose_edit', { project_id: projectId, clips: many, resolution: '320x180', fps: 25 });
    const c = structured<{
      ready: boolean;
      edit_id: string;
      summary: { cuts: unknown[]; cuts_total: number };
      left_out: string[];
    }>(r);
    expect(c.ready).toBe(true);
    console.log(
      `compose_edit of 1000 cuts: ${resultBytes(r)} bytes of text and structuredContent, ${c.summary.cuts.length} cuts listed`,
    );
    expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
    expect(c.summary.cuts_total).toBe(1000);
    expect(c.summary.cuts.length).toBeGreaterThan(10);
    expect(c.summary.cuts.length).toBeLessThan(1000);
    expect(c.left_out.join(' ')).toContain(`cutroom://edits/${c.edit_id} has them all`);
    // The text names the count, not every cut again.
    expect(textOf(r)).toMatch(/1000 cuts, listed in structuredContent\.summary/);
    expect(
      (await storedEdit<{ video_series_sequential: unknown[] }>(local.client, c.edit_id)).video_series_sequential,
    ).toHaveLength(1000);
  }, 120_000);

  it("a 400-cut preview: made (its sheet's labels once passed the 128 KiB an argument may hold), answered within the bound, every cut in preview.json", async () => {
    const many = Array.from({ length: 400 }, (_, i) => ({
      asset_id: i % 2 ? ids.red : ids.blue,
      start: (i % 40) * 0.12,
      end: (i % 40) * 0.12 + 0.08,
    }));
    let r = await call('preview_edit', { project_id: projectId, clips: many, resolution: '320x180', fps: 25 });
    type Preview = { status: string; preview_id: string; cuts: unknown[]; cuts_total: number; left_out: string[] };
    // On a loaded machine a preview may outlast the render wait and be handed over: follow it as a client would, and
    // hold the finished answer to the same bound.
    for (let p = structured<Preview>(r); p.status === 'rendering'; p = structured<Preview>(r)) {
      await new Promise((done) => setTimeout(done, 500));
      r = await call('preview_edit', { preview_id: p.preview_id });
    }
    const p = structured<Preview>(r);
    expect(p.status).toBe('done');
    expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
    expect(p.cuts_total).toBe(400);
    expect(p.left_out.join(' ')).toContain(`cutroom://previews/${p.preview_id}/preview.json`);
    const whole = JSON.parse(
      (
        (await local.client.readResource({ uri: `cutroom://previews/${p.preview_id}/preview.json` })).contents[0] as {
          text: string;
        }
      ).text,
    ) as { cuts: unknown[] };
    expect(whole.cuts).toHaveLength(400);
  }, 300_000);

  it('a 10-minute transcript comes in pages under the bound, sentences first, words on request, reaching every word', async () => {
    const speech = makeLongSpeech(allowed, 600);
    const asset = structured<{ asset: { id: string } }>(
      await call('import_media', { project_id: projectId, path: speech.wav }),
    ).asset.id;
    // Aligned to the known text: every word said is in the transcript (free recognition of 10 minutes is for the
    // bench).
    const first = await call('transcribe_asset', { project_id: projectId, asset_id: asset, text: speech.text });
    const page = structured<{
      word_count: number;
      sentence_count: number;
      sentences: { first_word: number; last_word: number }[];
      words?: unknown[];
      next_cursor?: string;
      left_out?: string[];
    }>(first);
    expect(page.word_count).toBeGreaterThan(1200);
    console.log(
      `transcribe_asset of 600 s (${page.word_count} words, ${page.sentence_count} sentences): first page ${resultBytes(first)} bytes, ${page.sentences.length} sentences`,
    );
    expect(resultBytes(first)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
    expect(page.words).toBeUndefined();
    expect(page.left_out?.join(' ')).toMatch(/words: true/);
    // A host that shows only the text: the sentences past the eighth are one call away, and that call names them.
    const onward = /call again with cursor "(w\d+\.[0-9a-f]{8})" \(from word (\d+)\)/.exec(textOf(first));
    expect(onward, textOf(first)).not.toBeNull();
    expect(Number(onward![2])).toBe(page.sentences[8]!.first_word);
    const ninth = await call('transcribe_asset', {
      project_id: projectId,
      asset_id: asset,
      text: speech.text,
      cursor: onward![1]!,
    });
    expect(textOf(ninth)).toContain(`words ${page.sentences[8]!.first_word}-${page.sentences[8]!.last_word}]`);
    // Sentences, page by page, cover every word once.
    let covered = 0;
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await call('transcribe_asset', {
        project_id: projectId,
        asset_id: asset,
        text: speech.text,
        ...(cursor ? { cursor } : {}),
      });
      expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
      const p = structured<typeof page>(r);
      for (const s of p.sentences) {
        if (s.last_word < covered) continue;
        expect(s.first_word).toBeLessThanOrEqual(covered);
        covered = s.last_word + 1;
      }
      cursor = p.next_cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(covered).toBe(page.word_count);
    expect(pages).toBeGreaterThan(1);
    // Words, page by page: every index once, in order, as the resource has them.
    const whole = JSON.parse(
      (
        (await local.client.readResource({ uri: `vj://projects/${projectId}/assets/${asset}/transcript` }))
          .contents[0] as { text: string }
      ).text,
    ) as { words: { index: number; word: string }[] };
    const seen: { index: number; word: string }[] = [];
    cursor = undefined;
    do {
      const r = await call('transcribe_asset', {
        project_id: projectId,
        asset_id: asset,
        text: speech.text,
        words: true,
        ...(cursor ? { cursor } : {}),
      });
      expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
      const p = structured<{ words: { index: number; word: string }[]; next_cursor?: string }>(r);
      seen.push(...p.words.map(({ index, word }) => ({ index, word })));
      // The text spells out the page's words too (index word start-end), from its first.
      expect(textOf(r)).toContain(`Words (index word start-end s): ${p.words[0]!.index} ${p.words[0]!.word} `);
      cursor = p.next_cursor;
    } while (cursor && seen.length < 10_000);
    expect(seen).toEqual(whole.words.map(({ index, word }) => ({ index, word })));
    // A word said hundreds of times: search pages its hits under the bound too, and the pages add up to them all.
    const hits: number[] = [];
    let offset: number | undefined;
    let total: number;
    do {
      const r = await call('search_transcripts', {
        project_id: projectId,
        query: 'the',
        asset_ids: [asset],
        ...(offset !== undefined ? { offset } : {}),
      });
      expect(resultBytes(r)).toBeLessThanOrEqual(RESULT_BOUND_BYTES);
      const p = structured<{ hits: { words: [number, number] }[]; hits_total: number; next_offset?: number }>(r);
      hits.push(...p.hits.map((h) => h.words[0]));
      total = p.hits_total;
      offset = p.next_offset;
    } while (offset !== undefined && hits.length < 5000);
    expect(total).toBe(whole.words.filter((w) => w.word.toLowerCase() === 'the').length);
    expect(total).toBeGreaterThan(150);
    expect(hits).toEqual(whole.words.filter((w) => w.word.toLowerCase() === 'the').map((w) => w.index));
    // Past the last hit: the page says there is none there and how many there are, not "hits 241-240".
    const past = await call('search_transcripts', {
      project_id: projectId,
      query: 'the',
      asset_ids: [asset],
      offset: total,
    });
    expect(textOf(past)).toContain(`; none from offset ${total}: there are ${total}.`);
    expect(textOf(past)).not.toMatch(/hits \d+-\d+ here/);
    const stale = await call('transcribe_asset', { project_id: projectId, asset_id: asset, cursor: 'w99999' });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toMatch(/is not a page of this transcript/);
  }, 300_000);
});

describe('the workflows as skills', () => {
  it('lists the workflows as skills a host loads on demand, each read and verified by the SDK client', async () => {
    const skills = new SkillsClient(local.client);
    expect(skills.supported).toBe(true);
    const { skills: entries, invalid } = await skills.list();
    expect(invalid).toEqual([]);
    const prompts = (await local.client.listPrompts()).prompts.map((p) => p.name.replaceAll('_', '-'));
    expect(entries.map((e) => e.frontmatter.name).sort()).toEqual(prompts.sort());
    const best = entries.find((e) => e.frontmatter.name === 'best-moments-over-voiceover')!;
    expect(best.uri).toBe('skill://cutroom/best-moments-over-voiceover/SKILL.md');
    const file = await skills.read(best);
    expect(file.verified).toBe(true);
    // The know-how names the tools, in order, and works through edit_id.
    const body = file.body!;
    for (const tool of [
      'get_project',
      'transcribe_asset',
      'inspect_asset',
      'compose_edit',
      'preview_edit',
      'render_edit',
    ])
      expect(body, tool).toContain(tool);
    expect(body.indexOf('compose_edit')).toBeLessThan(body.indexOf('preview_edit'));
    expect(body).toMatch(/preview_edit \{edit_id\}/);
    // Not in any tool's description: the know-how costs nothing until a host loads it.
    expect(JSON.stringify((await local.client.listTools()).tools)).not.toContain('best moments');
  });
});
