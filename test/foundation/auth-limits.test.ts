import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';

const LIMIT = 3;
const PER_MINUTE = 20;

/** Behind a trusted proxy (127.0.0.1), X-Forwarded-For says which client each request comes from. */
let c: TestController;
beforeAll(async () => {
  c = await startTestController({
    config: { trustProxy: ['127.0.0.1'] },
    settings: { 'security.rate_limit.failed_login_limit': LIMIT, 'security.rate_limit.requests_per_minute': PER_MINUTE },
  });
});
afterAll(async () => c?.close());

const from = (address: string) => ({ 'x-forwarded-for': address });
const LOGIN_SPELLINGS = ['/api/%61uth/login', '/%61pi/auth/login', '/api/auth/%6cogin', '/api/auth/login'];

function login(path: string, address: string, username: string, password: string) {
  return c.request('POST', path, { headers: from(address), body: { username, password } });
}

describe('failed-login lockout and rate limit, whichever spelling of the path', () => {
  it('an address locked out by failures through encoded paths is refused on every spelling, even with the right password', async () => {
    const address = '198.51.100.7';
    for (let i = 0; i < LIMIT; i++) {
      const res = await login(LOGIN_SPELLINGS[i % LOGIN_SPELLINGS.length], address, `ghost-${i}`, 'wrong');
      expect(res.status).toBe(401);
    }
    for (const path of LOGIN_SPELLINGS) {
      const res = await login(path, address, ADMIN.username, ADMIN.password);
      expect(res.status, path).toBe(429);
      expect(res.body.code).toBe('LOGIN_LOCKED_OUT');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.body.access_token).toBeUndefined();
    }
    // Another address is not locked out, and the admin's username is not either.
    expect((await login('/api/auth/login', '198.51.100.8', ADMIN.username, ADMIN.password)).status).toBe(200);
  });

  it('a username guessed from many addresses is locked from a new one too, the same way whether it exists or not', async () => {
    const user = await c.createOrgUser(['operator']);
    const answers: Record<string, { status: number; body: any }[]> = {};
    for (const username of [user.username, 'nobody-by-that-name']) {
      answers[username] = [];
      for (let i = 0; i < LIMIT; i++) {
        // One failure per address: no address reaches the limit on its own.
        const res = await login(LOGIN_SPELLINGS[i], `203.0.113.${i + 1 + (username === user.username ? 0 : 10)}`, username, 'wrong');
        answers[username].push({ status: res.status, body: res.body });
      }
      const locked = await login('/api/auth/login', '203.0.113.99', username, username === user.username ? user.password : 'anything');
      answers[username].push({ status: locked.status, body: { ...locked.body, retry_after_secs: typeof locked.body.retry_after_secs } });
    }
    const [real, unknown] = Object.values(answers);
    expect(real.map((a) => a.status)).toEqual([401, 401, 401, 429]);
    expect(real[3].body.code).toBe('LOGIN_LOCKED_OUT');
    expect(unknown).toEqual(real); // no answer tells an existing account from a missing one
    // The address itself is not locked: another user signs in from it.
    expect((await login('/api/auth/login', '203.0.113.99', ADMIN.username, ADMIN.password)).status).toBe(200);
  });

  it('every spelling of an /api/auth path draws on the same per-address request budget; other routes are not limited', async () => {
    const address = '192.0.2.44';
    const paths = ['/api/auth/providers', '/api/%61uth/providers', '/%61pi/auth/providers', '/api/auth/provider%73'];
    for (let i = 0; i < PER_MINUTE; i++) {
      const res = await c.request('GET', paths[i % paths.length], { headers: from(address) });
      expect(res.status).toBe(200);
    }
    for (const path of paths) {
      const res = await c.request('GET', path, { headers: from(address) });
      expect(res.status, path).toBe(429);
      expect(res.body.code).toBe('RATE_LIMITED');
    }
    expect((await c.request('GET', '/api/auth/providers', { headers: from('192.0.2.45') })).status).toBe(200);
    expect((await c.request('GET', '/healthz', { headers: from(address) })).status).toBe(200);
  });
});

describe('SWITCHBOARD_TRUST_PROXY off (the default)', () => {
  let direct: TestController;
  beforeAll(async () => {
    direct = await startTestController({ settings: { 'security.rate_limit.failed_login_limit': LIMIT } });
  });
  afterAll(async () => direct?.close());

  it('ignores X-Forwarded-For: a client cannot pick a new address to escape the lockout', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const res = await direct.request('POST', '/api/auth/login', { headers: from(`10.9.0.${i}`), body: { username: `ghost-${i}`, password: 'x' } });
      expect(res.status).toBe(401);
    }
    const res = await direct.request('POST', '/api/auth/login', {
      headers: from('10.9.0.200'),
      body: { username: ADMIN.username, password: ADMIN.password },
    });
    expect(res.status).toBe(429);
  });
});
