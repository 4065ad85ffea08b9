// cutroom with the company's identity provider (issue 48): a separate issuer (oidc-provider run on its own,
// test/fixtures/idp.mjs) that cutroom is told to trust with CUTROOM_OAUTH_ISSUER. The MCP TypeScript SDK's OAuth
// support finds that issuer from cutroom's protected resource metadata, registers with it, signs in on its pages
// (driven in Chromium), and calls cutroom's tools with the JWT it issues; cutroom reads the issuer's metadata and key
// set (JWKS) itself. Tokens the same issuer made for another resource, expired, signed with another key, or without
// cutroom's scope are refused.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type JWTPayload } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, baseEnv, textOf } from '../helpers/harness.js';
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

const root = mkdtempSync(join(tmpdir(), 'cutroom-idp-'));
const OTHER = 'https://other.example/mcp';
let idp: ChildProcess;
let idpUrl: string;
let idpKey: CryptoKey;
let idpJwk: JWK & { kid: string };
let srv: HttpServer;
let base: string;
let browser: Browser | undefined;
let callback: Awaited<ReturnType<typeof callbackServer>>;

beforeAll(async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  idpKey = privateKey as CryptoKey;
  idpJwk = { ...(await exportJWK(privateKey)), kid: 'company-key-1', alg: 'ES256', use: 'sig' };
  const [idpPort, port] = [await freePort(), await freePort()];
  idpUrl = `http://127.0.0.1:${idpPort}`;
  base = `http://127.0.0.1:${port}`;
  idp = spawn(process.execPath, [join(ROOT, 'test/fixtures/idp.mjs')], {
    env: baseEnv({ IDP_PORT: String(idpPort), IDP_JWK: JSON.stringify(idpJwk), IDP_RESOURCES: `${base}/mcp,${OTHER}` }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    idp.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('idp listening on')) resolve();
    });
    idp.once('exit', (code) => reject(new Error(`the IdP exited ${code}: ${err}`)));
  });
  mkdirSync(join(root, 'allowed'), { recursive: true });
  srv = await startHttpServer(
    {
      CUTROOM_PUBLIC_URL: base,
      CUTROOM_OAUTH_ISSUER: idpUrl,
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
  idp?.kill('SIGKILL');
});

/** tools/list over HTTP with this bearer token. */
const rawList = (token: string) =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

/** A token from the IdP itself (client credentials) for `resource`, with `scope`. */
async function minted(resource: string, scope: string): Promise<string> {
  const res = await fetch(`${idpUrl}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('minter:minter-secret-0123456789').toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, ...(scope ? { scope } : {}) }),
  });
  const body = (await res.json()) as { access_token?: string; error_description?: string };
  if (!body.access_token) throw new Error(`the IdP gave no token: ${body.error_description}`);
  return body.access_token;
}

const signed = (payload: JWTPayload, key: CryptoKey = idpKey) =>
  new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: idpJwk.kid, typ: 'at+jwt' }).sign(key);

describe("cutroom's metadata names the company's issuer", () => {
  it('authorization_servers is the IdP; no authorization server of its own is served', async () => {
    const prm = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as {
      authorization_servers: string[];
    };
    expect(prm.authorization_servers).toEqual([idpUrl]);
    expect((await fetch(`${base}/.well-known/oauth-authorization-server`)).status).toBe(404);
  });
});

describe.skipIf(!CHROMIUM)('signing in through the IdP with the SDK client and a browser', () => {
  it('registers with the IdP, signs in on its pages, and calls cutroom with its token; refreshes', async () => {
    const provider = new TestOAuthClient(callback.url, 'ChatGPT (test)');
    const url = new URL(`${base}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'h', version: '1' }).connect(first)).rejects.toThrow(UnauthorizedError);
    const asked = provider.authorizations[0]!;
    expect(asked.origin).toBe(idpUrl);
    expect(asked.searchParams.get('resource')).toBe(`${base}/mcp`);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    const code = await authorizeInBrowser(browser!, asked, callback, async (page) => {
      // oidc-provider's development pages: any name signs in, then consent.
      await page.fill('input[name=login]', 'carol@company.example');
      await page.fill('input[name=password]', 'anything');
      await page.click('button[type=submit]');
      await page.click('button[type=submit]');
    });
    await first.finishAuth(code);
    const client = new Client({ name: 'h', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    const claims = JSON.parse(
      Buffer.from(provider.saved!.access_token.split('.')[1]!, 'base64url').toString(),
    ) as JWTPayload;
    expect(claims).toMatchObject({ iss: idpUrl, aud: `${base}/mcp`, sub: 'carol@company.example', scope: 'cutroom' });
    const made = await client.callTool({ name: 'create_project', arguments: { name: 'carol-film', description: 'x' } });
    expect(made.isError, textOf(made)).toBeFalsy();
    // Refresh: a token cutroom refuses is renewed at the IdP with the refresh token.
    const before = provider.saved!;
    provider.saved = { ...before, access_token: `${before.access_token.slice(0, -4)}AAAA` };
    const listed = await client.callTool({ name: 'list_projects', arguments: {} });
    expect((listed.structuredContent as { projects: { name: string }[] }).projects.map((p) => p.name)).toEqual([
      'carol-film',
    ]);
    expect(provider.saved.access_token).not.toBe(before.access_token);
    await client.close();
    expect(srv.stderr()).not.toContain(before.access_token);
    expect(srv.stderr()).not.toContain(code.get('code')!);
  }, 120_000);
});

describe("tokens of the company's issuer that cutroom refuses", () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('takes a token the IdP issued for it (the control)', async () => {
    expect((await rawList(await minted(`${base}/mcp`, 'cutroom'))).status).toBe(200);
  });

  it('refuses a token the IdP issued for another resource', async () => {
    const res = await rawList(await minted(OTHER, 'cutroom'));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token".*another audience/);
  });

  it('refuses a token the IdP issued without the cutroom scope (403 insufficient_scope)', async () => {
    const res = await rawList(await minted(`${base}/mcp`, ''));
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="cutroom"/);
  });

  it('refuses an expired token signed with the IdP key', async () => {
    const res = await rawList(
      await signed({
        iss: idpUrl,
        aud: `${base}/mcp`,
        sub: 'carol',
        scope: 'cutroom',
        iat: now() - 900,
        exp: now() - 300,
      }),
    );
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/expired/);
  });

  it('refuses a token signed with another key under the IdP key id', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const res = await rawList(
      await signed(
        { iss: idpUrl, aud: `${base}/mcp`, sub: 'carol', scope: 'cutroom', iat: now(), exp: now() + 300 },
        privateKey as CryptoKey,
      ),
    );
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/signature does not verify/);
  });
});
