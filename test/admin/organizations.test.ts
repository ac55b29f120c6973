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

  it('refuses a name of only spaces with 400 INVALID_ORG_NAME, and stores a padded name trimmed', async () => {
    for (const name of [' ', '   ', '\t \n']) {
      const res = await c.request('POST', '/api/admin/organizations', { token: c.adminToken, body: { name } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('INVALID_ORG_NAME');
      expect(res.body.error).toMatch(/visible characters/);
    }
    const padded = await c.request('POST', '/api/admin/organizations', { token: c.adminToken, body: { name: '  Padded  ' } });
    expect(padded.status).toBe(201);
    expect(padded.body.name).toBe('Padded');
    const list = await c.request('GET', '/api/admin/organizations', { token: c.adminToken });
    expect(list.body.organizations.some((o: { name: string }) => o.name.trim() === '')).toBe(false);
  });

  it('renames an organization (PUT /organizations/:id): trimmed, 400 for only spaces, 409 for a taken name, 404 for an unknown id', async () => {
    const org = (await c.request('POST', '/api/admin/organizations', { token: c.adminToken, body: { name: 'To rename' } })).body;
    const put = (id: string, name: unknown) => c.request('PUT', `/api/admin/organizations/${id}`, { token: c.adminToken, body: { name } });
    const renamed = await put(org.id, '  Renamed  ');
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: org.id, name: 'Renamed' });

    const blank = await put(org.id, '    ');
    expect(blank.status).toBe(400);
    expect(blank.body.code).toBe('INVALID_ORG_NAME');
    expect((await c.db('organizations').where({ id: org.id }).first('name')).name).toBe('Renamed');

    const taken = await put(org.id, 'Branch offices');
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('ORG_NAME_TAKEN');
    const unknown = await put('00000000-0000-4000-8000-000000000000', 'Nobody');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('ORG_NOT_FOUND');

    const orgAdmin = await c.createOrgUser(['org_admin']);
    expect((await c.request('PUT', `/api/admin/organizations/${org.id}`, { token: orgAdmin.token, body: { name: 'Mine' } })).status).toBe(403);
    const audit = await c.request('GET', '/api/admin/audit?kind=admin.org_renamed', { token: c.adminToken });
    expect(audit.body.entries.some((e: { details: { org_id: string } }) => e.details.org_id === org.id)).toBe(true);
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
