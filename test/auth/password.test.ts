import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

const changePassword = (token: string, current_password: string, new_password: string) =>
  c.request('PUT', '/api/auth/password', { token, body: { current_password, new_password } });

describe('PUT /api/auth/password', () => {
  it('changes the password, keeps the current session and revokes the others', async () => {
    const user = await c.createOrgUser(['operator']);
    const current = (await c.login(user.username, user.password)).body;
    const next = 'a sturdy new pass phrase 42';
    const res = await changePassword(current.access_token, user.password, next);
    expect(res.status).toBe(200);
    expect(res.body.message).toBeTruthy();
    expect((await c.request('GET', '/api/auth/me', { token: current.access_token })).status).toBe(200);
    expect((await c.request('GET', '/api/auth/me', { token: user.token })).status).toBe(401);
    expect((await c.login(user.username, user.password)).status).toBe(401);
    expect((await c.login(user.username, next)).status).toBe(200);
  });

  it('refuses a password shorter than 12 characters with 400 and a clear message', async () => {
    const user = await c.createOrgUser(['operator']);
    const res = await changePassword(user.token, user.password, 'Sh0rt!pass');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('WEAK_PASSWORD');
    expect(res.body.error).toBe('New password must be at least 12 characters long');
    expect((await c.login(user.username, user.password)).status).toBe(200);
  });

  it('refuses a common password, also one padded with digits, with 400 and a clear message', async () => {
    const user = await c.createOrgUser(['operator']);
    for (const common of ['qwerty123456', 'leavemealone', 'password1234', 'Password1234!']) {
      const res = await changePassword(user.token, user.password, common);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('WEAK_PASSWORD');
      expect(res.body.error).toMatch(/too common/);
    }
  });

  it('refuses the username as the password', async () => {
    const user = await c.createOrgUser(['operator']);
    await c.db('users').where({ id: user.userId }).update({ username: 'long-enough-username' });
    const res = await changePassword(user.token, user.password, 'long-enough-username');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/username/);
  });

  it('answers 400 for a wrong current password and changes nothing', async () => {
    const user = await c.createOrgUser(['operator']);
    const res = await changePassword(user.token, 'not-my-password', 'a sturdy new pass phrase 42');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('CURRENT_PASSWORD_INCORRECT');
    expect(res.body.error).toBe('Current password is incorrect');
    expect((await c.login(user.username, user.password)).status).toBe(200);
  });

  it('answers 400 for an account that is not local', async () => {
    const user = await c.createOrgUser(['operator']);
    await c.db('users').where({ id: user.userId }).update({ auth_provider: 'ldap' });
    const res = await changePassword(user.token, user.password, 'a sturdy new pass phrase 42');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('NOT_LOCAL_ACCOUNT');
  });

  it('answers 400 naming a missing or mistyped field, and 401 without a token', async () => {
    const user = await c.createOrgUser(['operator']);
    const missing = await c.request('PUT', '/api/auth/password', { token: user.token, body: { current_password: user.password } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("body must have required property 'new_password'");
    const mistyped = await c.request('PUT', '/api/auth/password', {
      token: user.token,
      body: { current_password: user.password, new_password: 123456789012345 },
    });
    expect(mistyped.status).toBe(400);
    expect(mistyped.body.error).toBe('body.new_password must be string');
    const anonymous = await c.request('PUT', '/api/auth/password', { body: { current_password: 'a', new_password: 'b' } });
    expect(anonymous.status).toBe(401);
  });

  it('records auth.password_changed', async () => {
    const user = await c.createOrgUser(['org_admin']);
    await changePassword(user.token, user.password, 'a sturdy new pass phrase 42');
    const audit = await c.request('GET', '/api/admin/audit?kind=auth.password_changed', { token: user.token });
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0].user_id).toBe(user.userId);
    expect(JSON.stringify(audit.body)).not.toContain('sturdy');
  });
});
