import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { clearSimNetwork, registerSimNetwork } from '../sim/ssh/discovery-data';
import { discoveryEnv, pollNow, simInventoryDevice, type DiscoveryEnv } from './helpers';

/**
 * Topology on a small simulated network of mixed dialects, end to end: three SSH devices on
 * their own loopback addresses, linked r1 ↔ r2 ↔ edge and edge ↔ an ISP router that is not in
 * the inventory. r1 and r2 are matched by name; "edge" is in the inventory under another name
 * and is matched by its management address.
 */
let env: DiscoveryEnv;
const sims: SimSshDevice[] = [];
const ids: Record<string, string> = {};
let siteA: { id: string };
let siteB: { id: string };

beforeAll(async () => {
  env = await discoveryEnv();
  const specs = [
    { hostname: 'topo-r1', dialect: 'vendor_ios', host: '127.0.3.1' },
    { hostname: 'topo-r2', dialect: 'vendor_nxos', host: '127.0.3.2' },
    { hostname: 'topo-edge', dialect: 'vendor_eos', host: '127.0.3.3' },
  ];
  for (const s of specs) sims.push(await startSshDevice({ dialect: s.dialect, hostname: s.hostname, host: s.host }));
  clearSimNetwork();
  registerSimNetwork(
    [
      ...specs.map((s) => ({ hostname: s.hostname, deviceType: s.dialect, address: s.host })),
      { hostname: 'isp-gw', deviceType: 'vendor_junos', address: '203.0.113.1' },
    ],
    [
      { a: 'topo-r1', aPort: 2, b: 'topo-r2', bPort: 1 },
      { a: 'topo-r2', aPort: 2, b: 'topo-edge', bPort: 1 },
      { a: 'topo-edge', aPort: 8, b: 'isp-gw', bPort: 0 },
    ],
  );
  siteA = await env.u.site();
  siteB = await env.u.site();
  ids.r1 = (await simInventoryDevice(env.u, sims[0], { site_id: siteA.id })).id;
  ids.r2 = (await simInventoryDevice(env.u, sims[1], { site_id: siteA.id })).id;
  ids.edge = (await simInventoryDevice(env.u, sims[2], { name: 'border-router', site_id: siteB.id })).id;
  for (const id of Object.values(ids)) expect((await pollNow(env.u, id)).status).toBe('succeeded');
});
afterAll(async () => {
  await env?.close();
  await Promise.all(sims.map((s) => s.close()));
  clearSimNetwork();
});

describe('GET /api/topology', () => {
  it('has the inventory devices and the external neighbor as nodes', async () => {
    const res = await env.u.as('GET', '/api/topology');
    expect(res.status).toBe(200);
    const nodes = res.body.nodes;
    expect(
      nodes
        .filter((n: any) => n.kind === 'device')
        .map((n: any) => n.name)
        .sort(),
    ).toEqual(['border-router', 'topo-r1', 'topo-r2']);
    expect(nodes.find((n: any) => n.id === ids.edge)).toMatchObject({
      device_id: ids.edge,
      host: '127.0.3.3',
      device_type: 'vendor_eos',
      site_id: siteB.id,
    });
    expect(nodes.filter((n: any) => n.kind === 'external')).toEqual([
      {
        id: 'external:isp-gw',
        kind: 'external',
        device_id: null,
        name: 'isp-gw',
        host: '203.0.113.1',
        device_type: null,
        site_id: null,
        platform: 'Juniper-like mx204',
      },
    ]);
  });

  it('links neighbors that point at each other once, confirmed, with both protocols where both run', async () => {
    const { links } = (await env.u.as('GET', '/api/topology')).body;
    const between = (a: string, b: string) => links.filter((l: any) => (l.source === a && l.target === b) || (l.source === b && l.target === a));
    const r1r2 = between(ids.r1, ids.r2);
    expect(r1r2).toHaveLength(1);
    expect(r1r2[0]).toMatchObject({ protocols: ['cdp', 'lldp'], confirmed: true });
    const ends =
      r1r2[0].source === ids.r1 ? [r1r2[0].source_interface, r1r2[0].target_interface] : [r1r2[0].target_interface, r1r2[0].source_interface];
    expect(ends).toEqual(['GigabitEthernet0/2', 'Ethernet1/1']);
    // r2 ↔ edge: matched by the management address, since the inventory name differs.
    const r2edge = between(ids.r2, ids.edge);
    expect(r2edge).toHaveLength(1);
    expect(r2edge[0].confirmed).toBe(true);
    expect(r2edge[0].protocols).toContain('lldp');
    const isp = between(ids.edge, 'external:isp-gw');
    expect(isp).toEqual([expect.objectContaining({ protocols: ['lldp'], confirmed: false })]);
    expect(links).toHaveLength(3);
  });

  it("with site_id: that site's devices, their neighbors and the links between them", async () => {
    const res = await env.u.as('GET', `/api/topology?site_id=${siteA.id}`);
    expect(res.status).toBe(200);
    expect(res.body.site_id).toBe(siteA.id);
    expect(res.body.nodes.map((n: any) => n.id).sort()).toEqual([ids.r1, ids.r2, ids.edge].sort());
    expect(res.body.links).toHaveLength(2);
    expect(res.body.links.every((l: any) => [l.source, l.target].some((x: string) => x === ids.r1 || x === ids.r2))).toBe(true);
  });
});
