// The pronouncer search by sound uses: the CMU dictionary the speech engine's model ships (read once per file),
// else letter-to-sound rules alone.
import { readFile } from 'node:fs/promises';
import { parseCmudict } from '../analysis/dictionary.js';
import { createPronouncer, type Pronouncer } from '../analysis/sound-search.js';
import type { SpeechEngine } from '../media/speech.js';

const loaded = new Map<string, Promise<Pronouncer>>();

export function pronouncerFor(engine: SpeechEngine | undefined): Promise<Pronouncer> {
  const path = engine?.name === 'pocketsphinx' ? engine.model.dict : '';
  let p = loaded.get(path);
  if (!p) {
    p = path ? readFile(path, 'utf8').then((text) => createPronouncer(parseCmudict(text)), () => createPronouncer()) : Promise.resolve(createPronouncer());
    loaded.set(path, p);
  }
  return p;
}
