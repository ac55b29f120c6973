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
 *
 * Nothing is dropped silently: a line that is neither a record, part of a record's block, nor
 * furniture (blank, rules, headers without digits, totals, the spec's `ignore` list) counts as
 * unparsed and the first few are kept (`skipped`, `samples`); the poll reports such a section as
 * partial. Table output that gives no record at all counts all its non-furniture lines, so an
 * unknown layout never passes for an empty table.
 */
import { cidr, normalizeMac, normalizeStatus, parseAge, parseDuplex, parseSpeed, splitInterfaces } from '../../../shared/src/discovery/normalize';
import type {
  ArpRecord,
  DiscoveryRecords,
  InterfaceRecord,
  MacRecord,
  NeighborProtocol,
  NeighborRecord,
  VlanRecord,
} from '../../../shared/src/discovery/records';
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
  /** Headers, legends and totals this command prints: neither records nor unparsed. */
  ignore?: RegExp[];
}

export interface BlockSpec {
  kind: 'blocks';
  start: RegExp;
  /**
   * Lines that also open a record, unless the current one has not captured their groups yet:
   * an IOS LLDP neighbor opens with `Local Intf:` when the platform prints it and with
   * `Chassis id:` when it does not.
   */
  opens?: RegExp[];
  end?: RegExp;
  /** Headers, legends and totals printed outside the blocks: neither records nor unparsed. */
  ignore?: RegExp[];
  /** Lines outside records whose groups every following record inherits (EOS "Interface Ethernet1 detected …"). */
  context?: RegExp[];
  /** First match wins, per group. */
  fields?: RegExp[];
  /** Every match, per list name (addresses). */
  lists?: Record<string, RegExp[]>;
  /** A heading whose value is the next non-blank line (IOS "System Description:" then the text). */
  following?: { after: RegExp; group: string }[];
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
  /** The first few of them, as printed, for the poll history. */
  samples: string[];
}

/** How many unparsed lines a section keeps for the poll history, and how much of each. */
export const SAMPLE_LINES = 5;
const SAMPLE_CHARS = 200;

/** Collects the unparsed lines of one parse: a count and the first few. */
class Unparsed {
  skipped = 0;
  readonly samples: string[] = [];
  /** Lines cut to MAX_LINE_CHARS: counted once, when cut, however they parse. */
  constructor(private readonly cut: ReadonlySet<string> = new Set()) {}
  add(line: string): void {
    if (this.cut.has(line)) return;
    this.skipped += 1;
    if (this.samples.length < SAMPLE_LINES) this.samples.push(line.trim().slice(0, SAMPLE_CHARS));
  }
  /** A line counted as not understood for a reason the engine states. */
  note(text: string): void {
    this.skipped += 1;
    if (this.samples.length < SAMPLE_LINES) this.samples.push(text.slice(0, SAMPLE_CHARS));
  }
}

/**
 * Lines every command may print around its data: blank lines, rules, text without a digit
 * (headers, legends, column titles) and totals. They are neither records nor unparsed.
 */
const FURNITURE = [
  /^[\s\-=+_*|:.]*$/,
  /^[^\d]*$/,
  /^\s*total\b/i,
  // IOS-XR heads every command's output with the time: "Mon Jan 15 10:12:01.123 UTC".
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} +\d+ [\d:.]+( \w+)?$/,
];
const isFurniture = (line: string, ignore: RegExp[] = []) => FURNITURE.some((re) => re.test(line)) || ignore.some((re) => re.test(line));

// ---- cleaning ---------------------------------------------------------------------------------

/**
 * The longest line the patterns see. Output is parsed synchronously on the agent's one thread, so
 * the time a pattern may take must stay bounded whatever a device prints: no table line of any
 * dialect comes near 2,000 characters, and at this length even a pattern that backtracks
 * quadratically answers in milliseconds. A longer line is cut and counted as not understood, so
 * the section reports partial rather than passing off what was read of it as whole.
 */
export const MAX_LINE_CHARS = 2000;

/**
 * Pager prompts of every dialect, wherever they were left in a line. `(?<!-)` starts a match only at
 * the first dash of a run: without it a long run of dashes is rescanned from each of its dashes.
 */
const PAGER_RESIDUE = [/ ?(?<!-)-{2,} ?[Mm]ore ?-{2,} ?/g, /<--- More --->/g, /---\(more( \d+%)?\)---/g, /^lines \d+-\d+( \(END\))?/g, /\(END\)/g];

/** Clean lines, and the lines cut to MAX_LINE_CHARS with a note on each for the poll history. */
interface Cleaned {
  lines: string[];
  cut: Set<string>;
  notes: string[];
}

function clean(text: string): Cleaned {
  const cut = new Set<string>();
  const notes: string[] = [];
  const lines = text.split('\n').map((raw, i) => {
    // The SSH driver's terminal rendering: escapes, \r and \b applied as a terminal would.
    let line = renderLine(raw);
    // `.` matches neither: replaced, a `.*$` can always reach the end of the line.
    line = line.replace(/[\u2028\u2029]/g, ' ');
    const long = line.length > MAX_LINE_CHARS;
    if (long) line = line.slice(0, MAX_LINE_CHARS);
    for (const re of PAGER_RESIDUE) line = line.replace(re, '');
    line = line.trimEnd();
    if (long) {
      cut.add(line);
      notes.push(`line ${i + 1} cut to its first ${MAX_LINE_CHARS} characters: ${line.trim().slice(0, 80)}`);
    }
    return line;
  });
  return { lines, cut, notes };
}

/**
 * Output as clean lines: ANSI removed, \r and \b applied, pager prompts cut out, right-trimmed,
 * each at most MAX_LINE_CHARS long.
 */
export function cleanLines(text: string): string[] {
  return clean(text).lines;
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

function parseTable(lines: string[], spec: TableSpec, unparsed: Unparsed): ParseOutcome<RawRecord> {
  const rows = Array.isArray(spec.row) ? spec.row : [spec.row];
  const candidate = spec.candidate ?? DATA_LINE;
  const records: RawRecord[] = [];
  const byKey = new Map<string, RawRecord>();
  /** Lines neither data-like nor furniture: unparsed only when the whole output gave no record. */
  const strays: string[] = [];
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
      if (more.ip) (last.lists.addr ??= []).push({ ip: more.ip, prefix: more.prefix, mask: more.mask });
      for (const k of ADDRESS_GROUPS) delete more[k];
      for (const [k, v] of Object.entries(more)) if (v) last.groups[k] = last.groups[k] ? `${last.groups[k]}, ${v}` : v;
      continue;
    }
    last = null;
    if (candidate.test(line)) unparsed.add(line);
    else if (!isFurniture(line, spec.ignore)) strays.push(line);
  }
  // Output that is neither an empty table nor any row at all is a layout we do not know.
  if (records.length === 0) for (const line of strays) unparsed.add(line);
  return { records, skipped: unparsed.skipped, samples: unparsed.samples };
}

function parseBlocks(lines: string[], spec: BlockSpec, unparsed: Unparsed): ParseOutcome<RawRecord> {
  const records: RawRecord[] = [];
  let context: Groups = {};
  let current: RawRecord | null = null;
  let pending: string | null = null;
  for (const line of lines) {
    const start = groupsOf(spec.start.exec(line)) ?? reopens(spec, line, current);
    if (start) pending = null;
    if (pending && current && line.trim() !== '') {
      fill(current.groups, { [pending]: line.trim() });
      pending = null;
      continue;
    }
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
    if (!current) {
      if (!isFurniture(line, spec.ignore)) unparsed.add(line);
      continue;
    }
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
    pending = spec.following?.find((f) => f.after.test(line))?.group ?? null;
  }
  return { records, skipped: unparsed.skipped, samples: unparsed.samples };
}

/** A line of `opens` starts a record when there is none, or when the current one already has its groups. */
function reopens(spec: BlockSpec, line: string, current: RawRecord | null): Groups | null {
  const g = spec.opens ? firstMatch(spec.opens, line) : null;
  if (!g) return null;
  const fresh = Object.keys(g).some((k) => g[k] !== undefined && current?.groups[k] === undefined);
  return current && fresh ? null : g;
}

export function parseRaw(text: string, spec: ParseSpec): ParseOutcome<RawRecord> {
  const { lines, cut, notes } = clean(text);
  // A cut line is not understood whole, whatever its first part parses to: counted once, noted first.
  const unparsed = new Unparsed(cut);
  for (const note of notes) unparsed.note(note);
  return spec.kind === 'table' ? parseTable(lines, spec, unparsed) : parseBlocks(lines, spec, unparsed);
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
  // NX-OS puts the administrative state in brackets: "Vlan20 is down (Administratively down)".
  const link = g.link ?? '';
  const adminDown = /administratively|admin(istrative)?[- ]?down|disabled|shutdown/i.test(`${link} ${g.reason ?? ''}`);
  const admin = g.admin !== undefined && !adminDown ? normalizeStatus(g.admin) : link ? (adminDown ? 'down' : 'up') : 'unknown';
  const oper = g.oper !== undefined ? normalizeStatus(g.oper) : link ? (adminDown ? 'down' : normalizeStatus(link)) : 'unknown';
  const addresses = [...(lists.addr ?? []).map((a) => cidr(a.ip, a.prefix, a.mask)), ...(g.ip ? [cidr(g.ip, g.prefix, g.mask)] : [])]
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
    // A neighbor whose local interface is not printed keeps '' until the poll fills it in (ssh-poll.ts).
    const local = text(g.local_interface);
    const remoteName = orNull(g.remote_name) ?? orNull(g.remote_chassis_id);
    if (!remoteName) return null;
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
/** `vlanIds` resolves VLAN names (Junos prints names in its switching table) to ids; an entry on several ports gives one record per port. */
export const buildMac =
  (vlanIds: ReadonlyMap<string, number> = new Map()) =>
  ({ groups: g }: RawRecord): MacRecord[] | null => {
    const mac = normalizeMac(g.mac_address);
    if (!mac) return null;
    const type = text(g.entry_type).toLowerCase();
    const base = {
      mac_address: mac,
      vlan: intOrNull(g.vlan) ?? vlanIds.get(text(g.vlan_name)) ?? null,
      entry_type: /^(d|dl|dynamic|learn(ed)?|c)$/.test(type)
        ? ('dynamic' as const)
        : /^(s|static|permanent|secure|self)/.test(type)
          ? ('static' as const)
          : ('other' as const),
    };
    const ports = g.interfaces !== undefined ? splitInterfaces(g.interfaces) : [orNull(g.interface)];
    return (ports.length > 0 ? ports : [null]).map((port) => ({ ...base, interface: port }));
  };

export function buildVlan({ groups: g }: RawRecord): VlanRecord | null {
  const id = intOrNull(g.vlan_id);
  if (id === null || id < 1 || id > 4094) return null;
  return { vlan_id: id, name: text(g.name), status: text(g.status).toLowerCase() || 'active', interfaces: splitInterfaces(g.interfaces) };
}

/** A builder gives one record, several (a multicast MAC on many ports) or none (a cut-off block). */
export type Builder<T> = (raw: RawRecord) => T | T[] | null;

/** Parses and builds; raw records that do not make a record (cut-off blocks) count as skipped. */
export function parseRecords<T>(text: string, spec: ParseSpec, build: Builder<T>): ParseOutcome<T> {
  const raw = parseRaw(text, spec);
  const records: T[] = [];
  let skipped = raw.skipped;
  for (const r of raw.records) {
    const rec = build(r);
    if (Array.isArray(rec)) records.push(...rec);
    else if (rec) records.push(rec);
    else skipped += 1;
  }
  return { records, skipped, samples: raw.samples };
}

export type RecordKind = keyof DiscoveryRecords;
