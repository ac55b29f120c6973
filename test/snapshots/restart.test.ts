/**
 * A controller restart in the middle of a snapshot: the collection finishes on the restarted
 * controller (nothing about it lives in memory), every device's version is stored exactly once,
 * and the counts add up. Real agent runtimes over NATS JetStream, slow SSH simulators.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, natsPrefix, startAgent, until } from '../agents/helpers';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';

const PASSWORD = 'restart-Device-pw';
const prefix = natsPrefix();
let c: TestController;
let u: InventoryUser;
let agent: Awaited<ReturnType<typeof startAgent>>;
const sims: SimSshDevice[] = [];
const deviceIds: string[] = [];

beforeAll(async () => {
  c = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  u = await inventoryUser(c, ['org_admin']);
  const { identity } = await enrollAgent(c, u);
  agent = await startAgent(c, identity, { natsUrl: SHARED_NATS, concurrency: 2 });
  for (let i = 1; i <= 6; i++) {
    // Output trickles: each backup takes a few seconds, so the restart lands mid-collection.
    const sim = await startSshDevice({
      hostname: `slow-${i}`,
      username: 'netops',
      password: PASSWORD,
      faults: { slowOutput: { chunkBytes: 512, intervalMs: 30 } },
    });
    sims.push(sim);
    const profile = await u.profile({ username: 'netops', password: PASSWORD, ssh_port: sim.port });
    deviceIds.push((await u.device(profile.id, { name: `slow-${i}`, host: sim.host })).id);
  }
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await Promise.all(sims.map((s) => s.close()));
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
});

describe('controller restart during a snapshot', () => {
  it('finishes the collection on the restarted controller, each version stored once', async () => {
    const snap = (await u.as('POST', '/api/devices/snapshots', { body: { name: 'through a restart' } })).body.snapshot;
    const res = await u.as('POST', `/api/devices/snapshots/${snap.id}/collect`, { body: { timeout_seconds: 120 } });
    expect(res.status).toBe(202);
    expect(res.body.devices_queued).toBe(6);

    await c.restart();
    const during = (await u.as('GET', `/api/devices/snapshots/${snap.id}`)).body.snapshot;
    expect(during.status).toBe('collecting');
    expect(during.successful_devices).toBeLessThan(6);

    const done = await until(
      'the snapshot to finish',
      async () => {
        const s = (await u.as('GET', `/api/devices/snapshots/${snap.id}`)).body.snapshot;
        return s.status === 'collecting' ? null : s;
      },
      90_000,
      200,
    );
    expect(done).toMatchObject({ status: 'completed', total_devices: 6, successful_devices: 6, failed_devices: 0 });
    for (const id of deviceIds) {
      const list = (await u.as('GET', `/api/config/devices/${id}/configs`)).body;
      expect(list.total).toBe(1);
      expect(list.configs[0]).toMatchObject({ version: 1, status: 'success', snapshot_id: snap.id });
    }
    // The run is closed in the database too (not only derived on read).
    await until(
      'the snapshot row to be closed',
      async () => (await c.db('snapshots').where({ id: snap.id }).first('status')).status === 'completed',
      10_000,
    );
  });
});
