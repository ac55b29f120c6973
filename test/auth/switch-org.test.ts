import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

const switchOrg = (token: string, org_id: unknown) => c.request('POST', '/api/auth/switch-org', { token, body: { org_id } });

describe('POST /api/auth/switch-org', () => {
  it('gives a platform administrator a token scoped to another organization', async () => {
    const other = await c.createOrgUser(['org_admin']);
    const home = (await c.request('GET', '/api/auth/me', { token: c.adminToken })).body.home_org_id;
    const res = await switchOrg(c.adminToken, other.orgId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 86400, active_org_id: other.orgId });
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'active_org_id', 'expires_in', 'token_type']);

    const me = await c.request('GET', '/api/auth/me', { token: res.body.access_token });
    expect(me.body).toMatchObject({ org_id: other.orgId, home_org_id: home, is_platform_admin: true });

    // The new token works inside the other organization: its users, not the home ones.
    const users = await c.request('GET', '/api/admin/users', { token: res.body.access_token });
    expect(users.status).toBe(200);
    expect(users.body.users.map((u: { id: string }) => u.id)).toEqual([other.userId]);

    // Switching back with the home org_id.
    const back = await switchOrg(res.body.access_token, home);
    expect(back.status).toBe(200);
    expect((await c.request('GET', '/api/auth/me', { token: back.body.access_token })).body.org_id).toBe(home);
  });

  it('records auth.org_switched in the organization entered', async () => {
    const other = await c.createOrgUser(['org_admin']);
    await switchOrg(c.adminToken, other.orgId);
    const audit = await c.request('GET', '/api/admin/audit?kind=auth.org_switched', { token: other.token });
    expect(audit.status).toBe(200);
    expect(audit.body.entries.length).toBeGreaterThanOrEqual(1);
    expect(audit.body.entries[0]).toMatchObject({ kind: 'auth.org_switched', username: 'admin', org_id: other.orgId });
    expect(audit.body.entries[0].details.to_org_id).toBe(other.orgId);
  });

  it('answers 403 Insufficient permissions for anyone without platform.admin', async () => {
    const orgAdmin = await c.createOrgUser(['org_admin']);
    const other = await c.createOrgUser(['org_admin']);
    const res = await switchOrg(orgAdmin.token, other.orgId);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('Insufficient permissions');
  });

  it('answers 404 for an unknown organization and 400 for a bad org_id', async () => {
    const unknown = await switchOrg(c.adminToken, randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('Organization not found');
    const bad = await switchOrg(c.adminToken, 'org-one');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('body.org_id must be a UUID');
    const missing = await c.request('POST', '/api/auth/switch-org', { token: c.adminToken, body: {} });
    expect(missing.status).toBe(400);
  });

  it('needs a token', async () => {
    const res = await c.request('POST', '/api/auth/switch-org', { body: { org_id: randomUUID() } });
    expect(res.status).toBe(401);
  });

  it('stops working in the other organization once the admin loses platform_admin', async () => {
    const other = await c.createOrgUser(['org_admin']);
    const second = await c.request('POST', '/api/admin/users', {
      token: c.adminToken,
      body: { username: 'second-admin', password: 'second admin pass phrase', roles: ['platform_admin'] },
    });
    expect(second.status).toBe(201);
    const login = await c.login('second-admin', 'second admin pass phrase');
    const switched = await switchOrg(login.body.access_token, other.orgId);
    expect(switched.status).toBe(200);
    await c.request('PUT', `/api/admin/users/${second.body.id}/roles`, { token: c.adminToken, body: { roles: ['org_admin'] } });
    const res = await c.request('GET', '/api/auth/me', { token: switched.body.access_token });
    expect(res.status).toBe(401);
  });
});
