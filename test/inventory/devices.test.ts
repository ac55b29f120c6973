import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from './helpers';

let c: TestController;
let a: InventoryUser;
let b: InventoryUser;
let profileId: string;

const SUMMARY_KEYS = [
  'created_at',
  'device_type',
  'host',
  'id',
  'manufacturer',
  'model',
  'name',
  'org_id',
  'profile_id',
  'site',
  'source',
  'updated_at',
];

beforeAll(async () => {
  c = await startTestController();
  a = await inventoryUser(c);
  b = await inventoryUser(c);
  profileId = (await a.profile({ name: 'default' })).id;
});
afterAll(async () => c?.close());

describe('POST /api/devices', () => {
  it('creates a device with defaults and answers the full form', async () => {
    const site = await a.site({ name: 'fra1' });
    const res = await a.as('POST', '/api/devices', {
      body: {
        name: 'core-1',
        host: '10.0.0.1',
        device_type: 'vendor_xe',
        profile_id: profileId,
        manufacturer: 'Vendor',
        model: 'C9300',
        platform: 'xe',
        serial_number: 'SN1',
        asset_tag: 'A1',
        site: 'Frankfurt',
        site_id: site.id,
        tags: ['core', 'fra'],
        metadata: { rack: 'R1', u: 12 },
        poll_enabled: true,
        poll_interval_minutes: 15,
        description: 'core switch',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'core-1',
      host: '10.0.0.1',
      device_type: 'vendor_xe',
      profile_id: profileId,
      org_id: a.orgId,
      source: 'manual',
      protocol: 'ssh',
      manufacturer: 'Vendor',
      model: 'C9300',
      platform: 'xe',
      serial_number: 'SN1',
      asset_tag: 'A1',
      site: 'Frankfurt',
      site_id: site.id,
      tags: ['core', 'fra'],
      metadata: { rack: 'R1', u: 12 },
      poll_enabled: true,
      poll_interval_minutes: 15,
      description: 'core switch',
      netbox_source_id: null,
      netbox_id: null,
      netbox_last_synced_at: null,
      netbox_removed_at: null,
      created_by: a.userId,
      updated_by: a.userId,
    });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    const minimal = await a.as('POST', '/api/devices', {
      body: { name: 'edge-1', host: 'edge-1.example.net', device_type: 'generic', profile_id: profileId },
    });
    expect(minimal.status).toBe(201);
    expect(minimal.body).toMatchObject({
      protocol: 'ssh',
      poll_enabled: false,
      poll_interval_minutes: null,
      tags: [],
      metadata: {},
      site_id: null,
      site: '',
      manufacturer: '',
    });
  });

  it('accepts IPv4, IPv6 and hostnames; refuses anything else with 400', async () => {
    for (const host of ['2001:db8::1', 'fe80::1', 'sw-1.dc2.example.com', 'router1', 'core.example.com.']) {
      const res = await a.as('POST', '/api/devices', { body: { name: `h-${host}`, host, device_type: 'generic', profile_id: profileId } });
      expect(res.status, host).toBe(201);
    }
    for (const host of ['10.0.0.300', 'bad host', '-lead.example.com', 'a..b', 'x_y.example.com', 'http://10.0.0.1', 'a'.repeat(64) + '.com']) {
      const res = await a.as('POST', '/api/devices', { body: { name: `bad-${host}`, host, device_type: 'generic', profile_id: profileId } });
      expect(res.status, host).toBe(400);
      expect(res.body.code).toBe('INVALID_HOST');
    }
  });

  it("refuses an unknown device_type, another organization's profile or site, and source netbox", async () => {
    const base = { name: 'x1', host: '10.0.0.9', device_type: 'generic', profile_id: profileId };
    const type = await a.as('POST', '/api/devices', { body: { ...base, device_type: 'cisco_ios' } });
    expect(type.status).toBe(400);
    expect(type.body.error).toContain('vendor_ios');
    const foreignProfile = await b.profile();
    const profile = await a.as('POST', '/api/devices', { body: { ...base, profile_id: foreignProfile.id } });
    expect(profile.status).toBe(400);
    expect(profile.body.code).toBe('UNKNOWN_PROFILE');
    const foreignSite = await b.site();
    const site = await a.as('POST', '/api/devices', { body: { ...base, site_id: foreignSite.id } });
    expect(site.status).toBe(400);
    expect(site.body.code).toBe('UNKNOWN_SITE');
    expect((await a.as('POST', '/api/devices', { body: { ...base, source: 'netbox' } })).status).toBe(400);
    const custom = await a.as('POST', '/api/devices', { body: { ...base, name: 'from-ansible', source: 'ansible' } });
    expect(custom.body.source).toBe('ansible');
  });

  it('answers 409 "Device with this name already exists"', async () => {
    const res = await a.as('POST', '/api/devices', { body: { name: 'core-1', host: '10.0.0.2', device_type: 'vendor_ios', profile_id: profileId } });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('Device with this name already exists');
    expect(res.body.code).toBe('DEVICE_NAME_TAKEN');
  });

  it('answers 400 for missing fields, wrong types, unknown fields and malformed JSON', async () => {
    const cases: [unknown, string][] = [
      [{ host: '10.0.0.1', device_type: 'generic', profile_id: profileId }, 'name'],
      [{ name: 'n', host: '10.0.0.1', device_type: 'generic' }, 'profile_id'],
      [{ name: 'n', host: '10.0.0.1', device_type: 'generic', profile_id: 'nope' }, 'profile_id'],
      [{ name: 'n', host: 10, device_type: 'generic', profile_id: profileId }, 'host'],
      [{ name: 'n', host: '10.0.0.1', device_type: 'generic', profile_id: profileId, poll_enabled: 'yes' }, 'poll_enabled'],
      [{ name: 'n', host: '10.0.0.1', device_type: 'generic', profile_id: profileId, tags: 'core' }, 'tags'],
      [{ name: 'n', host: '10.0.0.1', device_type: 'generic', profile_id: profileId, vendor: 'x' }, 'vendor'],
      [[], 'body'],
    ];
    for (const [body, needle] of cases) {
      const res = await a.as('POST', '/api/devices', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toContain(needle);
    }
    const malformed = await a.as('POST', '/api/devices', { raw: '{"name": "x",', contentType: 'application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('INVALID_JSON');
  });
});

describe('GET /api/devices', () => {
  beforeAll(async () => {
    const rows = [
      { name: 'fra-sw-01', host: '10.1.0.1', device_type: 'vendor_eos', manufacturer: 'Arista', model: '7050', platform: 'eos', site: 'Frankfurt' },
      { name: 'fra-sw-02', host: '10.1.0.2', device_type: 'vendor_eos', manufacturer: 'ARISTA', model: '7280', platform: 'eos', site: 'frankfurt' },
      {
        name: 'ams-rt-01',
        host: 'ams-rt-01.example.net',
        device_type: 'vendor_junos',
        manufacturer: 'Juniper',
        model: 'MX204',
        platform: 'junos',
        site: 'Amsterdam',
      },
      {
        name: 'ams_fw_01',
        host: '10.2.0.9',
        device_type: 'vendor_fw',
        manufacturer: 'Firewalls',
        model: 'F100%',
        platform: 'fwos',
        site: 'Amsterdam',
        source: 'ansible',
      },
    ];
    for (const row of rows) await a.device(profileId, row);
  });

  const names = (res: { body: { devices: { name: string }[] } }) => res.body.devices.map((d) => d.name);

  it('answers the summary form, in name order, with total, limit and offset', async () => {
    const res = await a.as('GET', '/api/devices');
    expect(res.status).toBe(200);
    expect(res.body.limit).toBe(50);
    expect(res.body.offset).toBe(0);
    expect(res.body.total).toBe(res.body.devices.length);
    expect(Object.keys(res.body.devices[0]).sort()).toEqual(SUMMARY_KEYS);
    expect(names(res)).toEqual([...names(res)].sort());
  });

  it('filters by q over name, host, manufacturer, model, platform and device type (case-insensitive)', async () => {
    expect(names(await a.as('GET', '/api/devices?q=FRA-SW'))).toEqual(['fra-sw-01', 'fra-sw-02']);
    expect(names(await a.as('GET', '/api/devices?q=10.2.0'))).toEqual(['ams_fw_01']);
    expect(names(await a.as('GET', '/api/devices?q=juniper'))).toEqual(['ams-rt-01']);
    expect(names(await a.as('GET', '/api/devices?q=mx204'))).toEqual(['ams-rt-01']);
    expect(names(await a.as('GET', '/api/devices?q=fwos'))).toEqual(['ams_fw_01']);
    expect(names(await a.as('GET', '/api/devices?q=vendor_junos'))).toEqual(['ams-rt-01']);
    // LIKE wildcards in q are literal characters.
    expect(names(await a.as('GET', '/api/devices?q=F100%25'))).toEqual(['ams_fw_01']);
    expect(names(await a.as('GET', '/api/devices?q=ams_'))).toEqual(['ams_fw_01']);
    expect((await a.as('GET', '/api/devices?q=nothing-matches')).body).toMatchObject({ devices: [], total: 0 });
  });

  it('filters by vendor (case-insensitive exact), platform, device_type, site, site_id and source', async () => {
    expect(names(await a.as('GET', '/api/devices?vendor=arista'))).toEqual(['fra-sw-01', 'fra-sw-02']);
    expect(names(await a.as('GET', '/api/devices?vendor=aris'))).toEqual([]);
    expect(names(await a.as('GET', '/api/devices?platform=junos'))).toEqual(['ams-rt-01']);
    expect(names(await a.as('GET', '/api/devices?device_type=vendor_fw'))).toEqual(['ams_fw_01']);
    expect(names(await a.as('GET', '/api/devices?site=FRANKFURT'))).toEqual(['core-1', 'fra-sw-01', 'fra-sw-02']);
    expect(names(await a.as('GET', '/api/devices?source=ansible'))).toEqual(['ams_fw_01', 'from-ansible']);
    expect(names(await a.as('GET', '/api/devices?site=Amsterdam&device_type=vendor_junos'))).toEqual(['ams-rt-01']);
    const site = await a.site({ name: 'ams1' });
    const placed = await a.device(profileId, { name: 'ams-placed', site_id: site.id });
    expect(names(await a.as('GET', `/api/devices?site_id=${site.id}`))).toEqual([placed.name]);
  });

  it('pages with limit (default 50, maximum 100) and offset, echoing the limit used', async () => {
    const page = await a.as('GET', '/api/devices?limit=2&offset=1');
    const all = await a.as('GET', '/api/devices');
    expect(page.body).toMatchObject({ limit: 2, offset: 1, total: all.body.total });
    expect(names(page)).toEqual(names(all).slice(1, 3));
    for (const query of ['limit=101', 'limit=0', 'offset=-1', 'limit=abc', 'site_id=nope']) {
      const res = await a.as('GET', `/api/devices?${query}`);
      expect(res.status, query).toBe(400);
    }
    expect((await a.as('GET', '/api/devices?limit=100')).body.limit).toBe(100);
  });
});

describe('GET, PUT and DELETE /api/devices/:id', () => {
  it('PUT changes only the fields sent and records who changed it', async () => {
    const d = await a.device(profileId, { name: 'put-me', manufacturer: 'Vendor', tags: ['x'], metadata: { a: 1 }, poll_interval_minutes: 5 });
    const other = await a.profile({ name: 'other' });
    const res = await a.as('PUT', `/api/devices/${d.id}`, {
      body: { host: '10.9.9.9', profile_id: other.id, tags: ['y', 'z'], poll_interval_minutes: null },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'put-me',
      host: '10.9.9.9',
      manufacturer: 'Vendor',
      profile_id: other.id,
      tags: ['y', 'z'],
      metadata: { a: 1 },
      poll_interval_minutes: null,
      updated_by: a.userId,
    });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(d.updated_at as string).getTime());
    const empty = await a.as('PUT', `/api/devices/${d.id}`, { body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.host).toBe('10.9.9.9');
  });

  it('PUT refuses source, a taken name, a bad host and foreign references', async () => {
    const d = await a.device(profileId, { name: 'put-rules' });
    const source = await a.as('PUT', `/api/devices/${d.id}`, { body: { source: 'csv' } });
    expect(source.status).toBe(400);
    expect(source.body.error).toContain('source');
    const taken = await a.as('PUT', `/api/devices/${d.id}`, { body: { name: 'core-1' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('Device with this name already exists');
    expect((await a.as('PUT', `/api/devices/${d.id}`, { body: { host: 'not a host' } })).status).toBe(400);
    expect((await a.as('PUT', `/api/devices/${d.id}`, { body: { device_type: 'router' } })).status).toBe(400);
    expect((await a.as('PUT', `/api/devices/${d.id}`, { body: { site_id: (await b.site()).id } })).status).toBe(400);
    expect((await a.as('PUT', `/api/devices/${d.id}`, { body: { name: 'put-rules' } })).status).toBe(200);
  });

  it('GET answers 404 for an unknown id and 400 for a bad UUID', async () => {
    const res = await a.as('GET', '/api/devices/00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('DEVICE_NOT_FOUND');
    const bad = await a.as('GET', '/api/devices/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('UUID');
  });

  it('DELETE answers 204, then 404', async () => {
    const total = async () => (await a.as('GET', '/api/devices?limit=1')).body.total;
    const before = await total();
    const d = await a.device(profileId);
    expect(await total()).toBe(before + 1);
    expect((await a.as('DELETE', `/api/devices/${d.id}`)).status).toBe(204);
    expect((await a.as('GET', `/api/devices/${d.id}`)).status).toBe(404);
    expect((await a.as('DELETE', `/api/devices/${d.id}`)).status).toBe(404);
    expect(await total()).toBe(before);
  });

  it('another organization gets 404 on every :id route and sees nothing in lists', async () => {
    const d = await a.device(profileId, { name: 'private-device' });
    expect((await b.as('GET', `/api/devices/${d.id}`)).status).toBe(404);
    expect((await b.as('PUT', `/api/devices/${d.id}`, { body: { description: 'mine now' } })).status).toBe(404);
    const del = await b.as('DELETE', `/api/devices/${d.id}`);
    expect(del.status).toBe(404);
    expect(del.body.error).toBe('Device not found');
    const list = await b.as('GET', '/api/devices?q=private');
    expect(list.body).toMatchObject({ devices: [], total: 0 });
    expect((await b.as('GET', '/api/devices')).body.devices.every((x: { org_id: string }) => x.org_id === b.orgId)).toBe(true);
    expect((await a.as('GET', `/api/devices/${d.id}`)).body.description).toBe('');
  });

  it('PUT with an empty body changes nothing, not even updated_at', async () => {
    const d = await a.device(profileId);
    const res = await a.as('PUT', `/api/devices/${d.id}`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body.updated_at).toBe(d.updated_at);
  });

  it('every inventory route is in the API explorer document', async () => {
    const doc = await c.request('GET', '/api/docs/json');
    expect(doc.status).toBe(200);
    for (const path of [
      '/api/devices',
      '/api/devices/{id}',
      '/api/devices/import/csv',
      '/api/devices/import/json',
      '/api/devices/bulk',
      '/api/profiles',
      '/api/profiles/assign',
      '/api/sites/{id}',
      '/api/devices/sources/netbox/{source_id}/sync',
      '/api/devices/sync/history',
    ]) {
      expect(doc.body.paths, path).toHaveProperty([path]);
    }
    expect(Object.keys(doc.body.paths['/api/devices/import/csv'].post.requestBody.content)).toContain('text/csv');
  });

  it('needs a token and devices.access', async () => {
    expect((await c.request('GET', '/api/devices')).status).toBe(401);
    const auditor = await c.createOrgUser(['auditor']);
    expect((await c.request('GET', '/api/devices', { token: auditor.token })).status).toBe(403);
  });
});

describe('PATCH /api/devices/bulk', () => {
  it('sets whitelisted fields on the caller’s devices only', async () => {
    const d1 = await a.device(profileId);
    const d2 = await a.device(profileId);
    const foreign = await b.device((await b.profile()).id, { description: 'untouched' });
    const site = await a.site();
    const other = await a.profile();
    const fields = {
      profile_id: other.id,
      site_id: site.id,
      site: 'Berlin',
      device_type: 'vendor_nxos',
      manufacturer: 'V',
      model: 'N9K',
      platform: 'nxos',
      description: 'bulk',
      tags: ['dc'],
      poll_enabled: true,
      poll_interval_minutes: 30,
    };
    const res = await a.as('PATCH', '/api/devices/bulk', { body: { ids: [d1.id, d2.id, foreign.id], fields } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 2 });
    for (const d of [d1, d2]) expect((await a.as('GET', `/api/devices/${d.id}`)).body).toMatchObject(fields);
    expect((await b.as('GET', `/api/devices/${foreign.id}`)).body.description).toBe('untouched');
    const cleared = await a.as('PATCH', '/api/devices/bulk', { body: { ids: [d1.id], fields: { site_id: null, poll_interval_minutes: null } } });
    expect(cleared.body.updated).toBe(1);
    expect((await a.as('GET', `/api/devices/${d1.id}`)).body).toMatchObject({ site_id: null, poll_interval_minutes: null, site: 'Berlin' });
  });

  it('answers 400 on empty ids, empty fields, an unknown or non-whitelisted field, and bad values', async () => {
    const d = await a.device(profileId);
    const empty = await a.as('PATCH', '/api/devices/bulk', { body: { ids: [], fields: { description: 'x' } } });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('BULK_EMPTY_IDS');
    const none = await a.as('PATCH', '/api/devices/bulk', { body: { ids: [d.id], fields: {} } });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('BULK_EMPTY_FIELDS');
    for (const field of ['name', 'host', 'source', 'colour']) {
      const res = await a.as('PATCH', '/api/devices/bulk', { body: { ids: [d.id], fields: { [field]: 'x' } } });
      expect(res.status, field).toBe(400);
      expect(res.body.error).toContain(`'${field}'`);
    }
    expect((await a.as('PATCH', '/api/devices/bulk', { body: { ids: ['nope'], fields: { site: 'x' } } })).status).toBe(400);
    expect((await a.as('PATCH', '/api/devices/bulk', { body: { ids: [d.id], fields: { device_type: 'bogus' } } })).status).toBe(400);
    expect((await a.as('PATCH', '/api/devices/bulk', { body: { ids: [d.id], fields: { profile_id: (await b.profile()).id } } })).status).toBe(400);
    expect((await a.as('PATCH', '/api/devices/bulk', { body: { ids: [d.id] } })).status).toBe(400);
  });
});
