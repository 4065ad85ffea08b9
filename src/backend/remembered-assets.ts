// What cutroom remembers of the service's assets it made itself: a render's file name (the service names assets by
// their storage keys, and calls every asset it generates generated_video, renders or not). One small JSON file per
// asset id in a folder of the data dir (a folder per caller over HTTP), each written whole or not at all: servers
// sharing the folder never lose each other's entries and need no lock.
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isUuid } from '../errors.js';
import type { Logger } from '../log.js';
import { writeAtomic } from './local/store.js';

export interface Remembered {
  name: string;
  render: boolean;
}

/** Names remembered in memory, at most (each a few dozen bytes); older ones are read from disk again when asked. */
const MAX_IN_MEMORY = 10_000;

const isRemembered = (v: unknown): v is Remembered =>
  !!v &&
  typeof (v as Remembered).name === 'string' &&
  (v as Remembered).name.length > 0 &&
  typeof (v as Remembered).render === 'boolean';

export class RememberedAssets {
  private readonly memory = new Map<string, Remembered>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /** Remembers an asset; a failure (a full disk) is logged, never the caller's failure: a name is a convenience. */
  async remember(assetId: string, entry: Remembered): Promise<void> {
    // Ids become file names: only UUIDs get that far.
    if (!isUuid(assetId) || !isRemembered(entry)) return;
    const value = { name: entry.name.slice(0, 255), render: entry.render };
    try {
      await mkdir(this.dir, { recursive: true });
      await writeAtomic(join(this.dir, `${assetId.toLowerCase()}.json`), JSON.stringify(value));
      this.keep(assetId.toLowerCase(), value);
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
        .filter((id) => files.has(`${id.toLowerCase()}.json`))
        .map(async (id) => {
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

  private keep(id: string, value: Remembered): void {
    this.memory.delete(id);
    this.memory.set(id, value);
    if (this.memory.size > MAX_IN_MEMORY) this.memory.delete(this.memory.keys().next().value!);
  }
}
