// cutroom's own OAuth 2.1 sign-in (issue 48), end to end with a client nobody here wrote: the MCP TypeScript SDK's
// OAuth support against the built server over HTTP (local backend). The SDK finds the authorization server from the
// 401's resource_metadata (RFC 9728), registers itself (RFC 7591), sends the person to the sign-in page with PKCE and
// the resource (RFC 8707); headless Chromium fills in the page as a person would; the SDK takes the code, gets tokens
// and calls tools, and later refreshes its token when the server refuses the old one. Each person signed in is a
// caller of their own; the operator's bearer token keeps working; tokens for another audience, expired, wrongly
// signed, from another issuer or with too few scopes are refused; no token, code, password or key reaches the log.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { SignJWT, generateKeyPair, importJWK, type JWTPayload } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveSecrets } from '../../src/auth/secrets.js';
import { BIN, textOf } from '../helpers/harness.js';
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

const SECRET = 'oauth-test-secret-0123456789abcdef-0123456789';
const TOKEN = 'oauth-operator-token-0123456789abcdef';
const PASSWORDS = { alice: 'alice has a long password', bob: 'bob has another password' };
const root = mkdtempSync(join(tmpdir(), 'cutroom-oauth-'));
let srv: HttpServer;
let base: string;
let browser: Browser | undefined;
let callback: Awaited<ReturnType<typeof callbackServer>>;
/** Everything secret the flows handed out, to look for in the server's log. */
const secrets: string[] = [...Object.values(PASSWORDS), SECRET, TOKEN];

const hash = (password: string) => {
  const r = spawnSync(process.execPath, [BIN, 'hash-password'], { input: `${password}\n`, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
};

beforeAll(async () => {
  mkdirSync(join(root, 'allowed'), { recursive: true });
  writeFileSync(
    join(root, 'users'),
    `# people who may sign in\nalice:${hash(PASSWORDS.alice)}\nbob:${hash(PASSWORDS.bob)}\n`,
  );
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  srv = await startHttpServer(
    {
      CUTROOM_PUBLIC_URL: base,
      CUTROOM_OAUTH_SECRET: SECRET,
      CUTROOM_OAUTH_USERS_FILE: join(root, 'users'),
      CUTROOM_HTTP_TOKEN: TOKEN,
      CUTROOM_DATA_DIR: join(root, 'data'),
      CUTROOM_CACHE_DIR: join(root, 'cache'),
      CUTROOM_ALLOWED_DIRS: join(root, 'allowed'),
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
});

/** Fills in cutroom's sign-in page as `name` and allows. */
const signInAs = (name: keyof typeof PASSWORDS) => async (page: Page) => {
  await page.fill('#name', name);
  await page.fill('#password', PASSWORDS[name]);
  await page.click('button[value=allow]');
};

/** A host's connection through the SDK's OAuth support: the first connect is refused and sends the person to sign in. */
async function signedInClient(
  provider: TestOAuthClient,
  act: (page: Page) => Promise<void>,
): Promise<{ client: Client; code: URLSearchParams; page?: string }> {
  const url = new URL(`${base}/mcp`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(new Client({ name: 'oauth-host', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
  const code = await authorizeInBrowser(browser!, provider.authorizations.at(-1)!, callback, act);
  await first.finishAuth(code);
  const client = new Client({ name: 'oauth-host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return { client, code };
}

/** A raw call of tools/list with this Authorization header (or none). */
async function rawList(authorization?: string): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

const projectNames = async (client: Client) => {
  const r = await client.callTool({ name: 'list_projects', arguments: {} });
  return ((r.structuredContent as { projects: { name: string }[] }).projects ?? []).map((p) => p.name).sort();
};

describe('the protected resource (RFC 9728)', () => {
  it("answers a call without credentials with 401 and where to sign in; serves its metadata and the server's", async () => {
    const res = await rawList();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="cutroom"`,
    );
    const prm = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
      string,
      unknown
    >;
    expect(prm).toEqual({
      resource: `${base}/mcp`,
      authorization_servers: [base],
      scopes_supported: ['cutroom'],
      bearer_methods_supported: ['header'],
      resource_name: 'cutroom',
    });
    const as = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: base,
      registration_endpoint: `${base}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
    });
    expect(as.scopes_supported).toEqual(expect.arrayContaining(['cutroom', 'offline_access']));
  });
});

describe.skipIf(!CHROMIUM)('signing in with the SDK client and a browser', () => {
  let alice: Client;
  let aliceProvider: TestOAuthClient;

  it('discovers, registers, sends the person to sign in with PKCE and the resource, and calls tools with the token', async () => {
    aliceProvider = new TestOAuthClient(callback.url, 'Claude (test)');
    let shown = '';
    const { client, code } = await signedInClient(aliceProvider, async (page) => {
      shown = await page.locator('main').innerText();
      await page.screenshot({ path: join(root, 'sign-in.png') });
      await signInAs('alice')(page);
    });
    alice = client;
    // Registration and discovery, as the SDK did them.
    expect(aliceProvider.info?.client_id).toMatch(/\S{8,}/);
    expect(aliceProvider.discovery?.authorizationServerUrl).toBe(base);
    // The authorization request: PKCE (S256), the resource, the scopes the server asked for (and offline_access).
    const asked = aliceProvider.authorizations[0]!;
    expect(asked.origin + asked.pathname).toBe(`${base}/oauth/authorize`);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(asked.searchParams.get('resource')).toBe(`${base}/mcp`);
    expect(asked.searchParams.get('scope')?.split(' ').sort()).toEqual(['cutroom', 'offline_access']);
    // The page said who asks and for what, in words.
    expect(shown).toContain('Claude (test) asks to use cutroom for you (it returns to 127.0.0.1:');
    expect(shown).toMatch(/cutroom: use cutroom's tools and resources as you/);
    expect(shown).toMatch(/offline_access: stay signed in/);
    expect(code.get('iss')).toBe(base);
    secrets.push(code.get('code')!, aliceProvider.saved!.access_token, aliceProvider.saved!.refresh_token!);
    // The token: a JWT for this resource, with the scope, lasting the configured hour.
    expect(aliceProvider.saved).toMatchObject({ token_type: 'Bearer', scope: expect.stringContaining('cutroom') });
    expect(aliceProvider.saved!.refresh_token).toBeTruthy();
    const claims = JSON.parse(
      Buffer.from(aliceProvider.saved!.access_token.split('.')[1]!, 'base64url').toString(),
    ) as JWTPayload;
    expect(claims).toMatchObject({ iss: base, aud: `${base}/mcp`, sub: 'user-alice' });
    // Calls go through with it.
    const created = await alice.callTool({
      name: 'create_project',
      arguments: { name: 'alice-film', description: 'x' },
    });
    expect(created.isError, textOf(created)).toBeFalsy();
    expect(await projectNames(alice)).toEqual(['alice-film']);
  }, 120_000);

  it('refreshes: a token the server refuses is renewed with the refresh token, and the call goes through', async () => {
    const before = aliceProvider.saved!;
    // The host's stored access token goes bad (as an expired one would): the server answers 401 and the SDK refreshes.
    aliceProvider.saved = { ...before, access_token: `${before.access_token.slice(0, -4)}AAAA` };
    expect(await projectNames(alice)).toEqual(['alice-film']);
    expect(aliceProvider.saved.access_token).not.toBe(before.access_token);
    expect(aliceProvider.saved.refresh_token).toBeTruthy();
    secrets.push(aliceProvider.saved.access_token, aliceProvider.saved.refresh_token!);
  }, 60_000);

  it('each person is a caller of their own; the operator keeps their bearer token and their own projects', async () => {
    const { client: bob } = await signedInClient(new TestOAuthClient(callback.url, 'Another host'), signInAs('bob'));
    expect(await projectNames(bob)).toEqual([]);
    await bob.callTool({ name: 'create_project', arguments: { name: 'bob-film', description: 'x' } });
    expect(await projectNames(bob)).toEqual(['bob-film']);
    expect(await projectNames(alice)).toEqual(['alice-film']);
    const operator = new Client({ name: 'script', version: '1.0.0' });
    await operator.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    expect(await projectNames(operator)).toEqual([]);
    await bob.close();
    await operator.close();
  }, 120_000);

  it('a wrong password is refused on the page, which says so; Deny sends the app access_denied', async () => {
    const provider = new TestOAuthClient(callback.url, 'Denied host');
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'h', version: '1' }).connect(first)).rejects.toThrow(UnauthorizedError);
    let alert = '';
    const answer = await authorizeInBrowser(browser!, provider.authorizations[0]!, callback, async (page) => {
      await page.fill('#name', 'alice');
      await page.fill('#password', 'not her password');
      await page.click('button[value=allow]');
      alert = await page.locator('[role=alert]').innerText();
      await page.click('button[value=deny]');
    });
    expect(alert).toBe('Wrong name or password.');
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('code')).toBeNull();
  }, 60_000);
});

describe('tokens the server refuses', () => {
  const keys = deriveSecrets(SECRET);
  const valid = (): JWTPayload => ({
    iss: base,
    aud: `${base}/mcp`,
    sub: 'user-alice',
    scope: 'cutroom',
    client_id: 'crafted',
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 600,
  });
  const sign = async (payload: JWTPayload, key?: CryptoKey) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', kid: keys.signingKey.kid, typ: 'at+jwt' })
      .sign(key ?? ((await importJWK(keys.signingKey, 'ES256')) as CryptoKey));

  it('accepts a token signed with its key, for it, in time, with its scope (the control)', async () => {
    const res = await rawList(`Bearer ${await sign(valid())}`);
    expect(res.status).toBe(200);
  });

  it.each([
    ['for another audience', { aud: 'https://other.example/mcp' }, 401, /another audience/],
    ['expired', { exp: Math.floor(Date.now() / 1000) - 120, iat: Math.floor(Date.now() / 1000) - 900 }, 401, /expired/],
    ['from another issuer', { iss: 'https://idp.example' }, 401, /another issuer/],
    ['with too few scopes', { scope: 'openid' }, 403, /insufficient_scope/],
  ] as const)('refuses a token %s', async (_what, change, status, said) => {
    const res = await rawList(`Bearer ${await sign({ ...valid(), ...change })}`);
    expect(res.status).toBe(status);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(said);
    expect(challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('refuses a token signed with another key under its key id', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const res = await rawList(`Bearer ${await sign(valid(), privateKey as CryptoKey)}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/signature does not verify/);
  });

  it('refuses a token naming an account it never made', async () => {
    const res = await rawList(`Bearer ${await sign({ ...valid(), sub: 'user-mallory' })}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/no longer here/);
  });
});

describe('the log', () => {
  it('holds no token, code, password or secret', () => {
    const log = srv.stderr();
    expect(log).toMatch(/oauth: sign-in at /);
    for (const secret of secrets) expect(log.includes(secret), `the log shows ${secret.slice(0, 12)}…`).toBe(false);
  });
});
