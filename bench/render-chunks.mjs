// Issue 46, item 3: what a render in chunks costs now that a join between chunks is crossfaded (each chunk's sound
// runs half a crossfade beyond its ends; the join of the chunks overlaps them). A local render_edit at delivery
// quality (libx264 fast CRF 20, AAC 192k, 640x360: a small picture, so the sound's share shows) of 16 cuts of 2.5 s
// from a 90 s source of moving picture over room tone (pink noise), every join carrying sound handles (as cuts by
// words do: each join is crossfaded). Rendered in chunks (CUTROOM_FFMPEG_MAX_INPUTS=4: 4 chunks, 3 joins between
// them) and in one process (64), and, with BENCH_VS_BIN (another build's dist/index.js), in chunks by that build: in
// turn each round (the order rotating against drifting load), a new edit each round; ratios taken round by round.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, connect, stats } from './lib.mjs';
import { makeOnce } from './media.mjs';

const MEDIA = join(tmpdir(), 'cutroom-bench-chunks-v1');
const REPS = Number(process.env.BENCH_REPS ?? 3);
const CUTS = 16;

const source = () =>
  makeOnce(join(MEDIA, 'room-720p-90s.mp4'), [
    ...['-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=30:d=90'],
    ...['-f', 'lavfi', '-i', 'anoisesrc=c=pink:a=0.1:r=48000:d=90:seed=3'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-pix_fmt', 'yuv420p'],
    ...['-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart'],
  ]);

export async function run() {
  const file = source();
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-chunks-'));
  const variants = [
    { name: 'in chunks', bin: BIN, maxInputs: '4' },
    { name: 'one process', bin: BIN, maxInputs: '64' },
    ...(process.env.BENCH_VS_BIN ? [{ name: 'in chunks (vs)', bin: process.env.BENCH_VS_BIN, maxInputs: '4' }] : []),
  ];
  const servers = [];
  try {
    for (const [i, v] of variants.entries()) {
      const { client } = await connect(
        {
          CUTROOM_DATA_DIR: join(root, `data${i}`),
          CUTROOM_CACHE_DIR: join(root, `cache${i}`),
          CUTROOM_ALLOWED_DIRS: MEDIA,
          CUTROOM_RENDER_WAIT_MS: '55000',
          CUTROOM_RENDER_POLL_MS: '20',
          CUTROOM_FFMPEG_MAX_INPUTS: v.maxInputs,
          CUTROOM_LOG_LEVEL: 'error',
        },
        v.bin,
      );
      const tool = async (name, args) => {
        const r = await client.callTool(
          { name, arguments: args },
          { timeout: 600_000, resetTimeoutOnProgress: true, onprogress: () => {} },
        );
        if (r.isError) throw new Error(`${v.name}: ${name}: ${JSON.stringify(r.content)}`);
        return r.structuredContent;
      };
      const project = (await tool('create_project', { name: 'bench', description: 'chunks' })).project.id;
      const asset = (await tool('import_media', { project_id: project, path: file })).asset.id;
      servers.push({ ...v, client, tool, project, asset, times: [] });
    }
    // Cut i from 3.5 s apart in the source, each join with 20 ms of pause claimed either side.
    const edit = (s, round) => ({
      video_output_resolution: '640x360',
      video_output_fps: 30,
      video_output_filename: `chunks-${round}.mp4`,
      video_series_sequential: Array.from({ length: CUTS }, (_, i) => ({
        video_id: s.asset,
        video_start_time: 1 + i * 3.5 + round * 0.1,
        video_end_time: 3.5 + i * 3.5 + round * 0.1,
        sound_handles: { ...(i > 0 ? { before: 0.02 } : {}), ...(i < CUTS - 1 ? { after: 0.02 } : {}) },
      })),
    });
    const renderOnce = async (s, round) => {
      const t = performance.now();
      let r = (await s.tool('render_edit', { project_id: s.project, edit: edit(s, round), wait: true })).render;
      // (A render longer than the wait: its status asked every 250 ms, the status itself.)
      while (!r.done && !r.failed) {
        await new Promise((ok) => setTimeout(ok, 250));
        r = await s.tool('get_render_status', { project_id: s.project, asset_id: r.asset_id });
      }
      if (r.failed) throw new Error(`${s.name}: render failed: ${JSON.stringify(r)}`);
      return (performance.now() - t) / 1000;
    };
    for (let round = 0; round < REPS; round++) {
      const order = servers.map((_, i) => servers[(i + round) % servers.length]);
      for (const s of order) s.times.push(await renderOnce(s, round + 1));
      console.log(
        `round ${round + 1}: ${servers.map((s) => `${s.name} ${s.times[round].toFixed(1)} s`).join(', ')} => ` +
          servers
            .slice(1)
            .map((s) => `${(servers[0].times[round] / s.times[round]).toFixed(3)}x of ${s.name}`)
            .join(', '),
      );
    }
    const out = {};
    for (const s of servers) out[`${s.name}_s`] = stats(s.times).median;
    for (const s of servers.slice(1))
      out[`vs ${s.name}`] = stats(servers[0].times.map((t, i) => t / s.times[i])).median;
    console.log(
      `render_edit, ${CUTS} cuts of 2.5 s at 640x360, every join crossfaded: ` +
        servers.map((s) => `${s.name} median ${out[`${s.name}_s`].toFixed(1)} s`).join(', '),
    );
    console.log(
      `=> in chunks: ${servers
        .slice(1)
        .map((s) => `${out[`vs ${s.name}`].toFixed(3)}x ${s.name} (median of paired rounds)`)
        .join(', ')}`,
    );
    return out;
  } finally {
    for (const s of servers) await s.client.close();
    rmSync(root, { recursive: true, force: true });
  }
}
