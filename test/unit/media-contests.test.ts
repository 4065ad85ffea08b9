// A search's contests (analysis/heard.ts contestsOf) heard in one spotting pass (media/keywords.ts spotContests):
// one model load for the search, not one per contest. A stand-in for pocketsphinx_continuous counts its runs, keeps
// the files it was given and prints detections on the joined file's clock.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spotContests } from '../../src/media/keywords.js';
import { Limiter } from '../../src/media/probe.js';

const dir = mkdtempSync(join(tmpdir(), 'cutroom-contests-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Prints, on the joined file's clock (0.3 s of silence, contest 1's 1 s, 0.3 s, contest 2's 0.5 s, 0.3 s): */
const PRINTED = [
  'heron  0.500 0.800 0.850000', // in contest 1's span (0.3-1.3 s): at 1.2-1.5 s on the asset's clock
  'then  0.550 0.750 0.870000', // contest 1's heard word
  'tends  0.600 0.700 0.900000', // contest 2's word, heard in contest 1's span: not contest 1's
  'tends  1.700 1.900 0.880000', // in contest 2's span (1.6-2.1 s): at 5.1-5.3 s
];

function fakeSpotter(): { bin: string; runs: () => string[][] } {
  const log = join(dir, 'runs.log');
  writeFileSync(log, '');
  const bin = join(dir, 'spotter.sh');
  writeFileSync(
    bin,
    `#!/bin/sh\necho "$@" >> ${log}\nwhile [ $# -gt 0 ]; do [ "$1" = -kws ] && cp "$2" ${dir}/kws-seen; shift; done\n` +
      PRINTED.map((l) => `echo '${l}'`).join('\n') +
      '\n',
  );
  chmodSync(bin, 0o755);
  return {
    bin,
    runs: () =>
      readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')),
  };
}

describe('contests heard in one pass', () => {
  it('spots every contest of a search in one run, each detection for its own span and phrases only', async () => {
    const { bin, runs } = fakeSpotter();
    const sound = join(dir, 'sound.pcm');
    writeFileSync(sound, Buffer.alloc(16_000 * 6 * 2));
    const lenient = (text: string) => ({ text, threshold: 1e-40 });
    const out = await spotContests({
      ffmpeg: 'ffmpeg',
      engine: { name: 'pocketsphinx', bin, cli: '0.8', model: { hmm: dir, lm: '', dict: '' }, modelName: 'test' },
      limiter: new Limiter(2),
      source: { kind: 'file', path: sound },
      fromSec: 0,
      toSec: 6,
      scratchDir: dir,
      timeoutMs: 30_000,
      sound: { path: sound, samples: 16_000 * 6 },
      pronunciations: new Map([
        ['heron', ['HH EH R AH N']],
        ['then', ['DH EH N']],
        ['tends', ['T EH N D Z']],
      ]),
      contests: [
        { from: 1, to: 2, phrases: [lenient('heron'), lenient('then')] },
        { from: 5, to: 5.5, phrases: [lenient('heron'), lenient('tends')] },
      ],
    });
    expect(runs()).toHaveLength(1);
    // Every contest's phrases in the one run, each once.
    expect(readFileSync(join(dir, 'kws-seen'), 'utf8').trim().split('\n').sort()).toEqual([
      'heron /1e-40/',
      'tends /1e-40/',
      'then /1e-40/',
    ]);
    const round = (xs: { phrase: string; start: number; end: number; confidence: number }[]) =>
      xs.map((x) => [x.phrase, Math.round(x.start * 100) / 100, Math.round(x.end * 100) / 100, x.confidence]);
    expect(round(out[0]!)).toEqual([
      ['heron', 1.2, 1.5, 0.85],
      ['then', 1.25, 1.45, 0.87],
    ]);
    expect(round(out[1]!)).toEqual([['tends', 5.1, 5.3, 0.88]]);
    // Its scratch files are gone.
    expect(readdirSync(dir).filter((f) => f.startsWith('contest-'))).toEqual([]);
  });
});
