// The duck's spans as the plan shapes them (src/edit/plan.ts duckSpans) and its volume expression
// (src/media/timeline-args.ts duckFilter) run by ffmpeg on a steady tone: with many speech spans at uneven times (the
// expression halves its way to the one span under way), the tone is down by the duck in the middle of every span and
// at its own level in every gap long enough to come back.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DUCK_ATTACK, DUCK_HOLD, DUCK_RELEASE, duckSpans } from '../../src/edit/plan.js';
import { duckFilter } from '../../src/media/timeline-args.js';

const RATE = 48_000;
function levels(filter: string, seconds: number): Float32Array {
  const r = spawnSync(
    'ffmpeg',
    [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `sine=f=500:r=${RATE}:d=${seconds}`,
      '-filter_complex',
      `[0:a]${filter}[o]`,
      '-map',
      '[o]',
      '-f',
      'f32le',
      '-ac',
      '1',
      'pipe:1',
    ],
    { maxBuffer: 1 << 28 },
  );
  if (r.status !== 0) throw new Error(String(r.stderr));
  return new Float32Array(r.stdout.buffer.slice(r.stdout.byteOffset, r.stdout.byteOffset + (r.stdout.length & ~3)));
}
const dbAt = (x: Float32Array, from: number, to: number) => {
  let s = 0;
  for (let i = Math.round(from * RATE); i < Math.round(to * RATE); i++) s += x[i]! ** 2;
  return 10 * Math.log10(s / (Math.round(to * RATE) - Math.round(from * RATE)));
};

describe('duckFilter', () => {
  it('ducks every one of many uneven spans by its dB and comes back between them', () => {
    // 150 spans (ffmpeg refuses an expression nested ~92 deep: the halving keeps it 8 deep): lengths 0.4-1.6 s, gaps
    // 0.7-2.2 s (all longer than attack + release, and no hold asked, so none are joined).
    const spans: { from: number; to: number }[] = [];
    let t = 0.5;
    for (let i = 0; i < 150; i++) {
      const length = 0.4 + ((i * 7) % 13) / 10;
      spans.push({ from: t, to: t + length });
      t += length + 0.7 + ((i * 5) % 16) / 10;
    }
    const x = levels(duckFilter(12, duckSpans(spans, 0)), Math.ceil(t + 1));
    const full = dbAt(x, 0, 0.3);
    for (const s of spans) {
      const mid = (s.from + s.to) / 2;
      expect(dbAt(x, mid - 0.1, mid + 0.1) - full, `span ${s.from.toFixed(2)}-${s.to.toFixed(2)}`).toBeCloseTo(-12, 0);
    }
    for (let i = 0; i + 1 < spans.length; i++) {
      const back = spans[i]!.to + DUCK_RELEASE + 0.02;
      const down = spans[i + 1]!.from - DUCK_ATTACK - 0.02;
      if (down - back > 0.05)
        expect(dbAt(x, back, down) - full, `gap after ${spans[i]!.to.toFixed(2)}`).toBeCloseTo(0, 1);
    }
  });

  it('past its most spans, joins the shortest gaps first: the music still comes back in the long ones', () => {
    // 260 spans of 0.3 s: every tenth gap 3 s long, the others 0.6 s (long enough to come back with no hold, but the
    // first joined).
    const spans: { from: number; to: number }[] = [];
    let t = 0.5;
    for (let i = 0; i < 260; i++) {
      spans.push({ from: t, to: t + 0.3 });
      t += 0.3 + (i % 10 === 9 ? 3 : 0.6);
    }
    const x = levels(duckFilter(12, duckSpans(spans, 0)), Math.ceil(t + 1));
    const full = dbAt(x, 0, 0.3);
    for (let i = 9; i + 1 < spans.length; i += 10)
      expect(dbAt(x, spans[i]!.to + 0.6, spans[i + 1]!.from - 0.3) - full, `long gap after span ${i}`).toBeCloseTo(
        0,
        1,
      );
  });

  it('keeps the music down across a gap shorter than attack and release together', () => {
    const x = levels(
      duckFilter(
        10,
        duckSpans([
          { from: 1, to: 2 },
          { from: 2.3, to: 3 },
        ]),
      ),
      4,
    );
    const full = dbAt(x, 0, 0.5);
    expect(dbAt(x, 2.05, 2.25) - full).toBeCloseTo(-10, 0);
  });

  it('holds through pauses shorter than the hold (1.5 s by default), and comes back in longer ones', () => {
    const spans = [
      { from: 0.5, to: 2 },
      { from: 3, to: 4.5 }, // after a 1 s pause: held
      { from: 6.1, to: 7 }, // after a 1.6 s one: back up between
    ];
    expect(DUCK_HOLD).toBe(1.5);
    expect(duckSpans(spans)).toEqual([
      { from: 0.5, to: 4.5 },
      { from: 6.1, to: 7 },
    ]);
    const x = levels(duckFilter(12, duckSpans(spans)), 8);
    const full = dbAt(x, 0, 0.3);
    expect(dbAt(x, 2.1, 2.9) - full).toBeCloseTo(-12, 0);
    expect(dbAt(x, 5, 5.9) - full).toBeCloseTo(0, 1);
    // A hold of 3 s keeps it down in the longer pause too.
    expect(duckSpans(spans, 3)).toEqual([{ from: 0.5, to: 7 }]);
  });
});
