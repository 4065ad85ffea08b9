#!/usr/bin/env node
// The bin: config -> backend -> serve stdio. The only file that starts anything.
import { join } from 'node:path';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { LocalBackend } from './backend/local/local-backend.js';
import { RemoteBackend } from './backend/remote.js';
import type { Backend } from './backend/types.js';
import { ConfigError, loadConfig } from './config.js';
import { addSecret, createLogger } from './log.js';
import { INSTALL_HINT, locateMediaTools } from './media/locate.js';
import { PreviewCache } from './media/cache.js';
import { InspectionCache } from './media/inspect-cache.js';
import { SegmentStore } from './media/segments.js';
import type { StoredInspection } from './workflow/inspect.js';
import { findLabelFont } from './media/contact-sheet.js';
import { Limiter, MediaProber } from './media/probe.js';
import type { MediaRuntime } from './workflow/preview.js';
import { createServer } from './server.js';
import { StdioWireTransport } from './stdio-wire.js';
import { NAME, VERSION } from './version.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`cutroom: ${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(2);
  }
  addSecret(config.apiKey);
  const logger = createLogger(config.logLevel);

  const media = await locateMediaTools({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, searchPath: config.searchPath });
  if (!media.ffprobe) logger.warn(`ffprobe not found: edits are checked without measuring their media; ${INSTALL_HINT}`);
  if (!media.ffmpeg) logger.warn(`ffmpeg not found: preview_edit and local renders are unavailable; ${INSTALL_HINT}`);
  const prober = media.ffprobe ? new MediaProber(media.ffprobe) : undefined;
  // One limit on ffmpeg processes for previews and local renders together.
  const limiter = new Limiter(config.maxFfmpeg);
  const runtime: MediaRuntime | undefined = media.ffmpeg
    ? {
        ffmpeg: media.ffmpeg,
        limiter,
        cache: new PreviewCache({ dir: config.cacheDir, keep: config.previewKeep, maxBytes: config.previewMaxMb * 1024 * 1024 }),
        segments: new SegmentStore(join(config.cacheDir, 'segments'), config.previewMaxMb * 1024 * 1024),
        maxInputs: config.ffmpegMaxInputs,
        font: await findLabelFont(),
        prober,
        inspections: new InspectionCache<StoredInspection>(config.cacheDir),
      }
    : undefined;

  let backend: Backend;
  if (config.backend === 'remote') {
    backend = new RemoteBackend({
      baseUrl: config.apiUrl,
      apiKey: config.apiKey,
      authHeader: config.authHeader,
      timeoutMs: config.timeoutMs,
      userAgent: `${NAME}/${VERSION}`,
      logger,
    });
    if (!config.apiKey) logger.warn('VJ_API_KEY is not set: the service will refuse requests until it is');
  } else {
    const local = new LocalBackend({
      dataDir: config.dataDir,
      allowedDirs: config.allowedDirs,
      prober,
      ...(media.ffmpeg ? { runtime: { ffmpeg: media.ffmpeg, limiter, maxInputs: config.ffmpegMaxInputs } } : {}),
      logger,
    });
    backend = local;
    logger.info(`import_media reads from: ${config.allowedDirs.join(', ')}`);
    // In the background: a crash's leftovers need not delay the first answer.
    void local.sweepLeftovers();
  }
  logger.info(`${NAME} ${VERSION} serving stdio on the ${backend.kind} backend (${backend.description})`);

  // Our own wire, not the SDK's StdioServerTransport: an oversized or malformed line gets a JSON-RPC error and
  // the connection goes on (the SDK's closes on a line over 10 MiB and drops malformed ones unanswered).
  const transport = new StdioWireTransport(process.stdin, process.stdout, (line) => logger.warn(`stdin: ${line}`));
  const handle = serveStdio(() => createServer({ backend, logger, media, prober, renderWaitMs: config.renderWaitMs, renderPollMs: config.renderPollMs, runtime, exportsDir: join(config.cacheDir, 'exports'), allowedDirs: config.allowedDirs }), {
    transport,
    onerror: (err) => logger.warn(`transport: ${err.message}`),
  });

  let closing = false;
  const shutdown = async (why: string) => {
    if (closing) return;
    closing = true;
    logger.debug(`shutting down (${why})`);
    await handle.close().catch(() => {});
    await backend.close().catch(() => {});
    process.exit(0);
  };
  process.stdin.on('end', () => void shutdown('stdin closed'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // The process survives every input: a stray rejection is logged, never fatal.
  process.on('unhandledRejection', (err) => logger.error(`unhandled rejection: ${(err as Error)?.stack ?? err}`));
  process.on('uncaughtException', (err) => logger.error(`uncaught exception: ${err.stack ?? err}`));
}

void main();
