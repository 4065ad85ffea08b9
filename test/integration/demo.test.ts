// The README's main job: scripts/demo.mjs drives the built server end to end on the local backend.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/harness.js';
import { probe } from '../helpers/inspect-media.js';

describe('scripts/demo.mjs', () => {
  it('makes clips, imports, composes, previews and renders, and says where everything is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-demo-'));
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      CUTROOM_DEMO_DIR: join(dir, 'media'),
      CUTROOM_DATA_DIR: join(dir, 'data'),
      CUTROOM_CACHE_DIR: join(dir, 'cache'),
      VJ_API_KEY: 'ignored-by-the-demo',
    };
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve) => {
        const c = spawn(process.execPath, [join(ROOT, 'scripts/demo.mjs')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        c.stdout.on('data', (d) => (out += d));
        c.stderr.on('data', (d) => (err += d));
        c.on('close', (status) => resolve({ code: status, stdout: out, stderr: err }));
      },
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/Composed: ready=true, 3 cuts, 00:00:09\.000/);
    const sheet = /contact sheet: (\S+)/.exec(stdout)?.[1];
    expect(sheet && existsSync(sheet)).toBe(true);
    const rendered = /Rendered: (\S+\.mp4)/.exec(stdout)?.[1];
    expect(rendered && existsSync(rendered)).toBe(true);
    expect(rendered!.startsWith(join(dir, 'data'))).toBe(true);
    const m = probe(rendered!);
    expect(m).toMatchObject({ width: 1280, height: 720 });
    expect(Math.abs(m.duration - 9)).toBeLessThanOrEqual(0.04);
  }, 300_000);
});
