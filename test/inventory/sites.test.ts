import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from './helpers';

let c: TestController;
let a: InventoryUser;
let b: InventoryUser;

beforeAll(async () => {
  c = await startTestController();
  a = await inventoryUser(c);
  b = await inventoryUser(c);
});
afterAll(async () => c?.close());

describe('sites', () => {
  it('creates, lists, reads and updates sites with parent nesting', async () => {
    const region = await a.as('POST', '/api/sites', { body: { name: 'EU', description: 'Europe', location: 'Frankfurt, DE' } });
    expect(region.status).toBe(201);
    expect(region.body).toMatchObject({
      name: 'EU',
      description: 'Europe',
      location: 'Frankfurt, DE',
      parent_site_id: null,
      device_count: 0,
      child_count: 0,
      org_id: a.orgId,
    });
    const dc = await a.as('POST', '/api/sites', { body: { name: 'FRA1', parent_site_id: region.body.id } });
    expect(dc.status).toBe(201);
    expect(dc.body).toMatchObject({ parent_site_id: region.body.id, description: '', location: '' });
    const list = await a.as('GET', '/api/sites');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.sites.map((s: { name: string }) => s.name)).toEqual(['EU', 'FRA1']);
    expect(list.body.sites[0].child_count).toBe(1);
    const one = await a.as('GET', `/api/sites/${dc.body.id}`);
    expect(one.body.name).toBe('FRA1');
    const put = await a.as('PUT', `/api/sites/${dc.body.id}`, { body: { location: 'Rack hall 3' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'FRA1', location: 'Rack hall 3', parent_site_id: region.body.id });
    const top = await a.as('PUT', `/api/sites/${dc.body.id}`, { body: { parent_site_id: null } });
    expect(top.body.parent_site_id).toBeNull();
  });

  it('refuses duplicate names with 409, bad bodies with 400', async () => {
    await a.site({ name: 'dup' });
    const res = await a.as('POST', '/api/sites', { body: { name: 'dup' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('SITE_NAME_TAKEN');
    const other = await a.site();
    expect((await a.as('PUT', `/api/sites/${other.id}`, { body: { name: 'dup' } })).status).toBe(409);
    for (const body of [{}, { name: '' }, { name: 'x', parent_site_id: 'nope' }, { name: 'x', region: 'eu' }, { name: 7 }]) {
      const bad = await a.as('POST', '/api/sites', { body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    expect((await a.as('GET', '/api/sites/not-a-uuid')).status).toBe(400);
  });

  it('refuses a parent from another organization and cycles with 400', async () => {
    const foreign = await b.site();
    const res = await a.as('POST', '/api/sites', { body: { name: 'child-of-foreign', parent_site_id: foreign.id } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('SITE_INVALID_PARENT');
    const root = await a.site();
    const mid = await a.site({ parent_site_id: root.id });
    const leaf = await a.site({ parent_site_id: mid.id });
    const cycle = await a.as('PUT', `/api/sites/${root.id}`, { body: { parent_site_id: leaf.id } });
    expect(cycle.status).toBe(400);
    expect(cycle.body.error).toContain('cycle');
    const self = await a.as('PUT', `/api/sites/${mid.id}`, { body: { parent_site_id: mid.id } });
    expect(self.status).toBe(400);
    const onForeign = await a.as('PUT', `/api/sites/${mid.id}`, { body: { parent_site_id: foreign.id } });
    expect(onForeign.status).toBe(400);
    expect((await a.as('PUT', `/api/sites/${leaf.id}`, { body: { parent_site_id: root.id } })).status).toBe(200);
  });

  it('refuses to delete a site with devices or child sites, saying how many', async () => {
    const profile = await a.profile();
    const parent = await a.site();
    const child = await a.site({ parent_site_id: parent.id });
    await a.device(profile.id, { site_id: parent.id });
    await a.device(profile.id, { site_id: parent.id });
    const res = await a.as('DELETE', `/api/sites/${parent.id}`);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('Site still has 2 devices and 1 child site; move or delete them first');
    expect(res.body).toMatchObject({ device_count: 2, child_count: 1 });
    expect((await a.as('GET', `/api/sites/${parent.id}`)).body).toMatchObject({ device_count: 2, child_count: 1 });
    expect((await a.as('DELETE', `/api/sites/${child.id}`)).status).toBe(204);
    const onlyDevices = await a.as('DELETE', `/api/sites/${parent.id}`);
    expect(onlyDevices.body.error).toBe('Site still has 2 devices; move or delete them first');
  });

  it('deletes an empty site with 204', async () => {
    const site = await a.site();
    expect((await a.as('DELETE', `/api/sites/${site.id}`)).status).toBe(204);
    expect((await a.as('GET', `/api/sites/${site.id}`)).status).toBe(404);
  });

  it('another organization gets 404 on every :id route and sees nothing in the list', async () => {
    const site = await a.site({ name: 'private-site' });
    expect((await b.as('GET', `/api/sites/${site.id}`)).status).toBe(404);
    expect((await b.as('PUT', `/api/sites/${site.id}`, { body: { name: 'mine' } })).status).toBe(404);
    expect((await b.as('DELETE', `/api/sites/${site.id}`)).status).toBe(404);
    const list = await b.as('GET', '/api/sites');
    expect(list.body.sites.map((s: { id: string }) => s.id)).not.toContain(site.id);
    expect((await a.as('GET', `/api/sites/${site.id}`)).body.name).toBe('private-site');
  });
});
