// A claim signed with the server's secret, as a URL-safe token: the claim's JSON in base64url, a dot, and its
// HMAC-SHA256 over a purpose tag and that payload (a link's token is never an upload's, whatever it claims). Used by
// file-links.ts and upload-links.ts, which check their claims' shapes. Pure: no I/O.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type ClaimPurpose = 'link' | 'upload';

function mac(secret: string, purpose: ClaimPurpose, payload: string): string {
  return createHmac('sha256', secret).update(`cutroom ${purpose}\0${payload}`).digest('base64url');
}

/** The token of a claim. */
export function signClaim(secret: string, purpose: ClaimPurpose, claim: object): string {
  const payload = Buffer.from(JSON.stringify(claim)).toString('base64url');
  return `${payload}.${mac(secret, purpose, payload)}`;
}

/** What a token claims, when its signature is the server's for this purpose; undefined for anything else. */
export function openClaim(secret: string, purpose: ClaimPurpose, token: string): Record<string, unknown> | undefined {
  const m = /^([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return undefined;
  const want = Buffer.from(mac(secret, purpose, m[1]!));
  const got = Buffer.from(m[2]!);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
  try {
    const claim: unknown = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
    return claim && typeof claim === 'object' && !Array.isArray(claim) ? (claim as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
