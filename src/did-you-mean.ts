// "Did you mean": an id that names nothing, held against the ids that exist. A typo of a character or two, or the
// start of one id only, points at the id meant (and its name), so the agent fixes the call instead of listing again.

export interface Known {
  id: string;
  /** What a person calls it (a file name), shown beside the id. */
  name?: string;
}

/** Levenshtein distance, stopping early once it passes `max` (ids are compared against whole lists). */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/** The known ids the given one most likely means: within 2 edits (the closest), else the one id it starts. */
export function closestIds<T extends Known>(given: string, known: readonly T[]): T[] {
  const g = given.trim().toLowerCase();
  if (!g) return [];
  let best = 3;
  let found: T[] = [];
  for (const k of known) {
    const d = editDistance(g, k.id.toLowerCase(), 2);
    if (d < best) {
      best = d;
      found = [k];
    } else if (d === best && d <= 2) found.push(k);
  }
  if (found.length) return found;
  // A prefix long enough to mean something (8 characters: the first group of a UUID) that one id alone starts with.
  if (g.length < 8) return [];
  const starts = known.filter((k) => k.id.toLowerCase().startsWith(g));
  return starts.length === 1 ? starts : [];
}

/** A name as a suggestion shows it: enough to recognise (a file's name can be 255 bytes, a service's any length). */
const NAME_CHARS = 60;
const label = (k: Known) =>
  k.name ? `${k.id} (${k.name.length > NAME_CHARS ? `${k.name.slice(0, NAME_CHARS - 1)}…` : k.name})` : k.id;

/** "did you mean X (name)?" for an id that names nothing, or undefined when nothing is close. */
export function didYouMean(given: string, known: readonly Known[]): string | undefined {
  const close = closestIds(given, known);
  if (!close.length) return undefined;
  if (close.length === 1) return `did you mean ${label(close[0]!)}?`;
  return `did you mean one of ${close.slice(0, 3).map(label).join(', ')}?`;
}
