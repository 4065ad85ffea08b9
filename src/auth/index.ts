// The only room that knows OAuth. cutroom over HTTP is an OAuth 2.1 protected resource (the MCP authorization
// specification): it serves its metadata (RFC 9728) at /.well-known/oauth-protected-resource[/mcp], answers a call
// without credentials with 401 and `WWW-Authenticate: Bearer resource_metadata=..., scope=...`, and takes a bearer
// token only when it is a JWT from its issuer, for its resource (RFC 8707), unexpired and with every scope it asks
// for (token-check.ts, then the SDK's verifyBearerToken, whose refusals are the SDK's challenges: 401, or 403
// insufficient_scope). The issuer is either one the operator names (any OpenID Connect provider) or cutroom's own
// (embedded.ts). http/ asks `identify` who a token's bearer is: a caller of their own (a folder named by a hash,
// never by a token, a key or a name), with the service key their calls use.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import {
  OAuthError,
  OAuthErrorCode,
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import type { JWK } from 'jose';
import { fetchIssuerJson, fetchIssuerMetadata } from '../api/issuer.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { Accounts, type KeyCallerId } from './accounts.js';
import { EmbeddedServer, loadOidcProvider } from './embedded.js';
import { UsersFile } from './passwords.js';
import { deriveSecrets } from './secrets.js';
import { SignIn } from './sign-in.js';
import { TokenChecker, type KeySource, type TokenSubject } from './token-check.js';

export type OAuthConfig = NonNullable<NonNullable<Config['http']>['oauth']>;

export interface AuthOptions {
  oauth: OAuthConfig;
  backendKind: 'local' | 'remote';
  /** Where cutroom's own sign-in keeps its accounts and what it issues (`<dataDir>/auth`). */
  dataDir: string;
  logger: Logger;
  /** CUTROOM_HTTP_TOKEN: on the local backend, the operator may sign in with it. */
  operatorToken?: string;
  /** VJ_API_KEY, when CUTROOM_HTTP_USE_SERVER_KEY lets it serve people who give no key of their own. */
  teamKey?: string;
  /** The folder name of a caller with a service key (http/callers.ts), so that signing in with a key is that caller. */
  keyCallerId: KeyCallerId;
  /** Checks a service key given at sign-in with the service: undefined when it works, else why not. */
  checkServiceKey?: (key: string) => Promise<string | undefined>;
}

/** Who a valid token's bearer is, as http/ serves them. */
export interface SignedIn {
  /** Their folder name (a hash). */
  callerId: string;
  /** The operator of a local backend (signed in with CUTROOM_HTTP_TOKEN): served as that token is. */
  operator: boolean;
  /** The service key their calls use (service backend). */
  serviceKey?: string;
}

/** An HTTP answer auth/ gives instead of serving a call. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A caller's folder name from who they are at an issuer (never reversible to it). */
const folderOf = (kind: string, ...parts: string[]) =>
  createHash('sha256')
    .update(`cutroom ${kind}\0${parts.join('\0')}`)
    .digest('hex')
    .slice(0, 32);

/** A bearer token shaped as a JWT (three base64url parts): an OAuth access token, not a key. */
export const looksLikeJwt = (bearer: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(bearer);

async function refusalOf(response: Response): Promise<Refusal> {
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  response.headers.forEach((value, name) => (headers[name] = value));
  return { status: response.status, headers, body: await response.text() };
}

export class Auth {
  readonly resource: string;
  readonly metadataUrl: string;
  /** The authorization server named in the metadata. */
  readonly issuer: string;
  private readonly checker: TokenChecker;
  private readonly embedded?: EmbeddedServer;
  private readonly accounts?: Accounts;
  private readonly users?: UsersFile;

  private constructor(
    private readonly opts: AuthOptions,
    oidc?: Awaited<ReturnType<typeof loadOidcProvider>>,
  ) {
    const { oauth } = opts;
    this.resource = `${oauth.publicUrl}/mcp`;
    this.metadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(this.resource));
    if (oauth.embedded) {
      const secrets = deriveSecrets(oauth.embedded.secret);
      this.issuer = oauth.publicUrl;
      this.accounts = new Accounts(join(opts.dataDir, 'auth', 'accounts'), secrets.sealKey);
      if (oauth.embedded.usersFile) this.users = new UsersFile(oauth.embedded.usersFile);
      const signIn = new SignIn({
        backendKind: opts.backendKind,
        accounts: this.accounts,
        ...(this.users ? { users: this.users } : {}),
        ...(opts.operatorToken ? { operatorToken: opts.operatorToken } : {}),
        teamKey: !!opts.teamKey,
        keyCallerId: opts.keyCallerId,
        ...(opts.checkServiceKey ? { checkServiceKey: opts.checkServiceKey } : {}),
      });
      this.embedded = new EmbeddedServer(oidc!, {
        publicUrl: oauth.publicUrl,
        resource: this.resource,
        scopes: oauth.scopes,
        tokenTtlS: oauth.embedded.tokenTtlS,
        secrets,
        storeDir: join(opts.dataDir, 'auth', 'store'),
        accounts: this.accounts,
        signIn,
        logger: opts.logger,
      });
      this.checker = new TokenChecker({
        issuer: this.issuer,
        audience: this.resource,
        resource: this.resource,
        keySource: async () => [secrets.publicKey],
      });
    } else {
      const issuer = oauth.issuer!;
      this.issuer = issuer.url;
      this.checker = new TokenChecker({
        issuer: issuer.url,
        audience: issuer.audience ?? this.resource,
        resource: this.resource,
        keySource: issuerKeys(issuer.url, issuer.jwksUrl),
      });
    }
  }

  /** Ready to serve: the users file read (a start with a wrong one fails), the issuer's keys asked for (logged). */
  static async create(opts: AuthOptions): Promise<Auth> {
    const oidc = opts.oauth.embedded ? await loadOidcProvider(opts.logger) : undefined;
    const auth = new Auth(opts, oidc);
    if (auth.users) {
      const count = await auth.users.load();
      opts.logger.info(`oauth: ${count} people may sign in with a password (${auth.users.path})`);
    }
    if (opts.oauth.issuer)
      await auth.checker.verifyAccessToken('x.x.x').catch((err: OAuthError) => {
        if (err.code === OAuthErrorCode.ServerError)
          opts.logger.warn(`oauth: ${err.message}; asked again at the first token`);
      });
    return auth;
  }

  /** The answer to a call that brings no credentials: where to get a token, and for which scopes. */
  challenge(): Refusal {
    const scope = this.opts.oauth.scopes.join(' ');
    return {
      status: 401,
      headers: {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        'www-authenticate': `Bearer resource_metadata="${this.metadataUrl}", scope="${scope}"`,
      },
      body: JSON.stringify({
        error: `this server needs you to sign in: an OAuth access token from ${this.issuer} (MCP clients find how from ${this.metadataUrl})`,
      }),
    };
  }

  /** Who the bearer of this Authorization header is, or the refusal to send (401, 403 insufficient_scope, 503). */
  async identify(authorization: string): Promise<{ who: SignedIn } | { refused: Refusal }> {
    const options = {
      verifier: this.checker,
      requiredScopes: this.opts.oauth.scopes,
      resourceMetadataUrl: this.metadataUrl,
    };
    try {
      const info = await verifyBearerToken(authorization, { ...options, expectedResource: new URL(this.resource) });
      const who = await this.callerOf(info.extra as unknown as TokenSubject);
      return { who };
    } catch (err) {
      const refused = await refusalOf(bearerAuthChallengeResponse(err, options));
      // The issuer's keys could not be read: the token may be fine; the client should retry, not sign in again.
      if (refused.status === 500)
        return { refused: { ...refused, status: 503, headers: { ...refused.headers, 'retry-after': '5' } } };
      return { refused };
    }
  }

  /** The caller a valid token names. Throws OAuthError (invalid_token) when its account cannot be served. */
  private async callerOf({ subject, issuer }: TokenSubject): Promise<SignedIn> {
    const { teamKey } = this.opts;
    const remote = this.opts.backendKind === 'remote';
    const gone = (why: string) => new OAuthError(OAuthErrorCode.InvalidToken, why);
    if (!this.accounts) {
      const serviceKey = remote ? teamKey : undefined;
      return { callerId: folderOf('person', issuer, subject), operator: false, ...(serviceKey ? { serviceKey } : {}) };
    }
    const account = await this.accounts.get(subject);
    if (!account) throw gone('the account this token names is no longer here: sign in again');
    if (account.kind === 'operator') {
      if (remote || !this.opts.operatorToken) throw gone('the operator does not sign in on this server: sign in again');
      return { callerId: 'operator', operator: true };
    }
    if (account.kind === 'user' && !(await this.users?.hashOf(account.name ?? '')))
      throw gone('this person is no longer listed on this server (CUTROOM_OAUTH_USERS_FILE)');
    const kept = this.accounts.keyOf(account);
    const serviceKey = remote ? (kept ?? (account.kind === 'user' ? teamKey : undefined)) : undefined;
    if (remote && !serviceKey)
      throw gone('no Video Jungle API key is kept for this account: sign in again and give it');
    const callerId =
      account.kind === 'key' ? account.id.slice('key-'.length) : folderOf('user', account.name ?? account.id);
    return { callerId, operator: false, ...(serviceKey ? { serviceKey } : {}) };
  }

  /** Serves the protected resource metadata and (embedded) the authorization server's paths; false for any other. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path === '/.well-known/oauth-protected-resource' || path === new URL(this.metadataUrl).pathname) {
      this.resourceMetadata(req, res);
      return true;
    }
    return (await this.embedded?.handle(req, res, path)) ?? false;
  }

  /** RFC 9728's document: public, so any page may read it. */
  private resourceMetadata(req: IncomingMessage, res: ServerResponse): void {
    const cors = { 'access-control-allow-origin': '*' };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...cors,
        'access-control-allow-methods': 'GET, HEAD, OPTIONS',
        'access-control-allow-headers': 'mcp-protocol-version',
      });
      return void res.end();
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...cors, allow: 'GET, HEAD, OPTIONS', 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: 'GET this document' }));
    }
    const body = JSON.stringify({
      resource: this.resource,
      authorization_servers: [this.issuer],
      scopes_supported: this.opts.oauth.scopes,
      bearer_methods_supported: ['header'],
      resource_name: 'cutroom',
    });
    res.writeHead(200, { ...cors, 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

/** The key set of an issuer the operator names: its metadata's jwks_uri (or the one configured), fetched through api/. */
function issuerKeys(issuer: string, configured?: string): KeySource {
  let jwksUrl = configured;
  return async () => {
    jwksUrl ??= String((await fetchIssuerMetadata(issuer)).jwks_uri ?? '');
    if (!jwksUrl) throw new Error(`the metadata of ${issuer} names no jwks_uri: set CUTROOM_OAUTH_JWKS_URL`);
    const set = await fetchIssuerJson(jwksUrl);
    if (!Array.isArray(set.keys)) throw new Error(`${jwksUrl} is not a key set (no "keys")`);
    return set.keys as JWK[];
  };
}
