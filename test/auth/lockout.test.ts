import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';

const LOCKED = 'Too many failed login attempts. Please try again later.';
const LIMIT = 3;
const WINDOW_MINUTES = 15;

let c: TestController;
beforeAll(async () => {
  c = await startTestController({
    settings: { 'security.rate_limit.failed_login_limit': LIMIT, 'security.rate_limit.failed_login_window_minutes': WINDOW_MINUTES },
  });
});
afterAll(async () => c?.close());

function expectLockedOut(res: { status: number; body: any; headers: Headers }) {
  expect(res.status).toBe(429);
  expect(res.body.error).toBe(LOCKED);
  expect(res.body.code).toBe('LOGIN_LOCKED_OUT');
  expect(Number.isInteger(res.body.retry_after_secs)).toBe(true);
  expect(res.body.retry_after_secs).toBeGreaterThan(0);
  expect(res.body.retry_after_secs).toBeLessThanOrEqual(WINDOW_MINUTES * 60);
  expect(res.headers.get('retry-after')).toBe(String(res.body.retry_after_secs));
}

/** Forget every failure, as if the window had passed. */
const ageFailures = () => c.db('failed_logins').update({ created_at: c.db.raw(`now() - interval '${WINDOW_MINUTES + 1} minutes'`) });

describe('failed-login lockout', () => {
  it('counts down, then answers 429 on every /api/auth/* route, even for the right password', async () => {
    const remaining = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await c.login(ADMIN.username, 'wrong-password');
      expect(res.status).toBe(401);
      remaining.push(res.body.attempts_remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);

    expectLockedOut(await c.login(ADMIN.username, ADMIN.password));
    expectLockedOut(await c.request('GET', '/api/auth/providers'));
    expectLockedOut(await c.request('GET', '/api/auth/me', { token: c.adminToken }));
    expectLockedOut(await c.request('POST', '/api/auth/refresh', { body: { refresh_token: 'x'.repeat(64) } }));

    // Only /api/auth/* is guarded: the rest of the API answers that address normally.
    const other = await c.request('GET', '/api/admin/organizations', { token: c.adminToken });
    expect(other.status).toBe(200);
  });

  it('holds across a controller restart, because it lives in the database', async () => {
    await c.restart();
    expectLockedOut(await c.login(ADMIN.username, ADMIN.password));
  });

  it('ends when the window has passed', async () => {
    await ageFailures();
    const res = await c.login(ADMIN.username, ADMIN.password);
    expect(res.status).toBe(200);
  });

  it("does not let a successful login to one's own account wipe failures against another", async () => {
    await ageFailures();
    expect((await c.login('victim', 'guess-1')).status).toBe(401);
    expect((await c.login('victim', 'guess-2')).status).toBe(401);
    expect((await c.login(ADMIN.username, ADMIN.password)).status).toBe(200);
    expect((await c.login('victim', 'guess-3')).status).toBe(401);
    expectLockedOut(await c.login('victim', 'guess-4'));
  });

  it("forgets an account's own failures once it signs in", async () => {
    await ageFailures();
    expect((await c.login(ADMIN.username, 'typo-1')).status).toBe(401);
    expect((await c.login(ADMIN.username, 'typo-2')).status).toBe(401);
    expect((await c.login(ADMIN.username, ADMIN.password)).status).toBe(200);
    const res = await c.login(ADMIN.username, 'typo-3');
    expect(res.status).toBe(401);
    expect(res.body.attempts_remaining).toBe(LIMIT - 1);
  });

  it('counts wrong current passwords on PUT /password as failures', async () => {
    await ageFailures();
    const token = (await c.login(ADMIN.username, ADMIN.password)).body.access_token;
    for (let i = 0; i < LIMIT; i++) {
      const res = await c.request('PUT', '/api/auth/password', {
        token,
        body: { current_password: `guess-${i}`, new_password: 'a sturdy new pass phrase 42' },
      });
      expect(res.status).toBe(400);
    }
    expectLockedOut(
      await c.request('PUT', '/api/auth/password', {
        token,
        body: { current_password: ADMIN.password, new_password: 'a sturdy new pass phrase 42' },
      }),
    );
  });

  it('lets no more guesses than the limit through when they come all at once', async () => {
    await ageFailures();
    // Each failure is counted before its password is checked, so a burst cannot pass the
    // lockout while the first guesses are still being hashed.
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => c.login('burst-victim', `guess-${i}`)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(12 - LIMIT);
    for (const res of answers.filter((r) => r.status === 429)) expectLockedOut(res);
    const recorded = await c
      .db('failed_logins')
      .where('created_at', '>', c.db.raw(`now() - interval '${WINDOW_MINUTES} minutes'`))
      .count('* as n');
    expect(Number(recorded[0].n)).toBe(LIMIT);
  });

  it('a flood of guesses from one address: still exactly the limit checked, every other one refused (locked out, or too many waiting)', async () => {
    await ageFailures();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => c.login(`flood-${i % 4}`, `guess-${i}`)));
    const codes = answers.map((r) => (r.status === 401 ? 'INVALID_CREDENTIALS' : r.body.code));
    expect(codes.filter((code) => code === 'INVALID_CREDENTIALS')).toHaveLength(LIMIT);
    expect(codes.every((code) => ['INVALID_CREDENTIALS', 'RATE_LIMITED', 'LOGIN_LOCKED_OUT'].includes(code))).toBe(true);
  });

  it('refuses PUT /password while the account is locked out from other addresses, even with the right current password', async () => {
    await ageFailures();
    const token = (await c.login(ADMIN.username, ADMIN.password)).body.access_token;
    for (let i = 0; i < LIMIT; i++) await c.db('failed_logins').insert({ ip_address: `192.0.2.${i + 1}`, username: ADMIN.username });
    const body = { current_password: ADMIN.password, new_password: 'a sturdy new pass phrase 42' };
    expectLockedOut(await c.request('PUT', '/api/auth/password', { token, body }));
    // Nothing was changed: the old password still signs in once the failures have left the window.
    await ageFailures();
    expect((await c.login(ADMIN.username, ADMIN.password)).status).toBe(200);
  });

  it('tells when the lockout ends: when enough failures leave the window', async () => {
    await c.db('failed_logins').delete();
    // Failures 10, 5 and 1 minutes old with a limit of 3: the oldest leaves the window in 5 minutes.
    for (const minutes of [10, 5, 1]) {
      await c.db('failed_logins').insert({ ip_address: '127.0.0.1', username: 'x', created_at: c.db.raw(`now() - interval '${minutes} minutes'`) });
    }
    const res = await c.login(ADMIN.username, ADMIN.password);
    expectLockedOut(res);
    expect(res.body.retry_after_secs).toBeGreaterThan(4 * 60);
    expect(res.body.retry_after_secs).toBeLessThanOrEqual(5 * 60);
  });

  it('takes a changed limit after the API restarts (API.md), not before', async () => {
    await c.db('failed_logins').delete();
    const admin = (await c.login(ADMIN.username, ADMIN.password)).body.access_token as string;
    const put = await c.request('PUT', '/api/admin/settings', {
      token: admin,
      body: { settings: { 'security.rate_limit.failed_login_limit': LIMIT + 2 } },
    });
    expect(put.status, put.text).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await c.login(ADMIN.username, 'wrong-password')).status).toBe(401);
    expectLockedOut(await c.login(ADMIN.username, ADMIN.password)); // still the limit read at start
    await c.restart();
    expect((await c.login(ADMIN.username, ADMIN.password)).status).toBe(200); // now LIMIT + 2
  });
});
