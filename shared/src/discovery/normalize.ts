/**
 * Value normalizers shared by the SSH parsers and the gNMI mapping: every maker's way of
 * writing a MAC address, a speed, a status or an address ends up in one form.
 */
import type { Status } from './records';

/** aabb.cc00.0100, AA-BB-CC-00-01-00, aa:bb:cc:0:1:0, aabbcc000100 → aa:bb:cc:00:01:00; else null. */
export function normalizeMac(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const text = raw.trim().toLowerCase();
  let hex: string;
  if (/^[0-9a-f]{1,2}([:-][0-9a-f]{1,2}){5}$/.test(text))
    hex = text
      .split(/[:-]/)
      .map((p) => p.padStart(2, '0'))
      .join('');
  else if (/^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$/.test(text)) hex = text.replace(/\./g, '');
  else if (/^[0-9a-f]{12}$/.test(text)) hex = text;
  else return null;
  return hex.match(/../g)!.join(':');
}

const STATUS_WORDS: [RegExp, Status][] = [
  [
    new RegExp(
      String.raw`^(administratively|admin[- ]?down|disabled?|shutdown|down|notconnect|not ?connected|not ?present|disconnected|err-disabled|` +
        String.raw`lower ?layer ?down|inactive|no ?carrier|suspended|act\/unsup|unknown-down)`,
      'i',
    ),
    'down',
  ],
  [/^(up|enabled?|connected|active|link ?up|running|ok|trunking)/i, 'up'],
  [/^(testing|dormant|monitoring)/i, 'testing'],
];

export function normalizeStatus(raw: string | null | undefined): Status {
  if (!raw) return 'unknown';
  const text = raw.trim().replace(/^["(]|[")]$/g, '');
  for (const [re, status] of STATUS_WORDS) if (re.test(text)) return status;
  return 'unknown';
}

/**
 * Speed in Mb/s from the ways CLIs print it: 1000Mb/s, 1Gb/s, 10 Gb/s, 1000mbps, 10Gbps,
 * a-1000, 100M, 10G, 25000 (plain number = Mb/s), SPEED_10GB (openconfig). auto/unknown → null.
 */
export function parseSpeed(raw: string | null | undefined): number | null {
  if (!raw) return null;
  const text = raw
    .trim()
    .replace(/^a-/i, '')
    .replace(/^SPEED_/i, '');
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt])?(?:b(?:it)?(?:\/s|ps|s)?|b)?$/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? 'm').toLowerCase();
  const mbps = unit === 'k' ? n / 1000 : unit === 'g' ? n * 1000 : unit === 't' ? n * 1_000_000 : n;
  return Number.isFinite(mbps) && mbps > 0 ? Math.round(mbps) : null;
}

export function parseDuplex(raw: string | null | undefined): 'full' | 'half' | 'auto' | null {
  if (!raw) return null;
  const t = raw.trim().toLowerCase().replace(/^a-/, '');
  if (t.startsWith('full')) return 'full';
  if (t.startsWith('half')) return 'half';
  if (t.startsWith('auto')) return 'auto';
  return null;
}

/** 255.255.255.0 → 24; null when not a contiguous mask. */
export function maskToPrefix(mask: string): number | null {
  const parts = mask.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return null;
  const bits = parts.map((p) => p.toString(2).padStart(8, '0')).join('');
  return /^1*0*$/.test(bits) ? (bits.indexOf('0') === -1 ? 32 : bits.indexOf('0')) : null;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
export const isIpv4 = (s: string) => IPV4.test(s);
export const isIp = (s: string) => IPV4.test(s) || (/^[0-9a-f:]+$/i.test(s) && s.includes(':') && s.length >= 2);

/** An address from its parts: ip with prefix length, with a dotted mask, or already in CIDR form. */
export function cidr(ip: string | undefined, prefix?: string | number | null, mask?: string | null): string | null {
  if (!ip) return null;
  const [addr, plen] = ip.split('/');
  if (!isIp(addr)) return null;
  const p = plen ?? (prefix !== undefined && prefix !== null && prefix !== '' ? String(prefix) : mask ? String(maskToPrefix(mask) ?? '') : '');
  return p ? `${addr}/${p}` : addr;
}

/** Age as devices print it (5, 00:05:12, 0:01:02, 1d2h, -) → seconds; `minutes` for bare numbers in minutes. */
export function parseAge(raw: string | null | undefined, bareUnit: 'minutes' | 'seconds' = 'seconds'): number | null {
  if (!raw) return null;
  const t = raw.trim();
  if (/^\d+$/.test(t)) return Number(t) * (bareUnit === 'minutes' ? 60 : 1);
  const hms = /^(\d+):(\d{2}):(\d{2})$/.exec(t);
  if (hms) return Number(hms[1]) * 3600 + Number(hms[2]) * 60 + Number(hms[3]);
  const ms = /^(\d+):(\d{2})$/.exec(t);
  if (ms) return Number(ms[1]) * 60 + Number(ms[2]);
  const parts = [...t.matchAll(/(\d+)([wdhms])/g)];
  if (parts.length > 0) {
    const unit: Record<string, number> = { w: 604800, d: 86400, h: 3600, m: 60, s: 1 };
    return parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u], 0);
  }
  return null;
}

/** Interface lists as CLIs print them: "Gi0/1, Gi0/2", "Et3 Et4", "ge-0/0/1.0*" → names. */
export function splitInterfaces(raw: string | null | undefined): string[] {
  if (!raw) return [];
  return raw
    .split(/[,\s]+/)
    .map((s) => s.trim().replace(/\*$/, ''))
    .filter((s) => s !== '' && s !== '-');
}

const ABBREVIATIONS: [RegExp, string][] = [
  [/^(gi|gig|gigabitethernet|ge)(?=\d)/i, 'gigabitethernet'],
  [/^(te|ten|tengigabitethernet|tengige|xe)(?=\d)/i, 'tengigabitethernet'],
  [/^(twe|twentyfivegige|twentyfivegigabitethernet)(?=\d)/i, 'twentyfivegige'],
  [/^(fo|fortygigabitethernet|fortygige)(?=\d)/i, 'fortygigabitethernet'],
  [/^(hu|hundredgige|hundredgigabitethernet)(?=\d)/i, 'hundredgige'],
  [/^(fa|fastethernet)(?=\d)/i, 'fastethernet'],
  [/^(et|eth|ethernet)(?=\d)/i, 'ethernet'],
  [/^(po|port-channel|portchannel)(?=\d)/i, 'port-channel'],
  [/^(lo|loopback)(?=\d)/i, 'loopback'],
  [/^(vl|vlan)(?=\d)/i, 'vlan'],
  [/^(mgmt|management|ma)(?=\d)/i, 'management'],
];

/** A comparison key for interface names: Gi0/1 and GigabitEthernet0/1 give the same key. */
export function interfaceKey(name: string | null | undefined): string {
  if (!name) return '';
  let t = name.trim().toLowerCase().replace(/\s+/g, '');
  for (const [re, full] of ABBREVIATIONS) {
    if (re.test(t)) {
      t = t.replace(re, full);
      break;
    }
  }
  return t;
}

/** A host name as a comparison key: lower case, no domain, no quotes (R2.lab.example → r2). */
export function hostKey(name: string | null | undefined): string {
  if (!name) return '';
  const t = name.trim().replace(/^"|"$/g, '').toLowerCase();
  if (isIp(t)) return t;
  return t.split('.')[0].replace(/\(.*\)$/, '');
}
