import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

type OrgUser = Awaited<ReturnType<TestController['createOrgUser']>>;

let c: TestController;
let a: OrgUser;
let b: OrgUser;
let aOperatorId: string;
beforeAll(async () => {
  c = await startTestController();
  a = await c.createOrgUser(['org_admin']);
  b = await c.createOrgUser(['org_admin']);
  const created = await c.request('POST', '/api/admin/users', {
    token: a.token,
    body: { username: 'a-operator', password: 'org a operator phrase', roles: ['operator'] },
  });
  aOperatorId = created.body.id;
  await c.request('PUT', '/api/admin/settings', { token: a.token, body: { settings: { 'discovery.default_poll_interval_minutes': 9 } } });
});
afterAll(async () => c?.close());

describe('another organization sees nothing of the first', () => {
  it('lists only its own users', async () => {
    const res = await c.request('GET', '/api/admin/users', { token: b.token });
    const ids = res.body.users.map((u: { id: string }) => u.id);
    expect(ids).toEqual([b.userId]);
    expect(res.body.total).toBe(1);
  });

  it('gets 404 on every :id route for a user of the first', async () => {
    for (const id of [a.userId, aOperatorId]) {
      const get = await c.request('GET', `/api/admin/users/${id}`, { token: b.token });
      expect(get.status).toBe(404);
      expect(get.body.error).toBe('User not found');
      expect((await c.request('PUT', `/api/admin/users/${id}`, { token: b.token, body: { is_active: false } })).status).toBe(404);
      expect((await c.request('PUT', `/api/admin/users/${id}/roles`, { token: b.token, body: { roles: ['operator'] } })).status).toBe(404);
    }
    // Nothing changed for the first organization.
    const check = await c.request('GET', `/api/admin/users/${aOperatorId}`, { token: a.token });
    expect(check.body).toMatchObject({ is_active: true, roles: ['operator'] });
  });

  it('reads none of its audit entries, also by user_id', async () => {
    const res = await c.request('GET', '/api/admin/audit?limit=1000', { token: b.token });
    expect(res.body.entries.length).toBeGreaterThan(0);
    expect(res.body.entries.every((e: { org_id: string }) => e.org_id === b.orgId)).toBe(true);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(a.orgId);
    expect(text).not.toContain(aOperatorId);
    expect(text).not.toContain('a-operator');
    const byUser = await c.request('GET', `/api/admin/audit?user_id=${a.userId}`, { token: b.token });
    expect(byUser.body.total).toBe(0);
  });

  it('keeps its organization settings apart', async () => {
    const res = await c.request('GET', '/api/admin/settings', { token: b.token });
    expect(res.body.settings['discovery.default_poll_interval_minutes']).not.toBe(9);
  });

  it("cannot revoke the first organization's sessions", async () => {
    const sessions = await c.request('GET', '/api/auth/sessions', { token: a.token });
    const res = await c.request('DELETE', `/api/auth/sessions/${sessions.body.sessions[0].id}`, { token: b.token });
    expect(res.status).toBe(404);
    expect((await c.request('GET', '/api/auth/me', { token: a.token })).status).toBe(200);
  });

  it('cannot see the organization list or switch organization', async () => {
    expect((await c.request('GET', '/api/admin/organizations', { token: b.token })).status).toBe(403);
    expect((await c.request('POST', '/api/auth/switch-org', { token: b.token, body: { org_id: a.orgId } })).status).toBe(403);
  });
});
