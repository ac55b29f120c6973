import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

describe('POST /api/auth/login', () => {
  it('returns a token pair for a local account', async () => {
    const res = await c.login(ADMIN.username, ADMIN.password);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(res.body.refresh_token).toHaveLength(64);
    expect(res.body.access_token.split('.')).toHaveLength(3);
    expect(res.body).not.toHaveProperty('ssh_certificate');
  });

  it('answers 401 Invalid credentials for a wrong password, naming attempts left', async () => {
    const res = await c.login(ADMIN.username, 'wrong-password');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/^Invalid credentials/);
    expect(res.body.code).toBe('INVALID_CREDENTIALS');
    expect(typeof res.body.attempts_remaining).toBe('number');
  });

  it('answers 400 naming a missing field', async () => {
    const res = await c.request('POST', '/api/auth/login', { body: { username: 'admin' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("password");
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
    expect(res.body).toMatchObject({ username: 'admin', is_platform_admin: true, is_active: true, auth_provider: 'local', roles: ['platform_admin'] });
    expect(res.body.permissions).toContain('platform.admin');
    expect(res.body.org_id).toBe(res.body.home_org_id);
    expect(res.body).not.toHaveProperty('password_hash');
  });

  it('answers 401 Authentication required without a token', async () => {
    const res = await c.request('GET', '/api/auth/me');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('Authentication required');
  });

  it('answers 401 Invalid or expired token for a bad token', async () => {
    const res = await c.request('GET', '/api/auth/me', { token: 'not.a.jwt' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('Invalid or expired token');
  });
});
