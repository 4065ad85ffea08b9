// Checks an access token the way a resource server must (OAuth 2.1 section 5.2, RFC 8707, RFC 9068): a JWT signed by
// a key of the issuer's key set (jose), from that issuer, for this resource's audience, not expired (30 s of clock
// skew), with a subject. What it carries is returned as the SDK's AuthInfo (scopes from `scope`, or `scp` as some
// providers write them); the SDK's verifyBearerToken then compares the resource, the scopes and the expiry. A refusal
// says why in one line and never repeats the token.
import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { createLocalJWKSet, errors, jwtVerify, type JWK, type JWTPayload } from 'jose';

/** The asymmetric algorithms accepted (never `none`, never a shared secret: the key set is public). */
const ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
  'Ed25519',
];

/** Where the issuer's keys come from: `fresh` asks past any cache (a token named a key not seen yet). */
export type KeySource = (fresh: boolean) => Promise<JWK[]>;

/** What a token says about who sent it, kept in AuthInfo.extra. */
export interface TokenSubject {
  subject: string;
  issuer: string;
}

function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  return [];
}

/** The client a token was issued to: `client_id` (RFC 9068), or `azp` as OpenID Connect providers write it. */
function clientOf(payload: JWTPayload): string {
  const { client_id: clientId, azp } = payload as { client_id?: unknown; azp?: unknown };
  if (typeof clientId === 'string') return clientId;
  return typeof azp === 'string' ? azp : '';
}

/** Why jose refused a token, as one line for WWW-Authenticate's error_description. */
function reason(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'the token was issued for another audience (not this server)';
    if (err.claim === 'iss') return 'the token was issued by another issuer';
    if (err.claim === 'nbf') return 'the token is not valid yet';
    return `the token's ${err.claim} claim is missing or wrong`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)
    return 'the token is signed with a key the issuer does not publish';
  if (err instanceof errors.JOSEAlgNotAllowed) return "the token's signing algorithm is not accepted";
  if (err instanceof errors.JOSEError) return 'the token is not a valid signed JWT';
  return 'the token could not be checked';
}

export class TokenChecker implements OAuthTokenVerifier {
  private keys?: ReturnType<typeof createLocalJWKSet>;
  private fetchedAt = 0;

  constructor(
    private readonly opts: {
      issuer: string;
      /** The `aud` a token must carry. */
      audience: string;
      /** This server's resource identifier, reported for the SDK's comparison. */
      resource: string;
      keySource: KeySource;
      /** How soon the key set may be fetched again for an unknown key (default 30 s). */
      refetchMs?: number;
    },
  ) {}

  private async keySet(fresh: boolean) {
    const stale = Date.now() - this.fetchedAt > (this.opts.refetchMs ?? 30_000);
    if (!this.keys || (fresh && stale)) {
      const keys = await this.opts.keySource(fresh);
      this.keys = createLocalJWKSet({ keys });
      this.fetchedAt = Date.now();
    }
    return this.keys;
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const check = async (fresh: boolean) =>
      jwtVerify(token, await this.keySet(fresh), {
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        algorithms: ALGORITHMS,
        clockTolerance: 30,
        requiredClaims: ['exp', 'sub'],
      });
    let payload: JWTPayload;
    try {
      try {
        ({ payload } = await check(false));
      } catch (err) {
        // A key the cached set lacks: the issuer may have rotated its keys; ask once more.
        if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
        ({ payload } = await check(true));
      }
    } catch (err) {
      if (err instanceof OAuthError) throw err;
      if (!(err instanceof errors.JOSEError))
        throw new OAuthError(
          OAuthErrorCode.ServerError,
          `the issuer's keys could not be read (${(err as Error).message})`,
        );
      throw new OAuthError(OAuthErrorCode.InvalidToken, reason(err));
    }
    const subject: TokenSubject = { subject: payload.sub!, issuer: payload.iss! };
    return {
      token,
      clientId: clientOf(payload),
      scopes: scopesOf(payload),
      expiresAt: payload.exp,
      resource: new URL(this.opts.resource),
      extra: { ...subject },
    };
  }
}
