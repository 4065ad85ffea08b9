#!/usr/bin/env node
// The main job, end to end on the local backend, driven over stdio by a real MCP client as an agent would:
// make sample clips, create a project, import them, compose, preview, render, and say what was made.
//   node scripts/demo.mjs            (after npm ci && npm run build; scripts/quickstart.sh does all three)
// Env: CUTROOM_DEMO_DIR (sample media, default ./cutroom-demo), CUTROOM_DATA_DIR and CUTROOM_CACHE_DIR as for the
// server.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'dist', 'index.js');
const demoDir = resolve(process.env.CUTROOM_DEMO_DIR ?? 'cutroom-demo');
const say = (line = '') => process.stdout.write(`${line}\n`);

function fail(message) {
  process.stderr.write(`demo: ${message}\n`);
  process.exit(1);
}

if (!existsSync(bin)) fail(`${bin} is missing: run npm run build first (scripts/quickstart.sh does)`);
if (spawnSync('ffmpeg', ['-version']).status !== 0) fail('ffmpeg is not installed: sudo apt-get install -y ffmpeg');

// 1. Sample media: three 6 s clips with distinct pictures and tones, and a 10 s "voiceover".
const SAMPLES = {
  'city.mp4': ['-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=30:d=6', '-f', 'lavfi', '-i', 'sine=f=330:r=48000:d=6'],
  'fractal.mp4': ['-f', 'lavfi', '-i', 'mandelbrot=s=1280x720:r=30', '-f', 'lavfi', '-i', 'sine=f=440:r=48000:d=6'],
  'garden.mp4': [
    '-f',
    'lavfi',
    '-i',
    'life=s=1280x720:r=30:mold=10:ratio=0.1:life_color=#40c040:death_color=#203020',
    '-f',
    'lavfi',
    '-i',
    'sine=f=550:r=48000:d=6',
  ],
  'voiceover.m4a': ['-f', 'lavfi', '-i', 'sine=f=220:r=48000:d=10,tremolo=f=3:d=0.6'],
};
mkdirSync(demoDir, { recursive: true });
say(`Sample media in ${demoDir}`);
for (const [name, input] of Object.entries(SAMPLES)) {
  const out = join(demoDir, name);
  if (existsSync(out)) continue;
  const isAudio = name.endsWith('.m4a');
  const encode = isAudio
    ? ['-c:a', 'aac', '-b:a', '128k']
    : [
        '-t',
        '6',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-b:a',
        '128k',
        '-movflags',
        '+faststart',
      ];
  const tmp = join(demoDir, `.${name}.part${name.slice(name.lastIndexOf('.'))}`);
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...input, ...encode, tmp], {
    encoding: 'utf8',
  });
  if (r.status !== 0) fail(`making ${name}: ${r.stderr}`);
  renameSync(tmp, out);
  say(`  made ${name}`);
}

// 2. The server, as a client starts it: no API key, so the local backend; it may read the demo folder.
const env = { ...process.env, CUTROOM_ALLOWED_DIRS: demoDir };
delete env.VJ_API_KEY;
env.VJ_BACKEND = 'local';
const transport = new StdioClientTransport({ command: process.execPath, args: [bin], env, stderr: 'pipe' });
let serverLog = '';
transport.stderr?.on('data', (d) => (serverLog += d));
const client = new Client({ name: 'cutroom-demo', version: '1.0.0' });
await client.connect(transport);

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args }, { timeout: 300_000 });
  const text = r.content
    ?.filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
  if (r.isError) {
    await client.close();
    fail(`${name} failed: ${text}\n--- server log ---\n${serverLog}`);
  }
  return { data: r.structuredContent, text, content: r.content };
}

try {
  say(
    `\nServer: ${client.getServerVersion()?.name} ${client.getServerVersion()?.version}, tools: ${(await client.listTools()).tools.map((t) => t.name).join(', ')}`,
  );
  const { data: created } = await call('create_project', {
    name: `cutroom demo ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
    description: 'Three moments over a voiceover',
  });
  const projectId = created.project.id;
  say(`\nProject ${created.project.name} (${projectId})`);

  const ids = {};
  for (const name of Object.keys(SAMPLES)) {
    const { data } = await call('import_media', { project_id: projectId, path: join(demoDir, name) });
    ids[name] = data.asset.id;
    say(`  imported ${name}: ${data.kind}, ${data.duration_seconds} s -> ${data.asset.id}`);
  }

  // "Cut the three best moments of these clips over the voiceover."
  const edit = {
    project_id: projectId,
    resolution: '1280x720',
    fps: 30,
    filename: 'demo-cut.mp4',
    clips: [
      { asset_id: ids['city.mp4'], start: 1, end: 4, volume: 0.25 },
      { asset_id: ids['fractal.mp4'], start: 2, end: 5, volume: 0.25 },
      { asset_id: ids['garden.mp4'], start: 0.5, end: 3.5, volume: 0.25 },
    ],
    overlays: [{ asset_id: ids['voiceover.m4a'], at: 0.5, until: 8.5, volume: 0.9 }],
  };
  const { data: composed } = await call('compose_edit', edit);
  say(
    `\nComposed: ready=${composed.ready}, ${composed.summary.cuts.length} cuts, ${composed.summary.total_duration}${composed.diagnostics.length ? `, ${composed.diagnostics.length} diagnostics` : ''}`,
  );
  for (const c of composed.summary.cuts)
    say(`  ${c.index + 1}. ${c.timeline_start}-${c.timeline_end} from ${c.source_in}-${c.source_out}`);

  let { data: preview } = await call('preview_edit', edit);
  // A slow machine may hand the preview over before it is done: follow it as an assistant would.
  while (preview.status === 'rendering') {
    await new Promise((done) => setTimeout(done, 1000));
    preview = (await call('preview_edit', { preview_id: preview.preview_id })).data;
  }
  say(`\nPreview ${preview.resolution}, ${preview.measured_seconds} s (planned ${preview.planned_seconds} s)`);
  say(`  video:         ${preview.path}`);
  say(`  contact sheet: ${preview.sheet_path}`);
  for (const c of preview.cuts)
    say(
      `  cut ${c.index + 1}: mean ${c.loudness?.mean_db} dB, peak ${c.loudness?.peak_db} dB${c.flags.length ? ` — ${c.flags.join('; ')}` : ''}`,
    );

  let { data: rendered } = await call('render_edit', { ...edit, wait: true });
  let status = rendered.render;
  while (!status.done && !status.failed) {
    await new Promise((r) => setTimeout(r, 1000));
    status = (await call('get_render_status', { project_id: projectId, asset_id: status.asset_id })).data;
  }
  if (status.failed) fail(`the render failed: ${status.reason ?? status.status}`);
  const file = fileURLToPath(status.url);
  const probe = JSON.parse(
    spawnSync(
      'ffprobe',
      [
        '-v',
        'error',
        '-select_streams',
        'v:0',
        '-show_entries',
        'format=duration:stream=width,height',
        '-of',
        'json',
        file,
      ],
      { encoding: 'utf8' },
    ).stdout,
  );
  say(`\nRendered: ${file}`);
  say(`  ${probe.streams[0].width}x${probe.streams[0].height}, ${Number(probe.format.duration)} s`);
  say(`\nDone. Connect a client to the same data (README, "Connect a client") and ask: "show me my projects".`);
} finally {
  await client.close();
}
