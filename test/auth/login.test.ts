import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../controller/src/auth/passwords';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  // Several tests here fail a login on purpose; the lockout itself is tested in lockout.test.ts.
  c = await startTestController({ settings: { 'security.rate_limit.failed_login_limit': 20 } });
});
afterAll(async () => c?.close());

describe('POST /api/auth/login', () => {
  it('returns a token pair for a local account (admin_ui by default)', async () => {
    const res = await c.login(ADMIN.username, ADMIN.password);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(res.body.refresh_token).toHaveLength(64);
    expect(res.body.access_token.split('.')).toHaveLength(3);
    expect(res.body).not.toHaveProperty('ssh_certificate');
    const sessions = await c.request('GET', '/api/auth/sessions', { token: res.body.access_token });
    expect(sessions.body.sessions.find((s: { current: boolean }) => s.current).client_type).toBe('admin_ui');
  });

  it('accepts client_type terminal and admin_ui explicitly', async () => {
    for (const client_type of ['terminal', 'admin_ui']) {
      const res = await c.request('POST', '/api/auth/login', { body: { username: ADMIN.username, password: ADMIN.password, client_type } });
      expect(res.status).toBe(200);
      const sessions = await c.request('GET', '/api/auth/sessions', { token: res.body.access_token });
      expect(sessions.body.sessions.find((s: { current: boolean }) => s.current).client_type).toBe(client_type);
    }
  });

  it('matches the username case-insensitively', async () => {
    const res = await c.login(ADMIN.username.toUpperCase(), ADMIN.password);
    expect(res.status).toBe(200);
  });

  it('answers 401 Invalid credentials for a wrong password, naming attempts left', async () => {
    const res = await c.login(ADMIN.username, 'wrong-password');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/^Invalid credentials/);
    expect(res.body.code).toBe('INVALID_CREDENTIALS');
    expect(typeof res.body.attempts_remaining).toBe('number');
    expect(res.body.error).toContain(`${res.body.attempts_remaining} attempt`);
  });

  it('answers the same 401 for an unknown user', async () => {
    const res = await c.login('nobody-by-this-name', 'whatever-password');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/^Invalid credentials/);
  });

  it('refuses an LDAP account on /login even with its stored password', async () => {
    const [org] = await c.db('organizations').where({ is_default: true }).select('id');
    await c.db('users').insert({
      home_org_id: org.id,
      username: 'ldap-person',
      auth_provider: 'ldap',
      password_hash: await hashPassword('ldap-person-password'),
      roles: [],
    });
    const res = await c.login('ldap-person', 'ldap-person-password');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/^Invalid credentials/);
  });

  it('refuses a disabled account', async () => {
    const user = await c.createOrgUser(['operator']);
    const admin = await c.request('POST', '/api/auth/switch-org', { token: c.adminToken, body: { org_id: user.orgId } });
    const disabled = await c.request('PUT', `/api/admin/users/${user.userId}`, { token: admin.body.access_token, body: { is_active: false } });
    expect(disabled.status).toBe(200);
    const res = await c.login(user.username, user.password);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/^Invalid credentials/);
  });

  it('records login success and failure in the audit log', async () => {
    const audit = await c.request('GET', '/api/admin/audit?all=true&limit=1000', { token: c.adminToken });
    const kinds = audit.body.entries.map((e: { kind: string }) => e.kind);
    expect(kinds).toContain('auth.login');
    expect(kinds).toContain('auth.login_failed');
    expect(JSON.stringify(audit.body)).not.toContain('wrong-password');
  });

  it('answers 400 naming a missing field', async () => {
    const res = await c.request('POST', '/api/auth/login', { body: { username: 'admin' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('password');
  });

  it('answers 400 for an unknown client_type, a mistyped field or an unknown field', async () => {
    const bad = [
      { username: 'admin', password: 'x', client_type: 'browser' },
      { username: 'admin', password: 12345 },
      { username: 'admin', password: 'x', remember_me: true },
    ];
    const answers = await Promise.all(bad.map((body) => c.request('POST', '/api/auth/login', { body })));
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400]);
    expect(answers[0].body.error).toContain('client_type');
    expect(answers[1].body.error).toBe('body.password must be string');
    expect(answers[2].body.error).toBe("body has unknown property 'remember_me'");
  });

  it('answers 400 for malformed JSON, never 500', async () => {
    const res = await c.request('POST', '/api/auth/login', { raw: '{"username":', contentType: 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_JSON');
  });
});

describe('GET /api/auth/me', () => {
  it('returns the current user with permissions computed from roles', async () => {
    const res = await c.request('GET', '/api/auth/me', { token: c.adminToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      username: 'admin',
      is_platform_admin: true,
      is_active: true,
      auth_provider: 'local',
      roles: ['platform_admin'],
    });
    expect(res.body.permissions).toContain('platform.admin');
    expect(res.body.org_id).toBe(res.body.home_org_id);
    for (const field of ['id', 'email', 'display_name', 'created_at', 'updated_at']) expect(res.body).toHaveProperty(field);
    expect(res.body).not.toHaveProperty('password_hash');
  });

  it('computes permissions from the roles of an ordinary user', async () => {
    const operator = await c.createOrgUser(['operator']);
    const res = await c.request('GET', '/api/auth/me', { token: operator.token });
    expect(res.body).toMatchObject({
      roles: ['operator'],
      permissions: ['devices.access', 'ssh.certificate'],
      is_platform_admin: false,
      org_id: operator.orgId,
      home_org_id: operator.orgId,
    });
  });

  it('answers 401 Authentication required without a token', async () => {
    const res = await c.request('GET', '/api/auth/me');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('Authentication required');
  });

  it('answers 401 Invalid or expired token for a bad, tampered or expired token', async () => {
    const [, payload] = c.adminToken.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = c.adminToken.replace(
      payload,
      Buffer.from(JSON.stringify({ ...claims, org: '00000000-0000-4000-8000-000000000000' })).toString('base64url'),
    );
    const expired = await c.services.signer.sign({ sub: claims.sub, sid: claims.sid, org: claims.org }, -10);
    for (const token of ['not.a.jwt', tampered, expired]) {
      const res = await c.request('GET', '/api/auth/me', { token });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('Invalid or expired token');
    }
    const notBearer = await c.request('GET', '/api/auth/me', { headers: { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` } });
    expect(notBearer.status).toBe(401);
    expect(notBearer.body.error).toBe('Invalid or expired token');
  });
});

describe('GET /api/auth/providers', () => {
  it('lists the sign-in providers with local enabled, without a token', async () => {
    const res = await c.request('GET', '/api/auth/providers');
    expect(res.status).toBe(200);
    expect(res.body.providers).toContainEqual({ name: 'local', enabled: true });
    for (const provider of res.body.providers) expect(Object.keys(provider).sort()).toEqual(['enabled', 'name']);
  });
});
