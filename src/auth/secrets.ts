// What cutroom's own authorization server derives from the operator's secret (CUTROOM_OAUTH_SECRET), each with HKDF
// under a label of its own: the key that signs access tokens (ES256), the keys that sign its cookies, and the key
// that seals the service keys people give at sign-in. Derived, not stored: replicas given the same secret agree on
// all three, and nothing secret lies in the data dir.
import { createCipheriv, createDecipheriv, createECDH, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { JWK } from 'jose';

export interface DerivedSecrets {
  /** The ES256 signing key as a private JWK (with its kid). */
  signingKey: JWK & { kid: string };
  /** The same key's public half, as served at the JWKS endpoint. */
  publicKey: JWK & { kid: string };
  /** Keys for the authorization server's signed cookies. */
  cookieKeys: string[];
  /** AES-256-GCM key for kept service keys. */
  sealKey: Buffer;
}

const derive = (secret: string, label: string, length = 32) =>
  Buffer.from(hkdfSync('sha256', secret, 'cutroom oauth', label, length));

/** The order of P-256's group: a private scalar is in [1, n). */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/** A P-256 private scalar from the secret (derived again with a counter in the rare case it falls outside [1, n)). */
function p256Scalar(secret: string): Buffer {
  for (let round = 0; ; round++) {
    const d = derive(secret, `signing key ${round}`);
    const value = BigInt(`0x${d.toString('hex')}`);
    if (value > 0n && value < P256_ORDER) return d;
  }
}

export function deriveSecrets(secret: string): DerivedSecrets {
  const d = p256Scalar(secret);
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  // Uncompressed point: 0x04, then x and y, 32 bytes each.
  const point = ecdh.getPublicKey();
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33, 65).toString('base64url');
  const kid = createHash('sha256').update(`${x}.${y}`).digest('base64url').slice(0, 16);
  const publicKey = { kty: 'EC', crv: 'P-256', x, y, kid, use: 'sig', alg: 'ES256' };
  return {
    signingKey: { ...publicKey, d: d.toString('base64url') },
    publicKey,
    cookieKeys: [derive(secret, 'cookies').toString('base64url')],
    sealKey: derive(secret, 'kept keys'),
  };
}

/** A string sealed with AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, base64url; `bound` ties it to its record. */
export function seal(key: Buffer, plain: string, bound: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(bound));
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), data]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** The string `seal` sealed, or undefined when it was sealed under another key or for another record, or altered. */
export function unseal(key: Buffer, sealed: string, bound: string): string | undefined {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(bound));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
