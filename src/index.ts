#!/usr/bin/env node
// The bin: config -> backend -> serve stdio (or Streamable HTTP with --http). It reads the config, finds ffmpeg, builds
// the backend and serves stdio or HTTP (listening, and draining on SIGTERM). The only file that starts anything:
// processes, listeners, background sweeps.
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { STATUS_CODES, createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { localBackend, mediaRuntime, rememberedDir, remoteBackend, serverDeps, type Shared } from './assemble.js';
import type { LocalBackend } from './backend/local/local-backend.js';
import type { Backend } from './backend/types.js';
import { ConfigError, childEnvironment, loadConfig, noNativeAddons, parseArgs, type Config } from './config.js';
import type { Auth } from './auth/index.js';
import { hashPassword } from './auth/passwords.js';
import { Callers, callerId, type Caller } from './http/callers.js';
import { createHttpApp, isLoopback } from './http/serve-http.js';
import { createUploadDesk, type UploadDesk } from './http/uploads.js';
import { workerHealthListener } from './http/worker-health.js';
import { addSecret, createLogger, type Logger } from './log.js';
import { INSTALL_HINT, locateMediaTools } from './media/locate.js';
import { SPEECH_INSTALL_HINT, locateSpeechEngine } from './media/speech.js';
import { findLabelFont } from './media/contact-sheet.js';
import { Limiter } from './media/probe.js';
import { killChildrenNow, killOrphanedChildren, setChildEnvironment, stopChildren } from './media/process.js';
import type { MediaRuntime } from './workflow/media-runtime.js';
import { createServer } from './server.js';
import { ANSWER_GRACE_MS, StdioWireTransport } from './stdio-wire.js';
import { NAME, VERSION } from './version.js';

const USAGE = `Usage: cutroom                 serve MCP over stdio
       cutroom --http [--port N] [--host H]   serve MCP over Streamable HTTP
       cutroom worker        run the job queue's jobs (with CUTROOM_QUEUE_URL; cutroom worker --help)
       cutroom hash-password print the hash of a password read from stdin (a line of CUTROOM_OAUTH_USERS_FILE)
Configured by the environment (README: Configuration).
`;

const WORKER_USAGE = `Usage: cutroom worker

Runs the jobs of cutroom's job queue (previews, local renders, inspections, transcriptions), which servers started
with the same CUTROOM_QUEUE_URL put in it. Run any number, on any machine that shares CUTROOM_CACHE_DIR (or the
object store, CUTROOM_S3_*) and, on the local backend, CUTROOM_DATA_DIR with the servers; each needs ffmpeg, and
PocketSphinx for transcriptions.

  CUTROOM_QUEUE_URL            redis:// or rediss:// URL of the queue's Redis (required)
  CUTROOM_CACHE_DIR            the cache dir shared with the servers
  CUTROOM_DATA_DIR             the data dir shared with the servers (local renders are written there)
  CUTROOM_S3_BUCKET            keep finished previews in this S3 bucket (the servers' too): no shared cache dir
  CUTROOM_S3_ENDPOINT          an S3-compatible store's URL (MinIO, Ceph...); CUTROOM_S3_REGION, CUTROOM_S3_PREFIX
                               (credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or the AWS SDK's default chain)
  CUTROOM_WORKER_CONCURRENCY   jobs at once, and ffmpeg processes at once (default: the cores)
  CUTROOM_WORKER_LOCK_MS       a job's lock; a killed worker's job is taken up about this long after (default 15000)
  CUTROOM_WORKER_DRAIN_MS      how long SIGTERM lets jobs in flight finish (default 30000)
  CUTROOM_WORKER_HEALTH_PORT   answer GET /healthz on this port (default: none): 200 {"status":"ok",...}, or 503
                               when Redis does not answer within 1 s or the worker is draining
  CUTROOM_WORKER_HEALTH_HOST   the address /healthz listens on (default 127.0.0.1; 0.0.0.0 for probes from outside)
  CUTROOM_LOG_LEVEL            error, warn, info (default) or debug; logs go to stderr
  FFMPEG_PATH, FFPROBE_PATH    ffmpeg and ffprobe to use (default: found on PATH)
  CUTROOM_FFMPEG_MAX_INPUTS    inputs per ffmpeg process; longer timelines render in chunks (default 16)
  CUTROOM_PREVIEW_KEEP         finished previews kept in the cache dir (default 20)
  CUTROOM_PREVIEW_MAX_MB       size cap of the kept previews, and of the kept segments (default 2048)
  CUTROOM_POCKETSPHINX_MODEL   PocketSphinx model folder for transcriptions (default: the system's)
  CUTROOM_WHISPER_MODEL        a whisper.cpp model: transcriptions use whisper-cli when it is on PATH
`;

async function main(): Promise<void> {
  let config: Config;
  try {
    const args = parseArgs(process.argv.slice(2));
    if (args.hashPassword) return await printPasswordHash();
    if (args.help) {
      // A CLI answer, not MCP mode: --help ends before any transport starts, so stdout is the person's terminal.
      process.stdout.write(args.worker ? WORKER_USAGE : USAGE);
      process.exit(0);
    }
    config = loadConfig(process.env, process.argv.slice(2));
    if (config.http) checkHttpConfig(config);
  } catch (err) {
    process.stderr.write(`cutroom: ${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(2);
  }
  addSecret(config.apiKey);
  addSecret(config.http?.token);
  addSecret(config.http?.oauth?.embedded?.secret);
  addSecret(config.http?.linkSecret);
  if (config.queueUrl) addSecret(new URL(config.queueUrl).password || undefined);
  for (const secret of config.s3?.hide ?? []) addSecret(secret);
  // Children get no secret, and carry this server's identity (so a server after a kill -9 finds them).
  setChildEnvironment(childEnvironment(process.env));
  const logger = createLogger(config.logLevel);

  const media = await locateMediaTools({
    ffmpegPath: config.ffmpegPath,
    ffprobePath: config.ffprobePath,
    searchPath: config.searchPath,
  });
  if (!media.ffprobe)
    logger.warn(`ffprobe not found: edits are checked without measuring their media; ${INSTALL_HINT}`);
  if (!media.ffmpeg) logger.warn(`ffmpeg not found: preview_edit and local renders are unavailable; ${INSTALL_HINT}`);
  const speech = await locateSpeechEngine({
    searchPath: config.searchPath,
    modelDir: config.pocketsphinxModel,
    whisperModel: config.whisperModel,
  });
  if (config.whisperModel && speech?.name !== 'whisper.cpp')
    logger.warn(
      `CUTROOM_WHISPER_MODEL is set, but ${existsSync(config.whisperModel) ? 'no whisper.cpp command line (whisper-cli) is on PATH' : 'its file does not exist'}: transcripts use ${speech ? 'PocketSphinx' : 'no engine'}`,
    );
  if (speech) media.speech = speech;
  else logger.info(`no speech engine found: transcribe_asset is unavailable; ${SPEECH_INSTALL_HINT}`);
  // One limit on ffmpeg processes for previews and local renders together (over HTTP: all callers together).
  // A worker's limit on ffmpeg processes follows its cores (CUTROOM_WORKER_CONCURRENCY), a server's CUTROOM_MAX_FFMPEG.
  const shared: Shared = {
    config,
    logger,
    media,
    limiter: new Limiter(config.worker?.concurrency ?? config.maxFfmpeg),
    ...(media.ffmpeg ? { font: await findLabelFont() } : {}),
  };
  // (Before BullMQ is loaded, by the worker or the queue's client.)
  if (config.queueUrl) noNativeAddons();
  if (config.s3) shared.objects = await openStore(shared, config.s3);
  if (config.worker) return runWorker(shared, config.worker);
  if (config.queueUrl) {
    const queue = await openQueue(shared, config.queueUrl);
    shared.jobs = queue;
    shared.callCancels = queue.callCancels();
    // What a later call may name, where every replica reads it: the bucket when there is one, else Redis.
    shared.kept = shared.objects ? (await import('./jobs/kept-store.js')).bucketKept(shared.objects) : queue.kept();
  }
  if (config.http) return serveHttp(shared, config.http);

  const parts = mediaRuntime(shared, config.cacheDir, shared.limiter);
  let backend: Backend;
  if (config.backend === 'remote') {
    backend = remoteBackend(shared, config.apiKey, rememberedDir(config));
    if (!config.apiKey) logger.warn('VJ_API_KEY is not set: the service will refuse requests until it is');
  } else {
    const local = localBackend(shared, parts.prober);
    backend = local;
    logger.info(`import_media reads from: ${config.allowedDirs.join(', ')}`);
    // In the background: a crash's leftovers need not delay the first answer.
    void local.sweepLeftovers();
  }
  logger.info(`${NAME} ${VERSION} serving stdio on the ${backend.kind} backend (${backend.description})`);

  // Our own wire, not the SDK's StdioServerTransport: an oversized or malformed line gets a JSON-RPC error and
  // the connection goes on (the SDK's closes on a line over 10 MiB and drops malformed ones unanswered).
  const transport = new StdioWireTransport(process.stdin, process.stdout, (line) => logger.warn(`stdio: ${line}`));
  const deps = serverDeps(shared, backend, parts, config.cacheDir);
  const handle = serveStdio(() => createServer(deps), {
    transport,
    onerror: (err) => logger.warn(`transport: ${err.message}`),
  });

  let closing = false;
  const shutdown = async (why: string) => {
    if (closing) return;
    closing = true;
    logger.debug(`shutting down (${why})`);
    // Stdin ended: answer what was already asked first. A signal: only let out what is already written.
    await transport.finish(why === 'stdin closed' ? ANSWER_GRACE_MS : 0);
    await handle.close().catch(() => {});
    await backend.close().catch(() => {});
    await shared.jobs?.close().catch(() => {});
    await stopAll(logger);
    process.exit(0);
  };
  process.stdin.on('end', () => void shutdown('stdin closed'));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      // A signal during the grace stdin's end gives the calls in flight: stop waiting for them; what is written is
      // still flushed, and shutdown goes on from there.
      if (closing) {
        logger.info(`${signal} while answering what stdin asked before it ended: stopping now`);
        transport.stopWaiting();
      } else void shutdown(signal);
    });
  }
  keepAlive(logger);
  void sweepAfterTheDead(logger, parts.runtime);
}

/**
 * Over HTTP the local backend (your files) answers only with the operator's token; a service needs each caller's key.
 */
function checkHttpConfig(config: Config): void {
  const http = config.http!;
  if (http.noAuth) return checkNoAuthConfig(config);
  if (http.oauth) return checkOAuthConfig(config);
  if (config.backend === 'local' && !http.token) {
    // On loopback too: any local process (or a page that gets past the Origin check) could reach your files.
    throw new ConfigError(
      `over HTTP the local backend (your files) answers only with a bearer token: set CUTROOM_HTTP_TOKEN (at least 16 characters, e.g. from \`openssl rand -hex 24\`)${isLoopback(http.host) ? ', or CUTROOM_HTTP_NO_AUTH=1 for a host on this machine that sends none' : `; refusing to listen on ${http.host} without one`}`,
    );
  }
  if (http.useServerKey && !config.apiKey)
    throw new ConfigError('CUTROOM_HTTP_USE_SERVER_KEY is set but VJ_API_KEY is not');
}

/**
 * Without authentication the local backend answers anyone who can reach it: so only on loopback, where only this
 * machine's processes (and pages the Origin check lets through) can.
 */
function checkNoAuthConfig(config: Config): void {
  const http = config.http!;
  if (config.backend !== 'local')
    throw new ConfigError(
      "CUTROOM_HTTP_NO_AUTH is for the local backend; on the service backend callers bring their key, or use the team's with CUTROOM_HTTP_USE_SERVER_KEY=1",
    );
  if (http.oauth)
    throw new ConfigError(
      'CUTROOM_HTTP_NO_AUTH and OAuth sign-in (CUTROOM_OAUTH_ISSUER or CUTROOM_OAUTH_SECRET) exclude each other',
    );
  if (!isLoopback(http.host))
    throw new ConfigError(
      `CUTROOM_HTTP_NO_AUTH serves your files to anyone who reaches the server, so only on loopback: refusing to listen on ${http.host} without authentication (set CUTROOM_HTTP_TOKEN, or OAuth sign-in)`,
    );
}

/**
 * With OAuth, people sign in instead of bringing the operator's token; what each needs to be served must be there.
 */
function checkOAuthConfig(config: Config): void {
  const http = config.http!;
  const oauth = http.oauth!;
  if (http.useServerKey && !config.apiKey)
    throw new ConfigError('CUTROOM_HTTP_USE_SERVER_KEY is set but VJ_API_KEY is not');
  if (config.backend === 'remote' && oauth.issuer && !http.useServerKey)
    throw new ConfigError(
      "people who sign in through your identity provider are served with the team's Video Jungle key: set VJ_API_KEY and CUTROOM_HTTP_USE_SERVER_KEY=1 (or use cutroom's own sign-in, CUTROOM_OAUTH_SECRET, where each person gives their own key)",
    );
  if (config.backend === 'local' && oauth.embedded && !oauth.embedded.usersFile && !http.token)
    throw new ConfigError(
      'nobody could sign in: list people in CUTROOM_OAUTH_USERS_FILE (lines name:hash, the hash from `cutroom hash-password`), or set CUTROOM_HTTP_TOKEN to sign in with',
    );
  if (!isLoopback(http.host) && new URL(oauth.publicUrl).protocol !== 'https:')
    throw new ConfigError(
      `CUTROOM_PUBLIC_URL must be https:// when listening beyond loopback (${http.host}): OAuth sends codes and tokens only over TLS (put a TLS proxy in front)`,
    );
}

/** Resumable uploads (import_media {upload}) into the local backend, kept in the cache dir; swept each 10 minutes. */
function openUploads(shared: Shared, http: NonNullable<Config['http']>, callers: Callers): UploadDesk {
  const { config, logger } = shared;
  const desk = createUploadDesk({
    dir: join(config.cacheDir, 'uploads'),
    // Replicas share CUTROOM_LINK_SECRET (and the cache dir): any of them takes an upload another linked.
    secret: http.linkSecret ?? randomBytes(32).toString('hex'),
    ttlS: http.uploadTtlS,
    maxBytes: http.uploadMaxMb * 1024 * 1024,
    // Into the uploader's own projects: the operator's, or those of the person signed in (callers.ts).
    importMedia: async (callerKey, project, path, call) => {
      const m = /^local-user:(.+)$/.exec(callerKey);
      const caller: Caller = m ? { kind: 'local-user', id: m[1]! } : { kind: 'operator' };
      if (!m && callerKey !== 'operator') throw new Error('an upload of no local caller');
      const release = callers.take(caller);
      try {
        const backend = callers.forCaller(caller).backend as LocalBackend;
        return await backend.importMedia(project, path, call);
      } finally {
        release();
      }
    },
    logger,
  });
  const sweep = () => void desk.sweep().catch((err: Error) => logger.warn(`uploads: sweep: ${err.message}`));
  sweep();
  setInterval(sweep, 600_000).unref();
  return desk;
}

/** How long a body may take to arrive: a minute, but an upload's (a PATCH of up to gigabytes) UPLOAD_BODY_MS. */
const BODY_MS = 60_000;
/** An upload's PATCH: hours at a slow link's pace, and never UPLOAD_STALL_MS without a byte (a client resumes). */
const UPLOAD_BODY_MS = 6 * 3_600_000;
const UPLOAD_STALL_MS = 60_000;

/** Ends a request whose body has not all arrived in its time (Node's requestTimeout, but per request). */
function bodyDeadlines(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const upload = (req.url ?? '').startsWith('/uploads/');
    const timer = setTimeout(
      () => {
        if (!req.complete) req.socket.destroy();
      },
      upload ? UPLOAD_BODY_MS : BODY_MS,
    );
    const stall = () => req.socket.destroy();
    if (upload) req.socket.setTimeout(UPLOAD_STALL_MS, stall);
    const done = () => {
      clearTimeout(timer);
      if (upload) req.socket.setTimeout(0).off('timeout', stall);
    };
    req.once('end', done).once('close', done);
    listener(req, res);
  };
}

async function serveHttp(shared: Shared, http: NonNullable<Config['http']>): Promise<void> {
  const { config, logger } = shared;
  const callers = new Callers(shared);
  const queueMetrics = config.queueUrl ? await openQueueMetrics(config.queueUrl) : undefined;
  if (config.backend === 'local') {
    const local = callers.forLocal().backend as LocalBackend;
    logger.info(`import_media reads from: ${config.allowedDirs.join(', ')}`);
    void local.sweepLeftovers();
  }
  const auth = http.oauth ? await startAuth(shared, http, callers) : undefined;
  const uploads = config.backend === 'local' ? openUploads(shared, http, callers) : undefined;
  const app = createHttpApp({
    backendKind: config.backend,
    http,
    serverKey: config.apiKey,
    callers,
    ...(auth ? { auth } : {}),
    logger,
    fileRoots: [config.cacheDir, config.dataDir],
    ...(uploads ? { uploads } : {}),
    ...(queueMetrics ? { queueMetrics } : {}),
    ...(shared.callCancels ? { cancels: shared.callCancels } : {}),
  });
  // A request's headers must arrive within 20 s (checked every 2 s: Node's default, 30 s, let it run to 50), and its
  // body within a minute (bodyDeadlines), an upload's excepted: a client that sends a byte now and then holds no
  // socket and no memory for long. Answers may stream for as long as their call runs.
  const server = createHttpServer(
    { requestTimeout: 0, headersTimeout: 20_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 2_000 },
    bodyDeadlines(app.listener),
  );
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(http.port, http.host, () => resolve());
  }).catch((err: NodeJS.ErrnoException) => {
    logger.error(
      `cannot listen on ${http.host}:${http.port}: ${err.code === 'EADDRINUSE' ? 'the port is in use' : err.message}`,
    );
    process.exit(1);
  });
  const { port } = server.address() as AddressInfo;
  const shown = http.host.includes(':') ? `[${http.host}]` : http.host;
  const localGate = http.noAuth
    ? 'WITHOUT authentication (CUTROOM_HTTP_NO_AUTH): any process on this machine may use it'
    : `behind ${http.oauth ? 'OAuth sign-in' : 'CUTROOM_HTTP_TOKEN'}`;
  const keys =
    config.backend === 'local'
      ? `the local backend, ${localGate}`
      : `the service at ${config.apiUrl}, with each caller's own key${http.useServerKey ? ' (or VJ_API_KEY)' : ''}`;
  logger.announce(`${NAME} ${VERSION} listening on http://${shown}:${port}/mcp (${keys})`);
  if (auth)
    logger.info(
      `oauth: sign-in at ${auth.resource} with tokens from ${http.oauth!.embedded ? "cutroom's own authorization server" : auth.issuer} (metadata: ${auth.metadataUrl})`,
    );

  let closing = false;
  const shutdown = async (why: string) => {
    if (closing) return;
    closing = true;
    logger.info(`${why}: finishing ${app.inFlight()} call(s) in flight (up to ${http.drainMs} ms), taking no new ones`);
    // Still listening while draining: /healthz answers 503 (a load balancer sees the drain, not a refused
    // connection) and new calls get 503 with Retry-After; idle keep-alive connections are closed so that clients
    // come back on a new one, and every answer from now on closes its connection.
    const drain = app.drain(http.drainMs);
    server.closeIdleConnections();
    const drained = await drain;
    if (!drained) logger.warn(`calls still in flight after ${http.drainMs} ms; stopping anyway`);
    server.close();
    server.closeAllConnections();
    await app.close().catch(() => {});
    await callers.close();
    await shared.jobs?.close().catch(() => {});
    await queueMetrics?.close().catch(() => {});
    await stopAll(logger);
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));
  keepAlive(logger);
  void sweepAfterTheDead(logger);
}

/**
 * `cutroom hash-password`: reads a password (typed without echo on a terminal, else the first line of stdin) and
 * prints its hash, for a line `name:<hash>` of CUTROOM_OAUTH_USERS_FILE.
 */
async function printPasswordHash(): Promise<void> {
  const stdin = process.stdin;
  if (stdin.isTTY) process.stderr.write('Password (not shown): ');
  const password = await new Promise<string>((resolve) => {
    let text = '';
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    const done = () => {
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
      resolve(text.split(/\r?\n/)[0] ?? '');
    };
    stdin.on('data', (chunk: string) => {
      // Ctrl-C on a terminal in raw mode.
      if (chunk.includes('\u0003')) process.exit(130);
      text += chunk;
      if (/[\r\n]/.test(text)) done();
    });
    stdin.on('end', done);
  });
  if (stdin.isTTY) process.stderr.write('\n');
  if (password.length < 8) {
    process.stderr.write('cutroom: a password must be at least 8 characters\n');
    process.exit(2);
  }
  // The one output of `cutroom hash-password` (no server runs): on stdout, so `> users.hash` or a pipe takes it.
  process.stdout.write(`${await hashPassword(password)}\n`);
  process.exit(0);
}

/** OAuth sign-in (auth/): tokens checked against the issuer the operator names, or cutroom's own. */
async function startAuth(shared: Shared, http: NonNullable<Config['http']>, callers: Callers): Promise<Auth> {
  const { config, logger } = shared;
  try {
    // Loaded only when OAuth is configured (jose, and oidc-provider for cutroom's own sign-in).
    const { Auth } = await import('./auth/index.js');
    return await Auth.create({
      oauth: http.oauth!,
      backendKind: config.backend,
      dataDir: config.dataDir,
      logger,
      ...(http.token ? { operatorToken: http.token } : {}),
      ...(http.useServerKey && config.apiKey ? { teamKey: config.apiKey } : {}),
      keyCallerId: callerId,
      ...(config.backend === 'remote' ? { checkServiceKey: (key: string) => callers.checkKey(key) } : {}),
    });
  } catch (err) {
    logger.error(`oauth: ${(err as Error).message}`);
    process.exit(2);
  }
}

/** The job queue's client (loaded only when one is configured: an embedded server never loads BullMQ). */
async function openQueue(shared: Shared, url: string) {
  const { QueueJobs } = await import('./jobs/queue.js');
  const jobs = new QueueJobs({
    url,
    logger: shared.logger,
    startWaitMs: shared.config.renderWaitMs,
    ...(shared.config.http ? { callerLimit: shared.config.http.callerFfmpeg } : {}),
    ...(shared.objects ? { store: { shown: shared.objects.shown, cacheRoot: shared.config.cacheDir } } : {}),
  });
  await jobs.ready();
  // The queue's depth in the log at an interval: a backlog (too few workers) shows before callers time out.
  setInterval(
    () =>
      void jobs.depth().then(
        (line) => shared.logger.info(line),
        (err: Error) => shared.logger.warn(`job queue: its depth could not be read (${err.message})`),
      ),
    shared.config.queueLogMs,
  ).unref();
  return jobs;
}

/** The queue's figures for /metrics (loaded only when a queue is configured, like the queue itself). */
async function openQueueMetrics(url: string) {
  const { QueueMetrics, BUCKETS } = await import('./jobs/metrics.js');
  // Not waited for: the queue's own client already waited for Redis (a Redis away at start is said once, there).
  const metrics = new QueueMetrics(url);
  return { snapshot: () => metrics.snapshot(), buckets: BUCKETS, close: () => metrics.close() };
}

/** The object store (loaded only when a bucket is configured); one that does not answer yet is said, not fatal. */
async function openStore(shared: Shared, s3: NonNullable<Config['s3']>): Promise<NonNullable<Shared['objects']>> {
  const { ObjectStore } = await import('./jobs/object-store.js');
  const { hide: _h, ...where } = s3;
  const store = new ObjectStore(where);
  await store.check().then(
    () => shared.logger.info(`finished previews are kept in the object store ${store.where}`),
    (err: Error) => shared.logger.warn(`${err.message} (${store.where}); previews that need it fail until it answers`),
  );
  return store;
}

/** `cutroom worker`: runs the queue's jobs until SIGTERM, then lets the jobs in flight finish (up to its drain). */
async function runWorker(shared: Shared, opts: NonNullable<Config['worker']>): Promise<void> {
  const { config, logger } = shared;
  if (!shared.media.ffmpeg) {
    logger.error(`ffmpeg not found: a worker makes previews with it; ${INSTALL_HINT}`);
    process.exit(1);
  }
  const { startWorker } = await import('./jobs/worker.js');
  keepAlive(logger);
  await sweepAfterTheDead(logger);
  const worker = await startWorker({
    url: config.queueUrl!,
    logger,
    concurrency: opts.concurrency,
    cacheDir: config.cacheDir,
    dataDir: config.dataDir,
    lockMs: opts.lockMs,
    ...(shared.objects ? { store: shared.objects.shown } : {}),
    ...(config.s3?.endpoint ? { hidden: [new URL(config.s3.endpoint).host] } : {}),
    runtimeFor: (dir) => mediaRuntime(shared, dir, shared.limiter).runtime,
  });
  // A worker killed with kill -9 on this machine leaves its ffmpeg running: stopped here, since its job is redone.
  setInterval(() => void sweepAfterTheDead(logger), 10_000).unref();
  let closing = false;
  if (opts.healthPort !== undefined) {
    const health = createHttpServer(
      { requestTimeout: 10_000, headersTimeout: 5_000 },
      workerHealthListener({ health: () => worker.health(), startedAt: Date.now() }),
    );
    await new Promise<void>((resolve) => {
      health.once('error', (err: NodeJS.ErrnoException) => {
        logger.error(
          `cannot listen on ${opts.healthHost}:${opts.healthPort} for /healthz: ${err.code === 'EADDRINUSE' ? 'the port is in use' : err.message}`,
        );
        process.exit(1);
      });
      health.listen(opts.healthPort, opts.healthHost, () => resolve());
    });
    const shown = opts.healthHost.includes(':') ? `[${opts.healthHost}]` : opts.healthHost;
    logger.announce(`cutroom worker: health on http://${shown}:${(health.address() as AddressInfo).port}/healthz`);
    // Not a reason to stay up: the worker's own connections are.
    health.unref();
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      logger.info(`${signal}: finishing the jobs in flight (up to ${opts.drainMs} ms), taking no new ones`);
      void worker
        .close(opts.drainMs)
        .then(() => stopAll(logger))
        .finally(() => process.exit(0));
    });
  }
  // The worker's connections keep it running; stdin is not its (it may be closed or a terminal).
}

/** The status and error text that answer a request Node could not parse, by the parser's error code. */
function clientErrorAnswer(code: string | undefined): [status: number, error: string] {
  if (code === 'HPE_HEADER_OVERFLOW')
    return [431, 'the request headers are too large (16 KB at most): no key or token is that long'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [408, 'the request did not arrive in time (its headers within 20 s, all of it within 60 s)'];
  return [400, `the request is not valid HTTP (${code ?? 'malformed'})`];
}

/** A request Node could not parse gets a JSON answer that says why (the default would be an empty reply or none). */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const [status, error] = clientErrorAnswer(err.code);
  const body = JSON.stringify({ error });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Nothing cutroom started outlives it: every child still running (a background preview, a render) is stopped. */
async function stopAll(logger: Logger): Promise<void> {
  const stopped = await stopChildren();
  if (stopped) logger.info(`stopped ${stopped} ffmpeg/engine process(es) still running`);
}

/**
 * What a killed server (kill -9: its children got no word) left: its processes, found by the owner they carry, and
 * the previews and segments it was making.
 */
async function sweepAfterTheDead(logger: Logger, runtime?: MediaRuntime): Promise<void> {
  try {
    const killed = await killOrphanedChildren();
    if (killed) logger.info(`stopped ${killed} process(es) left running by a server that is gone`);
    if (runtime) {
      const removed = await runtime.cache.evict();
      await runtime.segments.evict();
      if (removed.length) logger.debug(`swept ${removed.length} preview folder(s)`);
    }
  } catch (err) {
    logger.warn(`sweeping after a stopped server: ${(err as Error).message}`);
  }
}

/** The process survives every input: a stray rejection is logged, never fatal. */
function keepAlive(logger: Logger): void {
  // The last way out (process.exit from anywhere): no child survives it.
  process.on('exit', killChildrenNow);
  // A stderr whose reader is gone (EPIPE) takes the log lines, nothing more: unheard, its error would be uncaught,
  // logged to stderr again, and so on for ever (a server left spinning on one core).
  process.stderr.on('error', () => {});
  process.on('unhandledRejection', (err) => logger.error(`unhandled rejection: ${(err as Error)?.stack ?? err}`));
  process.on('uncaughtException', (err) => logger.error(`uncaught exception: ${err.stack ?? err}`));
}

void main();
