// One context per caller of a hosted cutroom (who.ts says who a request's caller is): on the service backend the
// caller's own service client (their key), prober, previews, inspections, segments and exports (a folder under
// CUTROOM_CACHE_DIR/callers named by a hash of the key, or of who they signed in as), and their own share of the
// ffmpeg processes; on the local backend the operator's one context, and for each person signed in with OAuth a
// local backend of their own (their projects under CUTROOM_DATA_DIR/users/<id>, their cache under
// CUTROOM_CACHE_DIR/users/<id>). Nothing one caller made is served to another: their caches never meet. Replicas
// that share CUTROOM_CACHE_DIR find a caller's previews under the same folder.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { localBackend, mediaRuntime, rememberedDir, remoteBackend, serverDeps, type Shared } from '../assemble.js';
import type { Backend } from '../backend/types.js';
import type { Logger } from '../log.js';
import { Limiter } from '../media/probe.js';
import type { ServerDeps } from '../server.js';

/** A caller as served: every context is named by an id that is a hash, never a token, a key or a name. */
export type Caller =
  /** The local backend's operator (its one context, the data dir's own projects). */
  | { kind: 'operator' }
  /** A person signed in on the local backend: projects of their own. */
  | { kind: 'local-user'; id: string }
  /** A caller of the service backend, with the service key their calls use. */
  | { kind: 'service'; id: string; key: string };

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

  /** The context of a caller (their request has taken it with take). */
  forCaller(caller: Caller): ServerDeps {
    if (caller.kind === 'operator') return this.forLocal();
    return this.entry(caller).deps;
  }

  /** The remote backend's context for the caller with this service key. */
  forKey(key: string): ServerDeps {
    return this.forCaller({ kind: 'service', id: callerId(key), key });
  }

  /**
   * Whether the service takes this key (a list of one project): undefined when it does, or when the service cannot
   * say now; else why not, in one line (for the sign-in page).
   */
  async checkKey(key: string): Promise<string | undefined> {
    const release = this.acquire(key);
    try {
      await this.forKey(key).backend.listProjects(1);
      return undefined;
    } catch (err) {
      const status = (err as { status?: number }).status;
      return status === 401 || status === 403 ? `it answered ${status}` : undefined;
    } finally {
      release();
    }
  }

  /** take() for the caller with this service key. */
  acquire(key: string): () => void {
    return this.take({ kind: 'service', id: callerId(key), key });
  }

  /**
   * Marks the caller's context in use for one request, and returns what ends that. Contexts in use are never
   * evicted (closing one would cut its calls to the service mid-way), so at a burst of callers more than `max`
   * may live for a while. The operator's context is never evicted.
   */
  take(caller: Caller): () => void {
    if (caller.kind === 'operator') return () => {};
    const e = this.entry(caller);
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

  private entry(caller: Exclude<Caller, { kind: 'operator' }>): Entry {
    // A person who signs in again with another key gets a context with it (the old one is closed once idle).
    const name = caller.kind === 'service' ? `${caller.id}\0${callerId(caller.key)}` : `user\0${caller.id}`;
    const hit = this.entries.get(name);
    if (hit) {
      // Most recently used last: the Map's order is the eviction order.
      this.entries.delete(name);
      this.entries.set(name, hit);
      return hit;
    }
    const entry = caller.kind === 'service' ? this.serviceEntry(caller.id, caller.key) : this.localUserEntry(caller.id);
    this.entries.set(name, entry);
    return entry;
  }

  private serviceEntry(id: string, key: string): Entry {
    const dir = join(this.shared.config.cacheDir, 'callers', id);
    const mine: Shared = {
      ...this.shared,
      logger: callerLogger(this.shared.logger, key, [dir, this.shared.config.cacheDir]),
    };
    const parts = mediaRuntime(mine, dir, new Limiter(this.shared.config.http?.callerFfmpeg ?? 2, this.shared.limiter));
    const backend = remoteBackend(mine, key, rememberedDir(this.shared.config, id));
    return {
      deps: serverDeps(mine, backend, parts, dir, true, join(this.shared.config.dataDir, 'callers', id)),
      backend,
      active: 0,
    };
  }

  /** A person signed in on the local backend: projects of their own, and the server's allowed folders to import from. */
  private localUserEntry(id: string): Entry {
    const { config } = this.shared;
    const dir = join(config.cacheDir, 'users', id);
    const dataDir = join(config.dataDir, 'users', id);
    const parts = mediaRuntime(this.shared, dir, new Limiter(config.http?.callerFfmpeg ?? 2, this.shared.limiter));
    const backend = localBackend(this.shared, parts.prober, dataDir);
    return { deps: serverDeps(this.shared, backend, parts, dir, false, dataDir), backend, active: 0 };
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
