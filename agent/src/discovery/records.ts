/**
 * Discovery records: what one poll of a device yields, the same shape whether it came over
 * SSH (parsed show commands) or gNMI (openconfig paths). The controller stores them as is.
 */

export type Status = 'up' | 'down' | 'testing' | 'unknown';

export interface InterfaceRecord {
  name: string;
  description: string;
  admin_status: Status;
  oper_status: Status;
  /** Negotiated or configured speed; null when the device does not say. */
  speed_mbps: number | null;
  duplex: 'full' | 'half' | 'auto' | null;
  mtu: number | null;
  /** Lower-case colon form (52:54:00:01:01:01). */
  mac_address: string | null;
  /** IPv4/IPv6 addresses in CIDR form (10.0.12.1/30). */
  addresses: string[];
}

export type NeighborProtocol = 'cdp' | 'lldp';

export interface NeighborRecord {
  protocol: NeighborProtocol;
  local_interface: string;
  /** CDP device id or LLDP system name (falls back to the chassis id). */
  remote_name: string;
  remote_interface: string | null;
  remote_address: string | null;
  remote_platform: string | null;
  /** LLDP chassis id (often a MAC); null for CDP. */
  remote_chassis_id: string | null;
}

export interface ArpRecord {
  ip_address: string;
  mac_address: string | null;
  interface: string | null;
  /** Age in seconds; null when static or not shown. */
  age_seconds: number | null;
}

export interface MacRecord {
  mac_address: string;
  vlan: number | null;
  interface: string | null;
  entry_type: 'dynamic' | 'static' | 'other';
}

export interface VlanRecord {
  vlan_id: number;
  name: string;
  status: string;
  interfaces: string[];
}

export interface DiscoveryRecords {
  interfaces: InterfaceRecord[];
  neighbors: NeighborRecord[];
  arp: ArpRecord[];
  mac: MacRecord[];
  vlans: VlanRecord[];
}

/** The parts of a poll; CDP and LLDP are separate sections that both give neighbor records. */
export const SECTIONS = ['interfaces', 'cdp', 'lldp', 'arp', 'mac', 'vlans'] as const;
export type SectionName = (typeof SECTIONS)[number];

/** What became of one section of a poll. */
export interface SectionResult {
  name: SectionName;
  /**
   * ok: collected, every line accounted for; partial: collected, but some output was not
   * understood (records may be missing); failed: the command or path failed; unsupported: the
   * platform has no such table.
   */
  status: 'ok' | 'partial' | 'failed' | 'unsupported';
  /** The show command or gNMI path it came from. */
  source: string | null;
  records: number;
  error: string | null;
  /** Lines that looked like data but could not be parsed (cut-off rows, unknown formats). */
  skipped_lines: number;
  /** The first few of those lines, as the device printed them. */
  unparsed_lines?: string[];
}

/** A section that was collected, whole or not. */
export const collected = (s: Pick<SectionResult, 'status'>) => s.status === 'ok' || s.status === 'partial';

/** The `poll` job result, as JobOutcome.result. */
export interface PollResult {
  transport: 'ssh' | 'gnmi';
  sections: SectionResult[];
  records: DiscoveryRecords;
}

export const emptyRecords = (): DiscoveryRecords => ({ interfaces: [], neighbors: [], arp: [], mac: [], vlans: [] });

/** Which record list a section fills. */
export const SECTION_RECORDS: Record<SectionName, keyof DiscoveryRecords> = {
  interfaces: 'interfaces',
  cdp: 'neighbors',
  lldp: 'neighbors',
  arp: 'arp',
  mac: 'mac',
  vlans: 'vlans',
};
