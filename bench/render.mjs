// Issue 10, item 8: a local render_edit (the whole tool call until the render is done: checks, one ffmpeg graph at
// delivery quality, libx264 fast crf 20, AAC 192k) against a hand-written single ffmpeg command doing the same
// edit at the same settings, paired round by round with the order alternating. The edit: 12 cuts of 5 s from a
// 720p and a 1080p source with a voiceover at 0.5, rendered at 1280x720, 30 fps.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, stats } from './lib.mjs';
import { makeOnce, testSource } from './media.mjs';

const MEDIA = join(tmpdir(), 'cutroom-bench-media-v1');
const REPS = Number(process.env.BENCH_REPS ?? 3);

const make = (name, args) => makeOnce(join(MEDIA, name), args);
// The same sources as the other benchmarks (cached between runs).
const source = (name, size, seconds, freq) => testSource(join(MEDIA, name), size, seconds, freq);

function ffmpeg(args) {
  return new Promise((resolve, reject) => {
    const c = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(err))));
  });
}

export async function run() {
  const src = {
    a720: source('a720-90s.mp4', '1280x720', 90, 440),
    b1080: source('b1080-90s.mp4', '1920x1080', 90, 550),
    voice: make('voice-60s.m4a', ['-f', 'lavfi', '-i', 'sine=f=660:r=48000:d=60', '-c:a', 'aac', '-b:a', '96k']),
  };
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-render-'));
  const { client } = await connect({
    CUTROOM_DATA_DIR: join(root, 'data'),
    CUTROOM_CACHE_DIR: join(root, 'cache'),
    CUTROOM_ALLOWED_DIRS: MEDIA,
    CUTROOM_RENDER_WAIT_MS: '55000',
    CUTROOM_RENDER_POLL_MS: '20',
    CUTROOM_LOG_LEVEL: 'error',
  });
  const tool = async (name, args) => {
    const r = await client.callTool(
      { name, arguments: args },
      { timeout: 600_000, resetTimeoutOnProgress: true, onprogress: () => {} },
    );
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  try {
    const project = (await tool('create_project', { name: 'bench', description: 'render' })).project.id;
    const ids = {};
    for (const [k, file] of Object.entries(src))
      ids[k] = (await tool('import_media', { project_id: project, path: file })).asset.id;

    const cutsOf = (round) =>
      Array.from({ length: 12 }, (_, i) => ({ asset: i % 2 ? 'b1080' : 'a720', start: 5 + i * 6.5 + round * 0.1 }));
    const edit = (round) => ({
      project_id: project,
      resolution: '1280x720',
      fps: 30,
      clips: cutsOf(round).map((c) => ({ asset_id: ids[c.asset], start: c.start, end: c.start + 5 })),
      overlays: [{ asset_id: ids.voice, at: 0, volume: 0.5 }],
    });
    const renderOnce = async (round) => {
      const t = performance.now();
      let r = (await tool('render_edit', { ...edit(round), wait: true })).render;
      // (A render longer than the wait: its status asked every 250 ms; get_render_status returns the status itself.)
      while (!r.done && !r.failed) {
        await new Promise((ok) => setTimeout(ok, 250));
        r = await tool('get_render_status', { project_id: project, asset_id: r.asset_id });
      }
      if (r.failed) throw new Error(`render failed: ${JSON.stringify(r)}`);
      return (performance.now() - t) / 1000;
    };
    const handOut = join(root, 'hand.mp4');
    const handOnce = async (round) => {
      const a = [];
      const cuts = cutsOf(round);
      cuts.forEach((c) => a.push('-ss', String(c.start), '-t', '5', '-i', src[c.asset]));
      a.push('-t', '60', '-i', src.voice);
      const g = cuts.map(
        (_, i) => `[${i}:v]scale=1280:720,setsar=1,fps=30[v${i}];[${i}:a]aresample=48000,atrim=0:5[a${i}]`,
      );
      g.push(`${cuts.map((_, i) => `[v${i}][a${i}]`).join('')}concat=n=12:v=1:a=1[v][a]`);
      g.push('[12:a]aresample=48000,volume=0.5[o];[a][o]amix=inputs=2:duration=first:normalize=0[m]');
      a.push(
        '-filter_complex',
        g.join(';'),
        '-map',
        '[v]',
        '-map',
        '[m]',
        '-c:v',
        'libx264',
        '-preset',
        'fast',
        '-crf',
        '20',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-b:a',
        '192k',
        '-movflags',
        '+faststart',
        handOut,
      );
      const t = performance.now();
      await ffmpeg(a);
      return (performance.now() - t) / 1000;
    };

    const ours = [];
    const hand = [];
    for (let i = 0; i < REPS; i++) {
      // A new edit each round (every cut shifted by 0.1 s); the order alternates against drifting load.
      if (i % 2 === 0) {
        ours.push(await renderOnce(i + 1));
        hand.push(await handOnce(i + 1));
      } else {
        hand.push(await handOnce(i + 1));
        ours.push(await renderOnce(i + 1));
      }
      console.log(
        `round ${i + 1}: render_edit ${ours[i].toFixed(1)} s, hand-written ${hand[i].toFixed(1)} s => ${(ours[i] / hand[i]).toFixed(3)}x`,
      );
    }
    const m = (a) => stats(a).median;
    const out = {
      render_s: m(ours),
      hand_s: m(hand),
      ratio: m(ours) / m(hand),
      paired_ratio: m(ours.map((o, i) => o / hand[i])),
    };
    console.log(
      `local render_edit, 60 s / 12 cuts at 1280x720 (fast, crf 20): median ${out.render_s.toFixed(1)} s; hand-written: ${out.hand_s.toFixed(1)} s`,
    );
    console.log(`=> ${out.ratio.toFixed(3)}x of medians, ${out.paired_ratio.toFixed(3)}x median of paired rounds`);
    return out;
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}
