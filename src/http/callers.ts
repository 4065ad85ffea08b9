// One context per caller of a hosted cutroom: the caller's own service client (their key), prober, previews,
// inspections, segments and exports (a folder under CUTROOM_CACHE_DIR/callers named by a hash of the key), and
// their own share of the ffmpeg processes. Nothing one caller made is served to another: their caches never
// meet. Replicas that share CUTROOM_CACHE_DIR find a caller's previews under the same folder.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { localBackend, mediaRuntime, remoteBackend, serverDeps, type Shared } from '../assemble.js';
import type { Backend } from '../backend/types.js';
import { addSecret } from '../log.js';
import { Limiter } from '../media/probe.js';
import type { ServerDeps } from '../server.js';

/** The folder name of a caller: not the key, and not reversible to it. */
export const callerId = (key: string) => createHash('sha256').update(`cutroom caller\0${key}`).digest('hex').slice(0, 32);

interface Entry {
  deps: ServerDeps;
  backend: Backend;
  lastUsed: number;
  /** Forgets the caller's key in the log filter. */
  forget: () => void;
}

export class Callers {
  private readonly entries = new Map<string, Entry>();
  private local?: Entry;

  constructor(
    private readonly shared: Shared,
    /** Contexts kept in memory; the least recently used beyond this is closed (its files stay on disk). */
    private readonly max = 64,
  ) {}

  /** The remote backend's context for the caller with this service key. */
  forKey(key: string): ServerDeps {
    const id = callerId(key);
    const hit = this.entries.get(id);
    if (hit) {
      hit.lastUsed = Date.now();
      // Most recently used last: the Map's order is the eviction order.
      this.entries.delete(id);
      this.entries.set(id, hit);
      return hit.deps;
    }
    // Each caller's key is kept out of every log line, as the server's own is, while their context lives.
    const forget = addSecret(key);
    const dir = join(this.shared.config.cacheDir, 'callers', id);
    const parts = mediaRuntime(this.shared, dir, new Limiter(this.shared.config.http?.callerFfmpeg ?? 2, this.shared.limiter));
    const backend = remoteBackend(this.shared, key);
    const entry: Entry = { deps: serverDeps(this.shared, backend, parts, dir, true), backend, lastUsed: Date.now(), forget };
    this.entries.set(id, entry);
    while (this.entries.size > this.max) {
      const [oldest, e] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      // Calls in flight hold their deps; closing the pool only stops it taking new requests once they finish,
      // and the key is forgotten only then (a failing call may still log around it).
      void e.backend.close().catch(() => {}).finally(e.forget);
    }
    return entry.deps;
  }

  /** The local backend's one context (it serves one operator, behind CUTROOM_HTTP_TOKEN). */
  forLocal(): ServerDeps {
    if (!this.local) {
      const dir = this.shared.config.cacheDir;
      const parts = mediaRuntime(this.shared, dir, this.shared.limiter);
      const backend = localBackend(this.shared, parts.prober);
      this.local = { deps: serverDeps(this.shared, backend, parts, dir), backend, lastUsed: Date.now(), forget: () => {} };
    }
    return this.local.deps;
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values(), ...(this.local ? [this.local] : [])].map((e) => e.backend.close().catch(() => {}).finally(e.forget)));
    this.entries.clear();
  }
}
