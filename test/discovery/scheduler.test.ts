import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../controller/src/db/knex';
import { DiscoveryStore } from '../../controller/src/discovery/store';
import { startSshFleet, type SimSshFleet } from '../sim/ssh';
import '../sim/ssh/discovery-data';
import { discoveryEnv, simInventoryDevice, until, type DiscoveryEnv } from './helpers';

/**
 * Background polling with a short scheduler tick, and one "minute" of poll_interval_minutes
 * shortened to 400 ms: devices with poll_enabled are polled again and again, never twice at
 * once, their times jittered; devices without it are left alone. Claiming is checked with two
 * database connections racing, as two controllers would.
 */
const MINUTE_MS = 400;
let env: DiscoveryEnv;
let fleet: SimSshFleet;
const enabled: string[] = [];
let disabled: string;

beforeAll(async () => {
  // Jitter ±50 %: at a 400 ms "minute" the ±10 % default leaves only 81 possible millisecond offsets.
  env = await discoveryEnv({ config: { discovery: { scheduler: true, tickMs: 50, minuteMs: MINUTE_MS, jitter: 0.5 } } });
  fleet = await startSshFleet(4, { dialects: ['vendor_ios', 'vendor_eos'], hostnamePrefix: 'bg' });
  for (const dev of fleet.devices.slice(0, 3))
    enabled.push((await simInventoryDevice(env.u, dev, { fields: { poll_enabled: true, poll_interval_minutes: 1 } })).id);
  disabled = (await simInventoryDevice(env.u, fleet.devices[3])).id;
});
afterAll(async () => {
  await env?.close();
  await fleet?.close();
});

const history = async (id: string) => (await env.u.as('GET', `/api/devices/${id}/poll-history?limit=500`)).body.polls as any[];

describe('background polling', () => {
  // Up to the 60 s its waits allow (above the suite's 30 s default): polls are real SSH sessions.
  it('polls every device with poll_enabled repeatedly, never two polls of one device at once', { timeout: 90_000 }, async () => {
    const done = await until(
      'three finished scheduled polls per device',
      async () => {
        const all = await Promise.all(enabled.map(history));
        return all.every((polls) => polls.filter((p) => p.status === 'succeeded').length >= 3) ? all : null;
      },
      60_000,
      100,
    );
    for (const polls of done) {
      expect(polls.every((p) => p.trigger === 'schedule')).toBe(true);
      const finished = polls.filter((p) => p.finished_at).reverse(); // oldest first
      for (let i = 1; i < finished.length; i++) {
        expect(new Date(finished[i].started_at).getTime()).toBeGreaterThanOrEqual(new Date(finished[i - 1].finished_at).getTime());
      }
      expect(polls.filter((p) => p.status === 'queued' || p.status === 'running').length).toBeLessThanOrEqual(1);
    }
    expect(await history(disabled)).toEqual([]);
  });

  it("spreads polls with jitter: the devices' next times and the gaps between polls differ", async () => {
    const status = await Promise.all(enabled.map(async (id) => (await env.u.as('GET', `/api/devices/${id}/status`)).body));
    for (const s of status) expect(s).toMatchObject({ poll_enabled: true, poll_interval_minutes: 1 });
    const next = status.map((s) => s.next_poll_at);
    expect(next.every((n) => n !== null)).toBe(true);
    // Claimed in one batch at one instant, the devices differ only by their jitter (millisecond times,
    // so two may still coincide by chance; all three only about once in 160,000 runs).
    expect(new Set(next).size).toBeGreaterThan(1);
    const gaps = (await Promise.all(enabled.map(history))).flatMap((polls) => {
      const queued = polls.map((p) => new Date(p.queued_at).getTime()).reverse();
      return queued.slice(1).map((t, i) => t - queued[i]);
    });
    expect(new Set(gaps).size).toBeGreaterThan(1);
  });

  it('a device whose polling is turned off is not polled again', { timeout: 90_000 }, async () => {
    const id = enabled[2];
    expect((await env.u.as('PUT', `/api/devices/${id}`, { body: { poll_enabled: false } })).status).toBe(200);
    // Whatever was already queued finishes; afterwards the count stays put across many ticks.
    const settled = await until('no open poll', async () =>
      (await history(id)).some((p) => p.status === 'queued' || p.status === 'running') ? null : (await history(id)).length,
    );
    const before = settled;
    await until(
      'several scheduler passes',
      async () => {
        const others = await history(enabled[0]);
        return others.filter((p) => p.status === 'succeeded').length >= 6;
      },
      60_000,
      100,
    );
    expect((await history(id)).length).toBe(before);
    expect((await env.u.as('GET', `/api/devices/${id}/status`)).body.next_poll_at).toBeNull();
  });
});

describe('claiming due devices', () => {
  let second: Db;
  beforeAll(async () => {
    second = await createDb(env.c.config.databaseUrl, env.c.config.dataDir);
    await env.c.services.pollScheduler!.stop();
  });
  afterAll(async () => second?.destroy());

  it('two controllers racing claim each due device once, and give never-scheduled devices a spread first time', async () => {
    const profile = await env.u.profile();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await env.u.device(profile.id, { name: `claim-${i}`, poll_enabled: true })).id);
    const now = Date.now();
    const interval = 60 * 60_000;
    // First pass: never scheduled → a first time spread over one interval, no poll yet.
    const first = await new DiscoveryStore(env.c.db).claimDue(1000, async (d) => new Date(now + (d.due ? interval : Math.random() * interval)));
    expect(first.filter((c) => ids.includes(c.device.id))).toEqual([]);
    const times = (await env.c.db('devices').whereIn('id', ids).select('next_poll_at')).map((r) => new Date(r.next_poll_at).getTime());
    expect(new Set(times).size).toBe(ids.length);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(interval / 4);

    // Make them all due, then race two claimers (separate connection pools) in small batches.
    await env.c
      .db('devices')
      .whereIn('id', ids)
      .update({ next_poll_at: new Date(now - 1000) });
    const claim = (db: Db) => async () => {
      const got: string[] = [];
      for (;;) {
        const batch = await new DiscoveryStore(db).claimDue(5, async () => new Date(now + interval));
        if (batch.length === 0) return got;
        got.push(...batch.map((c) => c.device.id));
      }
    };
    const [a, b] = await Promise.all([claim(env.c.db)(), claim(second)()]);
    const mine = [...a, ...b].filter((id) => ids.includes(id));
    expect(mine.sort()).toEqual([...ids].sort());
    expect(new Set(mine).size).toBe(ids.length);
    const polls = await env.c.db('discovery_polls').whereIn('device_id', ids).select('device_id', 'trigger', 'status');
    expect(polls).toHaveLength(ids.length);
    expect(polls.every((p) => p.trigger === 'schedule' && p.status === 'queued')).toBe(true);
  });
});
