/**
 * Snapshot collection end to end: two real `npm run agent` processes over NATS JetStream take
 * one backup job per device and run real SSH sessions against the simulators; the outcome
 * recorder stores the versions and moves the snapshot's counts and status.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, natsPrefix, until } from '../agents/helpers';
import { spawnAgent, type Proc } from '../helpers/processes';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { normalizeConfig, startSshDevice, type SimSshDevice } from '../sim/ssh';

const PASSWORD = 'core-Pa55-secret';
const prefix = natsPrefix();

let c: TestController;
let u: InventoryUser;
let other: InventoryUser;
const agents: Proc[] = [];
const sims: SimSshDevice[] = [];
let siteA: { id: string };
let siteB: { id: string };
let wrongProfile: { id: string };
const good: { id: string; name: string; sim: SimSshDevice }[] = [];
let hung: { id: string; name: string };

beforeAll(async () => {
  c = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } },
  });
  u = await inventoryUser(c, ['org_admin']);
  other = await inventoryUser(c);
  siteA = await u.site({ name: 'dc-a' });
  siteB = await u.site({ name: 'dc-b' });

  // Two agents in the default pool, as real processes.
  for (const name of ['agent-1', 'agent-2']) {
    const created = await u.as('POST', '/api/agents', { body: { name, site_id: null } });
    agents.push(
      spawnAgent({
        NATS_URL: SHARED_NATS,
        SWITCHBOARD_URL: c.url,
        SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-snap-agent-')),
        SWITCHBOARD_AGENT_CONCURRENCY: '4',
        SWITCHBOARD_ENROLL_TOKEN: created.body.enrollment_token,
      }),
    );
  }

  for (let i = 1; i <= 3; i++) {
    const sim = await startSshDevice({
      hostname: `core-${i}`,
      username: 'netops',
      password: PASSWORD,
      dialect: i === 3 ? 'vendor_eos' : 'vendor_ios',
    });
    sims.push(sim);
    const profile = await u.profile({ username: 'netops', password: PASSWORD, ssh_port: sim.port });
    const device = await u.device(profile.id, { name: `core-${i}`, host: sim.host, device_type: sim.deviceType, site_id: siteA.id });
    good.push({ id: device.id, name: device.name, sim });
  }
  const lockedSim = await startSshDevice({ hostname: 'core-4', username: 'netops', password: PASSWORD });
  sims.push(lockedSim);
  wrongProfile = await u.profile({ username: 'netops', password: 'wrong-password-123', ssh_port: lockedSim.port });
  await u.device(wrongProfile.id, { name: 'core-4', host: lockedSim.host, site_id: siteA.id });
  const hangSim = await startSshDevice({
    hostname: 'edge-hang',
    username: 'netops',
    password: PASSWORD,
    dialect: 'vendor_junos',
    faults: { hang: true },
  });
  sims.push(hangSim);
  hung = await u.device((await u.profile({ username: 'netops', password: PASSWORD, ssh_port: hangSim.port })).id, {
    name: 'edge-hang',
    host: hangSim.host,
    device_type: 'vendor_junos',
    site_id: siteB.id,
  });

  await until(
    'both agents online',
    async () => {
      const res = await u.as('GET', '/api/agents');
      return res.body.agents?.filter((a: any) => a.status === 'online').length === 2;
    },
    60_000,
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(agents.map((p) => p.kill('SIGTERM')));
  await Promise.all(sims.map((s) => s.close()));
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
});

async function snapshot(name: string, device_filter?: Record<string, unknown>) {
  const res = await u.as('POST', '/api/devices/snapshots', { body: { name, ...(device_filter ? { device_filter } : {}) } });
  expect(res.status, res.text).toBe(201);
  return res.body.snapshot as { id: string };
}
const read = async (id: string) => (await u.as('GET', `/api/devices/snapshots/${id}`)).body.snapshot;
const finished = (id: string, timeoutMs = 60_000) =>
  until(
    `snapshot ${id} to finish`,
    async () => {
      const s = await read(id);
      return s.status !== 'collecting' ? s : null;
    },
    timeoutMs,
    100,
  );

describe('collect', () => {
  let snap: { id: string };

  it('backs up every matching device; one failing device makes it partial with counts', async () => {
    snap = await snapshot('site A nightly', { site_id: siteA.id });
    const res = await u.as('POST', `/api/devices/snapshots/${snap.id}/collect`, { body: {} });
    expect(res.status, res.text).toBe(202);
    expect(res.body.devices_queued).toBe(4);
    expect(res.body.snapshot.status).toBe('collecting');
    const done = await finished(snap.id);
    expect(done).toMatchObject({ status: 'partial', total_devices: 4, successful_devices: 3, failed_devices: 1 });
    expect(done.completed_at).not.toBeNull();
  });

  it('lists per-device backup entries with version, size, lines, method, status and error', async () => {
    const res = await u.as('GET', `/api/devices/snapshots/${snap.id}/backups`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(4);
    const byName = Object.fromEntries(res.body.backups.map((b: any) => [b.device_name, b]));
    for (const g of good) {
      expect(byName[g.name]).toMatchObject({ version: 1, backup_method: 'cli', status: 'success', error_message: null });
      // reveal: the text as stored (size_bytes describes it; secrets unmasked for the org admin).
      const version = await u.as('GET', `/api/config/devices/${g.id}/configs/1?reveal=true`);
      expect(version.body).toMatchObject({ snapshot_id: snap.id, source: 'snapshot', status: 'success' });
      expect(normalizeConfig(version.body.config_text)).toBe(g.sim.config());
      expect(byName[g.name].size_bytes).toBe(Buffer.byteLength(version.body.config_text));
      expect(byName[g.name].line_count).toBe(version.body.line_count);
    }
    expect(byName['core-4']).toMatchObject({ version: 1, status: 'failed', size_bytes: 0, line_count: 0, backup_method: 'cli' });
    expect(byName['core-4'].error_message).toMatch(/auth/i);
  });

  it("serves each device's transcript with every secret masked", async () => {
    const backups = (await u.as('GET', `/api/devices/snapshots/${snap.id}/backups`)).body.backups;
    for (const b of backups) {
      const log = await u.as('GET', `/api/devices/snapshots/backups/${b.config_id}/log`);
      expect(log.status).toBe(200);
      expect(log.body.log.length).toBeGreaterThan(0);
      expect(log.body.log).not.toContain(PASSWORD);
      expect(log.body.log).not.toContain('wrong-password-123');
    }
    const missing = await u.as('GET', '/api/devices/snapshots/backups/00000000-0000-4000-8000-000000000000/log');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('Backup not found');
  });

  it('recollect-failed backs up only the failed devices again', async () => {
    expect((await u.as('PUT', `/api/profiles/${wrongProfile.id}`, { body: { password: PASSWORD } })).status).toBe(200);
    const res = await u.as('POST', `/api/devices/snapshots/${snap.id}/recollect-failed`);
    expect(res.status, res.text).toBe(202);
    expect(res.body.devices_queued).toBe(1);
    const done = await finished(snap.id);
    expect(done).toMatchObject({ status: 'completed', total_devices: 4, successful_devices: 4, failed_devices: 0 });
    const backups = (await u.as('GET', `/api/devices/snapshots/${snap.id}/backups`)).body.backups;
    const core4 = backups.find((b: any) => b.device_name === 'core-4');
    expect(core4).toMatchObject({ version: 2, status: 'success', attempts: 2, error_message: null });
    // The others were not pulled again.
    for (const g of good) expect((await u.as('GET', `/api/config/devices/${g.id}/configs`)).body.total).toBe(1);

    const again = await u.as('POST', `/api/devices/snapshots/${snap.id}/recollect-failed`, { body: {} });
    expect(again.status).toBe(400);
    expect(again.text).toBe('No failed devices to collect again');
  });

  it('a device that never answers fails at the snapshot deadline with the reason; collect while collecting is 409', async () => {
    const s = await snapshot('junos only', { device_type: 'vendor_junos' });
    const res = await u.as('POST', `/api/devices/snapshots/${s.id}/collect`, { body: { timeout_seconds: 3 } });
    expect(res.status).toBe(202);
    expect(res.body.devices_queued).toBe(1);
    const busy = await u.as('POST', `/api/devices/snapshots/${s.id}/collect`, { body: {} });
    expect(busy.status).toBe(409);
    expect(busy.text).toBe('Snapshot is already collecting');
    const done = await finished(s.id);
    expect(done).toMatchObject({ status: 'failed', total_devices: 1, successful_devices: 0, failed_devices: 1, timeout_seconds: 3 });
    const [entry] = (await u.as('GET', `/api/devices/snapshots/${s.id}/backups`)).body.backups;
    expect(entry.device_name).toBe(hung.name);
    expect(entry.status).toBe('failed');
    expect(entry.error_message).toMatch(/deadline|timed out|timeout/i);
  });

  it('answers 400 "No devices match the filter" in plain text', async () => {
    const s = await snapshot('nothing', { device_type: 'vendor_panos' });
    const res = await u.as('POST', `/api/devices/snapshots/${s.id}/collect`);
    expect(res.status).toBe(400);
    expect(res.text).toBe('No devices match the filter');
    expect((await read(s.id)).status).toBe('pending');
  });

  it('refuses a bad timeout_seconds or unknown field with 400 in plain text', async () => {
    const s = await snapshot('bad input', { site_id: siteB.id });
    for (const body of [{ timeout_seconds: 0 }, { timeout_seconds: 'soon' }, { timeout_seconds: 1.5 }, { timeout: 5 }]) {
      const res = await u.as('POST', `/api/devices/snapshots/${s.id}/collect`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toContain('text/plain');
    }
  });

  it('keeps stored versions when the snapshot is deleted', async () => {
    const s = await snapshot('to delete', { site_id: siteA.id, device_type: 'vendor_eos' });
    expect((await u.as('POST', `/api/devices/snapshots/${s.id}/collect`, { body: {} })).body.devices_queued).toBe(1);
    await finished(s.id);
    const eos = good.find((g) => g.sim.deviceType === 'vendor_eos')!;
    const before = (await u.as('GET', `/api/config/devices/${eos.id}/configs`)).body.configs[0];
    expect(before.snapshot_id).toBe(s.id);
    expect((await u.as('DELETE', `/api/devices/snapshots/${s.id}`)).status).toBe(204);
    const after = (await u.as('GET', `/api/config/devices/${eos.id}/configs`)).body.configs[0];
    expect(after).toMatchObject({ id: before.id, snapshot_id: null, status: 'success' });
  });
});

describe('POST /api/config/devices/bulk-pull', () => {
  it('runs in the background as a snapshot and answers 202 with snapshot_id and devices_queued', async () => {
    const ids = good.map((g) => g.id);
    const res = await u.as('POST', '/api/config/devices/bulk-pull', { body: { device_ids: [...ids, ids[0]], method: 'cli' } });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ devices_queued: 3, snapshot_id: expect.any(String) });
    expect(res.body.message).toContain('3 devices');
    const done = await finished(res.body.snapshot_id);
    expect(done).toMatchObject({ status: 'completed', total_devices: 3, successful_devices: 3, method: 'cli' });
    expect(done.device_filter.device_ids.sort()).toEqual([...ids].sort());
    for (const g of good) {
      const latest = await u.as('GET', `/api/config/devices/${g.id}/configs/latest`);
      expect(latest.body).toMatchObject({ snapshot_id: res.body.snapshot_id, status: 'success' });
      const diff = await u.as('GET', `/api/config/devices/${g.id}/diff-versions?old_version=1&new_version=${latest.body.version}`);
      expect(diff.body.identical).toBe(true);
    }
  });

  it('404 naming device ids outside the organization', async () => {
    const res = await other.as('POST', '/api/config/devices/bulk-pull', { body: { device_ids: [good[0].id] } });
    expect(res.status).toBe(404);
    expect(res.body.missing).toEqual([good[0].id]);
  });
});

describe('method structured', () => {
  it('fails each device without an automation transport with a failed version saying why', async () => {
    const res = await u.as('POST', '/api/devices/snapshots', {
      body: { name: 'structured A', method: 'structured', device_filter: { site_id: siteA.id } },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.snapshot.id as string;
    expect((await u.as('POST', `/api/devices/snapshots/${id}/collect`, { body: {} })).body.devices_queued).toBe(4);
    expect(await finished(id)).toMatchObject({ status: 'failed', total_devices: 4, successful_devices: 0, failed_devices: 4 });
    const backups = (await u.as('GET', `/api/devices/snapshots/${id}/backups`)).body.backups;
    expect(backups).toHaveLength(4);
    for (const b of backups) {
      expect(b).toMatchObject({ backup_method: 'structured', status: 'failed', size_bytes: 0 });
      expect(b.error_message).toContain('automation_transport');
    }
  });
});

describe('another organization', () => {
  it('sees none of these snapshots and gets 404 on their routes', async () => {
    const mine = (await u.as('GET', '/api/devices/snapshots')).body.snapshots;
    expect(mine.length).toBeGreaterThan(0);
    const theirs = await other.as('GET', '/api/devices/snapshots');
    expect(theirs.body).toEqual({ snapshots: [], total: 0 });
    const backups = (await u.as('GET', `/api/devices/snapshots/${mine[0].id}/backups`)).body.backups;
    const log = await other.as('GET', `/api/devices/snapshots/backups/${backups[0].config_id}/log`);
    expect(log.status).toBe(404);
    expect((await other.as('GET', `/api/devices/snapshots/${mine[0].id}/backups`)).text).toBe('Snapshot not found');
  });
});
