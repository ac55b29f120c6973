import { Agent, buildConnector, fetch, type Response } from 'undici';
import { countJsonValues } from '../http/large-bodies';
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
    /** Why no answer came (error names, codes and messages), for the server log only. */
    readonly detail?: string,
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

/**
 * Devices asked for per page, and what the controller reads of one answer at the most: NetBox's
 * device objects run to 2–5 KB and 100–200 JSON values each, so a full page fits many times over,
 * while a server that answers without end cannot exhaust the controller's heap (a 40 MB answer of
 * empty objects took the process down: parsed, each value costs about 100 bytes).
 */
const PAGE_SIZE = 250;
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const MAX_ANSWER_VALUES = 250_000;
const MAX_PAGES = 10_000;
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

/** Each error of the chain as `name [code]: message`, for the log: what the reader of the API is not told. */
function causeChain(err: unknown, token: string): string {
  const text = causes(err)
    .map((c) => {
      const { name, code } = c as { name?: unknown; code?: unknown };
      return `${typeof name === 'string' ? name : 'Error'}${typeof code === 'string' ? ` [${code}]` : ''}: ${c.message ?? String(c)}`;
    })
    .join(' <- ');
  return token ? text.split(token).join('********') : text;
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

/** An answer's body, or null past MAX_ANSWER_BYTES (said by its length, or found reading it: the rest is not read). */
async function readCapped(res: Response): Promise<Buffer | null> {
  if (Number(res.headers.get('content-length') ?? 0) > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    return null;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    // Leaving the loop cancels the stream, which closes the connection.
    if (size > MAX_ANSWER_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
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

  /**
   * A request that got no HTTP answer. Whatever the cause (connection refused or reset, a TLS
   * failure, bytes that are not HTTP, no answer in time), the caller reads one message: telling
   * them apart would tell an open port from a closed one, and let whoever sets a source's URL
   * scan the controller's network. The cause goes to the server log (NetboxError.detail). Two
   * failures keep their own words, as they say nothing about the port: the destination policy's
   * refusal (decided before connecting) and a redirect (an HTTP answer).
   */
  private describe(err: unknown): NetboxError {
    const refused = causes(err).find((c) => c instanceof DestinationRefused);
    if (refused) return new NetboxError(refused.message!);
    if (causes(err).some((c) => c.message === 'unexpected redirect')) {
      return new NetboxError(`NetBox at ${this.connection.url} answered a redirect, which is not followed; give the URL it redirects to`);
    }
    const seconds = this.connection.timeoutMs / 1000;
    return new NetboxError(
      `Could not reach NetBox at ${this.connection.url}: no HTTP answer came. Check the URL's host and port, that NetBox is up and ` +
        `answers within ${seconds} s (the source's timeout), and its TLS certificate (install its CA or set verify_ssl to false); ` +
        "the controller's log says what failed",
      undefined,
      causeChain(err, this.connection.token),
    );
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
      const bytes = await readCapped(res);
      if (!bytes)
        throw new NetboxError(`NetBox's answer for ${path} is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB, the most the controller reads`);
      if (countJsonValues(bytes, MAX_ANSWER_VALUES) > MAX_ANSWER_VALUES) {
        throw new NetboxError(`NetBox's answer for ${path} holds more than ${MAX_ANSWER_VALUES} JSON values, the most the controller parses`);
      }
      text = bytes.toString('utf8');
    } catch (err) {
      throw err instanceof NetboxError ? err : this.describe(err);
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
