// GET /api/sites/health: every site and the default pool in one answer (also run on PGlite, test/pglite/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as deviceHealth from '../../migrations/184_device_health';
import { startTestController, type TestController } from '../helpers/controller';
import { makeDevice, makeProfile, makeSite, type Org } from './helpers';

let tc: TestController;
let org: Org;
let other: Org;

// Long liveness, so an agent seen at the start stays online however slow the machine is.
beforeAll(async () => {
  tc = await startTestController({ settings: { 'agents.heartbeat_seconds': 600, 'agents.offline_after_seconds': 3600 } });
  org = await tc.createOrgUser(['org_admin']);
  other = await tc.createOrgUser(['org_admin']);
});
afterAll(async () => tc?.close());

const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);

/** A config version as a backup stores it. */
async function backup(deviceId: string, version: number, status: 'success' | 'failed', at: Date): Promise<void> {
  await tc.db('config_versions').insert({
    org_id: org.orgId,
    device_id: deviceId,
    version,
    method: 'cli',
    config_format: 'cli',
    config_hash: `h${version}`,
    source: 'running',
    pulled_via: 'ssh',
    status,
    created_at: at,
    config_text: status === 'success' ? 'hostname x' : '',
  });
}

/** A finished snapshot holding the given devices with their outcomes. */
async function snapshot(name: string, at: Date, outcomes: [string, 'success' | 'failed' | 'pending'][]): Promise<string> {
  const [row] = await tc
    .db('snapshots')
    .insert({ org_id: org.orgId, name, status: 'partial', total_devices: outcomes.length, created_at: at })
    .returning('id');
  await tc
    .db('snapshot_devices')
    .insert(outcomes.map(([device, status]) => ({ snapshot_id: row.id, device_id: device, device_name: device, status })));
  return row.id;
}

describe('GET /api/sites/health', () => {
  it('answers every site and the default pool: agents, reachability, backup freshness, last snapshot, failing devices', async () => {
    const empty = await tc.request('GET', '/api/sites/health', { token: org.token });
    expect(empty.status).toBe(200);
    expect(empty.body.pools).toEqual([
      expect.objectContaining({ site_id: null, pool: 'default', status: 'no_agents', agents: [], last_snapshot: null }),
    ]);

    const east = await makeSite(tc, org, 'east');
    const west = await makeSite(tc, org, 'west'); // no agents: its devices go to the default pool
    const eastAgent = (await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'east-1', site_id: east.id } })).body;
    const poolAgent = (await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'pool-1', site_id: null } })).body;
    await tc.db('agents').where({ id: eastAgent.id }).update({ last_seen_at: new Date(), version: '2.0.0', max_jobs: 8, active_jobs: 3 });

    const profile = await makeProfile(tc, org);
    const device = (name: string, site: { id: string } | null) => makeDevice(tc, org, { name, profile_id: profile, site_id: site?.id ?? null });
    const [e1, e2, e3, w1, n1] = [
      await device('e1', east),
      await device('e2', east),
      await device('e3', east),
      await device('w1', west),
      await device('n1', null),
    ];

    const now = new Date();
    await tc.db('jobs').insert([
      { org_id: org.orgId, kind: 'backup', device_id: e1, status: 'succeeded', deadline_at: now, finished_at: now },
      { org_id: org.orgId, kind: 'backup', device_id: e2, status: 'succeeded', deadline_at: now, finished_at: hoursAgo(1) },
      {
        org_id: org.orgId,
        kind: 'test_credential',
        device_id: e2,
        status: 'failed',
        error: 'connection refused',
        deadline_at: now,
        finished_at: now,
      },
      { org_id: org.orgId, kind: 'backup', device_id: e3, status: 'failed', error: 'too old to count', deadline_at: now, finished_at: hoursAgo(30) },
    ]);
    await backup(e1, 1, 'success', hoursAgo(1)); // fresh
    await backup(e2, 1, 'success', hoursAgo(30)); // stale
    await backup(e3, 1, 'failed', hoursAgo(1)); // a failed backup is not a backup
    await backup(w1, 1, 'success', now);
    // The older snapshot held every site; the newer one only east's devices.
    const all = await snapshot('nightly', hoursAgo(5), [
      [e1, 'success'],
      [e2, 'success'],
      [w1, 'failed'],
      [n1, 'success'],
    ]);
    const eastOnly = await snapshot('east only', hoursAgo(1), [
      [e1, 'success'],
      [e2, 'failed'],
      [e3, 'pending'],
    ]);

    const res = await tc.request('GET', '/api/sites/health', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.body.pools.map((p: { name: string }) => p.name)).toEqual(['Default pool', 'east', 'west']);
    const [pool, eastPanel, westPanel] = res.body.pools;

    expect(eastPanel).toMatchObject({
      site_id: east.id,
      pool: east.id,
      status: 'degraded',
      online_agents: 1,
      devices: { total: 3, reachable: 1, unreachable: 1, unknown: 1, backed_up_24h: 1 },
      failing_devices: [{ id: e2, name: 'e2', error: 'connection refused', kind: 'test_credential' }],
      last_snapshot: { id: eastOnly, name: 'east only', succeeded: 1, failed: 1, pending: 1 },
    });
    expect(eastPanel.agents).toEqual([
      expect.objectContaining({ id: eastAgent.id, status: 'online', version: '2.0.0', max_jobs: 8, active_jobs: 3 }),
    ]);
    expect(new Date(eastPanel.failing_devices[0].at).getTime()).toBe(now.getTime());

    expect(westPanel).toMatchObject({
      site_id: west.id,
      pool: 'default',
      status: 'no_agents',
      agents: [],
      devices: { total: 1, reachable: 0, unreachable: 0, unknown: 1, backed_up_24h: 1 },
      failing_devices: [],
      last_snapshot: { id: all, name: 'nightly', succeeded: 0, failed: 1, pending: 0 },
    });
    // The default pool: devices without a site and those of sites without agents (west).
    expect(pool).toMatchObject({
      site_id: null,
      pool: 'default',
      status: 'down',
      online_agents: 0,
      devices: { total: 2, reachable: 0, unreachable: 0, unknown: 2, backed_up_24h: 1 },
      last_snapshot: { id: all, succeeded: 1, failed: 1, pending: 0 },
    });
    expect(pool.agents.map((a: { id: string }) => a.id)).toEqual([poolAgent.id]);
  });

  it('follows jobs as they finish and backups as they are stored; forgets deleted devices (device_health, migration 184)', async () => {
    const site = await makeSite(tc, org, 'north');
    const profile = await makeProfile(tc, org);
    const [x, y] = [
      await makeDevice(tc, org, { name: 'x', profile_id: profile, site_id: site.id }),
      await makeDevice(tc, org, { name: 'y', profile_id: profile, site_id: site.id }),
    ];
    const panel = async () =>
      (await tc.request('GET', '/api/sites/health', { token: org.token })).body.pools.find((p: { site_id: string }) => p.site_id === site.id);
    // Queued with a distant deadline: the controller's sweep must not end them (a failed backup stores a version) before the test does.
    const inAnHour = new Date(Date.now() + 3600_000);
    const job = async (device: string, kind = 'backup') =>
      (await tc.db('jobs').insert({ org_id: org.orgId, kind, device_id: device, deadline_at: inAnHour }).returning('id'))[0].id as string;
    const finish = (ids: string[], status: 'succeeded' | 'failed', error: string | null = null) =>
      tc.db('jobs').whereIn('id', ids).update({ status, error, finished_at: tc.db.fn.now() });

    // Queued jobs count for nothing; finished ones in one statement, one of them per device.
    const [jx, jy, jy2] = [await job(x), await job(y), await job(y, 'test_credential')];
    expect((await panel()).devices).toMatchObject({ reachable: 0, unreachable: 0, unknown: 2 });
    await finish([jx, jy], 'succeeded');
    expect((await panel()).devices).toMatchObject({ reachable: 2, unreachable: 0, unknown: 0 });
    await finish([jy2], 'failed', 'auth refused');
    expect(await panel()).toMatchObject({
      devices: { reachable: 1, unreachable: 1, unknown: 0 },
      failing_devices: [{ id: y, name: 'y', error: 'auth refused', kind: 'test_credential' }],
    });
    // A job that finished earlier than the device's latest one changes nothing.
    await tc
      .db('jobs')
      .insert({ org_id: org.orgId, kind: 'backup', device_id: y, status: 'succeeded', deadline_at: new Date(), finished_at: hoursAgo(2) });
    expect((await panel()).devices).toMatchObject({ reachable: 1, unreachable: 1 });

    await backup(x, 1, 'success', hoursAgo(30));
    expect((await panel()).devices.backed_up_24h).toBe(0);
    await backup(x, 2, 'success', hoursAgo(1));
    await backup(x, 3, 'success', hoursAgo(40)); // an older version stored later does not make it stale
    expect((await panel()).devices.backed_up_24h).toBe(1);

    await tc.request('DELETE', `/api/devices/${y}`, { token: org.token });
    expect(await tc.db('device_health').where({ device_id: y })).toEqual([]);
    expect((await panel()).devices).toMatchObject({ total: 1, reachable: 1, unreachable: 0, backed_up_24h: 1 });
  });

  it('starts from the jobs and versions already stored when the migration runs', async () => {
    const site = await makeSite(tc, org, 'south');
    const z = await makeDevice(tc, org, { name: 'z', profile_id: await makeProfile(tc, org), site_id: site.id });
    await deviceHealth.down(tc.db);
    try {
      await tc.db('jobs').insert([
        { org_id: org.orgId, kind: 'backup', device_id: z, status: 'failed', error: 'timed out', deadline_at: new Date(), finished_at: hoursAgo(1) },
        { org_id: org.orgId, kind: 'backup', device_id: z, status: 'succeeded', deadline_at: new Date(), finished_at: hoursAgo(3) },
        { org_id: org.orgId, kind: 'backup', device_id: z, status: 'queued', deadline_at: new Date() },
      ]);
      await backup(z, 1, 'success', hoursAgo(2));
    } finally {
      await deviceHealth.up(tc.db);
    }
    const pool = (await tc.request('GET', '/api/sites/health', { token: org.token })).body.pools.find(
      (p: { site_id: string }) => p.site_id === site.id,
    );
    expect(pool).toMatchObject({ devices: { total: 1, unreachable: 1, backed_up_24h: 1 }, failing_devices: [{ id: z, error: 'timed out' }] });
  });

  it('shows another organization nothing of this one, and needs a signed-in caller', async () => {
    const res = await tc.request('GET', '/api/sites/health', { token: other.token });
    expect(res.status).toBe(200);
    expect(res.body.pools).toEqual([
      expect.objectContaining({
        site_id: null,
        agents: [],
        devices: expect.objectContaining({ total: 0, backed_up_24h: 0 }),
        failing_devices: [],
        last_snapshot: null,
      }),
    ]);
    expect((await tc.request('GET', '/api/sites/health')).status).toBe(401);
  });
});
