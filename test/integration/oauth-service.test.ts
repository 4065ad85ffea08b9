// cutroom's own sign-in on the service backend (issue 48): a person the operator lists signs in with their password
// and gives their Video Jungle key once (kept sealed: never in plain text on disk, never in the log), and is served
// with it from then on, the next sign-in included; anyone may instead sign in with their key, and is then the same
// caller as when they send that key as a bearer (which keeps working for scripts). A key the service refuses is
// refused on the page. Driven with the SDK client's OAuth support and Chromium, against the fake service.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { BIN } from '../helpers/harness.js';
import { startHttpServer, type HttpServer } from '../helpers/http-server.js';
import {
  TestOAuthClient,
  authorizeInBrowser,
  callbackServer,
  freePort,
  launchChromium,
} from '../helpers/oauth-client.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
});

const KEY_ALICE = 'alice-service-key-0123456789abcdef';
const KEY_DAVE = 'dave-service-key-0123456789abcdef';
const PASSWORD = 'alice has a long password';
const root = mkdtempSync(join(tmpdir(), 'cutroom-oauth-service-'));
let service: FakeService;
let srv: HttpServer;
let base: string;
let browser: Browser | undefined;
let callback: Awaited<ReturnType<typeof callbackServer>>;

beforeAll(async () => {
  service = await new FakeService().start();
  service.addProject({ name: "alice's film", owner: service.addTenant(KEY_ALICE) });
  service.addProject({ name: "dave's film", owner: service.addTenant(KEY_DAVE) });
  const hash = spawnSync(process.execPath, [BIN, 'hash-password'], { input: `${PASSWORD}\n`, encoding: 'utf8' });
  writeFileSync(join(root, 'users'), `alice:${hash.stdout.trim()}\n`);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  srv = await startHttpServer(
    {
      VJ_BACKEND: 'remote',
      VJ_API_URL: service.url,
      CUTROOM_PUBLIC_URL: base,
      CUTROOM_OAUTH_SECRET: 'service-test-secret-0123456789abcdef-0123',
      CUTROOM_OAUTH_USERS_FILE: join(root, 'users'),
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_CACHE_DIR: join(root, 'cache'),
      CUTROOM_LOG_LEVEL: 'debug',
    },
    ['--port', String(port)],
  );
  callback = await callbackServer();
  if (CHROMIUM) browser = await launchChromium(CHROMIUM);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  callback?.close();
  await srv?.stop();
  await service?.stop();
});

/** Signs in through the page with `act`, and returns the connected client (or the page's alert when it refused). */
async function signIn(act: (page: Page) => Promise<void>): Promise<Client> {
  const provider = new TestOAuthClient(callback.url);
  const url = new URL(`${base}/mcp`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(new Client({ name: 'h', version: '1' }).connect(first)).rejects.toThrow(UnauthorizedError);
  await first.finishAuth(await authorizeInBrowser(browser!, provider.authorizations[0]!, callback, act));
  const client = new Client({ name: 'h', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return client;
}

const projects = async (client: Client) =>
  (
    (await client.callTool({ name: 'list_projects', arguments: {} })).structuredContent as {
      projects: { name: string }[];
    }
  ).projects.map((p) => p.name);

/** Every file under a folder, as text. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'));

describe.skipIf(!CHROMIUM)('signing in on the service backend', () => {
  it('a listed person gives their key once: their calls use it, and the next sign-in needs only the password', async () => {
    let asked = '';
    const alice = await signIn(async (page) => {
      asked = await page.locator('label[for=service_key]').innerText();
      await page.fill('#name', 'alice');
      await page.fill('#password', PASSWORD);
      await page.fill('#service_key', KEY_ALICE);
      await page.click('button[value=allow]');
    });
    expect(asked).toBe('Your Video Jungle API key');
    expect(await projects(alice)).toEqual(["alice's film"]);
    const again = await signIn(async (page) => {
      await page.fill('#name', 'alice');
      await page.fill('#password', PASSWORD);
      await page.click('button[value=allow]');
    });
    expect(await projects(again)).toEqual(["alice's film"]);
    await alice.close();
    await again.close();
  }, 120_000);

  it('anyone may sign in with their key instead, and is the same caller as with that key as a bearer', async () => {
    const dave = await signIn(async (page) => {
      await page.fill('#key', KEY_DAVE);
      await page.click('button[value=allow]');
    });
    expect(await projects(dave)).toEqual(["dave's film"]);
    await dave.callTool({ name: 'create_project', arguments: { name: 'made signed in', description: 'x' } });
    const script = new Client({ name: 'script', version: '1' });
    await script.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${KEY_DAVE}` } },
      }),
    );
    expect((await projects(script)).sort()).toEqual(["dave's film", 'made signed in']);
    await dave.close();
    await script.close();
  }, 120_000);

  it('a key the service refuses is refused on the page, and nothing is issued', async () => {
    const provider = new TestOAuthClient(callback.url);
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'h', version: '1' }).connect(first)).rejects.toThrow(UnauthorizedError);
    let alert = '';
    const answer = await authorizeInBrowser(browser!, provider.authorizations[0]!, callback, async (page) => {
      await page.fill('#key', 'not-a-key-the-service-knows-0123');
      await page.click('button[value=allow]');
      alert = await page.locator('[role=alert]').innerText();
      await page.click('button[value=deny]');
    });
    expect(alert).toMatch(/^The service refused that key: it answered 401/);
    expect(answer.get('code')).toBeNull();
  }, 60_000);

  it('keeps the keys sealed: not in plain text on disk, not in the log', () => {
    const kept = filesUnder(join(root, 'data', 'auth'));
    expect(kept.length).toBeGreaterThan(0);
    for (const text of kept) {
      expect(text).not.toContain(KEY_ALICE);
      expect(text).not.toContain(KEY_DAVE);
      expect(text).not.toContain(PASSWORD);
    }
    for (const secret of [KEY_ALICE, KEY_DAVE, PASSWORD]) expect(srv.stderr()).not.toContain(secret);
  });
});
