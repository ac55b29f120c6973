/**
 * SIGTERM in the middle of a snapshot, with real processes: controllers (`npm run controller`)
 * and agents (`npm run agent`) over this file's own nats-server, slow SSH simulators so the
 * signal lands while device sessions run.
 *
 *  - agent, with time to finish: it takes no new job, finishes the ones it runs, exits 0; the
 *    other agent of the site does the rest; every device has exactly one result.
 *  - agent, without time to finish (grace 0): it hands its running jobs back at once and exits 0;
 *    the other agent runs them; nothing lost, nothing recorded twice.
 *  - controller: an HTTP request in flight still gets its answer, new connections are refused,
 *    the process exits 0 within its bound; the agents keep working; once a controller is back,
 *    every result that arrived meanwhile is recorded, each exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../controller/src/db/knex';
import { createTestDatabase } from '../helpers/postgres';
import {
  startAgentProcess,
  startControllerProcess,
  startNats,
  stopAll,
  type AgentProcess,
  type ControllerProcess,
  type NatsServer,
} from '../helpers/processes';
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

const HOST_KEY = verifiedHostKey();

const TOKEN = 'shutdown-metrics-token-0123456789';

let nats: NatsServer;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let ctl: ControllerProcess;
let c: Api;
let user: Awaited<ReturnType<typeof orgAdmin>>;
const sims: SimSshDevice[] = [];
const agents: AgentProcess[] = [];

/** Simulators whose output trickles: one backup takes about `seconds`. */
async function slowSims(n: number, prefix: string, intervalMs: number): Promise<SimSshDevice[]> {
  const made = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      startSshDevice({ hostKey: HOST_KEY, hostname: `${prefix}-${i + 1}`, configScale: 24, faults: { slowOutput: { chunkBytes: 256, intervalMs } } }),
    ),
  );
  sims.push(...made);
  return made;
}

async function agentMetric(agent: AgentProcess, name: string): Promise<number> {
  const res = await fetch(`${agent.healthUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return metric(parseMetrics(await res.text()), name);
}

beforeAll(async () => {
  nats = await startNats();
  database = await createTestDatabase();
  db = await createDb(database.url, '/tmp');
  ctl = await startControllerProcess({
    databaseUrl: database.url,
    natsUrl: nats.url,
    metricsToken: TOKEN,
    logLevel: 'info',
    env: { SWITCHBOARD_JOB_SWEEP_MS: '200', SWITCHBOARD_JOB_ACK_WAIT_SECONDS: '60' },
  });
  c = api(() => ctl.url);
  user = await orgAdmin(c);
}, 120_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop(30_000)));
  await ctl?.stop(30_000);
  await Promise.all(sims.map((s) => s.close()));
  await stopAll();
  await db?.destroy();
  await database?.drop();
  await nats?.close();
});

describe('agent SIGTERM mid-snapshot', () => {
  let siteId: string;
  let deviceIds: string[];
  let stopping: AgentProcess;
  let staying: AgentProcess;
  let stoppingId: string;

  beforeAll(async () => {
    const made = await siteWithDevices(c, user.token, await slowSims(10, 'agent-sig', 25));
    siteId = made.site.id;
    deviceIds = made.deviceIds;
    const a1 = await createAgent(c, user.token, 'stopping-agent', siteId);
    const a2 = await createAgent(c, user.token, 'staying-agent', siteId);
    stoppingId = a1.id;
    stopping = await startAgentProcess({
      natsUrl: nats.url,
      controllerUrl: ctl.url,
      enrollToken: a1.enrollment_token,
      concurrency: 3,
      metricsToken: TOKEN,
    });
    staying = await startAgentProcess({
      natsUrl: nats.url,
      controllerUrl: ctl.url,
      enrollToken: a2.enrollment_token,
      concurrency: 3,
      metricsToken: TOKEN,
    });
    agents.push(stopping, staying);
  }, 60_000);

  it('finishes the jobs it runs, takes no more, exits 0; every device is backed up exactly once', async () => {
    const snapshotId = await collectSite(c, user.token, siteId, 'agent sigterm');
    await until('the agent to be running jobs', async () => (await agentMetric(stopping, 'switchboard_agent_jobs_active')) > 0, 30_000, 50);
    stopping.signal('SIGTERM');
    // Readiness turns 503 at once while it finishes.
    const ready = await fetch(`${stopping.healthUrl}/readyz`)
      .then((r) => r.status)
      .catch(() => 'gone');
    expect([503, 'gone']).toContain(ready);
    expect(await stopping.exited).toBe(0);
    expect(stopping.output()).toContain('stopped cleanly');
    expect(stopping.output()).not.toMatch(/did not stop cleanly in time/);

    const { jobs } = await expectEveryDeviceOnce(c, user.token, db, snapshotId, deviceIds);
    // It finished what it had started: some results are its own, none left open in its name.
    expect(jobs.filter((j: any) => j.agent_id === stoppingId).length).toBeGreaterThan(0);
    expect(await db('jobs').where({ agent_id: stoppingId }).whereIn('status', ['dispatched', 'running'])).toHaveLength(0);
  }, 180_000);

  it('with no grace left, hands its running jobs back at once and exits 0; the other agent runs them', async () => {
    // The same identity again, now allowed no time to finish; each backup takes several seconds.
    for (const sim of sims) sim.setFaults({ slowOutput: { chunkBytes: 128, intervalMs: 60 } });
    stopping = await startAgentProcess({
      natsUrl: nats.url,
      stateDir: stopping.stateDir,
      concurrency: 3,
      metricsToken: TOKEN,
      env: { SWITCHBOARD_AGENT_STOP_GRACE_SECONDS: '0' },
    });
    agents.push(stopping);
    const snapshotId = await collectSite(c, user.token, siteId, 'agent sigterm without grace');
    await until('the agent to be running jobs', async () => (await agentMetric(stopping, 'switchboard_agent_jobs_active')) > 0, 30_000, 50);
    stopping.signal('SIGTERM');
    expect(await stopping.exited).toBe(0);
    expect(stopping.output()).toContain('stopped cleanly');
    // JetStream redelivers released jobs at once (the ack wait is 60 s): the snapshot finishes well before.
    const { jobs } = await expectEveryDeviceOnce(c, user.token, db, snapshotId, deviceIds);
    expect(jobs.every((j: any) => j.agent_id !== stoppingId)).toBe(true);
    expect(staying.running).toBe(true);
  }, 180_000);
});

describe('controller SIGTERM mid-snapshot', () => {
  let siteId: string;
  let deviceIds: string[];
  let otherDevice: string;

  beforeAll(async () => {
    // Another site with its own agent: a single pull there is answered while the snapshot runs.
    const other = await siteWithDevices(c, user.token, await slowSims(1, 'ctl-other', 150));
    otherDevice = other.deviceIds[0];
    const b = await createAgent(c, user.token, 'ctl-other-agent', other.site.id);
    agents.push(
      await startAgentProcess({ natsUrl: nats.url, controllerUrl: ctl.url, enrollToken: b.enrollment_token, concurrency: 1, metricsToken: TOKEN }),
    );
    const made = await siteWithDevices(c, user.token, await slowSims(8, 'ctl-sig', 40));
    siteId = made.site.id;
    deviceIds = made.deviceIds;
    const a = await createAgent(c, user.token, 'ctl-site-agent', siteId);
    // One session at a time: the collection outlasts the controller's stop by several devices.
    agents.push(
      await startAgentProcess({ natsUrl: nats.url, controllerUrl: ctl.url, enrollToken: a.enrollment_token, concurrency: 1, metricsToken: TOKEN }),
    );
  }, 60_000);

  it('answers the request in flight, refuses new ones, exits 0; results arriving meanwhile are recorded once a controller is back', async () => {
    const snapshotId = await collectSite(c, user.token, siteId, 'controller sigterm');
    // A single pull waits for its device's job: in flight when the signal lands.
    const pulled = c.request('POST', `/api/config/devices/${otherDevice}/pull`, { token: user.token, body: {} });
    await until('some results recorded', async () => (await snapshotOf(c, user.token, snapshotId)).successful_devices >= 1, 60_000, 100);
    const before = await snapshotOf(c, user.token, snapshotId);
    expect(before.successful_devices).toBeLessThan(deviceIds.length);
    const pullJob = await db('jobs').where({ device_id: otherDevice }).first();
    expect(['queued', 'dispatched', 'running']).toContain(pullJob.status);

    ctl.signal('SIGTERM');
    const answer = await pulled;
    expect(answer.status, answer.text).toBe(201);
    expect(await ctl.exited, ctl.output().slice(-3000)).toBe(0);
    expect(ctl.output()).toContain('stopped cleanly');
    expect(ctl.output()).not.toMatch(/did not stop cleanly in time/);
    await expect(fetch(`${ctl.url}/healthz`)).rejects.toThrow();

    // While no controller runs, the agent keeps backing up devices: results wait in JetStream.
    await until(
      'the agent to finish the remaining devices',
      async () => (await agentMetric(agents[agents.length - 1], 'switchboard_agent_jobs_finished_total')) >= deviceIds.length,
      90_000,
      250,
    );
    const meanwhile = await db('snapshots').where({ id: snapshotId }).first();
    expect(meanwhile.status).toBe('collecting');
    expect(meanwhile.successful_devices).toBeLessThan(deviceIds.length);

    ctl = await ctl.restart();
    await expectEveryDeviceOnce(c, user.token, db, snapshotId, deviceIds);
    // The single pull stored its version.
    const last = await db('config_versions').where({ device_id: otherDevice });
    expect(last.filter((v) => v.snapshot_id === null)).toHaveLength(1);
  }, 240_000);
});
