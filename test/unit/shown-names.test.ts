// The names the tools show for files (open-allowed.ts): UTF-8 names as they are; a name that is not UTF-8 in a form
// that maps back to its very bytes, so that what list_media shows, import_media imports.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayPath, fsPath } from '../../src/open-allowed.js';

const bytesOf = (p: string | Buffer) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p);
/** Bytes a file name may hold: anything but '/' and NUL, with backslashes and 'x' and hex digits often. */
const nameBytes = fc
  .array(
    fc.oneof(
      fc.integer({ min: 1, max: 255 }),
      fc.constantFrom(0x5c, 0x78, 0x35, 0x63, 0x43, 0x39, 0x65, 0xe9, 0xc3, 0xa9),
    ),
    { maxLength: 24 },
  )
  .map((a) => Buffer.from(a.filter((b) => b !== 0x2f)));

describe('names as the tools show them', () => {
  it('map back to the very bytes, whatever they are', () => {
    fc.assert(
      fc.property(nameBytes, (raw) => {
        const shown = displayPath(raw);
        expect(bytesOf(fsPath(shown)).equals(raw)).toBe(true);
        // What is shown is text a JSON message and a model carry unchanged: no lone surrogate, no replacement
        // character.
        expect(shown.isWellFormed()).toBe(true);
        if (!raw.includes(Buffer.from('\uFFFD'))) expect(shown).not.toContain('\uFFFD');
      }),
      { numRuns: 2000 },
    );
  });

  it('leave UTF-8 names as they are, unless they read like an escape', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        if (/\\x([89a-fA-F][0-9a-fA-F]|5[cC])/.test(s)) return;
        expect(displayPath(Buffer.from(s))).toBe(s);
        expect(fsPath(s)).toBe(s);
      }),
    );
    expect(displayPath(Buffer.from('/media/café.wav'))).toBe('/media/café.wav');
  });

  it('show a byte that is not UTF-8 as \\xNN, and a backslash that reads like one as \\x5C', () => {
    expect(displayPath(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x77, 0x61, 0x76]))).toBe('caf\\xE9.wav');
    expect(displayPath(Buffer.from('lit\\xE9.wav'))).toBe('lit\\x5CxE9.wav');
    expect(fsPath('lit\\x5CxE9.wav')).toEqual(Buffer.from('lit\\xE9.wav'));
    // Only bytes a name can need are decoded: never a '/', a '.' or a NUL.
    expect(fsPath('a\\x2F..\\x2Fb')).toBe('a\\x2F..\\x2Fb');
    expect(fsPath('\\x00')).toBe('\\x00');
  });
});
