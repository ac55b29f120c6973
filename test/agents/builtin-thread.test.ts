/**
 * The built-in agents of `npm start` run in worker threads (controller/src/agents/agent-thread.ts),
 * linked to the in-process job hub over a MessagePort. A thread that dies mid-batch is started
 * again, the jobs it held go back to the queue, and every job ends with its result recorded once;
 * a revoked agent's thread ends for good; stop() leaves no thread running.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { JobOutcome } from '../../controller/src/jobs/types';
import { startBuiltinAgent, type BuiltinAgents } from '../../controller/src/builtin-agent';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { makeDevice, makeProfile, until, type Org } from './helpers';

let tc: TestController;
let org: Org;
let agents: BuiltinAgents | null = null;
const sims: SimSshDevice[] = [];
const calls = new Map<string, number>();

beforeAll(async () => {
  tc = await startTestController({ settings: { 'agents.heartbeat_seconds': 1 } });
  org = await tc.createOrgUser(['org_admin']);
  for (let i = 0; i < 2; i++)
    sims.push(await startSshDevice({ hostname: `bt-${i}`, password: 'thread-pw', faults: { slowOutput: { chunkBytes: 128, intervalMs: 40 } } }));
  tc.services.jobs.onOutcome('backup', async (outcome: JobOutcome) => {
    calls.set(outcome.jobId, (calls.get(outcome.jobId) ?? 0) + 1);
  });
  agents = await startBuiltinAgent(tc.app, { SWITCHBOARD_AGENT_CONCURRENCY: '3' });
}, 180_000); // two agent threads each load TypeScript and the drivers: slow on a loaded machine

afterAll(async () => {
  await agents?.stop();
  await Promise.all(sims.map((s) => s.close()));
  await tc?.close();
});

it('starts a crashed agent thread again; the jobs it held complete, each recorded once', { timeout: 240_000 }, async () => {
  const thread = agents!.threads.get(org.orgId)!;
  expect(thread.thread).not.toBeNull();
  const profiles = await Promise.all(sims.map((s) => makeProfile(tc, org, { ssh_port: s.port, password: 'thread-pw' })));
  const devices: string[] = [];
  for (let i = 0; i < 9; i++) devices.push(await makeDevice(tc, org, { profile_id: profiles[i % 2] }));
  const ids = await tc.services.jobs.submit(
    devices.map((deviceId) => ({ orgId: org.orgId, kind: 'backup' as const, deviceId, params: { methods: ['cli'] }, deadlineMs: 180_000 })),
  );

  await until(
    'a part of the batch to be done while the rest runs',
    async () => {
      const rows = await tc.db('jobs').whereIn('id', ids).select('status');
      return rows.some((r) => r.status === 'succeeded') && rows.some((r) => r.status === 'running');
    },
    120_000,
    50,
  );
  const crashed = thread.thread!;
  await crashed.terminate(); // the thread dies with jobs in hand

  const outcomes = await tc.services.jobs.wait(ids, 180_000);
  expect(outcomes.map((o) => [o.status, o.error])).toEqual(ids.map(() => ['succeeded', null]));
  for (const id of ids) expect(calls.get(id), `outcome of ${id} recorded once`).toBe(1);
  expect(thread.restarts).toBe(1);
  expect(thread.thread).not.toBeNull();
  expect(thread.thread).not.toBe(crashed);
  expect(tc.logs()).toContain('the built-in agent thread ended; starting it again');
});

it('ends a revoked agent thread for good', { timeout: 120_000 }, async () => {
  const thread = agents!.threads.get(org.orgId)!;
  const builtin = (await tc.request('GET', '/api/agents', { token: org.token })).body.agents.find((a: any) => a.builtin);
  const revoked = await tc.request('DELETE', `/api/agents/${builtin.id}`, { token: org.token });
  expect(revoked.status, revoked.text).toBe(204);
  await until('the revoked agent thread to end', () => thread.thread === null, 60_000);
  expect(tc.logs()).toContain('the built-in agent was revoked');
  expect(tc.logs()).toContain('the controller refused this agent'); // logged in the thread, relayed to the controller's log
  expect(thread.restarts).toBe(1); // not started again
});

it('stops every agent thread', { timeout: 60_000 }, async () => {
  const threads = [...agents!.threads.values()];
  expect(threads.some((t) => t.thread !== null)).toBe(true); // the default organization's still runs
  await agents!.stop();
  expect(threads.map((t) => t.thread)).toEqual(threads.map(() => null));
  agents = null;
});
