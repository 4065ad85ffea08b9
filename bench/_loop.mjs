import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readFileSync, rmSync } from 'node:fs';
const ids = JSON.parse(readFileSync('/tmp/cutroom-bench-mix-v1/bench-ids.json', 'utf8'));
rmSync('/tmp/prof/cache', { recursive: true, force: true });
const transport = new StdioClientTransport({ command: process.execPath, args: ['/work/main/dist/index.js'], env: { PATH: process.env.BENCH_PATH ?? process.env.PATH, HOME: '/tmp', CUTROOM_DATA_DIR: '/tmp/cutroom-bench-mix-v1/bench-data', CUTROOM_CACHE_DIR: '/tmp/prof/cache', CUTROOM_ALLOWED_DIRS: '/tmp/cutroom-bench-mix-v1', CUTROOM_LOG_LEVEL: 'debug', CUTROOM_RENDER_WAIT_MS: '55000' }, stderr: 'inherit' });
const client = new Client({ name: 'p', version: '1' });
await client.connect(transport);
const edit = (shift) => ({ project_id: ids.project, resolution: '1280x720', fps: 30, clips: Array.from({ length: 12 }, (_, i) => ({ asset_id: ids.v, start: i * 6 + (i === 6 ? shift : 0), end: i * 6 + 5 + (i === 6 ? shift : 0) })), overlays: [{ asset_id: ids.b, at: 0, until: 60, gain_db: -6 }] });
for (const shift of [0, 0.5]) {
  const c = await client.callTool({ name: 'compose_edit', arguments: edit(shift) });
  const t = performance.now();
  console.log('T0', Date.now() / 1000);
  const r = await client.callTool({ name: 'preview_edit', arguments: { edit_id: c.structuredContent.edit_id } }, { timeout: 600000 });
  console.log('took', ((performance.now() - t) / 1000).toFixed(2), r.structuredContent?.status);
}
await client.close();
