// Who is calling over HTTP: the one place a request's credentials become a caller (serve-http.ts serves the caller
// this returns, callers.ts keeps their context). In order:
// - cutroom's own bearer token (CUTROOM_HTTP_TOKEN): the operator on the local backend; on the service backend it
//   opens the door and the caller's key comes as X-API-Key;
// - an OAuth access token (a JWT, when OAuth is on): auth/ checks it and says who signed in;
// - on the service backend, a service key (X-API-Key, or the bearer when it is no token of cutroom's), or the
//   team's key (VJ_API_KEY) for callers who bring none when CUTROOM_HTTP_USE_SERVER_KEY is set and OAuth is off.
// Anything else is refused: with OAuth on, with the challenge that tells an MCP client where to sign in. With
// CUTROOM_HTTP_NO_AUTH (the local backend on loopback only) nothing is: every request is the operator's.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { looksLikeJwt, type Auth, type Refusal } from '../auth/index.js';
import { callerId, type Caller } from './callers.js';

export interface WhoOptions {
  backendKind: 'local' | 'remote';
  /** CUTROOM_HTTP_TOKEN. */
  token?: string;
  /** VJ_API_KEY when CUTROOM_HTTP_USE_SERVER_KEY lets it serve callers who bring none. */
  serverKey?: string;
  auth?: Auth;
  /** CUTROOM_HTTP_NO_AUTH: the local backend serves every request as the operator's (index.ts keeps it to loopback). */
  noAuth?: boolean;
}

const same = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

const refusal = (message: string, description: string): Refusal => ({
  status: 401,
  headers: {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'www-authenticate': `Bearer realm="cutroom", error="invalid_token", error_description="${description}"`,
  },
  body: JSON.stringify({ error: message }),
});

/** The request's bearer token, if its Authorization header is one. */
const bearerOf = (req: IncomingMessage) => /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];

function apiKeyOf(req: IncomingMessage): string | undefined {
  const x = req.headers['x-api-key'];
  return typeof x === 'string' && x.trim() ? x.trim() : undefined;
}

/** The service backend's caller with this key. */
const serviceCaller = (key: string): Caller => ({ kind: 'service', id: callerId(key), key });

export async function whoIsCalling(
  req: IncomingMessage,
  opts: WhoOptions,
): Promise<{ caller: Caller } | { refused: Refusal }> {
  const { auth, token, backendKind } = opts;
  const bearer = bearerOf(req);
  const remote = backendKind === 'remote';
  if (bearer && token && same(bearer, token)) {
    if (!remote) return { caller: { kind: 'operator' } };
    const key = apiKeyOf(req) ?? opts.serverKey;
    if (key) return { caller: serviceCaller(key) };
    return {
      refused: refusal(
        'each request must carry your Video Jungle API key: X-API-Key: <your Video Jungle API key>',
        'no API key',
      ),
    };
  }
  if (opts.noAuth && !remote) return { caller: { kind: 'operator' } };
  if (bearer && auth && looksLikeJwt(bearer)) {
    const verdict = await auth.identify(`Bearer ${bearer}`);
    if ('refused' in verdict) return verdict;
    const { who } = verdict;
    if (who.operator) return { caller: { kind: 'operator' } };
    if (!remote) return { caller: { kind: 'local-user', id: who.callerId } };
    return { caller: { kind: 'service', id: who.callerId, key: who.serviceKey! } };
  }
  if (auth) {
    // A key still opens the service backend (scripts, CI); anything else is asked to sign in.
    const key = remote && !token ? (apiKeyOf(req) ?? bearer) : undefined;
    return key ? { caller: serviceCaller(key) } : { refused: auth.challenge() };
  }
  if (token)
    return {
      refused: refusal(
        'this server needs its bearer token: Authorization: Bearer <CUTROOM_HTTP_TOKEN>',
        'the bearer token is missing or wrong',
      ),
    };
  const key = apiKeyOf(req) ?? bearer ?? opts.serverKey;
  if (remote && key) return { caller: serviceCaller(key) };
  return {
    refused: refusal(
      'each request must carry your Video Jungle API key: Authorization: Bearer <your Video Jungle API key> (or X-API-Key)',
      'no API key',
    ),
  };
}

/** A caller's id for logs and for matching a cancellation to its call. */
export const callerKeyOf = (caller: Caller) =>
  caller.kind === 'operator' ? 'operator' : `${caller.kind}:${caller.id}`;
