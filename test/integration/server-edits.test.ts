// compose_edit, render_edit and get_render_status through the built server, against the test service, with
// media made by ffmpeg and probed over HTTP behind signed links.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, storedEdit, textOf, type Spawned } from '../helpers/harness.js';
import { mediaProject, type MediaName } from '../helpers/media-project.js';
import { waitFor } from '../helpers/wait.js';

let service: FakeService;
let srv: Spawned;
let projectId: string;
let ids: Record<MediaName, string>;

beforeAll(async () => {
  service = await new FakeService().start();
  ({ projectId, ids } = mediaProject(service));
  srv = await spawnServer({ VJ_API_KEY: service.apiKey, VJ_API_URL: service.url, CUTROOM_RENDER_WAIT_MS: '8000' });
});
afterAll(async () => {
  await srv?.close();
  await service?.stop();
});
beforeEach(() => {
  service.reset();
  service.renderDelayMs = 0;
});

const call = (name: string, args: Record<string, unknown>) => srv.client.callTool({ name, arguments: args });
const createEdits = () => service.requests.filter((r) => r.path.endsWith('/create-edit'));

type Check = {
  ready: boolean;
  edit_id?: string;
  diagnostics: { severity: string; path: string; message: string }[];
  summary?: { total_seconds: number; cuts: { timeline_start: string }[] };
  skipped_checks: string[];
};

describe('compose_edit', () => {
  it('composes clips and a voiceover into a canonical edit with timeline positions', async () => {
    const r = await call('compose_edit', {
      project_id: projectId,
      clips: [
        { asset_id: ids.red, start: 1, end: '00:00:03.5' },
        { asset_id: ids.blue, start: '00:00:02', end: 4, volume: 0.5 },
      ],
      overlays: [{ asset_id: ids.voice, at: 0.5 }],
      resolution: '720p',
      fps: 30,
    });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as Check;
    expect(out.ready).toBe(true);
    // The sources are 320x240 and smaller: a 720p output upscales them, and says so once, naming their size.
    expect(out.diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', path: '/video_output_resolution' }),
    ]);
    expect(out.diagnostics[0]!.message).toMatch(
      /1280x720, larger than every source \(the largest is \d+x\d+\): it upscales them/,
    );
    expect(out.skipped_checks).toEqual([]);
    expect(out.summary?.total_seconds).toBe(4.5);
    expect(out.summary?.cuts.map((c) => c.timeline_start)).toEqual(['00:00:00.000', '00:00:02.500']);
    expect(out.edit_id).toMatch(/^edit-[0-9a-f]{16}$/);
    expect(await storedEdit(srv.client, out.edit_id!)).toMatchObject({
      video_output_resolution: '1280x720',
      audio_overlay: [{ audio_id: ids.voice, audio_start_time: '00:00:00.500', audio_end_time: '00:00:04.500' }],
    });
    expect(textOf(r)).toMatch(/^Ready: 2 cuts, 4.5 s at 1280x720, 30 fps, 1 warning\.\nedit_id: edit-/);
    // The same edit again gets the same id.
    const again = (
      await call('compose_edit', {
        project_id: projectId,
        clips: [
          { asset_id: ids.red, start: 1, end: 3.5 },
          { asset_id: ids.blue, start: 2, end: 4, volume: 0.5 },
        ],
        overlays: [{ asset_id: ids.voice, at: '00:00:00.500' }],
        resolution: '1280x720',
        fps: 30,
      })
    ).structuredContent as Check;
    expect(again.edit_id).toBe(out.edit_id);
    expect(createEdits()).toHaveLength(0);
  });

  it('measures the clips: an out point past the end of a source is an error at its path', async () => {
    const r = await call('compose_edit', { project_id: projectId, clips: [{ asset_id: ids.blue, start: 2, end: 7 }] });
    const out = r.structuredContent as Check;
    expect(out.ready).toBe(false);
    expect(out.diagnostics[0]).toMatchObject({ severity: 'error', path: '/video_series_sequential/0/video_end_time' });
    expect(out.diagnostics[0]!.message).toMatch(/past the end of the clip \(it lasts 6 s\)/);
    expect(out.edit_id).toBeUndefined();
    // The headline names the problem, not only a count.
    expect(textOf(r)).toMatch(
      /^Not ready: the out point 7 s is past the end of the clip \(it lasts 6 s\) \(at \/video_series_sequential\/0\/video_end_time\)/,
    );
  });

  it('catches an audio asset used as a video and an image in the timeline', async () => {
    const r = await call('compose_edit', {
      project_id: projectId,
      clips: [
        { asset_id: ids.voice, start: 0, end: 1 },
        { asset_id: ids.still, start: 0, end: 1 },
      ],
    });
    const paths = (r.structuredContent as Check).diagnostics.map((d) => `${d.severity} ${d.path}`);
    expect(paths).toEqual(['error /video_series_sequential/0/video_id', 'error /video_series_sequential/1/video_id']);
  });

  it("takes the sources' size and rate where the call names none, and says so", async () => {
    const r = await call('compose_edit', {
      project_id: projectId,
      clips: [
        { asset_id: ids.green_vertical, start: 0, end: 2 },
        { asset_id: ids.green_vertical, start: 3, end: 4 },
        { asset_id: ids.red, start: 0, end: 1 },
      ],
    });
    const out = r.structuredContent as Check & { notes?: string[] };
    expect(out.ready).toBe(true);
    expect(textOf(r)).toMatch(/^Ready: 3 cuts, 4 s at 180x320, 25 fps, 1 warning\./);
    expect(out.notes).toContain("output 180x320 at 25 fps: the sources' (resolution or fps in the call sets another)");
    // The one cut of another shape is named; the output is not 16:9 by default any more.
    expect(out.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/the output is 9:16 but cut 3 /)]);
  });

  it('plays the whole source for a clip given only its asset_id, and to its end for one given only a start', async () => {
    const r = await call('compose_edit', {
      project_id: projectId,
      clips: [{ asset_id: ids.red }, { asset_id: ids.blue, start: 1 }],
    });
    const out = r.structuredContent as Check & { notes?: string[] };
    expect(out.ready).toBe(true);
    // red lasts 8 s, blue 6 s (test/helpers/media-project.ts): 8 + 5.
    expect(out.summary?.total_seconds).toBe(13);
    expect(out.notes).toEqual(
      expect.arrayContaining([
        'clip 1 plays the whole source (0-8 s): no start or end given',
        "clip 2 plays to the source's end (6 s): no end given",
      ]),
    );
    expect(await storedEdit(srv.client, out.edit_id!)).toMatchObject({
      video_series_sequential: [
        { video_start_time: '00:00:00.000', video_end_time: '00:00:08.000' },
        { video_start_time: '00:00:01.000', video_end_time: '00:00:06.000' },
      ],
    });
  });

  it('warns when the sources are of another shape than the output', async () => {
    const r = await call('compose_edit', {
      project_id: projectId,
      clips: [{ asset_id: ids.green_vertical, start: 0, end: 2 }],
      resolution: '1080p',
    });
    const out = r.structuredContent as Check;
    expect(out.ready).toBe(true);
    expect(out.diagnostics.map((d) => d.message)).toEqual([
      expect.stringMatching(/the output is 16:9 but cut 1 .* is 9:16/),
      expect.stringMatching(/it upscales them/),
    ]);
  });

  it('checks a whole edit given as the service takes it', async () => {
    const r = await call('compose_edit', {
      project_id: projectId,
      edit: {
        video_output_resolution: '1920x1080',
        video_output_fps: 25,
        video_output_filename: 'promo.mp4',
        video_series_sequential: [
          {
            video_id: ids.red,
            video_start_time: '00:00:00',
            video_end_time: '00:00:02',
            audio_levels: [{ audio_level: 2, start_time: 0, end_time: 1 }],
          },
        ],
        audio_overlay: [{ audio_id: ids.voice, audio_start_time: 0, audio_end_time: 3 }],
      },
    });
    const paths = (r.structuredContent as Check).diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => `${d.severity} ${d.path}`);
    expect(paths).toEqual([
      'error /video_series_sequential/0/audio_levels/0/audio_level',
      'error /audio_overlay/0/audio_end_time',
    ]);
  });

  it('asks for one form only', async () => {
    const r = await call('compose_edit', { project_id: projectId, edit: { video_series_sequential: [] }, clips: [] });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/either edit .* or clips/);
  });
});

describe('render_edit', () => {
  const good = () => ({
    project_id: projectId,
    clips: [
      { asset_id: ids.red, start: 0, end: 2 },
      { asset_id: ids.blue, start: 1, end: 3 },
    ],
    overlays: [{ asset_id: ids.voice, at: 0, volume: 0.8 }],
    filename: 'cut.mp4',
  });

  it('sends nothing when the edit has an error, and says what to fix', async () => {
    const r = await call('render_edit', { project_id: projectId, clips: [{ asset_id: ids.red, start: 3, end: 2 }] });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/Nothing was rendered.*\n- error at \/video_series_sequential\/0\/video_end_time/);
    // compose_edit's shape is not render_edit's outputSchema: the refusal carries no structuredContent at all.
    expect(r.structuredContent).toBeUndefined();
    expect(createEdits()).toHaveLength(0);
  });

  it('lists every diagnostic of a refused edit in its text, since an error result carries no data', async () => {
    const clips = Array.from({ length: 15 }, () => ({ asset_id: ids.red, start: 3, end: 2 }));
    const r = await call('render_edit', { project_id: projectId, clips });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    for (let i = 0; i < 15; i++) expect(textOf(r)).toContain(`- error at /video_series_sequential/${i}/video_end_time`);
    expect(createEdits()).toHaveLength(0);
  });

  it('sends exactly one create-edit with the canonical edit compose_edit showed', async () => {
    const composed = (await call('compose_edit', good())).structuredContent as Check;
    service.reset();
    const r = await call('render_edit', good());
    expect(r.isError).toBeFalsy();
    expect(createEdits()).toHaveLength(1);
    expect(createEdits()[0]!.body).toEqual(await storedEdit(srv.client, composed.edit_id!));
    expect(createEdits()[0]!.path).toBe(`/projects/${projectId}/create-edit`);
    const { render, edit_id } = r.structuredContent as {
      render: { asset_id: string; done: boolean; service_edit_id: string };
      edit_id: string;
    };
    expect(edit_id).toBe(composed.edit_id);
    expect(service.projects.get(projectId).assets.some((a: { id: string }) => a.id === render.asset_id)).toBe(true);
    expect(render.service_edit_id).toBeTruthy();
    // By its edit_id alone, the same edit is sent again, byte for byte.
    const byId = await call('render_edit', { edit_id: composed.edit_id });
    expect(byId.isError).toBeFalsy();
    expect(createEdits()).toHaveLength(2);
    expect(createEdits()[1]!.body).toEqual(createEdits()[0]!.body);
    const link = (r.content as { type: string; uri?: string }[]).find((c) => c.type === 'resource_link');
    expect(link?.uri).toBe(`vj://projects/${projectId}/renders/${render.asset_id}`);
    const read = await srv.client.readResource({ uri: link!.uri! });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
      asset_id: render.asset_id,
      status: 'uploaded',
      done: true,
    });
  });

  it('with wait, follows the render to its end and reports progress', async () => {
    // The render ends once the caller has been told of its progress (a state, not a time).
    const ends = (service.renderHold = service.gate());
    const progress: number[] = [];
    const r = await srv.client.callTool(
      { name: 'render_edit', arguments: { ...good(), wait: true } },
      {
        onprogress: (p) => {
          progress.push(p.progress);
          ends.open();
        },
      },
    );
    const { render } = r.structuredContent as { render: { done: boolean; status: string; url: string } };
    expect(render).toMatchObject({ done: true, status: 'uploaded' });
    expect(render.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/media\//);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(createEdits()).toHaveLength(1);
  });

  it('without wait, hands over to get_render_status, which follows the status', async () => {
    const rendering = (service.renderHold = service.gate());
    const r = await call('render_edit', good());
    const { render } = r.structuredContent as { render: { asset_id: string; status: string; done: boolean } };
    expect(render).toMatchObject({ status: 'processing', done: false });
    expect(textOf(r)).toMatch(/get_render_status/);
    const first = await call('get_render_status', { project_id: projectId, asset_id: render.asset_id });
    expect(first.structuredContent).toMatchObject({ status: 'processing', done: false, uploaded: false });
    rendering.open();
    const later = await call('get_render_status', { project_id: projectId, asset_id: render.asset_id });
    expect(later.structuredContent).toMatchObject({ status: 'uploaded', done: true, uploaded: true });
  });

  it("get_render_status says the time since the service made the render's asset and its own status, inventing no progress", async () => {
    service.renderHold = service.gate();
    const { render } = (await call('render_edit', good())).structuredContent as { render: { asset_id: string } };
    const first = await call('get_render_status', { project_id: projectId, asset_id: render.asset_id });
    await new Promise((res) => setTimeout(res, 1200));
    const later = await call('get_render_status', { project_id: projectId, asset_id: render.asset_id });
    type Running = { status: string; done: boolean; elapsed_seconds?: number; progress?: number; eta_seconds?: number };
    const [s1, s2] = [first.structuredContent as Running, later.structuredContent as Running];
    expect(s1).toMatchObject({ status: 'processing', done: false });
    expect(s1.elapsed_seconds).toBeGreaterThanOrEqual(0);
    expect(s2.elapsed_seconds! - s1.elapsed_seconds!).toBeGreaterThanOrEqual(1);
    for (const s of [s1, s2]) expect([s.progress, s.eta_seconds]).toEqual([undefined, undefined]);
    expect(textOf(later)).toMatch(
      /^Not done: the service says "processing", \d+ s since it started; it reports no progress\. Check again in about \d+ s\.$/,
    );
  });

  it("with a wait that ends first, says the service's status and the time gone, and names get_render_status", async () => {
    const brief = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_RENDER_WAIT_MS: '1500',
    });
    try {
      service.renderHold = service.gate();
      const notes: { progress: number; total?: number; message?: string }[] = [];
      const r = await brief.client.callTool(
        { name: 'render_edit', arguments: { ...good(), wait: true } },
        { onprogress: (p) => notes.push(p) },
      );
      const { render } = r.structuredContent as {
        render: { done: boolean; status: string; elapsed_seconds?: number; progress?: number };
      };
      expect(render).toMatchObject({ done: false, status: 'processing' });
      expect(render.elapsed_seconds).toBeGreaterThanOrEqual(1);
      expect(render.progress).toBeUndefined();
      expect(textOf(r)).toMatch(
        /^Still running after a 2 s wait: the service says "processing", \d+ s since it started; it reports no progress\. Follow it with get_render_status \{project_id: "[^"]+", asset_id: "[^"]+"\} in about \d+ s\./,
      );
      // Notifications count the seconds gone, with no total: the service says nothing of how much is left.
      expect(notes.length).toBeGreaterThanOrEqual(1);
      for (const n of notes) {
        expect(n.total).toBeUndefined();
        expect(n.message).toMatch(/^processing, \d+ s since it started$/);
      }
    } finally {
      await brief.close();
    }
  });

  it('never resends a render whose request failed midway, and says how to check', async () => {
    service.fail(
      { status: 502, contentType: 'text/html', body: '<html><title>502 Bad Gateway</title></html>' },
      { times: 3, match: (q: { path: string }) => q.path.endsWith('/create-edit') },
    );
    const r = await call('render_edit', good());
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/may or may not have reached the service .* It was not resent: call get_project/);
    expect(createEdits()).toHaveLength(1);
  });

  it("passes on the service's own refusal (422) in one line", async () => {
    service.fail(
      {
        status: 422,
        body: JSON.stringify({ detail: [{ loc: ['body', 'video_output_filename'], msg: 'already exists' }] }),
      },
      { match: (q: { path: string }) => q.path.endsWith('/create-edit') },
    );
    const r = await call('render_edit', good());
    expect(textOf(r)).toBe(
      'the service rejected the request (422) (body.video_output_filename: already exists); correct the arguments and call again',
    );
    expect(createEdits()).toHaveLength(1);
  });

  it('stops following a render at once when the client cancels', async () => {
    service.renderHold = service.gate();
    const ac = new AbortController();
    const pending = srv.client.callTool(
      { name: 'render_edit', arguments: { ...good(), wait: true } },
      { signal: ac.signal },
    );
    await expect
      .poll(() => service.requests.filter((q) => q.method === 'GET' && q.path === `/projects/${projectId}`).length, {
        timeout: 60_000,
      })
      .toBeGreaterThanOrEqual(2);
    ac.abort();
    await expect(pending).rejects.toThrow();
    await new Promise((res) => setTimeout(res, 300));
    const polls = service.requests.length;
    await new Promise((res) => setTimeout(res, 2500));
    expect(service.requests.length).toBe(polls);
    expect(createEdits()).toHaveLength(1);
    expect((await call('list_projects', {})).isError).toBeFalsy();
  });

  it('with wait, polls many times without piling abort listeners on the request (no MaxListenersExceededWarning)', async () => {
    // Fast polls, so that a dozen of them fit in a few seconds; the render stays processing through them.
    const fast = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_RENDER_WAIT_MS: '10000',
      CUTROOM_RENDER_POLL_MS: '20',
    });
    try {
      // The render ends once a dozen polls were seen (a state, not a time).
      const ends = (service.renderHold = service.gate());
      const polls = () =>
        service.requests.filter((q) => q.method === 'GET' && q.path === `/projects/${projectId}`).length;
      const pending = fast.client.callTool(
        { name: 'render_edit', arguments: { ...good(), wait: true } },
        { onprogress: () => {} },
      );
      await waitFor(() => polls() > 11, { what: 'a dozen polls of the render' });
      ends.open();
      const r = await pending;
      expect((r.structuredContent as { render: { done: boolean } }).render.done).toBe(true);
      expect(polls()).toBeGreaterThan(11);
      expect(fast.stderr()).not.toMatch(/MaxListenersExceeded|memory leak/);
    } finally {
      await fast.close();
    }
  });

  it('get_render_status says when an asset is not there', async () => {
    const r = await call('get_render_status', {
      project_id: projectId,
      asset_id: '0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f',
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/no asset .* yet/);
  });
});

describe('without ffprobe', () => {
  it('still runs the structural checks and says which checks were skipped and how to get them', async () => {
    const bare = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      FFPROBE_PATH: '/nonexistent/ffprobe',
      FFMPEG_PATH: '/nonexistent/ffmpeg',
    });
    try {
      const r = await bare.client.callTool({
        name: 'compose_edit',
        arguments: {
          project_id: projectId,
          clips: [
            { asset_id: ids.blue, start: 2, end: 7 },
            { asset_id: ids.voice, start: 0, end: 1 },
          ],
        },
      });
      const out = r.structuredContent as Check;
      // The 7 s out point on a 6 s clip cannot be seen without measuring; the audio-as-video error still can.
      expect(out.diagnostics.map((d) => d.path)).toEqual(['/video_series_sequential/1/video_id']);
      expect(out.skipped_checks[0]).toMatch(/ffprobe was not found; install ffmpeg .*apt-get install -y ffmpeg/);
      expect(bare.stderr()).toMatch(/ffprobe not found/);
      // A clip with no end and a source nobody could measure: the error names the field the agent sends.
      const endless = await bare.client.callTool({
        name: 'compose_edit',
        arguments: { project_id: projectId, clips: [{ asset_id: ids.blue }] },
      });
      const d = (endless.structuredContent as Check).diagnostics;
      expect(d).toHaveLength(1);
      expect(d[0]).toMatchObject({ severity: 'error', message: expect.stringMatching(/clip 1 gives no end/) });
      expect((d[0] as { hint?: string }).hint).toMatch(/give clips\[0\]\.end/);
    } finally {
      await bare.close();
    }
  });
});
