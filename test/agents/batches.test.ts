/**
 * The batched job protocol end to end: many jobs of one pool travel in one signed message, their
 * results come back many to a signed event, each device is recorded exactly once; a batch whose
 * agent is SIGKILLed goes to another agent, which runs only the devices without a recorded
 * result; a slow device does not hold back the others' results; a tampered batch is refused.
 * Real controller, PostgreSQL, NATS JetStream, agent processes and runtimes, SSH simulators
 * (which count their logins: a device's runs).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRuntime } from '../../agent/src/runtime';
import { DRIVERS } from '../../agent/src/drivers';
import { natsAgentLink } from '../../agent/src/nats-link';
import type { JobOutcome } from '../../controller/src/jobs/types';
import { AGENT_SIGN_ALG, importAgentPrivateKey, signJsonDetached, unverifiedPayload } from '../../shared/src/jobs/crypto';
import { InProcessHub } from '../../shared/src/jobs/inprocess';
import { PROTOCOL_VERSION } from '../../shared/src/jobs/messages';
import type { AgentLink } from '../../shared/src/jobs/link';
import { startTestController, type TestController } from '../helpers/controller';
import { spawnAgent, type Proc } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import {
  SHARED_NATS,
  batchOf,
  dropNatsNamespace,
  enrollAgent,
  jobRow,
  makeDevice,
  makeProfile,
  makeSite,
  natsPrefix,
  startAgent,
  takeBatch,
  until,
  type Org,
} from './helpers';

const prefix = natsPrefix();
let tc: TestController;
let org: Org;
const sims: SimSshDevice[] = [];
const procs: Proc[] = [];
const stops: (() => Promise<unknown>)[] = [];
/** Outcomes heard after their commit, by job id (a job recorded twice would be heard twice). */
const heard = new Map<string, number>();

const quiet = pino({ level: 'silent' });

async function sim(name: string, faults?: NonNullable<Parameters<typeof startSshDevice>[0]>['faults']): Promise<SimSshDevice> {
  const s = await startSshDevice({ hostname: name, password: 'batch-pw-1', ...(faults ? { faults } : {}) });
  sims.push(s);
  return s;
}

/** The link as the runtime uses it, counting the results events and the results in them. */
function countingLink(link: AgentLink): { link: AgentLink; events: number[] } {
  const events: number[] = [];
  const counted: AgentLink = {
    ackWaitMs: link.ackWaitMs,
    pull: (max, waitMs, onJob) => link.pull(max, waitMs, onJob),
    request: (token, timeoutMs) => link.request(token, timeoutMs),
    close: () => link.close(),
    async publish(token, id) {
      await link.publish(token, id);
      const payload = JSON.parse(token.slice(token.indexOf('\n') + 1)) as { type: string; results?: unknown[] };
      if (payload.type === 'results') events.push(payload.results!.length);
    },
  };
  return { link: counted, events };
}

async function runtimeOn(link: AgentLink, identity: Awaited<ReturnType<typeof enrollAgent>>['identity'], log = quiet): Promise<AgentRuntime> {
  const runtime = new AgentRuntime({ identity, link, drivers: DRIVERS, concurrency: 8, connectConcurrency: 8, version: 'test', log });
  await runtime.start();
  stops.push(() => runtime.stop(2_000));
  return runtime;
}

const backups = (deviceIds: string[]) =>
  deviceIds.map((deviceId) => ({ orgId: org.orgId, kind: 'backup' as const, deviceId, params: { methods: ['cli' as const] }, deadlineMs: 90_000 }));

beforeAll(async () => {
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200, ackWaitMs: 2_000 } },
  });
  org = await tc.createOrgUser(['org_admin']);
  tc.services.jobs.afterOutcome('backup', (o: JobOutcome) => heard.set(o.jobId, (heard.get(o.jobId) ?? 0) + 1));
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await Promise.all(sims.map((s) => s.close()));
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

describe('jobs and results in batches', () => {
  it('a snapshot of many devices travels in fewer messages than devices and records every device exactly once', { timeout: 120_000 }, async () => {
    const site = await makeSite(tc, org, 'Batch Hall');
    const device = await sim('batch-core');
    const profile = await makeProfile(tc, org, { ssh_port: device.port, password: 'batch-pw-1' });
    const n = 40;
    const ids = await Promise.all(Array.from({ length: n }, () => makeDevice(tc, org, { profile_id: profile, site_id: site.id })));
    const { identity } = await enrollAgent(tc, org, { name: 'batcher', site_id: site.id });
    const counting = countingLink(await natsAgentLink(SHARED_NATS, identity));
    await runtimeOn(counting.link, identity);
    // 32 of the batch's jobs wait for one of 8 slots at once, each listening for the runtime's stop: no leak warning.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    stops.push(async () => process.off('warning', onWarning));

    const snap = (await tc.request('POST', '/api/devices/snapshots', { token: org.token, body: { name: 'in batches' } })).body.snapshot;
    expect((await tc.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token: org.token, body: { timeout_seconds: 90 } })).status).toBe(
      202,
    );
    const done = await until(
      'the snapshot to finish',
      async () => {
        const s = (await tc.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot;
        return s.status === 'collecting' ? null : s;
      },
      90_000,
    );
    expect(done).toMatchObject({ total_devices: n, successful_devices: n, failed_devices: 0 });

    const jobs = await tc.db('jobs').whereIn('device_id', ids).select('id', 'stream_seq', 'attempt', 'status');
    expect(jobs).toHaveLength(n);
    expect(jobs.every((j) => j.status === 'succeeded' && j.attempt === 1)).toBe(true);
    // Sent in fewer messages than devices (here one batch), answered in fewer results events than devices.
    expect(new Set(jobs.map((j) => j.stream_seq)).size).toBeLessThan(n);
    expect(counting.events.length).toBeLessThan(n);
    expect(counting.events.reduce((a, b) => a + b, 0)).toBe(n);
    // Each device ran once and was recorded once.
    expect(device.stats.logins).toBe(n);
    for (const j of jobs) expect(heard.get(j.id), j.id).toBe(1);
    const versions: { device_id: string; n: number }[] = await tc
      .db('config_versions')
      .whereIn('device_id', ids)
      .groupBy('device_id')
      .select('device_id', tc.db.raw('count(*)::int as n'));
    expect(versions.map((v) => v.n)).toEqual(ids.map(() => 1));
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('records the quick devices of a batch while a slow one still runs', { timeout: 120_000 }, async () => {
    const site = await makeSite(tc, org, 'Mixed Pace');
    const quick = await Promise.all([0, 1, 2, 3].map((i) => sim(`quick-${i}`)));
    const slow = await sim('crawl', { slowOutput: { chunkBytes: 48, intervalMs: 60 } });
    const quickIds = await Promise.all(quick.map((s) => makeDevice(tc, org, { port: s.port, site_id: site.id, password: 'batch-pw-1' })));
    const slowId = await makeDevice(tc, org, { port: slow.port, site_id: site.id, password: 'batch-pw-1' });
    const { identity } = await enrollAgent(tc, org, { name: 'mixed', site_id: site.id });
    await runtimeOn(await natsAgentLink(SHARED_NATS, identity), identity);

    const [slowJob, ...quickJobs] = await tc.services.jobs.submit(backups([slowId, ...quickIds]));
    expect(
      new Set(
        (
          await tc
            .db('jobs')
            .whereIn('id', [slowJob, ...quickJobs])
            .select('stream_seq')
        ).map((r) => r.stream_seq),
      ).size,
    ).toBe(1);
    // The quick ones are final while the slow one of the same batch is still running.
    await until(
      'the quick jobs to be recorded',
      async () => (await tc.db('jobs').whereIn('id', quickJobs).where({ status: 'succeeded' })).length === 4,
    );
    expect((await jobRow(tc, slowJob)).status).not.toMatch(/succeeded|failed/);
    const [outcome] = await tc.services.jobs.wait([slowJob], 90_000);
    expect(outcome.status).toBe('succeeded');
    const rows = await tc.db('jobs').whereIn('id', quickJobs).select('finished_at');
    for (const r of rows) expect(r.finished_at.getTime()).toBeLessThan(outcome.finishedAt.getTime());
  });

  it(
    'hands the batch of a SIGKILLed agent to another agent, which runs only the devices without a recorded result',
    { timeout: 150_000 },
    async () => {
      const site = await makeSite(tc, org, 'Killing Batch');
      const quick = await Promise.all([0, 1, 2, 3, 4].map((i) => sim(`fast-${i}`)));
      const slow = await sim('molasses', { slowOutput: { chunkBytes: 48, intervalMs: 60 } });
      const quickIds = await Promise.all(quick.map((s) => makeDevice(tc, org, { port: s.port, site_id: site.id, password: 'batch-pw-1' })));
      const slowId = await makeDevice(tc, org, { port: slow.port, site_id: site.id, password: 'batch-pw-1' });
      // The heir is enrolled (the batch is sealed for it too) but starts only once the first agent is dead.
      const heir = await enrollAgent(tc, org, { name: 'kill-heir', site_id: site.id });
      const created = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'kill-victim', site_id: site.id } });
      const victimId = created.body.id as string;
      const victim = spawnAgent({
        NATS_URL: SHARED_NATS,
        SWITCHBOARD_URL: tc.url,
        SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-batch-agent-')),
        SWITCHBOARD_ENROLL_TOKEN: created.body.enrollment_token,
        SWITCHBOARD_AGENT_CONCURRENCY: '8',
      });
      procs.push(victim);
      await until('the agent to be online', async () => {
        const list = (await tc.request('GET', '/api/agents', { token: org.token })).body.agents;
        return list.find((x: any) => x.id === victimId)?.status === 'online';
      });

      const [slowJob, ...quickJobs] = await tc.services.jobs.submit(backups([slowId, ...quickIds]));
      const all = [slowJob, ...quickJobs];
      await until(
        'the quick jobs to be recorded',
        async () => (await tc.db('jobs').whereIn('id', quickJobs).where({ status: 'succeeded' })).length === 5,
      );
      expect(new Set((await tc.db('jobs').whereIn('id', all).select('stream_seq')).map((r) => r.stream_seq)).size).toBe(1); // one batch
      for (const id of quickJobs) expect((await jobRow(tc, id)).agent_id).toBe(victimId);
      await until('the slow job to run', async () => (await jobRow(tc, slowJob)).status === 'running');
      await victim.kill('SIGKILL');
      const survivor = await startAgent(tc, heir.identity, { natsUrl: SHARED_NATS });
      stops.push(survivor.stop);

      const [outcome] = await tc.services.jobs.wait([slowJob], 120_000);
      expect(outcome).toMatchObject({ status: 'succeeded', agentId: heir.identity.agent_id });
      // The heir ran only the slow device again; the quick ones ran once, and each job was recorded once.
      expect(slow.stats.logins).toBe(2);
      expect(quick.map((s) => s.stats.logins)).toEqual([1, 1, 1, 1, 1]);
      const rows = await tc.db('jobs').whereIn('id', all).select('id', 'attempt', 'status');
      expect(rows.every((r) => r.attempt === 1 && r.status === 'succeeded')).toBe(true);
      for (const id of all) expect(heard.get(id), id).toBe(1);
    },
  );

  it('refuses a tampered job batch: nothing of it runs; says which jobs are open to their own organization only', async () => {
    const hub = new InProcessHub();
    const site = await makeSite(tc, org, 'Tamper Yard');
    const device = await sim('tamper-target');
    const deviceId = await makeDevice(tc, org, { port: device.port, site_id: site.id, password: 'batch-pw-1' });
    const { identity } = await enrollAgent(tc, org, { name: 'wary', site_id: site.id });
    // The genuine batch, taken off NATS as the pool's agent would.
    const nats = await natsAgentLink(SHARED_NATS, identity);
    stops.push(() => nats.close());
    const [jobId] = await tc.services.jobs.submit(backups([deviceId]));
    const genuine = await takeBatch(nats);
    expect(batchOf(genuine).jobs.map((j) => j.job_id)).toEqual([jobId]);
    // The same batch with its body changed (another host), and one signed by another key, on a hub only this agent pulls from.
    const [header, body, signature] = genuine.split('.');
    const altered = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    altered.jobs[0].device.host = '192.0.2.66';
    await hub.publishJob(identity.org_id, identity.pool, `${header}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`);
    await hub.publishJob(identity.org_id, identity.pool, `${header}.${body}.${signature.slice(0, -4)}AAAA`);
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    await runtimeOn(hub.link(identity.org_id, identity.pool), identity, log);
    await until('both batches to be dropped', () => lines.filter((l) => l.includes('dropped a job batch the controller did not sign')).length === 2);
    // Its dispatch committed (the test was quicker), and no agent ran it.
    await until('the job to be dispatched', async () => (await jobRow(tc, jobId)).status === 'dispatched');
    expect(device.stats.logins).toBe(0);

    // Which of its jobs are still open: the controller answers for the asking agent's organization and the batch's attempt only.
    const stranger = await enrollAgent(tc, await tc.createOrgUser(['org_admin']), { name: 'nosy' });
    const ask = async (who: typeof identity, attempt: number) => {
      const request = {
        v: PROTOCOL_VERSION,
        type: 'open_jobs',
        agent_id: who.agent_id,
        at: new Date().toISOString(),
        jobs: [{ job_id: jobId, attempt }],
      };
      const key = (await importAgentPrivateKey(who.private_jwk)).sign;
      const reply = await tc.services.jobEngine.sink.request(await signJsonDetached(request, key, AGENT_SIGN_ALG, who.agent_id));
      return unverifiedPayload(reply);
    };
    expect(await ask(identity, 1)).toEqual({ v: PROTOCOL_VERSION, type: 'open_jobs', ok: true, open: [jobId], error: null });
    expect(await ask(identity, 2)).toMatchObject({ ok: true, open: [] });
    expect(await ask(stranger.identity, 1)).toMatchObject({ ok: true, open: [] });
  });
});
