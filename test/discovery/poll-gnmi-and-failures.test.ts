import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { simModel, simOpenconfigTree } from '../sim/ssh/discovery-data';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { freePort } from '../helpers/net';
import { discoveryEnv, pollNow, simInventoryDevice, type DiscoveryEnv } from './helpers';

/**
 * A poll over gNMI (profile automation_transport gnmi) through a real agent, failed polls
 * recorded with their reason, organization scoping of every route, and bad input.
 */
let env: DiscoveryEnv;
let target: GnmiTarget;
let locked: SimSshDevice;
let other: InventoryUser;
let gnmiDevice: string;

beforeAll(async () => {
  env = await discoveryEnv();
  other = await inventoryUser(env.c, ['operator']);
  target = await startGnmiTarget({ username: 'admin', password: 'gnmi-secret', initialTree: simOpenconfigTree('gnmi-7', 'vendor_eos') });
  locked = await startSshDevice({ dialect: 'vendor_eos', hostname: 'locked-1', faults: { rejectAuth: true } });
  const profile = await env.u.profile({
    username: 'admin',
    password: 'gnmi-secret',
    automation_transport: 'gnmi',
    gnmi_port: target.port,
    gnmi_tls: false,
  });
  gnmiDevice = (await env.u.device(profile.id, { name: 'gnmi-7', host: '127.0.0.1', device_type: 'vendor_eos' })).id;
});
afterAll(async () => {
  await env?.close();
  await target?.close();
  await locked?.close();
});

describe('a poll over gNMI', () => {
  it('reads interfaces, ARP, LLDP, the FDB and VLANs from the openconfig paths', async () => {
    const poll = await pollNow(env.u, gnmiDevice);
    const model = simModel('gnmi-7', 'vendor_eos');
    expect(poll).toMatchObject({ status: 'succeeded', transport: 'gnmi', error: null });
    expect(poll.sections.map((s: any) => [s.name, s.status, s.source])).toEqual([
      ['interfaces', 'ok', '/interfaces'],
      ['cdp', 'unsupported', null],
      ['lldp', 'ok', '/lldp'],
      ['arp', 'ok', '/interfaces (ipv4/neighbors)'],
      ['mac', 'ok', '/network-instances (fdb)'],
      ['vlans', 'ok', '/network-instances (vlans)'],
    ]);
    expect(poll.counts).toEqual({ interfaces: 10, neighbors: model.neighbors.length, arp: model.arp.length, mac: model.macs.length, vlans: 4 });

    const intf = (await env.u.as('GET', `/api/devices/${gnmiDevice}/interfaces`)).body.interfaces;
    expect(intf.find((i: any) => i.name === 'Ethernet2')).toEqual({
      name: 'Ethernet2',
      description: model.ports[1].description,
      admin_status: 'up',
      oper_status: 'up',
      speed_mbps: 10000,
      duplex: 'full',
      mtu: 1500,
      mac_address: model.ports[1].mac,
      addresses: [model.ports[1].address],
    });
    const neighbors = (await env.u.as('GET', `/api/devices/${gnmiDevice}/neighbors`)).body.neighbors;
    expect(neighbors).toContainEqual({
      protocol: 'lldp',
      local_interface: 'Ethernet2',
      remote_name: 'gnmi-8',
      remote_interface: 'Ethernet1',
      remote_address: simModel('gnmi-8', 'vendor_eos').mgmtAddress,
      remote_platform: 'Arista-like DCS-7050SX3',
      remote_chassis_id: model.neighbors[1].remoteChassis,
    });
    const mac = (await env.u.as('GET', `/api/devices/${gnmiDevice}/mac-table`)).body.mac_table;
    expect(mac).toContainEqual({ mac_address: model.macs[0].mac, vlan: 10, interface: 'Ethernet3', entry_type: 'dynamic' });
    const vlans = (await env.u.as('GET', `/api/devices/${gnmiDevice}/vlans`)).body.vlans;
    expect(vlans).toContainEqual({ vlan_id: 10, name: 'users', status: 'active', interfaces: ['Ethernet3', 'Ethernet4', 'Ethernet5'] });
    const arp = (await env.u.as('GET', `/api/devices/${gnmiDevice}/arp-table`)).body.arp_table;
    expect(arp).toContainEqual(expect.objectContaining({ ip_address: model.arp[0].ip, mac_address: model.arp[0].mac }));
  });

  it('a failed path fails its sections only (partial), and keeps their earlier records', async () => {
    const tree = simOpenconfigTree('gnmi-7', 'vendor_eos');
    delete tree['openconfig-lldp:lldp'];
    target.setTree(tree);
    const poll = await pollNow(env.u, gnmiDevice);
    expect(poll.status).toBe('partial');
    expect(poll.error).toMatch(/^lldp: .*not found/i);
    expect(poll.sections.find((s: any) => s.name === 'lldp')).toMatchObject({ status: 'failed' });
    const neighbors = await env.u.as('GET', `/api/devices/${gnmiDevice}/neighbors`);
    expect(neighbors.body.total).toBeGreaterThan(0);
    expect(neighbors.body.poll_id).not.toBe(poll.id);
    expect((await env.u.as('GET', `/api/devices/${gnmiDevice}/interfaces`)).body.poll_id).toBe(poll.id);
  });
});

describe('a failed poll', () => {
  it('is recorded with the reason when the device refuses the login, and stores no records', async () => {
    const deviceId = (await simInventoryDevice(env.u, locked, { profile: { password: 'wrong-password-x' } })).id;
    const poll = await pollNow(env.u, deviceId);
    expect(poll).toMatchObject({ status: 'failed', transport: 'ssh', counts: { interfaces: 0, neighbors: 0, arp: 0, mac: 0, vlans: 0 } });
    expect(poll.error).toMatch(/auth/i);
    expect(poll.error).not.toContain('wrong-password-x');
    const status = await env.u.as('GET', `/api/devices/${deviceId}/status`);
    expect(status.body.poll).toMatchObject({ id: poll.id, status: 'failed', error: poll.error });
    expect(status.body.last_succeeded_at).toBeNull();
    expect((await env.u.as('GET', `/api/devices/${deviceId}/interfaces`)).body).toMatchObject({
      total: 0,
      interfaces: [],
      poll_id: null,
      collected_at: null,
    });
  });

  it('is recorded with the reason when nothing listens on the port', async () => {
    const port = await freePort();
    const deviceId = (await simInventoryDevice(env.u, { hostname: 'gone-1', host: '127.0.0.1', port, deviceType: 'vendor_ios' })).id;
    const poll = await pollNow(env.u, deviceId);
    expect(poll.status).toBe('failed');
    expect(poll.error).toMatch(/refused|ECONNREFUSED/i);
  });

  it('a second POST while a poll is queued answers the same poll', async () => {
    const stopped = await discoveryEnvNoAgent();
    try {
      const profile = await stopped.u.profile({ username: 'admin', password: 'admin' });
      const device = await stopped.u.device(profile.id, { name: 'waiting-1', host: '127.0.0.1' });
      const first = await stopped.u.as('POST', `/api/devices/${device.id}/poll`);
      const second = await stopped.u.as('POST', `/api/devices/${device.id}/poll`);
      expect(first.status).toBe(202);
      expect(first.body).toMatchObject({ status: 'queued', queued: true, message: 'Poll queued' });
      expect(second.status).toBe(202);
      expect(second.body).toMatchObject({ poll_id: first.body.poll_id, queued: false });
      const history = await stopped.u.as('GET', `/api/devices/${device.id}/poll-history`);
      expect(history.body.total).toBe(1);
    } finally {
      await stopped.close();
    }
  });
});

async function discoveryEnvNoAgent() {
  return discoveryEnv({ agent: false });
}

describe('organization scoping', () => {
  const routes = ['interfaces', 'neighbors', 'arp-table', 'mac-table', 'vlans', 'status', 'poll-history'];
  it('another organization gets 404 on every device route', async () => {
    for (const r of routes) {
      const res = await other.as('GET', `/api/devices/${gnmiDevice}/${r}`);
      expect(res.status, r).toBe(404);
      expect(res.body.code).toBe('DEVICE_NOT_FOUND');
    }
    expect((await other.as('POST', `/api/devices/${gnmiDevice}/poll`)).status).toBe(404);
  });

  it('another organization sees nothing in its topology and gets 404 for a site it does not own', async () => {
    const topo = await other.as('GET', '/api/topology');
    expect(topo.status).toBe(200);
    expect(topo.body).toEqual({ site_id: null, nodes: [], links: [] });
    const site = await env.u.site();
    const res = await other.as('GET', `/api/topology?site_id=${site.id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('SITE_NOT_FOUND');
  });
});

describe('bad input', () => {
  it('answers 400 for a malformed id, paging or filter, 404 for an unknown device', async () => {
    expect((await env.u.as('GET', '/api/devices/not-a-uuid/interfaces')).status).toBe(400);
    expect((await env.u.as('POST', '/api/devices/not-a-uuid/poll')).status).toBe(400);
    expect((await env.u.as('GET', `/api/devices/${gnmiDevice}/interfaces?limit=0`)).status).toBe(400);
    expect((await env.u.as('GET', `/api/devices/${gnmiDevice}/mac-table?limit=100000`)).status).toBe(400);
    expect((await env.u.as('GET', `/api/devices/${gnmiDevice}/poll-history?offset=-1`)).status).toBe(400);
    expect((await env.u.as('GET', `/api/devices/${gnmiDevice}/neighbors?protocol=ospf`)).status).toBe(400);
    expect((await env.u.as('GET', '/api/topology?site_id=nope')).status).toBe(400);
    const unknown = await env.u.as('GET', '/api/devices/00000000-0000-4000-8000-000000000000/vlans');
    expect(unknown.status).toBe(404);
    expect((await env.u.as('POST', '/api/devices/00000000-0000-4000-8000-000000000000/poll')).status).toBe(404);
  });

  it('refuses to poll an snmp device with 400', async () => {
    const profile = await env.u.profile();
    const device = await env.u.device(profile.id, { name: 'snmp-only', device_type: 'snmp' });
    const res = await env.u.as('POST', `/api/devices/${device.id}/poll`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('DISCOVERY_UNSUPPORTED_DEVICE');
  });

  it('needs a token', async () => {
    expect((await env.c.request('GET', `/api/devices/${gnmiDevice}/interfaces`)).status).toBe(401);
    expect((await env.c.request('GET', '/api/topology')).status).toBe(401);
  });
});
