/**
 * Poll history retention: finished polls older than discovery.poll_history_days are forgotten,
 * except each device's latest (what /status shows), a poll whose records are still the device's
 * latest (its sections would go with it) and an open poll; another organization's old polls go
 * by the same rule. Polls are written with old dates straight into the database, then pruned
 * the way the scheduler does it once an hour.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inventoryUser } from '../inventory/helpers';
import { discoveryEnv, type DiscoveryEnv } from './helpers';

let env: DiscoveryEnv;
beforeAll(async () => {
  env = await discoveryEnv({ agent: false });
});
afterAll(async () => env?.close());

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);

async function device(u: DiscoveryEnv['u'], name: string): Promise<string> {
  return (await u.device((await u.profile()).id, { name })).id;
}

async function poll(orgId: string, deviceId: string, createdDaysAgo: number, status = 'succeeded'): Promise<string> {
  const at = daysAgo(createdDaysAgo);
  const [row] = await env.c
    .db('discovery_polls')
    .insert({
      org_id: orgId,
      device_id: deviceId,
      trigger: 'schedule',
      transport: 'ssh',
      status,
      created_at: at,
      finished_at: status === 'queued' ? null : at,
    })
    .returning('id');
  return row.id;
}

const remaining = async (deviceId: string) =>
  (await env.c.db('discovery_polls').where({ device_id: deviceId }).orderBy('created_at').pluck('id')) as string[];

describe('poll history retention (discovery.poll_history_days)', () => {
  it('forgets old finished polls but keeps the latest, the ones holding current records, and open ones', async () => {
    const { u, c } = env;
    const a = await device(u, 'retention-a');
    const [, holdsArp, , latest] = [await poll(u.orgId, a, 90), await poll(u.orgId, a, 80), await poll(u.orgId, a, 60), await poll(u.orgId, a, 45)];
    await c.db('discovery_sections').insert({
      org_id: u.orgId,
      device_id: a,
      kind: 'arp',
      section: 'arp',
      poll_id: holdsArp,
      records: JSON.stringify([{ ip_address: '10.0.0.1', mac_address: '0050.56aa.0001', interface: 'Gi0/1', age_seconds: 60 }]),
      collected_at: daysAgo(80),
    });
    const b = await device(u, 'retention-b');
    await poll(u.orgId, b, 40); // bOld: pruned
    const bOpen = await poll(u.orgId, b, 35, 'queued');
    const bRecent = [await poll(u.orgId, b, 10), await poll(u.orgId, b, 1)];
    const other = await inventoryUser(c, ['org_admin']);
    const o = await device(other, 'retention-other');
    await poll(other.orgId, o, 50); // oOld: pruned
    const oLatest = await poll(other.orgId, o, 2);

    expect(await c.services.discovery!.pruneHistory()).toBe(4); // old1, old2, bOld, oOld (default 30 days)
    expect(await remaining(a)).toEqual([holdsArp, latest]);
    expect(await remaining(b)).toEqual([bOpen, ...bRecent]);
    expect(await remaining(o)).toEqual([oLatest]);
    // The device's records and latest poll still read as before.
    const arp = await u.as('GET', `/api/devices/${a}/arp-table`);
    expect(arp.body, arp.text).toMatchObject({ total: 1, poll_id: holdsArp });
    expect((await u.as('GET', `/api/devices/${a}/status`)).body.poll.id).toBe(latest);
  });

  it('follows the setting, and prunes nothing twice', async () => {
    const { u, c } = env;
    const d = await device(u, 'retention-setting');
    const polls = [await poll(u.orgId, d, 20), await poll(u.orgId, d, 12), await poll(u.orgId, d, 3)];
    expect(await c.services.discovery!.pruneHistory()).toBe(0); // all younger than 30 days
    const res = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'discovery.poll_history_days': 7 } } });
    expect(res.status, res.text).toBe(200);
    expect(await c.services.discovery!.pruneHistory()).toBe(3); // these two, and retention-b's 10-day-old poll
    expect(await remaining(d)).toEqual([polls[2]]);
    expect(await c.services.discovery!.pruneHistory()).toBe(0);
  });

  it('refuses a retention outside 1..3650 days', async () => {
    const res = await env.c.request('PUT', '/api/admin/settings', {
      token: env.c.adminToken,
      body: { settings: { 'discovery.poll_history_days': 0 } },
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('discovery.poll_history_days');
  });
});
