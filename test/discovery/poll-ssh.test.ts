import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { clearSimNetwork, registerSimNetwork, simModel } from '../sim/ssh/discovery-data';
import { discoveryEnv, pollNow, simInventoryDevice, type DiscoveryEnv } from './helpers';

/**
 * A poll over SSH through a real agent (in the test process, in-process job transport) against
 * simulated devices, and every read of what it stored.
 */
let env: DiscoveryEnv;
let r1: SimSshDevice;
let r2: SimSshDevice;
let deviceId: string;
let poll: any;

beforeAll(async () => {
  env = await discoveryEnv();
  r1 = await startSshDevice({ dialect: 'vendor_ios', hostname: 'poll-r1' });
  r2 = await startSshDevice({ dialect: 'vendor_ios', hostname: 'poll-r2' });
  clearSimNetwork();
  registerSimNetwork([
    { hostname: 'poll-r1', deviceType: 'vendor_ios' },
    { hostname: 'poll-r2', deviceType: 'vendor_ios' },
  ]);
  deviceId = (await simInventoryDevice(env.u, r1)).id;
  poll = await pollNow(env.u, deviceId);
});
afterAll(async () => {
  await env?.close();
  await r1?.close();
  await r2?.close();
  clearSimNetwork(); // the simulated network is module state: the next file of this worker starts empty
});

describe('a poll over SSH', () => {
  it('succeeds with every section collected', () => {
    expect(poll).toMatchObject({ status: 'succeeded', transport: 'ssh', trigger: 'manual', error: null });
    expect(poll.sections.map((s: any) => [s.name, s.status])).toEqual([
      ['interfaces', 'ok'],
      ['cdp', 'ok'],
      ['lldp', 'ok'],
      ['arp', 'ok'],
      ['mac', 'ok'],
      ['vlans', 'ok'],
    ]);
    expect(poll.counts).toEqual({ interfaces: 10, neighbors: 2, arp: 6, mac: 4, vlans: 4 });
    expect(new Date(poll.finished_at).getTime()).toBeGreaterThanOrEqual(new Date(poll.started_at).getTime());
  });

  it('GET /interfaces answers the parsed interfaces', async () => {
    const res = await env.u.as('GET', `/api/devices/${deviceId}/interfaces`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ device_id: deviceId, poll_id: poll.id, total: 10 });
    const model = simModel('poll-r1', 'vendor_ios');
    const gi2 = res.body.interfaces.find((i: any) => i.name === 'GigabitEthernet0/2');
    expect(gi2).toEqual({
      name: 'GigabitEthernet0/2',
      description: 'to poll-r2 GigabitEthernet0/1',
      admin_status: 'up',
      oper_status: 'up',
      speed_mbps: 1000,
      duplex: 'full',
      mtu: 1500,
      mac_address: model.ports[1].mac,
      addresses: [model.ports[1].address],
    });
    expect(res.body.interfaces.find((i: any) => i.name === 'GigabitEthernet0/7')).toMatchObject({
      admin_status: 'down',
      oper_status: 'down',
      description: 'spare (shut)',
    });
  });

  it('GET /neighbors answers CDP and LLDP neighbors, filterable by protocol', async () => {
    const res = await env.u.as('GET', `/api/devices/${deviceId}/neighbors`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(2);
    expect(res.body.neighbors).toContainEqual({
      protocol: 'cdp',
      local_interface: 'GigabitEthernet0/2',
      remote_name: 'poll-r2.lab.example',
      remote_interface: 'GigabitEthernet0/1',
      remote_address: simModel('poll-r2', 'vendor_ios').mgmtAddress,
      remote_platform: 'Cisco-like C2960X',
      remote_chassis_id: null,
    });
    const lldp = await env.u.as('GET', `/api/devices/${deviceId}/neighbors?protocol=lldp`);
    expect(lldp.body.neighbors).toEqual([
      expect.objectContaining({ protocol: 'lldp', local_interface: 'Gi0/2', remote_name: 'poll-r2', remote_interface: 'GigabitEthernet0/1' }),
    ]);
  });

  it('GET /arp-table, /mac-table and /vlans answer their records', async () => {
    const arp = await env.u.as('GET', `/api/devices/${deviceId}/arp-table`);
    expect(arp.status).toBe(200);
    expect(arp.body.arp_table).toContainEqual(expect.objectContaining({ ip_address: '10.100.1.11', interface: 'Vlan10', age_seconds: 60 }));
    const mac = await env.u.as('GET', `/api/devices/${deviceId}/mac-table`);
    expect(mac.status).toBe(200);
    expect(mac.body.mac_table).toContainEqual({ mac_address: '02:00:00:01:00:01', vlan: 10, interface: 'Gi0/3', entry_type: 'dynamic' });
    const vlans = await env.u.as('GET', `/api/devices/${deviceId}/vlans`);
    expect(vlans.status).toBe(200);
    expect(vlans.body.vlans).toContainEqual({ vlan_id: 10, name: 'users', status: 'active', interfaces: ['Gi0/3', 'Gi0/4', 'Gi0/5'] });
  });

  it('GET /status is the latest poll result, /poll-history newest first', async () => {
    const second = await pollNow(env.u, deviceId);
    const status = await env.u.as('GET', `/api/devices/${deviceId}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      device_id: deviceId,
      poll_enabled: false,
      poll_interval_minutes: 60,
      next_poll_at: null,
      poll: { id: second.id, status: 'succeeded' },
    });
    const history = await env.u.as('GET', `/api/devices/${deviceId}/poll-history`);
    expect(history.body.polls.map((p: any) => p.id)).toEqual([second.id, poll.id]);
    expect(history.body.total).toBe(2);
    // The second poll replaced the first one's records.
    const intf = await env.u.as('GET', `/api/devices/${deviceId}/interfaces`);
    expect(intf.body).toMatchObject({ poll_id: second.id, total: 10 });
  });

  it('pages record lists', async () => {
    const page = await env.u.as('GET', `/api/devices/${deviceId}/interfaces?limit=3&offset=2`);
    expect(page.body).toMatchObject({ total: 10, limit: 3, offset: 2 });
    expect(page.body.interfaces.map((i: any) => i.name)).toEqual(['GigabitEthernet0/3', 'GigabitEthernet0/4', 'GigabitEthernet0/5']);
  });
});
