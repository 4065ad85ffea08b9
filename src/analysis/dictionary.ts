// Pronunciations from the CMU dictionary, pure: its text in, every variant of a word out, as phone ids.
// Debian's pocketsphinx-en-us ships it as `word PH ON ES` lines, variants as `word(2) ...`, no stress marks; the
// original cmudict's stress digits (AH0), `;;;` comment lines and `# comment` tails are read too.

/** The 39 ARPAbet phones of cmudict (no stress), in a fixed order: a phone is its index here. */
export const PHONES = [
  'AA',
  'AE',
  'AH',
  'AO',
  'AW',
  'AY',
  'B',
  'CH',
  'D',
  'DH',
  'EH',
  'ER',
  'EY',
  'F',
  'G',
  'HH',
  'IH',
  'IY',
  'JH',
  'K',
  'L',
  'M',
  'N',
  'NG',
  'OW',
  'OY',
  'P',
  'R',
  'S',
  'SH',
  'T',
  'TH',
  'UH',
  'UW',
  'V',
  'W',
  'Y',
  'Z',
  'ZH',
] as const;
export type PhoneName = (typeof PHONES)[number];

/**
 * Phones by how they sound, by name: the classes the phonetic search weighs mistakes by (sound-search.ts) and the
 * rule for where the sound marks a join between two words (word-joins.ts) share.
 */
export const VOWELS: ReadonlySet<PhoneName> = new Set<PhoneName>([
  'AA',
  'AE',
  'AH',
  'AO',
  'AW',
  'AY',
  'EH',
  'ER',
  'EY',
  'IH',
  'IY',
  'OW',
  'OY',
  'UH',
  'UW',
]);
export const STOPS: ReadonlySet<PhoneName> = new Set<PhoneName>(['P', 'B', 'T', 'D', 'K', 'G']);
/** Fricatives and affricates, h among them. */
export const FRICATIVES: ReadonlySet<PhoneName> = new Set<PhoneName>([
  'F',
  'V',
  'TH',
  'DH',
  'S',
  'Z',
  'SH',
  'ZH',
  'HH',
  'CH',
  'JH',
]);
/** Phones that mark their own start in the sound: a stop's closure, a sibilant's hiss, an h. */
export const ONSETS: ReadonlySet<PhoneName> = new Set<PhoneName>([...STOPS, 'S', 'SH', 'Z', 'ZH', 'CH', 'JH', 'HH']);
/** Stops, fricatives and affricates. */
export const OBSTRUENTS: ReadonlySet<PhoneName> = new Set<PhoneName>([...STOPS, ...FRICATIVES]);

const PHONE_ID = new Map<string, number>(PHONES.map((p, i) => [p, i]));

/** A phone's id from its name (stress digits ignored), or undefined. */
export const phoneId = (name: string): number | undefined => PHONE_ID.get(name.replace(/[0-2]$/, '').toUpperCase());

/** Phone ids as their names, space-separated (for tests and messages). */
export const phoneNames = (phones: ArrayLike<number>): string => Array.from(phones, (p) => PHONES[p]).join(' ');

/** Phone ids from names ("L AY T"); throws on a name that is not a phone. */
export function phonesOf(names: string): Uint8Array {
  return Uint8Array.from(names.trim().split(/\s+/).filter(Boolean), (n) => {
    const id = phoneId(n);
    if (id === undefined) throw new Error(`not an ARPAbet phone: ${n}`);
    return id;
  });
}

/** The dictionary: every pronunciation of a word (lower case), in the file's order. */
export interface Cmudict {
  /** How many words (variants not counted). */
  readonly words: number;
  /** Every pronunciation of `word` (matched in lower case), first the file's first; empty when it has none. */
  lookup(word: string): Uint8Array[];
  has(word: string): boolean;
}

/**
 * Reads the dictionary's text. Compact: all phones in one byte array, each word a key to its first entry and each
 * entry linked to the word's next variant (the file does not keep variants together: `a`, `a's`, `a(2)`).
 * Lines that do not parse (an unknown phone, no phones) are skipped.
 */
export function parseCmudict(text: string): Cmudict {
  const phones = new Uint8Array(text.length >> 1); // every phone takes at least 2 characters of the text
  const starts: number[] = [];
  const next: number[] = [];
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  let used = 0;
  for (let at = 0; at < text.length;) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const line = text.slice(at, end);
    at = end + 1;
    const hash = line.indexOf('#');
    const fields = (hash >= 0 ? line.slice(0, hash) : line).trim().split(/\s+/);
    if (fields.length < 2 || fields[0]!.startsWith(';;;')) continue;
    const word = fields[0]!.replace(/\(\d+\)$/, '').toLowerCase();
    const from = used;
    let known = word !== '';
    for (let i = 1; known && i < fields.length; i++) {
      const id = PHONE_ID.get(fields[i]!) ?? phoneId(fields[i]!);
      if (id === undefined) known = false;
      else phones[used++] = id;
    }
    if (!known) {
      used = from;
      continue;
    }
    const entry = starts.length;
    starts.push(from);
    next.push(-1);
    const prev = last.get(word);
    if (prev === undefined) first.set(word, entry);
    else next[prev] = entry;
    last.set(word, entry);
  }
  const store = phones.slice(0, used);
  const begin = Uint32Array.from([...starts, used]);
  const link = Int32Array.from(next);
  return {
    words: first.size,
    has: (word) => first.has(word.toLowerCase()),
    lookup(word) {
      const out: Uint8Array[] = [];
      for (let e = first.get(word.toLowerCase()) ?? -1; e >= 0; e = link[e]!)
        out.push(store.subarray(begin[e]!, begin[e + 1]!));
      return out;
    },
  };
}
