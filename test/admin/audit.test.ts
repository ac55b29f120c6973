import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
let org: Awaited<ReturnType<TestController['createOrgUser']>>;
let operatorId: string;
beforeAll(async () => {
  c = await startTestController();
  org = await c.createOrgUser(['org_admin']);
  // Known activity in the organization: the admin creates an operator, who logs in and out.
  const created = await c.request('POST', '/api/admin/users', {
    token: org.token,
    body: { username: 'audited-operator', password: 'a pass phrase for audit', roles: ['operator'] },
  });
  operatorId = created.body.id;
  const login = await c.login('audited-operator', 'a pass phrase for audit');
  await c.request('POST', '/api/auth/logout', { token: login.body.access_token });
});
afterAll(async () => c?.close());

const audit = (query = '', token = org.token) => c.request('GET', `/api/admin/audit${query}`, { token });

describe('GET /api/admin/audit', () => {
  it('lists the entries of the organization, newest first, with their fields', async () => {
    const res = await audit();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(res.body.entries.length);
    const kinds = res.body.entries.map((e: { kind: string }) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['admin.user_created', 'auth.login', 'auth.logout']));
    expect(kinds.indexOf('auth.logout')).toBeLessThan(kinds.indexOf('admin.user_created'));
    for (const entry of res.body.entries) {
      expect(entry.org_id).toBe(org.orgId);
      for (const field of ['id', 'user_id', 'username', 'kind', 'ip_address', 'details', 'created_at']) expect(entry).toHaveProperty(field);
    }
  });

  it('filters by kind and by user_id', async () => {
    const logout = await audit('?kind=auth.logout');
    expect(logout.body.entries.map((e: { kind: string }) => e.kind)).toEqual(['auth.logout']);
    const byUser = await audit(`?user_id=${operatorId}`);
    expect(byUser.body.entries.length).toBeGreaterThanOrEqual(2);
    expect(byUser.body.entries.every((e: { user_id: string }) => e.user_id === operatorId)).toBe(true);
    expect((await audit(`?user_id=${randomUUID()}`)).body.total).toBe(0);
    expect((await audit('?kind=no.such.kind')).body.entries).toEqual([]);
  });

  it('filters by time with since (inclusive) and until (exclusive)', async () => {
    const all = (await audit()).body.entries;
    const newest = all[0].created_at;
    const since = await audit(`?since=${encodeURIComponent(newest)}`);
    expect(since.body.entries.length).toBeGreaterThanOrEqual(1);
    expect(since.body.entries.every((e: { created_at: string }) => e.created_at >= newest)).toBe(true);
    const until = await audit(`?until=${encodeURIComponent(newest)}`);
    expect(until.body.entries.every((e: { created_at: string }) => e.created_at < newest)).toBe(true);
    expect(since.body.total + until.body.total).toBe(all.length);
    expect((await audit('?since=2999-01-01T00:00:00Z')).body.total).toBe(0);
    expect((await audit('?until=2000-01-01T00:00:00Z')).body.total).toBe(0);
  });

  it('pages with limit and offset, total counting every match', async () => {
    const all = (await audit()).body;
    const page = await audit('?limit=2&offset=1');
    expect(page.body.entries).toHaveLength(2);
    expect(page.body.total).toBe(all.total);
    expect(page.body.entries.map((e: { id: string }) => e.id)).toEqual(all.entries.slice(1, 3).map((e: { id: string }) => e.id));
  });

  it('answers 400 naming a bad filter', async () => {
    const badUser = await audit('?user_id=me');
    expect(badUser.status).toBe(400);
    expect(badUser.body.error).toBe('querystring.user_id must be a UUID');
    expect((await audit('?since=yesterday')).status).toBe(400);
    expect((await audit('?limit=5000')).status).toBe(400);
    expect((await audit('?offset=-1')).status).toBe(400);
  });

  it('shows every organization only to a platform administrator asking with all=true', async () => {
    const everywhere = await audit('?all=true&kind=admin.user_created', c.adminToken);
    expect(everywhere.body.entries.some((e: { org_id: string }) => e.org_id === org.orgId)).toBe(true);
    const orgAdminAll = await audit('?all=true');
    expect(orgAdminAll.body.entries.every((e: { org_id: string }) => e.org_id === org.orgId)).toBe(true);
  });

  it('needs audit.read', async () => {
    const operator = await c.login('audited-operator', 'a pass phrase for audit');
    expect((await audit('', operator.body.access_token)).status).toBe(403);
  });
});
