/**
 * Two controller processes (`npm run controller`) on one PostgreSQL database and one NATS
 * (this file's own nats-server), sharing SWITCHBOARD_SECRET_KEY, with real agent processes and
 * SSH simulators. They serve one API:
 *  - a session made on one is valid on the other (refresh and logout too);
 *  - each job result is recorded exactly once, whichever replica takes it (the per-replica job
 *    counters add up to the number of jobs);
 *  - a snapshot started on one finishes after that one is killed (SIGKILL, no goodbye);
 *  - each run of a schedule fires once (/api/tasks, both schedulers ticking every second);
 *  - the failed-login lockout counts failures made on either.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../controller/src/auth/tokens';
import { createDb, type Db } from '../../controller/src/db/knex';
import { createTestDatabase } from '../helpers/postgres';
import { startAgentProcess, startControllerProcess, startNats, stopAll, type ControllerProcess, type NatsServer } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import {
  api,
  collectSite,
  createAgent,
  expectEveryDeviceOnce,
  metric,
  orgAdmin,
  parseMetrics,
  siteWithDevices,
  snapshotOf,
  until,
  verifiedHostKey,
  type Api,
} from './helpers';

const TOKEN = 'two-controllers-metrics-0123456789';
const HOST_KEY = verifiedHostKey();

let nats: NatsServer;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let one: ControllerProcess;
let two: ControllerProcess;
let c1: Api;
let c2: Api;
let user: Awaited<ReturnType<typeof orgAdmin>>;
let siteId: string;
let deviceIds: string[];
const sims: SimSshDevice[] = [];

async function jobsFinishedOn(c: ControllerProcess): Promise<number> {
  const res = await fetch(`${c.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return metric(parseMetrics(await res.text()), 'switchboard_jobs_finished_total');
}

beforeAll(async () => {
  nats = await startNats();
  database = await createTestDatabase();
  db = await createDb(database.url, '/tmp');
  const secretKey = randomBytes(32).toString('hex');
  const common = { databaseUrl: database.url, natsUrl: nats.url, secretKey, metricsToken: TOKEN, env: { SWITCHBOARD_JOB_SWEEP_MS: '200' } };
  [one, two] = await Promise.all([startControllerProcess(common), startControllerProcess(common)]);
  c1 = api(() => one.url);
  c2 = api(() => two.url);
  user = await orgAdmin(c1);
  const made = await siteWithDevices(
    c1,
    user.token,
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        startSshDevice({
          hostKey: HOST_KEY,
          hostname: `dual-${i + 1}`,
          configScale: 24,
          faults: { slowOutput: { chunkBytes: 512, intervalMs: 30 } },
        }),
      ),
    ).then((s) => {
      sims.push(...s);
      return s;
    }),
  );
  siteId = made.site.id;
  deviceIds = made.deviceIds;
  // Two agents of the site, each enrolled through a different controller.
  const a = await createAgent(c1, user.token, 'dual-a', siteId);
  const b = await createAgent(c2, user.token, 'dual-b', siteId);
  await startAgentProcess({ natsUrl: nats.url, controllerUrl: one.url, enrollToken: a.enrollment_token, concurrency: 2 });
  await startAgentProcess({ natsUrl: nats.url, controllerUrl: two.url, enrollToken: b.enrollment_token, concurrency: 2 });
}, 120_000);

afterAll(async () => {
  await stopAll();
  await Promise.all(sims.map((s) => s.close()));
  await db?.destroy();
  await database?.drop();
  await nats?.close();
});

describe('two controllers on one database and one NATS', () => {
  it('accept a session made on either: me, refresh and logout carry across', async () => {
    const login = await c1.request('POST', '/api/auth/login', { body: { username: user.username, password: user.password } });
    expect(login.status).toBe(200);
    const me = await c2.request('GET', '/api/auth/me', { token: login.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.username).toBe(user.username);
    const refreshed = await c2.request('POST', '/api/auth/refresh', { body: { refresh_token: login.body.refresh_token } });
    expect(refreshed.status).toBe(200);
    expect((await c1.request('GET', '/api/auth/me', { token: refreshed.body.access_token })).status).toBe(200);
    // The refresh token was spent on the second: past the two-tab grace, the first refuses it too.
    await db('refresh_tokens')
      .where({ token_hash: hashToken(login.body.refresh_token) })
      .update({ used_at: db.raw("now() - interval '1 minute'") });
    expect((await c1.request('POST', '/api/auth/refresh', { body: { refresh_token: login.body.refresh_token } })).status).toBe(401);
    const other = await c2.request('POST', '/api/auth/login', { body: { username: user.username, password: user.password } });
    expect((await c1.request('POST', '/api/auth/logout', { token: other.body.access_token })).status).toBeLessThan(300);
    expect((await c2.request('GET', '/api/auth/me', { token: other.body.access_token })).status).toBe(401);
    // (Logout ends the user's sessions: sign in again for the tests below.)
    user.token = (await c2.request('POST', '/api/auth/login', { body: { username: user.username, password: user.password } })).body.access_token;
  });

  it('record each job result exactly once, whichever replica takes it', async () => {
    const before = (await jobsFinishedOn(one)) + (await jobsFinishedOn(two));
    const snapshotId = await collectSite(c1, user.token, siteId, 'both replicas');
    await expectEveryDeviceOnce(c2, user.token, db, snapshotId, deviceIds);
    // Each replica counts the jobs it recorded: together, exactly one per device.
    const after = await until(
      'both replicas to have counted',
      async () => {
        const total = (await jobsFinishedOn(one)) + (await jobsFinishedOn(two));
        return total - before >= deviceIds.length ? total : null;
      },
      10_000,
    );
    expect(after - before).toBe(deviceIds.length);
    // Agents' job counts are written by each replica shortly after its outcomes commit.
    const counted = async () =>
      Number(
        (
          await db('agents')
            .where({ org_id: user.orgId })
            .sum({ n: db.raw('completed_jobs + failed_jobs') })
            .first()
        )?.n,
      );
    await until("the agents' job counts to be written", async () => ((await counted()) >= deviceIds.length ? true : null), 10_000);
    expect(await counted()).toBe(deviceIds.length);
  });

  it('finish a snapshot started on one after that one is killed', async () => {
    const snapshotId = await collectSite(c1, user.token, siteId, 'started on one, killed');
    await until('some results recorded', async () => (await snapshotOf(c2, user.token, snapshotId)).successful_devices >= 1, 60_000, 100);
    expect((await snapshotOf(c2, user.token, snapshotId)).successful_devices).toBeLessThan(deviceIds.length);
    await one.kill();
    await expectEveryDeviceOnce(c2, user.token, db, snapshotId, deviceIds);
    one = await one.restart();
    expect((await c1.request('GET', '/readyz')).status).toBe(200);
  }, 200_000);

  it('fire each run of a schedule once', async () => {
    const fresh = await startSshDevice({ hostKey: HOST_KEY, hostname: 'scheduled-1' });
    sims.push(fresh);
    const {
      deviceIds: [deviceId],
    } = await siteWithDevices(c1, user.token, [fresh]);
    const created = await c1.request('POST', '/api/tasks', {
      token: user.token,
      body: { name: 'every two seconds', type: 'backup', cron: '*/2 * * * * *', device_filter: { device_ids: [deviceId] }, method: 'cli' },
    });
    expect(created.status, created.text).toBe(201);
    const taskId = created.body.id;
    await until('four runs', async () => (await c2.request('GET', `/api/tasks/${taskId}/runs`, { token: user.token })).body.length >= 4, 60_000, 250);
    expect((await c2.request('PUT', `/api/tasks/${taskId}`, { token: user.token, body: { enabled: false } })).status).toBeLessThan(300);
    await until(
      'the last run to finish',
      async () => {
        const runs = (await c1.request('GET', `/api/tasks/${taskId}/runs`, { token: user.token })).body;
        return runs.every((r: any) => r.status !== 'running');
      },
      30_000,
      250,
    );
    const runs: any[] = (await c1.request('GET', `/api/tasks/${taskId}/runs`, { token: user.token })).body;
    // One run per scheduled time, each fired by one replica, each making one bulk pull (one job).
    const times = runs.map((r) => new Date(r.scheduled_for).getTime());
    expect(new Set(times).size).toBe(runs.length);
    expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
    const snapshots = runs.map((r) => r.result.snapshot_id);
    expect(new Set(snapshots).size).toBe(runs.length);
    const jobs = await db('jobs').where({ device_id: deviceId, kind: 'backup' });
    expect(jobs).toHaveLength(runs.length);
    expect(new Set(jobs.map((j) => j.group_id))).toEqual(new Set(snapshots));
    // Which replica fired which run is recorded; both are there to take them.
    expect(runs.every((r) => typeof r.controller === 'string' && r.controller.length > 0)).toBe(true);
  }, 120_000);

  // Last: the lockout holds for this IP (127.0.0.1) for the rest of the window.
  it('count failed logins made on either toward one lockout', async () => {
    const limit = 5;
    const remaining: number[] = [];
    for (let i = 0; i < limit; i++) {
      const c = i % 2 === 0 ? c1 : c2;
      const res = await c.request('POST', '/api/auth/login', { body: { username: user.username, password: 'not-the-password' } });
      expect(res.status).toBe(401);
      remaining.push(res.body.attempts_remaining);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    for (const c of [c2, c1]) {
      const res = await c.request('POST', '/api/auth/login', { body: { username: user.username, password: user.password } });
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('LOGIN_LOCKED_OUT');
    }
  });
});
