import { createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
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

/** Signs and checks access tokens with a key derived from the master key, shared by every replica. */
export class TokenSigner {
  private readonly key: Uint8Array;

  constructor(secretKey: Buffer) {
    this.key = new Uint8Array(hkdfSync('sha256', secretKey, 'switchboard', 'access-token-hs256', 32));
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
      .sign(this.key);
  }

  /** Returns the claims, or null for any malformed, tampered or expired token. */
  async verify(token: string): Promise<AccessClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.org !== 'string') return null;
      return { sub: payload.sub, sid: payload.sid, org: payload.org };
    } catch {
      return null;
    }
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
