// One context per caller of a hosted cutroom: the caller's own service client (their key), prober, previews,
// inspections, segments and exports (a folder under CUTROOM_CACHE_DIR/callers named by a hash of the key), and
// their own share of the ffmpeg processes. Nothing one caller made is served to another: their caches never
// meet. Replicas that share CUTROOM_CACHE_DIR find a caller's previews under the same folder.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { localBackend, mediaRuntime, rememberedDir, remoteBackend, serverDeps, type Shared } from '../assemble.js';
import type { Backend } from '../backend/types.js';
import type { Logger } from '../log.js';
import { Limiter } from '../media/probe.js';
import type { ServerDeps } from '../server.js';

/** The folder name of a caller: not the key, and not reversible to it. */
export const callerId = (key: string) =>
  createHash('sha256').update(`cutroom caller\0${key}`).digest('hex').slice(0, 32);

/**
 * The server's logger, with this caller's key taken out of their lines. Only their own lines: a key is whatever a
 * caller sends, and one who sent "127.0.0.1" as a key must not blank that out of everyone's log.
 */
export function callerLogger(logger: Logger, key: string, folders: string[] = []): Logger {
  const hide = (msg: string) => (key.length >= 4 ? msg.split(key).join('[redacted]') : msg);
  // Longest first: the caller's folder lies inside the cache dir.
  const paths = [...folders].filter((f) => f.length > 1).sort((a, b) => b.length - a.length);
  const outward = (msg: string) => paths.reduce((m, p) => m.split(p).join("(the server's cache)"), hide(msg));
  return {
    error: (m) => logger.error(hide(m)),
    warn: (m) => logger.warn(hide(m)),
    info: (m) => logger.info(hide(m)),
    debug: (m) => logger.debug(hide(m)),
    announce: (m) => logger.announce(hide(m)),
    hide,
    outward,
  };
}

interface Entry {
  deps: ServerDeps;
  backend: Backend;
  /** Requests of this caller being answered now: a context in use is never closed. */
  active: number;
}

export class Callers {
  private readonly entries = new Map<string, Entry>();
  private local?: Entry;

  constructor(
    private readonly shared: Shared,
    /** Idle contexts kept in memory; the least recently used idle one beyond this is closed (its files stay). */
    private readonly max = 64,
  ) {}

  /** The remote backend's context for the caller with this service key (their request has taken it with acquire). */
  forKey(key: string): ServerDeps {
    return this.entry(key).deps;
  }

  /**
   * Marks the caller's context in use for one request, and returns what ends that. Contexts in use are never
   * evicted (closing one would cut its calls to the service mid-way), so at a burst of callers more than `max`
   * may live for a while.
   */
  acquire(key: string): () => void {
    const e = this.entry(key);
    e.active++;
    this.evict();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      e.active--;
      this.evict();
    };
  }

  /** How many contexts are in memory (for tests of a hosted server's memory). */
  get size(): number {
    return this.entries.size;
  }

  private entry(key: string): Entry {
    const id = callerId(key);
    const hit = this.entries.get(id);
    if (hit) {
      // Most recently used last: the Map's order is the eviction order.
      this.entries.delete(id);
      this.entries.set(id, hit);
      return hit;
    }
    const dir = join(this.shared.config.cacheDir, 'callers', id);
    const mine: Shared = {
      ...this.shared,
      logger: callerLogger(this.shared.logger, key, [dir, this.shared.config.cacheDir]),
    };
    const parts = mediaRuntime(mine, dir, new Limiter(this.shared.config.http?.callerFfmpeg ?? 2, this.shared.limiter));
    const backend = remoteBackend(mine, key, rememberedDir(this.shared.config, id));
    const entry: Entry = {
      deps: serverDeps(mine, backend, parts, dir, true, join(this.shared.config.dataDir, 'callers', id)),
      backend,
      active: 0,
    };
    this.entries.set(id, entry);
    return entry;
  }

  /** Closes the least recently used idle contexts beyond `max` (run when a context is taken or given back). */
  private evict(): void {
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.max) return;
      if (e.active > 0) continue;
      this.entries.delete(id);
      void e.backend.close().catch(() => {});
    }
  }

  /** The local backend's one context (it serves one operator, behind CUTROOM_HTTP_TOKEN). */
  forLocal(): ServerDeps {
    if (!this.local) {
      const dir = this.shared.config.cacheDir;
      const parts = mediaRuntime(this.shared, dir, this.shared.limiter);
      const backend = localBackend(this.shared, parts.prober);
      this.local = { deps: serverDeps(this.shared, backend, parts, dir), backend, active: 0 };
    }
    return this.local.deps;
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.entries.values(), ...(this.local ? [this.local] : [])].map((e) => e.backend.close().catch(() => {})),
    );
    this.entries.clear();
  }
}
