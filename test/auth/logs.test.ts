import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../controller/src/auth/tokens';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

describe('logs', () => {
  it('never contain a password, a refresh token or an access token', async () => {
    const secrets: string[] = [ADMIN.password];
    const user = await c.createOrgUser(['org_admin']);
    secrets.push(user.password, user.token);

    const wrong = 'wrong-password-that-must-not-be-logged';
    secrets.push(wrong);
    expect((await c.login(user.username, wrong)).status).toBe(401);

    const login = await c.login(user.username, user.password, { client_type: 'terminal' });
    secrets.push(login.body.access_token, login.body.refresh_token);
    const refreshed = await c.request('POST', '/api/auth/refresh', { body: { refresh_token: login.body.refresh_token } });
    expect(refreshed.status).toBe(200);
    secrets.push(refreshed.body.access_token, refreshed.body.refresh_token);

    const next = 'a brand new pass phrase for logs';
    secrets.push(next);
    const changed = await c.request('PUT', '/api/auth/password', {
      token: refreshed.body.access_token,
      body: { current_password: user.password, new_password: next },
    });
    expect(changed.status).toBe(200);
    const reset = 'an administrator reset pass phrase';
    secrets.push(reset);
    await c.request('PUT', `/api/admin/users/${user.userId}`, { token: refreshed.body.access_token, body: { password: reset } });
    const created = 'a created user pass phrase here';
    secrets.push(created);
    await c.request('POST', '/api/admin/users', { token: c.adminToken, body: { username: 'logged-user', password: created } });
    // A replay (past the two-tab grace), and a malformed body carrying a token, both fail without echoing it to the log.
    await c
      .db('refresh_tokens')
      .where({ token_hash: hashToken(login.body.refresh_token) })
      .update({ used_at: c.db.raw("now() - interval '1 minute'") });
    expect(
      (await c.request('POST', '/api/auth/refresh', { raw: `{"refresh_token": "${refreshed.body.refresh_token}"`, contentType: 'application/json' }))
        .status,
    ).toBe(400);
    expect((await c.request('POST', '/api/auth/refresh', { body: { refresh_token: login.body.refresh_token } })).status).toBe(401);
    await c.request('POST', '/api/auth/logout', { token: c.adminToken });

    const logs = c.logs();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toContain('/api/auth/refresh'); // the requests were logged, just not their secrets
    for (const secret of secrets) expect(logs).not.toContain(secret);
    // Not even the signature part of a token on its own.
    for (const token of [login.body.access_token, refreshed.body.access_token]) expect(logs).not.toContain(token.split('.')[2]);
  });
});
