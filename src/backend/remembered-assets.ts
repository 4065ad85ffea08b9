// What cutroom remembers of the service's assets it made itself: a render's file name (the service names assets by
// their storage keys, and calls every asset it generates generated_video, renders or not). One small JSON file per
// asset id in a folder of the data dir (a folder per caller over HTTP), each written whole or not at all: servers
// sharing the folder never lose each other's entries and need no lock. For a team, mirrored in its shared store
// (kept.ts): a name given on one replica is said on every other.
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isUuid } from '../errors.js';
import type { KeptFiles } from '../kept.js';
import type { Logger } from '../log.js';
import { writeAtomic } from './local/store.js';

export interface Remembered {
  name: string;
  render: boolean;
}

/** Names remembered in memory, at most (each a few dozen bytes); older ones are read from disk again when asked. */
const MAX_IN_MEMORY = 10_000;
/** How long an id the team's store has no name for is not asked for again (a listing asks for every asset). */
const MISS_MS = 60_000;

const isRemembered = (v: unknown): v is Remembered =>
  !!v &&
  typeof (v as Remembered).name === 'string' &&
  (v as Remembered).name.length > 0 &&
  typeof (v as Remembered).render === 'boolean';

export class RememberedAssets {
  private readonly memory = new Map<string, Remembered>();
  /** Ids the team's store had no name for, and when it was asked (asked again after MISS_MS, not on every listing). */
  private readonly misses = new Map<string, number>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly kept?: KeptFiles,
  ) {}

  /** Remembers an asset; a failure (a full disk) is logged, never the caller's failure: a name is a convenience. */
  async remember(assetId: string, entry: Remembered): Promise<void> {
    // Ids become file names: only UUIDs get that far.
    if (!isUuid(assetId) || !isRemembered(entry)) return;
    const value = { name: entry.name.slice(0, 255), render: entry.render };
    try {
      await mkdir(this.dir, { recursive: true });
      const file = join(this.dir, `${assetId.toLowerCase()}.json`);
      await writeAtomic(file, JSON.stringify(value));
      this.keep(assetId.toLowerCase(), value);
      await this.kept?.wrote(file, JSON.stringify(value));
    } catch (err) {
      this.log.warn(`could not remember the name of asset ${assetId} in ${this.dir}: ${(err as Error).message}`);
    }
  }

  /** What is remembered of these assets: from memory, else one listing of the folder and a read of each file there. */
  async recall(ids: string[]): Promise<Map<string, Remembered>> {
    const found = new Map<string, Remembered>();
    const missing: string[] = [];
    for (const id of ids) {
      const hit = this.memory.get(id.toLowerCase());
      if (hit) found.set(id, hit);
      else if (isUuid(id)) missing.push(id);
    }
    if (!missing.length) return found;
    const files = new Set(await readdir(this.dir).catch(() => [] as string[]));
    await Promise.all(
      missing
        .filter((id) => files.has(`${id.toLowerCase()}.json`) || this.askStore(id))
        .map(async (id) => {
          const file = join(this.dir, `${id.toLowerCase()}.json`);
          // Named on another replica: fetched from the team's store (a name is a convenience: a failure is a miss).
          if (!files.has(`${id.toLowerCase()}.json`) && !(await this.kept?.fetch(file).catch(() => false))) {
            this.misses.set(id.toLowerCase(), Date.now());
            if (this.misses.size > MAX_IN_MEMORY) this.misses.delete(this.misses.keys().next().value!);
            return;
          }
          try {
            const value: unknown = JSON.parse(await readFile(join(this.dir, `${id.toLowerCase()}.json`), 'utf8'));
            if (!isRemembered(value)) return;
            this.keep(id.toLowerCase(), value);
            found.set(id, value);
          } catch (err) {
            this.log.debug(`reading the remembered name of asset ${id}: ${(err as Error).message}`);
          }
        }),
    );
    return found;
  }

  /** Whether to ask the team's store for an id's name: there is one, and it did not just say it has none. */
  private askStore(id: string): boolean {
    if (!this.kept) return false;
    const missed = this.misses.get(id.toLowerCase());
    return missed === undefined || Date.now() - missed > MISS_MS;
  }

  private keep(id: string, value: Remembered): void {
    this.memory.delete(id);
    this.memory.set(id, value);
    if (this.memory.size > MAX_IN_MEMORY) this.memory.delete(this.memory.keys().next().value!);
  }
}
