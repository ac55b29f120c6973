import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_GRACE_SECONDS } from '../../controller/src/auth/auth-service';
import { hashToken } from '../../controller/src/auth/tokens';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

const refresh = (refresh_token: string, headers?: Record<string, string>) =>
  c.request('POST', '/api/auth/refresh', { body: { refresh_token }, headers });
const me = (token: string) => c.request('GET', '/api/auth/me', { token });
/** Moves a spent token's used_at into the past (what waiting would do, without waiting). */
const spentSecondsAgo = (token: string, seconds: number) =>
  c
    .db('refresh_tokens')
    .where({ token_hash: hashToken(token) })
    .update({ used_at: c.db.raw('now() - make_interval(secs => ?)', [seconds]) });
const sessionOf = async (token: string) =>
  (
    await c
      .db('refresh_tokens')
      .where({ token_hash: hashToken(token) })
      .first('session_id')
  ).session_id as string;

describe('POST /api/auth/refresh', () => {
  it('rotates: a new pair, the old refresh token rejected, no Authorization header needed', async () => {
    const first = (await c.login(ADMIN.username, ADMIN.password)).body;
    const res = await refresh(first.refresh_token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(res.body.refresh_token).toHaveLength(64);
    expect(res.body.refresh_token).not.toBe(first.refresh_token);
    expect(res.body.access_token).not.toBe(first.access_token);
    expect((await me(res.body.access_token)).status).toBe(200);
    // The same session continues: the access token of the first pair still works until reuse.
    expect((await me(first.access_token)).status).toBe(200);
    const next = await refresh(res.body.refresh_token);
    expect(next.status).toBe(200);
  });

  it('ignores a bad Authorization header: the refresh token alone decides', async () => {
    const pair = (await c.login(ADMIN.username, ADMIN.password)).body;
    const res = await refresh(pair.refresh_token, { authorization: 'Bearer garbage' });
    expect(res.status).toBe(200);
  });

  it('treats a reused refresh token as stolen: 401, and the whole session is revoked at once', async () => {
    const first = (await c.login(ADMIN.username, ADMIN.password)).body;
    const other = (await c.login(ADMIN.username, ADMIN.password)).body;
    const second = (await refresh(first.refresh_token)).body;
    await spentSecondsAgo(first.refresh_token, REFRESH_GRACE_SECONDS + 1);

    const replay = await refresh(first.refresh_token);
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('REFRESH_TOKEN_REUSED');
    expect(replay.body.error).toMatch(/already been used/);

    // Every token of that session dies at once, not at expiry.
    for (const token of [first.access_token, second.access_token]) {
      const res = await me(token);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('Invalid or expired token');
    }
    const stolen = await refresh(second.refresh_token);
    expect(stolen.status).toBe(401);
    // Other sessions of the same user are untouched.
    expect((await me(other.access_token)).status).toBe(200);

    const audit = await c.request('GET', '/api/admin/audit?kind=auth.refresh_reuse', { token: other.access_token });
    expect(audit.body.total).toBeGreaterThanOrEqual(1);
  });

  it('two tabs refreshing with the same token at once both get a working pair for the same session', async () => {
    const first = (await c.login(ADMIN.username, ADMIN.password)).body;
    const [a, b] = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.refresh_token).not.toBe(b.body.refresh_token);
    const session = await sessionOf(first.refresh_token);
    expect(await sessionOf(a.body.refresh_token)).toBe(session);
    expect(await sessionOf(b.body.refresh_token)).toBe(session);
    expect((await c.db('sessions').where({ id: session }).first('revoked_at')).revoked_at).toBeNull();
    for (const pair of [a.body, b.body]) expect((await me(pair.access_token)).status).toBe(200);
    // Each tab carries on with its own new token.
    expect((await refresh(a.body.refresh_token)).status).toBe(200);
    expect((await refresh(b.body.refresh_token)).status).toBe(200);
  });

  it(`takes the just-spent token again within ${REFRESH_GRACE_SECONDS} s, but not once a newer token was spent`, async () => {
    const first = (await c.login(ADMIN.username, ADMIN.password)).body;
    const second = await refresh(first.refresh_token);
    const late = await refresh(first.refresh_token); // the slower tab, a moment later
    expect(late.status).toBe(200);
    expect(await sessionOf(late.body.refresh_token)).toBe(await sessionOf(first.refresh_token));

    // The session moved on (second spent): first is no longer the latest spent token, so it is a replay.
    expect((await refresh(second.body.refresh_token)).status).toBe(200);
    const replay = await refresh(first.refresh_token);
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('REFRESH_TOKEN_REUSED');
    expect((await me(late.body.access_token)).status).toBe(401);
  });

  it('still treats the just-spent token as stolen once the grace is over: 401 and the session revoked', async () => {
    const first = (await c.login(ADMIN.username, ADMIN.password)).body;
    const second = (await refresh(first.refresh_token)).body;
    await spentSecondsAgo(first.refresh_token, REFRESH_GRACE_SECONDS + 1);
    const replay = await refresh(first.refresh_token);
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('REFRESH_TOKEN_REUSED');
    expect((await me(second.access_token)).status).toBe(401);
    expect((await refresh(second.refresh_token)).status).toBe(401);
  });

  it('answers 401 for an unknown token and 400 for a missing or mistyped one', async () => {
    const unknown = await refresh('x'.repeat(64));
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('INVALID_REFRESH_TOKEN');
    const missing = await c.request('POST', '/api/auth/refresh', { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toContain('refresh_token');
    const mistyped = await c.request('POST', '/api/auth/refresh', { body: { refresh_token: 42 } });
    expect(mistyped.status).toBe(400);
    expect(mistyped.body.error).toBe('body.refresh_token must be string');
  });

  it('answers 401 for an expired refresh token', async () => {
    const pair = (await c.login(ADMIN.username, ADMIN.password)).body;
    await c
      .db('refresh_tokens')
      .where({ token_hash: hashToken(pair.refresh_token) })
      .update({ expires_at: c.db.raw("now() - interval '1 second'") });
    const res = await refresh(pair.refresh_token);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_REFRESH_TOKEN');
  });

  it('answers 401 once the session has aged past its lifetime, for refresh and access tokens alike', async () => {
    const pair = (await c.login(ADMIN.username, ADMIN.password)).body;
    const [{ session_id }] = await c
      .db('refresh_tokens')
      .where({ token_hash: hashToken(pair.refresh_token) })
      .select('session_id');
    const past = c.db.raw("now() - interval '1 second'");
    await c.db('refresh_tokens').where({ session_id }).update({ expires_at: past });
    await c.db('sessions').where({ id: session_id }).update({ expires_at: past });
    expect((await refresh(pair.refresh_token)).status).toBe(401);
    expect((await me(pair.access_token)).status).toBe(401);
  });

  it('answers 401 for the refresh token of a logged-out user', async () => {
    const user = await c.createOrgUser(['operator']);
    const pair = (await c.login(user.username, user.password)).body;
    await c.request('POST', '/api/auth/logout', { token: pair.access_token });
    const res = await refresh(pair.refresh_token);
    expect(res.status).toBe(401);
  });

  it('uses the lifetimes from settings for the new pair', async () => {
    const set = await c.request('PUT', '/api/admin/settings', {
      token: c.adminToken,
      body: { settings: { 'session.access_token_hours': 2, 'session.refresh_token_days': 1 } },
    });
    expect(set.status).toBe(200);
    try {
      const pair = (await c.login(ADMIN.username, ADMIN.password)).body;
      expect(pair.expires_in).toBe(7200);
      const res = await refresh(pair.refresh_token);
      expect(res.body.expires_in).toBe(7200);
      const [, payload] = res.body.access_token.split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      expect(claims.exp - claims.iat).toBe(7200);
      const [row] = await c
        .db('refresh_tokens')
        .where({ token_hash: hashToken(res.body.refresh_token) })
        .select('expires_at');
      const days = (new Date(row.expires_at).getTime() - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(0.99);
      expect(days).toBeLessThanOrEqual(1);
    } finally {
      await c.request('PUT', '/api/admin/settings', {
        token: c.adminToken,
        body: { settings: { 'session.access_token_hours': 24, 'session.refresh_token_days': 30 } },
      });
    }
  });

  it('stores refresh tokens only as hashes', async () => {
    const pair = (await c.login(ADMIN.username, ADMIN.password)).body;
    const rows = await c.db('refresh_tokens').select('token_hash');
    expect(rows.some((r: { token_hash: string }) => r.token_hash === pair.refresh_token)).toBe(false);
    expect(rows.some((r: { token_hash: string }) => r.token_hash === hashToken(pair.refresh_token))).toBe(true);
  });

  it('puts a platform administrator back in the home organization after switch-org', async () => {
    const pair = (await c.login(ADMIN.username, ADMIN.password)).body;
    const home = (await me(pair.access_token)).body.home_org_id;
    const org = await c.request('POST', '/api/admin/organizations', { token: pair.access_token, body: { name: 'Refresh elsewhere' } });
    const switched = await c.request('POST', '/api/auth/switch-org', { token: pair.access_token, body: { org_id: org.body.id } });
    expect((await me(switched.body.access_token)).body.org_id).toBe(org.body.id);
    // The refresh token stays the same across a switch; refreshing lands at home.
    const res = await refresh(pair.refresh_token);
    expect(res.status).toBe(200);
    const after = await me(res.body.access_token);
    expect(after.body.org_id).toBe(home);
    expect(after.body.home_org_id).toBe(home);
  });
});
