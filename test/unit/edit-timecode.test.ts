import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MS, formatTimecode, parseTimecode } from '../../src/edit/timecode.js';

const ms = fc.integer({ min: 0, max: MAX_MS });

describe('timecode', () => {
  it('parses what it formats, exactly, for every millisecond value', () => {
    fc.assert(
      fc.property(ms, (v) => {
        expect(parseTimecode(formatTimecode(v))).toEqual({ ok: true, ms: v });
      }),
    );
  });

  it('always formats as HH:MM:SS.mmm', () => {
    fc.assert(
      fc.property(ms, (v) => {
        expect(formatTimecode(v)).toMatch(/^\d{2}:[0-5]\d:[0-5]\d\.\d{3}$/);
      }),
    );
  });

  it('reads plain seconds, as numbers or text, to the millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 359_999_999 }), (v) => {
        const seconds = v / 1000;
        expect(parseTimecode(seconds)).toEqual({ ok: true, ms: v });
        expect(parseTimecode(String(seconds))).toEqual({ ok: true, ms: v });
      }),
    );
  });

  it('orders the same way before and after formatting', () => {
    fc.assert(
      fc.property(ms, ms, (a, b) => {
        expect(Math.sign(formatTimecode(a).localeCompare(formatTimecode(b)))).toBe(Math.sign(a - b));
      }),
    );
  });

  it('rejects negative values, NaN and infinities', () => {
    fc.assert(
      fc.property(fc.double({ max: -0.001, noNaN: true }), (v) => {
        expect(parseTimecode(v).ok).toBe(false);
      }),
    );
    for (const v of [Number.NaN, Infinity, -Infinity, '-00:00:01', '-5']) expect(parseTimecode(v).ok).toBe(false);
  });

  it('rejects minutes or seconds of 60 and over', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 60, max: 99 }),
        fc.integer({ min: 0, max: 59 }),
        (h, bad, good) => {
          const p = (n: number) => String(n).padStart(2, '0');
          expect(parseTimecode(`${p(h)}:${p(bad)}:${p(good)}`)).toMatchObject({
            ok: false,
            reason: expect.stringMatching(/minutes must be under 60/),
          });
          expect(parseTimecode(`${p(h)}:${p(good)}:${p(bad)}`)).toMatchObject({
            ok: false,
            reason: expect.stringMatching(/seconds must be under 60/),
          });
        },
      ),
    );
  });

  it('accepts the usual spellings', () => {
    expect(parseTimecode('00:01:05')).toEqual({ ok: true, ms: 65_000 });
    expect(parseTimecode('01:05.5')).toEqual({ ok: true, ms: 65_500 });
    expect(parseTimecode('00:00:01,25')).toEqual({ ok: true, ms: 1_250 });
    expect(parseTimecode(' 12.5 ')).toEqual({ ok: true, ms: 12_500 });
  });

  it('rejects what is not a time, saying why', () => {
    expect(parseTimecode('five seconds')).toMatchObject({ ok: false, reason: expect.stringMatching(/not a time/) });
    expect(parseTimecode(null)).toMatchObject({ ok: false, reason: expect.stringMatching(/not null/) });
    expect(parseTimecode('100:00:00')).toMatchObject({ ok: false });
  });
});
