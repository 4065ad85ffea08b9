// Where a local render's files go: a folder of its own in the project's media, named by its asset id, holding the
// file under the name the edit asked for (so two renders of one name never meet) and, while it runs, its temporary
// files and its progress. A failed render is removed with its folder.
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULT_FILENAME, OUTPUT_FORMAT } from '../../edit/model.js';
import { writerTag } from '../../owners.js';

export const renderDir = (mediaDir: string, assetId: string): string => join(mediaDir, assetId);

/** The progress sidecar: hidden, and not a .mp4, so no render's own name can be it. */
const progressPath = (dir: string) => join(dir, '.progress.json');

/** Leaves a few dozen bytes of a file name's 255 for the temporary names made from it (".<name>.<tag>.chunk12.nut"). */
const MAX_STEM_BYTES = 180;

/**
 * The request's file name reduced to a safe basename: its last path segment, without control, format or separator
 * characters, characters other systems refuse (<>:"|?*) or read as patterns (%), leading dots or dashes (no hidden
 * file, nothing that reads as an option), at most 180 bytes before ".mp4"; a name with nothing left is the default.
 */
export function renderFileName(requested: string | undefined): string {
  const ext = `.${OUTPUT_FORMAT}`;
  const last = (requested ?? '').normalize('NFC').split(/[/\\]/).pop() ?? '';
  const stem = last
    .replace(new RegExp(`\\${ext}$`, 'i'), '')
    .replace(/[\p{C}\p{Zl}\p{Zp}]/gu, '')
    .replace(/[<>:"|?*%]/g, '_')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.-]+/, '')
    .trimEnd();
  const kept = truncateUtf8(stem, MAX_STEM_BYTES).trimEnd();
  return kept ? `${kept}${ext}` : DEFAULT_FILENAME;
}

function truncateUtf8(text: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch);
    if (bytes > maxBytes) break;
    out += ch;
  }
  return out;
}

export const RenderProgressSchema = z.object({
  fraction: z.number().min(0).max(1),
  eta_seconds: z.number().min(0).optional(),
  updated_at: z.string(),
});
export type StoredProgress = z.infer<typeof RenderProgressSchema>;

/** What another server reads of a render it does not run; undefined when there is none (or it is unreadable). */
export async function readProgress(dir: string): Promise<StoredProgress | undefined> {
  try {
    const parsed = RenderProgressSchema.safeParse(JSON.parse(await readFile(progressPath(dir), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps a running render's progress on disk for every server sharing the data dir: written whole (a temporary file
 * renamed over it, never flushed to the disk: it is worth nothing after a crash) at most once every `everyMs`,
 * the latest value always written in the end.
 */
export class ProgressSidecar {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private lastWrite = 0;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly snapshot: () => Omit<StoredProgress, 'updated_at'>,
    private readonly everyMs = 1000,
  ) {}

  /** The progress changed: written now if the last write is old enough, else as soon as it is. */
  changed(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.write();
      },
      Math.max(0, this.lastWrite + this.everyMs - Date.now()),
    );
    this.timer.unref();
  }

  private write(): void {
    this.lastWrite = Date.now();
    const body = JSON.stringify({ ...this.snapshot(), updated_at: new Date().toISOString() });
    const target = progressPath(this.dir);
    const tmp = `${target}.${writerTag()}.${randomBytes(4).toString('hex')}.tmp`;
    this.writing = this.writing.then(async () => {
      try {
        await writeFile(tmp, body, { flag: 'wx' });
        await rename(tmp, target);
      } catch {
        // Progress is a courtesy: a full disk or a folder already removed fails nothing.
        await rm(tmp, { force: true });
      }
    });
  }

  /** Settles when the writes begun so far are done. */
  settled(): Promise<void> {
    return this.writing;
  }

  /** Stops writing (after the write under way) and removes the sidecar. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    await rm(progressPath(this.dir), { force: true });
  }
}
