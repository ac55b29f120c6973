/**
 * The topology: inventory devices as nodes and the CDP/LLDP neighbor records between them as
 * links. A neighbor is matched to an inventory device when its name (domain and case aside)
 * is the device's name or host, or its management address is the device's host or one of the
 * device's discovered interface addresses; an unmatched neighbor becomes an external node.
 * Both ends reporting the same link gives one link, marked confirmed.
 */
import { hostKey, interfaceKey } from '../../../shared/src/discovery/normalize';
import { appError } from '../errors/app-error';
import type { TopologyDevice, TopologyStore } from './store';

export interface TopologyNode {
  id: string;
  kind: 'device' | 'external';
  device_id: string | null;
  name: string;
  host: string | null;
  device_type: string | null;
  site_id: string | null;
  platform: string | null;
}

export interface TopologyLink {
  source: string;
  target: string;
  source_interface: string | null;
  target_interface: string | null;
  protocols: ('cdp' | 'lldp')[];
  /** Both ends report the link. */
  confirmed: boolean;
}

interface Neighbor {
  protocol: 'cdp' | 'lldp';
  local_interface: string;
  remote_name: string;
  remote_interface: string | null;
  remote_address: string | null;
  remote_platform: string | null;
}

/** Lookup keys → device: names and hosts first, then the devices' discovered interface addresses. */
function deviceMatcher(byId: Map<string, TopologyDevice>, addresses: { device_id: string; address: string }[]) {
  const byName = new Map<string, TopologyDevice>();
  const byAddress = new Map<string, TopologyDevice>();
  for (const d of byId.values()) {
    for (const key of [hostKey(d.name), d.name.toLowerCase()]) if (key && !byName.has(key)) byName.set(key, d);
    byAddress.set(d.host.toLowerCase(), d);
    byName.set(hostKey(d.host), byName.get(hostKey(d.host)) ?? d);
  }
  for (const a of addresses) {
    const d = byId.get(a.device_id);
    if (d && !byAddress.has(a.address)) byAddress.set(a.address, d);
  }
  return (n: Neighbor): TopologyDevice | undefined =>
    byName.get(n.remote_name.toLowerCase()) ??
    byName.get(hostKey(n.remote_name)) ??
    (n.remote_address ? byAddress.get(n.remote_address.toLowerCase()) : undefined);
}

/** Nodes and links as neighbor records add them: one node per device or external name, one link per pair of ends. */
class TopologyGraph {
  private readonly nodes = new Map<string, TopologyNode>();
  private readonly links = new Map<string, TopologyLink & { reporters: Set<string> }>();

  device(d: TopologyDevice): string {
    if (!this.nodes.has(d.id))
      this.nodes.set(d.id, {
        id: d.id,
        kind: 'device',
        device_id: d.id,
        name: d.name,
        host: d.host,
        device_type: d.device_type,
        site_id: d.site_id,
        platform: null,
      });
    return d.id;
  }

  /** A neighbor no inventory device matches; a later record of it fills what an earlier one lacked. */
  external(n: Neighbor): string {
    const id = `external:${hostKey(n.remote_name) || n.remote_address}`;
    const existing = this.nodes.get(id);
    if (existing) {
      existing.host ??= n.remote_address;
      existing.platform ??= n.remote_platform;
    } else {
      this.nodes.set(id, {
        id,
        kind: 'external',
        device_id: null,
        name: n.remote_name.split('.')[0],
        host: n.remote_address,
        device_type: null,
        site_id: null,
        platform: n.remote_platform,
      });
    }
    return id;
  }

  /** The link `source` reports to `target`; the same link from its other end makes it confirmed. */
  link(source: string, target: string, n: Neighbor): void {
    const a = { node: source, intf: n.local_interface };
    const b = { node: target, intf: n.remote_interface };
    const [first, second] = `${a.node}|${interfaceKey(a.intf)}` <= `${b.node}|${interfaceKey(b.intf)}` ? [a, b] : [b, a];
    const key = `${first.node}|${interfaceKey(first.intf)}|${second.node}|${interfaceKey(second.intf)}`;
    let link = this.links.get(key);
    if (!link) {
      link = {
        source: first.node,
        target: second.node,
        source_interface: first.intf,
        target_interface: second.intf,
        protocols: [],
        confirmed: false,
        reporters: new Set(),
      };
      this.links.set(key, link);
    }
    if (!link.protocols.includes(n.protocol)) link.protocols.push(n.protocol);
    link.reporters.add(source);
    link.confirmed = link.reporters.size > 1;
  }

  /** A device node's platform: the first one a neighbor record reports for it. */
  notePlatform(id: string, platform: string | null): void {
    const node = this.nodes.get(id);
    if (node && node.platform === null && platform) node.platform = platform;
  }

  result() {
    return {
      nodes: [...this.nodes.values()],
      links: [...this.links.values()].map(({ reporters: _r, ...l }) => ({ ...l, protocols: l.protocols.sort() })),
    };
  }
}

export class TopologyService {
  constructor(private readonly store: TopologyStore) {}

  async build(orgId: string, siteId?: string): Promise<{ site_id: string | null; nodes: TopologyNode[]; links: TopologyLink[] }> {
    if (siteId && !(await this.store.siteExists(orgId, siteId))) throw appError('SITE_NOT_FOUND');
    const devices = await this.store.devices(orgId);
    const inScope = siteId ? devices.filter((d) => d.site_id === siteId) : devices;
    const [neighborRows, addresses] = await Promise.all([
      this.store.neighbors(orgId, siteId ? inScope.map((d) => d.id) : null),
      this.store.interfaceAddresses(orgId),
    ]);
    const byId = new Map(devices.map((d) => [d.id, d]));
    const match = deviceMatcher(byId, addresses);
    const graph = new TopologyGraph();
    for (const d of inScope) graph.device(d);
    for (const row of neighborRows) {
      const n = row.data as unknown as Neighbor;
      const local = byId.get(row.device_id);
      if (!local || typeof n.remote_name !== 'string' || typeof n.local_interface !== 'string') continue;
      const source = graph.device(local);
      const remote = match(n);
      const target = remote ? graph.device(remote) : graph.external(n);
      if (remote?.id === local.id) continue;
      graph.link(source, target, n);
      if (remote) graph.notePlatform(target, n.remote_platform);
    }
    return { site_id: siteId ?? null, ...graph.result() };
  }
}
