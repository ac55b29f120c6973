import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * A NetBox stand-in for tests: GET /api/dcim/devices/ in NetBox's real response shape
 * ({count, next, previous, results}) with nested device_type.manufacturer, platform, site,
 * primary_ip4 "a.b.c.d/nn", tags, serial and asset_tag; limit/offset pagination with absolute
 * `next` URLs; NetBox-style filters; `Authorization: Token …` (`Bearer nbt_…` for v2 tokens).
 * Fault modes answer 401, 500 or never answer (timeout).
 */

export interface SimDevice {
  id: number;
  name: string | null;
  manufacturer: string;
  model: string;
  platform?: string | null;
  site: string;
  ip4?: string | null;
  ip6?: string | null;
  serial?: string;
  asset_tag?: string | null;
  tags?: string[];
  status?: string;
  role?: string;
}

export type SimMode = 'ok' | 'unauthorized' | 'error' | 'hang';

export interface NetboxSim {
  url: string;
  /** Every request seen: path with query, and the Authorization header. */
  requests: { path: string; authorization: string | undefined }[];
  devices: SimDevice[];
  mode: SimMode;
  /** Largest page the server gives, like NetBox's MAX_PAGE_SIZE. */
  maxPageSize: number;
  close(): Promise<void>;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

function ip(id: number, address: string, family: 4 | 6, base: string) {
  return { id, url: `${base}/api/ipam/ip-addresses/${id}/`, display: address, family, address };
}

/** One device as NetBox 4.x serializes it (the fields a sync reads, plus typical neighbours). */
export function netboxDevice(d: SimDevice, base: string) {
  const manufacturer = {
    id: 1,
    url: `${base}/api/dcim/manufacturers/1/`,
    display: d.manufacturer,
    name: d.manufacturer,
    slug: slug(d.manufacturer),
    description: '',
  };
  const primary4 = d.ip4 ? ip(d.id * 10 + 4, d.ip4, 4, base) : null;
  const primary6 = d.ip6 ? ip(d.id * 10 + 6, d.ip6, 6, base) : null;
  return {
    id: d.id,
    url: `${base}/api/dcim/devices/${d.id}/`,
    display_url: `${base}/dcim/devices/${d.id}/`,
    display: d.name ?? `Unnamed device (${d.id})`,
    name: d.name,
    device_type: {
      id: 1,
      url: `${base}/api/dcim/device-types/1/`,
      display: d.model,
      manufacturer,
      model: d.model,
      slug: slug(d.model),
      description: '',
    },
    role: {
      id: 1,
      url: `${base}/api/dcim/device-roles/1/`,
      display: d.role ?? 'Access',
      name: d.role ?? 'Access',
      slug: slug(d.role ?? 'access'),
      description: '',
    },
    tenant: null,
    platform: d.platform
      ? { id: 1, url: `${base}/api/dcim/platforms/1/`, display: d.platform, name: d.platform, slug: slug(d.platform), description: '' }
      : null,
    serial: d.serial ?? '',
    asset_tag: d.asset_tag ?? null,
    site: { id: 1, url: `${base}/api/dcim/sites/1/`, display: d.site, name: d.site, slug: slug(d.site), description: '' },
    location: null,
    rack: null,
    position: null,
    face: null,
    status: { value: d.status ?? 'active', label: (d.status ?? 'active').replace(/^./, (c) => c.toUpperCase()) },
    airflow: null,
    primary_ip: primary4 ?? primary6,
    primary_ip4: primary4,
    primary_ip6: primary6,
    oob_ip: null,
    cluster: null,
    virtual_chassis: null,
    description: '',
    comments: '',
    config_template: null,
    local_context_data: null,
    tags: (d.tags ?? []).map((t, i) => ({
      id: i + 1,
      url: `${base}/api/extras/tags/${i + 1}/`,
      display: t,
      name: t,
      slug: slug(t),
      color: '9e9e9e',
    })),
    custom_fields: {},
    created: '2024-01-01T00:00:00.000000Z',
    last_updated: '2024-01-02T00:00:00.000000Z',
  };
}

/** NetBox-style filters the stand-in understands; unknown ones are ignored, as NetBox does for most. */
function matches(d: SimDevice, key: string, values: string[]): boolean {
  const any = (value: string | null | undefined) => value !== null && value !== undefined && values.includes(value);
  switch (key) {
    case 'site':
      return any(slug(d.site));
    case 'site_id':
      return any('1');
    case 'status':
      return any(d.status ?? 'active');
    case 'role':
      return any(slug(d.role ?? 'access'));
    case 'tag':
      return (d.tags ?? []).some((t) => values.includes(slug(t)));
    case 'platform':
      return any(d.platform ? slug(d.platform) : null);
    case 'manufacturer':
      return any(slug(d.manufacturer));
    case 'name':
      return any(d.name);
    case 'has_primary_ip':
      return values.includes(String(Boolean(d.ip4 || d.ip6)));
    default:
      return true;
  }
}

export interface NetboxSimOptions {
  token: string;
  devices?: SimDevice[];
  maxPageSize?: number;
  /** Serve HTTPS with this certificate (self-signed or from a test CA). */
  tls?: { cert: string; key: string };
}

export async function startNetboxSim(options: NetboxSimOptions): Promise<NetboxSim> {
  const hanging = new Set<ServerResponse>();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', sim.url);
    sim.requests.push({ path: url.pathname + url.search, authorization: req.headers.authorization });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'api-version': '4.1', allow: 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS' });
      res.end(JSON.stringify(body));
    };
    if (sim.mode === 'hang') {
      hanging.add(res);
      return;
    }
    if (sim.mode === 'error') {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<h1>Server Error (500)</h1><p>There was a problem with the server.</p>');
      return;
    }
    // NetBox v1 tokens: `Token <key>`; v2 tokens (nbt_…, NetBox 4.5+): `Bearer <token>`.
    const expected = options.token.startsWith('nbt_') ? `Bearer ${options.token}` : `Token ${options.token}`;
    if (req.headers.authorization !== expected || sim.mode === 'unauthorized') {
      json(401, { detail: 'Invalid token' });
      return;
    }
    if (url.pathname === '/api/status/') {
      json(200, { 'netbox-version': '4.1.3', 'python-version': '3.12.3', plugins: {}, 'rq-workers-running': 1 });
      return;
    }
    if (url.pathname !== '/api/dcim/devices/') {
      json(404, { detail: 'Not found.' });
      return;
    }
    const filters = new Map<string, string[]>();
    for (const [key, value] of url.searchParams) {
      if (key === 'limit' || key === 'offset' || key === 'brief' || key === 'ordering') continue;
      filters.set(key, [...(filters.get(key) ?? []), value]);
    }
    const selected = sim.devices.filter((d) => [...filters].every(([key, values]) => matches(d, key, values))).sort((x, y) => x.id - y.id);
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 50) || 50, sim.maxPageSize);
    const offset = Number(url.searchParams.get('offset') ?? 0) || 0;
    const base = `${url.protocol}//${req.headers.host}`;
    const page = (at: number) => {
      const params = new URLSearchParams(url.searchParams);
      params.set('limit', String(limit));
      params.set('offset', String(at));
      return `${base}/api/dcim/devices/?${params.toString()}`;
    };
    json(200, {
      count: selected.length,
      next: offset + limit < selected.length ? page(offset + limit) : null,
      previous: offset > 0 ? page(Math.max(0, offset - limit)) : null,
      results: selected.slice(offset, offset + limit).map((d) => netboxDevice(d, base)),
    });
  };

  const server: Server = options.tls ? createHttpsServer(options.tls, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sim: NetboxSim = {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests: [],
    devices: options.devices ?? [],
    mode: 'ok',
    maxPageSize: options.maxPageSize ?? 1000,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return sim;
}
