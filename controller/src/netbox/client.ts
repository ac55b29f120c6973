import { Agent, buildConnector, fetch } from 'undici';
import { defaultPort, DestinationRefused, type DestinationPolicy } from './destination';

/**
 * A NetBox request that failed, worded for the person reading the sync result. Never holds the
 * token, nor what the remote answered: `remoteBody` is for the server log only, so a source
 * pointed at some other service cannot read that service's answers back through the API.
 */
export class NetboxError extends Error {
  override name = 'NetboxError';
  constructor(
    message: string,
    readonly remoteBody?: string,
  ) {
    super(message);
  }
}

export interface NetboxConnection {
  /** Base URL without a trailing slash, e.g. https://netbox.example.com. */
  url: string;
  token: string;
  verifySsl: boolean;
  timeoutMs: number;
  /** Where the source may connect; checked on each resolved address before the socket connects. */
  policy: DestinationPolicy;
}

type Named = { name?: string | null; slug?: string | null } | null | undefined;

/** The parts of a NetBox /api/dcim/devices/ result a sync reads. */
export interface NetboxDevice {
  id: number;
  name: string | null;
  device_type?: { model?: string | null; manufacturer?: Named } | null;
  platform?: Named;
  site?: Named;
  primary_ip?: { address?: string | null } | null;
  primary_ip4?: { address?: string | null } | null;
  primary_ip6?: { address?: string | null } | null;
  serial?: string | null;
  asset_tag?: string | null;
  tags?: Named[] | null;
}

export type DeviceFilters = Record<string, string | number | boolean | (string | number | boolean)[]>;

const PAGE_SIZE = 1000;
const MAX_PAGES = 10_000;
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_NOT_YET_VALID',
]);

/** Query string of the filters; arrays repeat the key (NetBox ORs repeated values). */
export function filterQuery(filters: DeviceFilters): URLSearchParams {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  return params;
}

/** NetBox v1 tokens go as `Token <key>`; v2 tokens (NetBox 4.5+, `nbt_<id>.<secret>`) as `Bearer`. */
export function authorizationHeader(token: string): string {
  return token.startsWith('nbt_') ? `Bearer ${token}` : `Token ${token}`;
}

function causes(err: unknown): { code?: unknown; message?: string }[] {
  const chain = [];
  let current = err as { code?: unknown; cause?: unknown; message?: string } | undefined;
  for (let depth = 0; current && depth < 5; depth++, current = current.cause as typeof current) chain.push(current);
  return chain;
}

function causeCode(err: unknown): string | undefined {
  const found = causes(err).find((c) => typeof c.code === 'string' && !c.code.startsWith('UND_ERR_'));
  return found?.code as string | undefined;
}

/**
 * Connects only where the policy allows: a name through the policy's lookup (the socket uses the
 * address that was checked), an address literal (which net connects to without a lookup) here.
 */
function guardedDispatcher(connection: NetboxConnection): Agent {
  const port = defaultPort(new URL(connection.url));
  const connector = buildConnector({ rejectUnauthorized: connection.verifySsl, lookup: connection.policy.lookup(port) });
  return new Agent({
    connect: (options, callback) => {
      try {
        connection.policy.checkLiteral(options.hostname, Number(options.port) || port);
      } catch (err) {
        return callback(err as Error, null);
      }
      return connector(options, callback);
    },
  });
}

/** Reads NetBox's REST API with the source's token, TLS setting and per-request time limit. */
export class NetboxClient {
  private readonly dispatcher: Agent;

  constructor(private readonly connection: NetboxConnection) {
    this.dispatcher = guardedDispatcher(connection);
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }

  private describe(err: unknown): string {
    const seconds = this.connection.timeoutMs / 1000;
    const name = (err as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') return `NetBox did not answer within ${seconds} s (${this.connection.url})`;
    const refused = causes(err).find((c) => c instanceof DestinationRefused);
    if (refused) return refused.message!;
    if (causes(err).some((c) => c.message === 'unexpected redirect')) {
      return `NetBox at ${this.connection.url} answered a redirect, which is not followed; give the URL it redirects to`;
    }
    const code = causeCode(err);
    if (code && TLS_CODES.has(code)) {
      return `The TLS certificate of ${this.connection.url} is not trusted (${code}); install its CA or set verify_ssl to false`;
    }
    return `Could not reach NetBox at ${this.connection.url}${code ? ` (${code})` : ''}`;
  }

  /** GET one API path with a query; answers the parsed JSON body and the API-Version header. */
  private async get(path: string, query: URLSearchParams): Promise<{ body: unknown; apiVersion: string | null }> {
    const url = `${this.connection.url}${path}?${query.toString()}`;
    let status: number;
    let text: string;
    let apiVersion: string | null;
    try {
      const res = await fetch(url, {
        headers: { authorization: authorizationHeader(this.connection.token), accept: 'application/json' },
        dispatcher: this.dispatcher,
        redirect: 'error',
        signal: AbortSignal.timeout(this.connection.timeoutMs),
      });
      status = res.status;
      apiVersion = res.headers.get('api-version');
      text = await res.text();
    } catch (err) {
      throw new NetboxError(this.describe(err));
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const fail = (message: string) => new NetboxError(message, text.slice(0, 2000));
    if (status === 401 || status === 403) throw fail(`NetBox refused the API token (HTTP ${status}); check the source's token`);
    if (status === 400) throw fail('NetBox refused the device filters (HTTP 400); check device_filters against the NetBox API');
    if (status === 404) throw fail(`NetBox answered HTTP 404 for ${path}; check that the URL is the NetBox base URL`);
    if (status >= 500) throw fail(`NetBox failed with HTTP ${status} (server error)`);
    if (status !== 200) throw fail(`NetBox answered HTTP ${status}`);
    if (body === undefined) throw fail(`NetBox answered something that is not JSON for ${path}; check that the URL is the NetBox base URL`);
    return { body, apiVersion };
  }

  private static page(body: unknown): { count: number; next: string | null; results: NetboxDevice[] } {
    const page = body as { count?: unknown; next?: unknown; results?: unknown };
    if (typeof page !== 'object' || page === null || typeof page.count !== 'number' || !Array.isArray(page.results)) {
      throw new NetboxError('NetBox answered a body that is not a device list ({count, next, results})');
    }
    return { count: page.count, next: typeof page.next === 'string' ? page.next : null, results: page.results as NetboxDevice[] };
  }

  /** Devices matching the filters and the NetBox API version, from one one-row page. */
  async count(filters: DeviceFilters): Promise<{ count: number; apiVersion: string | null }> {
    const query = filterQuery(filters);
    query.set('limit', '1');
    query.set('brief', 'true');
    const { body, apiVersion } = await this.get('/api/dcim/devices/', query);
    return { count: NetboxClient.page(body).count, apiVersion };
  }

  /**
   * Every device matching the filters, following `next`. Only the query of `next` is used,
   * against the source's own URL: the token never goes to a host named by a response, and a
   * NetBox behind a proxy that writes the wrong scheme or host into `next` still works.
   */
  async devices(filters: DeviceFilters): Promise<NetboxDevice[]> {
    const query = filterQuery(filters);
    query.set('limit', String(PAGE_SIZE));
    query.set('offset', '0');
    const devices: NetboxDevice[] = [];
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const page = NetboxClient.page((await this.get('/api/dcim/devices/', query)).body);
      devices.push(...page.results);
      if (!page.next || page.results.length === 0) return devices;
      let next: URLSearchParams;
      try {
        next = new URL(page.next).searchParams;
      } catch {
        throw new NetboxError('NetBox answered a next page link that is not a URL');
      }
      const offset = Number(next.get('offset'));
      if (!Number.isInteger(offset) || offset <= Number(query.get('offset'))) throw new NetboxError('NetBox pagination did not advance');
      query.set('offset', String(offset));
      query.set('limit', next.get('limit') ?? String(PAGE_SIZE));
    }
    throw new NetboxError(`NetBox listed more than ${MAX_PAGES} pages of devices; narrow device_filters`);
  }
}
