/**
 * Two controller replicas on one database and one NATS: both submit, both consume the shared
 * results consumer, and every outcome is recorded exactly once; when one replica stops in the
 * middle, the other finishes the batch.
 */
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../controller/src/app';
import { createDb, type Db } from '../../controller/src/db/knex';
import type { JobOutcome, JobSpec } from '../../controller/src/jobs/types';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, makeDevice, makeProfile, natsPrefix, startAgent, until, type Org } from './helpers';

const prefix = natsPrefix();
let tc: TestController;
let second: Awaited<ReturnType<typeof buildApp>>;
let secondDb: Db;
let org: Org;
let sim: SimSshDevice;
const stops: (() => Promise<unknown>)[] = [];
const recorded = new Map<string, string[]>();

beforeAll(async () => {
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200, ackWaitMs: 2_000 } },
  });
  secondDb = await createDb(tc.config.databaseUrl, tc.config.dataDir);
  second = await buildApp({ config: tc.config, db: secondDb, log: pino({ level: 'silent' }) });
  await second.ready();
  const handler = (replica: string) => async (outcome: JobOutcome) => {
    recorded.set(outcome.jobId, [...(recorded.get(outcome.jobId) ?? []), replica]);
  };
  tc.services.jobs.onOutcome('test_credential', handler('one'));
  second.services.jobs.onOutcome('test_credential', handler('two'));
  org = await tc.createOrgUser(['org_admin']);
  sim = await startSshDevice({ hostname: 'rep-1', password: 'rep-pw', faults: { slowOutput: { chunkBytes: 2048, intervalMs: 20 } } });
  for (const name of ['rep-a', 'rep-b']) {
    const { identity } = await enrollAgent(tc, org, { name });
    const agent = await startAgent(tc, identity, { natsUrl: SHARED_NATS, concurrency: 6 });
    stops.push(agent.stop);
  }
});

afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
  await second?.close().catch(() => undefined);
  await secondDb?.destroy();
  await sim?.close();
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

it('records each outcome once across two replicas, and one replica finishes when the other stops', { timeout: 180_000 }, async () => {
  const profile = await makeProfile(tc, org, { ssh_port: sim.port, password: 'rep-pw' });
  const devices: string[] = [];
  for (let i = 0; i < 10; i++) devices.push(await makeDevice(tc, org, { profile_id: profile }));
  const specs = (n: number): JobSpec[] =>
    devices.flatMap((deviceId) =>
      Array.from({ length: n }, () => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId, params: {}, deadlineMs: 120_000 })),
    );
  const ids = [...(await tc.services.jobs.submit(specs(3))), ...(await second.services.jobs.submit(specs(3)))];

  await until('a part of the batch to be recorded', () => recorded.size >= 10, 120_000, 50);
  await tc.app.close(); // replica one goes away mid-batch (its engine stops with it)
  const outcomes = await second.services.jobs.wait(ids, 150_000);
  expect(outcomes.every((o) => o.status === 'succeeded')).toBe(true);
  for (const id of ids) expect(recorded.get(id), `job ${id}`).toHaveLength(1);
  expect([...recorded.values()].flat()).toContain('two');
});
