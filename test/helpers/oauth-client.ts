// The MCP TypeScript SDK's OAuth client support, driven as a host drives it: an OAuthClientProvider that keeps what
// the SDK gives it in memory (its registration, tokens, PKCE verifier, discovery), a loopback redirect URI served by
// a small HTTP server that catches the authorization code, and the browser step done by headless Chromium on the
// authorization server's own pages (the test fills them in).
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { chromium, type Browser, type Page } from 'playwright-core';

type Provider = OAuthClientProvider;
type Stored<K extends keyof Provider> = Provider[K] extends (...a: never[]) => infer R ? Awaited<R> : never;

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];

/** An in-memory OAuth client of the SDK, one "session" of one host. */
export class TestOAuthClient implements OAuthClientProvider {
  info?: Stored<'clientInformation'>;
  saved?: Stored<'tokens'>;
  verifier = '';
  discovery?: Stored<'discoveryState'>;
  /** Every authorization URL the SDK sent the person to. */
  readonly authorizations: URL[] = [];

  constructor(
    readonly redirect: string,
    readonly name = 'cutroom tests',
  ) {}

  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: NonNullable<Stored<'clientInformation'>>) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: NonNullable<Stored<'tokens'>>) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: NonNullable<Stored<'discoveryState'>>) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** A loopback redirect URI; `next()` resolves with the query of the next request to it (code, state, iss). */
export async function callbackServer(): Promise<{
  url: string;
  next: () => Promise<URLSearchParams>;
  close: () => void;
}> {
  const waiting: ((q: URLSearchParams) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>done</title><p>You may close this window.</p>');
    waiting.shift()?.(query);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/callback`;
  return {
    url,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => server.close(),
  };
}

export async function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/** Opens the authorization URL in a fresh browser context (no cookies), runs `act` on the page, and waits for the code. */
export async function authorizeInBrowser(
  browser: Browser,
  url: URL,
  callback: { next: () => Promise<URLSearchParams> },
  act: (page: Page) => Promise<void>,
): Promise<URLSearchParams> {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    const caught = callback.next();
    await page.goto(url.href);
    await act(page);
    return await caught;
  } finally {
    await context.close();
  }
}

/** A port free on 127.0.0.1 now (for a server whose public URL must be known before it starts). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
