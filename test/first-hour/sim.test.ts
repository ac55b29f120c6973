/**
 * `npm run sim` with no --kind: every transport on one port per transport, the device table, and
 * the admin port that changes a device from outside (what the drivers then read back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gnmiDriver } from '../../agent/src/drivers/gnmi';
import { netconfDriver } from '../../agent/src/drivers/netconf';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { freePort } from '../helpers/net';
import { spawnTs, stopAll, waitUntil, type Proc } from '../helpers/processes';

let sim: Proc;
const port = { ssh: 0, netconf: 0, gnmi: 0, admin: 0 };
let admin: string;

beforeAll(async () => {
  for (const k of Object.keys(port) as (keyof typeof port)[]) port[k] = await freePort();
  admin = `http://127.0.0.1:${port.admin}`;
  sim = spawnTs('test/sim/main.ts', {}, [
    '--dialect',
    'vendor_ios,vendor_junos',
    '--devices',
    '2',
    '--first-address',
    '600',
    '--username',
    'netops',
    '--password',
    'lab-pw',
    '--ssh-port',
    String(port.ssh),
    '--netconf-port',
    String(port.netconf),
    '--gnmi-port',
    String(port.gnmi),
    '--admin-port',
    String(port.admin),
  ]);
  await waitUntil('npm run sim', () => sim.output().includes('Ctrl-C to stop'), sim, 120_000);
}, 150_000);

afterAll(stopAll);

const target = (name: string, host: string): DeviceTarget => ({
  id: name,
  name,
  host,
  device_type: name.includes('junos') ? 'vendor_junos' : name.includes('ios') ? 'vendor_ios' : 'generic',
  credentials: { username: 'netops', password: 'lab-pw' },
  ports: { ssh: port.ssh, netconf: port.netconf, gnmi: port.gnmi },
  gnmi_tls: false,
  gnmi_skip_verify: false,
});

async function devices(): Promise<{ name: string; host: string; port: number; transport: string; device_type: string }[]> {
  return (await fetch(`${admin}/devices`)).json() as never;
}

describe('npm run sim (every transport)', () => {
  it('prints a table of N devices per dialect and transport, one address each, one port per transport', async () => {
    const rows = sim
      .output()
      .split('\n')
      .filter((l) => /^(NAME|sim-)/.test(l))
      .map((l) => l.trim().split(/\s+/));
    expect(rows[0]).toEqual(['NAME', 'ADDRESS', 'PORT', 'TRANSPORT', 'DIALECT', 'LOGIN']);
    expect(rows.slice(1).map((r) => [r[0], r[2], r[3], r[4], r[5]])).toEqual([
      ['sim-ios-1', String(port.ssh), 'ssh', 'vendor_ios', 'netops/lab-pw'],
      ['sim-ios-2', String(port.ssh), 'ssh', 'vendor_ios', 'netops/lab-pw'],
      ['sim-junos-1', String(port.ssh), 'ssh', 'vendor_junos', 'netops/lab-pw'],
      ['sim-junos-2', String(port.ssh), 'ssh', 'vendor_junos', 'netops/lab-pw'],
      ['sim-netconf-1', String(port.netconf), 'netconf', 'generic', 'netops/lab-pw'],
      ['sim-netconf-2', String(port.netconf), 'netconf', 'generic', 'netops/lab-pw'],
      ['sim-gnmi-1', String(port.gnmi), 'gnmi', 'generic', 'netops/lab-pw'],
      ['sim-gnmi-2', String(port.gnmi), 'gnmi', 'generic', 'netops/lab-pw'],
    ]);
    expect(new Set(rows.slice(1).map((r) => r[1])).size).toBe(8);
    expect(await devices()).toHaveLength(8);
  });

  it('a configuration replaced on the admin port is what each transport reads next', async () => {
    const byName = new Map((await devices()).map((d) => [d.name, d]));
    const put = (name: string, body: string) => fetch(`${admin}/devices/${name}/config`, { method: 'PUT', body });
    const get = async (name: string) => (await fetch(`${admin}/devices/${name}/config`)).text();

    const ios = await get('sim-ios-1');
    expect(ios).toMatch(/^hostname sim-ios-1$/m);
    expect((await put('sim-ios-1', ios.replace(/^hostname .*$/m, 'hostname core-1'))).status).toBe(200);
    const ssh = await sshCliDriver.open(target('sim-ios-1', byName.get('sim-ios-1')!.host));
    try {
      expect((await ssh.fetchConfig()).text).toMatch(/^hostname core-1$/m);
    } finally {
      await ssh.close();
    }

    const xml = '<system xmlns="urn:switchboard:sim"><hostname>nc-renamed</hostname></system>';
    expect((await put('sim-netconf-1', xml)).status).toBe(200);
    const nc = await netconfDriver.open(target('sim-netconf-1', byName.get('sim-netconf-1')!.host));
    try {
      expect((await nc.fetchConfig()).text).toContain('<hostname>nc-renamed</hostname>');
    } finally {
      await nc.close();
    }

    expect((await put('sim-gnmi-1', JSON.stringify({ system: { config: { hostname: 'gnmi-renamed' } } }))).status).toBe(200);
    const gnmi = await gnmiDriver.open(target('sim-gnmi-1', byName.get('sim-gnmi-1')!.host));
    try {
      expect(JSON.parse((await gnmi.fetchConfig()).text)).toMatchObject({ system: { config: { hostname: 'gnmi-renamed' } } });
    } finally {
      await gnmi.close();
    }
  });

  it('answers a person-readable 4xx to a bad change and leaves the device as it was', async () => {
    const before = await (await fetch(`${admin}/devices/sim-gnmi-2/config`)).text();
    const bad = await fetch(`${admin}/devices/sim-gnmi-2/config`, { method: 'PUT', body: 'hostname x' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('sim-gnmi-2: configuration refused: a gNMI device takes its configuration as one JSON object');
    expect(await (await fetch(`${admin}/devices/sim-gnmi-2/config`)).text()).toBe(before);

    const badXml = await fetch(`${admin}/devices/sim-netconf-2/config`, { method: 'PUT', body: '<system><unclosed>' });
    expect(badXml.status).toBe(400);
    const empty = await fetch(`${admin}/devices/sim-ios-2/config`, { method: 'PUT', body: '  ' });
    expect(empty.status).toBe(400);
    const unknown = await fetch(`${admin}/devices/sim-nope-9/config`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('no simulated device named "sim-nope-9"');
  });
});
