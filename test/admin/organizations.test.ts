import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

describe('/api/admin/organizations', () => {
  it('creates an organization (201) and lists it with the default one', async () => {
    const created = await c.request('POST', '/api/admin/organizations', { token: c.adminToken, body: { name: 'Branch offices' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Branch offices', is_default: false });
    for (const field of ['id', 'created_at', 'updated_at']) expect(created.body).toHaveProperty(field);

    const list = await c.request('GET', '/api/admin/organizations', { token: c.adminToken });
    expect(list.status).toBe(200);
    const names = list.body.organizations.map((o: { name: string }) => o.name);
    expect(names).toContain('Default');
    expect(names).toContain('Branch offices');
    expect(list.body.organizations.filter((o: { is_default: boolean }) => o.is_default)).toHaveLength(1);
  });

  it('records admin.org_created', async () => {
    const audit = await c.request('GET', '/api/admin/audit?kind=admin.org_created', { token: c.adminToken });
    expect(audit.body.entries.some((e: { details: { name: string } }) => e.details.name === 'Branch offices')).toBe(true);
  });

  it('answers 409 for a taken name', async () => {
    const res = await c.request('POST', '/api/admin/organizations', { token: c.adminToken, body: { name: 'Branch offices' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('ORG_NAME_TAKEN');
  });

  it('answers 400 for an empty name, a mistyped name or an unknown field', async () => {
    for (const body of [{ name: '' }, { name: 7 }, { name: 'Ok', region: 'eu' }, {}]) {
      const res = await c.request('POST', '/api/admin/organizations', { token: c.adminToken, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^body/);
    }
  });

  it('needs platform.admin: 403 for an organization administrator, 401 without a token', async () => {
    const orgAdmin = await c.createOrgUser(['org_admin']);
    expect((await c.request('GET', '/api/admin/organizations', { token: orgAdmin.token })).status).toBe(403);
    const post = await c.request('POST', '/api/admin/organizations', { token: orgAdmin.token, body: { name: 'Mine' } });
    expect(post.status).toBe(403);
    expect(post.body.error).toBe('Insufficient permissions');
    expect((await c.request('GET', '/api/admin/organizations')).status).toBe(401);
  });
});
