/**
 * The networks a connection profile's credentials may be sent to (its allowed_networks): CIDR
 * text checked and normalized where it comes in (the controller), and matched with node:net's
 * BlockList wherever an address is judged (the controller for IP-literal hosts, the agent for
 * every address it is about to connect to). BlockList also matches IPv4-mapped IPv6 addresses
 * (::ffff:10.0.0.1) against IPv4 networks and the other way round.
 */
import { BlockList, isIP } from 'node:net';

/** Entries of one profile's allowed_networks at most. */
export const MAX_ALLOWED_NETWORKS = 256;

export class NetworkSyntaxError extends Error {
  override name = 'NetworkSyntaxError';
}

function v4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address isIP accepted (embedded IPv4 tail and :: allowed). */
function v6Bytes(address: string): number[] {
  let text = address;
  const tail = text.slice(text.lastIndexOf(':') + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = v4Bytes(tail);
    text = `${text.slice(0, text.length - tail.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const before = groups(head);
  const after = groups(rest);
  const all = rest === undefined ? before : [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  return all.flatMap((g) => [g >> 8, g & 255]);
}

/** RFC 5952 text: lower case, no leading zeros, the first longest run of two or more zero groups as ::. */
function v6Text(bytes: number[]): string {
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = (list: number[]) => list.map((g) => g.toString(16)).join(':');
  if (best.at < 0) return hex(groups);
  return `${hex(groups.slice(0, best.at))}::${hex(groups.slice(best.at + best.length))}`;
}

/**
 * One entry as the network it names: `10.1.0.0/16`, `2001:db8::/32`, or a bare address (a /32 or
 * /128). Host bits are cleared (10.1.2.3/16 is 10.1.0.0/16) and IPv6 is written as RFC 5952 says.
 * Throws NetworkSyntaxError naming the entry otherwise.
 */
export function normalizeNetwork(text: string): string {
  const entry = text.trim();
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = address.includes('%') ? 0 : isIP(address);
  if (family === 0) throw new NetworkSyntaxError(`'${text}' is not an IPv4 or IPv6 network in CIDR form (such as 10.20.0.0/16 or 2001:db8::/32)`);
  const bits = family === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(bits) : entry.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix <= bits)) throw new NetworkSyntaxError(`'${text}': the prefix length of an IPv${family} network is a whole number from 0 to ${bits}`);
  const bytes = family === 4 ? v4Bytes(address) : v6Bytes(address);
  const masked = bytes.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, prefix - 8 * i));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
  return `${family === 4 ? masked.join('.') : v6Text(masked)}/${prefix}`;
}

/** Every entry normalized, repeats dropped (first kept, order kept). Throws NetworkSyntaxError for the first bad entry. */
export function normalizeNetworks(list: readonly string[]): string[] {
  return [...new Set(list.map(normalizeNetwork))];
}

/**
 * A matcher for a list of normalized (or at least valid) networks. Throws NetworkSyntaxError for an
 * entry that is not a network, so a damaged list refuses everything rather than nothing.
 */
export function networkMatcher(networks: readonly string[]): (address: string) => boolean {
  const blocks = new BlockList();
  for (const network of networks) {
    const [address, prefix] = normalizeNetwork(network).split('/');
    blocks.addSubnet(address, Number(prefix), isIP(address) === 4 ? 'ipv4' : 'ipv6');
  }
  return (address) => {
    const bare = address.split('%')[0]; // a scope (fe80::1%eth0) is no part of the address
    const family = isIP(bare);
    return family !== 0 && blocks.check(bare, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * Whether a device host is an IP literal outside the networks (false for an empty list, which
 * limits nothing, and for a DNS name, which only the agent can judge, on what it resolves to).
 */
export function literalOutside(host: string, networks: readonly string[]): boolean {
  if (networks.length === 0 || isIP(host.split('%')[0]) === 0) return false;
  return !networkMatcher(networks)(host);
}
