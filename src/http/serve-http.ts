// cutroom over Streamable HTTP: the SDK's per-request handler (stateless: any replica answers any call) behind the
// gates a hosted server needs, in order: /healthz, the path, Host, Origin, body size, who is calling (the token or
// the caller's key). An allowed origin's CORS preflight is answered before the token is asked for, and its every
// answer carries Access-Control-Allow-Origin. /metrics (Prometheus' text format, written by prometheus.ts) passes
// the Host and Origin gates, then asks for an operator's token (CUTROOM_METRICS_TOKEN or CUTROOM_HTTP_TOKEN; open on
// a loopback listener only when neither is set). Each caller is served by a server instance built on their own
// context (callers.ts). Node's http in, web Request/Response to
// the SDK and back, with the call cancelled when the client goes away, and no message over 8 MiB sent back
// (bound-response.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, localhostAllowedHostnames } from '@modelcontextprotocol/server';
import type { Config } from '../config.js';
import type { QueueSnapshot } from '../jobs/metrics.js';
import type { Logger } from '../log.js';
import { createServer } from '../server.js';
import { VERSION } from '../version.js';
import { boundResponse, type MethodOf } from './bound-response.js';
import type { Auth } from '../auth/index.js';
import type { Caller, Callers } from './callers.js';
import { fileLinks } from '../workflow/file-links.js';
import { serveFile } from './file-links.js';
import type { UploadDesk } from './uploads.js';
import { CONTENT_TYPE, exposition } from './prometheus.js';
import { callerKeyOf, whoIsCalling } from './who.js';

type HttpConfig = NonNullable<Config['http']>;

export interface HttpOptions {
  backendKind: 'local' | 'remote';
  http: HttpConfig;
  /** VJ_API_KEY, used for callers who bring no key only when http.useServerKey is set. */
  serverKey?: string;
  callers: Callers;
  /** OAuth sign-in (auth/), when configured: its metadata, its authorization server, and its tokens' checks. */
  auth?: Auth;
  logger: Logger;
  /**
   * Cancels passed between replicas (the job queue's Redis): a notifications/cancelled for a call this replica is not
   * answering is published, and every replica stops the call it names if it answers it. Calls are named by a hash of
   * their caller and their JSON-RPC id, never by a key.
   */
  cancels?: { publish(call: string): void; listen(stop: (call: string) => void): void };
  /** The server's folders (cache, data) whose files results link to, served at /files/ by signed links. */
  fileRoots?: string[];
  /** Resumable uploads behind signed links (import_media {upload}), on the local backend. */
  uploads?: UploadDesk;
  /** The job queue's figures for /metrics, when a queue is configured; and the histograms' bucket bounds. */
  queueMetrics?: { snapshot(): Promise<QueueSnapshot>; buckets: number[] };
}

export interface HttpApp {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Calls being answered now. */
  inFlight: () => number;
  /** Stop taking calls (/healthz then answers 503); wait for those in flight, up to `ms`. */
  drain: (ms: number) => Promise<boolean>;
  close: () => Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;
export const isLoopback = (host: string) => LOOPBACK.test(host.replace(/^\[|\]$/g, ''));

const same = (a: string, b: string) => {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
};

function send(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** What reading a body gave: the bytes (and what gives their share of the budget back), or why not. */
type Body = { bytes: Buffer; release: () => void } | { tooLarge: true } | { busy: true };

/** What any body may hold without counting against the budget: a JSON-RPC call is a few kilobytes. */
const FREE_BYTES = 64 * 1024;

/**
 * Reads a body of at most `max` bytes. Beyond its first FREE_BYTES, it counts against `budget`, which all bodies
 * share from their first byte until their call has been answered: however many clients send large bodies, slowly
 * or not, they hold at most the budget between them, and small calls always get through.
 */
async function readBody(req: IncomingMessage, max: number, budget: { free: number }): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  let held = 0;
  const release = () => {
    budget.free += held;
    held = 0;
  };
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) return (release(), { tooLarge: true });
      const counted = Math.max(0, size - FREE_BYTES) - held;
      if (counted > budget.free) return (release(), { busy: true });
      budget.free -= counted;
      held += counted;
      chunks.push(chunk);
    }
  } catch (err) {
    release();
    throw err;
  }
  return { bytes: Buffer.concat(chunks), release };
}

/** A Host name as compared: lower case, without an IPv6 address's brackets. */
const hostName = (h: string) =>
  h
    .trim()
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
/** The name in a Host header: without its port. */
function requestHost(header: string | undefined): string {
  const h = (header ?? '').trim();
  const v6 = /^\[([^\]]*)\](?::\d*)?$/.exec(h);
  return hostName(v6 ? v6[1]! : h.replace(/:\d*$/, ''));
}

/** An Origin on this machine: http(s) on localhost, 127.x or [::1], any port. */
function loopbackOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopback(u.hostname);
  } catch {
    return false;
  }
}

/** The methods a browser page may use on /mcp (a preflight's Access-Control-Allow-Methods). */
const CORS_METHODS = 'GET, POST, DELETE, OPTIONS';
/**
 * The request headers a browser page may send: the credentials (cutroom's token, a caller's key), the body's type,
 * and the transport's own headers (2025's version and session, a stream's resumption; 2026's method, name and
 * Mcp-Param-* headers of a tools/call).
 */
const CORS_HEADERS = [
  'authorization',
  'x-api-key',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
  'mcp-method',
  'mcp-name',
];
const corsHeaderAllowed = (h: string) => CORS_HEADERS.includes(h) || /^mcp-param-[a-z0-9_-]+$/.test(h);
/** The response headers a page's script may read besides the safelisted ones. */
const CORS_EXPOSED = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After';
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const CORS_MAX_AGE = '600';

/** What a preflight allows: every header of the allow list, and those of the request's own that are on it. */
function preflightHeaders(requested: string | undefined): string {
  const asked = (requested ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  return [...new Set([...CORS_HEADERS, ...asked.filter(corsHeaderAllowed)])].join(', ');
}

/**
 * The Host names a request may carry, as compared: those configured, else localhost's own on a loopback address
 * (with OAuth, the public URL's name too: a tunnel or proxy on this machine forwards it); none (any Host is let in)
 * otherwise.
 */
function allowedHostNames(http: HttpConfig): string[] {
  if (http.allowedHosts.length) return http.allowedHosts.map(hostName);
  const publicName = http.oauth ? [hostName(new URL(http.oauth.publicUrl).hostname)] : [];
  if (isLoopback(http.host)) return [...localhostAllowedHostnames().map(hostName), ...publicName];
  return [];
}

/** The paths auth/ answers: the protected resource's metadata and the authorization server's. */
const isAuthPath = (path: string) => path.startsWith('/.well-known/') || path.startsWith('/oauth/');

export function createHttpApp(opts: HttpOptions): HttpApp {
  const { http, callers, logger } = opts;
  const onLoopback = isLoopback(http.host);
  const maxBody = http.maxBodyMb * 1024 * 1024;
  const hosts = allowedHostNames(http);
  // What all bodies being read may hold between them.
  const budget = { free: maxBody * 4 };
  let inFlight = 0;
  let draining = false;
  const idle: (() => void)[] = [];
  // Calls in flight by caller and JSON-RPC id: a notifications/cancelled arrives in a POST of its own (stateless:
  // another server instance), so it is matched here and stops the call it names, as hanging up would.
  const calls = new Map<string, AbortController>();
  const callKey = (caller: string, id: unknown) =>
    createHash('sha256')
      .update(`cutroom call\0${caller}\0${typeof id}:${String(id)}`)
      .digest('hex')
      .slice(0, 40);
  // A cancel another replica heard for a call answered here.
  opts.cancels?.listen((call) => calls.get(call)?.abort());
  const startedAt = Date.now();
  // Signed links' secret: the operator's, shared by replicas; else this process's own.
  const linkSecret = http.linkSecret ?? randomBytes(32).toString('hex');
  const fileRoots = opts.fileRoots ?? [];
  const whoOptions = {
    backendKind: opts.backendKind,
    ...(http.token ? { token: http.token } : {}),
    ...(http.noAuth ? { noAuth: true } : {}),
    ...(http.useServerKey && opts.serverKey ? { serverKey: opts.serverKey } : {}),
    ...(opts.auth ? { auth: opts.auth } : {}),
  };
  /** Where the caller reaches this server: CUTROOM_PUBLIC_URL, else the Host they asked (checked by the Host gate). */
  const baseOf = (host: string | null | undefined) =>
    http.publicUrl ??
    http.oauth?.publicUrl ??
    `http://${(host ?? `${http.host}:${http.port}`).replace(/[^\w.:[\]-]/g, '')}`;

  /** Whom a link's request names: undefined without credentials (the link is its own authority), null for nobody. */
  const callerOfLink = async (r: IncomingMessage) => {
    if (!r.headers.authorization && !r.headers['x-api-key']) return undefined;
    const who = await whoIsCalling(r, whoOptions);
    return 'caller' in who ? callerKeyOf(who.caller) : null;
  };

  const handler = createMcpHandler(
    (ctx) => {
      const caller = ctx.authInfo!.extra!.caller as Caller;
      const deps = callers.forCaller(caller);
      // A 2025-era request declares its version in a header (none: 2025-03-26, as the specification says).
      const protocolVersion =
        ctx.era === 'legacy' ? (ctx.requestInfo?.headers.get('mcp-protocol-version') ?? '2025-03-26') : undefined;
      const links = fileLinks({
        secret: linkSecret,
        roots: fileRoots,
        base: baseOf(ctx.requestInfo?.headers.get('host')),
        caller: callerKeyOf(caller),
        ttlS: http.linkTtlS,
      });
      const uploads = opts.uploads?.forCaller(callerKeyOf(caller), baseOf(ctx.requestInfo?.headers.get('host')));
      return createServer({
        ...deps,
        links,
        ...(uploads ? { uploads } : {}),
        http: protocolVersion ? { protocolVersion } : {},
      });
    },
    { maxRequestBodySize: maxBody, onerror: (err) => logger.debug(`http: ${err.message}`) },
  );

  const challenge = (message: string) => ({
    'www-authenticate': `Bearer realm="cutroom", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`,
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://cutroom.invalid');
    } catch {
      return send(res, 400, { error: 'the request target is not a valid URL' });
    }
    // A browser page of an origin allowed below may read every answer, errors included: the headers go on now, so
    // that whatever answers (a gate, the SDK, the catch-all 500) carries them. Vary, whatever the origin: answers
    // differ by it.
    const origin = req.headers.origin;
    const originAllowed =
      origin !== undefined && (http.allowedOrigins.includes(origin) || (onLoopback && loopbackOrigin(origin)));
    res.setHeader('vary', 'Origin');
    if (originAllowed) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-expose-headers', CORS_EXPOSED);
    }
    if (url.pathname === '/healthz') {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return send(res, 405, { error: 'GET /healthz' }, { allow: 'GET, HEAD' });
      return draining
        ? send(res, 503, { status: 'draining' }, { connection: 'close' })
        : send(res, 200, { status: 'ok', backend: opts.backendKind });
    }
    // OAuth's documents and (cutroom's own) authorization server, for clients and the person's browser: past the Host
    // gate, not the Origin gate (they answer pages of any origin as OAuth says, and check their own forms' origin).
    if (opts.auth && isAuthPath(url.pathname)) {
      if (hosts.length && !hosts.includes(requestHost(req.headers.host)))
        return send(res, 403, { error: 'this Host is not one this server answers to (CUTROOM_HTTP_ALLOWED_HOSTS)' });
      if (await opts.auth.handle(req, res, url.pathname)) return;
    }
    // A signed link: past the Host gate, not the Origin gate (a page of any origin may play a link it was given).
    if (url.pathname.startsWith('/files/')) {
      if (hosts.length && !hosts.includes(requestHost(req.headers.host)))
        return send(res, 403, { error: 'this Host is not one this server answers to (CUTROOM_HTTP_ALLOWED_HOSTS)' });
      return serveFile(req, res, url.pathname, {
        secret: linkSecret,
        roots: fileRoots,
        callerOf: callerOfLink,
      });
    }
    // An upload link: past the Host gate, not the Origin gate (a page of any origin may upload to a link it was given).
    if (url.pathname.startsWith('/uploads/') && opts.uploads) {
      if (hosts.length && !hosts.includes(requestHost(req.headers.host)))
        return send(res, 403, { error: 'this Host is not one this server answers to (CUTROOM_HTTP_ALLOWED_HOSTS)' });
      return opts.uploads.handle(req, res, url.pathname, callerOfLink);
    }
    if (url.pathname !== '/mcp' && url.pathname !== '/metrics')
      return send(res, 404, { error: `no such path: cutroom serves MCP at /mcp (and /healthz, /metrics)` });
    // /metrics is read while draining too (it serves no call); it passes the Host and Origin gates below first.
    if (draining && url.pathname === '/mcp')
      return send(
        res,
        503,
        { error: 'the server is shutting down: retry on another replica' },
        { connection: 'close', 'retry-after': '1' },
      );

    // Host: against DNS rebinding, a name this server answers to (localhost names when it listens on loopback).
    const hostname = requestHost(req.headers.host);
    if (hosts.length && !hosts.includes(hostname)) {
      return send(res, 403, {
        error: `Host "${hostname}" is not one this server answers to (CUTROOM_HTTP_ALLOWED_HOSTS)`,
      });
    }
    // Origin: a browser page may call only from an origin the operator allowed; on loopback, also from a page served
    // on this machine (the Inspector's web UI, a local app), which a remote page cannot pose as.
    if (origin !== undefined && !originAllowed) {
      return send(res, 403, { error: `Origin ${origin} is not allowed (CUTROOM_HTTP_ALLOWED_ORIGINS)` });
    }
    if (url.pathname === '/metrics') return metrics(req, res);
    // A preflight (a browser asking before a call with a token or a JSON body) carries no credentials, so it is
    // answered before the token is asked for; it says what may be sent and serves nothing.
    if (req.method === 'OPTIONS') {
      const requested = req.headers['access-control-request-headers'];
      res.writeHead(204, {
        allow: CORS_METHODS,
        'cache-control': 'no-store',
        ...(originAllowed
          ? {
              vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
              'access-control-allow-methods': CORS_METHODS,
              'access-control-allow-headers': preflightHeaders(typeof requested === 'string' ? requested : undefined),
              'access-control-max-age': CORS_MAX_AGE,
              // A browser that asks before a page of another address space reaches this one (Private Network Access).
              ...(req.headers['access-control-request-private-network'] === 'true'
                ? { 'access-control-allow-private-network': 'true' }
                : {}),
            }
          : {}),
      });
      return void res.end();
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBody) {
      return send(
        res,
        413,
        { error: `the request body is over ${http.maxBodyMb} MB (CUTROOM_HTTP_MAX_BODY_MB)` },
        { connection: 'close' },
      );
    }

    // Who is calling.
    const who = await whoIsCalling(req, whoOptions);
    if ('refused' in who) {
      const { status, headers, body } = who.refused;
      if (!res.headersSent) res.writeHead(status, headers);
      return void res.end(body);
    }
    const { caller } = who;

    const read = req.method === 'POST' ? await readBody(req, maxBody, budget) : undefined;
    if (read && 'tooLarge' in read) {
      return send(
        res,
        413,
        { error: `the request body is over ${http.maxBodyMb} MB (CUTROOM_HTTP_MAX_BODY_MB)` },
        { connection: 'close' },
      );
    }
    if (read && 'busy' in read) {
      return send(
        res,
        503,
        { error: 'the server is receiving too many large requests at once: retry shortly' },
        { connection: 'close', 'retry-after': '1' },
      );
    }
    const body = read && 'bytes' in read ? read.bytes : undefined;
    try {
      // Parsed here, once, and handed to the SDK as parsedBody: the Request below then carries no body to copy and
      // read again (a third of the time HTTP added to a small call).
      let parsedBody: unknown;
      if (body) {
        try {
          parsedBody = JSON.parse(body.toString('utf8'));
        } catch (err) {
          return send(res, 400, {
            jsonrpc: '2.0',
            id: null,
            error: { code: -32700, message: `Parse error: the body is not JSON (${(err as Error).message})` },
          });
        }
      }
      // A call starts here: only now does it count as in flight (an upload that stalls does not hold up a drain).
      if (draining)
        return send(
          res,
          503,
          { error: 'the server is shutting down: retry on another replica' },
          { connection: 'close', 'retry-after': '1' },
        );
      inFlight++;
      // The caller's context is in use until the answer is sent: it is not closed under the call.
      const release = callers.take(caller);
      const callerKey = callerKeyOf(caller);
      const messages = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]) as {
        id?: unknown;
        method?: unknown;
        params?: { requestId?: unknown };
      }[];
      for (const m of messages) {
        if (m?.method !== 'notifications/cancelled') continue;
        const call = callKey(callerKey, m.params?.requestId);
        // Not answered here: behind a load balancer, another replica may be answering it.
        if (calls.has(call)) calls.get(call)!.abort();
        else opts.cancels?.publish(call);
      }
      const ids = messages
        .filter((m) => typeof m?.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number'))
        .map((m) => callKey(callerKey, m.id));
      const abort = new AbortController();
      for (const id of ids) calls.set(id, abort);
      // The method each id asked for: an answer too large to send says what it answered.
      const methodOf: MethodOf = (id) =>
        messages.find((m) => m?.id === id && typeof m.method === 'string')?.method as string | undefined;
      try {
        await answer(req, res, url, caller, body ? { parsedBody } : {}, abort, methodOf);
      } finally {
        for (const id of ids) if (calls.get(id) === abort) calls.delete(id);
        release();
        inFlight--;
        if (inFlight === 0) idle.splice(0).forEach((r) => r());
      }
    } finally {
      // The body (and what was parsed from it) is held until the answer is sent: only then is its share free.
      if (read && 'release' in read) read.release();
    }
  }

  /**
   * /metrics: read-only figures for a scraper. It carries no caller key (a caller's key names a caller, and this
   * serves none), so it takes a token of the operator's: CUTROOM_METRICS_TOKEN (a scraper need not hold the key to
   * /mcp) or CUTROOM_HTTP_TOKEN. With neither it is served on loopback only.
   */
  async function metrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(res, 405, { error: 'GET /metrics' }, { allow: 'GET, HEAD' });
    const tokens = [http.metricsToken, http.token].filter((t): t is string => !!t);
    if (tokens.length) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      // Each token compared (in constant time), whichever matched.
      if (!m || !tokens.map((t) => same(m[1]!, t)).includes(true))
        return send(
          res,
          401,
          { error: 'GET /metrics needs Authorization: Bearer <CUTROOM_METRICS_TOKEN> (or CUTROOM_HTTP_TOKEN)' },
          challenge('the bearer token is missing or wrong'),
        );
    } else if (!onLoopback) {
      return send(res, 403, {
        error:
          'this server listens beyond loopback without a token for /metrics: set CUTROOM_METRICS_TOKEN (at least 16 characters) and have the scraper send it as a bearer token',
      });
    }
    const queue = opts.queueMetrics ? await opts.queueMetrics.snapshot() : undefined;
    const text = exposition(
      {
        version: VERSION,
        backend: opts.backendKind,
        inFlight,
        draining,
        uptimeS: Math.round((Date.now() - startedAt) / 1000),
      },
      queue,
      opts.queueMetrics?.buckets ?? [],
    );
    res.writeHead(200, {
      'content-type': CONTENT_TYPE,
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(text),
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  }

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    caller: Caller,
    parsed: { parsedBody?: unknown },
    abort: AbortController,
    methodOf: MethodOf,
  ): Promise<void> {
    // The call is cancelled when the client goes away before its answer (or cancels it: see calls).
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    // The path alone, on a fixed origin: the Host was checked above, and a request line in absolute form or an odd
    // Host must not make an invalid URL here.
    const request = new Request(`http://localhost${url.pathname}${url.search}`, {
      method: req.method ?? 'GET',
      headers,
      signal: abort.signal,
    });
    const response = await boundResponse(
      await handler.fetch(request, {
        // The caller rides in authInfo.extra to the factory above (its token field names the caller, never a key).
        authInfo: { token: callerKeyOf(caller), clientId: 'caller', scopes: [], extra: { caller } },
        ...parsed,
      }),
      methodOf,
      (line) => logger.warn(`http: ${line}`),
    );
    const out: Record<string, string[]> = {};
    response.headers.forEach((value, name) => void (out[name] ??= []).push(value));
    // What the SDK varies on, beside the Origin set above.
    if (out.vary) out.vary = [['Origin', ...out.vary].join(', ')];
    // A client that asked to close gets its connection closed, whatever the SDK's headers say.
    if (/\bclose\b/i.test(String(req.headers.connection ?? ''))) out.connection = ['close'];
    res.writeHead(response.status, out);
    if (!response.body) return void res.end();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        if (!res.write(chunk)) await new Promise<void>((r) => res.once('drain', r).once('close', r));
        if (res.destroyed) break;
      }
    } finally {
      res.end();
    }
  }

  return {
    listener: (req, res) => {
      serve(req, res).catch((err: Error) => {
        // A client that goes away mid-upload is not the server's problem.
        if (req.destroyed || (err as NodeJS.ErrnoException).code === 'ECONNRESET' || err.message === 'aborted')
          return void logger.debug(`http: ${err.message}`);
        logger.warn(`http: ${err.message}`);
        send(res, 500, { error: 'internal error: the server logged it' });
      });
    },
    inFlight: () => inFlight,
    drain: async (ms) => {
      draining = true;
      if (inFlight === 0) return true;
      return await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        idle.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    close: () => handler.close(),
  };
}
