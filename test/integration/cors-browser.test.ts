// CORS in a real browser (issue 34, item 1): Debian's chromium, driven by playwright-core, opens a page the test
// serves from a loopback HTTP server, and the page's script calls the built server directly over HTTP, with fetch
// (initialize with the bearer token, the session id read from the answer's headers, tools/list, a tools/call) and with
// the SDK's client, as a browser host such as the ext-apps basic-host does. Chromium sends its own preflights and
// enforces the answers: the page can reach cutroom from http://127.0.0.1:<port> (a loopback page, allowed because
// cutroom listens on loopback) and from http://allowed.test:<port> (listed in CUTROOM_HTTP_ALLOWED_ORIGINS), and the
// same page from http://other.test:<port> is blocked by the browser. The *.test names resolve to 127.0.0.1 inside
// chromium only (--host-resolver-rules), so each origin is a real, distinct origin served by the same page server.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawOutcome, SdkOutcome } from '../browser/cors-page.js';
import { CHROMIUM, launchChromium, servePage, type ServedPage } from '../helpers/browser-page.js';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';

const token = 'browser-token-0123456789abcdef';
let cutroom: HttpServer;
let pages: ServedPage;
let pagePort: number;
let browser: Browser;

beforeAll(async () => {
  pages = await servePage('cors-page.ts', '/page.js', 'cors page');
  pagePort = pages.port;
  const dir = mkdtempSync(join(tmpdir(), 'cutroom-cors-browser-'));
  cutroom = await startHttpServer({
    CUTROOM_DATA_DIR: join(dir, 'data'),
    CUTROOM_CACHE_DIR: join(dir, 'cache'),
    CUTROOM_ALLOWED_DIRS: dir,
    CUTROOM_HTTP_TOKEN: token,
    CUTROOM_HTTP_ALLOWED_ORIGINS: `http://allowed.test:${pagePort}`,
  });
  if (CHROMIUM) {
    browser = await launchChromium(['--host-resolver-rules=MAP allowed.test 127.0.0.1, MAP other.test 127.0.0.1']);
  }
}, 120_000);
afterAll(async () => {
  await browser?.close();
  pages?.close();
  await cutroom?.stop();
});

/** Opens the page from `origin` and runs `fn` of it against cutroom; what it saw, and what the console said. */
async function fromPage<T>(
  origin: string,
  fn: 'rawCalls' | 'sdkCalls',
  name = 'from the browser',
): Promise<{ out: T; console: string[] }> {
  const page = await browser.newPage();
  const console: string[] = [];
  page.on('console', (m) => console.push(m.text()));
  try {
    await page.goto(`${origin}/`);
    expect(await page.evaluate(() => window.location.origin)).toBe(origin);
    const out = (await page.evaluate(
      ([f, url, t, n]) => window[f as 'sdkCalls'](url as string, t as string, n as string),
      [fn, cutroom.url, token, name] as const,
    )) as T;
    return { out, console };
  } finally {
    await page.close();
  }
}

describe.skipIf(!CHROMIUM)('a browser page calling cutroom over HTTP (CORS)', () => {
  for (const which of ['loopback', 'listed'] as const) {
    it(`works from an allowed origin (${which}): preflights pass, the page reads the headers it needs`, async () => {
      const origin = which === 'loopback' ? `http://127.0.0.1:${pagePort}` : `http://allowed.test:${pagePort}`;
      const { out, console } = await fromPage<RawOutcome>(origin, 'rawCalls');
      expect(out.error, console.join('\n')).toBeUndefined();
      // The 401's challenge is readable only because it is exposed (WWW-Authenticate is not a safelisted header).
      expect(out.unauthorized).toEqual({ status: 401, challenge: expect.stringMatching(/^Bearer realm="cutroom"/) });
      // cutroom is stateless (any replica answers any call): it gives no session id, and the page sees none.
      expect(out.initialize).toEqual({
        status: 200,
        server: 'cutroom',
        sessionId: null,
        protocolVersion: '2025-06-18',
      });
      expect(out.tools).toEqual(expect.arrayContaining(['create_project', 'list_projects', 'preview_edit']));
      expect(out.call).toEqual({ isError: false, projects: expect.any(Array) });
    });
  }

  it("works with the SDK's client in the page, as a browser host connects", async () => {
    const { out, console } = await fromPage<SdkOutcome>(`http://allowed.test:${pagePort}`, 'sdkCalls');
    expect(out.error, console.join('\n')).toBeUndefined();
    expect(out.server).toBe('cutroom');
    expect(out.tools).toBeGreaterThan(10);
    expect(out.created).toBe('from the browser');
    expect(out.listed).toContain('from the browser');
  });

  it('is blocked by the browser from an origin that is not allowed', async () => {
    const origin = `http://other.test:${pagePort}`;
    const raw = await fromPage<RawOutcome>(origin, 'rawCalls');
    // The very first call fails: the browser refuses to hand the page an answer without Access-Control-Allow-Origin.
    expect(raw.out.error).toMatch(/^TypeError: Failed to fetch/);
    expect(raw.out.unauthorized).toBeUndefined();
    expect(raw.console.join('\n')).toMatch(/has been blocked by CORS policy/);
    const sdk = await fromPage<SdkOutcome>(origin, 'sdkCalls', 'from a refused page');
    expect(sdk.out.error).toBeDefined();
    expect(sdk.out.server).toBeUndefined();
    // The same page, the same server: only the origin differs, and no call of the refused page's ran (its
    // create_project would have made its project).
    const made = await fromPage<SdkOutcome>(`http://127.0.0.1:${pagePort}`, 'sdkCalls', 'from an allowed page');
    expect(made.out.error).toBeUndefined();
    expect(made.out.listed).toContain('from an allowed page');
    expect(made.out.listed).not.toContain('from a refused page');
  });
});
