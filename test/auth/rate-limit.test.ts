import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

const PER_MINUTE = 5;

let c: TestController;
beforeAll(async () => {
  c = await startTestController({ settings: { 'security.rate_limit.requests_per_minute': PER_MINUTE } });
});
afterAll(async () => c?.close());

/** Calls GET /api/auth/providers until refused; returns the refusal. */
async function exhaust() {
  for (let i = 0; i <= PER_MINUTE + 1; i++) {
    const res = await c.request('GET', '/api/auth/providers');
    if (res.status === 429) return res;
    expect(res.status).toBe(200);
  }
  throw new Error('the rate limit never answered 429');
}

describe('rate limit on /api/auth/*', () => {
  it('answers 429 with Retry-After and retry_after_secs once the per-minute limit is used up', async () => {
    const res = await exhaust();
    expect(res.body.error).toBe('Too many failed login attempts. Please try again later.');
    expect(res.body.code).toBe('RATE_LIMITED');
    expect(Number.isInteger(res.body.retry_after_secs)).toBe(true);
    expect(res.body.retry_after_secs).toBeGreaterThan(0);
    expect(res.body.retry_after_secs).toBeLessThanOrEqual(60);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    // Every /api/auth/* route is limited, public or not.
    expect((await c.request('GET', '/api/auth/me', { token: c.adminToken })).status).toBe(429);
    expect((await c.request('POST', '/api/auth/refresh', { body: { refresh_token: 'x'.repeat(64) } })).status).toBe(429);
  });

  it('leaves every other route alone', async () => {
    for (let i = 0; i < PER_MINUTE * 3; i++) {
      const res = await c.request('GET', '/api/admin/organizations', { token: c.adminToken });
      expect(res.status).toBe(200);
    }
    expect((await c.request('GET', '/api/tls/ca-certificate')).status).toBe(200);
  });

  it('reads a changed limit only after a restart', async () => {
    const set = await c.request('PUT', '/api/admin/settings', {
      token: c.adminToken,
      body: { settings: { 'security.rate_limit.requests_per_minute': 1000 } },
    });
    expect(set.status).toBe(200);
    expect((await c.request('GET', '/api/auth/providers')).status).toBe(429);
    await c.restart();
    for (let i = 0; i < PER_MINUTE * 2; i++) expect((await c.request('GET', '/api/auth/providers')).status).toBe(200);
  });
});
