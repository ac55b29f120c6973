import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DriverError } from '../../agent/src/drivers/types';
import { discoveryDialect, DISCOVERY_DIALECT_TYPES } from '../../agent/src/discovery/dialects';
import { cleanLines } from '../../agent/src/discovery/engine';
import { hostKey, interfaceKey, normalizeMac, parseAge, parseSpeed } from '../../shared/src/discovery/normalize';
import { parseSection } from '../../agent/src/discovery/parse';
import type { SectionName } from '../../shared/src/discovery/records';
import { pollOverCli } from '../../agent/src/discovery/ssh-poll';
import { SIM_DISCOVERY_COMMANDS, simModel } from '../sim/ssh/discovery-data';
import { matchCommand } from '../sim/ssh/cli';

/**
 * The per-dialect parsers on captured-style output (test/fixtures/discovery/<dialect>/<command>/<section>.txt):
 * normal tables, empty tables (<section>-empty.txt), pager residue left in the text (the IOS
 * MAC table, XE, NX-OS, Junos and EOS captures carry it) and output cut short.
 */
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'discovery');
const sectionOf = (file: string) => file.replace(/(-[a-z]+)?\.txt$/, '') as SectionName;
/** The corpus folder of the command a section runs (test/fixtures/discovery/<dialect>/<command>/). */
const folderOf = (dialect: string, file: string) =>
  discoveryDialect(dialect)
    [sectionOf(file)]!.command.replace(/[^A-Za-z0-9]+/g, '-')
    .toLowerCase();
const read = (dialect: string, file: string) => readFileSync(join(FIXTURES, dialect, folderOf(dialect, file), file), 'utf8');

const parse = (dialect: string, file: string, vlanIds?: Map<string, number>): { records: any[]; skipped: number } =>
  parseSection(dialect, sectionOf(file), read(dialect, file), vlanIds);

/** Record counts of every fixture; any line that looks like data and is not parsed counts against it. */
const COUNTS: Record<string, Record<string, number>> = {
  vendor_ios: {
    'interfaces.txt': 7,
    'interfaces-truncated.txt': 2,
    'cdp.txt': 2,
    'cdp-empty.txt': 0,
    'lldp.txt': 2,
    'arp.txt': 5,
    'arp-empty.txt': 0,
    'mac.txt': 6,
    'mac-paged.txt': 6,
    'vlans.txt': 6,
  },
  vendor_xe: {
    'interfaces.txt': 3,
    'cdp.txt': 1,
    'lldp.txt': 1,
    'lldp-empty.txt': 0,
    'arp.txt': 4,
    'mac.txt': 2,
    'mac-empty.txt': 0,
    'vlans.txt': 3,
  },
  vendor_nxos: { 'interfaces.txt': 5, 'cdp.txt': 1, 'lldp.txt': 2, 'arp.txt': 3, 'arp-empty.txt': 0, 'mac.txt': 4, 'vlans.txt': 3 },
  vendor_xr: { 'interfaces.txt': 4, 'cdp.txt': 1, 'lldp.txt': 1, 'arp.txt': 4 },
  vendor_eos: { 'interfaces.txt': 5, 'lldp.txt': 2, 'arp.txt': 4, 'mac.txt': 3, 'mac-empty.txt': 0, 'vlans.txt': 3 },
  vendor_junos: { 'interfaces.txt': 3, 'lldp.txt': 2, 'lldp-empty.txt': 0, 'arp.txt': 3, 'mac.txt': 3, 'vlans.txt': 3 },
  vendor_panos: { 'interfaces.txt': 5, 'lldp.txt': 2, 'arp.txt': 3, 'mac.txt': 2, 'mac-empty.txt': 0 },
  vendor_fw: { 'interfaces.txt': 4, 'lldp.txt': 2, 'arp.txt': 3, 'arp-empty.txt': 0 },
  generic: { 'interfaces.txt': 2, 'lldp.txt': 1 },
  custom: { 'arp.txt': 2, 'vlans.txt': 1 },
};

describe('fixtures', () => {
  it('cover every dialect, and every supported section of the distinct formats', () => {
    expect(readdirSync(FIXTURES).sort()).toEqual([...DISCOVERY_DIALECT_TYPES].sort());
    for (const dialect of Object.keys(COUNTS))
      for (const file of Object.keys(COUNTS[dialect])) expect(read(dialect, file).length, `${dialect}/${file}`).toBeGreaterThan(0);
    for (const dialect of DISCOVERY_DIALECT_TYPES.filter((d) => d.startsWith('vendor_'))) {
      const supported = Object.entries(discoveryDialect(dialect))
        .filter(([, spec]) => spec)
        .map(([s]) => s);
      const covered = new Set(Object.keys(COUNTS[dialect]).map(sectionOf));
      expect(
        supported.filter((s) => !covered.has(s as SectionName)),
        dialect,
      ).toEqual([]);
    }
  });

  for (const [dialect, files] of Object.entries(COUNTS)) {
    for (const [file, count] of Object.entries(files)) {
      it(`${dialect}/${file}: ${count} record(s), no line left unparsed`, () => {
        const r = parse(dialect, file);
        expect(r.records).toHaveLength(count);
        expect(r.skipped).toBe(0);
      });
    }
  }
});

describe('records read from captured output', () => {
  it('IOS interfaces: status words, speed from the duplex line or BW, addresses, admin down', () => {
    const r = parse('vendor_ios', 'interfaces.txt').records;
    expect(r[2]).toEqual({
      name: 'GigabitEthernet1/0/1',
      description: 'UPLINK core-sw1 Te1/1/1',
      admin_status: 'up',
      oper_status: 'up',
      speed_mbps: 1000,
      duplex: 'full',
      mtu: 1500,
      mac_address: '0c:1a:2b:3c:4e:01',
      addresses: [],
    });
    expect(r[1]).toMatchObject({ name: 'Vlan20', description: 'Voice VLAN - floor 3', addresses: ['172.16.20.1/24'] });
    expect(r[3]).toMatchObject({ name: 'GigabitEthernet1/0/2', admin_status: 'up', oper_status: 'down', speed_mbps: 10, duplex: 'auto' });
    expect(r[5]).toMatchObject({ name: 'GigabitEthernet1/0/4', admin_status: 'down', oper_status: 'down' });
    expect(r[6]).toMatchObject({ name: 'Loopback0', mac_address: null, addresses: ['10.0.0.11/32'] });
  });

  it('CDP: domain names, phones with a spaced port id, XR with the port on its own line', () => {
    expect(parse('vendor_ios', 'cdp.txt').records).toEqual([
      {
        protocol: 'cdp',
        local_interface: 'GigabitEthernet1/0/1',
        remote_name: 'core-sw1.corp.example.com',
        remote_interface: 'TenGigabitEthernet1/1/1',
        remote_address: '10.0.0.1',
        remote_platform: 'cisco WS-C3850-24XS',
        remote_chassis_id: null,
      },
      {
        protocol: 'cdp',
        local_interface: 'GigabitEthernet1/0/3',
        remote_name: 'SEP001122334455',
        remote_interface: 'Port 1',
        remote_address: '172.16.20.55',
        remote_platform: 'Cisco IP Phone 8845',
        remote_chassis_id: null,
      },
    ]);
    expect(parse('vendor_nxos', 'cdp.txt').records[0]).toMatchObject({
      remote_name: 'leaf-2',
      local_interface: 'Ethernet1/1',
      remote_interface: 'Ethernet1/49',
      remote_address: '192.168.99.22',
    });
    expect(parse('vendor_xr', 'cdp.txt').records[0]).toMatchObject({
      remote_name: 'pe2',
      local_interface: 'GigabitEthernet0/0/0/0',
      remote_interface: 'GigabitEthernet0/0/0/1',
      remote_address: '10.255.0.2',
    });
  });

  it('LLDP: a neighbor without a system name falls back to its chassis id; "null" and "not advertised" are null', () => {
    const ios = parse('vendor_ios', 'lldp.txt').records;
    expect(ios[0]).toEqual({
      protocol: 'lldp',
      local_interface: 'Gi1/0/1',
      remote_name: 'core-sw1.corp.example.com',
      remote_interface: 'Te1/1/1',
      remote_address: '10.0.0.1',
      remote_platform: 'Cisco IOS Software [Fuji], Catalyst L3 Switch Software (CAT3K_CAA-UNIVERSALK9-M), Version 16.9.5',
      remote_chassis_id: '00:a7:42:01:8c:00',
    });
    expect(ios[1]).toMatchObject({ local_interface: 'Gi1/0/5', remote_name: '3c08.f6aa.0011', remote_address: null });
    expect(parse('vendor_nxos', 'lldp.txt').records[1]).toMatchObject({
      local_interface: 'Eth1/5',
      remote_name: 'b4a9.fc11.2233',
      remote_platform: null,
    });
    const eos = parse('vendor_eos', 'lldp.txt').records;
    expect(eos.map((n) => [n.local_interface, n.remote_name, n.remote_interface, n.remote_address])).toEqual([
      ['Ethernet1', 'spine1.dc1.example.net', 'Ethernet3', '192.168.99.11'],
      ['Management1', 'oob-sw1', 'ge-0/0/12', null],
    ]);
    expect(parse('vendor_junos', 'lldp.txt').records[1]).toMatchObject({
      local_interface: 'ge-0/0/5',
      remote_name: 'spine1.dc1.example.net',
      remote_interface: 'Ethernet12',
      remote_chassis_id: '00:1c:73:11:22:00',
    });
    expect(parse('vendor_panos', 'lldp.txt').records.map((n) => [n.local_interface, n.remote_name, n.remote_address])).toEqual([
      ['ethernet1/1', 'edge-sw1', '192.168.99.41'],
      ['ethernet1/2', 'core-rtr1', '10.255.20.1'],
    ]);
    expect(parse('vendor_fw', 'lldp.txt').records[1]).toMatchObject({ local_interface: 'port1', remote_name: 'isp-pe-07', remote_address: null });
  });

  it('ARP: ages in minutes, h:m:s or none; incomplete entries keep their address', () => {
    expect(parse('vendor_ios', 'arp.txt').records.map((a) => [a.ip_address, a.mac_address, a.interface, a.age_seconds])).toEqual([
      ['10.0.0.1', '00:a7:42:01:8c:41', 'GigabitEthernet1/0/1', 180],
      ['172.16.20.1', '0c:1a:2b:3c:4d:14', 'Vlan20', null],
      ['172.16.20.55', '00:11:22:33:44:55', 'Vlan20', 6720],
      ['172.16.20.77', null, null, 0],
      ['172.16.20.90', 'd4:be:d9:a0:1f:2e', 'Vlan20', 1020],
    ]);
    expect(parse('vendor_nxos', 'arp.txt').records[0]).toEqual({
      ip_address: '10.10.0.3',
      mac_address: '00:3a:9c:4d:77:c7',
      interface: 'Vlan10',
      age_seconds: 761,
    });
    expect(parse('vendor_eos', 'arp.txt').records[1]).toEqual({
      ip_address: '10.30.0.20',
      mac_address: '00:50:56:01:00:20',
      interface: 'Vlan30',
      age_seconds: 62,
    });
    expect(parse('vendor_junos', 'arp.txt').records[1]).toMatchObject({ ip_address: '10.40.0.10', interface: 'irb.40' });
    expect(parse('vendor_panos', 'arp.txt').records[2]).toMatchObject({ ip_address: '10.50.20.33', mac_address: null, interface: 'ethernet1/2.20' });
    expect(parse('vendor_xr', 'arp.txt').records[1]).toMatchObject({ ip_address: '10.1.12.2', age_seconds: 2467 });
  });

  it('MAC tables: All/- VLANs are null, spaced port names, Junos VLAN names resolved through the VLAN table', () => {
    expect(parse('vendor_ios', 'mac.txt').records[0]).toEqual({
      mac_address: '01:00:0c:cc:cc:cc',
      vlan: null,
      interface: 'CPU',
      entry_type: 'static',
    });
    expect(parse('vendor_nxos', 'mac.txt').records[1]).toEqual({
      mac_address: '00:3a:9c:4d:77:c7',
      vlan: 10,
      interface: 'vPC Peer-Link',
      entry_type: 'dynamic',
    });
    expect(parse('vendor_eos', 'mac.txt').records[2]).toEqual({ mac_address: '00:50:56:01:00:ff', vlan: 30, interface: 'Po1', entry_type: 'static' });
    const vlanIds = new Map(parse('vendor_junos', 'vlans.txt').records.map((v) => [v.name, v.vlan_id]));
    expect(parse('vendor_junos', 'mac.txt', vlanIds).records.map((m) => [m.vlan, m.interface, m.entry_type])).toEqual([
      [40, 'ge-0/0/3.0', 'dynamic'],
      [40, 'ge-0/0/4.0', 'dynamic'],
      [99, 'ge-0/0/9.0', 'static'],
    ]);
  });

  it('VLANs: ports wrapping onto continuation lines, empty VLANs, suspended ones', () => {
    const ios = parse('vendor_ios', 'vlans.txt').records;
    expect(ios[0].interfaces).toEqual(['Gi1/0/2', 'Gi1/0/4', 'Gi1/0/7', 'Gi1/0/8', 'Gi1/0/9', 'Gi1/0/10', 'Gi1/0/11', 'Gi1/0/12', 'Gi1/0/13']);
    expect(ios[2]).toEqual({ vlan_id: 30, name: 'PRINTERS', status: 'active', interfaces: [] });
    expect(ios[3]).toEqual({ vlan_id: 999, name: 'PARKING_LOT', status: 'suspended', interfaces: ['Gi1/0/24'] });
    expect(parse('vendor_junos', 'vlans.txt').records[0]).toEqual({
      vlan_id: 1,
      name: 'default',
      status: 'active',
      interfaces: ['ge-0/0/10.0', 'ge-0/0/11.0'],
    });
    expect(parse('vendor_eos', 'vlans.txt').records[1].interfaces).toEqual(['Cpu', 'Et7', 'Et8', 'Po1']);
  });

  it('other interface formats: NX-OS admin state, Junos logical units, PAN-OS merged tables, FortiOS masks', () => {
    expect(parse('vendor_nxos', 'interfaces.txt').records[3]).toMatchObject({
      name: 'Ethernet1/3',
      admin_status: 'down',
      oper_status: 'down',
      description: 'reserved',
    });
    expect(parse('vendor_nxos', 'interfaces.txt').records[1]).toMatchObject({ name: 'Ethernet1/1', speed_mbps: 25000, mtu: 9216 });
    const junos = parse('vendor_junos', 'interfaces.txt').records;
    expect(junos[0]).toEqual({
      name: 'ge-0/0/0',
      description: 'core-rtr2 ge-0/0/0',
      admin_status: 'up',
      oper_status: 'up',
      speed_mbps: 1000,
      duplex: 'full',
      mtu: 1514,
      mac_address: '2c:6b:f5:10:a0:01',
      addresses: ['10.20.0.1/31'],
    });
    expect(junos[1]).toMatchObject({ name: 'ge-0/0/1', admin_status: 'down', oper_status: 'down', speed_mbps: null });
    expect(junos[2]).toMatchObject({ name: 'lo0', addresses: ['10.255.20.1/32'] });
    const pan = parse('vendor_panos', 'interfaces.txt').records;
    expect(pan[0]).toMatchObject({
      name: 'ethernet1/1',
      oper_status: 'up',
      speed_mbps: 1000,
      mac_address: 'b4:0c:25:e0:a0:10',
      addresses: ['203.0.113.2/29'],
    });
    expect(pan[4]).toMatchObject({ name: 'ethernet1/2.20', addresses: ['10.50.20.1/24'] });
    const fw = parse('vendor_fw', 'interfaces.txt').records;
    expect(fw[0]).toMatchObject({ name: 'port1', admin_status: 'up', addresses: ['198.51.100.2/29'] });
    expect(fw[1]).toMatchObject({ description: 'LAN users', mac_address: '70:4c:a5:11:22:02' });
    expect(fw[2]).toMatchObject({ name: 'port3', admin_status: 'down', addresses: [] });
    expect(parse('vendor_eos', 'interfaces.txt').records[1]).toMatchObject({ name: 'Ethernet2', oper_status: 'down' });
    expect(parse('vendor_xr', 'interfaces.txt').records[3]).toMatchObject({
      name: 'GigabitEthernet0/0/0/1',
      admin_status: 'down',
      oper_status: 'down',
    });
  });
});

describe('pager residue and cut-off output', () => {
  it('a table read with the pager on parses like the clean one', () => {
    expect(read('vendor_ios', 'mac-paged.txt')).toContain('--More--');
    expect(parse('vendor_ios', 'mac-paged.txt').records).toEqual(parse('vendor_ios', 'mac.txt').records);
  });

  it('cleans the pager prompts of every dialect, ANSI and backspace erasure', () => {
    expect(cleanLines(' --More-- \b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b  20    0011.2233.4455    DYNAMIC     Gi1/0/3')).toEqual([
      '  20    0011.2233.4455    DYNAMIC     Gi1/0/3',
    ]);
    expect(cleanLines('\x1b[7m--More--\x1b[27m\r\x1b[K  MTU 1500 bytes')).toEqual(['  MTU 1500 bytes']);
    expect(cleanLines('---(more 42%)---\r                                        \r  Current address: x')).toEqual(['  Current address: x']);
    expect(cleanLines('\x1b[7mlines 1-23 \x1b[27m\r\x1b[Kethernet1/1')).toEqual(['ethernet1/1']);
  });

  it('a block cut in the middle keeps what was read, and nothing after it', () => {
    const r = parse('vendor_ios', 'interfaces-truncated.txt').records;
    expect(r.map((i) => i.name)).toEqual(['GigabitEthernet1/0/1', 'GigabitEthernet1/0/2']);
    expect(r[1]).toMatchObject({ oper_status: 'down', description: '' });
  });

  const KEY: Record<SectionName, string> = {
    interfaces: 'name',
    cdp: 'local_interface',
    lldp: 'local_interface',
    arp: 'ip_address',
    mac: 'mac_address',
    vlans: 'vlan_id',
  };
  for (const [dialect, files] of Object.entries(COUNTS)) {
    for (const file of Object.keys(files).filter((f) => !f.includes('-'))) {
      it(`${dialect}/${file} cut at every third of its length: whole records survive in order`, () => {
        const text = read(dialect, file);
        const full = parse(dialect, file).records as Record<string, unknown>[];
        const key = KEY[sectionOf(file)];
        for (const cut of [Math.floor(text.length / 3), Math.floor((2 * text.length) / 3)]) {
          const part = parseSection(dialect, sectionOf(file), text.slice(0, cut)).records as unknown as Record<string, unknown>[];
          expect(part.length).toBeLessThanOrEqual(full.length);
          expect(part.slice(0, -1).map((r) => r[key])).toEqual(full.slice(0, Math.max(0, part.length - 1)).map((r) => r[key]));
        }
      });
    }
  }
});

describe('the simulator answers every dialect consistently', () => {
  for (const dialect of DISCOVERY_DIALECT_TYPES) {
    it(`${dialect}: what its show commands print parses back to its model`, async () => {
      const commands = SIM_DISCOVERY_COMMANDS[dialect];
      const model = simModel('sim-5', dialect);
      const session = {
        run: async (command: string) => {
          const m = matchCommand(command, Object.keys(commands));
          if (!m || m === 'ambiguous') throw new DriverError('device', `the device rejected '${command}'`);
          return commands[m.key](model);
        },
      };
      const { sections, records } = await pollOverCli(session, dialect);
      expect(sections.filter((s) => s.status === 'failed')).toEqual([]);
      expect(sections.every((s) => s.skipped_lines === 0)).toBe(true);
      for (const port of model.ports) {
        const found = records.interfaces.find((i) => i.name === port.name);
        expect(found, port.name).toBeDefined();
        // PAN-OS shows no admin state, FortiOS no link state: those read as unknown.
        if (found!.admin_status !== 'unknown') expect(found!.admin_status, port.name).toBe(port.admin ? 'up' : 'down');
        if (found!.oper_status !== 'unknown') expect(found!.oper_status, port.name).toBe(port.oper ? 'up' : 'down');
      }
      for (const nb of model.neighbors) {
        const found = records.neighbors.filter(
          (n) => interfaceKey(n.local_interface) === interfaceKey(nb.port.name) || n.local_interface === nb.port.short,
        );
        expect(found.length, `${dialect} ${nb.port.name}`).toBeGreaterThan(0);
        for (const n of found) expect(hostKey(n.remote_name)).toBe(nb.remoteName);
      }
      const macOf = new Set(records.arp.map((a) => a.mac_address));
      for (const a of model.arp) expect(macOf.has(a.mac)).toBe(true);
      if (discoveryDialect(dialect).mac) expect(records.mac.map((m) => m.mac_address)).toEqual(expect.arrayContaining(model.macs.map((m) => m.mac)));
      if (discoveryDialect(dialect).vlans) expect(records.vlans.map((v) => v.vlan_id)).toEqual(model.vlans.map((v) => v.id));
    });
  }
});

describe('a poll over a CLI session', () => {
  const outputs: Record<string, string> = {
    'show interfaces': read('vendor_ios', 'interfaces.txt'),
    'show cdp neighbors detail': read('vendor_ios', 'cdp.txt'),
    'show ip arp': read('vendor_ios', 'arp.txt'),
  };
  it('fails only the section whose command the device rejects', async () => {
    const run = async (c: string) => {
      if (c === 'show lldp neighbors detail')
        throw new DriverError('device', "r1: the device rejected 'show lldp neighbors detail': % LLDP is not enabled");
      if (!(c in outputs)) return '';
      return outputs[c];
    };
    const { sections, records } = await pollOverCli({ run }, 'vendor_ios');
    expect(sections.map((s) => [s.name, s.status, s.records])).toEqual([
      ['interfaces', 'ok', 7],
      ['cdp', 'ok', 2],
      ['lldp', 'failed', 0],
      ['arp', 'ok', 5],
      ['mac', 'ok', 0],
      ['vlans', 'ok', 0],
    ]);
    expect(sections[2].error).toContain('LLDP is not enabled');
    expect(records.neighbors).toHaveLength(2);
  });

  it('fails the sections after a lost session without running them', async () => {
    const ran: string[] = [];
    const run = async (c: string) => {
      ran.push(c);
      if (c === 'show lldp neighbors detail') throw new DriverError('protocol', 'r1 (10.0.0.1:22): connection closed by the device');
      return outputs[c] ?? '';
    };
    const { sections } = await pollOverCli({ run }, 'vendor_ios');
    expect(ran).toEqual(['show interfaces', 'show cdp neighbors detail', 'show lldp neighbors detail']);
    expect(sections.filter((s) => s.status === 'failed').map((s) => s.name)).toEqual(['lldp', 'arp', 'mac', 'vlans']);
    expect(sections.find((s) => s.name === 'arp')?.error).toMatch(/^not run: the session ended earlier/);
  });

  it('reports sections a platform does not have as unsupported', async () => {
    const { sections } = await pollOverCli({ run: async () => '' }, 'vendor_xr');
    expect(sections.filter((s) => s.status === 'unsupported').map((s) => s.name)).toEqual(['mac', 'vlans']);
  });
});

describe('normalizers', () => {
  it('read MACs, speeds, ages and names in every notation', () => {
    for (const m of ['aabb.cc00.0100', 'AA-BB-CC-00-01-00', 'aa:bb:cc:0:1:0', 'aabbcc000100']) expect(normalizeMac(m)).toBe('aa:bb:cc:00:01:00');
    expect(normalizeMac('Incomplete')).toBeNull();
    expect([
      parseSpeed('1000Mb/s'),
      parseSpeed('10 Gb/s'),
      parseSpeed('1000mbps'),
      parseSpeed('a-100'),
      parseSpeed('SPEED_25GB'),
      parseSpeed('Auto-speed'),
      parseSpeed('ukn'),
    ]).toEqual([1000, 10000, 1000, 100, 25000, null, null]);
    expect([parseAge('5', 'minutes'), parseAge('00:05:12'), parseAge('0:01:02'), parseAge('1d2h'), parseAge('-')]).toEqual([
      300,
      312,
      62,
      93600,
      null,
    ]);
    expect(interfaceKey('Gi0/1')).toBe(interfaceKey('GigabitEthernet0/1'));
    expect(interfaceKey('Eth1/49')).toBe(interfaceKey('Ethernet1/49'));
    expect(hostKey('Core-SW1.corp.example.com')).toBe('core-sw1');
    expect(hostKey('10.0.0.1')).toBe('10.0.0.1');
  });
});
