import { Type, type TSchema } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';

const Str = Type.String();
const Status = Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('testing'), Type.Literal('unknown')]);

export const InterfaceRecord = Type.Object({
  name: Str,
  description: Str,
  admin_status: Status,
  oper_status: Status,
  speed_mbps: Nullable(Type.Integer()),
  duplex: Nullable(Type.String({ description: 'full, half or auto' })),
  mtu: Nullable(Type.Integer()),
  mac_address: Nullable(Type.String({ description: 'Lower-case colon form, 52:54:00:01:01:01.' })),
  addresses: Type.Array(Type.String({ description: 'CIDR form, 10.0.12.1/30.' })),
});

export const NeighborRecord = Type.Object({
  protocol: Type.Union([Type.Literal('cdp'), Type.Literal('lldp')]),
  local_interface: Str,
  remote_name: Type.String({ description: 'CDP device id or LLDP system name (else the chassis id).' }),
  remote_interface: Nullable(Str),
  remote_address: Nullable(Type.String({ description: 'Management address the neighbor advertises.' })),
  remote_platform: Nullable(Str),
  remote_chassis_id: Nullable(Type.String({ description: 'LLDP chassis id; null for CDP.' })),
});

export const ArpRecord = Type.Object({
  ip_address: Str,
  mac_address: Nullable(Type.String({ description: 'null for an incomplete entry.' })),
  interface: Nullable(Str),
  age_seconds: Nullable(Type.Integer()),
});

export const MacRecord = Type.Object({
  mac_address: Str,
  vlan: Nullable(Type.Integer()),
  interface: Nullable(Str),
  entry_type: Type.Union([Type.Literal('dynamic'), Type.Literal('static'), Type.Literal('other')]),
});

export const VlanRecord = Type.Object({ vlan_id: Type.Integer(), name: Str, status: Str, interfaces: Type.Array(Str) });

/** A list of one kind of record, with where it came from. */
const RecordList = <T extends TSchema>(key: string, item: T, description: string) =>
  Type.Object(
    {
      device_id: Uuid,
      poll_id: Nullable(Type.String({ format: 'uuid', description: 'The poll that collected the newest of these records.' })),
      collected_at: Nullable(Timestamp),
      total: Type.Integer(),
      limit: Type.Integer(),
      offset: Type.Integer(),
      [key]: Type.Array(item),
    },
    { description },
  );

export const InterfaceList = RecordList('interfaces', InterfaceRecord, 'Interfaces with status, speed, description and addresses.');
export const NeighborList = RecordList('neighbors', NeighborRecord, 'CDP and LLDP neighbors.');
export const ArpList = RecordList('arp_table', ArpRecord, 'ARP entries.');
export const MacList = RecordList('mac_table', MacRecord, 'MAC address table entries.');
export const VlanList = RecordList('vlans', VlanRecord, 'VLANs with their member interfaces.');

export const RecordQuery = Type.Object({ ...Paging(1000, 10000) });
export const NeighborQuery = Type.Object({
  protocol: Type.Optional(Type.Union([Type.Literal('cdp'), Type.Literal('lldp')])),
  ...Paging(1000, 10000),
});
export const HistoryQuery = Type.Object({ ...Paging(50, 500) });

const SectionResult = Type.Object({
  name: Type.String({ description: 'interfaces, cdp, lldp, arp, mac or vlans.' }),
  status: Type.Union([Type.Literal('ok'), Type.Literal('partial'), Type.Literal('failed'), Type.Literal('unsupported')], {
    description: 'partial: collected, but some output lines were not understood (see skipped_lines and unparsed_lines).',
  }),
  source: Nullable(Type.String({ description: 'Show command or gNMI path.' })),
  records: Type.Integer(),
  error: Nullable(Str),
  skipped_lines: Type.Integer({ description: 'Output lines that looked like data but were not understood.' }),
  unparsed_lines: Type.Optional(Type.Array(Str, { description: 'The first few of the lines not understood, as the device printed them.' })),
});

export const PollResult = Type.Object(
  {
    id: Uuid,
    device_id: Uuid,
    trigger: Type.Union([Type.Literal('manual'), Type.Literal('schedule')]),
    transport: Type.Union([Type.Literal('ssh'), Type.Literal('gnmi')]),
    status: Type.Union(
      [Type.Literal('queued'), Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('partial'), Type.Literal('failed')],
      {
        description: 'partial: some sections failed (their earlier records are kept) or were read only in part; failed: nothing was collected.',
      },
    ),
    error: Nullable(Str),
    counts: Type.Object({ interfaces: Type.Integer(), neighbors: Type.Integer(), arp: Type.Integer(), mac: Type.Integer(), vlans: Type.Integer() }),
    sections: Type.Array(SectionResult),
    queued_at: Timestamp,
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
    duration_ms: Nullable(Type.Integer()),
  },
  { description: 'One discovery poll of a device.' },
);

export const PollStatus = Type.Object({
  device_id: Uuid,
  poll_enabled: Type.Boolean(),
  poll_interval_minutes: Type.Integer({ description: "The device's interval, else discovery.default_poll_interval_minutes." }),
  next_poll_at: Nullable(Timestamp),
  last_succeeded_at: Nullable(Timestamp),
  poll: Nullable(PollResult),
});

export const PollHistory = Type.Object({
  device_id: Uuid,
  polls: Type.Array(PollResult),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const PollQueued = Type.Object({
  poll_id: Uuid,
  status: Type.String(),
  queued: Type.Boolean({ description: 'false when a poll of this device was already queued or running: its id is returned.' }),
  message: Str,
});
