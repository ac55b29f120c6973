/**
 * Discovery data for the simulators: one network model (interfaces, links, ARP, MAC table,
 * VLANs) per simulated device, rendered as each dialect's show commands and as an openconfig
 * tree for the gNMI target. Neighbors point at each other: device A's CDP/LLDP entry for B
 * names B's real hostname, interface and management address, and B's names A's.
 *
 * Devices are linked in a chain in the order they were registered with registerSimNetwork()
 * (port 2 of each device to port 1 of the next), or given explicit links. An unregistered
 * device named `<prefix>-<n>` is linked to `<prefix>-<n-1>` and `<prefix>-<n+1>` of its own
 * dialect, so a fleet from `npm run sim` is a chain without any set-up.
 */
import type { JsonObject } from '../../../agent/src/drivers/gnmi/json-tree';
import { registerSshCommand } from './cli';
// The `| json` forms register themselves beside the text forms (their renderers read this model).
import './discovery-json';

export interface SimNode {
  hostname: string;
  deviceType: string;
  /** Management address that neighbors advertise (default 10.255.x.y from the device number). */
  address?: string;
}

export interface SimLink {
  a: string;
  aPort: number;
  b: string;
  bPort: number;
}

interface Port {
  index: number;
  name: string;
  short: string;
  description: string;
  admin: boolean;
  oper: boolean;
  speed: number;
  mac: string;
  address: string | null;
  vlan: number | null;
}

interface Neighbor {
  port: Port;
  remoteName: string;
  remoteDomainName: string;
  remotePort: string;
  remoteAddress: string;
  remoteMac: string;
  remotePlatform: string;
  remoteChassis: string;
  localAddress: string;
}

export interface SimModel {
  hostname: string;
  deviceType: string;
  mgmtAddress: string;
  chassisMac: string;
  ports: Port[];
  /** The L3 interface of the users subnet (SVI or routed port). */
  users: { name: string; address: string; prefix: number; mac: string };
  loopback: { name: string; address: string };
  neighbors: Neighbor[];
  arp: { ip: string; mac: string; iface: string; ageSeconds: number }[];
  macs: { vlan: number; mac: string; port: string; type: 'dynamic' | 'static' }[];
  vlans: { id: number; name: string; ports: string[] }[];
}

// ---- the network ------------------------------------------------------------------------------

const nodes = new Map<string, SimNode & { n: number }>();
const links: SimLink[] = [];

/** Declares simulated devices (in chain order unless links are given) and their management addresses. */
export function registerSimNetwork(devices: SimNode[], explicitLinks?: SimLink[]): void {
  const start = nodes.size;
  devices.forEach((d, i) => nodes.set(d.hostname, { ...d, n: start + i + 1 }));
  if (explicitLinks) links.push(...explicitLinks);
  else for (let i = 0; i + 1 < devices.length; i++) links.push({ a: devices[i].hostname, aPort: 2, b: devices[i + 1].hostname, bPort: 1 });
}

/** Forgets every registered device and link. */
export function clearSimNetwork(): void {
  nodes.clear();
  links.length = 0;
}

const numberOf = (hostname: string) => Number(/(\d+)$/.exec(hostname)?.[1] ?? '1');
const hex2 = (n: number) => (n & 255).toString(16).padStart(2, '0');
const macOf = (n: number, a: number, b: number) => `52:54:${hex2(n >> 8)}:${hex2(n)}:${hex2(a)}:${hex2(b)}`;

function nodeOf(hostname: string, deviceType: string): SimNode & { n: number } {
  return nodes.get(hostname) ?? { hostname, deviceType, n: numberOf(hostname) };
}

const mgmtOf = (node: SimNode & { n: number }) => node.address ?? `10.255.${(node.n >> 8) & 255}.${node.n & 255}`;

/** Links of a device: registered ones, else the implicit chain by hostname number. */
type LinkEnd = { port: number; peer: SimNode & { n: number }; peerPort: number; subnet: number; low: boolean };
function linksOf(hostname: string, deviceType: string): LinkEnd[] {
  if (nodes.has(hostname)) {
    return links.flatMap((l, k): LinkEnd[] => {
      if (l.a === hostname) return [{ port: l.aPort, peer: nodeOf(l.b, deviceType), peerPort: l.bPort, subnet: k, low: true }];
      if (l.b === hostname) return [{ port: l.bPort, peer: nodeOf(l.a, deviceType), peerPort: l.aPort, subnet: k, low: false }];
      return [];
    });
  }
  const n = numberOf(hostname);
  const prefix = hostname.replace(/\d+$/, '');
  const out: LinkEnd[] = [];
  if (n > 1) out.push({ port: 1, peer: nodeOf(`${prefix}${n - 1}`, deviceType), peerPort: 2, subnet: 100_000 + n - 1, low: false });
  out.push({ port: 2, peer: nodeOf(`${prefix}${n + 1}`, deviceType), peerPort: 1, subnet: 100_000 + n, low: true });
  return out;
}

const linkAddress = (subnet: number, low: boolean) =>
  `10.${1 + ((subnet >> 14) & 63)}.${(subnet >> 6) & 255}.${((subnet & 63) << 2) + (low ? 1 : 2)}`;

// ---- naming per dialect -----------------------------------------------------------------------

interface Naming {
  port(i: number): string;
  short(i: number): string;
  svi: string | null;
  loopback: string;
  platform: string;
  speed: number;
}

const ios: Naming = {
  port: (i) => `GigabitEthernet0/${i}`,
  short: (i) => `Gi0/${i}`,
  svi: 'Vlan10',
  loopback: 'Loopback0',
  platform: 'Cisco-like C2960X',
  speed: 1000,
};
const NAMING: Record<string, Naming> = {
  vendor_ios: ios,
  vendor_xe: { ...ios, port: (i) => `GigabitEthernet1/0/${i}`, short: (i) => `Gi1/0/${i}`, platform: 'Cisco-like C9300-48P' },
  generic: ios,
  custom: ios,
  vendor_nxos: {
    port: (i) => `Ethernet1/${i}`,
    short: (i) => `Eth1/${i}`,
    svi: 'Vlan10',
    loopback: 'loopback0',
    platform: 'N9K-C93180YC-EX',
    speed: 10000,
  },
  vendor_xr: {
    port: (i) => `GigabitEthernet0/0/0/${i}`,
    short: (i) => `Gi0/0/0/${i}`,
    svi: null,
    loopback: 'Loopback0',
    platform: 'cisco ASR9K',
    speed: 1000,
  },
  vendor_eos: {
    port: (i) => `Ethernet${i}`,
    short: (i) => `Et${i}`,
    svi: 'Vlan10',
    loopback: 'Loopback0',
    platform: 'Arista-like DCS-7050SX3',
    speed: 10000,
  },
  vendor_junos: {
    port: (i) => `ge-0/0/${i}`,
    short: (i) => `ge-0/0/${i}`,
    svi: 'irb.10',
    loopback: 'lo0',
    platform: 'Juniper-like mx204',
    speed: 1000,
  },
  vendor_panos: {
    port: (i) => `ethernet1/${i}`,
    short: (i) => `ethernet1/${i}`,
    svi: null,
    loopback: 'loopback.1',
    platform: 'PA-3220',
    speed: 1000,
  },
  vendor_fw: { port: (i) => `port${i}`, short: (i) => `port${i}`, svi: null, loopback: 'loopback0', platform: 'FortiGate-like-60F', speed: 1000 },
};
const namingOf = (deviceType: string) => NAMING[deviceType] ?? ios;

const PORTS = 8;
const USERS_VLAN = 10;

/** The whole model of one device, deterministic from its hostname and the registered network. */
export function simModel(hostname: string, deviceType: string): SimModel {
  const node = nodeOf(hostname, deviceType);
  const naming = namingOf(deviceType);
  const n = node.n;
  const myLinks = linksOf(hostname, deviceType);
  const routed = naming.svi === null;
  const ports: Port[] = [];
  for (let i = 1; i <= PORTS; i++) {
    const link = myLinks.find((l) => l.port === i);
    const access = i >= 3 && i <= 5;
    ports.push({
      index: i,
      name: naming.port(i),
      short: naming.short(i),
      description: link
        ? `to ${link.peer.hostname} ${namingOf(link.peer.deviceType).port(link.peerPort)}`
        : access
          ? `users-${i - 2}`
          : i === 7
            ? 'spare (shut)'
            : '',
      admin: i !== 7,
      oper: Boolean(link) || access,
      speed: naming.speed,
      mac: macOf(n, 1, i),
      address: link ? `${linkAddress(link.subnet, link.low)}/30` : null,
      vlan: link ? null : access || i === 6 || i === 8 ? (access ? USERS_VLAN : 1) : null,
    });
  }
  const usersNet = `10.${100 + ((n >> 8) & 63)}.${n & 255}`;
  const usersIf = routed ? ports[2] : null;
  if (usersIf) {
    usersIf.address = `${usersNet}.1/24`;
    usersIf.vlan = null;
  }
  const users = { name: naming.svi ?? ports[2].name, address: `${usersNet}.1`, prefix: 24, mac: routed ? ports[2].mac : macOf(n, 2, USERS_VLAN) };
  const neighbors: Neighbor[] = myLinks.map((l) => {
    const peerNaming = namingOf(l.peer.deviceType);
    return {
      port: ports[l.port - 1],
      remoteName: l.peer.hostname,
      remoteDomainName: `${l.peer.hostname}.lab.example`,
      remotePort: peerNaming.port(l.peerPort),
      remoteAddress: mgmtOf(l.peer),
      remoteMac: macOf(l.peer.n, 1, l.peerPort),
      remotePlatform: peerNaming.platform,
      remoteChassis: macOf(l.peer.n, 0, 0),
      localAddress: linkAddress(l.subnet, !l.low),
    };
  });
  const hosts = [3, 4, 5].map((i, k) => ({
    ip: `${usersNet}.${11 + k}`,
    mac: `02:00:${hex2(n >> 8)}:${hex2(n)}:00:${hex2(k + 1)}`,
    port: ports[i - 1],
  }));
  const arp = [
    ...neighbors.map((nb, k) => ({ ip: nb.localAddress, mac: nb.remoteMac, iface: nb.port.name, ageSeconds: 60 * (k + 2) })),
    ...hosts.map((h, k) => ({ ip: h.ip, mac: h.mac, iface: users.name, ageSeconds: 60 * (k + 1) })),
  ];
  const macs = routed
    ? []
    : [
        ...hosts.map((h) => ({ vlan: USERS_VLAN, mac: h.mac, port: h.port.short, type: 'dynamic' as const })),
        ...neighbors.map((nb) => ({ vlan: 1, mac: nb.remoteMac, port: nb.port.short, type: 'dynamic' as const })),
      ];
  const vlans = routed
    ? []
    : [
        { id: 1, name: 'default', ports: ports.filter((p) => p.vlan === 1).map((p) => p.short) },
        { id: USERS_VLAN, name: 'users', ports: ports.filter((p) => p.vlan === USERS_VLAN).map((p) => p.short) },
        { id: 20, name: 'voice', ports: [] },
        { id: 99, name: 'mgmt', ports: [] },
      ];
  return {
    hostname,
    deviceType,
    mgmtAddress: mgmtOf(node),
    chassisMac: macOf(n, 0, 0),
    ports,
    users,
    loopback: { name: naming.loopback, address: mgmtOf(node) },
    neighbors,
    arp,
    macs,
    vlans,
  };
}

// ---- text helpers -----------------------------------------------------------------------------

export const dotted = (mac: string) => mac.replace(/:/g, '').replace(/(....)(....)(....)/, '$1.$2.$3');
const pad = (s: string | number, n: number) => String(s).padEnd(n);
const lines = (...ls: (string | false | null | undefined)[]) => ls.filter((l): l is string => typeof l === 'string').join('\n') + '\n';
export const hms = (s: number) => [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60].map((v) => String(v).padStart(2, '0')).join(':');
const prefixMask = (p: number) => [0, 1, 2, 3].map((i) => (p >= 8 * (i + 1) ? 255 : p <= 8 * i ? 0 : 256 - 2 ** (8 - (p - 8 * i)))).join('.');
const gbps = (mbps: number) => (mbps >= 1000 ? `${mbps / 1000}Gb/s` : `${mbps}Mb/s`);

/** Interface entries (ports, users SVI, loopback) in one list for the renderers. */
export function allInterfaces(
  m: SimModel,
): { name: string; description: string; admin: boolean; oper: boolean; speed: number | null; mac: string | null; address: string | null }[] {
  const svi = m.ports.some((p) => p.name === m.users.name)
    ? []
    : [
        {
          name: m.users.name,
          description: 'users',
          admin: true,
          oper: true,
          speed: null,
          mac: m.users.mac,
          address: `${m.users.address}/${m.users.prefix}`,
        },
      ];
  return [
    ...m.ports.map((p) => ({
      name: p.name,
      description: p.description,
      admin: p.admin,
      oper: p.oper,
      speed: p.speed,
      mac: p.mac,
      address: p.address,
    })),
    ...svi,
    { name: m.loopback.name, description: 'management', admin: true, oper: true, speed: null, mac: null, address: `${m.loopback.address}/32` },
  ];
}

// ---- IOS-like (ios, xe, xr, eos, generic) -------------------------------------------------------

function iosInterfaces(m: SimModel): string {
  const eos = m.deviceType === 'vendor_eos';
  return allInterfaces(m)
    .map((i) => {
      const state = !i.admin
        ? 'administratively down, line protocol is down (disabled)'
        : i.oper
          ? `up, line protocol is up${eos ? ' (connected)' : ''}`
          : `down, line protocol is down${eos ? ' (notconnect)' : ''}`;
      return lines(
        `${i.name} is ${state}`,
        i.mac
          ? `  Hardware is ${eos ? 'Ethernet' : 'Gigabit Ethernet'}, address is ${dotted(i.mac)} (bia ${dotted(i.mac)})`
          : '  Hardware is Loopback',
        i.description && `  Description: ${i.description}`,
        i.address && `  Internet address is ${i.address}`,
        `  MTU ${i.mac ? 1500 : 1514} bytes, BW ${(i.speed ?? 8000) * 1000} Kbit/sec, DLY 10 usec,`,
        '     reliability 255/255, txload 1/255, rxload 1/255',
        '  Encapsulation ARPA, loopback not set',
        i.speed !== null &&
          (i.oper
            ? `  Full-duplex, ${gbps(i.speed)}, media type is 10/100/1000BaseTX`
            : '  Auto-duplex, Auto-speed, media type is 10/100/1000BaseTX'),
        '  Last input 00:00:01, output 00:00:00, output hang never',
        '     5 minute input rate 1000 bits/sec, 2 packets/sec',
      );
    })
    .join('');
}

function cdpDetail(m: SimModel): string {
  const xr = m.deviceType === 'vendor_xr';
  const nx = m.deviceType === 'vendor_nxos';
  return m.neighbors
    .map((nb) =>
      lines(
        '-------------------------',
        nx ? `Device ID:${nb.remoteName}(FOX2222A0BC)` : `Device ID: ${nb.remoteDomainName}`,
        xr && `SysName : ${nb.remoteName}`,
        nx ? 'Interface address(es):' : 'Entry address(es): ',
        `  ${nx || xr ? 'IPv4 Address' : 'IP address'}: ${nb.remoteAddress}`,
        `Platform: ${nb.remotePlatform},  Capabilities: Router Switch IGMP `,
        xr ? `Interface: ${nb.port.name}` : `Interface: ${nb.port.name},  Port ID (outgoing port): ${nb.remotePort}`,
        xr && `Port ID (outgoing port): ${nb.remotePort}`,
        'Holdtime : 147 sec',
        '',
        'Version :',
        `${nb.remotePlatform} Software, Version 15.2(7)E8`,
        '',
        'advertisement version: 2',
        'Native VLAN: 1',
        'Duplex: full',
        '',
      ),
    )
    .join('');
}

function lldpDetail(m: SimModel): string {
  const t = m.deviceType;
  if (t === 'vendor_nxos') {
    return (
      lines(
        'Capability codes:',
        '  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device',
        '  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other',
        'Device ID            Local Intf      Hold-time  Capability  Port ID  ',
        '',
      ) +
      m.neighbors
        .map((nb) =>
          lines(
            `Chassis id: ${dotted(nb.remoteChassis)}`,
            `Port id: ${nb.remotePort}`,
            `Local Port id: ${nb.port.short}`,
            `Port Description: to ${m.hostname}`,
            `System Name: ${nb.remoteName}`,
            `System Description: ${nb.remotePlatform}`,
            'Time remaining: 101 seconds',
            'System Capabilities: B, R',
            'Enabled Capabilities: B, R',
            `Management Address: ${nb.remoteAddress}`,
            'Management Address IPV6: not advertised',
            'Vlan ID: 1',
            '',
          ),
        )
        .join('') +
      lines('', `Total entries displayed: ${m.neighbors.length}`)
    );
  }
  if (t === 'vendor_eos') {
    return (
      lines(`Last table change time   : 0:12:34 ago`, `Number of table inserts  : ${m.neighbors.length}`, '') +
      m.neighbors
        .map((nb) =>
          lines(
            `Interface ${nb.port.name} detected 1 LLDP neighbors:`,
            '',
            `  Neighbor ${dotted(nb.remoteChassis)}/${nb.remotePort}, age 3 seconds`,
            '  Discovered 1 day, 2:03:04 ago; Last changed 1 day, 2:03:04 ago',
            '  - Chassis ID type: MAC address (4)',
            `    Chassis ID     : ${dotted(nb.remoteChassis)}`,
            '  - Port ID type: Interface name (5)',
            `    Port ID        : "${nb.remotePort}"`,
            '  - Time To Live: 120 seconds',
            `  - Port Description: "to ${m.hostname}"`,
            `  - System Name: "${nb.remoteName}"`,
            `  - System Description: "${nb.remotePlatform}"`,
            '  - System Capabilities : Bridge, Router',
            '    Enabled Capabilities: Bridge, Router',
            '  - Management Address Subtype: IPv4 (1)',
            `    Management Address        : ${nb.remoteAddress}`,
            '    Interface Number Subtype  : ifIndex (2)',
            '',
          ),
        )
        .join('')
    );
  }
  const xr = t === 'vendor_xr';
  return (
    lines('Capability codes:', '        (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device', '') +
    m.neighbors
      .map((nb) =>
        lines(
          '------------------------------------------------',
          xr ? `Local Interface: ${nb.port.name}` : `Local Intf: ${nb.port.short}`,
          `Chassis id: ${dotted(nb.remoteChassis)}`,
          `Port id: ${nb.remotePort}`,
          `Port Description: to ${m.hostname}`,
          `System Name: ${nb.remoteName}`,
          '',
          'System Description: ',
          `${nb.remotePlatform} Software`,
          '',
          'Time remaining: 112 seconds',
          'System Capabilities: B,R',
          'Enabled Capabilities: R',
          xr ? 'Management Addresses:' : 'Management Addresses:',
          xr ? `  IPv4 address: ${nb.remoteAddress}` : `    IP: ${nb.remoteAddress}`,
          'Auto Negotiation - supported, enabled',
          '',
        ),
      )
      .join('') +
    lines('', `Total entries displayed: ${m.neighbors.length}`)
  );
}

function iosArp(m: SimModel): string {
  const own = allInterfaces(m).filter((i) => i.address && i.mac);
  return lines(
    'Protocol  Address          Age (min)  Hardware Addr   Type   Interface',
    ...own.map((i) => `Internet  ${pad(i.address!.split('/')[0], 17)}-   ${dotted(i.mac!)}  ARPA   ${i.name}`),
    ...m.arp.map((a) => `Internet  ${pad(a.ip, 17)}${pad(Math.round(a.ageSeconds / 60), 4)}${dotted(a.mac)}  ARPA   ${a.iface}`),
  );
}

function iosMac(m: SimModel): string {
  const eos = m.deviceType === 'vendor_eos';
  return lines(
    '          Mac Address Table',
    '-------------------------------------------',
    '',
    eos ? 'Vlan    Mac Address       Type        Ports      Moves   Last Move' : 'Vlan    Mac Address       Type        Ports',
    eos ? '----    -----------       ----        -----      -----   ---------' : '----    -----------       --------    -----',
    ...m.macs.map(
      (e) =>
        `${String(e.vlan).padStart(4)}    ${dotted(e.mac)}    ${pad(e.type.toUpperCase(), 12)}${eos ? `${pad(e.port, 11)}1       0:00:12 ago` : e.port}`,
    ),
    `Total Mac Addresses for this criterion: ${m.macs.length}`,
  );
}

function iosVlans(m: SimModel): string {
  const rows = m.vlans.flatMap((v) => {
    const chunks: string[][] = [];
    for (let i = 0; i < v.ports.length; i += 4) chunks.push(v.ports.slice(i, i + 4));
    const first = `${pad(v.id, 5)}${pad(v.name, 33)}${pad('active', 10)}${(chunks[0] ?? []).join(', ')}`;
    return [first.trimEnd(), ...chunks.slice(1).map((c) => `${' '.repeat(48)}${c.join(', ')}`)];
  });
  return lines(
    '',
    'VLAN Name                             Status    Ports',
    '---- -------------------------------- --------- -------------------------------',
    ...rows,
  );
}

// ---- NX-OS ------------------------------------------------------------------------------------

function nxInterfaces(m: SimModel): string {
  return allInterfaces(m)
    .map((i) =>
      lines(
        `${i.name} is ${i.admin ? (i.oper ? 'up' : 'down (Link not connected)') : 'down (Administratively down)'}`,
        `admin state is ${i.admin ? 'up' : 'down'}, Dedicated Interface`,
        i.mac && `  Hardware: 100/1000/10000/25000 Ethernet, address: ${dotted(i.mac)} (bia ${dotted(i.mac)})`,
        i.description && `  Description: ${i.description}`,
        i.address && `  Internet Address is ${i.address}`,
        `  MTU 1500 bytes, BW ${(i.speed ?? 8000) * 1000} Kbit , DLY 10 usec`,
        '  reliability 255/255, txload 1/255, rxload 1/255',
        i.speed !== null && (i.oper ? `  full-duplex, ${i.speed / 1000} Gb/s, media type is 10G` : '  auto-duplex, auto-speed'),
        '  Beacon is turned off',
        '',
      ),
    )
    .join('');
}

function nxArp(m: SimModel): string {
  return lines(
    '',
    'Flags: * - Adjacencies learnt on non-active FHRP router',
    '',
    'IP ARP Table for context default',
    `Total number of entries: ${m.arp.length}`,
    'Address         Age       MAC Address     Interface       Flags',
    ...m.arp.map(
      (a) => `${pad(a.ip, 16)}${pad(hms(a.ageSeconds), 10)}${pad(dotted(a.mac), 16)}${m.ports.find((p) => p.name === a.iface)?.short ?? a.iface}`,
    ),
  );
}

function nxMac(m: SimModel): string {
  return lines(
    'Legend: ',
    '        * - primary entry, G - Gateway MAC, (R) - Routed MAC, O - Overlay MAC',
    '        age - seconds since last seen,+ - primary entry using vPC Peer-Link,',
    '        (T) - True, (F) - False, C - ControlPlane MAC, ~ - vsan',
    '   VLAN     MAC Address      Type      age     Secure NTFY Ports',
    '---------+-----------------+--------+---------+------+----+------------------',
    ...m.macs.map((e) => `*${String(e.vlan).padStart(5)}     ${dotted(e.mac)}   ${pad(e.type, 9)}0         F      F    ${e.port}`),
    `G    -     ${dotted(m.chassisMac)}   static   -         F      F    sup-eth1(R)`,
  );
}

// ---- IOS-XR -----------------------------------------------------------------------------------

function xrArp(m: SimModel): string {
  const own = allInterfaces(m).filter((i) => i.address && i.mac);
  return lines(
    '',
    '-------------------------------------------------------------------------------',
    '0/0/CPU0',
    '-------------------------------------------------------------------------------',
    'Address         Age        Hardware Addr   State      Type  Interface',
    ...own.map((i) => `${pad(i.address!.split('/')[0], 16)}-          ${dotted(i.mac!)}  Interface  ARPA  ${i.name}`),
    ...m.arp.map((a) => `${pad(a.ip, 16)}${pad(hms(a.ageSeconds), 11)}${dotted(a.mac)}  Dynamic    ARPA  ${a.iface}`),
  );
}

// ---- EOS --------------------------------------------------------------------------------------

function eosArp(m: SimModel): string {
  return lines(
    'Address         Age (sec)  Hardware Addr   Interface',
    ...m.arp.map((a) => {
      const port = m.macs.find((e) => e.mac === a.mac)?.port;
      return (
        `${pad(a.ip, 16)}${pad(hms(a.ageSeconds).replace(/^00:/, '0:'), 11)}${dotted(a.mac)}  ` +
        `${a.iface}${port && a.iface.startsWith('Vlan') ? `, ${namingOf(m.deviceType).port(Number(port.replace(/\D+/, '')))}` : ''}`
      );
    }),
  );
}

function eosVlans(m: SimModel): string {
  return lines(
    'VLAN  Name                             Status    Ports',
    '----- -------------------------------- --------- -------------------------------',
    ...m.vlans.map((v) => `${pad(v.id, 6)}${pad(v.name, 33)}${pad('active', 10)}${v.ports.join(', ')}`.trimEnd()),
  );
}

// ---- Junos ------------------------------------------------------------------------------------

function junosInterfaces(m: SimModel): string {
  return allInterfaces(m)
    .map((i) => {
      const [ip, plen] = (i.address ?? '/').split('/');
      const base = ip.split('.').slice(0, 3).join('.');
      return lines(
        `Physical interface: ${i.name.replace(/\.\d+$/, '')}, ${i.admin ? 'Enabled' : 'Administratively down'}, Physical link is ${i.oper ? 'Up' : 'Down'}`,
        '  Interface index: 149, SNMP ifIndex: 526',
        i.description && `  Description: ${i.description}`,
        `  Link-level type: Ethernet, MTU: 1514, LAN-PHY mode, Speed: ${i.speed ? `${i.speed}mbps` : 'Unlimited'}, BPDU Error: None, Loop ` +
          `Detect PDU Error: None, Duplex: Full-Duplex, MAC-REWRITE Error: None, Loopback: Disabled, Source filtering: Disabled, Flow control: Enabled`,
        i.mac && `  Current address: ${i.mac}, Hardware address: ${i.mac}`,
        '  Last flapped   : 2024-01-01 12:00:00 UTC (1w0d 00:00 ago)',
        '',
        i.address !== null && `  Logical interface ${i.name.includes('.') ? i.name : `${i.name}.0`} (Index 333) (SNMP ifIndex 527)`,
        i.address !== null && '    Flags: Up SNMP-Traps 0x4004000 Encapsulation: ENET2',
        i.address !== null && '    Protocol inet, MTU: 1500',
        i.address !== null && '      Addresses, Flags: Is-Preferred Is-Primary',
        i.address !== null &&
          (plen === '32'
            ? `        Local: ${ip}`
            : `        Destination: ${base}.${Number(ip.split('.')[3]) & ~(2 ** (32 - Number(plen)) - 1)}/${plen}, Local: ${ip}, Broadcast: ${base}.255`),
        '',
      );
    })
    .join('');
}

const junosUnit = (name: string) => (name.includes('.') ? name : `${name}.0`);

function junosLldp(m: SimModel): string {
  return lines(
    'Local Interface    Parent Interface    Chassis Id          Port info          System Name',
    ...m.neighbors.map((nb) => `${pad(nb.port.name, 19)}${pad('-', 20)}${pad(nb.remoteChassis, 20)}${pad(nb.remotePort, 19)}${nb.remoteName}`),
  );
}

function junosArp(m: SimModel): string {
  return lines(
    'MAC Address       Address         Interface                Flags',
    ...m.arp.map((a) => `${a.mac} ${pad(a.ip, 16)}${pad(junosUnit(a.iface), 25)}none`),
    `Total entries: ${m.arp.length}`,
  );
}

function junosMac(m: SimModel): string {
  const name = (id: number) => m.vlans.find((v) => v.id === id)?.name ?? String(id);
  return lines(
    '',
    'MAC flags (S - static MAC, D - dynamic MAC, L - locally learned, P - Persistent static',
    '           SE - statistics enabled, NM - non configured MAC, R - remote PE MAC, O - ovsdb MAC)',
    '',
    '',
    `Ethernet switching table : ${m.macs.length} entries, ${m.macs.length} learned`,
    'Routing instance : default-switch',
    '   Vlan                MAC                 MAC         Age    Logical                NH        RTR ',
    '   name                address             flags              interface              Index     ID',
    ...m.macs.map((e) => `   ${pad(name(e.vlan), 20)}${pad(e.mac, 20)}${pad('D', 10)}-   ${pad(junosUnit(e.port), 23)}0         0       `),
  );
}

function junosVlans(m: SimModel): string {
  return lines(
    '',
    'Routing instance        VLAN name             Tag          Interfaces',
    ...m.vlans.flatMap((v) => [
      `${pad('default-switch', 24)}${pad(v.name, 22)}${pad(v.id, 13)}`,
      ...v.ports.map((p) => `${' '.repeat(59)}${junosUnit(p)}*`),
    ]),
  );
}

// ---- PAN-OS -----------------------------------------------------------------------------------

function panInterfaces(m: SimModel): string {
  const all = allInterfaces(m);
  return lines(
    `total configured hardware interfaces: ${m.ports.length}`,
    '',
    'name                    id    speed/duplex/state            mac address',
    '--------------------------------------------------------------------------------',
    ...m.ports.map(
      (p, k) =>
        `${pad(p.name, 24)}${pad(16 + k, 6)}${pad(p.oper ? `${p.speed}/full/up` : p.admin ? 'ukn/ukn/down(autoneg)' : 'ukn/ukn/down(power-down)', 30)}${p.mac}`,
    ),
    '',
    'aggregation groups: 0',
    '',
    `total configured logical interfaces: ${all.length}`,
    '',
    'name                id    vsys zone             forwarding               tag    address',
    '------------------- ----- ---- ---------------- ------------------------ ------ ------------------',
    ...all.map(
      (i, k) =>
        `${pad(i.name, 20)}${pad(16 + k, 6)}${pad(1, 5)}${pad(i.address ? 'trust' : '', 17)}${pad('vr:default', 25)}${pad(0, 7)}${i.address ?? 'N/A'}`,
    ),
  );
}

function panLldp(m: SimModel): string {
  return m.neighbors
    .map((nb) =>
      lines(
        nb.port.name,
        '------------------------------------------------------------------------------',
        '  Peer   1: ',
        `    Chassis ID: ${nb.remoteChassis}`,
        `    Port ID: ${nb.remotePort}`,
        `    System Name: ${nb.remoteName}`,
        `    System Description: ${nb.remotePlatform}`,
        `    Management Address: ${nb.remoteAddress}`,
        '',
      ),
    )
    .join('');
}

function panArp(m: SimModel): string {
  return lines(
    'maximum of entries supported :      2500',
    'default timeout:                    1800 seconds',
    `total ARP entries in table :        ${m.arp.length}`,
    `total ARP entries shown :           ${m.arp.length}`,
    'status: s - static, c - complete, e - expiring, i - incomplete',
    '',
    'interface         ip address      hw address        port         status   ttl',
    '--------------------------------------------------------------------------------',
    ...m.arp.map((a) => `${pad(a.iface, 18)}${pad(a.ip, 16)}${pad(a.mac, 18)}${pad(a.iface, 14)}${pad('c', 9)}${1800 - a.ageSeconds}`),
  );
}

// ---- FortiOS ----------------------------------------------------------------------------------

function fwInterfaces(m: SimModel): string {
  return allInterfaces(m)
    .map((i) => {
      const [ip, plen] = (i.address ?? '0.0.0.0/0').split('/');
      return lines(
        `== [ ${i.name} ]`,
        `name: ${i.name}   mode: static    ip: ${ip} ${prefixMask(Number(plen))}   status: ${i.admin ? 'up' : 'down'}    netbios-forward: ` +
          `disable    type: ${i.mac ? 'physical' : 'loopback'}   ` +
          `${i.description ? `description: "${i.description}"   ` : ''}${i.speed ? `speed: ${i.speed}Mbps   ` : ''}` +
          `${i.mac ? `macaddr: ${i.mac}   ` : ''}mtu: 1500    src-check: enable    explicit-web-proxy: disable    `,
      );
    })
    .join('');
}

function fwLldp(m: SimModel): string {
  return lines(
    'Neighbor   TTL   Chassis ID          Port ID          System Name      Mgmt Address',
    ...m.neighbors.map(
      (nb) =>
        `${pad(nb.port.name, 11)}${pad(120, 6)}${pad(nb.remoteChassis, 20)}${pad(nb.remotePort, 17)}${pad(nb.remoteName, 17)}${nb.remoteAddress}`,
    ),
  );
}

function fwArp(m: SimModel): string {
  return lines(
    'Address           Age(min)   Hardware Addr      Interface',
    ...m.arp.map((a) => `${pad(a.ip, 18)}${pad(Math.round(a.ageSeconds / 60), 11)}${pad(a.mac, 18)} ${a.iface}`),
  );
}

// ---- registration -----------------------------------------------------------------------------

type Render = (m: SimModel) => string;
const IOS_COMMANDS: Record<string, Render> = {
  'show interfaces': iosInterfaces,
  'show cdp neighbors detail': cdpDetail,
  'show lldp neighbors detail': lldpDetail,
  'show ip arp': iosArp,
  'show mac address-table': iosMac,
  'show vlan brief': iosVlans,
};

/** Every discovery show command of every simulated dialect. */
export const SIM_DISCOVERY_COMMANDS: Record<string, Record<string, Render>> = {
  vendor_ios: IOS_COMMANDS,
  vendor_xe: IOS_COMMANDS,
  generic: IOS_COMMANDS,
  custom: IOS_COMMANDS,
  vendor_nxos: {
    'show interface': nxInterfaces,
    'show cdp neighbors detail': cdpDetail,
    'show lldp neighbors detail': lldpDetail,
    'show ip arp': nxArp,
    'show mac address-table': nxMac,
    'show vlan brief': iosVlans,
  },
  vendor_xr: {
    'show interfaces': iosInterfaces,
    'show cdp neighbors detail': cdpDetail,
    'show lldp neighbors detail': lldpDetail,
    'show arp': xrArp,
  },
  vendor_eos: {
    'show interfaces': iosInterfaces,
    'show lldp neighbors detail': lldpDetail,
    'show ip arp': eosArp,
    'show mac address-table': iosMac,
    'show vlan': eosVlans,
  },
  vendor_junos: {
    'show interfaces': junosInterfaces,
    'show lldp neighbors': junosLldp,
    'show arp no-resolve': junosArp,
    'show ethernet-switching table': junosMac,
    'show vlans': junosVlans,
  },
  vendor_panos: {
    'show interface all': panInterfaces,
    'show lldp neighbors all': panLldp,
    'show arp all': panArp,
    'show mac all': () =>
      lines(
        'maximum of entries supported :      8192',
        'total MAC entries in table :        0',
        '',
        'vlan             hw address          interface       status   ttl',
        '---------------------------------------------------------------------',
      ),
  },
  vendor_fw: { 'get system interface': fwInterfaces, 'diagnose lldprx neighbor summary': fwLldp, 'get system arp': fwArp },
};

for (const [deviceType, commands] of Object.entries(SIM_DISCOVERY_COMMANDS)) {
  for (const [command, render] of Object.entries(commands)) {
    registerSshCommand(deviceType, command, (ctx) => render(simModel(ctx.hostname, ctx.deviceType)));
  }
}

// ---- gNMI -------------------------------------------------------------------------------------

const OC_SPEED: Record<number, string> = {
  1000: 'openconfig-if-ethernet:SPEED_1GB',
  10000: 'openconfig-if-ethernet:SPEED_10GB',
  100: 'openconfig-if-ethernet:SPEED_100MB',
};

/** The device's model as an openconfig JSON_IETF tree (interfaces, lldp, network-instances). */
export function simOpenconfigTree(hostname: string, deviceType = 'vendor_eos'): JsonObject {
  const m = simModel(hostname, deviceType);
  const arpBy = new Map<string, typeof m.arp>();
  for (const a of m.arp) arpBy.set(a.iface, [...(arpBy.get(a.iface) ?? []), a]);
  const interfaces = allInterfaces(m).map((i) => {
    const [ip, plen] = (i.address ?? '/').split('/');
    const neighbors = (arpBy.get(i.name) ?? []).map((a) => ({ ip: a.ip, state: { ip: a.ip, 'link-layer-address': a.mac, origin: 'DYNAMIC' } }));
    return {
      name: i.name,
      config: { name: i.name, description: i.description, enabled: i.admin, mtu: 1500 },
      state: {
        name: i.name,
        description: i.description,
        enabled: i.admin,
        'admin-status': i.admin ? 'UP' : 'DOWN',
        'oper-status': i.oper ? 'UP' : 'DOWN',
        mtu: 1500,
      },
      ...(i.mac
        ? {
            'openconfig-if-ethernet:ethernet': {
              state: { 'mac-address': i.mac, 'port-speed': OC_SPEED[i.speed ?? 0] ?? 'openconfig-if-ethernet:SPEED_UNKNOWN', 'duplex-mode': 'FULL' },
            },
          }
        : {}),
      subinterfaces: {
        subinterface: [
          {
            index: 0,
            ...(i.address
              ? {
                  'openconfig-if-ip:ipv4': {
                    addresses: { address: [{ ip, config: { ip, 'prefix-length': Number(plen) }, state: { ip, 'prefix-length': Number(plen) } }] },
                    neighbors: { neighbor: neighbors },
                  },
                }
              : {}),
          },
        ],
      },
    };
  });
  const tree = {
    'openconfig-interfaces:interfaces': { interface: interfaces },
    'openconfig-lldp:lldp': {
      interfaces: {
        interface: m.ports
          .filter((p) => m.neighbors.some((nb) => nb.port === p))
          .map((p) => ({
            name: p.name,
            neighbors: {
              neighbor: m.neighbors
                .filter((nb) => nb.port === p)
                .map((nb) => ({
                  id: nb.remoteChassis,
                  state: {
                    id: nb.remoteChassis,
                    'chassis-id': nb.remoteChassis,
                    'system-name': nb.remoteName,
                    'port-id': nb.remotePort,
                    'management-address': nb.remoteAddress,
                    'system-description': nb.remotePlatform,
                  },
                })),
            },
          })),
      },
    },
    'openconfig-network-instance:network-instances': {
      'network-instance': [
        {
          name: 'default',
          fdb: {
            'mac-table': {
              entries: {
                entry: m.macs.map((e) => ({
                  'mac-address': e.mac,
                  vlan: e.vlan,
                  state: { 'mac-address': e.mac, vlan: e.vlan, 'entry-type': e.type.toUpperCase() },
                  interface: { 'interface-ref': { state: { interface: m.ports.find((p) => p.short === e.port)?.name ?? e.port, subinterface: 0 } } },
                })),
              },
            },
          },
          vlans: {
            vlan: m.vlans.map((v) => ({
              'vlan-id': v.id,
              config: { 'vlan-id': v.id, name: v.name, status: 'ACTIVE' },
              state: { 'vlan-id': v.id, name: v.name, status: 'ACTIVE' },
              members: { member: v.ports.map((p) => ({ state: { interface: m.ports.find((x) => x.short === p)?.name ?? p } })) },
            })),
          },
        },
      ],
    },
  };
  return tree as unknown as JsonObject;
}
