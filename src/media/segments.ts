// Previews are joined from segments: one file per cut (its picture encoded, its sound as PCM, in NUT so frame times
// stay exact), with the cut's own measurements and unlabelled sheet thumbnails beside it. A segment is keyed by
// everything that shapes it, so an agent's next preview, with one cut changed, renders that cut alone and joins the
// rest as they are. Several servers may share the folder: a segment is written under temporary names and its record
// written last (its presence means the segment is complete); two servers making the same one write the same bytes.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LevelSample, Span } from './measure.js';
import { TAG, writerGone, writerTag } from '../owners.js';
import { MixMemory } from './mix-memory.js';

export interface SegmentRecord {
  /** Frames of picture (its sound is its range's, rangeSamples long: the join places it). */
  frames: number;
  /** Thumbnails kept, in the cut's own frame order. */
  thumbs: number;
  /** Measured on the segment, times from its start. */
  cutLevels: LevelSample[];
  black: Span[];
  frozen: Span[];
  /** Luma differences between neighbouring frames at the cut's ends (see edgeDiffs in timeline-args.ts). */
  edges?: number[];
  /** The integrated loudness of its sound as it plays (levelling), LUFS; null: nothing heard over the gate. */
  lufs?: number | null;
}

/** A segment not used for this long may be evicted (one in use is touched when it is looked up). */
const IDLE_MS = 10 * 60_000;
/** A scratch name: `.<key>.<writer tag>.<hex>.…`. */
const SCRATCH = new RegExp(`^\\.[0-9a-f]{40}\\.${TAG}\\.[0-9a-f]{8}\\.`);

export class SegmentStore {
  /** The sound measurements of the last timelines joined from these segments (a re-preview's reuse: mix-memory.ts). */
  readonly mixes = new MixMemory();

  constructor(
    readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  static key(what: unknown): string {
    return createHash('sha256').update(JSON.stringify(what)).digest('hex').slice(0, 40);
  }

  videoOf(key: string): string {
    return join(this.dir, `${key}.nut`);
  }

  thumbOf(key: string, i: number): string {
    return join(this.dir, `${key}.t${i}.png`);
  }

  private recordOf(key: string): string {
    return join(this.dir, `${key}.json`);
  }

  /** Names for a segment being made by this process: the video, and a thumbnail pattern relative to `dir`. */
  scratch(key: string): { video: string; thumbPattern: string; thumb: (i: number) => string } {
    const tag = `.${key}.${writerTag()}.${randomBytes(4).toString('hex')}`;
    return {
      video: join(this.dir, `${tag}.nut`),
      thumbPattern: `${tag}.t%d.png`,
      thumb: (i) => join(this.dir, `${tag}.t${i}.png`),
    };
  }

  /** The record of a complete segment (touched: in use), or undefined. */
  async get(key: string): Promise<SegmentRecord | undefined> {
    try {
      const record = JSON.parse(await readFile(this.recordOf(key), 'utf8')) as SegmentRecord;
      await stat(this.videoOf(key));
      const now = new Date();
      await utimes(this.recordOf(key), now, now).catch(() => {});
      return record;
    } catch {
      return undefined;
    }
  }

  /** Moves a segment made under its scratch names into place; the record goes last. */
  async put(key: string, made: ReturnType<SegmentStore['scratch']>, record: SegmentRecord): Promise<void> {
    for (let i = 0; i < record.thumbs; i++) await rename(made.thumb(i), this.thumbOf(key, i));
    await rename(made.video, this.videoOf(key));
    const tmp = `${this.recordOf(key)}.${writerTag()}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify(record));
    await rename(tmp, this.recordOf(key));
  }

  /** Removes what a made segment left under its scratch names (on failure). */
  async discard(made: ReturnType<SegmentStore['scratch']>, thumbs = 3): Promise<void> {
    await rm(made.video, { force: true });
    for (let i = 0; i < thumbs; i++) await rm(made.thumb(i), { force: true });
  }

  /**
   * Removes the least recently used segments while the folder is over its size, never one used in the last
   * IDLE_MS (a preview may be joining it), and scratch files of writers long gone.
   */
  async evict(): Promise<number> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const entries = new Map<string, { bytes: number; used: number; files: string[] }>();
    const now = Date.now();
    let removed = 0;
    for (const name of names) {
      const s = await stat(join(this.dir, name)).catch(() => undefined);
      if (!s) continue;
      if (name.startsWith('.')) {
        // Scratch of a writer that is gone: one of our pid space whose process died, else (another replica's, or
        // of a version that wrote no tag) one untouched for twice IDLE_MS.
        const tag = SCRATCH.exec(name)?.[1];
        if (writerGone(tag, s.mtimeMs, { now, staleMs: 2 * IDLE_MS })) await rm(join(this.dir, name), { force: true });
        continue;
      }
      const key = name.split('.')[0]!;
      const e = entries.get(key) ?? { bytes: 0, used: 0, files: [] };
      e.bytes += s.size;
      e.files.push(name);
      if (name.endsWith('.json')) e.used = s.mtimeMs;
      entries.set(key, e);
    }
    let total = [...entries.values()].reduce((sum, e) => sum + e.bytes, 0);
    for (const [, e] of [...entries].sort((a, b) => a[1].used - b[1].used)) {
      if (total <= this.maxBytes) break;
      if (now - e.used < IDLE_MS) continue;
      // The record first: the segment stops being complete before its files go.
      for (const f of e.files.sort((a, b) => Number(b.endsWith('.json')) - Number(a.endsWith('.json'))))
        await rm(join(this.dir, f), { force: true });
      total -= e.bytes;
      removed++;
    }
    return removed;
  }
}
