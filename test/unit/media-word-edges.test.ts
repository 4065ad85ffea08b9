// Where a cut by words goes in the sound (src/media/word-edges.ts), on speech flite says here with every word's true
// start and end: a final stop whose faint release follows its closure ("up": the closure looks like the pause; the
// cut-words bench lost 12 ms of it). Words that run together are tested through the server (cut-words.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hearEdges } from '../../src/media/word-edges.js';
import { Limiter } from '../../src/media/probe.js';
import { sayWithWordTimes } from '../helpers/flite-words.js';

const dir = mkdtempSync(join(tmpdir(), 'cutroom-word-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const deps = { ffmpeg: 'ffmpeg', limiter: new Limiter(2) };

describe('hearEdges', () => {
  it("takes a final stop's release after its closure as the word's end, not the closure's start", async () => {
    const wav = join(dir, 'up.wav');
    const words = sayWithWordTimes('The lighthouse keeper walked along the shore before the sun came up.', wav, 'rms');
    const up = words.at(-1)!;
    const e = await hearEdges(
      deps,
      { kind: 'file', path: wav },
      {
        prevEnd: words.at(-2)!.end,
        start: words.at(-2)!.start,
        firstEnd: words.at(-2)!.end,
        lastStart: up.start,
        end: up.end - 0.04,
        duration: up.end + 0.5,
        sentenceEnd: true,
      },
    );
    // The closure starts ~160 ms before the word's true end; the release's burst lies within its last 40 ms.
    expect(e.end).toBeGreaterThanOrEqual(up.end - 0.04);
    expect(e.end).toBeLessThanOrEqual(up.end + 0.02);
  });
});
