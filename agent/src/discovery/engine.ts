/**
 * The data-driven parser engine. A dialect describes each show command with regular
 * expressions only (see dialects.ts); this file turns output text into raw captures and the
 * captures into records, by named-group conventions:
 *
 * - `table`: one record per line matching `row`; `continuation` lines add to the last record's
 *   list groups (a VLAN's ports wrapping onto the next line).
 * - `blocks`: a record starts at a line matching `start` and runs until the next start (or an
 *   `end` line); `fields` take the first match inside the block, `lists` every match.
 *
 * Group names are record field names or the raw forms the builders below understand (link,
 * admin, oper, speed, bw_kbit, mask, prefix, ip, age_min …). Output is cleaned first of pager
 * residue, ANSI sequences, backspaces and carriage returns, so text captured with a pager still
 * on, or cut short, parses to the rows that are whole.
 */
import {
  cidr,
  normalizeMac,
  normalizeStatus,
  parseAge,
  parseDuplex,
  parseSpeed,
  splitInterfaces,
} from './normalize';
import type { ArpRecord, DiscoveryRecords, InterfaceRecord, MacRecord, NeighborProtocol, NeighborRecord, VlanRecord } from './records';
import { renderLine } from '../drivers/ssh/text';

export type Groups = Record<string, string | undefined>;

export interface TableSpec {
  kind: 'table';
  /** One or more row shapes (PAN-OS prints a hardware and a logical table in one output). */
  row: RegExp | RegExp[];
  continuation?: RegExp;
  /** Rows with the same value of this group are one record (their addresses add up). */
  mergeBy?: string;
  /** Lines that carry data (default: an IPv4 or MAC address in them): unparsed ones count as skipped. */
  candidate?: RegExp;
}

export interface BlockSpec {
  kind: 'blocks';
  start: RegExp;
  end?: RegExp;
  /** Lines outside records whose groups every following record inherits (EOS "Interface Ethernet1 detected …"). */
  context?: RegExp[];
  /** First match wins, per group. */
  fields?: RegExp[];
  /** Every match, per list name (addresses). */
  lists?: Record<string, RegExp[]>;
}

export type ParseSpec = TableSpec | BlockSpec;

/** One raw record: its single captures and, per list name, each list match's captures. */
export interface RawRecord {
  groups: Groups;
  lists: Record<string, Groups[]>;
}

export interface ParseOutcome<T> {
  records: T[];
  /** Lines that were neither parsed nor recognisable as headers or blank. */
  skipped: number;
}

// ---- cleaning ---------------------------------------------------------------------------------

/** Pager prompts of every dialect, wherever they were left in a line. */
const PAGER_RESIDUE = [/ ?--+ ?[Mm]ore ?--+ ?/g, /<--- More --->/g, /---\(more( \d+%)?\)---/g, /^lines \d+-\d+( \(END\))?/g, /\(END\)/g];

/** Output as clean lines: ANSI removed, \r and \b applied, pager prompts cut out, right-trimmed. */
export function cleanLines(text: string): string[] {
  return text.split('\n').map((raw) => {
    // The SSH driver's terminal rendering: escapes, \r and \b applied as a terminal would.
    let line = renderLine(raw);
    for (const re of PAGER_RESIDUE) line = line.replace(re, '');
    return line.trimEnd();
  });
}

// ---- parsing ----------------------------------------------------------------------------------

const groupsOf = (m: RegExpExecArray | null): Groups | null => (m ? { ...(m.groups ?? {}) } : null);
const DATA_LINE = /\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|\b[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}\b|\b([0-9a-f]{2}:){5}[0-9a-f]{2}\b/i;
const ADDRESS_GROUPS = ['ip', 'prefix', 'mask'];

function firstMatch(res: RegExp[], line: string): Groups | null {
  for (const re of res) {
    const g = groupsOf(re.exec(line));
    if (g) return g;
  }
  return null;
}

/** Adds groups that are not set yet (first match wins). */
function fill(into: Groups, from: Groups): void {
  for (const [k, v] of Object.entries(from)) if (v !== undefined && into[k] === undefined) into[k] = v;
}

function parseTable(lines: string[], spec: TableSpec): ParseOutcome<RawRecord> {
  const rows = Array.isArray(spec.row) ? spec.row : [spec.row];
  const candidate = spec.candidate ?? DATA_LINE;
  const records: RawRecord[] = [];
  const byKey = new Map<string, RawRecord>();
  let skipped = 0;
  let last: RawRecord | null = null;
  for (const line of lines) {
    const row = firstMatch(rows, line);
    if (row) {
      const key = spec.mergeBy ? row[spec.mergeBy] : undefined;
      const address = row.ip ? { ip: row.ip, prefix: row.prefix, mask: row.mask } : null;
      for (const k of ADDRESS_GROUPS) delete row[k];
      let rec = key !== undefined ? byKey.get(key) : undefined;
      if (rec) fill(rec.groups, row);
      else {
        rec = { groups: row, lists: {} };
        records.push(rec);
        if (key !== undefined) byKey.set(key, rec);
      }
      if (address) (rec.lists.addr ??= []).push(address);
      last = rec;
      continue;
    }
    const more = spec.continuation && last ? groupsOf(spec.continuation.exec(line)) : null;
    if (more && last) {
      for (const [k, v] of Object.entries(more)) if (v) last.groups[k] = last.groups[k] ? `${last.groups[k]}, ${v}` : v;
      continue;
    }
    last = null;
    if (candidate.test(line)) skipped += 1;
  }
  return { records, skipped };
}

function parseBlocks(lines: string[], spec: BlockSpec): ParseOutcome<RawRecord> {
  const records: RawRecord[] = [];
  let context: Groups = {};
  let current: RawRecord | null = null;
  for (const line of lines) {
    const start = groupsOf(spec.start.exec(line));
    if (start) {
      current = { groups: { ...context }, lists: {} };
      for (const [k, v] of Object.entries(start)) if (v !== undefined) current.groups[k] = v;
      records.push(current);
      continue;
    }
    const ctx = spec.context ? firstMatch(spec.context, line) : null;
    if (ctx) {
      context = ctx;
      current = null;
      continue;
    }
    if (!current) continue;
    if (spec.end?.test(line)) {
      current = null;
      continue;
    }
    for (const re of spec.fields ?? []) {
      const g = groupsOf(re.exec(line));
      if (g) fill(current.groups, g);
    }
    for (const [list, res] of Object.entries(spec.lists ?? {})) {
      const g = firstMatch(res, line);
      if (g) (current.lists[list] ??= []).push(g);
    }
  }
  return { records, skipped: 0 };
}

export function parseRaw(text: string, spec: ParseSpec): ParseOutcome<RawRecord> {
  const lines = cleanLines(text);
  return spec.kind === 'table' ? parseTable(lines, spec) : parseBlocks(lines, spec);
}

// ---- building records -------------------------------------------------------------------------

const text = (v: string | undefined): string => (v ?? '').trim().replace(/^"(.*)"$/, '$1');
const orNull = (v: string | undefined): string | null => {
  const t = text(v);
  return t === '' || t === '-' || /^(not advertised|n\/a|none|null)$/i.test(t) ? null : t;
};
const intOrNull = (v: string | undefined): number | null => {
  const n = Number(text(v));
  return text(v) !== '' && Number.isInteger(n) ? n : null;
};

export function buildInterface({ groups: g, lists }: RawRecord): InterfaceRecord | null {
  const name = text(g.name);
  if (!name) return null;
  const link = g.link ?? '';
  const adminDown = /administratively|admin(istrative)?[- ]?down|disabled|shutdown/i.test(link);
  const admin = g.admin !== undefined ? normalizeStatus(g.admin) : link ? (adminDown ? 'down' : 'up') : 'unknown';
  const oper = g.oper !== undefined ? normalizeStatus(g.oper) : link ? (adminDown ? 'down' : normalizeStatus(link)) : 'unknown';
  const addresses = [
    ...(lists.addr ?? []).map((a) => cidr(a.ip, a.prefix, a.mask)),
    ...(g.ip ? [cidr(g.ip, g.prefix, g.mask)] : []),
  ]
    .filter((a): a is string => a !== null && !a.startsWith('0.0.0.0'))
    // An IPv4 address printed without a length (Junos "Local: 10.255.0.1") is a host address.
    .map((a) => (a.includes('/') || a.includes(':') ? a : `${a}/32`));
  const bw = g.bw_kbit ? Number(g.bw_kbit) / 1000 : null;
  return {
    name,
    description: text(g.description),
    admin_status: admin,
    oper_status: oper,
    speed_mbps: parseSpeed(g.speed) ?? (bw && bw >= 1 ? Math.round(bw) : null),
    duplex: parseDuplex(g.duplex),
    mtu: intOrNull(g.mtu),
    mac_address: normalizeMac(g.mac),
    addresses: [...new Set(addresses)],
  };
}

export function buildNeighbor(protocol: NeighborProtocol) {
  return ({ groups: g }: RawRecord): NeighborRecord | null => {
    const local = text(g.local_interface);
    const remoteName = orNull(g.remote_name) ?? orNull(g.remote_chassis_id);
    if (!local || !remoteName) return null;
    return {
      protocol,
      local_interface: local,
      remote_name: remoteName,
      remote_interface: orNull(g.remote_interface),
      remote_address: orNull(g.remote_address),
      remote_platform: orNull(g.remote_platform),
      remote_chassis_id: protocol === 'lldp' ? (normalizeMac(g.remote_chassis_id) ?? orNull(g.remote_chassis_id)) : null,
    };
  };
}

export function buildArp({ groups: g }: RawRecord): ArpRecord | null {
  const ip = text(g.ip_address);
  const mac = normalizeMac(g.mac_address);
  if (!ip || (!mac && !/incomplete/i.test(g.mac_address ?? ''))) return null;
  return {
    ip_address: ip,
    mac_address: mac,
    interface: orNull(g.interface),
    age_seconds: g.age_min !== undefined ? parseAge(g.age_min, 'minutes') : parseAge(g.age),
  };
}

/** `vlanIds` resolves VLAN names (Junos prints names in its switching table) to ids. */
export const buildMac = (vlanIds: ReadonlyMap<string, number> = new Map()) => ({ groups: g }: RawRecord): MacRecord | null => {
  const mac = normalizeMac(g.mac_address);
  if (!mac) return null;
  const type = text(g.entry_type).toLowerCase();
  return {
    mac_address: mac,
    vlan: intOrNull(g.vlan) ?? vlanIds.get(text(g.vlan_name)) ?? null,
    interface: orNull(g.interface),
    entry_type: /^(d|dl|dynamic|learn(ed)?|c)$/.test(type) ? 'dynamic' : /^(s|static|permanent|secure)/.test(type) ? 'static' : 'other',
  };
};

export function buildVlan({ groups: g }: RawRecord): VlanRecord | null {
  const id = intOrNull(g.vlan_id);
  if (id === null || id < 1 || id > 4094) return null;
  return { vlan_id: id, name: text(g.name), status: text(g.status).toLowerCase() || 'active', interfaces: splitInterfaces(g.interfaces) };
}

export type Builder<T> = (raw: RawRecord) => T | null;

/** Parses and builds; raw records that do not make a record (cut-off blocks) count as skipped. */
export function parseRecords<T>(text: string, spec: ParseSpec, build: Builder<T>): ParseOutcome<T> {
  const raw = parseRaw(text, spec);
  const records: T[] = [];
  let skipped = raw.skipped;
  for (const r of raw.records) {
    const rec = build(r);
    if (rec) records.push(rec);
    else skipped += 1;
  }
  return { records, skipped };
}

export type RecordKind = keyof DiscoveryRecords;
