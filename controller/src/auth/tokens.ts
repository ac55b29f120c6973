import { createHash, hkdfSync, randomBytes, randomUUID, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

const ISSUER = 'switchboard';
const AUDIENCE = 'switchboard-api';

export interface AccessClaims {
  /** user id */
  sub: string;
  /** session id: checked on every request so a revoked session stops at once */
  sid: string;
  /** active organization */
  org: string;
}

/** Verified tokens remembered per process; a busy API sees the same few tokens over and over. */
const VERIFIED_CACHE_SIZE = 10_000;

/**
 * Signs and checks access tokens with a key derived from the master key, shared by every replica.
 *
 * A token that verified once is remembered (until it expires) so a client's repeat requests skip
 * the HMAC: the signature cannot change for the same token text, and revocation is decided by the
 * session lookup that still runs on every request, not here.
 */
export class TokenSigner {
  /** Imported once: jose would import raw key bytes again on every call. */
  private readonly key: Promise<webcrypto.CryptoKey>;
  private readonly verified = new Map<string, { claims: AccessClaims; expiresAtMs: number }>();

  constructor(secretKey: Buffer) {
    const raw = new Uint8Array(hkdfSync('sha256', secretKey, 'switchboard', 'access-token-hs256', 32));
    this.key = webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  }

  async sign(claims: AccessClaims, lifetimeSeconds: number): Promise<string> {
    return new SignJWT({ sid: claims.sid, org: claims.org })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setJti(randomUUID()) // every token distinct, even two issued in one second
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
      .sign(await this.key);
  }

  /** Returns the claims, or null for any malformed, tampered or expired token. */
  async verify(token: string): Promise<AccessClaims | null> {
    const known = this.verified.get(token);
    if (known) {
      if (known.expiresAtMs > Date.now()) return known.claims;
      this.verified.delete(token);
    }
    try {
      const { payload } = await jwtVerify(token, await this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.org !== 'string' || typeof payload.exp !== 'number')
        return null;
      const claims = { sub: payload.sub, sid: payload.sid, org: payload.org };
      this.remember(token, claims, payload.exp * 1000);
      return claims;
    } catch {
      return null;
    }
  }

  private remember(token: string, claims: AccessClaims, expiresAtMs: number): void {
    // Map keeps insertion order, so the first key is the oldest entry.
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { claims, expiresAtMs });
  }
}

/** 64 URL-safe characters (48 random bytes). */
export function newRefreshToken(): string {
  return randomBytes(48).toString('base64url');
}

/** Refresh tokens are stored only as SHA-256: lookup is by hash, so no comparison timing leaks. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
