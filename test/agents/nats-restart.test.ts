/**
 * NATS itself restarted (its own nats-server, SIGKILLed and started again on the same port and
 * store) in the middle of a batch: the controller and two real agent processes reconnect, and
 * every job ends with its result recorded exactly once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { JobOutcome } from '../../controller/src/jobs/types';
import { startTestController, type TestController } from '../helpers/controller';
import { spawnAgent, startNats, type NatsServer, type Proc } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { makeDevice, makeProfile, sleep, until, type Org } from './helpers';

let nats: NatsServer;
let tc: TestController;
let org: Org;
const sims: SimSshDevice[] = [];
const procs: Proc[] = [];
const calls = new Map<string, number>();

beforeAll(async () => {
  nats = await startNats();
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: { natsUrl: nats.url, jobs: { sweepIntervalMs: 200, ackWaitMs: 3_000 } },
  });
  org = await tc.createOrgUser(['org_admin']);
  for (let i = 0; i < 2; i++)
    sims.push(await startSshDevice({ hostname: `nr-${i}`, password: 'nats-pw', faults: { slowOutput: { chunkBytes: 128, intervalMs: 40 } } }));
  tc.services.jobs.onOutcome('backup', async (outcome: JobOutcome) => {
    calls.set(outcome.jobId, (calls.get(outcome.jobId) ?? 0) + 1);
  });
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await Promise.all(sims.map((s) => s.close()));
  await tc?.close();
  await nats?.close();
});

it('keeps every result when NATS restarts mid-batch; agents and controller reconnect', { timeout: 240_000 }, async () => {
  const agentIds: string[] = [];
  for (const name of ['nr-agent-a', 'nr-agent-b']) {
    const res = await tc.request('POST', '/api/agents', { token: org.token, body: { name, site_id: null } });
    agentIds.push(res.body.id);
    const p = spawnAgent({
      NATS_URL: nats.url,
      SWITCHBOARD_URL: tc.url,
      SWITCHBOARD_ENROLL_TOKEN: res.body.enrollment_token,
      SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-nr-')),
      SWITCHBOARD_AGENT_CONCURRENCY: '3',
    });
    procs.push(p);
  }
  const statusOf = async (id: string) => (await tc.request('GET', '/api/agents', { token: org.token })).body.agents.find((a: any) => a.id === id);
  await until(
    'both agents online',
    async () => (await statusOf(agentIds[0]))?.status === 'online' && (await statusOf(agentIds[1]))?.status === 'online',
    90_000,
  );

  const profiles = await Promise.all(sims.map((s) => makeProfile(tc, org, { ssh_port: s.port, password: 'nats-pw' })));
  const devices: string[] = [];
  for (let i = 0; i < 12; i++) devices.push(await makeDevice(tc, org, { profile_id: profiles[i % 2] }));
  const ids = await tc.services.jobs.submit(
    devices.map((deviceId) => ({ orgId: org.orgId, kind: 'backup' as const, deviceId, params: { methods: ['cli'] }, deadlineMs: 180_000 })),
  );

  // Mid-batch: some results are in, some jobs are still running on the agents.
  await until(
    'a part of the batch to be done',
    async () => {
      const rows = await tc.db('jobs').whereIn('id', ids).select('status');
      return rows.filter((r) => r.status === 'succeeded').length >= 2 && rows.some((r) => r.status === 'running');
    },
    120_000,
    50,
  );
  const restartedAt = Date.now();
  await nats.kill();
  await sleep(1_500);
  await nats.start();

  const outcomes = await tc.services.jobs.wait(ids, 180_000);
  expect(outcomes.map((o) => [o.status, o.error])).toEqual(ids.map(() => ['succeeded', null]));
  for (const id of ids) expect(calls.get(id), `outcome of ${id} recorded once`).toBe(1);
  const done = await tc.db('jobs').whereIn('id', ids).where('finished_at', '>', new Date(restartedAt)).count<{ count: number }[]>('id as count');
  expect(Number(done[0].count)).toBeGreaterThan(0); // some results travelled after the restart

  // Both agents heartbeat again through the restarted server.
  await until(
    'heartbeats after the restart',
    async () => {
      const views = await Promise.all(agentIds.map(statusOf));
      return views.every((v) => v.status === 'online' && new Date(v.last_seen_at).getTime() > restartedAt + 1_500);
    },
    60_000,
  );
  // A fresh job after the restart goes through too.
  const [late] = await tc.services.jobs.submit([
    { orgId: org.orgId, kind: 'backup', deviceId: devices[0], params: { methods: ['cli'] }, deadlineMs: 60_000 },
  ]);
  expect((await tc.services.jobs.wait([late], 70_000))[0].status).toBe('succeeded');
});
