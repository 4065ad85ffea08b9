// npm run bench [name...]: runs the benchmarks and prints their figures. Record them in bench/README.md.
import { cpus, totalmem } from 'node:os';

const all = {
  server: () => import('./server.mjs'),
  preview: () => import('./preview.mjs'),
  store: () => import('./store.mjs'),
  inspect: () => import('./inspect.mjs'),
  render: () => import('./render.mjs'),
  http: () => import('./http.mjs'),
  transcribe: () => import('./transcribe.mjs'),
  'transcribe-memory': () => import('./transcribe-memory.mjs'),
  moments: () => import('./moments.mjs'),
  'speech-noise': () => import('./speech-noise.mjs'),
  'cut-words': () => import('./cut-words.mjs'),
  search: () => import('./search.mjs'),
  'search-real': () => import('./search-real.mjs'),
  mix: () => import('./mix.mjs'),
  'first-frame': () => import('./first-frame.mjs'),
  queue: () => import('./queue.mjs'),
  'reframe-real': () => import('./reframe-real.mjs'),
  scorecard: () => import('./scorecard.mjs'),
  'join-landmarks': () => import('./join-landmarks.mjs'),
  'crossfade-read': () => import('./crossfade-read.mjs'),
  'render-chunks': () => import('./render-chunks.mjs'),
  'filler-measure': () => import('./filler-measure.mjs'),
};
const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(all);

console.log(
  `node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
);
for (const name of wanted) {
  if (!all[name]) {
    console.error(`unknown benchmark ${name}; choose from ${Object.keys(all).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n## ${name}`);
  const mod = await all[name]();
  await mod.run();
}
