// Races around a preview job that the everyday tests rarely hit (review of issue 34): a call that comes right after
// a cancelled one for the same edit, while the cancelled job is still stopping; and, over HTTP, a cut's clip that
// fails. An ffmpeg wrapper (test/helpers/ffmpeg-wrapper.ts) makes them happen every time: a slow stop, a failing clip.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer } from '../helpers/http-server.js';
import { ffmpegWrapper } from '../helpers/ffmpeg-wrapper.js';
import { pidsMatching } from '../helpers/processes.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';

let service: FakeService;
let projectId: string;
let ids: Record<MediaName, string>;
const wrap = ffmpegWrapper();

beforeAll(async () => {
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
});
afterAll(async () => {
  await service?.stop();
});

const timeline = () => ({
  project_id: projectId,
  resolution: '640x360',
  fps: 25,
  clips: [
    { asset_id: ids.red, start: 1, end: 3 },
    { asset_id: ids.blue, start: 0, end: 3, volume: 0 },
    { asset_id: ids.black, start: 0, end: 1.5 },
  ],
  overlays: [{ asset_id: ids.voice, at: 3, until: 4 }],
});
/** The same media in other ranges: previewed first, so that every medium is probed. */
const other = () => {
  const t = timeline();
  t.clips = t.clips.map((c) => ({ ...c, end: c.end - 0.2 }));
  return t;
};
/**
 * The voiceover held (trickling) until the gate returned opens, or service.reset(): the segments do not read it, the
 * sound does, so the preview stays rendering until the test lets it go, however slow the machine.
 */
const heldVoice = () => {
  const gate = service.gate();
  service.fail({ trickle: gate }, { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') });
  return gate;
};

type Called = Awaited<ReturnType<Client['callTool']>>;
async function untilDone(client: Client, r: Called): Promise<Called> {
  for (let i = 0; i < 60 && (r.structuredContent as { status?: string } | undefined)?.status === 'rendering'; i++) {
    r = await client.callTool(
      { name: 'preview_edit', arguments: { preview_id: (r.structuredContent as { preview_id: string }).preview_id } },
      { timeout: 120_000 },
    );
  }
  if (r.isError) throw new Error(textOf(r));
  return r;
}

describe('preview jobs: races', () => {
  it('the same edit asked right after a cancelled call gets a preview, not the cancelled job as it stops', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const s = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_LOG_LEVEL: 'debug',
      FFMPEG_PATH: wrap.path,
    });
    try {
      await untilDone(
        s.client,
        await s.client.callTool({ name: 'preview_edit', arguments: other() }, { timeout: 120_000 }),
      );
      const voice = heldVoice();
      wrap.set('slow-term', true);
      const ac = new AbortController();
      let ready = false;
      const leaving = s.client.callTool(
        { name: 'preview_edit', arguments: timeline() },
        {
          signal: ac.signal,
          timeout: 120_000,
          onprogress: (p) => void (/ready to play/.test(p.message ?? '') && (ready = true)),
        },
      );
      await expect.poll(() => ready, { timeout: 60_000 }).toBe(true);
      ac.abort();
      await expect(leaving).rejects.toThrow();
      voice.open();
      // Asked again at once: the cancelled job takes a moment to stop (its ffmpeg processes end), and is no job to
      // join.
      const again = await s.client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 });
      expect(textOf(again)).not.toMatch(/cancelled/);
      const done = await untilDone(s.client, again);
      expect(done.structuredContent).toMatchObject({ status: 'done' });
    } finally {
      wrap.set('slow-term', false);
      service.reset();
      await s.close();
    }
  }, 180_000);

  it("over HTTP, a cut's clip that fails says so without naming the server's files", async () => {
    const root = mkdtempSync(join(tmpdir(), 'cutroom-clipfail-'));
    const srv = await startHttpServer({
      VJ_BACKEND: 'remote',
      VJ_API_URL: service.url,
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_CACHE_DIR: join(root, 'cache'),
      CUTROOM_RENDER_WAIT_MS: '1500',
      FFMPEG_PATH: wrap.path,
    });
    const client = await connectHttp(srv.url, { 'x-api-key': service.apiKey });
    try {
      await untilDone(
        client,
        await client.callTool({ name: 'preview_edit', arguments: other() }, { timeout: 120_000 }),
      );
      heldVoice();
      wrap.set('fail-clip', true);
      let r = await client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 });
      const id = (r.structuredContent as { preview_id: string }).preview_id;
      const until = Date.now() + 120_000;
      while (((r.structuredContent as { cuts_ready?: number }).cuts_ready ?? 0) < 3 && Date.now() < until) {
        r = await client.callTool({ name: 'preview_edit', arguments: { preview_id: id } }, { timeout: 120_000 });
      }
      // (Cut 1's clip is made on asking; the first cut's was written by its own segment process.)
      expect(r.structuredContent).toMatchObject({ status: 'rendering' });
      const failed = await client.readResource({ uri: `cutroom://previews/${id}/cuts/1.mp4` }).then(
        () => '',
        (err: Error) => err.message,
      );
      expect(failed).toMatch(/clip could not be made/);
      expect(failed).not.toContain(root);
      expect(failed).not.toMatch(/\/previews\/[\w-]+\/cut-/);
    } finally {
      wrap.set('fail-clip', false);
      service.reset();
      await client.close();
      await srv.stop();
    }
  }, 180_000);

  it('a preview that fails stops the cut clips being made (they write in its folder) and leaves nothing behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const s = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_RENDER_WAIT_MS: '1500',
      FFMPEG_PATH: wrap.path,
    });
    try {
      await untilDone(
        s.client,
        await s.client.callTool({ name: 'preview_edit', arguments: other() }, { timeout: 120_000 }),
      );
      // The voiceover refuses, 8 s late: the preview fails once its cuts are ready.
      service.fail(
        { delayMs: 8000, status: 403, body: 'denied', contentType: 'text/plain' },
        { times: 1000, match: (r: { path: string }) => r.path.startsWith('/media/voice-') },
      );
      wrap.set('slow-clip', true);
      let r = await s.client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 });
      const id = (r.structuredContent as { preview_id: string }).preview_id;
      for (
        let i = 0;
        i < 30 && !r.isError && ((r.structuredContent as { cuts_ready?: number }).cuts_ready ?? 0) < 3;
        i++
      ) {
        r = await s.client.callTool({ name: 'preview_edit', arguments: { preview_id: id } }, { timeout: 120_000 });
      }
      expect(r.structuredContent).toMatchObject({ status: 'rendering' });
      const clip = s.client.readResource({ uri: `cutroom://previews/${id}/cuts/1.mp4` }, { timeout: 120_000 }).then(
        () => 'read',
        (err: Error) => err.message,
      );
      await expect.poll(() => pidsMatching(`${id}/cut-1.mp4`).length, { timeout: 10_000 }).toBeGreaterThan(0);
      for (let i = 0; i < 30 && !r.isError; i++)
        r = await s.client.callTool({ name: 'preview_edit', arguments: { preview_id: id } }, { timeout: 120_000 });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/the preview failed/);
      // The clip's process is stopped with the preview, and says so; the failed preview's folder is gone.
      await expect.poll(() => pidsMatching(`${id}/cut-1.mp4`), { timeout: 4000 }).toEqual([]);
      expect(await clip).toMatch(/stopped or failed/);
      expect(existsSync(join(dir, 'previews', id))).toBe(false);
    } finally {
      wrap.set('slow-clip', false);
      service.reset();
      await s.close();
    }
  }, 180_000);

  it('a preview still rendering, cancelled by its id (preview_edit {preview_id, cancel}): stopped, nothing kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-cache-'));
    const s = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: dir,
      CUTROOM_RENDER_WAIT_MS: '1500',
    });
    try {
      await untilDone(
        s.client,
        await s.client.callTool({ name: 'preview_edit', arguments: other() }, { timeout: 120_000 }),
      );
      heldVoice();
      const r = await s.client.callTool({ name: 'preview_edit', arguments: timeline() }, { timeout: 120_000 });
      expect(r.structuredContent).toMatchObject({ status: 'rendering' });
      const id = (r.structuredContent as { preview_id: string }).preview_id;
      const folder = join(dir, 'previews', id);
      expect(existsSync(folder)).toBe(true);
      await expect.poll(() => pidsMatching(dir).length, { timeout: 30_000 }).toBeGreaterThan(0);
      // Without the id, or with an edit beside it: refused, saying what to give.
      const bare = await s.client.callTool({ name: 'preview_edit', arguments: { ...timeline(), cancel: true } });
      expect(bare.isError).toBe(true);
      expect(textOf(bare)).toMatch(/cancel needs preview_id/);

      const cancelled = await s.client.callTool(
        { name: 'preview_edit', arguments: { preview_id: id, cancel: true } },
        { timeout: 120_000 },
      );
      expect(cancelled.isError, textOf(cancelled)).toBeFalsy();
      expect(cancelled.structuredContent).toEqual({ preview_id: id, status: 'cancelled' });
      expect(textOf(cancelled)).toMatch(/stopped, and nothing of it was kept/);
      // Said once stopped: no ffmpeg of it left, its folder gone.
      expect(pidsMatching(dir)).toEqual([]);
      expect(existsSync(folder)).toBe(false);
      // Followed afterwards, it says it was cancelled; cancelled again, there is nothing to cancel.
      const followed = await s.client.callTool({ name: 'preview_edit', arguments: { preview_id: id } });
      expect(followed.isError).toBe(true);
      expect(textOf(followed)).toMatch(/cancelled/);
      const again = await s.client.callTool({ name: 'preview_edit', arguments: { preview_id: id, cancel: true } });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toMatch(/nothing to cancel/);
    } finally {
      service.reset();
      await s.close();
    }
  }, 180_000);
});
