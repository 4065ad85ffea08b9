// The ext-apps example host against the local backend (issue 48): basic-host is a page on http://localhost:8080 that
// connects with the SDK's Streamable HTTP client to a bare URL and sends no credentials, so cutroom's local backend,
// which answers only with its token, refused it. With CUTROOM_HTTP_NO_AUTH (loopback only) it connects: a page
// served from http://localhost:<port>, run in Debian's chromium, does what basic-host does on connecting (tools/list,
// the view's resource by the URI a tool names, a call). Without it the same page is refused (401), and the setting is
// refused beyond loopback, on the service backend and together with OAuth.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostOutcome } from '../browser/cors-page.js';
import { BIN, baseEnv } from '../helpers/harness.js';
import { CHROMIUM, launchChromium, servePage, type ServedPage } from '../helpers/browser-page.js';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';

let pages: ServedPage;
let pagePort: number;
let browser: Browser;
const servers: HttpServer[] = [];

function localEnv(extra: Record<string, string> = {}): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-example-host-'));
  return {
    CUTROOM_DATA_DIR: join(dir, 'data'),
    CUTROOM_CACHE_DIR: join(dir, 'cache'),
    CUTROOM_ALLOWED_DIRS: dir,
    ...extra,
  };
}

beforeAll(async () => {
  pages = await servePage('cors-page.ts', '/page.js', 'host');
  pagePort = pages.port;
  if (CHROMIUM) browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  pages?.close();
  for (const s of servers) await s.stop();
});

/** The page, from http://localhost:<port> as basic-host is served, connecting to `url` as basic-host does. */
async function hostCalls(url: string): Promise<{ out: HostOutcome; console: string[] }> {
  const page = await browser.newPage();
  const console: string[] = [];
  page.on('console', (m) => console.push(m.text()));
  try {
    await page.goto(`http://localhost:${pagePort}/`);
    const out = await page.evaluate((u) => window.hostCalls(u), url);
    return { out, console };
  } finally {
    await page.close();
  }
}

describe.skipIf(!CHROMIUM)('the ext-apps example host (no credentials) and the local backend', () => {
  it('connects with CUTROOM_HTTP_NO_AUTH on loopback: tools, the view, a call', async () => {
    const s = await startHttpServer(localEnv({ CUTROOM_HTTP_NO_AUTH: '1' }));
    servers.push(s);
    expect(s.stderr()).toMatch(/WITHOUT authentication \(CUTROOM_HTTP_NO_AUTH\)/);
    const { out, console } = await hostCalls(s.url);
    expect(out.error, console.join('\n')).toBeUndefined();
    expect(out.server).toBe('cutroom');
    expect(out.tools).toEqual(expect.arrayContaining(['create_project', 'preview_edit']));
    expect(out.view).toMatchObject({ uri: 'ui://cutroom/preview', mimeType: 'text/html;profile=mcp-app' });
    expect(out.view!.bytes).toBeGreaterThan(100_000);
    expect(out.created).toBe('from the example host');
  }, 120_000);

  it('is refused without it (the local backend answers only with its token)', async () => {
    const s = await startHttpServer(localEnv({ CUTROOM_HTTP_TOKEN: 'example-host-token-0123456789' }));
    servers.push(s);
    const { out } = await hostCalls(s.url);
    expect(out.error).toMatch(/401|Unauthorized|bearer token/i);
    expect(out.server).toBeUndefined();
  }, 120_000);
});

describe('CUTROOM_HTTP_NO_AUTH is refused where it would expose files', () => {
  const refused = (env: Record<string, string>, host = '127.0.0.1') =>
    spawnSync(process.execPath, [BIN, '--http', '--port', '0', '--host', host], {
      env: baseEnv(env),
      encoding: 'utf8',
      timeout: 20_000,
    });

  it('beyond loopback', () => {
    const r = refused(localEnv({ CUTROOM_HTTP_NO_AUTH: '1' }), '0.0.0.0');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/CUTROOM_HTTP_NO_AUTH .* only on loopback: refusing to listen on 0\.0\.0\.0/);
  });

  it('on the service backend, and with OAuth sign-in', () => {
    const remote = refused(
      localEnv({ CUTROOM_HTTP_NO_AUTH: '1', VJ_BACKEND: 'remote', VJ_API_URL: 'http://127.0.0.1:9' }),
    );
    expect(remote.status).toBe(2);
    expect(remote.stderr).toMatch(/CUTROOM_HTTP_NO_AUTH is for the local backend/);
    const oauth = refused(
      localEnv({
        CUTROOM_HTTP_NO_AUTH: '1',
        CUTROOM_OAUTH_SECRET: 'a-secret-of-at-least-32-characters-0123456789',
        CUTROOM_PUBLIC_URL: 'http://127.0.0.1:8808',
      }),
    );
    expect(oauth.status).toBe(2);
    expect(oauth.stderr).toMatch(/CUTROOM_HTTP_NO_AUTH and OAuth sign-in .* exclude each other/);
  });
});
