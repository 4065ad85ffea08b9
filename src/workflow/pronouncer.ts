// How words sound, for search by sound and find_moments: the CMU dictionary the speech engine's model ships (read
// once per process and only when needed), else letter-to-sound rules alone (no PocketSphinx model, whisper.cpp).
import { readFile } from 'node:fs/promises';
import { parseCmudict, type Cmudict } from '../analysis/dictionary.js';
import { createPronouncer, type Pronouncer } from '../analysis/sound-search.js';
import type { SpeechEngine } from '../media/speech.js';

const dictionaries = new Map<string, Promise<Cmudict | undefined>>();
const pronouncers = new Map<string, Promise<Pronouncer>>();

/** The engine's dictionary, parsed once per file; undefined when there is none or it cannot be read (said to debug). */
export function dictionaryFor(
  engine: SpeechEngine | undefined,
  debug?: (m: string) => void,
): Promise<Cmudict | undefined> {
  const path = engine?.name === 'pocketsphinx' ? engine.model.dict : undefined;
  if (!path) return Promise.resolve(undefined);
  let d = dictionaries.get(path);
  if (!d) {
    d = readFile(path, 'utf8').then(parseCmudict, (err: Error) => {
      debug?.(`the dictionary ${path} could not be read (${err.message}); sounds by letter-to-sound only`);
      return undefined;
    });
    dictionaries.set(path, d);
  }
  return d;
}

/** A pronouncer over the engine's dictionary, made once per dictionary. */
export function pronouncerFor(engine: SpeechEngine | undefined, debug?: (m: string) => void): Promise<Pronouncer> {
  const key = engine?.name === 'pocketsphinx' ? engine.model.dict : '';
  let p = pronouncers.get(key);
  if (!p) {
    p = dictionaryFor(engine, debug).then((dict) => createPronouncer(dict));
    pronouncers.set(key, p);
  }
  return p;
}
