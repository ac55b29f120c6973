/**
 * A job batch sent again by somebody else than the controller. On a NATS without per-agent
 * accounts anybody may publish on a pool's jobs subject, and a batch the controller signed stays
 * genuine until its jobs' deadlines: the agent runs a job (at one attempt) once, and a job the
 * controller sends again, at a new attempt, runs again. Real controller, PostgreSQL, NATS
 * JetStream, agent runtime and SSH simulators (which count their logins: a device's runs).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRuntime } from '../../agent/src/runtime';
import type { AgentIdentity } from '../../agent/src/identity';
import { TAKEN_JOBS_FILE } from '../../agent/src/state-dir';
import { DEFAULT_POOL, jobsSubject } from '../../shared/src/nats/subjects';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, batchOf, dropNatsNamespace, enrollAgent, jobRow, makeDevice, natsPrefix, startAgent, until, type Org } from './helpers';

const prefix = natsPrefix();
const PASSWORD = 'replay-pw-1';
let tc: TestController;
let org: Org;
let nc: NatsConnection;
let identity: AgentIdentity;
let runtime: AgentRuntime;
/** Stops the agent started first (the last test runs its own). */
let stopFirst: () => Promise<void>;
/** Every job batch the controller published to the pool, as a listener on NATS reads it. */
const published: string[] = [];
const sims: SimSshDevice[] = [];
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  tc = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  org = await tc.createOrgUser(['org_admin']);
  nc = await connect({ servers: SHARED_NATS });
  const subject = jobsSubject(prefix, org.orgId, DEFAULT_POOL);
  nc.subscribe(subject, { callback: (_err, msg) => published.push(msg.string()) });
  await nc.flush();
  ({ identity } = await enrollAgent(tc, org, { name: 'replayed' }));
  const agent = await startAgent(tc, identity, { natsUrl: SHARED_NATS });
  runtime = agent.runtime;
  stopFirst = agent.stop;
  stops.push(agent.stop);
});

afterAll(async () => {
  // The simulators first: a session they hang ends, and with it its job.
  await Promise.all(sims.map((s) => s.close()));
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await nc?.close();
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

async function device(): Promise<{ sim: SimSshDevice; deviceId: string }> {
  const sim = await startSshDevice({ hostname: `replay-${sims.length}`, password: PASSWORD });
  sims.push(sim);
  return { sim, deviceId: await makeDevice(tc, org, { port: sim.port, password: PASSWORD }) };
}

const submit = async (deviceId: string) =>
  (await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 120_000 }]))[0];

/** The batch the controller published with the job at the attempt. */
const batchWith = (jobId: string, attempt: number) =>
  until(`the batch of the job at attempt ${attempt}`, () =>
    published.find((token) => batchOf(token).jobs.some((j) => j.job_id === jobId && j.attempt === attempt)),
  );

/** Publishes a token on the pool's jobs subject, as anybody on the NATS may; resolves once the pool's agents have settled it. */
async function publishAndSettle(token: string): Promise<void> {
  const ack = await nc.jetstream().publish(jobsSubject(prefix, org.orgId, DEFAULT_POOL), token, { msgID: randomUUID() });
  const jsm = await nc.jetstreamManager();
  await until('the pool to settle the batch', async () => {
    const info = await jsm.consumers.info(identity.nats.jobs_stream, identity.nats.jobs_consumer);
    return info.delivered.stream_seq >= ack.seq && info.num_ack_pending === 0 && info.num_pending === 0;
  });
}

describe('a job batch the controller signed, sent again', () => {
  it('is not run again by the agent that ran it, before its deadline', { timeout: 60_000 }, async () => {
    const { sim, deviceId } = await device();
    const jobId = await submit(deviceId);
    const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: identity.agent_id });
    expect(sim.stats.logins).toBe(1);
    const refusedBefore = runtime.replaysRefused;

    // Once settled, the agent ran whatever of it it would run: its results are stored before it acks.
    await publishAndSettle(await batchWith(jobId, 1));
    expect(sim.stats.logins).toBe(1);
    expect(runtime.replaysRefused - refusedBefore).toBe(1);
    expect(await jobRow(tc, jobId)).toMatchObject({ status: 'succeeded', attempt: 1 });
  });

  it('is run again when the controller sends the job again, at a new attempt', { timeout: 60_000 }, async () => {
    const { sim, deviceId } = await device();
    // The first attempt logs in and hangs.
    sim.setFaults({ hang: true });
    const jobId = await submit(deviceId);
    await until('the agent to run the job', async () => (await jobRow(tc, jobId)).status === 'running');
    expect(sim.stats.logins).toBe(1);
    // Handed back (as the controller does when the agent that held it is revoked) and sent again.
    sim.setFaults({});
    expect(await tc.services.jobEngine.store.requeue(jobId, 1)).toBe(true);
    await tc.services.jobEngine.kick();
    const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: identity.agent_id });
    expect(await jobRow(tc, jobId)).toMatchObject({ status: 'succeeded', attempt: 2 });
    expect(sim.stats.logins).toBe(2);
    await batchWith(jobId, 2);
  });

  it('is not run again by the agent after it restarted: the jobs it took are kept in its state dir', { timeout: 60_000 }, async () => {
    await stopFirst();
    const takenJobsFile = join(mkdtempSync(join(tmpdir(), 'sb-agent-state-')), TAKEN_JOBS_FILE);
    const before = await startAgent(tc, identity, { natsUrl: SHARED_NATS, takenJobsFile });
    stops.push(before.stop);
    const { sim, deviceId } = await device();
    const jobId = await submit(deviceId);
    expect((await tc.services.jobs.wait([jobId], 30_000))[0]).toMatchObject({ status: 'succeeded', agentId: identity.agent_id });
    await before.stop();

    const after = await startAgent(tc, identity, { natsUrl: SHARED_NATS, takenJobsFile });
    stops.push(after.stop);
    await publishAndSettle(await batchWith(jobId, 1));
    expect(sim.stats.logins).toBe(1);
    expect(after.runtime.replaysRefused).toBe(1);
  });
});
