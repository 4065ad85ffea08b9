// Signed claims (src/workflow/signed-claims.ts): what a link's or an upload's token holds, opened only with the
// server's secret and for the purpose it was signed for.
import { describe, expect, it } from 'vitest';
import { openClaim, signClaim } from '../../src/workflow/signed-claims.js';

const SECRET = 'a secret of the server';

describe('signed claims', () => {
  it('opens a token it signed, for the purpose it was signed for only', () => {
    const token = signClaim(SECRET, 'link', { path: 'renders/a.mp4', expires: 10 });
    expect(openClaim(SECRET, 'link', token)).toEqual({ path: 'renders/a.mp4', expires: 10 });
    // A link's token is not an upload's, and another secret opens nothing.
    expect(openClaim(SECRET, 'upload', token)).toBeUndefined();
    expect(openClaim('another secret', 'link', token)).toBeUndefined();
  });

  it('refuses a token altered anywhere, and what is not a token at all', () => {
    const token = signClaim(SECRET, 'upload', { id: 'x', max: 5 });
    const [payload, mac] = token.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ id: 'x', max: 5e12 })).toString('base64url');
    expect(openClaim(SECRET, 'upload', `${forged}.${mac}`)).toBeUndefined();
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    expect(openClaim(SECRET, 'upload', `${payload}.${flipped}`)).toBeUndefined();
    for (const junk of ['', '.', token.replace('.', ''), `${payload}.${mac}.x`, `${'a'.repeat(5000)}.${mac}`])
      expect(openClaim(SECRET, 'upload', junk)).toBeUndefined();
    // A claim that is not an object (signed, but not a claim) opens to nothing.
    expect(openClaim(SECRET, 'link', signClaim(SECRET, 'link', [1, 2]))).toBeUndefined();
  });
});
