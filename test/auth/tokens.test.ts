import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenSigner } from '../../controller/src/auth/tokens';

const claims = { sub: 'user-1', sid: 'session-1', org: 'org-1' };

describe('access tokens', () => {
  afterEach(() => vi.useRealTimers());

  it('verifies a token it signed, again and again', async () => {
    const signer = new TokenSigner(randomBytes(32));
    const token = await signer.sign(claims, 60);
    expect(await signer.verify(token)).toEqual(claims);
    expect(await signer.verify(token)).toEqual(claims); // the remembered verification
  });

  it('refuses a remembered token once it has expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const signer = new TokenSigner(randomBytes(32));
      const token = await signer.sign(claims, 60);
      expect(await signer.verify(token)).toEqual(claims);
      vi.setSystemTime(Date.now() + 61_000);
      expect(await signer.verify(token)).toBeNull();
    } finally {
      vi.useRealTimers(); // a faked Date would stay frozen for the next files of this worker
    }
  });

  it('refuses a tampered token and one signed with another key', async () => {
    const signer = new TokenSigner(randomBytes(32));
    const token = await signer.sign(claims, 60);
    await signer.verify(token);
    const [header, payload, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), org: 'org-2' })).toString('base64url');
    expect(await signer.verify(`${header}.${forged}.${signature}`)).toBeNull();
    expect(await new TokenSigner(randomBytes(32)).verify(token)).toBeNull();
  });
});
