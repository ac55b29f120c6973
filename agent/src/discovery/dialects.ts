/**
 * What each SSH CLI dialect is asked during a poll, and how its answers are read: one entry
 * per device_type, each section a show command plus regular expressions (engine.ts explains
 * the group names). A section set to null does not exist on that platform (no CDP on Junos,
 * no VLAN database on an IOS-XR router) and is reported as unsupported, not failed.
 */
import type { ParseSpec } from './engine';
import type { LocalInterfaceSource } from './local-interfaces';
import type { SectionName } from '../../../shared/src/discovery/records';
import { STRUCTURED_READERS, type StructuredReader } from './structured';

export interface SectionSpec {
  command: string;
  parse: ParseSpec;
  /** Where neighbors whose detail does not name the local interface find it (local-interfaces.ts). */
  localInterfaces?: LocalInterfaceSource;
  /** The same table as JSON, tried first; a device that refuses it or prints text gets `command`. */
  structured?: { command: string; read: StructuredReader };
}

/** A text section that EOS and NX-OS also answer as `<command> | json`, Junos as `<command> | display json`. */
const withJson = (section: SectionName, os: keyof typeof STRUCTURED_READERS, spec: SectionSpec): SectionSpec => ({
  ...spec,
  structured: { command: `${spec.command} | ${os === 'junos' ? 'display json' : 'json'}`, read: STRUCTURED_READERS[os][section] },
});

export type DiscoveryDialect = Record<SectionName, SectionSpec | null>;

const MAC_DOTTED = String.raw`[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}`;
const MAC_COLON = String.raw`[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}`;
const IPV4 = String.raw`\d{1,3}(?:\.\d{1,3}){3}`;
const IFNAME = String.raw`[A-Za-z][\w\-\/.:]*\d`;

// ---- interfaces -------------------------------------------------------------------------------

/** "X is up, line protocol is up": IOS, IOS-XE, IOS-XR, EOS and the generic CLI. */
const SHOW_INTERFACES_IOS: ParseSpec = {
  kind: 'blocks',
  start: new RegExp(String.raw`^(?<name>${IFNAME}) is (?<link>administratively down|up|down|deleted|reset)(?:, line protocol is (?<oper>\w+))?`),
  fields: [
    new RegExp(String.raw`address is (?<mac>${MAC_DOTTED})`),
    /^\s+Description: (?<description>.*)$/,
    // "MTU 1500 bytes, BW …", EOS "IP MTU 1500 bytes (default), BW …" and lines without BW.
    /\bMTU (?<mtu>\d+) bytes/,
    /\bBW (?<bw_kbit>\d+) kbit/i,
    // "Full-duplex, 1000Mb/s", IOS-XE 17 on virtual NICs "Full Duplex, 1000Mbps".
    /^\s+(?<duplex>Full|Half|Auto)[- ]duplex, (?<speed>\d+(?:\.\d+)? ?[KMG]b(?:\/s|ps)|Auto-speed|auto)/i,
  ],
  lists: { addr: [new RegExp(String.raw`^\s+(?:Internet|Secondary) address is (?<ip>${IPV4})\/(?<prefix>\d+)`, 'i')] },
};

/** NX-OS: "Ethernet1/1 is up" then "admin state is up". */
const SHOW_INTERFACE_NXOS: ParseSpec = {
  kind: 'blocks',
  // "Vlan20 is down (Administratively down), line protocol is down", "fc1/1 is trunking".
  start: new RegExp(String.raw`^(?<name>${IFNAME}) is (?<link>administratively down|up|down|trunking)\b(?: \((?<reason>[^)]*)\))?`),
  fields: [
    /^admin state is (?<admin>up|down)/,
    new RegExp(String.raw`address(?: is|:)\s+(?<mac>${MAC_DOTTED})`),
    /^\s+(?:Description:|Port description is) (?<description>.*)$/,
    /\bMTU (?<mtu>\d+) bytes/,
    /\bBW (?<bw_kbit>\d+) Kbit/,
    /^\s+(?<duplex>full|half|auto)-duplex, (?<speed>\d+ [KMG]b\/s|auto-speed)/i,
    /^\s+Operating Speed is (?<speed>\d+ ?[KMG]bps)/,
  ],
  lists: { addr: [new RegExp(String.raw`^\s+Internet Address is (?<ip>${IPV4})\/(?<prefix>\d+)`, 'i')] },
};

/** Junos: a physical interface with its logical units and their addresses. */
const SHOW_INTERFACES_JUNOS: ParseSpec = {
  kind: 'blocks',
  start: /^Physical interface: (?<name>[^,\s]+), (?<admin>Enabled|Disabled|Administratively down)(?:, Physical link is (?<oper>Up|Down))?/,
  fields: [
    /^\s+Description: (?<description>.*)$/,
    /Link-level type: [^,]+, MTU: (?<mtu>\d+)/,
    /Speed: (?<speed>[\w.]+)/,
    /(?:Duplex|Link-mode): (?<duplex>[\w-]+)/,
    new RegExp(String.raw`Current address: (?<mac>${MAC_COLON})`),
  ],
  lists: {
    addr: [new RegExp(String.raw`Destination: [\d.]+\/(?<prefix>\d+), Local: (?<ip>${IPV4})`), new RegExp(String.raw`^\s+Local: (?<ip>${IPV4})\s*$`)],
  },
};

/** PAN-OS: a hardware table and a logical table, merged by interface name. */
const PANOS_IFNAME = String.raw`(?:ethernet\d|ae\d|ha\d|hsci|loopback|tunnel|vlan|mgmt)[\w\/.\-]*`;
/** speed/duplex/state, and /fec since PAN-OS 10; aggregates print [n/a] for speed and duplex. */
const PANOS_SDS = String.raw`(?<speed>\w+|\[n\/a\])\/(?<duplex>\w+|\[n\/a\])\/(?<oper>\w+)(?:\([^)]*\))?(?:\/[\w-]+)?(?:\([^)]*\))?`;
const SHOW_INTERFACE_PANOS: ParseSpec = {
  kind: 'table',
  mergeBy: 'name',
  row: [
    new RegExp(String.raw`^(?<name>${PANOS_IFNAME})\s+\d+\s+${PANOS_SDS}\s+(?<mac>${MAC_COLON})\s*$`),
    new RegExp(String.raw`^(?<name>${PANOS_IFNAME})\s+\d+\s+\d+\s+(?:\S+\s+)?\S+\s+\d+\s+(?:(?<ip>${IPV4}\/\d+)|N\/A)\s*$`),
  ],
  // A second address of an interface goes on a line of its own under the first.
  continuation: new RegExp(String.raw`^\s{20,}(?<ip>${IPV4})\/(?<prefix>\d+)\s*$`),
  candidate: /^(ethernet|ae|ha\d|hsci|loopback|tunnel|vlan|mgmt)|^\s+\d/,
  ignore: [/^(total configured|aggregation groups)/i],
};

/** FortiOS: "== [ port1 ]" then one long line of settings. */
const GET_SYSTEM_INTERFACE_FW: ParseSpec = {
  kind: 'blocks',
  start: /^== \[ ?(?<name>[^\]\s]+) ?\]/,
  fields: [
    /status: (?<admin>up|down)/,
    new RegExp(String.raw`\bip: (?<ip>${IPV4}) (?<mask>${IPV4})`),
    /\bmtu: (?<mtu>\d+)/,
    /\bspeed: (?<speed>\d+[MG]bps|auto)/,
    new RegExp(String.raw`\bmacaddr: (?<mac>${MAC_COLON})`),
    /\bdescription: "?(?<description>[^"]*)"?/,
  ],
};

// ---- neighbors --------------------------------------------------------------------------------

/** CDP detail of IOS, NX-OS and IOS-XR (XR puts Interface and Port ID on separate lines). */
const CDP_DETAIL: ParseSpec = {
  kind: 'blocks',
  start: /^Device ID: ?(?<remote_name>[^(\s]+)/,
  fields: [
    new RegExp(String.raw`^\s+IP(?:v4)? [Aa]ddress: (?<remote_address>${IPV4})`),
    // No `\s*` before the comma: it and a lazy `[^,]+?` would split a run of blanks in n² ways. The builder trims.
    /^Platform: (?<remote_platform>[^,]+),/,
    /^Interface: (?<local_interface>[^,\s]+)/,
    /Port ID \(outgoing port\): (?<remote_interface>\S(?:.*\S)?)/,
  ],
};

const LLDP_FIELDS = [/^Chassis id: (?<remote_chassis_id>\S+)/, /^Port id: (?<remote_interface>\S+)/, /^System Name: (?<remote_name>.+)$/];

/**
 * IOS 15 opens a neighbor with "Local Intf:"; 12.2 switches print no such line, so a neighbor
 * opens at "Chassis id:" and its local interface comes from the `show lldp neighbors` table.
 */
const LLDP_DETAIL_IOS: ParseSpec = {
  kind: 'blocks',
  start: /^Local Intf: (?<local_interface>\S+)/,
  opens: [/^Chassis id: (?<remote_chassis_id>\S+)/],
  fields: [...LLDP_FIELDS, new RegExp(String.raw`^\s+IP(?:v4)?: (?<remote_address>${IPV4})`)],
  // The description starts on the line after its heading; its first line names the platform.
  following: [{ after: /^System Description:\s*$/, group: 'remote_platform' }],
};

/** IOS `show lldp neighbors`: the device id is cut to 20 characters and may touch the local interface. */
const LLDP_SUMMARY_IOS: LocalInterfaceSource = {
  command: 'show lldp neighbors',
  parse: {
    kind: 'table',
    row: new RegExp(
      String.raw`^(?<remote_name>\S.{0,19}?)\s*(?<local_interface>(?:Gi|Fa|Te|Tw|Twe|Fo|Hu|Et|Eth|Po|Mg|mgmt)[\w/.]*\d)\s+\d+\s+` +
        String.raw`(?:[A-Z](?:,[A-Z])*\s+)?(?<remote_interface>\S+)\s*$`,
    ),
  },
};

const LLDP_DETAIL_NXOS: ParseSpec = {
  kind: 'blocks',
  start: /^Chassis id: (?<remote_chassis_id>\S+)/,
  fields: [
    ...LLDP_FIELDS,
    /^Local Port id: (?<local_interface>\S+)/,
    /^System Description: (?<remote_platform>.+)$/,
    new RegExp(String.raw`^Management Address: (?<remote_address>${IPV4})\s*$`),
  ],
};

const LLDP_DETAIL_XR: ParseSpec = {
  kind: 'blocks',
  start: /^Local Interface: (?<local_interface>\S+)/,
  fields: [...LLDP_FIELDS, new RegExp(String.raw`^\s+IPv4 address: (?<remote_address>${IPV4})`)],
};

const LLDP_DETAIL_EOS: ParseSpec = {
  kind: 'blocks',
  ignore: [/^(Last table change time|Number of table [\w-]+)\s*:/],
  context: [/^Interface (?<local_interface>\S+) detected \d+ LLDP neighbors:/],
  start: /^\s+Neighbor (?<remote_chassis_id>[^/\s]+)\/(?<remote_interface>\S+), age/,
  fields: [
    /^\s+- System Name: (?<remote_name>.+)$/,
    /^\s+- System Description: (?<remote_platform>.+)$/,
    new RegExp(String.raw`^\s+Management Address\s+: (?<remote_address>${IPV4})`),
  ],
};

/** Port info is the neighbor's port description when it sends one, spaces and all; the system name is the last word. */
const LLDP_JUNOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(
    String.raw`^(?<local_interface>[a-z]{2,4}-\d+\/\d+\/\d+(?:\.\d+)?|[a-z]+\d+(?:\.\d+)?)\s+\S+\s+` +
      String.raw`(?<remote_chassis_id>${MAC_COLON})\s+(?<remote_interface>\S(?:.*\S)?)\s+(?<remote_name>\S+)\s*$`,
  ),
};

/** PAN-OS: an interface heading (and on the firewalls a "Local interface:" line), then its peers. */
const LLDP_PANOS: ParseSpec = {
  kind: 'blocks',
  context: [/^(?<local_interface>(?:ethernet|ae)\d+\/\d+(?:\.\d+)?)\s*$/, /^\s*Local interface:\s*(?<local_interface>\S+)/i],
  start: /^\s*Peer\s+\d+(?::| information)/i,
  fields: [
    /^\s*Chassis ID: (?<remote_chassis_id>\S+)/i,
    /^\s*Port ID: (?<remote_interface>\S+)/i,
    /^\s*System Name: (?<remote_name>.+)$/i,
    /^\s*System Description: (?<remote_platform>.+)$/i,
    new RegExp(String.raw`^\s*(?:Management Address|IPv4)\s*: (?<remote_address>${IPV4})`, 'i'),
  ],
};

const LLDP_FW: ParseSpec = {
  kind: 'table',
  row: new RegExp(
    String.raw`^(?<local_interface>\S+)\s+\d+\s+(?<remote_chassis_id>${MAC_COLON})\s+(?<remote_interface>\S+)\s+` +
      String.raw`(?<remote_name>\S+)\s+(?<remote_address>${IPV4}|-)\s*$`,
  ),
};

// ---- ARP --------------------------------------------------------------------------------------

const ARP_IOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(
    String.raw`^Internet\s+(?<ip_address>${IPV4})\s+(?<age_min>\d+|-)\s+(?<mac_address>${MAC_DOTTED}|Incomplete)\s+ARPA(?:\s+(?<interface>\S+))?\s*$`,
  ),
};
const ARP_NXOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(
    String.raw`^(?<ip_address>${IPV4})\s+(?<age>\d{2}:\d{2}:\d{2}|-)\s+(?<mac_address>${MAC_DOTTED}|INCOMPLETE)\s+(?<interface>\S+)(?:\s+\S+)?\s*$`,
  ),
  // The flags legend ("CP - Added via L2RIB, …").
  ignore: [/^\s*(?:Flags:\s*)?[\w*+#]{1,2} - /],
};
const ARP_XR: ParseSpec = {
  kind: 'table',
  row: new RegExp(
    String.raw`^(?<ip_address>${IPV4})\s+(?<age>\d{2}:\d{2}:\d{2}|-)\s+(?<mac_address>${MAC_DOTTED})\s+\w+\s+ARPA\s+(?<interface>\S+)\s*$`,
  ),
  // The table is headed by its line card: "0/0/CPU0".
  ignore: [/^\d+\/\w+\/CPU\d+$/],
};
const ARP_EOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(String.raw`^(?<ip_address>${IPV4})\s+(?<age>[\d:]+|N\/A|-)\s+(?<mac_address>${MAC_DOTTED})\s+(?<interface>[^,\s]+)(?:,.*)?$`),
};
const ARP_JUNOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(String.raw`^(?<mac_address>${MAC_COLON})\s+(?<ip_address>${IPV4})\s+(?<interface>\S+)(?: \[[^\]]*\])?\s+\S+\s*$`),
};
const ARP_PANOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(String.raw`^(?<interface>\S+)\s+(?<ip_address>${IPV4})\s+(?<mac_address>${MAC_COLON}|\(incomplete\))\s+\S+\s+[scei]\s+\d+\s*$`),
  ignore: [/^(maximum of entries supported|default timeout)\s*:/],
};
const ARP_FW: ParseSpec = {
  kind: 'table',
  row: new RegExp(String.raw`^(?<ip_address>${IPV4})\s+(?<age_min>\d+)\s+(?<mac_address>${MAC_COLON})\s+(?<interface>\S+)\s*$`),
};

// ---- MAC tables -------------------------------------------------------------------------------

/**
 * Port lists: "Gi1/0/1", "Gi3/1,Gi3/2,Router", "Et1, Et2", "Et1 Et2", "CPU". The separator between two
 * names is a comma (and blanks) or blanks, never nothing: with both optional a run of letters could be
 * cut into names in 2ⁿ ways, and a line that then fails to match took exponential time (a ReDoS).
 */
const PORT = String.raw`[A-Za-z][\w\/.:\-]*`;
const PORTS = String.raw`${PORT}(?:(?:,\s*|\s+)${PORT})*`;
/**
 * IOS, IOS-XE and EOS: "vlan mac type ports" (EOS adds Moves and Last Move), the Cat6500 forms
 * with a primary-entry flag and learn/age or protocols columns, and the Cat2950/3550
 * "Destination Address / Address Type / VLAN / Destination Port" form. A multicast or static
 * entry on several ports gives one record per port; more ports wrap onto indented lines.
 */
const MAC_IOS: ParseSpec = {
  kind: 'table',
  row: [
    new RegExp(
      String.raw`^[*+RGO ]?\s*(?<vlan>\d+|All|---|N\/A)\s+(?<mac_address>${MAC_DOTTED})\s+(?<entry_type>\w+)\s+` +
        String.raw`(?:(?:Yes|No|-)\s+(?:\d+|-|n\/a|N\/A)\s+)?(?:(?:ip|ipx|assigned|other)(?:,(?:ip|ipx|assigned|other))*\s+)?` +
        String.raw`(?<interfaces>${PORTS})(?:\s+\d+\s+\S.*ago)?\s*$`,
    ),
    new RegExp(
      String.raw`^(?<mac_address>${MAC_DOTTED})\s+(?<entry_type>Self|Dynamic|Static|Secure\w*)\s+(?<vlan>\d+)\s+(?<interfaces>${PORTS})\s*$`,
    ),
  ],
  continuation: new RegExp(String.raw`^\s{30,}(?<interfaces>${PORTS}),?\s*$`),
  ignore: [/^\s*(?:Legend|Codes):/i, /^\s*(?:age|n\/a)\s+-\s+/i, /^\s*Total Mac Addresses/i],
};
const MAC_NXOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(
    String.raw`^[*+GCO~ ]\s*(?<vlan>\d+|-)\s+(?<mac_address>${MAC_DOTTED})\s+(?<entry_type>\w+)\s+\S+\s+[TF]\s+[TF]\s+(?<interface>\S(?:.*\S)?)\s*$`,
  ),
};
/** ELS: "vlan mac flags age interface NH RTR"; before ELS: "VLAN MAC Type Age Interfaces" with Learn/Static types. */
const MAC_JUNOS: ParseSpec = {
  kind: 'table',
  row: [
    new RegExp(
      String.raw`^\s+(?<vlan_name>\S+)\s+(?<mac_address>${MAC_COLON})\s+(?<entry_type>[A-Z,]+)\s+\S+\s+(?<interface>\S+)(?:\s+\d+\s+\d+)?\s*$`,
    ),
    new RegExp(
      String.raw`^\s+(?<vlan_name>\S+)\s+(?<mac_address>${MAC_COLON})\s+(?<entry_type>Learn|Static|Persistent)\s+(?:[\d:]+|-)\s+(?<interface>\S+)\s*$`,
    ),
  ],
  ignore: [/^Ethernet[- ]switching table\s*:/i],
};
const MAC_PANOS: ParseSpec = {
  kind: 'table',
  row: new RegExp(String.raw`^(?<vlan_name>\S+)\s+(?<mac_address>${MAC_COLON})\s+(?<interface>\S+)\s+(?<entry_type>[sci])\s+\d+\s*$`),
  ignore: [/^(maximum of entries supported|default timeout)\s*:/],
};

// ---- VLANs ------------------------------------------------------------------------------------

/** IOS, NX-OS and EOS: ports wrap onto indented continuation lines. */
const VLAN_IOS: ParseSpec = {
  kind: 'table',
  row: /^(?<vlan_id>\d{1,4})\s+(?<name>\S+)\s+(?<status>active|act\/\S+|suspended|sus\S*)(?:\s+(?<interfaces>\S.*)|\s*)$/,
  continuation: /^\s{20,}(?<interfaces>[A-Za-z][\w/.-]*(?:,\s*[A-Za-z][\w/.-]*)*),?\s*$/,
  candidate: /^\d{1,4}\s/,
};
// The last digit run is one `\d`: `\d+[\w.*]*` would give the two quantifiers the same digits to share.
const JUNOS_PORT = String.raw`(?:[a-z]{2,4}-\d+\/\d+\/\d|ae\d|irb|vtep)[\w.*]*`;
/** Members: separated by a comma (and blanks) or blanks, never nothing (see PORTS). */
const JUNOS_PORTS = String.raw`${JUNOS_PORT}(?:(?:,\s*|\s+)${JUNOS_PORT})*`;
/** ELS switches print "instance name tag", older ones "name tag"; members wrap onto indented lines. */
const VLAN_JUNOS: ParseSpec = {
  kind: 'table',
  row: [
    new RegExp(String.raw`^(?<instance>[A-Za-z][\w\-]*)\s+(?<name>\S+)\s+(?<vlan_id>\d{1,4})(?:\s+(?<interfaces>${JUNOS_PORTS}))?,?\s*$`),
    new RegExp(String.raw`^(?<name>[A-Za-z][\w\-]*)\s+(?<vlan_id>\d{1,4})(?:\s+(?<interfaces>${JUNOS_PORTS}))?,?\s*$`),
  ],
  continuation: new RegExp(String.raw`^\s{10,}(?<interfaces>${JUNOS_PORTS}),?\s*$`),
  candidate: /^\S+\s+\S+\s+\d{1,4}\b/,
};

// ---- dialects ---------------------------------------------------------------------------------

const IOS_LIKE: DiscoveryDialect = {
  interfaces: { command: 'show interfaces', parse: SHOW_INTERFACES_IOS },
  cdp: { command: 'show cdp neighbors detail', parse: CDP_DETAIL },
  lldp: { command: 'show lldp neighbors detail', parse: LLDP_DETAIL_IOS, localInterfaces: LLDP_SUMMARY_IOS },
  arp: { command: 'show ip arp', parse: ARP_IOS },
  mac: { command: 'show mac address-table', parse: MAC_IOS },
  vlans: { command: 'show vlan brief', parse: VLAN_IOS },
};

const DIALECTS: Record<string, DiscoveryDialect> = {
  vendor_ios: IOS_LIKE,
  vendor_xe: IOS_LIKE,
  generic: IOS_LIKE,
  custom: IOS_LIKE,
  vendor_nxos: {
    interfaces: withJson('interfaces', 'nxos', { command: 'show interface', parse: SHOW_INTERFACE_NXOS }),
    cdp: withJson('cdp', 'nxos', { command: 'show cdp neighbors detail', parse: CDP_DETAIL }),
    lldp: withJson('lldp', 'nxos', { command: 'show lldp neighbors detail', parse: LLDP_DETAIL_NXOS }),
    arp: withJson('arp', 'nxos', { command: 'show ip arp', parse: ARP_NXOS }),
    mac: withJson('mac', 'nxos', { command: 'show mac address-table', parse: MAC_NXOS }),
    vlans: withJson('vlans', 'nxos', { command: 'show vlan brief', parse: VLAN_IOS }),
  },
  vendor_xr: {
    interfaces: { command: 'show interfaces', parse: SHOW_INTERFACES_IOS },
    cdp: { command: 'show cdp neighbors detail', parse: CDP_DETAIL },
    lldp: { command: 'show lldp neighbors detail', parse: LLDP_DETAIL_XR },
    arp: { command: 'show arp', parse: ARP_XR },
    mac: null,
    vlans: null,
  },
  vendor_eos: {
    interfaces: withJson('interfaces', 'eos', { command: 'show interfaces', parse: SHOW_INTERFACES_IOS }),
    cdp: null,
    lldp: withJson('lldp', 'eos', { command: 'show lldp neighbors detail', parse: LLDP_DETAIL_EOS }),
    arp: withJson('arp', 'eos', { command: 'show ip arp', parse: ARP_EOS }),
    mac: withJson('mac', 'eos', { command: 'show mac address-table', parse: MAC_IOS }),
    vlans: withJson('vlans', 'eos', { command: 'show vlan', parse: VLAN_IOS }),
  },
  vendor_junos: {
    interfaces: withJson('interfaces', 'junos', { command: 'show interfaces', parse: SHOW_INTERFACES_JUNOS }),
    cdp: null,
    lldp: withJson('lldp', 'junos', { command: 'show lldp neighbors', parse: LLDP_JUNOS }),
    arp: withJson('arp', 'junos', { command: 'show arp no-resolve', parse: ARP_JUNOS }),
    mac: withJson('mac', 'junos', { command: 'show ethernet-switching table', parse: MAC_JUNOS }),
    vlans: withJson('vlans', 'junos', { command: 'show vlans', parse: VLAN_JUNOS }),
  },
  vendor_panos: {
    interfaces: { command: 'show interface all', parse: SHOW_INTERFACE_PANOS },
    cdp: null,
    lldp: { command: 'show lldp neighbors all', parse: LLDP_PANOS },
    arp: { command: 'show arp all', parse: ARP_PANOS },
    mac: { command: 'show mac all', parse: MAC_PANOS },
    vlans: null,
  },
  vendor_fw: {
    interfaces: { command: 'get system interface', parse: GET_SYSTEM_INTERFACE_FW },
    cdp: null,
    lldp: { command: 'diagnose lldprx neighbor summary', parse: LLDP_FW },
    arp: { command: 'get system arp', parse: ARP_FW },
    mac: null,
    vlans: null,
  },
};

export const DISCOVERY_DIALECT_TYPES = Object.freeze(Object.keys(DIALECTS));

/** The discovery table of a device_type; unknown types use the generic (IOS-like) one. */
export function discoveryDialect(deviceType: string): DiscoveryDialect {
  return DIALECTS[deviceType] ?? DIALECTS.generic;
}
