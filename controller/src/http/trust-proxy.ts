import { isIP } from 'node:net';

/** Fastify's trustProxy: false, a hop count, or the proxies' addresses and CIDR ranges. */
export type TrustProxy = false | number | string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return false;
  if (bits === undefined) return true;
  const width = Number(bits);
  return /^\d+$/.test(bits) && width <= (family === 4 ? 32 : 128);
}

/**
 * SWITCHBOARD_TRUST_PROXY: off by default (the client address is the TCP peer). Behind a load
 * balancer, name the proxies ("10.0.0.5, 10.1.0.0/16", or loopback/linklocal/uniquelocal), or give
 * the number of proxy hops in front of the controller; X-Forwarded-For is then read through them.
 * "true" (trust any sender of X-Forwarded-For) is refused: anyone could pick their own address
 * and walk past the per-address lockout and rate limit.
 */
export function trustProxyFrom(raw: string | undefined, fail: (message: string) => Error): TrustProxy {
  const value = (raw ?? '').trim();
  if (value === '' || /^(off|false|0|no)$/i.test(value)) return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw fail(`SWITCHBOARD_TRUST_PROXY hop count must be 1 to 10, got ${value}`);
    return hops;
  }
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => !isAddressOrRange(entry));
  if (bad.length || entries.length === 0) {
    throw fail(
      `SWITCHBOARD_TRUST_PROXY must be off, a hop count (1-10), or a comma-separated list of proxy addresses/CIDRs; cannot read "${bad.join(', ') || value}"`,
    );
  }
  return entries;
}

/** Fastify's types take a hop count as the function proxy-addr makes of it. */
export function fastifyTrustProxy(trust: TrustProxy | undefined): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust ?? false;
  return (_address, hop) => hop < trust;
}
