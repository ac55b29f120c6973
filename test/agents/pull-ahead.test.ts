/**
 * How an agent takes job batches: the next batch while the last jobs of the current one still
 * run (so no slot idles between batches), but no more than it can start soon (the pool's other
 * agents still get the rest); and on stop, the jobs it took and did not start are handed back
 * and run once by another agent. Real controller, PostgreSQL, NATS JetStream, agent runtimes and
 * SSH simulators (which count their logins: a device's runs).
 */
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentRuntime } from '../../agent/src/runtime';
import { DRIVERS } from '../../agent/src/drivers';
import { natsAgentLink } from '../../agent/src/nats-link';
import type { AgentLink } from '../../shared/src/jobs/link';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, batchOf, dropNatsNamespace, enrollAgent, jobRow, makeDevice, makeSite, natsPrefix, until, type Org } from './helpers';

const prefix = natsPrefix();
let tc: TestController;
let org: Org;
const sims: SimSshDevice[] = [];
const stops: (() => Promise<unknown>)[] = [];
const quiet = pino({ level: 'silent' });
const PASSWORD = 'pull-ahead-pw-1';

beforeAll(async () => {
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200, ackWaitMs: 2_000 } },
  });
  org = await tc.createOrgUser(['org_admin']);
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await Promise.all(sims.map((s) => s.close()));
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

/** Devices on simulators of their own; `slow` ones send their output a little at a time. */
async function devices(siteId: string, names: string[], slow = false): Promise<{ ids: string[]; sims: SimSshDevice[] }> {
  const started = await Promise.all(
    names.map((hostname) =>
      startSshDevice({ hostname, password: PASSWORD, ...(slow ? { faults: { slowOutput: { chunkBytes: 32, intervalMs: 40 } } } : {}) }),
    ),
  );
  sims.push(...started);
  const ids = await Promise.all(started.map((s) => makeDevice(tc, org, { port: s.port, site_id: siteId, password: PASSWORD })));
  return { ids, sims: started };
}

/** The link as the runtime uses it, noting the job ids of each batch it hands over, and the jobs running then. */
function notingLink(link: AgentLink, running: () => number): { link: AgentLink; batches: string[][]; runningThen: number[] } {
  const batches: string[][] = [];
  const runningThen: number[] = [];
  const noted: AgentLink = {
    ackWaitMs: link.ackWaitMs,
    pull: (max, waitMs, onJob) =>
      link.pull(max, waitMs, (delivered) => {
        batches.push(batchOf(delivered.token).jobs.map((j) => j.job_id));
        runningThen.push(running());
        onJob(delivered);
      }),
    request: (token, timeoutMs) => link.request(token, timeoutMs),
    publish: (token, id) => link.publish(token, id),
    close: () => link.close(),
  };
  return { link: noted, batches, runningThen };
}

async function runtime(identity: Awaited<ReturnType<typeof enrollAgent>>['identity'], concurrency: number) {
  const made: { runtime?: AgentRuntime } = {};
  const noting = notingLink(await natsAgentLink(SHARED_NATS, identity), () => made.runtime?.activeJobs ?? 0);
  const r = (made.runtime = new AgentRuntime({
    identity,
    link: noting.link,
    drivers: DRIVERS,
    concurrency,
    connectConcurrency: concurrency,
    version: 'test',
    log: quiet,
  }));
  await r.start();
  stops.push(() => r.stop(2_000));
  return { runtime: r, batches: noting.batches, runningThen: noting.runningThen };
}

const backups = (deviceIds: string[]) =>
  tc.services.jobs.submit(
    deviceIds.map((deviceId) => ({ orgId: org.orgId, kind: 'backup' as const, deviceId, params: { methods: ['cli' as const] }, deadlineMs: 90_000 })),
  );
const isFinal = async (jobId: string) => ['succeeded', 'failed'].includes((await jobRow(tc, jobId)).status);
const online = (agentId: string) =>
  until('the agent to be online', async () => {
    const list = (await tc.request('GET', '/api/agents', { token: org.token })).body.agents;
    return list.find((a: { id: string; status: string }) => a.id === agentId)?.status === 'online';
  });

it('takes the next batch while every slot still runs a job of the current one, and no more until it can start it', { timeout: 120_000 }, async () => {
  const site = await makeSite(tc, org, 'Pull Ahead');
  const slow = await devices(site.id, ['ahead-slow-1', 'ahead-slow-2'], true);
  const quick = await devices(site.id, ['ahead-quick-1', 'ahead-quick-2']);
  // Both enrolled before any job, so every batch is sealed for both; the second starts later.
  const first = await enrollAgent(tc, org, { name: 'ahead-first', site_id: site.id });
  const second = await enrollAgent(tc, org, { name: 'ahead-second', site_id: site.id });
  // Two slots: with the two slow jobs running, both are busy; a quarter of 2 rounds up to 1 job waiting.
  const a = await runtime(first.identity, 2);
  await online(first.identity.agent_id);

  const slowJobs = await backups(slow.ids);
  await until('the slow jobs to run', async () => slow.sims.every((s) => s.stats.logins === 1));
  expect(a.batches).toEqual([expect.arrayContaining(slowJobs)]);

  // Every slot is busy, no job waits: the next batch is taken now, not once a slow job ends.
  const [early] = await backups([quick.ids[0]]);
  await until('the next batch to be taken', async () => a.batches.length === 2);
  expect(a.batches[1]).toEqual([early]);
  expect(a.runningThen[1]).toBe(2); // both slow jobs were running when it came

  // One job now waits for a slot: no further batch is taken; another agent of the pool runs it.
  const [late] = await backups([quick.ids[1]]);
  const b = await runtime(second.identity, 2);
  const [lateOutcome] = await tc.services.jobs.wait([late], 60_000);
  expect(lateOutcome).toMatchObject({ status: 'succeeded', agentId: second.identity.agent_id });
  expect(a.batches.flat()).not.toContain(late);
  expect(b.batches.flat()).toContain(late);

  const outcomes = await tc.services.jobs.wait([...slowJobs, early], 90_000);
  expect(outcomes.map((o) => [o.status, o.agentId])).toEqual([...slowJobs, early].map(() => ['succeeded', first.identity.agent_id]));
  // Each device ran once.
  expect([...slow.sims, ...quick.sims].map((s) => s.stats.logins)).toEqual([1, 1, 1, 1]);
});

it('on stop, hands back the jobs it took and did not start; another agent runs only those, each once', { timeout: 120_000 }, async () => {
  const site = await makeSite(tc, org, 'Hand Back');
  const slow = await devices(site.id, ['back-slow'], true);
  const quick = await devices(site.id, ['back-quick-1', 'back-quick-2']);
  const first = await enrollAgent(tc, org, { name: 'back-first', site_id: site.id });
  const heir = await enrollAgent(tc, org, { name: 'back-heir', site_id: site.id });
  const a = await runtime(first.identity, 1);
  await online(first.identity.agent_id);

  // One batch: the slow job takes the only slot, the quick ones wait for it.
  const [slowJob, ...quickJobs] = await backups([...slow.ids, ...quick.ids]);
  await until('the slow job to run', async () => slow.sims[0].stats.logins === 1);
  expect(a.batches).toHaveLength(1);
  await a.runtime.stop(60_000); // returns once the slow job's result is on the stream and the batch handed back

  await until('the slow job to be recorded', () => isFinal(slowJob));
  for (const id of quickJobs) expect(await isFinal(id), id).toBe(false);
  expect(quick.sims.map((s) => s.stats.logins)).toEqual([0, 0]);

  await runtime(heir.identity, 2);
  const outcomes = await tc.services.jobs.wait([slowJob, ...quickJobs], 90_000);
  expect(outcomes.map((o) => [o.status, o.agentId])).toEqual([
    ['succeeded', first.identity.agent_id],
    ['succeeded', heir.identity.agent_id],
    ['succeeded', heir.identity.agent_id],
  ]);
  expect([...slow.sims, ...quick.sims].map((s) => s.stats.logins)).toEqual([1, 1, 1]);
  const rows = await tc
    .db('jobs')
    .whereIn('id', [slowJob, ...quickJobs])
    .select('attempt');
  expect(rows.map((r) => r.attempt)).toEqual([1, 1, 1]);
});
