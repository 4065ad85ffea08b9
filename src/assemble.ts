// Builds what a server instance needs from the config: the backend, the media runtime and the folders. Shared by
// stdio (one caller) and HTTP (a context per caller). Constructs objects only: nothing here listens or spawns.
import { join, relative, sep } from 'node:path';
import { LocalBackend } from './backend/local/local-backend.js';
import { RememberedAssets } from './backend/remembered-assets.js';
import { RemoteBackend } from './backend/remote.js';
import type { Backend } from './backend/types.js';
import type { Config } from './config.js';
import { KeptFiles, type SharedKept } from './kept.js';
import type { Logger } from './log.js';
import { PreviewCache } from './media/cache.js';
import { InspectionCache } from './media/inspect-cache.js';
import type { MediaTools } from './media/locate.js';
import { Limiter, MediaProber } from './media/probe.js';
import { SegmentStore } from './media/segments.js';
import type { ServerDeps } from './server.js';
import { NAME, VERSION } from './version.js';
import type { StoredInspection } from './workflow/inspection.js';
import type { StoredCorrections, StoredTranscript } from './workflow/transcript.js';
import type { MediaRuntime } from './workflow/media-runtime.js';
import type { StoredScan } from './media/reframe.js';
import type { StoredPhonePass } from './media/phone-pass.js';
import { EditStore } from './workflow/edit-store.js';
import type { JobRunner } from './workflow/jobs.js';
import { queuedRenderer } from './jobs/render-job.js';
import type { ObjectStore } from './jobs/object-store.js';
import { previewStore } from './jobs/preview-store.js';

/** What every caller of one process shares: the config, ffmpeg, and the limit on ffmpeg processes in total. */
export interface Shared {
  config: Config;
  logger: Logger;
  media: MediaTools;
  font?: string;
  limiter: Limiter;
  /** The job queue (CUTROOM_QUEUE_URL): previews run on its workers, for every caller. */
  jobs?: JobRunner;
  /** The object store (CUTROOM_S3_*): finished previews kept there for every replica. */
  objects?: ObjectStore;
  /** A team's shared store of kept state (the bucket, or the queue's Redis): see kept.ts. */
  kept?: SharedKept;
  /** Cancels of calls passed between replicas (the queue's Redis): see http/serve-http.ts. */
  callCancels?: { publish(call: string): void; listen(stop: (call: string) => void): void };
}

/** The listening store's bound on disk: each asset's pass keeps its sound (32 kB a second). */
const LISTENING_BYTES = 2 * 1024 ** 3;

/** A folder's kept files mirrored in the team's shared store, when there is one. */
const keptIn = (shared: Shared, space: 'data' | 'cache') =>
  shared.kept
    ? new KeptFiles(shared.kept, space === 'data' ? shared.config.dataDir : shared.config.cacheDir, space)
    : undefined;

/** A prober and a media runtime whose caches live under `cacheDir` and whose ffmpeg work runs under `limiter`. */
export function mediaRuntime(
  shared: Shared,
  cacheDir: string,
  limiter: Limiter,
): { prober?: MediaProber; runtime?: MediaRuntime } {
  const { config, media } = shared;
  const prober = media.ffprobe ? new MediaProber(media.ffprobe) : undefined;
  const cache = new PreviewCache({
    dir: cacheDir,
    keep: config.previewKeep,
    maxBytes: config.previewMaxMb * 1024 * 1024,
  });
  // The store names a folder as it lies under CUTROOM_CACHE_DIR: the same on every replica and worker.
  const place = relative(config.cacheDir, cacheDir).split(sep).join('/');
  const runtime: MediaRuntime | undefined = media.ffmpeg
    ? {
        ffmpeg: media.ffmpeg,
        limiter,
        cache,
        ...(shared.objects ? { store: previewStore(shared.objects, cache, place) } : {}),
        segments: new SegmentStore(join(cacheDir, 'segments'), config.previewMaxMb * 1024 * 1024),
        maxInputs: config.ffmpegMaxInputs,
        ...(shared.font ? { font: shared.font } : {}),
        prober,
        inspections: new InspectionCache<StoredInspection>(
          cacheDir,
          undefined,
          undefined,
          undefined,
          keptIn(shared, 'cache'),
        ),
        // Beside the inspections, under keys of their own (DESIGN.md: words are data like shots).
        transcripts: new InspectionCache<StoredTranscript>(
          cacheDir,
          undefined,
          undefined,
          undefined,
          keptIn(shared, 'cache'),
        ),
        // A person's words: never evicted (nothing can make them again), and shared with a team's replicas.
        corrections: new InspectionCache<StoredCorrections>(
          cacheDir,
          50,
          Infinity,
          'corrections',
          keptIn(shared, 'cache'),
        ),
        reframes: new InspectionCache<StoredScan>(cacheDir, undefined, undefined, undefined, keptIn(shared, 'cache')),
        // Kept on this replica only: each holds the asset's sound (32 kB a second), made again where it is missing;
        // the newest 100 within 2 GiB (about 18 hours of sound).
        phonePasses: new InspectionCache<StoredPhonePass>(cacheDir, 8, 100, 'listening', undefined, LISTENING_BYTES),
        ...(media.speech ? { speech: media.speech } : {}),
        // As many as ffmpeg processes may run: each transcription holds a decoded copy of its sound on disk.
        listening: new Limiter(limiter.limit),
        scratchDir: join(cacheDir, 'scratch'),
      }
    : undefined;
  return { prober, runtime };
}

/**
 * Where a remote backend remembers the names it gave the service's assets: the data dir, a folder per caller over HTTP.
 */
export const rememberedDir = (config: Config, callerId?: string) =>
  callerId ? join(config.dataDir, 'callers', callerId, 'remembered-assets') : join(config.dataDir, 'remembered-assets');

export function remoteBackend(shared: Shared, apiKey: string | undefined, remembered: string): RemoteBackend {
  const { config, logger } = shared;
  return new RemoteBackend(
    {
      baseUrl: config.apiUrl,
      apiKey,
      authHeader: config.authHeader,
      timeoutMs: config.timeoutMs,
      userAgent: `${NAME}/${VERSION}`,
      logger,
    },
    new RememberedAssets(remembered, logger, keptIn(shared, 'data')),
  );
}

/** The local backend on `dataDir` (the data dir; over HTTP, a folder of it for each person signed in). */
export function localBackend(
  shared: Shared,
  prober: MediaProber | undefined,
  dataDir = shared.config.dataDir,
): LocalBackend {
  const { config, media, logger } = shared;
  return new LocalBackend({
    dataDir,
    allowedDirs: config.allowedDirs,
    prober,
    // With a job queue, renders run on its workers (which share the data dir the render is written in).
    ...(media.ffmpeg
      ? {
          runtime: {
            ffmpeg: media.ffmpeg,
            limiter: shared.limiter,
            maxInputs: config.ffmpegMaxInputs,
            ...(shared.jobs ? { render: queuedRenderer(shared.jobs, config.cacheDir) } : {}),
          },
        }
      : {}),
    logger,
  });
}

/**
 * What createServer takes, for a backend and a runtime whose folders are under `cacheDir`, keeping its edits under
 * `dataDir`. `hosted`: the deps of one caller of a hosted server, who may not read this machine's folders
 * (CUTROOM_ALLOWED_DIRS).
 */
export function serverDeps(
  shared: Shared,
  backend: Backend,
  parts: { prober?: MediaProber; runtime?: MediaRuntime },
  cacheDir: string,
  hosted = false,
  dataDir = shared.config.dataDir,
): ServerDeps {
  const { config, logger, media } = shared;
  return {
    backend,
    logger,
    media,
    prober: parts.prober,
    renderWaitMs: config.renderWaitMs,
    renderPollMs: config.renderPollMs,
    runtime: parts.runtime,
    exportsDir: join(cacheDir, 'exports'),
    allowedDirs: hosted ? [] : config.allowedDirs,
    partBytes: config.resourcePartBytes,
    ...(hosted ? { hosted } : {}),
    edits: new EditStore(join(dataDir, 'edits'), undefined, keptIn(shared, 'data')),
    ...(shared.kept ? { kept: keptIn(shared, 'cache') } : {}),
    serverFolders: [config.cacheDir, config.dataDir],
    fetchRules: {
      allowHttp: config.fetch.allowHttp,
      allowAddresses: config.fetch.allowAddresses,
      ...(config.fetch.dnsServers.length ? { dnsServers: config.fetch.dnsServers } : {}),
      maxBytes: config.fetch.maxMb * 1024 * 1024,
      timeoutMs: config.fetch.timeoutS * 1000,
      stallMs: config.fetch.stallS * 1000,
    },
    ...(shared.jobs ? { jobs: shared.jobs } : {}),
  };
}
