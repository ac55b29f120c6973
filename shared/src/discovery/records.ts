/**
 * Discovery records: what one poll of a device yields, the same shape whether it came over
 * SSH (parsed show commands) or gNMI (openconfig paths). The agent builds them, the controller
 * stores them as is; as TypeBox schemas, the `poll` job's result is checked against them.
 */

import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Text = Type.String();

export const StatusSchema = Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('testing'), Type.Literal('unknown')]);
export type Status = Static<typeof StatusSchema>;

export const InterfaceRecord = Type.Object({
  name: Text,
  description: Type.String(),
  admin_status: StatusSchema,
  oper_status: StatusSchema,
  /** Negotiated or configured speed; null when the device does not say. */
  speed_mbps: Nullable(Type.Number()),
  duplex: Nullable(Type.Union([Type.Literal('full'), Type.Literal('half'), Type.Literal('auto')])),
  mtu: Nullable(Type.Number()),
  /** Lower-case colon form (52:54:00:01:01:01). */
  mac_address: Nullable(Text),
  /** IPv4/IPv6 addresses in CIDR form (10.0.12.1/30). */
  addresses: Type.Array(Text),
});
export type InterfaceRecord = Static<typeof InterfaceRecord>;

export const NeighborProtocolSchema = Type.Union([Type.Literal('cdp'), Type.Literal('lldp')]);
export type NeighborProtocol = Static<typeof NeighborProtocolSchema>;

export const NeighborRecord = Type.Object({
  protocol: NeighborProtocolSchema,
  local_interface: Text,
  /** CDP device id or LLDP system name (falls back to the chassis id). */
  remote_name: Text,
  remote_interface: Nullable(Text),
  remote_address: Nullable(Text),
  remote_platform: Nullable(Text),
  /** LLDP chassis id (often a MAC); null for CDP. */
  remote_chassis_id: Nullable(Text),
});
export type NeighborRecord = Static<typeof NeighborRecord>;

export const ArpRecord = Type.Object({
  ip_address: Text,
  mac_address: Nullable(Text),
  interface: Nullable(Text),
  /** Age in seconds; null when static or not shown. */
  age_seconds: Nullable(Type.Number()),
});
export type ArpRecord = Static<typeof ArpRecord>;

export const MacRecord = Type.Object({
  mac_address: Text,
  vlan: Nullable(Type.Number()),
  interface: Nullable(Text),
  entry_type: Type.Union([Type.Literal('dynamic'), Type.Literal('static'), Type.Literal('other')]),
});
export type MacRecord = Static<typeof MacRecord>;

export const VlanRecord = Type.Object({
  vlan_id: Type.Number(),
  name: Type.String(),
  status: Type.String(),
  interfaces: Type.Array(Text),
});
export type VlanRecord = Static<typeof VlanRecord>;

export const DiscoveryRecords = Type.Object({
  interfaces: Type.Array(InterfaceRecord),
  neighbors: Type.Array(NeighborRecord),
  arp: Type.Array(ArpRecord),
  mac: Type.Array(MacRecord),
  vlans: Type.Array(VlanRecord),
});
export type DiscoveryRecords = Static<typeof DiscoveryRecords>;

/** The parts of a poll; CDP and LLDP are separate sections that both give neighbor records. */
export const SECTIONS = ['interfaces', 'cdp', 'lldp', 'arp', 'mac', 'vlans'] as const;
export type SectionName = (typeof SECTIONS)[number];

/** What became of one section of a poll. */
export const SectionResult = Type.Object({
  name: Type.Union(SECTIONS.map((s) => Type.Literal(s))),
  /**
   * ok: collected, every line accounted for; partial: collected, but some output was not
   * understood (records may be missing); failed: the command or path failed; unsupported: the
   * platform has no such table.
   */
  status: Type.Union([Type.Literal('ok'), Type.Literal('partial'), Type.Literal('failed'), Type.Literal('unsupported')]),
  /** The show command or gNMI path it came from. */
  source: Nullable(Type.String()),
  records: Type.Integer({ minimum: 0 }),
  error: Nullable(Type.String()),
  /** Lines that looked like data but could not be parsed (cut-off rows, unknown formats). */
  skipped_lines: Type.Integer({ minimum: 0 }),
  /** The first few of those lines, as the device printed them. */
  unparsed_lines: Type.Optional(Type.Array(Type.String())),
});
export type SectionResult = Static<typeof SectionResult>;

/** A section that was collected, whole or not. */
export const collected = (s: Pick<SectionResult, 'status'>) => s.status === 'ok' || s.status === 'partial';

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
