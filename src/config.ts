// The only reader of process.env. Everything else receives a validated Config (one zod schema), and the processes
// cutroom starts get the environment made here (childEnvironment), without the secrets.
import { isIP } from 'node:net';
import { availableParallelism, homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';

export const DEFAULT_API_URL = 'https://api.video-jungle.com';

const positiveInt = (name: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`);

/** An http(s) URL without credentials, query or fragment, as compared: no trailing slash. */
const plainUrl = (name: string, example: string) =>
  z
    .string()
    .refine((u) => {
      try {
        const url = new URL(u);
        return (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          !url.username &&
          !url.password &&
          !url.search &&
          !url.hash
        );
      } catch {
        return false;
      }
    }, `${name} must be an http(s) URL without credentials, query or fragment, e.g. ${example}`)
    .transform((u) => u.replace(/\/+$/, ''));

/**
 * OAuth 2.1 sign-in (auth/): cutroom is a protected resource at `<publicUrl>/mcp`, its tokens issued either by an
 * issuer the operator names (`issuer`) or by cutroom's own authorization server (`embedded`).
 */
const OAuthSchema = z.object({
  /** Where people reach this server (CUTROOM_PUBLIC_URL): scheme, host and port, no path. */
  publicUrl: plainUrl('CUTROOM_PUBLIC_URL', 'https://cutroom.example.com').refine(
    (u) => new URL(u).pathname === '/',
    'CUTROOM_PUBLIC_URL is the origin cutroom is reached at (scheme, host, port), without a path: cutroom serves /mcp there',
  ),
  /** The scopes every token must carry (CUTROOM_OAUTH_SCOPES). */
  scopes: z
    .array(
      z
        .string()
        .regex(
          /^[\x21\x23-\x5b\x5d-\x7e]+$/,
          'CUTROOM_OAUTH_SCOPES lists scope names (no spaces or quotes), e.g. cutroom',
        ),
    )
    .min(1, 'CUTROOM_OAUTH_SCOPES must name at least one scope'),
  /** (a) An issuer the operator names (any OpenID Connect provider issuing JWT access tokens). */
  issuer: z
    .object({
      url: plainUrl('CUTROOM_OAUTH_ISSUER', 'https://login.example.com/realms/team'),
      /** The `aud` its tokens carry for cutroom (CUTROOM_OAUTH_AUDIENCE; default the resource, `<publicUrl>/mcp`). */
      audience: z.string().min(1).optional(),
      /** Its key set (CUTROOM_OAUTH_JWKS_URL; default the jwks_uri of its metadata). */
      jwksUrl: plainUrl('CUTROOM_OAUTH_JWKS_URL', 'https://login.example.com/keys').optional(),
    })
    .optional(),
  /** (b) cutroom's own authorization server (CUTROOM_OAUTH_SECRET turns it on). */
  embedded: z
    .object({
      /** The secret its signing key, cookies and the encryption of kept keys derive from. */
      secret: z
        .string()
        .regex(
          /^[\x21-\x7e]{32,}$/,
          'CUTROOM_OAUTH_SECRET must be at least 32 visible ASCII characters, e.g. from `openssl rand -hex 32`',
        ),
      /** The people who may sign in with a password (CUTROOM_OAUTH_USERS_FILE: lines `name:<cutroom hash-password>`). */
      usersFile: z
        .string()
        .refine((p) => isAbsolute(p), 'CUTROOM_OAUTH_USERS_FILE must be an absolute path')
        .optional(),
      /** How long an access token lasts, in seconds (CUTROOM_OAUTH_TOKEN_TTL_S); a refresh token lasts 14 days. */
      tokenTtlS: positiveInt('CUTROOM_OAUTH_TOKEN_TTL_S', 60, 86_400),
    })
    .optional(),
});

export const ConfigSchema = z.object({
  backend: z.enum(['local', 'remote'], { error: 'VJ_BACKEND must be local or remote' }),
  apiKey: z.string().trim().min(1).optional(),
  apiUrl: z
    .string()
    .url('VJ_API_URL must be an http(s) URL such as https://api.video-jungle.com')
    .refine((u) => /^https?:\/\//i.test(u), 'VJ_API_URL must start with http:// or https://')
    .transform((u) => u.replace(/\/+$/, '')),
  authHeader: z.enum(['x-api-key', 'bearer'], {
    error: 'VJ_AUTH_HEADER must be x-api-key or bearer',
  }),
  timeoutMs: positiveInt('VJ_TIMEOUT_MS', 100, 600_000),
  logLevel: z.enum(['error', 'warn', 'info', 'debug'], {
    error: 'CUTROOM_LOG_LEVEL must be error, warn, info or debug',
  }),
  ffmpegPath: z.string().optional(),
  ffprobePath: z.string().optional(),
  /** PATH, handed to media/locate so that it finds ffmpeg without reading the environment itself. */
  searchPath: z.string().optional(),
  /** A PocketSphinx model folder (en-us/, en-us.lm.bin, cmudict-en-us.dict); default the system's. */
  pocketsphinxModel: z.string().optional(),
  /** A whisper.cpp model file (ggml): transcripts use whisper.cpp's command line when it is on PATH. */
  whisperModel: z.string().optional(),
  renderWaitMs: positiveInt('CUTROOM_RENDER_WAIT_MS', 0, 55_000),
  renderPollMs: positiveInt('CUTROOM_RENDER_POLL_MS', 20, 5_000),
  cacheDir: z
    .string()
    .refine((p) => p.startsWith('/') || /^[a-z]:[\\/]/i.test(p), 'CUTROOM_CACHE_DIR must be an absolute path'),
  maxFfmpeg: positiveInt('CUTROOM_MAX_FFMPEG', 1, 16),
  ffmpegMaxInputs: positiveInt('CUTROOM_FFMPEG_MAX_INPUTS', 2, 200),
  previewKeep: positiveInt('CUTROOM_PREVIEW_KEEP', 1, 10_000),
  previewMaxMb: positiveInt('CUTROOM_PREVIEW_MAX_MB', 10, 1_000_000),
  /** A resource larger than this is served in parts of (at least) this many bytes (each message far under 8 MiB). */
  resourcePartBytes: positiveInt('CUTROOM_RESOURCE_PART_BYTES', 3 * 1024, 3 * 1024 * 1024).refine(
    (n) => n % 3 === 0,
    "CUTROOM_RESOURCE_PART_BYTES must be a multiple of 3 (so that the parts' base64 joins)",
  ),
  dataDir: z.string().refine((p) => isAbsolute(p), 'CUTROOM_DATA_DIR must be an absolute path'),
  allowedDirs: z.array(z.string()).min(1, 'CUTROOM_ALLOWED_DIRS must name at least one folder'),
  /**
   * The job queue (CUTROOM_QUEUE_URL, redis:// or rediss://): previews run as BullMQ jobs on `cutroom worker`s
   * sharing the cache dir. Absent: everything runs in this process, as on one machine.
   */
  queueUrl: z
    .string()
    .refine((u) => {
      try {
        const p = new URL(u).protocol;
        return p === 'redis:' || p === 'rediss:';
      } catch {
        return false;
      }
    }, 'CUTROOM_QUEUE_URL must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379')
    .optional(),
  /** How often a server with a queue logs its depth and its oldest waiting job's age (CUTROOM_QUEUE_LOG_MS). */
  queueLogMs: positiveInt('CUTROOM_QUEUE_LOG_MS', 1000, 86_400_000),
  /**
   * Where finished previews are kept for every replica (CUTROOM_S3_*): an S3-compatible bucket, read back only
   * through cutroom's resources. Absent: servers and workers share the cache dir. Credentials are not here: the
   * AWS SDK's default chain reads them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile, an instance role).
   */
  s3: z
    .object({
      bucket: z
        .string()
        .regex(
          /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
          'CUTROOM_S3_BUCKET must be a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens',
        ),
      region: z.string().regex(/^[a-z0-9-]{1,40}$/, 'CUTROOM_S3_REGION must be a region name such as us-east-1'),
      endpoint: z
        .string()
        .refine((u) => {
          try {
            const url = new URL(u);
            return (
              (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && !url.search
            );
          } catch {
            return false;
          }
          // (Never echoed: a URL with credentials in it would show them.)
        }, 'CUTROOM_S3_ENDPOINT must be an http(s) URL without credentials or query (credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), e.g. http://minio:9000')
        .transform((u) => u.replace(/\/+$/, ''))
        .optional(),
      /** Every key starts with it ('' or ending in /). */
      prefix: z
        .string()
        .regex(
          /^((?!\.{1,2}\/)[A-Za-z0-9._-]+\/)*$/,
          'CUTROOM_S3_PREFIX must be folder names of letters, digits, ".", "_" and "-" joined by "/", e.g. cutroom/prod',
        ),
      /** The secret the SDK will read, only to keep it out of logs and errors. */
      hide: z.array(z.string()),
    })
    .optional(),
  /**
   * `cutroom worker`: runs the queue's jobs; at most this many at once (CUTROOM_WORKER_CONCURRENCY, default the cores).
   */
  worker: z
    .object({
      concurrency: positiveInt('CUTROOM_WORKER_CONCURRENCY', 1, 256),
      /** A job's lock, renewed while it runs: a killed worker's job is taken up by another about this long after. */
      lockMs: positiveInt('CUTROOM_WORKER_LOCK_MS', 1000, 600_000),
      /** How long SIGTERM lets the jobs in flight finish (those that do not are taken up by another worker). */
      drainMs: positiveInt('CUTROOM_WORKER_DRAIN_MS', 0, 600_000),
      /** Where the worker answers GET /healthz (CUTROOM_WORKER_HEALTH_PORT; 0: a free port; absent: not at all). */
      healthPort: positiveInt('CUTROOM_WORKER_HEALTH_PORT', 0, 65_535).optional(),
      healthHost: z.string().min(1),
    })
    .optional(),
  /** import_media {url}: what a fetch may reach, bring and take (api/url-fetch.ts). */
  fetch: z.object({
    /** CUTROOM_FETCH_ALLOW_HTTP: http:// links too (else https:// only). */
    allowHttp: z.boolean(),
    /**
     * CUTROOM_FETCH_ALLOW_ADDRESSES: addresses (CIDRs) fetched from although private or loopback. Dangerous: a caller
     * may then reach whatever listens there.
     */
    allowAddresses: z.array(
      z
        .string()
        .refine(
          (c) => /^[0-9a-f:.]+(\/\d{1,3})?$/i.test(c) && isIP(c.split('/')[0]!) !== 0,
          'CUTROOM_FETCH_ALLOW_ADDRESSES lists addresses or CIDRs, e.g. 10.1.2.0/24',
        ),
    ),
    /**
     * CUTROOM_FETCH_DNS_SERVERS: the DNS servers (address or address:port) fetched names are resolved through, rather
     * than the system's resolver; the same rules apply to what they answer.
     */
    dnsServers: z.array(
      z
        .string()
        .refine(
          (s) => isIP(s) !== 0 || isIP(/^\[?([^\]]+?)\]?:\d{1,5}$/.exec(s)?.[1] ?? '') !== 0,
          'CUTROOM_FETCH_DNS_SERVERS lists DNS server addresses, with a port or not: 10.0.0.53, 10.0.0.53:5353, [fd00::53]:53',
        ),
    ),
    maxMb: positiveInt('CUTROOM_FETCH_MAX_MB', 1, 1_000_000),
    timeoutS: positiveInt('CUTROOM_FETCH_TIMEOUT_S', 5, 86_400),
    stallS: positiveInt('CUTROOM_FETCH_STALL_S', 1, 3_600),
  }),
  /** Present when cutroom serves Streamable HTTP (--http) instead of stdio. */
  http: z
    .object({
      port: positiveInt('CUTROOM_HTTP_PORT (--port)', 0, 65_535),
      host: z.string().min(1, 'CUTROOM_HTTP_HOST (--host) must name an address'),
      /** The bearer token every request must carry (the local backend requires one). */
      // Sent as `Authorization: Bearer <token>`: a header carries visible ASCII, and a bearer token no spaces.
      token: z
        .string()
        .regex(
          /^[\x21-\x7e]{16,}$/,
          'CUTROOM_HTTP_TOKEN must be at least 16 visible ASCII characters, without spaces (it is sent as Authorization: Bearer <token>), e.g. from `openssl rand -hex 24`',
        )
        .optional(),
      /**
       * The bearer token a scraper sends for /metrics (CUTROOM_HTTP_TOKEN works too), so that it need not hold that
       * one.
       */
      metricsToken: z
        .string()
        .regex(
          /^[\x21-\x7e]{16,}$/,
          'CUTROOM_METRICS_TOKEN must be at least 16 visible ASCII characters, without spaces (it is sent as Authorization: Bearer <token>), e.g. from `openssl rand -hex 24`',
        )
        .optional(),
      /** Browser origins allowed besides the server's own (scheme://host[:port]). */
      allowedOrigins: z.array(
        z.string().transform((o, ctx) => {
          // Compared with a browser's Origin header as the browser serialises it: scheme://host[:port], lower case,
          // no default port, no path.
          try {
            const u = new URL(o);
            if (
              (u.protocol === 'http:' || u.protocol === 'https:') &&
              `${u.pathname}${u.search}${u.hash}` === '/' &&
              !u.username &&
              !u.password
            )
              return u.origin;
          } catch {
            /* said below */
          }
          ctx.addIssue({
            code: 'custom',
            message: `CUTROOM_HTTP_ALLOWED_ORIGINS lists origins such as https://app.example.com (scheme, host, port; no path, no "*")`,
          });
          return z.NEVER;
        }),
      ),
      /** Host header names accepted; empty: localhost names when listening on loopback, else any. */
      allowedHosts: z.array(z.string()),
      /** Serve callers who bring no key with VJ_API_KEY (off unless the operator opts in). */
      useServerKey: z.boolean(),
      /**
       * CUTROOM_HTTP_NO_AUTH: the local backend answers anyone who reaches it, on loopback only (for a browser host
       * that sends no credentials, such as the ext-apps example host).
       */
      noAuth: z.boolean(),
      maxBodyMb: positiveInt('CUTROOM_HTTP_MAX_BODY_MB', 1, 1024),
      /** ffmpeg processes one caller may run at once (CUTROOM_MAX_FFMPEG bounds them all). */
      callerFfmpeg: positiveInt('CUTROOM_HTTP_CALLER_FFMPEG', 1, 16),
      /** How long SIGTERM waits for calls in flight. */
      drainMs: positiveInt('CUTROOM_HTTP_DRAIN_MS', 0, 600_000),
      /** OAuth 2.1 sign-in (the MCP authorization specification), when CUTROOM_OAUTH_ISSUER or CUTROOM_OAUTH_SECRET is set. */
      oauth: OAuthSchema.optional(),
      /** Where people reach this server (CUTROOM_PUBLIC_URL): signed links start with it (else the request's Host). */
      publicUrl: plainUrl('CUTROOM_PUBLIC_URL', 'https://cutroom.example.com').optional(),
      /**
       * Signed links to files (CUTROOM_LINK_SECRET: replicas must share it; absent, each process makes its own and
       * its links die with it), lasting CUTROOM_LINK_TTL_S seconds.
       */
      linkSecret: z
        .string()
        .regex(
          /^[\x21-\x7e]{32,}$/,
          'CUTROOM_LINK_SECRET must be at least 32 visible ASCII characters, e.g. from `openssl rand -hex 32`',
        )
        .optional(),
      linkTtlS: positiveInt('CUTROOM_LINK_TTL_S', 60, 7 * 86_400),
      /** import_media {upload}: the most an upload may hold, and how long its link takes uploads (to create and resume). */
      uploadMaxMb: positiveInt('CUTROOM_UPLOAD_MAX_MB', 1, 1_000_000),
      uploadTtlS: positiveInt('CUTROOM_UPLOAD_TTL_S', 60, 7 * 86_400),
    })
    .optional(),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

export interface Args {
  http: boolean;
  port?: string;
  host?: string;
  /** `cutroom worker`: run the job queue's jobs instead of serving. */
  worker?: boolean;
  /** `cutroom hash-password`: print the hash of a password read from stdin, for CUTROOM_OAUTH_USERS_FILE. */
  hashPassword?: boolean;
  help?: boolean;
}

/**
 * The command line: `[worker] [--help]`, or `--http [--port N] [--host H]` (also --port=N); anything else is an error.
 */
export function parseArgs(argv: string[]): Args {
  const out: Args = { http: false };
  let i = 0;
  if (argv[0] === 'worker') {
    out.worker = true;
    i = 1;
  }
  if (argv[0] === 'hash-password') {
    if (argv.length > 1)
      throw new ConfigError('cutroom hash-password takes no arguments: it reads the password from stdin');
    return { http: false, hashPassword: true };
  }
  for (; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v.startsWith('--')) throw new ConfigError(`${flag} needs a value`);
      return v;
    };
    if (out.worker && flag !== '--help' && flag !== '-h')
      throw new ConfigError(
        `unknown argument ${flag}: cutroom worker takes no arguments but --help (it is configured by the environment)`,
      );
    if (flag === '--http') out.http = true;
    else if (flag === '--port') out.port = value();
    else if (flag === '--host') out.host = value();
    else if (flag === '--help' || flag === '-h') out.help = true;
    else
      throw new ConfigError(
        `unknown argument ${flag}: cutroom takes --http [--port N] [--host H] (stdio is the default), or worker, or hash-password`,
      );
  }
  return out;
}

/**
 * The OAuth settings as read (validated by OAuthSchema), when CUTROOM_OAUTH_ISSUER or CUTROOM_OAUTH_SECRET is set; one
 * of them, and CUTROOM_PUBLIC_URL with it.
 */
function oauthSettings(env: Env, blank: (v: string | undefined) => string | undefined): { oauth?: unknown } {
  const issuer = blank(env.CUTROOM_OAUTH_ISSUER);
  const secret = blank(env.CUTROOM_OAUTH_SECRET);
  // (CUTROOM_PUBLIC_URL serves signed links too, so it may be set alone.)
  const named = OAUTH_VARIABLES.filter((k) => k !== 'CUTROOM_PUBLIC_URL' && blank(env[k]));
  if (!issuer && !secret) {
    if (named.length)
      throw new ConfigError(
        `${named.join(', ')} ${named.length > 1 ? 'are' : 'is'} set but neither CUTROOM_OAUTH_ISSUER (your identity provider) nor CUTROOM_OAUTH_SECRET (cutroom's own sign-in) is: set one to turn OAuth on`,
      );
    return {};
  }
  if (issuer && secret)
    throw new ConfigError(
      "CUTROOM_OAUTH_ISSUER and CUTROOM_OAUTH_SECRET are both set: tokens come from your identity provider (CUTROOM_OAUTH_ISSUER) or from cutroom's own sign-in (CUTROOM_OAUTH_SECRET), not both",
    );
  const wrongSide = (issuer ? EMBEDDED_VARIABLES : ISSUER_VARIABLES).filter((k) => blank(env[k]));
  if (wrongSide.length)
    throw new ConfigError(
      `${wrongSide.join(', ')} ${issuer ? "belong to cutroom's own sign-in (CUTROOM_OAUTH_SECRET)" : 'belong to an identity provider of your own (CUTROOM_OAUTH_ISSUER)'}, which is not the one configured`,
    );
  if (!blank(env.CUTROOM_PUBLIC_URL))
    throw new ConfigError(
      'OAuth needs CUTROOM_PUBLIC_URL: the address people reach cutroom at (e.g. https://cutroom.example.com), which names it to the authorization server',
    );
  return {
    oauth: {
      publicUrl: blank(env.CUTROOM_PUBLIC_URL),
      scopes: list(env.CUTROOM_OAUTH_SCOPES).length ? list(env.CUTROOM_OAUTH_SCOPES) : ['cutroom'],
      ...(issuer
        ? {
            issuer: {
              url: issuer,
              audience: blank(env.CUTROOM_OAUTH_AUDIENCE),
              jwksUrl: blank(env.CUTROOM_OAUTH_JWKS_URL),
            },
          }
        : {
            embedded: {
              secret,
              usersFile: blank(env.CUTROOM_OAUTH_USERS_FILE),
              tokenTtlS: blank(env.CUTROOM_OAUTH_TOKEN_TTL_S) ?? 3600,
            },
          }),
    },
  };
}
const ISSUER_VARIABLES = ['CUTROOM_OAUTH_AUDIENCE', 'CUTROOM_OAUTH_JWKS_URL'];
const EMBEDDED_VARIABLES = ['CUTROOM_OAUTH_USERS_FILE', 'CUTROOM_OAUTH_TOKEN_TTL_S'];
const OAUTH_VARIABLES = ['CUTROOM_PUBLIC_URL', 'CUTROOM_OAUTH_SCOPES', ...ISSUER_VARIABLES, ...EMBEDDED_VARIABLES];

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** Reads and validates the environment (and the command line); throws ConfigError with one line per bad value. */
export function loadConfig(env: Env = process.env, argv: string[] = []): Config {
  const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
  const args = parseArgs(argv);
  const port = args.port ?? blank(env.CUTROOM_HTTP_PORT);
  const host = args.host ?? blank(env.CUTROOM_HTTP_HOST);
  // --http, or a port or host set for it, serves HTTP.
  const http = !args.worker && (args.http || args.port !== undefined || args.host !== undefined);
  const s3Set = ['CUTROOM_S3_ENDPOINT', 'CUTROOM_S3_REGION', 'CUTROOM_S3_PREFIX'].filter((k) => blank(env[k]));
  if (!blank(env.CUTROOM_S3_BUCKET) && s3Set.length)
    throw new ConfigError(
      `${s3Set.join(', ')} ${s3Set.length > 1 ? 'are' : 'is'} set but CUTROOM_S3_BUCKET is not: name the bucket that keeps the previews`,
    );
  if (blank(env.CUTROOM_S3_BUCKET) && !blank(env.CUTROOM_QUEUE_URL) && !args.help)
    throw new ConfigError(
      "CUTROOM_S3_BUCKET keeps what the job queue's workers make: it needs CUTROOM_QUEUE_URL too (without a queue, everything is made and kept on this machine)",
    );
  if (args.worker && !blank(env.CUTROOM_QUEUE_URL) && !args.help)
    throw new ConfigError(
      "cutroom worker runs the job queue's jobs: set CUTROOM_QUEUE_URL (e.g. redis://127.0.0.1:6379), the same as the servers'",
    );
  const apiKey = blank(env.VJ_API_KEY);
  const home = blank(env.HOME) ?? homedir();
  const raw = {
    // With a key, the service; without one, the embedded local backend, so cutroom works out of the box.
    backend: (blank(env.VJ_BACKEND) ?? (apiKey ? 'remote' : 'local')).toLowerCase(),
    apiKey,
    apiUrl: blank(env.VJ_API_URL) ?? DEFAULT_API_URL,
    authHeader: (blank(env.VJ_AUTH_HEADER) ?? 'x-api-key').toLowerCase(),
    timeoutMs: blank(env.VJ_TIMEOUT_MS) ?? 30_000,
    logLevel: (blank(env.CUTROOM_LOG_LEVEL) ?? 'info').toLowerCase(),
    ffmpegPath: blank(env.FFMPEG_PATH),
    ffprobePath: blank(env.FFPROBE_PATH),
    searchPath: env.PATH,
    pocketsphinxModel: blank(env.CUTROOM_POCKETSPHINX_MODEL),
    whisperModel: blank(env.CUTROOM_WHISPER_MODEL),
    // Clients give up on a tool call near 60 s; stay well inside that.
    renderWaitMs: blank(env.CUTROOM_RENDER_WAIT_MS) ?? 45_000,
    // The first interval between polls of a render; it grows by half each poll, up to 5 s.
    renderPollMs: blank(env.CUTROOM_RENDER_POLL_MS) ?? 1_000,
    cacheDir: blank(env.CUTROOM_CACHE_DIR) ?? join(blank(env.XDG_CACHE_HOME) ?? join(home, '.cache'), 'cutroom'),
    dataDir: blank(env.CUTROOM_DATA_DIR) ?? join(blank(env.XDG_DATA_HOME) ?? join(home, '.local', 'share'), 'cutroom'),
    // A path list like PATH; relative entries are taken from the working directory.
    allowedDirs: (blank(env.CUTROOM_ALLOWED_DIRS) ?? process.cwd())
      .split(delimiter)
      .filter(Boolean)
      .map((d) => resolve(d)),
    maxFfmpeg: blank(env.CUTROOM_MAX_FFMPEG) ?? 2,
    // Each input costs ffmpeg tens of MB: longer timelines are rendered in chunks of this many inputs.
    ffmpegMaxInputs: blank(env.CUTROOM_FFMPEG_MAX_INPUTS) ?? 16,
    previewKeep: blank(env.CUTROOM_PREVIEW_KEEP) ?? 20,
    previewMaxMb: blank(env.CUTROOM_PREVIEW_MAX_MB) ?? 2048,
    // 3 MiB is 4 MiB in base64: half the 8 MiB a message may carry (a host may wrap it again to relay it).
    resourcePartBytes: blank(env.CUTROOM_RESOURCE_PART_BYTES) ?? 3 * 1024 * 1024,
    queueUrl: blank(env.CUTROOM_QUEUE_URL),
    fetch: {
      allowHttp: /^(1|true|yes)$/i.test(blank(env.CUTROOM_FETCH_ALLOW_HTTP) ?? ''),
      allowAddresses: list(env.CUTROOM_FETCH_ALLOW_ADDRESSES),
      dnsServers: list(env.CUTROOM_FETCH_DNS_SERVERS),
      maxMb: blank(env.CUTROOM_FETCH_MAX_MB) ?? 4096,
      timeoutS: blank(env.CUTROOM_FETCH_TIMEOUT_S) ?? 1800,
      stallS: blank(env.CUTROOM_FETCH_STALL_S) ?? 30,
    },
    queueLogMs: blank(env.CUTROOM_QUEUE_LOG_MS) ?? 60_000,
    ...(blank(env.CUTROOM_S3_BUCKET)
      ? {
          s3: {
            bucket: blank(env.CUTROOM_S3_BUCKET),
            region: blank(env.CUTROOM_S3_REGION) ?? blank(env.AWS_REGION) ?? 'us-east-1',
            endpoint: blank(env.CUTROOM_S3_ENDPOINT),
            prefix: (blank(env.CUTROOM_S3_PREFIX) ?? '').replace(/^\/+|\/+$/g, '').replace(/(.)$/, '$1/'),
            hide: [blank(env.AWS_SECRET_ACCESS_KEY), blank(env.AWS_SESSION_TOKEN)].filter((v): v is string => !!v),
          },
        }
      : {}),
    // A worker runs as many jobs at once as the machine has cores (each job's ffmpeg work is bounded by them too).
    ...(args.worker
      ? {
          worker: {
            concurrency: blank(env.CUTROOM_WORKER_CONCURRENCY) ?? availableParallelism(),
            lockMs: blank(env.CUTROOM_WORKER_LOCK_MS) ?? 15_000,
            drainMs: blank(env.CUTROOM_WORKER_DRAIN_MS) ?? 30_000,
            healthPort: blank(env.CUTROOM_WORKER_HEALTH_PORT),
            healthHost: blank(env.CUTROOM_WORKER_HEALTH_HOST) ?? '127.0.0.1',
          },
        }
      : {}),
    ...(http
      ? {
          http: {
            port: port ?? 8808,
            host: host ?? '127.0.0.1',
            token: blank(env.CUTROOM_HTTP_TOKEN),
            metricsToken: blank(env.CUTROOM_METRICS_TOKEN),
            allowedOrigins: list(env.CUTROOM_HTTP_ALLOWED_ORIGINS),
            allowedHosts: list(env.CUTROOM_HTTP_ALLOWED_HOSTS),
            useServerKey: /^(1|true|yes)$/i.test(blank(env.CUTROOM_HTTP_USE_SERVER_KEY) ?? ''),
            noAuth: /^(1|true|yes)$/i.test(blank(env.CUTROOM_HTTP_NO_AUTH) ?? ''),
            maxBodyMb: blank(env.CUTROOM_HTTP_MAX_BODY_MB) ?? 16,
            callerFfmpeg: blank(env.CUTROOM_HTTP_CALLER_FFMPEG) ?? 2,
            drainMs: blank(env.CUTROOM_HTTP_DRAIN_MS) ?? 30_000,
            publicUrl: blank(env.CUTROOM_PUBLIC_URL),
            linkSecret: blank(env.CUTROOM_LINK_SECRET),
            linkTtlS: blank(env.CUTROOM_LINK_TTL_S) ?? 3600,
            uploadMaxMb: blank(env.CUTROOM_UPLOAD_MAX_MB) ?? 4096,
            uploadTtlS: blank(env.CUTROOM_UPLOAD_TTL_S) ?? 86_400,
            ...oauthSettings(env, blank),
          },
        }
      : {}),
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    // Never echo the offending value: it could be the key pasted in the wrong variable.
    const lines = parsed.error.issues.map((i) => i.message);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return parsed.data;
}

/**
 * No native addons: msgpackr (under BullMQ) loads a prebuilt native accelerator when npm installed its optional
 * package; its own switch keeps it to JavaScript. Called before the job queue's modules are loaded.
 */
export function noNativeAddons(env: Env = process.env): void {
  env.MSGPACKR_NATIVE_ACCELERATION_DISABLED = 'true';
}

/** Secrets cutroom reads that no child (ffmpeg, a speech engine) is given. */
const SECRETS = [
  'VJ_API_KEY',
  'CUTROOM_HTTP_TOKEN',
  'CUTROOM_METRICS_TOKEN',
  'CUTROOM_OAUTH_SECRET',
  'CUTROOM_LINK_SECRET',
  'CUTROOM_QUEUE_URL',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
];

/**
 * The environment children run with: the server's own, less its secrets (a child's environment is readable in
 * /proc by its user, and ffmpeg needs no key).
 */
export function childEnvironment(env: Env = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !SECRETS.includes(k)) out[k] = v;
  return out;
}
