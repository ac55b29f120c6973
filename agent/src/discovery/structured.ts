/**
 * Structured show output: EOS and NX-OS answer `<show command> | json`, Junos
 * `<show command> | display json`, with the same table as JSON, which reads without guessing at
 * column layouts. Each reader maps one command's JSON to
 * records; an entry it cannot make a record of counts as skipped, so a structured section is
 * partial exactly when a text one would be. ssh-poll.ts prefers these and falls back to text.
 */
import type { ParseOutcome } from './engine';
import { cidr, normalizeMac, normalizeStatus, parseAge, parseDuplex, parseSpeed, splitInterfaces } from '../../../shared/src/discovery/normalize';
import type { ArpRecord, InterfaceRecord, MacRecord, NeighborRecord, VlanRecord } from '../../../shared/src/discovery/records';

type Json = unknown;
type Obj = Record<string, Json>;
/** `vlanIds` resolves VLAN names (the Junos switching table names its VLANs) to ids. */
export type StructuredReader = (json: Json, vlanIds?: ReadonlyMap<string, number>) => ParseOutcome<unknown>;

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: Json): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : null);
const num = (v: Json): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};
/** NX-OS TABLE_x.ROW_x: an array, or a single object when there is one row. */
const rows = (v: Json, ...keys: string[]): Obj[] => {
  const at = keys.reduce<Json>((cur, k) => (isObj(cur) ? cur[k] : undefined), v);
  return Array.isArray(at) ? at.filter(isObj) : isObj(at) ? [at] : [];
};
const entries = (v: Json): [string, Obj][] => (isObj(v) ? Object.entries(v).filter((e): e is [string, Obj] => isObj(e[1])) : []);

/** Builds one record per entry; entries that give none are counted, never guessed at. */
function readAll<T>(items: Json[], build: (item: Json) => T | T[] | null): ParseOutcome<T> {
  const records: T[] = [];
  let skipped = 0;
  const samples: string[] = [];
  for (const item of items) {
    const r = build(item);
    if (Array.isArray(r)) records.push(...r);
    else if (r) records.push(r);
    else {
      skipped += 1;
      if (samples.length < 5) samples.push(JSON.stringify(item).slice(0, 200));
    }
  }
  return { records, skipped, samples };
}

const neighbor = (n: Omit<NeighborRecord, 'remote_name'> & { remote_name: string | null }): NeighborRecord | null =>
  n.local_interface && (n.remote_name || n.remote_chassis_id) ? { ...n, remote_name: n.remote_name ?? n.remote_chassis_id! } : null;

// ---- EOS --------------------------------------------------------------------------------------

function eosInterface([name, i]: [string, Obj]): InterfaceRecord {
  const addrs = Array.isArray(i.interfaceAddress) ? i.interfaceAddress.filter(isObj) : [];
  const ips = addrs.flatMap((a) => [a.primaryIp, ...(Array.isArray(a.secondaryIpsOrderedList) ? a.secondaryIpsOrderedList : [])]).filter(isObj);
  const bw = num(i.bandwidth);
  const status = str(i.interfaceStatus) ?? '';
  return {
    name: str(i.name) ?? name,
    description: str(i.description) ?? '',
    admin_status: status === 'disabled' ? 'down' : status ? 'up' : 'unknown',
    oper_status: status === 'disabled' ? 'down' : normalizeStatus(str(i.lineProtocolStatus)),
    speed_mbps: bw && bw >= 1_000_000 ? Math.round(bw / 1_000_000) : null,
    duplex: parseDuplex(str(i.duplex)?.replace(/^duplex/, '')),
    mtu: num(i.mtu),
    mac_address: normalizeMac(str(i.physicalAddress)),
    addresses: ips.map((a) => cidr(str(a.address) ?? undefined, num(a.maskLen))).filter((a): a is string => a !== null && !a.startsWith('0.0.0.0')),
  };
}

function eosLldp(local: string, n: Json): NeighborRecord | null {
  if (!isObj(n)) return null;
  const port = isObj(n.neighborInterfaceInfo) ? n.neighborInterfaceInfo : {};
  const mgmt = (Array.isArray(n.managementAddresses) ? n.managementAddresses.filter(isObj) : [])
    .map((a) => str(a.address))
    .find((a) => a && /^\d+\.\d+\.\d+\.\d+$/.test(a));
  const chassis = str(n.chassisId);
  return neighbor({
    protocol: 'lldp',
    local_interface: local,
    remote_name: str(n.systemName),
    remote_interface: str(port.interfaceId_v2) ?? str(port.interfaceId)?.replace(/^"(.*)"$/, '$1') ?? null,
    remote_address: mgmt ?? null,
    remote_platform: str(n.systemDescription),
    remote_chassis_id: normalizeMac(chassis) ?? chassis,
  });
}

function eosMac(e: Json): MacRecord[] | null {
  if (!isObj(e)) return null;
  const mac = normalizeMac(str(e.macAddress));
  if (!mac) return null;
  const type = (str(e.entryType) ?? str(e.type) ?? '').toLowerCase();
  const ports = Array.isArray(e.interfaces) ? e.interfaces.map(str).filter((p): p is string => !!p) : [str(e.interface)];
  return ports.map((port) => ({
    mac_address: mac,
    vlan: num(e.vlanId),
    interface: port,
    entry_type: type.startsWith('dynamic') ? 'dynamic' : type.startsWith('static') ? 'static' : 'other',
  }));
}

const EOS: Record<string, StructuredReader> = {
  interfaces: (j) => readAll(entries(isObj(j) ? j.interfaces : null), (e) => eosInterface(e as [string, Obj])),
  lldp: (j) =>
    readAll(
      entries(isObj(j) ? j.lldpNeighbors : null).flatMap(([local, v]) =>
        (Array.isArray(v.lldpNeighborInfo) ? v.lldpNeighborInfo : []).map((n) => [local, n] as const),
      ),
      (e) => eosLldp(...(e as [string, Json])),
    ),
  arp: (j) =>
    readAll(isObj(j) && Array.isArray(j.ipV4Neighbors) ? j.ipV4Neighbors : [], (a): ArpRecord | null => {
      if (!isObj(a) || !str(a.address)) return null;
      return {
        ip_address: str(a.address)!,
        mac_address: normalizeMac(str(a.hwAddress)),
        interface: str(a.interface)?.split(',')[0].trim() ?? null,
        age_seconds: num(a.age),
      };
    }),
  mac: (j) => {
    const table = (k: string) => (isObj(j) && isObj(j[k]) && Array.isArray((j[k] as Obj).tableEntries) ? ((j[k] as Obj).tableEntries as Json[]) : []);
    return readAll([...table('unicastTable'), ...table('multicastTable')], eosMac);
  },
  vlans: (j) =>
    readAll(entries(isObj(j) ? j.vlans : null), (e): VlanRecord | null => {
      const [id, v] = e as [string, Obj];
      const vlanId = num(id);
      if (vlanId === null) return null;
      return {
        vlan_id: vlanId,
        name: str(v.name) ?? '',
        status: (str(v.status) ?? 'active').toLowerCase(),
        interfaces: Object.keys(isObj(v.interfaces) ? v.interfaces : {}),
      };
    }),
};

// ---- NX-OS ------------------------------------------------------------------------------------

function nxInterface(i: Obj): InterfaceRecord | null {
  const name = str(i.interface);
  if (!name) return null;
  const svi = i.svi_admin_state !== undefined || i.svi_line_proto !== undefined;
  const f = (eth: string, sv: string) => (svi ? i[sv] : i[eth]);
  const reason = `${str(i.state_rsn_desc) ?? ''} ${str(i.svi_rsn_desc) ?? ''}`;
  const adminDown = /administratively/i.test(reason) || str(f('admin_state', 'svi_admin_state')) === 'down';
  const bw = num(f('eth_bw', 'svi_bw'));
  const ip = str(f('eth_ip_addr', 'svi_ip_addr'));
  return {
    name,
    description: str(f('desc', 'svi_desc')) ?? '',
    admin_status: adminDown ? 'down' : str(f('admin_state', 'svi_admin_state')) ? 'up' : 'unknown',
    oper_status: adminDown ? 'down' : normalizeStatus(str(f('state', 'svi_line_proto'))),
    speed_mbps: parseSpeed(str(i.eth_speed)) ?? (bw && bw >= 1000 ? Math.round(bw / 1000) : null),
    duplex: parseDuplex(str(i.eth_duplex)),
    mtu: num(f('eth_mtu', 'svi_mtu')),
    mac_address: normalizeMac(str(f('eth_hw_addr', 'svi_mac'))),
    addresses: ip ? [cidr(ip, num(f('eth_ip_mask', 'svi_ip_mask')))].filter((a): a is string => a !== null) : [],
  };
}

const NXOS: Record<string, StructuredReader> = {
  interfaces: (j) => readAll(rows(j, 'TABLE_interface', 'ROW_interface'), (i) => nxInterface(i as Obj)),
  cdp: (j) =>
    readAll(rows(j, 'TABLE_cdp_neighbor_detail_info', 'ROW_cdp_neighbor_detail_info'), (n) => {
      const o = n as Obj;
      return neighbor({
        protocol: 'cdp',
        local_interface: str(o.intf_id) ?? '',
        // The serial number in brackets; `[^()]` so a run of '(' with no ')' costs linear time, not quadratic.
        remote_name: str(o.device_id)?.replace(/\([^()]*\)$/, '') ?? null,
        remote_interface: str(o.port_id),
        remote_address: str(o.v4mgmtaddr) ?? str(o.v4addr),
        remote_platform: str(o.platform_id),
        remote_chassis_id: null,
      });
    }),
  lldp: (j) =>
    readAll(rows(j, 'TABLE_nbor_detail', 'ROW_nbor_detail'), (n) => {
      const o = n as Obj;
      const chassis = str(o.chassis_id);
      const mgmt = str(o.mgmt_addr);
      return neighbor({
        protocol: 'lldp',
        local_interface: str(o.l_port_id) ?? '',
        remote_name: str(o.sys_name) === 'null' ? null : str(o.sys_name),
        remote_interface: str(o.port_id),
        remote_address: mgmt && /^\d+\.\d+\.\d+\.\d+$/.test(mgmt) ? mgmt : null,
        remote_platform: str(o.sys_desc),
        remote_chassis_id: normalizeMac(chassis) ?? chassis,
      });
    }),
  arp: (j) =>
    readAll(
      rows(j, 'TABLE_vrf', 'ROW_vrf').flatMap((vrf) => rows(vrf, 'TABLE_adj', 'ROW_adj')),
      (a): ArpRecord | null => {
        const o = a as Obj;
        const ip = str(o['ip-addr-out']);
        if (!ip) return null;
        return { ip_address: ip, mac_address: normalizeMac(str(o.mac)), interface: str(o['intf-out']), age_seconds: parseAge(str(o['time-stamp'])) };
      },
    ),
  mac: (j) =>
    readAll(rows(j, 'TABLE_mac_address', 'ROW_mac_address'), (e): MacRecord | null => {
      const o = e as Obj;
      const mac = normalizeMac(str(o.disp_mac_addr));
      if (!mac) return null;
      const type = (str(o.disp_type) ?? '').replace(/^[*+GCO~ ]+/, '').toLowerCase();
      return {
        mac_address: mac,
        vlan: num(o.disp_vlan),
        interface: str(o.disp_port),
        entry_type: type === 'dynamic' ? 'dynamic' : type === 'static' ? 'static' : 'other',
      };
    }),
  vlans: (j) =>
    readAll(rows(j, 'TABLE_vlanbriefxbrief', 'ROW_vlanbriefxbrief'), (v): VlanRecord | null => {
      const o = v as Obj;
      const id = num(o['vlanshowbr-vlanid']) ?? num(o['vlanshowbr-vlanid-utf']);
      if (id === null) return null;
      const ports = o['vlanshowplist-ifidx'];
      return {
        vlan_id: id,
        name: str(o['vlanshowbr-vlanname']) ?? '',
        status: (str(o['vlanshowbr-vlanstate']) ?? 'active').toLowerCase(),
        interfaces: Array.isArray(ports) ? ports.map(str).filter((p): p is string => !!p) : splitInterfaces(str(ports)),
      };
    }),
};

// ---- Junos ------------------------------------------------------------------------------------

/** Junos JSON wraps every element in an array of objects and every leaf in [{"data": …}]. */
const jl = (o: Json, key: string): Obj[] => (isObj(o) && Array.isArray(o[key]) ? (o[key] as Json[]).filter(isObj) : []);
const jv = (o: Json, key: string): string | null => str(jl(o, key)[0]?.data);
const jpath = (o: Json, ...keys: string[]): Obj[] => keys.reduce<Obj[]>((cur, k) => cur.flatMap((c) => jl(c, k)), isObj(o) ? [o] : []);

function junosInterface(p: Obj): InterfaceRecord | null {
  const name = jv(p, 'name');
  if (!name) return null;
  const addresses = jl(p, 'logical-interface')
    .flatMap((l) => jl(l, 'address-family'))
    .filter((f) => /^inet6?$/.test(jv(f, 'address-family-name') ?? ''))
    .flatMap((f) => jl(f, 'interface-address'))
    .map((a) => {
      const local = jv(a, 'ifa-local');
      const prefix = jv(a, 'ifa-destination')?.split('/')[1];
      return local ? cidr(local, prefix ?? (local.includes(':') ? null : 32)) : null;
    })
    .filter((a): a is string => a !== null);
  const mtu = num(jv(p, 'mtu'));
  return {
    name,
    description: jv(p, 'description') ?? '',
    admin_status: normalizeStatus(jv(p, 'admin-status')),
    oper_status: normalizeStatus(jv(p, 'oper-status')),
    speed_mbps: parseSpeed(jv(p, 'speed')),
    duplex: parseDuplex(jv(p, 'link-mode') ?? jv(p, 'duplex')),
    mtu,
    mac_address: normalizeMac(jv(p, 'current-physical-address')),
    addresses: [...new Set(addresses)],
  };
}

const JUNOS: Record<string, StructuredReader> = {
  interfaces: (j) => readAll(jpath(j, 'interface-information', 'physical-interface'), (p) => junosInterface(p as Obj)),
  lldp: (j) =>
    readAll(jpath(j, 'lldp-neighbors-information', 'lldp-neighbor-information'), (n) => {
      const chassis = jv(n, 'lldp-remote-chassis-id');
      return neighbor({
        protocol: 'lldp',
        local_interface: jv(n, 'lldp-local-port-id') ?? jv(n, 'lldp-local-interface') ?? '',
        remote_name: jv(n, 'lldp-remote-system-name'),
        remote_interface: jv(n, 'lldp-remote-port-id') ?? jv(n, 'lldp-remote-port-description'),
        remote_address: null,
        remote_platform: null,
        remote_chassis_id: normalizeMac(chassis) ?? chassis,
      });
    }),
  arp: (j) =>
    readAll(jpath(j, 'arp-table-information', 'arp-table-entry'), (a): ArpRecord | null => {
      const ip = jv(a, 'ip-address');
      return ip ? { ip_address: ip, mac_address: normalizeMac(jv(a, 'mac-address')), interface: jv(a, 'interface-name'), age_seconds: null } : null;
    }),
  mac: (j, vlanIds = new Map()) =>
    readAll(jpath(j, 'l2ng-l2ald-rtb-macdb', 'l2ng-l2ald-mac-entry-vlan', 'l2ng-mac-entry'), (e): MacRecord | null => {
      const mac = normalizeMac(jv(e, 'l2ng-l2-mac-address'));
      if (!mac) return null;
      const flags = jv(e, 'l2ng-l2-mac-flags') ?? '';
      return {
        mac_address: mac,
        vlan: vlanIds.get(jv(e, 'l2ng-l2-mac-vlan-name') ?? '') ?? null,
        interface: jv(e, 'l2ng-l2-mac-logical-interface'),
        entry_type: /\bD\b|^D/.test(flags) ? 'dynamic' : /\bS\b|^S/.test(flags) ? 'static' : 'other',
      };
    }),
  vlans: (j) =>
    readAll(jpath(j, 'l2ng-l2ald-vlan-instance-information', 'l2ng-l2ald-vlan-instance-group'), (g): VlanRecord | null => {
      const id = num(jv(g, 'l2ng-l2rtb-vlan-tag'));
      if (id === null) return null;
      const members = jl(g, 'l2ng-l2rtb-vlan-member')
        .map((m) => jv(m, 'l2ng-l2rtb-vlan-member-interface'))
        .filter((m): m is string => !!m);
      return { vlan_id: id, name: jv(g, 'l2ng-l2rtb-vlan-name') ?? '', status: 'active', interfaces: splitInterfaces(members.join(' ')) };
    }),
};

export const STRUCTURED_READERS: Record<'eos' | 'nxos' | 'junos', Record<string, StructuredReader>> = { eos: EOS, nxos: NXOS, junos: JUNOS };

/** Reads `| json` output: the JSON document, or null when the text is not one (an older release printed text). */
export function parseJsonOutput(text: string): Json | null {
  const t = text.trim();
  if (!t.startsWith('{')) return null;
  try {
    return JSON.parse(t);
  } catch {
    return null;
  }
}
