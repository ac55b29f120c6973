/**
 * A connection profile limited to the networks its credentials may be sent to (allowed_networks),
 * on the controller: the field is validated and normalized, only a holder of configs.secrets sets
 * or changes it, and a device whose host is an IP address outside its profile's networks is
 * refused on create, update, bulk edit, profile assignment and import (a failed row there). DNS
 * names pass here: the agent checks them (test/agents/allowed-networks.test.ts). Also: clearing a
 * device's pinned identity needs configs.secrets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeNetwork } from '../../shared/src/device/networks';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, orgMember, type InventoryUser } from './helpers';

let c: TestController;
/** Organization A's administrator and operator, and another organization's administrator. */
let admin: InventoryUser;
let operator: InventoryUser;
let other: InventoryUser;
let limited: { id: string; name: string };
let open: { id: string; name: string };

beforeAll(async () => {
  c = await startTestController();
  admin = await inventoryUser(c, ['org_admin']);
  other = await inventoryUser(c, ['org_admin']);
  operator = await orgMember(c, admin);
  limited = await admin.profile({ name: 'core-admins', password: 'core-Pa55', allowed_networks: ['10.0.0.0/8', '2001:db8::/32'] });
  open = await admin.profile({ name: 'open' });
});
afterAll(async () => c?.close());

const NETWORKS = '(allowed_networks: 10.0.0.0/8, 2001:db8::/32)';
const refusal = (device: string, host: string) =>
  `Device '${device}': host ${host} is outside the networks connection profile 'core-admins' allows its credentials to be sent to ${NETWORKS}`;

describe('allowed_networks on connection profiles', () => {
  it('normalizes entries: host bits cleared, IPv6 compressed, bare addresses as /32 and /128, repeats dropped', async () => {
    const res = await admin.as('POST', '/api/profiles', {
      body: { name: 'normal', allowed_networks: ['10.1.2.3/8', ' 2001:DB8:0:0::1/32', '192.0.2.7', '10.0.0.0/8', '::1', '::ffff:10.0.0.0/104'] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.allowed_networks).toEqual(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7/32', '::1/128', '::ffff:a00:0/104']);
    expect((await admin.as('GET', `/api/profiles/${res.body.id}`)).body.allowed_networks).toEqual(res.body.allowed_networks);
    const audit = await c.db('audit_log').where({ kind: 'profile.created' }).whereRaw("details->>'profile_id' = ?", [res.body.id]).first();
    expect(audit.details.allowed_networks).toEqual(res.body.allowed_networks);
    expect(normalizeNetwork('1:0:0:0:1:0:0:0/128')).toBe('1::1:0:0:0/128');
    expect(normalizeNetwork('0.0.0.0/0')).toBe('0.0.0.0/0');
  });

  it('absent means no limit: [] in every answer, as profiles were before', async () => {
    expect((await admin.as('GET', `/api/profiles/${open.id}`)).body.allowed_networks).toEqual([]);
    const list = await operator.as('GET', '/api/profiles');
    expect(list.body.profiles.find((p: { id: string }) => p.id === limited.id).allowed_networks).toEqual(['10.0.0.0/8', '2001:db8::/32']);
  });

  it('refuses what is not a network with a 400 naming the entry', async () => {
    for (const [entry, needle] of [
      ['sw1.example.net', "'sw1.example.net' is not an IPv4 or IPv6 network"],
      ['10.0.0.0/33', 'prefix length of an IPv4 network is a whole number from 0 to 32'],
      ['2001:db8::/129', 'from 0 to 128'],
      ['10.0.0.0/', 'prefix length'],
      ['10.0.0/8', 'is not an IPv4 or IPv6 network'],
      ['fe80::1%eth0/64', 'is not an IPv4 or IPv6 network'],
    ]) {
      const res = await admin.as('PUT', `/api/profiles/${open.id}`, { body: { allowed_networks: [entry] } });
      expect(res.status, entry).toBe(400);
      expect(res.body.code).toBe('PROFILE_INVALID_NETWORK');
      expect(res.body.error).toContain(needle);
    }
    const tooMany = await admin.as('PUT', `/api/profiles/${open.id}`, {
      body: { allowed_networks: Array.from({ length: 257 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`) },
    });
    expect(tooMany.status).toBe(400);
    expect((await admin.as('PUT', `/api/profiles/${open.id}`, { body: { allowed_networks: [''] } })).status).toBe(400);
    expect((await admin.as('PUT', `/api/profiles/${open.id}`, { body: { allowed_networks: '10.0.0.0/8' } })).status).toBe(400);
    expect((await admin.as('GET', `/api/profiles/${open.id}`)).body.allowed_networks).toEqual([]);
  });

  it('an operator can neither set, widen, narrow nor lift it; sending it unchanged, or other fields, is fine', async () => {
    const create = await operator.as('POST', '/api/profiles', { body: { name: 'op-limited', allowed_networks: ['192.0.2.0/24'] } });
    expect(create.status).toBe(403);
    expect(create.body).toMatchObject({ code: 'FORBIDDEN' });
    expect(create.body.error).toBe(
      "Insufficient permissions: setting a connection profile's allowed_networks needs the configs.secrets permission (an organization administrator)",
    );
    for (const allowed_networks of [['10.0.0.0/8', '2001:db8::/32', '127.0.0.0/8'], ['0.0.0.0/0', '::/0'], ['10.0.0.0/8'], []]) {
      const res = await operator.as('PUT', `/api/profiles/${limited.id}`, { body: { allowed_networks, password: 'ignored-as-well' } });
      expect(res.status, JSON.stringify(allowed_networks)).toBe(403);
    }
    const same = await operator.as('PUT', `/api/profiles/${limited.id}`, {
      body: { allowed_networks: ['2001:DB8::/32', '10.9.9.9/8'], ssh_port: 2222 },
    });
    expect(same.status, same.text).toBe(200);
    expect(same.body).toMatchObject({ allowed_networks: ['10.0.0.0/8', '2001:db8::/32'], ssh_port: 2222 });
    const rotated = await operator.as('PUT', `/api/profiles/${limited.id}`, { body: { password: 'rotated-by-the-operator' } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.allowed_networks).toEqual(['10.0.0.0/8', '2001:db8::/32']);
    expect(await c.db('connection_profiles').where({ id: limited.id }).first('allowed_networks')).toEqual({
      allowed_networks: ['10.0.0.0/8', '2001:db8::/32'],
    });
    // An operator's own new profile without a limit is created as before.
    expect((await operator.as('POST', '/api/profiles', { body: { name: 'op-open', allowed_networks: [] } })).status).toBe(201);
  });

  it("an operator cannot loosen how a profile's credentials travel (gNMI TLS off, no certificate check, another CA); tightening is fine", async () => {
    const tls = await admin.profile({ name: 'tls-admins', password: 'tls-Pa55', gnmi_tls: true });
    for (const body of [{ gnmi_tls: false }, { gnmi_skip_verify: true }, { ca_certificate: 'not even a certificate' }]) {
      const res = await operator.as('PUT', `/api/profiles/${tls.id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.body.error).toMatch(/needs the configs.secrets permission/);
    }
    expect(await c.db('connection_profiles').where({ id: tls.id }).first('gnmi_tls', 'gnmi_skip_verify')).toEqual({
      gnmi_tls: true,
      gnmi_skip_verify: false,
    });
    expect((await operator.as('PUT', `/api/profiles/${tls.id}`, { body: { gnmi_tls: true, gnmi_skip_verify: false } })).status).toBe(200);
    expect((await admin.as('PUT', `/api/profiles/${tls.id}`, { body: { gnmi_skip_verify: true } })).status).toBe(200);
  });

  it('another organization gets 404 on the profile and cannot use it', async () => {
    expect((await other.as('GET', `/api/profiles/${limited.id}`)).status).toBe(404);
    expect((await other.as('PUT', `/api/profiles/${limited.id}`, { body: { allowed_networks: ['0.0.0.0/0'] } })).status).toBe(404);
    const foreign = await other.as('POST', '/api/devices', {
      body: { name: 'x', host: '10.0.0.1', device_type: 'vendor_ios', profile_id: limited.id },
    });
    expect(foreign.body.code).toBe('UNKNOWN_PROFILE');
    expect((await other.as('GET', '/api/profiles')).body.profiles.map((p: { id: string }) => p.id)).not.toContain(limited.id);
  });
});

describe('devices outside their profile networks (IP-address hosts)', () => {
  it('create: refuses an address outside with a 400 naming the profile and its networks; inside and DNS names pass', async () => {
    for (const host of ['127.0.0.1', '192.0.2.10', '2001:db9::1', '::1']) {
      const res = await operator.as('POST', '/api/devices', { body: { name: 'evil', host, device_type: 'vendor_ios', profile_id: limited.id } });
      expect(res.status, host).toBe(400);
      expect(res.body).toEqual({ code: 'HOST_OUTSIDE_PROFILE_NETWORKS', error: refusal('evil', host) });
    }
    expect((await operator.as('GET', '/api/devices?q=evil')).body.total).toBe(0);
    for (const host of ['10.20.30.40', '2001:db8::42', '::ffff:10.1.1.1', 'sw-core.example.net', 'localhost']) {
      const res = await operator.as('POST', '/api/devices', {
        body: { name: `ok-${host.replace(/[^a-z0-9]/g, '-')}`, host, device_type: 'vendor_ios', profile_id: limited.id },
      });
      expect(res.status, `${host}: ${res.text}`).toBe(201);
    }
  });

  it('update: refuses a new host outside, and a move to the profile of a device whose host is outside', async () => {
    const inside = await operator.as('POST', '/api/devices', {
      body: { name: 'edge-1', host: '10.0.0.1', device_type: 'vendor_ios', profile_id: limited.id },
    });
    const res = await operator.as('PUT', `/api/devices/${inside.body.id}`, { body: { host: '127.0.0.1' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(refusal('edge-1', '127.0.0.1'));
    expect((await operator.as('PUT', `/api/devices/${inside.body.id}`, { body: { host: 'attacker.example.net' } })).status).toBe(200);
    expect((await operator.as('PUT', `/api/devices/${inside.body.id}`, { body: { host: '10.0.0.2', description: 'fine' } })).status).toBe(200);

    const outside = await operator.device(open.id, { name: 'lab-1', host: '127.0.0.1' });
    const move = await operator.as('PUT', `/api/devices/${outside.id}`, { body: { profile_id: limited.id } });
    expect(move.status).toBe(400);
    expect(move.body.error).toBe(refusal('lab-1', '127.0.0.1'));
    const both = await operator.as('PUT', `/api/devices/${outside.id}`, { body: { profile_id: limited.id, host: '10.1.1.1' } });
    expect(both.status, both.text).toBe(200);
    expect((await operator.as('GET', `/api/devices/${outside.id}`)).body).toMatchObject({ profile_id: limited.id, host: '10.1.1.1' });
  });

  it('bulk edit and assign: refuse when any device would be outside, say how many, and change nothing', async () => {
    const a = await operator.device(open.id, { name: 'bulk-a', host: '127.0.0.1' });
    const b = await operator.device(open.id, { name: 'bulk-b', host: '192.0.2.1' });
    const fine = await operator.device(open.id, { name: 'bulk-c', host: '10.3.3.3' });
    const bulk = await operator.as('PATCH', '/api/devices/bulk', { body: { ids: [a.id, b.id, fine.id], fields: { profile_id: limited.id } } });
    expect(bulk.status).toBe(400);
    expect(bulk.body).toMatchObject({ code: 'HOST_OUTSIDE_PROFILE_NETWORKS', devices_refused: 2 });
    expect(bulk.body.error).toBe(`${refusal('bulk-a', '127.0.0.1')}; and 1 more device outside it`);
    const assign = await operator.as('POST', '/api/profiles/assign', { body: { profile_id: limited.id, device_ids: [b.id, fine.id] } });
    expect(assign.status).toBe(400);
    expect(assign.body.error).toBe(refusal('bulk-b', '192.0.2.1'));
    for (const d of [a, b, fine]) expect((await operator.as('GET', `/api/devices/${d.id}`)).body.profile_id).toBe(open.id);
    // Other bulk fields are not checked, and devices inside move.
    expect((await operator.as('PATCH', '/api/devices/bulk', { body: { ids: [a.id, b.id], fields: { model: 'X' } } })).status).toBe(200);
    expect((await operator.as('POST', '/api/profiles/assign', { body: { profile_id: limited.id, device_ids: [fine.id] } })).body).toEqual({
      updated: 1,
    });
  });

  it("assign ignores another organization's devices, as before (their hosts are not looked at)", async () => {
    const foreign = await other.device((await other.profile()).id, { name: 'foreign', host: '127.0.0.1' });
    const res = await operator.as('POST', '/api/profiles/assign', { body: { profile_id: limited.id, device_ids: [foreign.id] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ updated: 0 });
    const bulk = await operator.as('PATCH', '/api/devices/bulk', { body: { ids: [foreign.id], fields: { profile_id: limited.id } } });
    expect(bulk.body).toEqual({ updated: 0 });
  });

  it('import: a row outside fails with the same message; the others are imported', async () => {
    const csv = await operator.as('POST', `/api/devices/import/csv?profile_id=${limited.id}`, {
      raw: 'name,host,device_type\nimp-1,10.4.0.1,vendor_ios\nimp-2,127.0.0.1,vendor_ios\nimp-3,imp-3.example.net,vendor_eos\n',
      contentType: 'text/csv',
    });
    expect(csv.status, csv.text).toBe(200);
    expect(csv.body).toEqual({ imported: 2, failed: 1, errors: [{ row: 3, name: 'imp-2', error: refusal('imp-2', '127.0.0.1') }] });
    const json = await operator.as('POST', `/api/devices/import/json?profile_id=${limited.id}`, {
      body: [
        { name: 'imp-4', host: '2001:db8::4', device_type: 'vendor_ios' },
        { name: 'imp-5', host: 'fe80::5', device_type: 'vendor_ios' },
      ],
    });
    expect(json.body).toMatchObject({ imported: 1, failed: 1 });
    expect(json.body.errors[0].error).toBe(refusal('imp-5', 'fe80::5'));
  });
});

describe('clearing a pinned device identity', () => {
  it('needs configs.secrets: 403 for an operator, 204 for an org admin, 404 for another organization', async () => {
    const d = await admin.device(open.id, { name: 'pinned', host: '10.5.5.5' });
    for (const pin of ['ssh-host-key', 'gnmi-certificate']) {
      const denied = await operator.as('DELETE', `/api/devices/${d.id}/${pin}`);
      expect(denied.status, pin).toBe(403);
      expect(denied.body.code).toBe('FORBIDDEN');
      expect(denied.body.error).toContain('needs the configs.secrets permission');
      expect((await other.as('DELETE', `/api/devices/${d.id}/${pin}`)).status).toBe(404);
      expect((await admin.as('DELETE', `/api/devices/${d.id}/${pin}`)).status).toBe(204);
    }
  });
});
