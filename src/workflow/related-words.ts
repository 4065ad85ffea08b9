// Related words for find_moments' `about`: WordNet's dictionary files from Debian's wordnet-base (local files only,
// no network), read for each subject not yet asked and dropped after (about 28 MB of text; the answers are kept).
// Without them the result says so and the transcript's own co-occurrence stands in (analysis/related-words.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseExceptions, wordnetRelated, type Related, type WordnetText } from '../analysis/related-words.js';

/** Where Debian (wordnet-base) and other installs put WordNet 3.0's dict files. */
const DICT_DIRS = ['/usr/share/wordnet', '/usr/share/wordnet/dict', '/usr/local/WordNet-3.0/dict'];
export const NO_WORDNET =
  'related words by WordNet: not installed (apt-get install wordnet-base); about matched by spelling, sound and words said beside it';

const answers = new Map<string, Related>();
let exceptions: Map<string, string[]> | undefined;
let missing = false;

async function wordnetText(): Promise<WordnetText | undefined> {
  for (const dir of DICT_DIRS) {
    const read = (name: string) => readFile(join(dir, name), 'latin1').catch(() => undefined);
    const [noun, verb, adj, adv] = await Promise.all(['noun', 'verb', 'adj', 'adv'].map((p) => read(`data.${p}`)));
    if (!noun) continue;
    const [inoun, iverb, iadj, iadv] = await Promise.all(['noun', 'verb', 'adj', 'adv'].map((p) => read(`index.${p}`)));
    const [enoun, everb, eadj] = await Promise.all(['noun', 'verb', 'adj'].map((p) => read(`${p}.exc`)));
    return {
      data: { noun, verb, adj, adv },
      index: { noun: inoun, verb: iverb, adj: iadj, adv: iadv },
      exceptions: { noun: enoun, verb: everb, adj: eadj },
    };
  }
  return undefined;
}

/**
 * The related words of each term, and WordNet's inflections; undefined when WordNet is not installed. Each term is
 * looked up once per process (kept: a few hundred words each).
 */
export async function relatedWordsFor(
  terms: string[],
): Promise<{ related: Map<string, Related>; exceptions: Map<string, string[]> } | undefined> {
  const todo = terms.filter((t) => !answers.has(t));
  if (todo.length && !missing) {
    const text = await wordnetText();
    if (!text) missing = true;
    else {
      exceptions ??= parseExceptions(text);
      for (const t of todo) {
        if (answers.size >= 500) answers.clear();
        answers.set(t, wordnetRelated(t, text, exceptions));
      }
    }
  }
  if (missing || !exceptions) return undefined;
  return { related: new Map(terms.map((t) => [t, answers.get(t)!])), exceptions };
}
