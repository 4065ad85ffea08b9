// A mix that reports itself, a loudness target met, and even dialogue (issue 33, items 3 and 4), through the built
// server over stdio with media made here by ffmpeg: two "speakers" (1 kHz tones, one 10 dB quieter than the other)
// and a music bed (a 300 Hz tone). The preview's figures are held against ffmpeg's own ebur128 run on the stems,
// made here from the sources as the edit plays them; a target is measured on the file written.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, textOf, type Spawned } from '../helpers/harness.js';
import { localProject, structuredOf, testRoot, type LocalProject } from '../helpers/local-project.js';

const { root, allowed } = testRoot('loudness');
const RATE = 48_000;

function ffmpeg(args: string[]): { stdout: Buffer; stderr: string } {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostats', '-y', ...args], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr.toString() };
}
/** ffmpeg's own EBU R128 figures of a file's sound (after `filter`, when given): integrated LUFS and true peak dBTP. */
function ebur128(file: string, filter = ''): { lufs: number; truePeak: number } {
  const { stderr } = ffmpeg(['-i', file, '-map', '0:a:0', '-af', `${filter}ebur128=peak=true`, '-f', 'null', '-']);
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  return {
    lufs: Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)![1]),
    truePeak: Number(/Peak:\s+(-?[\d.]+) dBFS/.exec(summary)![1]),
  };
}
/** RMS (dBFS) of a file's first channel over [from, to) s. */
function rmsDb(file: string, from: number, to: number): number {
  const b = ffmpeg([
    '-v',
    'error',
    '-i',
    file,
    '-map',
    '0:a:0',
    '-af',
    'pan=mono|c0=c0',
    '-ar',
    String(RATE),
    '-f',
    'f32le',
    'pipe:1',
  ]).stdout;
  const x = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~3)));
  let s = 0;
  for (let i = Math.round(from * RATE); i < Math.round(to * RATE); i++) s += x[i]! ** 2;
  return 10 * Math.log10(s / (Math.round(to * RATE) - Math.round(from * RATE)));
}

type Loud = { mean_db: number; lufs?: number; dialogue_lufs?: number; music_lufs?: number; level_db?: number };
type Preview = {
  path: string;
  cuts: { loudness?: Loud; flags: string[] }[];
  mix?: Loud & { true_peak_db?: number; target_lufs?: number; gain_db?: number };
  warnings: string[];
};

let server: Spawned;
let projectId: string;
const ids: Record<'loud' | 'quiet' | 'hot' | 'music', string> = { loud: '', quiet: '', hot: '', music: '' };
const files: Record<'loud' | 'quiet' | 'hot' | 'music', string> = { loud: '', quiet: '', hot: '', music: '' };
let call: LocalProject['call'];
let importMedia: LocalProject['importMedia'];

function makeMedia(dir: string): void {
  const speaker = (name: 'loud' | 'quiet' | 'hot', amplitude: number) => {
    files[name] = join(dir, `${name}.mov`);
    ffmpeg([
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'color=c=gray:s=160x90:r=25:d=8',
      '-f',
      'lavfi',
      '-i',
      `aevalsrc='${amplitude}*sin(2*PI*1000*t)':s=${RATE}:d=8:c=stereo`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'pcm_s16le',
      '-shortest',
      files[name],
    ]);
  };
  speaker('loud', 0.25);
  speaker('quiet', 0.079); // 10 dB under the loud one
  speaker('hot', 0.89); // 1 dB under full scale
  files.music = join(dir, 'music.wav');
  ffmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `aevalsrc='0.2*sin(2*PI*300*t)':s=${RATE}:d=10:c=stereo`,
    '-c:a',
    'pcm_s16le',
    files.music,
  ]);
}

beforeAll(async () => {
  makeMedia(allowed);
  ({ server, projectId, call, importMedia } = await localProject({ root, allowed }, { name: 'loudness' }));
  for (const k of ['loud', 'quiet', 'hot', 'music'] as const) ids[k] = await importMedia(files[k]);
}, 120_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a mix that reports itself', () => {
  it("measures the dialogue, the music and the mix apart, as ffmpeg's ebur128 does on each stem (±0.5 LU)", async () => {
    const p = structuredOf<Preview>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        level_dialogue: false,
        clips: [
          { asset_id: ids.loud, start: 0, end: 4 },
          { asset_id: ids.loud, start: 4, end: 8 },
        ],
        overlays: [{ asset_id: ids.music, at: 0, gain_db: -6, role: 'music', duck_db: 0 }],
      }),
    );
    const dialogue = ebur128(files.loud);
    const music = ebur128(files.music, 'atrim=0:8,volume=-6dB,');
    const mix = ebur128(p.path);
    expect(
      Math.abs(p.mix!.dialogue_lufs! - dialogue.lufs),
      `dialogue ${p.mix!.dialogue_lufs} vs ${dialogue.lufs}`,
    ).toBeLessThanOrEqual(0.5);
    expect(
      Math.abs(p.mix!.music_lufs! - music.lufs),
      `music ${p.mix!.music_lufs} vs ${music.lufs}`,
    ).toBeLessThanOrEqual(0.5);
    expect(Math.abs(p.mix!.lufs! - mix.lufs), `mix ${p.mix!.lufs} vs ${mix.lufs}`).toBeLessThanOrEqual(0.5);
    expect(
      Math.abs(p.mix!.true_peak_db! - mix.truePeak),
      `true peak ${p.mix!.true_peak_db} vs ${mix.truePeak}`,
    ).toBeLessThanOrEqual(0.5);
    // Per cut too; music about 7 dB under the dialogue crowds it, and each cut says so.
    for (const c of p.cuts) {
      expect(Math.abs(c.loudness!.dialogue_lufs! - dialogue.lufs)).toBeLessThanOrEqual(0.5);
      expect(c.flags.join(' ')).toMatch(/music only \d+\.\d dB under the dialogue/);
    }
  }, 180_000);

  it('flags dialogue the music covers, and nothing where the music sits 10 dB or more under it', async () => {
    const over = structuredOf<Preview>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        clips: [{ asset_id: ids.quiet, start: 0, end: 4 }],
        overlays: [{ asset_id: ids.music, at: 0, role: 'music', duck_db: 0 }],
      }),
    );
    expect(over.cuts[0]!.flags.join(' ')).toMatch(/dialogue inaudible: the music is \d+\.\d dB over it/);
    const under = structuredOf<Preview>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        clips: [{ asset_id: ids.loud, start: 0, end: 4 }],
        overlays: [{ asset_id: ids.music, at: 0, role: 'music', gain_db: -20, duck_db: 0 }],
      }),
    );
    expect(under.cuts[0]!.flags.filter((f) => /music|dialogue/.test(f))).toEqual([]);
    expect(under.mix!.dialogue_lufs! - under.mix!.music_lufs!).toBeGreaterThan(10);
  }, 180_000);
});

describe('a loudness target', () => {
  it('brings a preview to the podcast preset (-16 LUFS, -1 dBTP), measured on the file within ±1 LU', async () => {
    const p = structuredOf<Preview>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        loudness: 'podcast',
        clips: [{ asset_id: ids.quiet, start: 0, end: 4 }],
        overlays: [{ asset_id: ids.music, at: 0, role: 'music', gain_db: -12 }],
      }),
    );
    const out = ebur128(p.path);
    expect(Math.abs(out.lufs - -16), `file at ${out.lufs} LUFS`).toBeLessThanOrEqual(1);
    expect(out.truePeak).toBeLessThanOrEqual(-0.5);
    expect(p.mix!.target_lufs).toBe(-16);
    expect(Math.abs(p.mix!.lufs! - -16)).toBeLessThanOrEqual(1);
    expect(p.mix!.gain_db).toBeGreaterThan(3); // the quiet speaker was raised
  }, 180_000);

  it('brings a local render to {target_lufs: -20, true_peak_db: -2}, and get_render_status says what it came to', async () => {
    const r = structuredOf<{ render: { done: boolean; url?: string; asset_id: string } }>(
      await call('render_edit', {
        project_id: projectId,
        wait: true,
        resolution: '160x90',
        fps: 25,
        filename: 'target.mp4',
        loudness: { target_lufs: -20, true_peak_db: -2 },
        clips: [
          { asset_id: ids.loud, start: 0, end: 3 },
          { asset_id: ids.quiet, start: 0, end: 3 },
        ],
      }),
    );
    expect(r.render.done).toBe(true);
    const out = ebur128(fileURLToPath(r.render.url!));
    expect(Math.abs(out.lufs - -20), `file at ${out.lufs} LUFS`).toBeLessThanOrEqual(1);
    expect(out.truePeak).toBeLessThanOrEqual(-1.5);
    const status = structuredOf<{ lufs?: number; true_peak_db?: number }>(
      await call('get_render_status', { project_id: projectId, asset_id: r.render.asset_id }),
    );
    expect(Math.abs(status.lufs! - out.lufs)).toBeLessThanOrEqual(0.5);
    expect(status.true_peak_db!).toBeLessThanOrEqual(-1.5);
  }, 180_000);

  it('renders a silent edit with a target as it is: nothing to measure, the render kept and its record readable', async () => {
    const r = structuredOf<{ render: { done: boolean; asset_id: string } }>(
      await call('render_edit', {
        project_id: projectId,
        wait: true,
        resolution: '160x90',
        fps: 25,
        filename: 'silent.mp4',
        loudness: 'web',
        clips: [{ asset_id: ids.loud, start: 0, end: 2, volume: 0 }],
      }),
    );
    expect(r.render.done).toBe(true);
    const status = structuredOf<{ done: boolean; lufs?: number }>(
      await call('get_render_status', { project_id: projectId, asset_id: r.render.asset_id }),
    );
    expect(status.done).toBe(true);
    expect(status.lufs).toBeUndefined();
    const project = await call('get_project', { project_id: projectId });
    expect(textOf(project)).not.toMatch(/corrupt|unreadable/i);
  }, 180_000);

  it('refuses a target out of range or an unknown preset, naming the field', async () => {
    const r = structuredOf<{ ready: boolean; diagnostics: { path: string; message: string }[] }>(
      await call('compose_edit', {
        project_id: projectId,
        loudness: { target_lufs: 3 },
        clips: [{ asset_id: ids.loud, start: 0, end: 2 }],
      }),
    );
    expect(r.ready).toBe(false);
    expect(r.diagnostics.find((d) => d.path === '/loudness/target_lufs')!.message).toMatch(/from -40 to -5/);
    const named = structuredOf<{ ready: boolean; diagnostics: { path: string; message: string }[] }>(
      await call('compose_edit', {
        project_id: projectId,
        loudness: 'radio',
        clips: [{ asset_id: ids.loud, start: 0, end: 2 }],
      }),
    );
    expect(named.diagnostics.find((d) => d.path === '/loudness')!.message).toMatch(
      /not a preset \(web, podcast, broadcast\)/,
    );
  });
});

describe('even dialogue', () => {
  const clips = () => [
    { asset_id: ids.loud, start: 0, end: 3 },
    { asset_id: ids.quiet, start: 0, end: 3 },
  ];

  it('levels two speakers 10 dB apart to within 1 dB in a preview and a local render; level_dialogue false keeps them apart', async () => {
    const p = structuredOf<Preview>(
      await call('preview_edit', { project_id: projectId, resolution: '160x90', fps: 25, clips: clips() }),
    );
    expect(Math.abs(rmsDb(p.path, 0.2, 2.8) - rmsDb(p.path, 3.2, 5.8))).toBeLessThanOrEqual(1);
    // Each was moved halfway, to their median: the loud one down 5 dB, the quiet one up 5.
    expect(p.cuts[0]!.loudness!.level_db).toBeCloseTo(-5, 0);
    expect(p.cuts[1]!.loudness!.level_db).toBeCloseTo(5, 0);
    const r = structuredOf<{ render: { done: boolean; url?: string } }>(
      await call('render_edit', {
        project_id: projectId,
        wait: true,
        resolution: '160x90',
        fps: 25,
        filename: 'levelled.mp4',
        clips: clips(),
      }),
    );
    const file = fileURLToPath(r.render.url!);
    expect(Math.abs(rmsDb(file, 0.2, 2.8) - rmsDb(file, 3.2, 5.8))).toBeLessThanOrEqual(1);
    const apart = structuredOf<Preview>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        level_dialogue: false,
        clips: clips(),
      }),
    );
    expect(rmsDb(apart.path, 0.2, 2.8) - rmsDb(apart.path, 3.2, 5.8)).toBeCloseTo(10, 0);
    expect(apart.cuts.every((c) => c.loudness!.level_db === undefined)).toBe(true);
  }, 240_000);
});

describe('levels an editor asked for', () => {
  it('plays a clip asked at volume 0.5 6 dB under its levelled neighbour (levelling first, the asked level on top)', async () => {
    // The two speakers 10 dB apart are levelled to one loudness, then the quiet one's 0.5 applies: it used to be
    // measured at its asked level and brought back up, playing 0.5 dB under, not 6.
    const clips = [
      { asset_id: ids.loud, start: 0, end: 3 },
      { asset_id: ids.quiet, start: 0, end: 3, volume: 0.5 },
    ];
    const p = structuredOf<Preview>(
      await call('preview_edit', { project_id: projectId, resolution: '160x90', fps: 25, clips }),
    );
    expect(rmsDb(p.path, 0.2, 2.8) - rmsDb(p.path, 3.2, 5.8)).toBeCloseTo(6, 0);
    const r = structuredOf<{ render: { done: boolean; url?: string } }>(
      await call('render_edit', {
        project_id: projectId,
        wait: true,
        resolution: '160x90',
        fps: 25,
        filename: 'asked.mp4',
        clips,
      }),
    );
    const file = fileURLToPath(r.render.url!);
    expect(rmsDb(file, 0.2, 2.8) - rmsDb(file, 3.2, 5.8)).toBeCloseTo(6, 0);
  }, 240_000);

  it('holds the true peak under -1 dBTP with a limiter in a preview and a render, and the render reports it', async () => {
    // A tone 1 dB under full scale raised 6 dB: +5 dBFS asked, which used to be written as it was.
    const clips = [{ asset_id: ids.hot, start: 0, end: 3, gain_db: 6 }];
    const p = structuredOf<Preview>(
      await call('preview_edit', { project_id: projectId, resolution: '160x90', fps: 25, clips }),
    );
    expect(ebur128(p.path).truePeak).toBeLessThanOrEqual(-1);
    expect(p.mix!.true_peak_db!).toBeLessThanOrEqual(-1);
    const r = await call('render_edit', {
      project_id: projectId,
      wait: true,
      resolution: '160x90',
      fps: 25,
      filename: 'limited.mp4',
      clips,
    });
    const render = structuredOf<{ render: { done: boolean; url?: string; lufs?: number; true_peak_db?: number } }>(
      r,
    ).render;
    const measured = ebur128(fileURLToPath(render.url!));
    expect(measured.truePeak).toBeLessThanOrEqual(-1);
    // What it came to, said: its loudness and true peak, as ffmpeg measures the file (±0.5).
    expect(render.lufs!).toBeCloseTo(measured.lufs, 0);
    expect(Math.abs(render.true_peak_db! - measured.truePeak)).toBeLessThanOrEqual(0.5);
    expect(textOf(r)).toMatch(/LUFS, true peak -?[\d.]+ dBTP/);
  }, 240_000);
});

describe('on the service', () => {
  it('sends neither the target nor the levelling, and says so in warnings', async () => {
    const service = await new FakeService().start();
    const remoteRoot = join(root, 'remote');
    mkdirSync(remoteRoot, { recursive: true });
    const project = service.addProject({ name: 'loud' });
    service.media.set('loud-key', files.loud);
    const v = service.addAsset(project.id, { keyname: 'loud-key', asset_type: 'video', ext: 'mov' }).id;
    const remote = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: join(remoteRoot, 'cache'),
      CUTROOM_DATA_DIR: join(remoteRoot, 'data'),
      CUTROOM_RENDER_WAIT_MS: '8000',
      CUTROOM_LOG_LEVEL: 'error',
    });
    try {
      const r = await remote.client.callTool(
        {
          name: 'render_edit',
          arguments: {
            project_id: project.id,
            loudness: 'web',
            clips: [
              { asset_id: v, start: 0, end: 2 },
              { asset_id: v, start: 2, end: 4 },
            ],
          },
        },
        { timeout: 120_000 },
      );
      const out = structuredOf<{ warnings: { path: string; message: string }[] }>(r);
      const body = service.requests.find((q: { path: string }) => q.path.endsWith('/create-edit'))!.body as Record<
        string,
        unknown
      >;
      expect(body).not.toHaveProperty('loudness');
      expect(body).not.toHaveProperty('level_dialogue');
      expect(out.warnings.find((w) => w.path === '/loudness')!.message).toMatch(
        /loudness target \(-14 LUFS\) is not sent/,
      );
      expect(out.warnings.find((w) => w.path === '/level_dialogue')!.message).toMatch(/not levelled on the service/);
    } finally {
      await remote.close();
      await service.stop();
    }
  }, 180_000);
});
