// cutroom's own authorization server, for a team without an identity provider: oidc-provider (OpenID Certified)
// at CUTROOM_PUBLIC_URL, with dynamic client registration (RFC 7591), PKCE (S256) required of every client, resource
// indicators (RFC 8707: tokens for `<publicUrl>/mcp` only, as ES256 JWTs), refresh tokens for clients that ask for
// offline_access, and one page of cutroom's own to sign in and consent (sign-in.ts decides who may). Its routes live
// under /oauth/, its metadata at /.well-known/openid-configuration and (the same document) RFC 8414's
// /.well-known/oauth-authorization-server. It never logs a token, a code or a key.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from '../log.js';
import type { Accounts } from './accounts.js';
import { fileAdapter } from './file-adapter.js';
import type { DerivedSecrets } from './secrets.js';
import { PAGE_HEADERS, problemPage, signInPage } from './sign-in-page.js';
import type { SignIn, SignInForm } from './sign-in.js';

export interface EmbeddedOptions {
  publicUrl: string;
  resource: string;
  scopes: string[];
  tokenTtlS: number;
  secrets: DerivedSecrets;
  /** Where the server keeps what it issues (a folder of the data dir). */
  storeDir: string;
  accounts: Accounts;
  signIn: SignIn;
  logger: Logger;
}

const DAY_S = 24 * 3600;
const INTERACTION = /^\/oauth\/interaction\/([A-Za-z0-9_-]{1,64})$/;
/** The most a sign-in form may send. */
const MAX_FORM_BYTES = 16 * 1024;

function routes(): Configuration['routes'] {
  return {
    authorization: '/oauth/authorize',
    backchannel_authentication: '/oauth/backchannel',
    code_verification: '/oauth/device',
    device_authorization: '/oauth/device/auth',
    end_session: '/oauth/session/end',
    introspection: '/oauth/introspect',
    jwks: '/oauth/jwks',
    pushed_authorization_request: '/oauth/par',
    registration: '/oauth/register',
    revocation: '/oauth/revoke',
    token: '/oauth/token',
    userinfo: '/oauth/userinfo',
  } as Configuration['routes'];
}

async function readForm(req: IncomingMessage): Promise<SignInForm | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  const field = (name: string) => form.get(name) ?? undefined;
  return {
    name: field('name'),
    password: field('password'),
    key: field('key'),
    service_key: field('service_key'),
    ...(field('action') ? { action: field('action') } : {}),
  } as SignInForm & { action?: string };
}

type OidcModule = typeof import('oidc-provider');

/**
 * oidc-provider, loaded only when cutroom's own sign-in is configured. Its notices go to console.warn and console.info
 * (stdout); while it loads they go to the log instead (it warns that it is tested on Node 22 LTS and later).
 */
export async function loadOidcProvider(logger: Logger): Promise<OidcModule> {
  /* eslint-disable no-console -- its notices are rerouted to the log while it loads, and put back after */
  const { warn, info } = console;
  console.warn = console.info = (...parts: unknown[]) => logger.info(`oauth: ${parts.join(' ')}`);
  try {
    return await import('oidc-provider');
  } finally {
    console.warn = warn;
    console.info = info;
  }
  /* eslint-enable no-console */
}

export class EmbeddedServer {
  readonly provider: Provider;
  private readonly callback: (req: IncomingMessage, res: ServerResponse) => void;
  private readonly origin: URL;

  constructor(
    oidc: OidcModule,
    private readonly opts: EmbeddedOptions,
  ) {
    const { resource, scopes, tokenTtlS, secrets, accounts, logger } = opts;
    const { Provider, errors: oidcErrors } = oidc;
    this.origin = new URL(opts.publicUrl);
    const configuration: Configuration = {
      adapter: fileAdapter(opts.storeDir) as unknown as Configuration['adapter'],
      jwks: { keys: [secrets.signingKey as never] },
      cookies: { keys: secrets.cookieKeys },
      scopes: ['openid', 'offline_access', ...scopes],
      claims: { openid: ['sub'] },
      async findAccount(_ctx, id) {
        return (await accounts.get(id)) ? { accountId: id, claims: async () => ({ sub: id }) } : undefined;
      },
      features: {
        devInteractions: { enabled: false },
        dPoP: { enabled: false },
        registration: { enabled: true },
        revocation: {
          enabled: true,
          // A client revokes its own tokens only (oidc-provider's rule, said here so that it does not print a notice).
          allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
        },
        pushedAuthorizationRequests: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        userinfo: { enabled: false },
        introspection: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => resource,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx, indicator) => {
            if (indicator !== resource)
              throw new oidcErrors.InvalidTarget(`this server issues tokens for ${resource} only`);
            return {
              scope: scopes.join(' '),
              audience: resource,
              accessTokenTTL: tokenTtlS,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'ES256' } },
            };
          },
        },
      },
      // A browser-based client (a public one) may call the token endpoint from the origin it is sent back to.
      clientBasedCORS: (_ctx, origin, client) =>
        origin !== 'null' &&
        client.clientAuthMethod === 'none' &&
        (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
      // OAuth 2.1: the authorization code flow only (no implicit grant).
      responseTypes: ['code'],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256',
      },
      enabledJWA: { idTokenSigningAlgValues: ['ES256'] } as Configuration['enabledJWA'],
      pkce: { required: () => true },
      interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
      routes: routes(),
      ttl: {
        AccessToken: tokenTtlS,
        AuthorizationCode: 60,
        ClientCredentials: tokenTtlS,
        IdToken: 3600,
        Interaction: 3600,
        Grant: 14 * DAY_S,
        Session: 14 * DAY_S,
        RefreshToken: 14 * DAY_S,
        DeviceCode: 600,
        BackchannelAuthenticationRequest: 600,
      },
      async renderError(ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }) {
        ctx.type = 'html';
        ctx.set(PAGE_HEADERS);
        ctx.body = problemPage(
          'cutroom could not sign you in',
          `${out.error_description ?? out.error ?? 'the request was refused'}: go back to your app and connect again.`,
        );
      },
    };
    this.provider = new Provider(opts.publicUrl, configuration);
    // Its URLs are the public ones whatever address the request came in on (a proxy, a tunnel): see handle().
    this.provider.proxy = true;
    // Koa prints errors to stderr when nobody listens; these say what failed, never a token or a code.
    (this.provider as unknown as NodeJS.EventEmitter).on('error', (err: Error) =>
      logger.debug(`oauth: ${err.message}`),
    );
    this.provider.on('server_error', (_ctx: unknown, err: Error) => logger.warn(`oauth: ${err.message}`));
    this.callback = this.provider.callback() as unknown as typeof this.callback;
  }

  /** Serves the authorization server's paths; false for any other. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const interaction = INTERACTION.exec(path);
    if (interaction) {
      this.asPublic(req);
      await this.interaction(req, res, interaction[1]!);
      return true;
    }
    if (path === '/.well-known/oauth-authorization-server') req.url = '/.well-known/openid-configuration';
    else if (path !== '/.well-known/openid-configuration' && !path.startsWith('/oauth/')) return false;
    this.asPublic(req);
    await new Promise<void>((resolve) => {
      res.once('close', resolve);
      res.once('finish', resolve);
      this.callback(req, res);
    });
    return true;
  }

  /** The request as the public URL names it, so that every URL the server writes is a public one. */
  private asPublic(req: IncomingMessage): void {
    req.headers['x-forwarded-proto'] = this.origin.protocol.replace(':', '');
    req.headers['x-forwarded-host'] = this.origin.host;
  }

  private send(res: ServerResponse, status: number, html: string): void {
    res.writeHead(status, PAGE_HEADERS);
    res.end(html);
  }

  /** The sign-in and consent page (GET), and what it sends (POST). */
  private async interaction(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    let details: Awaited<ReturnType<Provider['interactionDetails']>>;
    try {
      details = await this.provider.interactionDetails(req, res);
    } catch {
      return this.send(res, 400, problemPage('This sign-in has expired', 'Go back to your app and connect again.'));
    }
    this.opts.logger.debug(`oauth: sign-in asks ${details.prompt.name} (${details.prompt.reasons.join(', ')})`);
    if (details.uid !== uid)
      return this.send(res, 400, problemPage('This sign-in has expired', 'Go back to your app and connect again.'));
    const params = details.params as {
      client_id?: string;
      scope?: string;
      redirect_uri?: string;
      resource?: string | string[];
    };
    const client = params.client_id ? await this.provider.Client.find(params.client_id) : undefined;
    if (!client) return this.send(res, 400, problemPage('Unknown app', 'Go back to your app and connect again.'));
    const requested = String(params.scope ?? '')
      .split(' ')
      .filter((s) => s === 'openid' || s === 'offline_access' || this.opts.scopes.includes(s));
    const signedIn =
      details.prompt.name === 'consent' && details.session?.accountId
        ? await this.opts.accounts.get(details.session.accountId)
        : undefined;
    const view = {
      action: `/oauth/interaction/${uid}`,
      client: String(client.clientName ?? client.clientId),
      returnsTo: params.redirect_uri ? safeHost(params.redirect_uri) : undefined,
      scopes: requested,
      passwords: this.opts.signIn.passwords,
      ...(this.opts.signIn.keyLabel ? { keyLabel: this.opts.signIn.keyLabel } : {}),
      ...(this.opts.signIn.serviceKey ? { serviceKey: this.opts.signIn.serviceKey } : {}),
      ...(signedIn ? { signedInAs: this.opts.signIn.shown(signedIn) } : {}),
    };
    if (req.method === 'GET' || req.method === 'HEAD') return this.send(res, 200, signInPage(view));
    if (req.method !== 'POST') return this.send(res, 405, problemPage('Not allowed', 'Use the sign-in form.'));
    // A form posted from another site is refused (the interaction's cookie is SameSite=Lax too).
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.origin.origin)
      return this.send(res, 403, problemPage('Refused', "The sign-in form must be sent from this server's own page."));
    const form = (await readForm(req)) as (SignInForm & { action?: string }) | undefined;
    if (!form) return this.send(res, 413, problemPage('Too large', 'The form sent too much.'));
    if (form.action === 'deny')
      return void (await this.provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the person declined' },
        { mergeWithLastSubmission: false },
      ));
    let accountId = signedIn?.id;
    if (!accountId) {
      const result = await this.opts.signIn.check(form, req.socket.remoteAddress ?? 'unknown');
      if (!result.ok)
        return this.send(
          res,
          401,
          signInPage({ ...view, error: result.error, ...(form.name ? { name: form.name } : {}) }),
        );
      accountId = result.account.id;
    }
    const grant = new this.provider.Grant({ accountId, clientId: client.clientId });
    // Every scope the server knows counts as one asked of the person (oidc-provider checks them all so), and
    // cutroom's scopes are the resource's too: its tokens carry those.
    if (requested.length) grant.addOIDCScope(requested.join(' '));
    const resourceScopes = requested.filter((s) => this.opts.scopes.includes(s));
    for (const indicator of [params.resource ?? this.opts.resource].flat())
      if (indicator === this.opts.resource && resourceScopes.length)
        grant.addResourceScope(indicator, resourceScopes.join(' '));
    const grantId = await grant.save();
    await this.provider.interactionFinished(
      req,
      res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }
}

function safeHost(uri: string): string | undefined {
  try {
    return new URL(uri).host || undefined;
  } catch {
    return undefined;
  }
}
