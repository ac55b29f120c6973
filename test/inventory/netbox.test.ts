import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueServerCertificate, loadOrCreateCa } from '../../controller/src/tls/ca';
import { startTestController, type TestController } from '../helpers/controller';
import { type NetboxSim, type SimDevice, startNetboxSim } from '../sim/netbox/server';
import { inventoryUser, type InventoryUser } from './helpers';

const TOKEN = '0123456789abcdef-netbox-token-never-shown';

let c: TestController;
let a: InventoryUser;
let b: InventoryUser;
let sim: NetboxSim;
let profileId: string;
const responses: string[] = [];

function simDevices(count: number, start = 1): SimDevice[] {
  return Array.from({ length: count }, (_, i) => {
    const id = start + i;
    return {
      id,
      name: `nb-sw-${String(id).padStart(3, '0')}`,
      manufacturer: 'Arista',
      model: 'DCS-7050SX3-48YC8',
      platform: 'EOS',
      site: id % 2 ? 'Frankfurt 1' : 'Amsterdam 1',
      ip4: `10.20.${id >> 8}.${id & 255}/24`,
      serial: `SN${id}`,
      asset_tag: id % 3 ? `AT${id}` : null,
      tags: ['managed', `rack-${id % 4}`],
      status: 'active',
    };
  });
}

async function call(user: InventoryUser, method: string, path: string, body?: unknown) {
  const res = await user.as(method, path, body === undefined ? {} : { body });
  responses.push(res.text);
  return res;
}

async function createSource(user: InventoryUser, body: Record<string, unknown> = {}) {
  const res = await call(user, 'POST', '/api/devices/sources/netbox', {
    name: `nb-${Math.random().toString(36).slice(2, 8)}`,
    url: sim.url,
    token: TOKEN,
    ...body,
  });
  if (res.status !== 201) throw new Error(`source create failed: ${res.text}`);
  return res.body as { id: string } & Record<string, unknown>;
}

const sync = (user: InventoryUser, id: string) => call(user, 'POST', `/api/devices/sources/netbox/${id}/sync`);

beforeAll(async () => {
  // The simulator listens on loopback, which NetBox sources reach only when the allow-list says so.
  c = await startTestController({ settings: { 'netbox.allowed_hosts': ['127.0.0.1'] } });
  // Organization administrators: setting a source's url needs settings.manage.
  a = await inventoryUser(c, ['org_admin']);
  b = await inventoryUser(c, ['org_admin']);
  profileId = (await a.profile({ name: 'netbox-devices' })).id;
  sim = await startNetboxSim({ token: TOKEN, devices: simDevices(120), maxPageSize: 50 });
});
afterAll(async () => {
  await sim?.close();
  await c?.close();
});

describe('NetBox sources', () => {
  it('creates a source with defaults; the token is sealed and never returned', async () => {
    const res = await call(a, 'POST', '/api/devices/sources/netbox', {
      name: 'main',
      url: `${sim.url}/api/`,
      token: TOKEN,
      device_filters: { status: 'active' },
      profile_id: profileId,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'main',
      url: sim.url,
      has_token: true,
      device_filters: { status: 'active' },
      verify_ssl: true,
      profile_id: profileId,
      default_device_type: 'generic',
      platform_map: {},
      delete_missing: false,
      timeout_seconds: 30,
      device_count: 0,
      last_sync_at: null,
      org_id: a.orgId,
    });
    expect(res.body).not.toHaveProperty('token');
    expect(res.body).not.toHaveProperty('token_enc');
    const row = await c.db('netbox_sources').where({ id: res.body.id }).first();
    expect(row.token_enc).not.toContain(TOKEN);
  });

  it('lists, reads, updates (keeping the token when omitted) and deletes sources', async () => {
    const source = await createSource(a, { name: 'crud' });
    const list = await call(a, 'GET', '/api/devices/sources/netbox');
    expect(list.status).toBe(200);
    expect(list.body.sources.map((s: { name: string }) => s.name)).toContain('crud');
    expect((await call(a, 'GET', `/api/devices/sources/netbox/${source.id}`)).body.name).toBe('crud');
    const put = await call(a, 'PUT', `/api/devices/sources/netbox/${source.id}`, {
      verify_ssl: false,
      platform_map: { eos: 'vendor_eos' },
      timeout_seconds: 5,
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'crud', verify_ssl: false, platform_map: { eos: 'vendor_eos' }, timeout_seconds: 5, has_token: true });
    expect((await call(a, 'POST', `/api/devices/sources/netbox/${source.id}/test`)).body.ok).toBe(true);
    expect((await call(a, 'DELETE', `/api/devices/sources/netbox/${source.id}`)).status).toBe(204);
    expect((await call(a, 'GET', `/api/devices/sources/netbox/${source.id}`)).status).toBe(404);
  });

  it('answers 400 for bad settings and 409 for a duplicate name', async () => {
    for (const [body, needle] of [
      [{ name: 'x', url: 'ftp://netbox', token: 't' }, 'http'],
      [{ name: 'x', url: 'not a url', token: 't' }, 'url'],
      [{ name: 'x', url: 'https://user:pw@netbox.example.com', token: 't' }, 'user'],
      [{ name: 'x', url: sim.url }, 'token'],
      [{ name: 'x', url: sim.url, token: 't', default_device_type: 'router' }, 'default_device_type'],
      [{ name: 'x', url: sim.url, token: 't', platform_map: { eos: 'arista' } }, 'platform_map'],
      [{ name: 'x', url: sim.url, token: 't', device_filters: { limit: 5 } }, 'limit'],
      [{ name: 'x', url: sim.url, token: 't', device_filters: { 'bad key': 'x' } }, 'device_filters'],
      [{ name: 'x', url: sim.url, token: 't', timeout_seconds: 0 }, 'timeout_seconds'],
      [{ name: 'x', url: sim.url, token: 't', owner: 'me' }, 'owner'],
    ] as const) {
      const res = await call(a, 'POST', '/api/devices/sources/netbox', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toContain(needle);
    }
    const foreignProfile = await call(a, 'POST', '/api/devices/sources/netbox', {
      name: 'x',
      url: sim.url,
      token: 't',
      profile_id: (await b.profile()).id,
    });
    expect(foreignProfile.status).toBe(400);
    await createSource(a, { name: 'taken' });
    expect((await call(a, 'POST', '/api/devices/sources/netbox', { name: 'taken', url: sim.url, token: 't' })).status).toBe(409);
    expect((await call(a, 'GET', '/api/devices/sources/netbox/not-a-uuid')).status).toBe(400);
  });

  it('tests the connection: count of matching devices and NetBox version, or a clear error', async () => {
    const source = await createSource(a, { device_filters: { site: 'frankfurt-1' } });
    const ok = await call(a, 'POST', `/api/devices/sources/netbox/${source.id}/test`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, count: 60, netbox_version: '4.1' });
    const wrongToken = await createSource(a, { token: 'wrong-token' });
    const refused = await call(a, 'POST', `/api/devices/sources/netbox/${wrongToken.id}/test`);
    expect(refused.body.ok).toBe(false);
    expect(refused.body.error).toContain('HTTP 401');
    const closed = await createSource(a, { url: 'http://127.0.0.1:1' });
    const unreachable = await call(a, 'POST', `/api/devices/sources/netbox/${closed.id}/test`);
    expect(unreachable.body).toMatchObject({ ok: false, error: expect.stringContaining('Could not reach NetBox') });
  });
});

describe('NetBox sync', () => {
  let source: { id: string };

  it('adds every device across pages with the NetBox mapping', async () => {
    source = await createSource(a, { name: 'sync', profile_id: profileId, platform_map: { eos: 'vendor_eos' } });
    sim.requests.length = 0;
    const res = await sync(a, source.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      added: 120,
      updated: 0,
      unchanged: 0,
      failed: 0,
      removed: 0,
      errors: [],
      status: 'success',
      source_id: source.id,
    });
    expect(res.body.duration_ms).toBeGreaterThanOrEqual(0);
    // 120 devices at the server's 50 per page: three requests, each with the token.
    const pages = sim.requests.filter((r) => r.path.startsWith('/api/dcim/devices/'));
    expect(pages).toHaveLength(3);
    expect(pages.every((r) => r.authorization === `Token ${TOKEN}`)).toBe(true);

    const list = await call(a, 'GET', '/api/devices?source=netbox&q=nb-sw-007');
    expect(list.body.total).toBe(1);
    const device = (await call(a, 'GET', `/api/devices/${list.body.devices[0].id}`)).body;
    expect(device).toMatchObject({
      name: 'nb-sw-007',
      host: '10.20.0.7',
      manufacturer: 'Arista',
      model: 'DCS-7050SX3-48YC8',
      platform: 'EOS',
      device_type: 'vendor_eos',
      site: 'Frankfurt 1',
      site_id: null,
      serial_number: 'SN7',
      asset_tag: 'AT7',
      tags: ['managed', 'rack-3'],
      source: 'netbox',
      protocol: 'ssh',
      profile_id: profileId,
      netbox_source_id: source.id,
      netbox_id: 7,
      netbox_removed_at: null,
    });
    expect(device.netbox_last_synced_at).toEqual(expect.any(String));
    expect((await call(a, 'GET', `/api/devices/sources/netbox/${source.id}`)).body).toMatchObject({ device_count: 120, last_sync_status: 'success' });
  });

  it('a second sync with no change counts everything unchanged', async () => {
    const res = await sync(a, source.id);
    expect(res.body).toMatchObject({ added: 0, updated: 0, unchanged: 120, failed: 0, removed: 0, status: 'success' });
  });

  it('updates changed devices, adds new ones, and counts devices NetBox no longer lists as removed', async () => {
    const saved = sim.devices.map((d) => ({ ...d }));
    sim.devices[0].ip4 = '10.99.0.1/16';
    sim.devices[1].tags = ['managed'];
    sim.devices[2].name = 'nb-sw-003-renamed';
    sim.devices.splice(3, 2); // ids 4 and 5 leave NetBox
    sim.devices.push(...simDevices(1, 500));
    const res = await sync(a, source.id);
    expect(res.body).toMatchObject({ added: 1, updated: 3, unchanged: 115, failed: 0, removed: 2, status: 'success' });
    const moved = (await call(a, 'GET', '/api/devices?q=nb-sw-001')).body.devices[0];
    expect(moved.host).toBe('10.99.0.1');
    expect((await call(a, 'GET', '/api/devices?q=nb-sw-003-renamed')).body.total).toBe(1);
    const gone = (await call(a, 'GET', '/api/devices?q=nb-sw-004')).body.devices[0];
    const goneFull = (await call(a, 'GET', `/api/devices/${gone.id}`)).body;
    expect(goneFull.netbox_removed_at).toEqual(expect.any(String));
    // Already-marked devices are not counted again.
    expect((await sync(a, source.id)).body).toMatchObject({ removed: 0, unchanged: 119 });
    // A device that comes back is un-marked and counts as updated.
    sim.devices = saved;
    const back = await sync(a, source.id);
    expect(back.body).toMatchObject({ added: 0, updated: 5, removed: 1 });
    expect((await call(a, 'GET', `/api/devices/${gone.id}`)).body.netbox_removed_at).toBeNull();
  });

  it('keeps a device type set by hand unless platform_map names the platform', async () => {
    const id = (await call(a, 'GET', '/api/devices?q=nb-sw-010')).body.devices[0].id;
    await call(a, 'PUT', `/api/devices/${id}`, { device_type: 'vendor_ios' });
    await call(a, 'PUT', `/api/devices/sources/netbox/${source.id}`, { platform_map: {} });
    expect((await sync(a, source.id)).body.updated).toBe(0);
    expect((await call(a, 'GET', `/api/devices/${id}`)).body.device_type).toBe('vendor_ios');
    await call(a, 'PUT', `/api/devices/sources/netbox/${source.id}`, { platform_map: { eos: 'vendor_eos' } });
    expect((await sync(a, source.id)).body.updated).toBe(1);
    expect((await call(a, 'GET', `/api/devices/${id}`)).body.device_type).toBe('vendor_eos');
  });

  it('reports devices it cannot import, per device, and imports the rest', async () => {
    const saved = sim.devices;
    await a.device(profileId, { name: 'manual-clash' });
    sim.devices = [
      ...saved,
      { id: 900, name: null, manufacturer: 'X', model: 'Y', site: 'S', ip4: '10.0.9.1/24' },
      { id: 901, name: 'no-ip', manufacturer: 'X', model: 'Y', site: 'S', ip4: null },
      { id: 902, name: 'manual-clash', manufacturer: 'X', model: 'Y', site: 'S', ip4: '10.0.9.2/24' },
      { id: 903, name: 'nb-sw-001', manufacturer: 'X', model: 'Y', site: 'Other site', ip4: '10.0.9.3/24' },
      { id: 904, name: 'v6-only', manufacturer: 'X', model: 'Y', site: 'S', ip6: '2001:db8::904/64' },
    ];
    const res = await sync(a, source.id);
    sim.devices = saved;
    expect(res.body).toMatchObject({ added: 1, failed: 4, status: 'partial' });
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { netbox_id: 900, error: 'NetBox device 900 has no name' },
        { netbox_id: 901, name: 'no-ip', error: 'No primary IP address in NetBox' },
        { netbox_id: 902, name: 'manual-clash', error: 'A device with this name already exists and was not synced from this NetBox source' },
        { netbox_id: 903, name: 'nb-sw-001', error: 'NetBox device 1 has the same name' },
      ]),
    );
    expect((await call(a, 'GET', '/api/devices?q=v6-only')).body.devices[0].host).toBe('2001:db8::904');
  });

  it('a NetBox 401 gives a clear error in the result and changes nothing', async () => {
    const before = await c.db('devices').where({ org_id: a.orgId }).orderBy('id').select('id', 'updated_at', 'netbox_removed_at');
    sim.mode = 'unauthorized';
    const res = await sync(a, source.id);
    sim.mode = 'ok';
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ added: 0, updated: 0, unchanged: 0, failed: 0, removed: 0, status: 'failed' });
    expect(res.body.errors).toEqual([{ error: "NetBox refused the API token (HTTP 401); check the source's token" }]);
    expect(await c.db('devices').where({ org_id: a.orgId }).orderBy('id').select('id', 'updated_at', 'netbox_removed_at')).toEqual(before);
  });

  it('a NetBox 500 gives a clear error in the result and changes nothing', async () => {
    const count = (await call(a, 'GET', '/api/devices?limit=1')).body.total;
    sim.mode = 'error';
    const res = await sync(a, source.id);
    sim.mode = 'ok';
    expect(res.body).toMatchObject({ status: 'failed', removed: 0, added: 0 });
    expect(res.body.errors[0].error).toBe('NetBox failed with HTTP 500 (server error)');
    expect((await call(a, 'GET', '/api/devices?limit=1')).body.total).toBe(count);
    expect((await call(a, 'GET', '/api/devices?q=nb-sw-004')).body.total).toBe(1);
  });

  it('a NetBox that does not answer times out with the no-answer error, naming the time limit, and changes nothing', async () => {
    await call(a, 'PUT', `/api/devices/sources/netbox/${source.id}`, { timeout_seconds: 1 });
    sim.mode = 'hang';
    const res = await sync(a, source.id);
    sim.mode = 'ok';
    await call(a, 'PUT', `/api/devices/sources/netbox/${source.id}`, { timeout_seconds: 30 });
    expect(res.body).toMatchObject({ status: 'failed', added: 0, updated: 0, removed: 0 });
    // The message of every failure before an HTTP answer (docs/security.md, NetBox sources); the log says it timed out.
    expect(res.body.errors[0].error).toContain(`Could not reach NetBox at ${sim.url}: no HTTP answer came`);
    expect(res.body.errors[0].error).toContain('answers within 1 s');
    expect(c.logs()).toContain('"cause":"TimeoutError');
  });

  it('delete_missing deletes devices NetBox no longer lists', async () => {
    const small = await startNetboxSim({ token: TOKEN, devices: simDevices(3, 700) });
    try {
      const own = await createSource(a, { url: small.url, profile_id: profileId, delete_missing: true });
      expect((await sync(a, own.id)).body.added).toBe(3);
      small.devices.pop();
      expect((await sync(a, own.id)).body).toMatchObject({ removed: 1, unchanged: 2 });
      expect((await call(a, 'GET', '/api/devices?q=nb-sw-702')).body.total).toBe(0);
      // Deleting the source keeps its devices.
      expect((await call(a, 'DELETE', `/api/devices/sources/netbox/${own.id}`)).status).toBe(204);
      expect((await call(a, 'GET', '/api/devices?q=nb-sw-70')).body.total).toBe(2);
    } finally {
      await small.close();
    }
  });

  it('new devices need a profile: the source’s, else the default setting', async () => {
    const small = await startNetboxSim({
      token: TOKEN,
      devices: [{ id: 1, name: 'needs-profile', manufacturer: 'X', model: 'Y', site: 'S', ip4: '10.7.7.7/32' }],
    });
    try {
      const own = await createSource(a, { url: small.url });
      const res = await sync(a, own.id);
      expect(res.body).toMatchObject({ added: 0, failed: 1, status: 'failed' });
      expect(res.body.errors[0].error).toContain('No connection profile');
    } finally {
      await small.close();
    }
  });

  describe("a profile's allowed_networks", () => {
    let limited: { id: string; name: string };
    let own: { id: string };
    let small: NetboxSim;
    const refusal = (device: string, host: string, outcome: string) =>
      `Device '${device}': host ${host} is outside the networks connection profile '${limited.name}' allows its credentials to be sent to ` +
      `(allowed_networks: 10.30.0.0/16); the device was not ${outcome}`;
    const byName = async (name: string) => {
      const found = (await call(a, 'GET', `/api/devices?source=netbox&q=${name}`)).body.devices.filter((d: { name: string }) => d.name === name);
      return found.length === 0 ? undefined : (await call(a, 'GET', `/api/devices/${found[0].id}`)).body;
    };

    beforeAll(async () => {
      limited = await a.profile({ name: 'nb-limited', allowed_networks: ['10.30.0.0/16'] });
      small = await startNetboxSim({
        token: TOKEN,
        devices: [
          { id: 1, name: 'nb-inside', manufacturer: 'X', model: 'Y', site: 'S', ip4: '10.30.0.1/24' },
          { id: 2, name: 'nb-outside', manufacturer: 'X', model: 'Y', site: 'S', ip4: '192.0.2.66/24' },
          // NetBox holds addresses, but the mapping takes a name too: it is the agent's to check.
          { id: 3, name: 'nb-by-name', manufacturer: 'X', model: 'Y', site: 'S', ip4: 'nb-by-name.example.net' },
        ],
      });
      own = await createSource(a, { url: small.url, profile_id: limited.id });
    });
    afterAll(async () => small?.close());

    it('creates the devices inside the networks of the profile new devices get, and reports the others, not created', async () => {
      const res = await sync(a, own.id);
      expect(res.body).toMatchObject({ added: 2, updated: 0, failed: 1, removed: 0, status: 'partial' });
      expect(res.body.errors).toEqual([{ netbox_id: 2, name: 'nb-outside', error: refusal('nb-outside', '192.0.2.66', 'created') }]);
      expect(await byName('nb-outside')).toBeUndefined();
      expect(await byName('nb-inside')).toMatchObject({ host: '10.30.0.1', profile_id: limited.id });
      expect(await byName('nb-by-name')).toMatchObject({ host: 'nb-by-name.example.net', profile_id: limited.id });
    });

    it('does not move an existing device outside its profile: not updated, not removed, even under a new NetBox id', async () => {
      const before = await byName('nb-inside');
      small.devices[0] = { ...small.devices[0], ip4: '198.51.100.7/24', tags: ['moved'] };
      const moved = await sync(a, own.id);
      expect(moved.body).toMatchObject({ added: 0, updated: 0, unchanged: 1, failed: 2, removed: 0, status: 'partial' });
      expect(moved.body.errors).toContainEqual({ netbox_id: 1, name: 'nb-inside', error: refusal('nb-inside', '198.51.100.7', 'updated') });
      expect(await byName('nb-inside')).toEqual({ ...before, netbox_last_synced_at: expect.any(String) });

      // Deleted and re-created in NetBox under the same name (a new id): still listed, so not missing.
      small.devices[0] = { ...small.devices[0], id: 11 };
      const recreated = await sync(a, own.id);
      expect(recreated.body).toMatchObject({ added: 0, updated: 0, failed: 2, removed: 0 });
      expect(recreated.body.errors).toContainEqual({ netbox_id: 11, name: 'nb-inside', error: refusal('nb-inside', '198.51.100.7', 'updated') });
      expect(await byName('nb-inside')).toMatchObject({ host: '10.30.0.1', tags: [], netbox_id: 1, netbox_removed_at: null });

      small.devices[0].ip4 = '10.30.9.9/24';
      expect((await sync(a, own.id)).body).toMatchObject({ updated: 1, failed: 1, removed: 0 });
      expect(await byName('nb-inside')).toMatchObject({ host: '10.30.9.9', tags: ['moved'], netbox_id: 11 });
    });

    it('judges an existing device by its own profile, not the one new devices get', async () => {
      const device = await byName('nb-inside');
      expect((await call(a, 'POST', '/api/profiles/assign', { profile_id: profileId, device_ids: [device.id] })).status).toBe(200);
      small.devices[0].ip4 = '198.51.100.8/24';
      expect((await sync(a, own.id)).body).toMatchObject({ updated: 1, failed: 1 });
      expect(await byName('nb-inside')).toMatchObject({ host: '198.51.100.8', profile_id: profileId });
    });
  });

  it('sends NetBox v2 tokens (nbt_…) as Bearer', async () => {
    const v2 = 'nbt_abc123.secretpart-never-shown';
    const small = await startNetboxSim({ token: v2, devices: simDevices(1, 600) });
    try {
      const own = await createSource(a, { url: small.url, token: v2, profile_id: profileId });
      expect((await sync(a, own.id)).body).toMatchObject({ added: 1, status: 'success' });
      expect(small.requests[0].authorization).toBe(`Bearer ${v2}`);
    } finally {
      await small.close();
    }
  });

  it('honours verify_ssl against an HTTPS NetBox with a private CA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nb-ca-'));
    const tls = await issueServerCertificate(await loadOrCreateCa({ dataDir: dir, tlsCa: null }), ['127.0.0.1']);
    const secure = await startNetboxSim({ token: TOKEN, devices: simDevices(2, 800), tls });
    try {
      const strict = await createSource(a, { url: secure.url, profile_id: profileId });
      const refused = await sync(a, strict.id);
      expect(refused.body.status).toBe('failed');
      expect(refused.body.errors[0].error).toMatch(
        /^Could not reach NetBox at .*: no HTTP answer came\..*TLS certificate \(install its CA or set verify_ssl to false\)/,
      );
      expect(c.logs()).toContain('[SELF_SIGNED_CERT_IN_CHAIN]');
      const relaxed = await createSource(a, { url: secure.url, profile_id: profileId, verify_ssl: false });
      expect((await sync(a, relaxed.id)).body).toMatchObject({ added: 2, status: 'success' });
    } finally {
      await secure.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('GET /api/devices/sync/history lists past results, newest first, filterable by source', async () => {
    const res = await call(a, 'GET', '/api/devices/sync/history');
    expect(res.status).toBe(200);
    expect(res.body.total).toBeGreaterThan(5);
    const [latest] = res.body.history;
    expect(Object.keys(latest)).toEqual(
      expect.arrayContaining(['added', 'updated', 'unchanged', 'failed', 'removed', 'errors', 'duration_ms', 'status', 'source_id', 'started_at']),
    );
    const times = res.body.history.map((h: { started_at: string }) => h.started_at);
    expect(times).toEqual([...times].sort().reverse());
    const own = await call(a, 'GET', `/api/devices/sync/history?source_id=${source.id}&limit=2`);
    expect(own.body.history).toHaveLength(2);
    expect(own.body.history.every((h: { source_id: string }) => h.source_id === source.id)).toBe(true);
    expect((await call(a, 'GET', '/api/devices/sync/history?limit=0')).status).toBe(400);
  });

  it('another organization gets 404 on every :source_id route and sees nothing in lists', async () => {
    for (const [method, path] of [
      ['GET', `/api/devices/sources/netbox/${source.id}`],
      ['PUT', `/api/devices/sources/netbox/${source.id}`],
      ['DELETE', `/api/devices/sources/netbox/${source.id}`],
      ['POST', `/api/devices/sources/netbox/${source.id}/test`],
      ['POST', `/api/devices/sources/netbox/${source.id}/sync`],
    ] as const) {
      const res = await call(b, method, path, method === 'PUT' ? { name: 'stolen' } : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call(b, 'GET', '/api/devices/sources/netbox')).body).toEqual({ sources: [], total: 0 });
    expect((await call(b, 'GET', '/api/devices/sync/history')).body).toEqual({ history: [], total: 0 });
    expect((await call(b, 'GET', `/api/devices/sync/history?source_id=${source.id}`)).body.total).toBe(0);
  });

  it('the token appears in no response, no log line and no stored error', async () => {
    const everything = responses.join('\n') + c.logs() + JSON.stringify(await c.db('netbox_sync_runs').select('errors'));
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain('netbox-token-never-shown');
    expect(everything).not.toContain('secretpart-never-shown');
  });
});
