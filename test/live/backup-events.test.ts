/**
 * Backup progress events on /api/live: a real agent takes backup jobs over NATS and opens SSH
 * sessions to the simulator; the device's organization hears queued, running and succeeded (or
 * failed with the device's reason), for a single pull and a bulk one; another organization's
 * watcher hears none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, natsPrefix, startAgent, until } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { watch } from './helpers';

const PASSWORD = 'live-Pa55word-secret';
const prefix = natsPrefix();
let c: TestController;
let u: InventoryUser;
let other: InventoryUser;
let agent: Awaited<ReturnType<typeof startAgent>>;
let sim: SimSshDevice;
let goodId: string;
let lockedId: string;

beforeAll(async () => {
  c = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  u = await inventoryUser(c, ['org_admin']);
  other = await inventoryUser(c, ['org_admin']);
  agent = await startAgent(c, (await enrollAgent(c, u)).identity, { natsUrl: SHARED_NATS });
  sim = await startSshDevice({ hostname: 'live-1', username: 'netops', password: PASSWORD });
  const good = await u.profile({ username: 'netops', password: PASSWORD, ssh_port: sim.port });
  goodId = (await u.device(good.id, { name: 'live-1', host: sim.host })).id;
  const wrong = await u.profile({ username: 'netops', password: 'not-the-password', ssh_port: sim.port });
  lockedId = (await u.device(wrong.id, { name: 'live-locked', host: sim.host })).id;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await sim?.close();
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
});

const backups = (events: any[], deviceId: string) => events.filter((e) => e.type === 'backup' && e.device_id === deviceId);

describe('backup events on /api/live', () => {
  it("announce queued, running and succeeded for Back up now, to the device's organization only", { timeout: 120_000 }, async () => {
    const mine = await watch(c, u.token);
    const theirs = await watch(c, other.token);
    const pulled = await u.as('POST', `/api/config/devices/${goodId}/pull?method=cli`);
    expect(pulled.status).toBe(201);
    const seen = await until('succeeded event', () => {
      const events = backups(mine.events, goodId);
      return events.some((e) => e.status === 'succeeded') && events;
    });
    expect(seen.map((e) => e.status)).toEqual(['queued', 'running', 'succeeded']);
    const done = seen[2];
    expect(done).toMatchObject({ type: 'backup', device_id: goodId, error: null });
    expect(done.org_id).toBeUndefined();
    expect(new Set(seen.map((e) => e.job_id)).size).toBe(1);
    expect(new Date(done.finished_at).toISOString()).toBe(done.finished_at);
    // The version is committed with the event: a read after it finds it.
    const versions = await u.as('GET', `/api/config/devices/${goodId}/configs`);
    expect(versions.body.configs[0]).toMatchObject({ status: 'success' });
    expect(theirs.events.filter((e) => e.type === 'backup')).toEqual([]);
    mine.close();
    theirs.close();
  });

  it("announce failed with the device's reason, and every device of a bulk backup", { timeout: 120_000 }, async () => {
    const mine = await watch(c, u.token);
    const theirs = await watch(c, other.token);
    const bulk = await u.as('POST', '/api/config/devices/bulk-pull', { body: { device_ids: [goodId, lockedId], method: 'cli' } });
    expect(bulk.status).toBe(202);
    await until(
      'both devices ended',
      () => [goodId, lockedId].every((id) => backups(mine.events, id).some((e) => e.status === 'succeeded' || e.status === 'failed')),
      90_000,
    );
    expect(backups(mine.events, goodId).map((e) => e.status)).toEqual(['queued', 'running', 'succeeded']);
    const locked = backups(mine.events, lockedId);
    expect(locked[0].status).toBe('queued');
    const failed = locked.at(-1);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/auth|password|permission/i);
    expect(failed.error).not.toContain('not-the-password');
    expect(theirs.events.filter((e) => e.type === 'backup')).toEqual([]);
    mine.close();
    theirs.close();
  });
});
