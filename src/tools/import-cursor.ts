// Which part of what import_media's paths name one call takes: everything in walk order (path after path, each
// folder's files and what it passed over in path order), from a cursor on, up to a bound of files. The cursor names
// the last entry taken (by its path, not its index), so files added or removed meanwhile shift nothing; it is tied to
// the call's paths and recursive flag.
import { createHash } from 'node:crypto';
import { comparePaths, type ImportTarget } from '../backend/local/media-files.js';
import { ToolError } from './result.js';

/** One thing a call may take: a file to import, or an entry passed over (with its reason). */
export interface ImportItem {
  /** Which of the paths asked it comes from. */
  entry: number;
  path: string;
  file?: true;
  reason?: string;
  hidden?: true;
}

interface Position {
  entry: number;
  path: string;
}

/** Everything the targets name, in order. */
export function importItems(targets: ImportTarget[]): ImportItem[] {
  return targets.flatMap((t, entry): ImportItem[] => {
    if (t.error !== undefined) return [{ entry, path: t.asked, reason: t.error }];
    if (!t.folder) return [{ entry, path: t.asked, file: true }];
    const files = t.folder.files.map((f): ImportItem => ({ entry, path: f.path, file: true }));
    const passed = t.folder.skipped.map((s): ImportItem => ({
      entry,
      path: s.path,
      reason: s.reason,
      ...(s.kind === 'hidden' ? { hidden: true as const } : {}),
    }));
    return [...files, ...passed].sort((a, b) => comparePaths(a.path, b.path));
  });
}

const callKey = (asked: string[], recursive: boolean) =>
  createHash('sha256')
    .update(JSON.stringify([asked, recursive]))
    .digest('base64url')
    .slice(0, 12);

function readCursor(cursor: string, key: string): Position {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    typeof parsed[0] !== 'string' ||
    !Number.isInteger(parsed[1]) ||
    typeof parsed[2] !== 'string'
  ) {
    throw new ToolError('cursor is not a next_cursor import_media gave: call without it to start again');
  }
  if (parsed[0] !== key)
    throw new ToolError(
      'this cursor is from an import_media call with other path, paths or recursive: give those, or call without cursor',
    );
  return { entry: parsed[1] as number, path: parsed[2] as string };
}

/**
 * This call's part: `taken`, the items after the cursor up to and including the `max`-th file (or to the end when no
 * file is left after it); `later`, the files after that, for the next call; and the cursor that continues after
 * `taken` (none when nothing is left).
 */
export function importSlice(
  items: ImportItem[],
  opts: { asked: string[]; recursive: boolean; cursor?: string; max: number },
) {
  const key = callKey(opts.asked, opts.recursive);
  const from = opts.cursor !== undefined ? readCursor(opts.cursor, key) : undefined;
  const rest = from
    ? items.filter((it) => it.entry > from.entry || (it.entry === from.entry && comparePaths(it.path, from.path) > 0))
    : items;
  let files = 0;
  let end = rest.length;
  for (const [k, it] of rest.entries()) {
    if (!it.file) continue;
    if (files === opts.max) {
      end = k;
      break;
    }
    files++;
  }
  // The part ends at its last file, so that what was passed over after it comes with the next call.
  if (end < rest.length) while (!rest[end - 1]!.file) end--;
  const taken = rest.slice(0, end);
  const later = rest.slice(end).filter((it) => it.file);
  const last = taken.at(-1);
  const next =
    later.length && last ? Buffer.from(JSON.stringify([key, last.entry, last.path])).toString('base64url') : undefined;
  return { taken, later, next };
}
