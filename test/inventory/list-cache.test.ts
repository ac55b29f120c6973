/**
 * GET /api/devices answers from memory while the organization's device list version (migration
 * 110) is unchanged. Every write that changes what the list shows must show at once: through this
 * controller, through a second controller on the same database (its own cache), and by SQL from
 * other areas. Each case lists first (so an answer is remembered), writes, then lists again.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../controller/src/app';
import { createDb, type Db } from '../../controller/src/db/knex';
import { createLogger } from '../../controller/src/logger';
import { startTestController, type TestController } from '../helpers/controller';
import { type NetboxSim, startNetboxSim } from '../sim/netbox/server';
import { inventoryUser, type InventoryUser } from './helpers';

let c: TestController;
let a: InventoryUser;
let other: InventoryUser;
let profileId: string;
let replica: FastifyInstance;
let replicaDb: Db;
let replicaUrl: string;

const names = (body: { devices: { name: string }[] }) => body.devices.map((d) => d.name);

/** GET /api/devices as user `u` on `base` (this controller unless told). */
async function list(u: InventoryUser, query = '', base?: string) {
  const res = await fetch(`${base ?? c.url}/api/devices${query}`, { headers: { authorization: `Bearer ${u.token}` } });
  expect(res.status).toBe(200);
  return res.json() as Promise<{ devices: ({ id: string; name: string } & Record<string, unknown>)[]; total: number; limit: number; offset: number }>;
}

/** Lists twice, so the answer is surely remembered; returns it. */
async function primed(u: InventoryUser, query = '', base?: string) {
  await list(u, query, base);
  return list(u, query, base);
}

async function version(orgId: string): Promise<number> {
  const row = await c.db('device_counts').where({ org_id: orgId }).first('version');
  return Number(row?.version ?? 0);
}

beforeAll(async () => {
  c = await startTestController({ settings: { 'netbox.allowed_hosts': ['127.0.0.1'] } }); // the NetBox simulator is on loopback
  a = await inventoryUser(c, ['org_admin']); // creating a NetBox source needs settings.manage
  other = await inventoryUser(c);
  profileId = (await a.profile({ name: 'cache' })).id;
  // A second controller on the same database, with its own pool and its own list cache.
  replicaDb = await createDb(c.config.databaseUrl, c.config.dataDir);
  const sink = new Writable({
    write(_chunk, _enc, done) {
      done();
    },
  });
  replica = await buildApp({ config: c.config, db: replicaDb, log: createLogger('info', sink) });
  await replica.listen({ port: 0, host: '127.0.0.1' });
  replicaUrl = `http://127.0.0.1:${(replica.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await replica?.close();
  await replicaDb?.destroy();
  await c?.close();
});

describe('device list answers from memory stay current', () => {
  it('create, PUT and DELETE show at once, filters and pages included', async () => {
    expect(await primed(a)).toMatchObject({ devices: [], total: 0 });
    const d1 = await a.device(profileId, { name: 'cache-a-1', manufacturer: 'Arista' });
    expect(names(await list(a))).toEqual(['cache-a-1']);
    expect((await primed(a, '?q=zzz-later')).total).toBe(0);
    expect((await primed(a, '?limit=1&offset=1')).devices).toEqual([]);

    const d2 = await a.device(profileId, { name: 'cache-a-2' });
    expect((await list(a, '?limit=1&offset=1')).devices.map((d) => d.id)).toEqual([d2.id]);
    expect((await list(a)).total).toBe(2);

    const put = await a.as('PUT', `/api/devices/${d1.id}`, { body: { name: 'cache-a-1-zzz-later', model: 'X1' } });
    expect(put.status).toBe(200);
    const found = await list(a, '?q=zzz-later');
    expect(found.total).toBe(1);
    expect(found.devices[0]).toMatchObject({ id: d1.id, name: 'cache-a-1-zzz-later', model: 'X1', updated_at: put.body.updated_at });

    expect((await a.as('DELETE', `/api/devices/${d2.id}`)).status).toBe(204);
    expect(names(await list(a))).toEqual(['cache-a-1-zzz-later']);
    expect((await list(a, '?limit=1&offset=1')).devices).toEqual([]);
  });

  it('bulk PATCH, site assignment and profile assignment show at once', async () => {
    const site = await a.site({ name: 'cache-site' });
    const devices = await Promise.all([1, 2, 3].map((i) => a.device(profileId, { name: `cache-bulk-${i}` })));
    const ids = devices.map((d) => d.id);
    expect((await primed(a, `?site_id=${site.id}`)).total).toBe(0);
    expect((await primed(a, '?vendor=juniper')).total).toBe(0);

    const bulk = await a.as('PATCH', '/api/devices/bulk', { body: { ids, fields: { site_id: site.id, manufacturer: 'Juniper' } } });
    expect(bulk.body).toEqual({ updated: 3 });
    expect(names(await list(a, `?site_id=${site.id}`))).toEqual(['cache-bulk-1', 'cache-bulk-2', 'cache-bulk-3']);
    expect((await list(a, '?vendor=juniper')).total).toBe(3);

    const second = (await a.profile({ name: 'cache-second' })).id;
    expect((await primed(a, '?q=cache-bulk')).devices.every((d) => d.profile_id === profileId)).toBe(true);
    expect((await a.as('POST', '/api/profiles/assign', { body: { profile_id: second, device_ids: ids } })).body).toEqual({ updated: 3 });
    expect((await list(a, '?q=cache-bulk')).devices.map((d) => d.profile_id)).toEqual([second, second, second]);
  });

  it('CSV and JSON imports show at once', async () => {
    const before = (await primed(a)).total;
    const csv = 'name,host,device_type\ncache-csv-1,10.9.0.1,vendor_ios\ncache-csv-2,10.9.0.2,vendor_eos\n';
    const imported = await a.as('POST', `/api/devices/import/csv?profile_id=${profileId}`, { raw: csv, contentType: 'text/csv' });
    expect(imported.body.imported).toBe(2);
    expect((await list(a)).total).toBe(before + 2);
    expect((await primed(a, '?source=json')).total).toBe(0);
    const json = await a.as('POST', `/api/devices/import/json?profile_id=${profileId}`, {
      body: [{ name: 'cache-json-1', host: '10.9.1.1', device_type: 'generic' }],
    });
    expect(json.body.imported).toBe(1);
    expect(names(await list(a, '?source=json'))).toEqual(['cache-json-1']);
    expect((await list(a)).total).toBe(before + 3);
  });

  it('a NetBox sync shows at once', async () => {
    const token = 'cache-test-netbox-token';
    const sim: NetboxSim = await startNetboxSim({
      token,
      devices: [
        {
          id: 1,
          name: 'cache-nb-1',
          manufacturer: 'Arista',
          model: 'M',
          platform: 'EOS',
          site: 'Frankfurt 1',
          ip4: '10.30.0.1/24',
          serial: 'S1',
          asset_tag: null,
          tags: [],
          status: 'active',
        },
      ],
      maxPageSize: 50,
    });
    try {
      const source = await a.as('POST', '/api/devices/sources/netbox', { body: { name: 'cache-nb', url: sim.url, token, profile_id: profileId } });
      expect(source.status).toBe(201);
      expect((await primed(a, '?source=netbox')).total).toBe(0);
      const run = await a.as('POST', `/api/devices/sources/netbox/${source.body.id}/sync`);
      expect(run.body).toMatchObject({ status: 'success', added: 1 });
      expect(names(await list(a, '?source=netbox'))).toEqual(['cache-nb-1']);
    } finally {
      await sim.close();
    }
  });

  it('writes by other areas SQL show at once; updates of columns the list does not show keep the version', async () => {
    const [first] = (await primed(a)).devices;
    await c.db('devices').where({ id: first.id }).update({ host: '198.51.100.77' });
    expect((await list(a)).devices[0].host).toBe('198.51.100.77');

    const kept = await version(a.orgId);
    await c.db('devices').where({ id: first.id }).update({ next_poll_at: new Date(), netbox_last_synced_at: new Date() });
    expect(await version(a.orgId)).toBe(kept);
    await c.db('devices').where({ id: first.id }).update({ host: '198.51.100.77' }); // same value: nothing to show
    expect(await version(a.orgId)).toBe(kept);
  });

  it('a write through one controller shows on the next list through the other, both ways', async () => {
    const here = (await primed(a)).total;
    expect((await primed(a, '', replicaUrl)).total).toBe(here);

    const made = await a.device(profileId, { name: 'cache-replica-1' });
    expect(names(await list(a, '?q=cache-replica', replicaUrl))).toEqual(['cache-replica-1']);
    expect((await list(a, '', replicaUrl)).total).toBe(here + 1);

    const renamed = await fetch(`${replicaUrl}/api/devices/${made.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cache-replica-renamed' }),
    });
    expect(renamed.status).toBe(200);
    expect(names(await list(a, '?q=cache-replica'))).toEqual(['cache-replica-renamed']);

    const removed = await fetch(`${replicaUrl}/api/devices/${made.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${a.token}` } });
    expect(removed.status).toBe(204);
    expect((await list(a, '?q=cache-replica')).total).toBe(0);
    expect((await list(a)).total).toBe(here);
  });

  it('another organization still sees nothing, on either controller', async () => {
    for (const base of [c.url, replicaUrl]) {
      expect(await list(other, '', base)).toEqual({ devices: [], total: 0, limit: 50, offset: 0 });
      expect((await list(other, '?q=cache', base)).total).toBe(0);
    }
    await other.device((await other.profile()).id, { name: 'other-1' });
    expect(names(await list(other, '', replicaUrl))).toEqual(['other-1']);
    expect(names(await list(a, '?q=other-1'))).toEqual([]);
  });

  it('a revoked session is refused at once even where its list answer is remembered', async () => {
    const user = await inventoryUser(c);
    expect((await primed(user, '', replicaUrl)).total).toBe(0);
    expect((await user.as('POST', '/api/auth/logout')).status).toBeLessThan(300);
    const res = await fetch(`${replicaUrl}/api/devices`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(res.status).toBe(401);
  });
});
