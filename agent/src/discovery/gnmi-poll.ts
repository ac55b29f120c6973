/**
 * A poll over gNMI: three Gets of openconfig state (interfaces with their IPv4 addresses and
 * neighbors for ARP, lldp, network-instances for the FDB and VLANs), mapped to the same
 * records as the CLI parsers. Module prefixes of JSON_IETF ("openconfig-interfaces:…") and
 * numbers sent as strings are accepted; openconfig has no CDP, so that section is unsupported.
 */
import { SAMPLE_LINES } from './engine';
import { cidr, normalizeMac, normalizeStatus, parseDuplex, parseSpeed } from '../../../shared/src/discovery/normalize';
import {
  emptyRecords,
  type ArpRecord,
  type DiscoveryRecords,
  type InterfaceRecord,
  type MacRecord,
  type NeighborRecord,
  type SectionName,
  type SectionResult,
  type VlanRecord,
  SECTION_RECORDS,
} from '../../../shared/src/discovery/records';

type Json = unknown;
type Obj = Record<string, Json>;

export interface GnmiGetter {
  get(path: string, type?: 'ALL' | 'CONFIG' | 'STATE' | 'OPERATIONAL'): Promise<Json>;
}

export const GNMI_PATHS = {
  interfaces: '/interfaces',
  lldp: '/lldp',
  networkInstances: '/network-instances',
} as const;

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** obj[key], also under any module prefix ("openconfig-x:key"). */
function pick(v: Json, key: string): Json {
  if (!isObj(v)) return undefined;
  if (key in v) return v[key];
  for (const [k, val] of Object.entries(v)) if (k.endsWith(`:${key}`)) return val;
  return undefined;
}

/** Follows keys; a list along the way is not expected here (use list()). */
const at = (v: Json, ...keys: string[]): Json => keys.reduce<Json>((cur, k) => pick(cur, k), v);

/** The entries of a YANG list: an array, or a single object. */
function list(v: Json): Obj[] {
  if (Array.isArray(v)) return v.filter(isObj);
  return isObj(v) ? [v] : [];
}

/** The container itself when the answer still carries its own name as the only key. */
function unwrap(v: Json, name: string): Json {
  const inner = pick(v, name);
  return inner !== undefined && isObj(v) && Object.keys(v).length === 1 ? inner : v;
}

const str = (v: Json): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const num = (v: Json): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};
/** An identityref without its module ("openconfig-if-ethernet:SPEED_1GB" → SPEED_1GB). */
const ident = (v: Json): string | null => str(v)?.replace(/^[\w-]+:/, '') ?? null;
/** state over config, per leaf. */
const leaf = (node: Json, name: string): Json => at(node, 'state', name) ?? at(node, 'config', name) ?? pick(node, name);

/** Tree entries that make no record (no name, no address): counted per section, the first few kept, so the section says partial. */
export class Dropped {
  readonly bySection = new Map<SectionName, { count: number; samples: string[] }>();
  add(section: SectionName, entry: Json): void {
    const d = this.bySection.get(section) ?? { count: 0, samples: [] };
    d.count += 1;
    if (d.samples.length < SAMPLE_LINES) d.samples.push(JSON.stringify(entry ?? null).slice(0, 200));
    this.bySection.set(section, d);
  }
}

export function interfacesFromOc(tree: Json, dropped = new Dropped()): { interfaces: InterfaceRecord[]; arp: ArpRecord[] } {
  const interfaces: InterfaceRecord[] = [];
  const arp: ArpRecord[] = [];
  for (const intf of list(pick(unwrap(tree, 'interfaces'), 'interface'))) {
    const name = str(pick(intf, 'name')) ?? str(leaf(intf, 'name'));
    if (!name) {
      dropped.add('interfaces', intf);
      continue;
    }
    const eth = pick(intf, 'ethernet');
    const enabled = leaf(intf, 'enabled');
    const addresses: string[] = [];
    for (const sub of list(at(intf, 'subinterfaces', 'subinterface'))) {
      const index = num(pick(sub, 'index')) ?? num(leaf(sub, 'index')) ?? 0;
      const subName = index === 0 ? name : `${name}.${index}`;
      for (const family of ['ipv4', 'ipv6']) {
        const ip = pick(sub, family);
        for (const a of list(at(ip, 'addresses', 'address'))) {
          const c = cidr(str(pick(a, 'ip')) ?? str(leaf(a, 'ip')) ?? undefined, num(leaf(a, 'prefix-length')));
          if (c) addresses.push(c);
        }
        if (family !== 'ipv4') continue;
        for (const n of list(at(ip, 'neighbors', 'neighbor'))) {
          const addr = str(pick(n, 'ip')) ?? str(leaf(n, 'ip'));
          if (!addr) {
            dropped.add('arp', n);
            continue;
          }
          arp.push({
            ip_address: addr,
            mac_address: normalizeMac(str(leaf(n, 'link-layer-address'))),
            interface: subName,
            age_seconds: num(leaf(n, 'age')),
          });
        }
      }
    }
    interfaces.push({
      name,
      description: str(leaf(intf, 'description')) ?? '',
      admin_status: normalizeStatus(ident(leaf(intf, 'admin-status')) ?? (enabled === false ? 'down' : enabled === true ? 'up' : null)),
      oper_status: normalizeStatus(ident(leaf(intf, 'oper-status'))),
      speed_mbps: parseSpeed(ident(leaf(eth, 'negotiated-port-speed')) ?? ident(leaf(eth, 'port-speed'))),
      duplex: parseDuplex(ident(leaf(eth, 'negotiated-duplex-mode')) ?? ident(leaf(eth, 'duplex-mode'))),
      mtu: num(leaf(intf, 'mtu')),
      mac_address: normalizeMac(str(leaf(eth, 'mac-address')) ?? str(leaf(intf, 'mac-address'))),
      addresses: [...new Set(addresses)],
    });
  }
  return { interfaces, arp };
}

export function lldpFromOc(tree: Json, dropped = new Dropped()): NeighborRecord[] {
  const out: NeighborRecord[] = [];
  for (const intf of list(at(unwrap(tree, 'lldp'), 'interfaces', 'interface'))) {
    const local = str(pick(intf, 'name')) ?? str(leaf(intf, 'name'));
    for (const n of list(at(intf, 'neighbors', 'neighbor'))) {
      const chassis = str(leaf(n, 'chassis-id'));
      const name = str(leaf(n, 'system-name')) ?? chassis;
      if (!name || !local) {
        dropped.add('lldp', n);
        continue;
      }
      out.push({
        protocol: 'lldp',
        local_interface: local,
        remote_name: name,
        remote_interface: str(leaf(n, 'port-id')) ?? str(leaf(n, 'port-description')),
        remote_address: str(leaf(n, 'management-address')),
        remote_platform: str(leaf(n, 'system-description')),
        remote_chassis_id: chassis,
      });
    }
  }
  return out;
}

export function fdbAndVlansFromOc(tree: Json, dropped = new Dropped()): { mac: MacRecord[]; vlans: VlanRecord[] } {
  const mac: MacRecord[] = [];
  const vlans: VlanRecord[] = [];
  for (const ni of list(pick(unwrap(tree, 'network-instances'), 'network-instance'))) {
    for (const e of list(at(ni, 'fdb', 'mac-table', 'entries', 'entry'))) {
      const address = normalizeMac(str(pick(e, 'mac-address')) ?? str(leaf(e, 'mac-address')));
      if (!address) {
        dropped.add('mac', e);
        continue;
      }
      const type = ident(leaf(e, 'entry-type'))?.toLowerCase();
      mac.push({
        mac_address: address,
        vlan: num(pick(e, 'vlan')) ?? num(leaf(e, 'vlan')),
        interface: str(at(e, 'interface', 'interface-ref', 'state', 'interface')) ?? str(at(e, 'interface', 'interface-ref', 'config', 'interface')),
        entry_type: type === 'dynamic' ? 'dynamic' : type === 'static' ? 'static' : 'other',
      });
    }
    for (const v of list(at(ni, 'vlans', 'vlan'))) {
      const id = num(pick(v, 'vlan-id')) ?? num(leaf(v, 'vlan-id'));
      if (id === null) {
        dropped.add('vlans', v);
        continue;
      }
      const members = list(at(v, 'members', 'member'))
        .map((m) => str(leaf(m, 'interface')))
        .filter((s): s is string => s !== null);
      vlans.push({
        vlan_id: id,
        name: str(leaf(v, 'name')) ?? '',
        status: (ident(leaf(v, 'status')) ?? 'active').toLowerCase(),
        interfaces: members,
      });
    }
  }
  return { mac, vlans };
}

type PollOptions = { signal?: AbortSignal; mask?: (text: string) => string; log?: (text: string) => void };

/** The order a poll reports its sections in. */
const SECTION_ORDER: SectionName[] = ['interfaces', 'cdp', 'lldp', 'arp', 'mac', 'vlans'];

/** What one gNMI poll has gathered: the records, each section's result, and the tree entries dropped. */
class GnmiPollResults {
  readonly records = emptyRecords();
  private readonly results = new Map<SectionName, SectionResult>();
  readonly mask: (text: string) => string;
  readonly dropped = new Dropped();

  constructor(private readonly opts: PollOptions) {
    this.mask = opts.mask ?? ((t: string) => t);
    this.results.set('cdp', { name: 'cdp', status: 'unsupported', source: null, records: 0, error: null, skipped_lines: 0 });
  }

  /** A section read: ok, or partial when entries of its tree made no record. */
  ok(name: SectionName, source: string, n: number): void {
    const d = this.dropped.bySection.get(name);
    this.results.set(
      name,
      d
        ? {
            name,
            status: 'partial',
            source,
            records: n,
            error: `${d.count} entr${d.count === 1 ? 'y' : 'ies'} of the tree could not be read; records may be missing`,
            skipped_lines: d.count,
            unparsed_lines: d.samples.map(this.mask),
          }
        : { name, status: 'ok', source, records: n, error: null, skipped_lines: 0 },
    );
  }

  /** A step's records, then the result of each of its sections. */
  take(step: GnmiStep, sections: SectionName[], got: Partial<DiscoveryRecords>): void {
    for (const name of sections) (this.records[SECTION_RECORDS[name]] as unknown[]).push(...got[SECTION_RECORDS[name]]!);
    for (const name of sections) this.ok(name, step.sources[name]!, got[SECTION_RECORDS[name]]!.length);
  }

  failed(names: SectionName[], source: string, error: string): void {
    for (const name of names) this.results.set(name, { name, status: 'failed', source, records: 0, error, skipped_lines: 0 });
    this.opts.log?.(`${names.join(', ')}: ${error}`);
  }

  /** "interfaces 12, arp 3": the records each section got. */
  counts(names: SectionName[]): string {
    return names.map((s) => `${s} ${this.results.get(s)?.records ?? 0}`).join(', ');
  }

  sections(): SectionResult[] {
    return SECTION_ORDER.map((n) => this.results.get(n)!);
  }
}

/** One Get of a poll: its path, the sections its tree fills, and how the tree is read. */
interface GnmiStep {
  path: string;
  /** Each section the tree fills, with the source it reports. */
  sources: Partial<Record<SectionName, string>>;
  read(tree: Json, dropped: Dropped): Partial<DiscoveryRecords>;
}

const STEPS: GnmiStep[] = [
  {
    path: GNMI_PATHS.interfaces,
    sources: { interfaces: GNMI_PATHS.interfaces, arp: `${GNMI_PATHS.interfaces} (ipv4/neighbors)` },
    read: interfacesFromOc,
  },
  {
    path: GNMI_PATHS.lldp,
    sources: { lldp: GNMI_PATHS.lldp },
    read: (tree, dropped) => ({ neighbors: lldpFromOc(tree, dropped) }),
  },
  {
    path: GNMI_PATHS.networkInstances,
    sources: { mac: `${GNMI_PATHS.networkInstances} (fdb)`, vlans: `${GNMI_PATHS.networkInstances} (vlans)` },
    read: fdbAndVlansFromOc,
  },
];

export async function pollOverGnmi(session: GnmiGetter, opts: PollOptions = {}): Promise<{ sections: SectionResult[]; records: DiscoveryRecords }> {
  const poll = new GnmiPollResults(opts);
  for (const step of STEPS) {
    const sections = Object.keys(step.sources) as SectionName[];
    if (opts.signal?.aborted) {
      poll.failed(sections, step.path, 'the job deadline passed');
      continue;
    }
    try {
      poll.take(step, sections, step.read(await session.get(step.path, 'ALL'), poll.dropped));
      opts.log?.(`${step.path}: ${poll.counts(sections)}`);
    } catch (err) {
      poll.failed(sections, step.path, poll.mask((err as Error).message ?? String(err)));
    }
  }
  return { sections: poll.sections(), records: poll.records };
}
