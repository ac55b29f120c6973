import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';

/** The setting a platform administrator fills in to let NetBox sources reach more hosts. */
export const ALLOWED_HOSTS_SETTING = 'netbox.allowed_hosts';

/** An address the controller refuses to connect to for a NetBox source. The message names the setting, never the address behind a name. */
export class DestinationRefused extends Error {
  override name = 'DestinationRefused';
}

type Family = 'ipv4' | 'ipv6';
const familyOf = (address: string): Family => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

function ranges(list: [string, number, Family][]): BlockList {
  const blocks = new BlockList();
  for (const [network, prefix, family] of list) blocks.addSubnet(network, prefix, family);
  return blocks;
}

/** Ranges reached only when an address or CIDR entry covers them (BlockList also matches IPv4-mapped IPv6). */
const SPECIAL: { what: string; blocks: BlockList }[] = [
  {
    what: 'a loopback address',
    blocks: ranges([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  },
  {
    what: 'a link-local address (such as a cloud metadata service)',
    blocks: ranges([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
  },
  {
    what: 'an unspecified address (this host)',
    blocks: ranges([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  },
];

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:hhhh:hhhh) as the IPv4 address it is. */
function unmapped(address: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return address;
  const [high, low] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** One netbox.allowed_hosts entry: a host name (or *.domain), an address, or a CIDR, with an optional :port. */
type Entry = { port: number | null } & ({ name: string } | { blocks: BlockList });

const normalName = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** Splits `[v6]:port`, `host:port`, a bare IPv6 address or CIDR, or a bare host. */
function splitPort(text: string): [string, string | undefined] {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return [bracketed[1], bracketed[2]];
  const colons = text.split(':').length - 1;
  if (colons === 1) return text.split(':') as [string, string];
  return [text, undefined];
}

/** undefined for an entry that is not usable (the setting's pattern lets few through). */
export function parseEntry(text: string): Entry | undefined {
  const [host, portText] = splitPort(text.trim());
  const port = portText === undefined ? null : Number(portText);
  if (port !== null && !(Number.isInteger(port) && port >= 1 && port <= 65535)) return undefined;
  const [address, prefixText, extra] = host.split('/');
  if (isIP(address) && extra === undefined) {
    const family = familyOf(address);
    const max = family === 'ipv4' ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return undefined;
    return { port, blocks: ranges([[address, prefix, family]]) };
  }
  if (/^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?\.?$/i.test(host)) return { port, name: normalName(host) };
  return undefined;
}

function nameMatches(pattern: string, hostname: string): boolean {
  const name = normalName(hostname);
  return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern;
}

/** Addresses of this machine: the controller listens on some of them. */
function ownAddresses(): Set<string> {
  const mine = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) mine.add(info.address.toLowerCase());
  return mine;
}

/** The port a URL connects to. */
export const defaultPort = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80));
const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '');

/**
 * Where NetBox sources may connect. Checked on the address a socket is about to connect to
 * (after DNS), so a name that resolves somewhere else at sync time than at creation gains nothing.
 * With no entries, any address but loopback, link-local, unspecified and the controller's own
 * port; with entries, only the hosts they name. Loopback, link-local and unspecified addresses
 * need an address or CIDR entry even then (a name entry is not enough: DNS may change), and the
 * controller's own port needs an entry that names that port.
 */
export class DestinationPolicy {
  private readonly entries: Entry[];
  /** Any entry at all, usable or not: a list of only mistyped entries must not read as empty (allow all). */
  private readonly listed: boolean;

  constructor(
    entries: readonly string[],
    private readonly ownPorts: () => number[],
  ) {
    this.entries = entries.map(parseEntry).filter((e): e is Entry => e !== undefined);
    this.listed = entries.length > 0;
  }

  /** Why connecting to address:port for a URL naming `hostname` is refused, or null when allowed. */
  refusal(hostname: string, connected: string, port: number): string | null {
    const address = unmapped(connected);
    const family = familyOf(address);
    const subject = isIP(hostname) ? `${address} is` : `${hostname} resolves to`;
    const portOk = (e: Entry) => e.port === null || e.port === port;
    const byAddress = this.entries.filter((e) => 'blocks' in e && portOk(e) && e.blocks.check(address, family));
    const special = SPECIAL.find((s) => s.blocks.check(address, family));
    if (special && byAddress.length === 0) {
      return `${subject} ${special.what}, which NetBox sources may reach only when an address or CIDR entry of the setting ${ALLOWED_HOSTS_SETTING} covers it`;
    }
    const self = special !== undefined || ownAddresses().has(address.toLowerCase());
    if (self && this.ownPorts().includes(port) && !byAddress.some((e) => e.port === port)) {
      return `port ${port} of this host is the controller's own; a NetBox source may use it only when an entry of ${ALLOWED_HOSTS_SETTING} names that port`;
    }
    if (this.listed && byAddress.length === 0 && !this.entries.some((e) => 'name' in e && portOk(e) && nameMatches(e.name, hostname))) {
      return `${hostname}:${port} is not in the setting ${ALLOWED_HOSTS_SETTING}; a platform administrator can add it`;
    }
    return null;
  }

  /** The addresses of `hostname` a connection may use; throws DestinationRefused when there are none. */
  allowed(hostname: string, addresses: LookupAddress[], port: number): LookupAddress[] {
    const reasons = addresses.map((a) => this.refusal(hostname, a.address, port));
    const usable = addresses.filter((_, i) => reasons[i] === null);
    if (usable.length === 0) throw new DestinationRefused(`NetBox URL refused: ${reasons.find((r) => r) ?? `${hostname} has no address`}`);
    return usable;
  }

  /** Resolves the URL's host and checks it: for creating or changing a source. */
  async check(rawUrl: string): Promise<void> {
    const url = new URL(rawUrl);
    const host = bareHost(url.hostname);
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveAll(host);
    this.allowed(host, addresses, defaultPort(url));
  }

  /**
   * A DNS lookup for net/tls connect that answers only allowed addresses, so the socket connects
   * to exactly the address that was checked. IP literals skip lookup: see checkLiteral.
   */
  lookup(port: number): LookupFunction {
    return (hostname, options, callback) => {
      resolveAll(hostname)
        .then((addresses) => {
          const usable = this.allowed(hostname, addresses, port).filter((a) => !options.family || a.family === options.family);
          if (usable.length === 0) throw new DestinationRefused(`NetBox URL refused: ${hostname} has no IPv${options.family} address`);
          if (options.all) callback(null, usable);
          else callback(null, usable[0].address, usable[0].family);
        })
        .catch((err: NodeJS.ErrnoException) => callback(err, ''));
    };
  }

  /** The check for a URL whose host is an address (net connects to it without a lookup). */
  checkLiteral(hostname: string, port: number): void {
    const host = bareHost(hostname);
    if (isIP(host)) this.allowed(host, [{ address: host, family: isIP(host) }], port);
  }
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) reject(err);
      else resolve(addresses);
    });
  });
}
