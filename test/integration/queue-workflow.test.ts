// The whole workflow through two replicas and two workers (issue 35): one real redis-server, two HTTP replicas of
// the built server (local backend, one token, one cache dir and one data dir between them, as docker-compose.yml
// deploys them) and two `cutroom worker`s. An agent's calls alternate between the replicas through the SDK's
// Streamable HTTP client, which checks every structuredContent against its tool's outputSchema (harness.ts).
// The replicas' speech engine is a script that notes being called and fails, and their ffmpeg notes every call
// before it runs the real one: the only ffmpeg a replica runs is inspect_asset's sheet (drawn where the call is
// answered, from what the worker's scan kept: by design, "Jobs on workers"), and nothing after it, so every preview,
// scan, transcription and render is a worker's. Mid-workflow the worker making the preview is killed with kill -9,
// and the other finishes it. Then a render asked on one replica is cancelled by its id on the other (issue 50).
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchWords, textWords } from '../../src/edit/words.js';
import { textOf } from '../helpers/harness.js';
import { connectHttp, startHttpServer, type HttpServer } from '../helpers/http-server.js';
import { pidsMatching } from '../helpers/processes.js';
import { queueSuite, startedJobs, type WorkerProcess } from '../helpers/queue.js';
import { ALL_TEXT, SPEECH_SECONDS, makeSpeechMedia } from '../helpers/speech-media.js';

const suite = queueSuite({ service: false });
const TOKEN = 'workflow-token-0123456789abcdef';
const root = mkdtempSync(join(tmpdir(), 'cutroom-q-flow-'));
const dirs = {
  allowed: join(root, 'allowed'),
  cache: join(root, 'cache'),
  data: join(root, 'data'),
  replicaBin: join(root, 'replica-bin'),
  workerBin: join(root, 'worker-bin'),
};
/** What the replicas' ffmpeg and speech engine were asked to do: a line per call, "<replica> <command> <args>". */
const replicaLog = join(dirs.replicaBin, 'calls.log');
const replicaCalls = () => (existsSync(replicaLog) ? readFileSync(replicaLog, 'utf8').split('\n').filter(Boolean) : []);
/** Set, the workers' next ffmpeg waits 6 s before it starts (a preview that takes a while); it takes the flag away. */
const slowFlag = join(dirs.workerBin, 'slow');
/** Set, the workers' renders read their media at a tenth of its speed (a render that takes a while). */
const slowRenderFlag = join(dirs.workerBin, 'slow-render');

let media: { video: string; tone: string };
let a: HttpServer;
let b: HttpServer;
let ca: Client;
let cb: Client;
let workers: WorkerProcess[];
/** Starts one more worker as beforeAll starts them. */
let worker: () => Promise<WorkerProcess>;

type Called = Awaited<ReturnType<Client['callTool']>>;
async function ok<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const r: Called = await client.callTool({ name, arguments: args }, { timeout: 120_000 });
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  expect(r.structuredContent, `${name} carries structuredContent`).toBeDefined();
  return r.structuredContent as T;
}

/** The real ffmpeg, by its path (the replicas' PATH finds their stand-in first). */
const realFfmpeg = () => {
  const r = spawnSync('sh', ['-c', 'command -v ffmpeg'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.trim()) throw new Error('ffmpeg is not on PATH');
  return r.stdout.trim();
};
function script(path: string, lines: string[]): void {
  writeFileSync(path, ['#!/bin/bash', ...lines, ''].join('\n'));
  chmodSync(path, 0o755);
}
const ffprobeJson = (file: string) => {
  const r = spawnSync(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,width,height', '-of', 'json', file],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`ffprobe ${file}: ${r.stderr}`);
  return JSON.parse(r.stdout) as {
    format: { duration: string };
    streams: { codec_type: string; width?: number; height?: number }[];
  };
};
/** A process's parent, from /proc. */
const parentOf = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return -1;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, get: () => T | Promise<T>, ms = 60_000): Promise<NonNullable<T>> {
  const t = Date.now();
  for (;;) {
    const v = await get();
    if (v) return v as NonNullable<T>;
    if (Date.now() - t > ms)
      throw new Error(
        `not within ${ms} ms: ${what}\n${workers.map((w, i) => `--- worker ${i + 1}:\n${w.stderr()}`).join('\n')}\n--- replica A:\n${a.stderr().slice(-3000)}`,
      );
    await sleep(100);
  }
}
/** Every file under a folder. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );

beforeAll(async () => {
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  // Media made here: a moving picture (testsrc2, a counter and a sweep) with flite's speech, and a tone.
  const speech = makeSpeechMedia(dirs.allowed);
  const video = join(dirs.allowed, 'moving-talk.mp4');
  const tone = join(dirs.allowed, 'tone.wav');
  for (const args of [
    [
      '-f',
      'lavfi',
      '-i',
      `testsrc2=s=320x180:r=25:d=${SPEECH_SECONDS}`,
      '-i',
      speech.wav,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '96k',
      '-shortest',
      video,
    ],
    ['-f', 'lavfi', '-i', 'sine=frequency=523:sample_rate=48000:duration=4', '-ac', '2', tone],
  ]) {
    const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ffmpeg: ${r.stderr}`);
  }
  media = { video, tone };

  // The replicas' PocketSphinx notes the call and fails; their ffmpeg notes the call and runs the real one. ffprobe
  // is theirs as it is (checking edits and imports probes media on the replica, by design).
  const ffmpeg = realFfmpeg();
  for (const r of ['a', 'b']) {
    mkdirSync(join(dirs.replicaBin, r));
    for (const name of ['pocketsphinx_continuous', 'pocketsphinx'])
      script(join(dirs.replicaBin, r, name), [
        `echo "${r} ${name} $*" >> ${JSON.stringify(replicaLog)}`,
        `echo "${name} is not for an HTTP replica here" >&2`,
        'exit 1',
      ]);
    script(join(dirs.replicaBin, r, 'ffmpeg'), [
      `echo "${r} ffmpeg $*" >> ${JSON.stringify(replicaLog)}`,
      `exec ${ffmpeg} "$@"`,
    ]);
  }
  // The workers' ffmpeg: the real one, late to start while the flag is set; a render's (writing its .part file)
  // reading its first input at a tenth of its speed while the other flag is.
  script(join(dirs.workerBin, 'ffmpeg'), [
    'if [[ -e "$(dirname "$0")/slow" ]]; then rm -f "$(dirname "$0")/slow"; sleep 6 </dev/null >/dev/null 2>&1; fi',
    `if [[ -e "$(dirname "$0")/slow-render" && "$*" == *.part* ]]; then exec ${ffmpeg} -readrate 0.1 "$@"; fi`,
    `exec ${ffmpeg} "$@"`,
  ]);

  const shared = {
    CUTROOM_CACHE_DIR: dirs.cache,
    CUTROOM_DATA_DIR: dirs.data,
    CUTROOM_ALLOWED_DIRS: dirs.allowed,
    CUTROOM_QUEUE_URL: suite.redis.url,
    CUTROOM_LOG_LEVEL: 'debug',
  };
  const replica = (r: string) =>
    startHttpServer({
      ...shared,
      VJ_BACKEND: 'local',
      CUTROOM_HTTP_TOKEN: TOKEN,
      CUTROOM_RENDER_WAIT_MS: '3000',
      FFMPEG_PATH: join(dirs.replicaBin, r, 'ffmpeg'),
      PATH: `${join(dirs.replicaBin, r)}:${process.env.PATH ?? ''}`,
    });
  worker = () =>
    suite.worker({
      ...shared,
      CUTROOM_WORKER_CONCURRENCY: '1',
      CUTROOM_WORKER_LOCK_MS: '3000',
      FFMPEG_PATH: join(dirs.workerBin, 'ffmpeg'),
    });
  [a, b] = await Promise.all([replica('a'), replica('b')]);
  // Started here, not per test: the workflow is one test, and the suite stops what it defers after it.
  workers = [await worker(), await worker()];
  ca = await connectHttp(a.url, { authorization: `Bearer ${TOKEN}` });
  cb = await connectHttp(b.url, { authorization: `Bearer ${TOKEN}` });
}, 120_000);
afterAll(async () => {
  await Promise.allSettled([ca?.close(), cb?.close()]);
  await Promise.allSettled([a?.stop(), b?.stop(), ...(workers ?? []).map((w) => w.stop())]);
  // What the killed worker left running (its ffmpeg, late to start) ends with the test: those are ours.
  for (const pid of pidsMatching(dirs.workerBin)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  rmSync(root, { recursive: true, force: true });
});

describe('the whole workflow through two replicas and two workers', () => {
  it('project, media, inspection, transcript, edit, preview (its worker killed mid-way), render: every job on a worker', async () => {
    expect(a.url).not.toBe(b.url);
    // The project made on A is B's too (one data dir); media imported on both.
    const project = (
      await ok<{ project: { id: string } }>(ca, 'create_project', {
        name: 'two replicas',
        description: 'the workflow across replicas and workers',
      })
    ).project.id;
    const video = (await ok<{ asset: { id: string } }>(cb, 'import_media', { project_id: project, path: media.video }))
      .asset.id;
    const tone = (await ok<{ asset: { id: string } }>(ca, 'import_media', { project_id: project, path: media.tone }))
      .asset.id;
    const seen = await ok<{ project: { assets?: { id: string }[] } }>(cb, 'get_project', { project_id: project });
    expect((seen.project.assets ?? []).map((x) => x.id).sort()).toEqual([video, tone].sort());

    // Inspection on A: shots and frames, made by a worker.
    const inspected = await ok<{
      duration_seconds: number;
      width?: number;
      has_audio: boolean;
      shots: unknown[];
      frames: unknown[];
      cached: boolean;
    }>(ca, 'inspect_asset', { project_id: project, asset_id: video });
    expect(inspected.duration_seconds).toBeCloseTo(SPEECH_SECONDS, 0);
    expect(inspected).toMatchObject({ width: 320, has_audio: true, cached: false });
    expect(inspected.shots.length).toBeGreaterThan(0);
    expect(inspected.frames.length).toBeGreaterThan(0);
    expect(
      startedJobs(workers[0]!)
        .concat(startedJobs(workers[1]!))
        .filter((j) => j.kind === 'inspect'),
    ).toHaveLength(1);
    // A drew the sheet (ffmpeg writing raw frames or a JPEG of them, no video); B ran nothing.
    const sheetCalls = replicaCalls();
    expect(sheetCalls.length).toBeGreaterThan(0);
    for (const c of sheetCalls)
      expect(c).toMatch(/^a ffmpeg .*(-f rawvideo pipe:1|-f image2 -c:v mjpeg file:\S+\.jpg)$/);

    // Transcription on B: PocketSphinx, on a worker, hears most of what flite said.
    const heard = await ok<{
      words: { word: string; start_seconds: number; end_seconds: number }[];
      engine: { name: string };
    }>(cb, 'transcribe_asset', { project_id: project, asset_id: video, words: true });
    expect(heard.engine.name).toBe('pocketsphinx');
    const truth = textWords(ALL_TEXT).map((w) => w.key);
    const right = matchWords(
      truth,
      heard.words.map((w) => w.word.toLowerCase()),
    ).filter((j) => j >= 0).length;
    expect(right / truth.length, heard.words.map((w) => w.word).join(' ')).toBeGreaterThanOrEqual(0.6);
    expect(
      startedJobs(workers[0]!)
        .concat(startedJobs(workers[1]!))
        .filter((j) => j.kind === 'transcribe'),
    ).toHaveLength(1);

    // The edit on A: two cuts of the moving picture (5.5 s) under a tone, 360p.
    const composed = await ok<{ edit_id: string }>(ca, 'compose_edit', {
      project_id: project,
      resolution: '640x360',
      fps: 25,
      clips: [
        { asset_id: video, start: 0.5, end: 3.5 },
        { asset_id: video, start: 5, end: 7.5 },
      ],
      overlays: [{ asset_id: tone, at: 1, until: 4 }],
    });
    const EDIT_SECONDS = 5.5;

    // The preview asked on B, its worker's first ffmpeg slow to start. While B waits (3 s), the worker that started
    // it is killed with -9 as that ffmpeg works (a child of it, waiting to start); B then hands over "rendering".
    type Preview = {
      status?: string;
      preview_id: string;
      path: string;
      measured_seconds: number;
      planned_seconds: number;
    };
    writeFileSync(slowFlag, '');
    const asking = ok<Preview>(cb, 'preview_edit', { edit_id: composed.edit_id, project_id: project });
    const making = await until('a worker making the preview', () =>
      workers.find((w) => startedJobs(w).some((j) => j.kind === 'preview')),
    );
    const other = workers.find((w) => w !== making)!;
    const { job, preview: firstId } = startedJobs(making).find((j) => j.kind === 'preview')!;
    await until("the preview's ffmpeg running under its worker", () =>
      pidsMatching(dirs.workerBin).some((p) => parentOf(p) === making.pid),
    );
    making.proc.kill('SIGKILL');
    const asked = await asking;
    expect(asked.status).toBe('rendering');
    expect(asked.preview_id).toBe(firstId);

    // Followed on B by the id B gave: it ends done, made by the other worker, which took the same job over (so the
    // kill came mid-job: a finished job is not run again), as a preview of its own.
    let followed = await ok<Preview>(cb, 'preview_edit', { preview_id: firstId! });
    for (let i = 0; i < 20 && followed.status === 'rendering'; i++)
      followed = await ok<Preview>(cb, 'preview_edit', { preview_id: firstId! });
    expect(followed.status ?? 'done').toBe('done');
    const taken = await until('the other worker taking the job over', () =>
      startedJobs(other).find((j) => j.job === job),
    );
    expect(followed.preview_id).toBe(taken.preview);
    expect(followed.preview_id).not.toBe(firstId);
    expect(followed.planned_seconds).toBeCloseTo(EDIT_SECONDS, 1);
    expect(followed.measured_seconds).toBeCloseTo(EDIT_SECONDS, 1);
    // A answers the finished preview by its id too (one cache dir).
    const onA = await ok<Preview>(ca, 'preview_edit', { preview_id: followed.preview_id });
    expect(onA.status ?? 'done').toBe('done');
    expect(onA.measured_seconds).toBe(followed.measured_seconds);
    // And by the id B gave, though A followed nothing: the dead worker's mark names the job, whose result names the
    // preview the other worker made (not "rendering" until the mark lapses).
    const byFirstOnA = await ok<Preview>(ca, 'preview_edit', { preview_id: firstId! });
    expect(byFirstOnA.status ?? 'done').toBe('done');
    expect(byFirstOnA.preview_id).toBe(followed.preview_id);

    // Another preview (the same edit, narrower) asked on B, "rendering" there, followed on A until done: A did not
    // start it, and sees it being made through the queue.
    writeFileSync(slowFlag, '');
    const second = await ok<Preview>(cb, 'preview_edit', {
      edit_id: composed.edit_id,
      project_id: project,
      width: 320,
    });
    expect(second.status).toBe('rendering');
    let there = await ok<Preview>(ca, 'preview_edit', { preview_id: second.preview_id });
    for (let i = 0; i < 120 && there.status === 'rendering'; i++) {
      await sleep(500);
      there = await ok<Preview>(ca, 'preview_edit', { preview_id: second.preview_id });
    }
    expect(there.status ?? 'done').toBe('done');
    expect(there.preview_id).toBe(second.preview_id);
    expect(there.measured_seconds).toBeCloseTo(EDIT_SECONDS, 1);

    // The preview resource read on A: an MP4 of the edit's length.
    expect(there.path).toMatch(/^cutroom:\/\/previews\/[\w-]+\/preview\.mp4$/);
    const read = (await ca.readResource({ uri: there.path })).contents[0] as {
      blob?: string;
      mimeType?: string;
      _meta?: Record<string, unknown>;
    };
    expect(read._meta?.['cutroom/parts'], 'a small preview comes whole').toBeUndefined();
    expect(read.mimeType).toBe('video/mp4');
    const previewFile = join(root, 'preview-read.mp4');
    writeFileSync(previewFile, Buffer.from(read.blob ?? '', 'base64'));
    const pp = ffprobeJson(previewFile);
    expect(Number(pp.format.duration)).toBeCloseTo(EDIT_SECONDS, 0);
    expect(pp.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    expect(pp.streams.find((s) => s.codec_type === 'video')?.width).toBe(320);

    // The render asked on A, followed on B until done; the file in the shared data dir is the edit, 640x360.
    const render = (
      await ok<{ render: { asset_id: string } }>(ca, 'render_edit', { edit_id: composed.edit_id, project_id: project })
    ).render.asset_id;
    let status: { done?: boolean; status?: string } = {};
    for (let i = 0; i < 120 && !status.done; i++) {
      status = await ok(cb, 'get_render_status', { project_id: project, asset_id: render });
      if (!status.done) await sleep(500);
    }
    expect(status.done, JSON.stringify(status)).toBe(true);
    const rendered = filesUnder(dirs.data).filter((f) => f.includes(`/${render}/`) && f.endsWith('.mp4'));
    expect(rendered).toHaveLength(1);
    expect(statSync(rendered[0]!).size).toBeGreaterThan(10_000);
    const rp = ffprobeJson(rendered[0]!);
    expect(Number(rp.format.duration)).toBeCloseTo(EDIT_SECONDS, 1);
    expect(rp.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 640, height: 360 });
    expect(rp.streams.some((s) => s.codec_type === 'audio')).toBe(true);

    // Every job ran on a worker, over both: the killed one started the preview, the other finished it; the render
    // and the rest are the other's or the first's, as they came.
    const all = [...startedJobs(workers[0]!), ...startedJobs(workers[1]!)];
    expect(all.filter((j) => j.kind === 'render')).toHaveLength(1);
    const previews = all.filter((j) => j.kind === 'preview');
    expect(previews.filter((j) => j.job === job)).toHaveLength(2);
    expect(previews).toHaveLength(3);
    expect(startedJobs(making).length).toBeGreaterThan(0);
    expect(startedJobs(other).length).toBeGreaterThan(0);
    expect(b.stderr()).toMatch(/preview job preview-[0-9a-f]+: queued/);
    // The queue's figures on either replica say so too: each kind of job completed on a worker (the histogram counts
    // completions the replica heard of; a replica reports the whole queue).
    const metrics = await (await fetch(`${a.base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    for (const kind of ['inspect', 'transcribe', 'preview', 'render']) {
      const count = new RegExp(`^cutroom_queue_job_duration_seconds_count\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(
        metrics,
      );
      expect(Number(count?.[1] ?? 0), `${kind} in /metrics:\n${metrics}`).toBeGreaterThanOrEqual(1);
    }
    // No replica ran ffmpeg or the speech engine after the sheet: the transcript, the preview, its resource and the
    // render were all the workers'.
    expect(replicaCalls()).toEqual(sheetCalls);
    for (const w of workers) expect(w.stderr()).not.toMatch(/\[stdout/);
  }, 180_000);

  it('a render asked on A, cancelled by its id on B: stopped on its worker, its partial file removed, said once it is', async () => {
    // A worker of its own beside the one left from the workflow (the other was killed there), as a team adds one.
    workers.push(await worker());
    const project = (
      await ok<{ project: { id: string } }>(ca, 'create_project', { name: 'cancelled render', description: '' })
    ).project.id;
    const video = (await ok<{ asset: { id: string } }>(cb, 'import_media', { project_id: project, path: media.video }))
      .asset.id;
    const composed = await ok<{ edit_id: string }>(ca, 'compose_edit', {
      project_id: project,
      resolution: '640x360',
      fps: 25,
      clips: [{ asset_id: video, start: 0, end: SPEECH_SECONDS }],
    });
    writeFileSync(slowRenderFlag, '');
    try {
      const render = (
        await ok<{ render: { asset_id: string } }>(ca, 'render_edit', {
          edit_id: composed.edit_id,
          project_id: project,
        })
      ).render.asset_id;
      // (The render's own folder, named by its asset id, wherever the caller's projects are kept.)
      const part = await until(`a worker writes render ${render}`, () =>
        filesUnder(dirs.data).find((f) => f.includes(`/${render}/`) && f.endsWith('.part')),
      );
      const folder = dirname(part);
      expect(pidsMatching(folder).length).toBeGreaterThan(0);
      const r = await cb.callTool(
        { name: 'get_render_status', arguments: { project_id: project, asset_id: render, cancel: true } },
        { timeout: 120_000 },
      );
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(textOf(r)).toMatch(
        /^Cancelled: the render was cancelled before it finished; its partial file was removed/,
      );
      // Said once it is so: the worker's ffmpeg gone, the render's folder with its partial file removed.
      expect(pidsMatching(folder)).toEqual([]);
      expect(existsSync(folder)).toBe(false);
      expect(workers.map((w) => w.stderr()).join('\n')).toMatch(/job render-[0-9a-f]+: the render was cancelled/);
      expect(await ok(ca, 'get_render_status', { project_id: project, asset_id: render })).toMatchObject({
        status: 'failed',
        reason: expect.stringMatching(/cancelled/),
      });
    } finally {
      rmSync(slowRenderFlag, { force: true });
    }
  }, 180_000);
});
