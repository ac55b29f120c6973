/**
 * The JobService contract, run against both transports: in-process (all-in-one, no NATS_URL)
 * and NATS JetStream. Real controller, real PostgreSQL, real agents runtimes with the real SSH
 * driver against the SSH simulator.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, withDrivers } from '../../agent/src/drivers';
import type { DeviceDriver } from '../../agent/src/drivers/types';
import type { JobOutcome } from '../../controller/src/jobs/types';
import { AGENT_SIGN_ALG, generateAgentKeys, importAgentPrivateKey, signJson, signJsonDetached } from '../../shared/src/jobs/crypto';
import { PROTOCOL_VERSION } from '../../shared/src/jobs/messages';
import { resultsWildcard } from '../../shared/src/nats/subjects';
import { startTestController, type TestController } from '../helpers/controller';
import { DISPATCH_LOCK } from '../../controller/src/jobs/store';
import { startGnmiTarget } from '../sim/gnmi/target';
import { startNetconfDevice } from '../sim/netconf/device';
import { normalizeConfig, startSshDevice, type SimSshDevice } from '../sim/ssh';
import {
  SHARED_NATS,
  dropNatsNamespace,
  enrollAgent,
  jobRow,
  makeDevice,
  makeProfile,
  makeSite,
  natsPrefix,
  startAgent,
  until,
  type Org,
} from './helpers';

/** Counts open SSH sessions per device across every agent that uses these drivers. */
function countingDrivers() {
  const ssh = DRIVERS.get('ssh')!;
  const open = new Map<string, number>();
  const stats = { maxPerDevice: 0, maxTotal: 0, total: 0 };
  const driver: DeviceDriver = {
    transport: 'ssh',
    async open(target, limits, transcript) {
      const key = `${target.host}:${target.ports.ssh}`;
      const n = (open.get(key) ?? 0) + 1;
      open.set(key, n);
      stats.total += 1;
      stats.maxPerDevice = Math.max(stats.maxPerDevice, n);
      stats.maxTotal = Math.max(stats.maxTotal, stats.total);
      const done = () => {
        open.set(key, (open.get(key) ?? 1) - 1);
        stats.total -= 1;
      };
      try {
        const session = await ssh.open(target, limits, transcript);
        const close = session.close.bind(session);
        let closed = false;
        session.close = async () => {
          try {
            await close();
          } finally {
            if (!closed) done();
            closed = true;
          }
        };
        return session;
      } catch (err) {
        done();
        throw err;
      }
    },
  };
  return { drivers: withDrivers({ ssh: driver }), stats };
}

describe.each([{ transport: 'inprocess' as const }, { transport: 'nats' as const }])('JobService over $transport', ({ transport }) => {
  const prefix = natsPrefix();
  const natsUrl = transport === 'nats' ? SHARED_NATS : null;
  let tc: TestController;
  let org: Org;
  let sim: SimSshDevice;
  let slow: SimSshDevice;
  let mainAgent: Awaited<ReturnType<typeof startAgent>>;
  const stops: (() => Promise<unknown>)[] = [];
  const calls = new Map<string, number>();
  const seenInTransaction: string[] = [];

  beforeAll(async () => {
    tc = await startTestController({
      settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
      config: { natsUrl, natsPrefix: prefix, jobs: { sweepIntervalMs: 200, ackWaitMs: 2_000 } },
    });
    org = await tc.createOrgUser(['org_admin']);
    sim = await startSshDevice({ hostname: 'core-1', password: 'sw0rdfish-secret' });
    slow = await startSshDevice({ hostname: 'slow-1', password: 'sw0rdfish-secret', faults: { slowOutput: { chunkBytes: 100, intervalMs: 40 } } });
    const handler = async (outcome: JobOutcome, trx: any) => {
      calls.set(outcome.jobId, (calls.get(outcome.jobId) ?? 0) + 1);
      const row = await trx('jobs').where({ id: outcome.jobId }).first();
      seenInTransaction.push(`${outcome.jobId}:${row.status}`);
    };
    tc.services.jobs.onOutcome('backup', handler);
    tc.services.jobs.onOutcome('test_credential', handler);
    const { identity } = await enrollAgent(tc, org, { name: 'main' });
    mainAgent = await startAgent(tc, identity, { natsUrl });
    stops.push(mainAgent.stop);
  });

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await sim?.close();
    await slow?.close();
    await tc?.close();
    if (natsUrl) await dropNatsNamespace(natsUrl, prefix);
  });

  it('runs a backup through an agent of the default pool; the outcome is recorded once, inside the final transaction', async () => {
    const deviceId = await makeDevice(tc, org, { port: sim.port, password: 'sw0rdfish-secret' });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'backup', deviceId, params: { methods: ['cli'] }, deadlineMs: 30_000 }]);
    const [outcome] = await tc.services.jobs.wait([jobId], 40_000);
    expect(outcome).toMatchObject({
      jobId,
      kind: 'backup',
      orgId: org.orgId,
      deviceId,
      status: 'succeeded',
      error: null,
      agentId: mainAgent.runtime ? expect.any(String) : null,
    });
    const result = outcome.result as any;
    expect(result.results).toHaveLength(1);
    expect(result.results[0]).toMatchObject({ method: 'cli', config: { format: 'cli', via: 'ssh' } });
    expect(normalizeConfig(result.results[0].config.text)).toBe(sim.config());
    expect(result.transcript).toContain('show running-config');
    expect(result.transcript).not.toContain('sw0rdfish-secret');
    expect(calls.get(jobId)).toBe(1);
    expect(seenInTransaction).toContain(`${jobId}:succeeded`);
    const row = await jobRow(tc, jobId);
    expect(row).toMatchObject({ status: 'succeeded', attempt: 1, pool: 'default', transport: transport === 'nats' ? 'nats' : 'inprocess' });
    // The agent shows up online with its load and counts.
    const agents = await until('the agent to be online', async () => {
      const res = await tc.request('GET', '/api/agents', { token: org.token });
      const a = res.body.agents.find((x: any) => x.name === 'main');
      return a?.status === 'online' && a.completed_jobs >= 1 ? a : null;
    });
    expect(agents).toMatchObject({ version: 'test', max_jobs: 8, capabilities: expect.arrayContaining(['job:backup', 'transport:ssh']) });
    expect(tc.logs()).not.toContain('sw0rdfish-secret');
  });

  it(
    'reports jobs still running after 2 s as started and streams their log lines before the results, many jobs to an event',
    { timeout: 90_000 },
    async () => {
      // Over NATS, the agent's events as they cross the wire: progress events are counted.
      const nc = natsUrl ? await connect({ servers: natsUrl }) : null;
      const progressEvents: string[] = [];
      nc?.subscribe(resultsWildcard(prefix), {
        callback: (_err, msg) => {
          const text = msg.string();
          if (text.includes('"type":"progress"')) progressEvents.push(text);
        },
      });
      try {
        // A few seconds of output each, all at once.
        const devices = await Promise.all([1, 2, 3].map(() => makeDevice(tc, org, { port: slow.port, password: 'sw0rdfish-secret' })));
        const jobIds = await tc.services.jobs.submit(
          devices.map((deviceId) => ({ orgId: org.orgId, kind: 'backup' as const, deviceId, params: { methods: ['cli'] }, deadlineMs: 60_000 })),
        );
        // While they run: each reported started, with the log lines sent with it (not with the result).
        await until(
          'the jobs to run with their first log lines stored',
          async () => {
            for (const jobId of jobIds) {
              if ((await jobRow(tc, jobId)).status !== 'running') return false;
              const lines = await tc.db('job_logs').where({ job_id: jobId });
              if (!JSON.stringify(lines).includes('connecting to')) return false;
            }
            return true;
          },
          30_000,
        );
        const outcomes = await tc.services.jobs.wait(jobIds, 60_000);
        for (const [i, outcome] of outcomes.entries()) {
          expect(outcome.status).toBe('succeeded');
          const lines = (await tc.db('job_logs').where({ job_id: jobIds[i] })).map((l: any) => l.text);
          expect(lines.filter((t: string) => t.startsWith('connecting to'))).toHaveLength(1); // each line once
          // Sent with the result of a job that succeeded, an info line is not kept (only its warnings and errors would be).
          expect(lines.filter((t: string) => t.startsWith('cli: fetched')).length).toBeLessThanOrEqual(1);
        }
        if (nc) {
          // Three jobs reported started in the same event, not one event per job and kind.
          const first = progressEvents.find((e) => jobIds.every((id) => e.includes(`"job_id":"${id}"`)));
          expect(first, `progress events: ${progressEvents.length}`).toBeDefined();
          expect(progressEvents.length).toBeLessThan(jobIds.length * 2);
        }
      } finally {
        await nc?.close();
      }
    },
  );

  it("backs up by method: cli over SSH, structured over the profile's NETCONF or gNMI, each reported on its own", async () => {
    const nc = await startNetconfDevice({ username: 'admin', password: 'sw0rdfish-secret' });
    const gn = await startGnmiTarget({ username: 'admin', password: 'sw0rdfish-secret' });
    try {
      const viaNetconf = await makeDevice(tc, org, {
        profile_id: await makeProfile(tc, org, {
          ssh_port: sim.port,
          netconf_port: nc.port,
          automation_transport: 'netconf',
          password: 'sw0rdfish-secret',
        }),
      });
      const viaGnmi = await makeDevice(tc, org, {
        profile_id: await makeProfile(tc, org, {
          ssh_port: sim.port,
          gnmi_port: gn.port,
          automation_transport: 'gnmi',
          password: 'sw0rdfish-secret',
        }),
      });
      const none = await makeDevice(tc, org, { port: sim.port, password: 'sw0rdfish-secret' });
      const ids = await tc.services.jobs.submit([
        { orgId: org.orgId, kind: 'backup', deviceId: viaNetconf, params: { methods: ['cli', 'structured'] }, deadlineMs: 30_000 },
        { orgId: org.orgId, kind: 'backup', deviceId: viaGnmi, params: { methods: ['structured'] }, deadlineMs: 30_000 },
        { orgId: org.orgId, kind: 'backup', deviceId: none, params: { methods: ['structured'] }, deadlineMs: 30_000 },
      ]);
      const [both, gnmi, missing] = await tc.services.jobs.wait(ids, 40_000);
      expect(both.status).toBe('succeeded');
      expect((both.result as any).results).toEqual([
        expect.objectContaining({ method: 'cli', config: expect.objectContaining({ via: 'ssh', format: 'cli' }) }),
        expect.objectContaining({ method: 'structured', config: expect.objectContaining({ via: 'netconf', format: 'xml' }) }),
      ]);
      expect(gnmi.status).toBe('succeeded');
      expect((gnmi.result as any).results).toEqual([
        expect.objectContaining({ method: 'structured', config: expect.objectContaining({ via: 'gnmi', format: 'json' }) }),
      ]);
      expect(missing.status).toBe('failed');
      expect(missing.error).toMatch(/automation_transport/);
      for (const o of [both, gnmi, missing]) expect(JSON.stringify(o.result)).not.toContain('sw0rdfish-secret');
    } finally {
      await nc.close();
      await gn.close();
    }
  });

  it('answers test_credential with ok and with the reason a login failed', async () => {
    const good = await makeDevice(tc, org, { port: sim.port, password: 'sw0rdfish-secret' });
    const bad = await makeDevice(tc, org, { port: sim.port, password: 'wrong-password' });
    const ids = await tc.services.jobs.submit([
      { orgId: org.orgId, kind: 'test_credential', deviceId: good, params: {}, deadlineMs: 30_000 },
      { orgId: org.orgId, kind: 'test_credential', deviceId: bad, params: {}, deadlineMs: 30_000 },
    ]);
    const [ok, failed] = await tc.services.jobs.wait(ids, 40_000);
    expect(ok).toMatchObject({ status: 'succeeded', result: { ok: true } });
    expect(failed).toMatchObject({ status: 'failed', result: { ok: false, error_cause: 'auth' } });
    expect(failed.error).toMatch(/auth/i);
    expect(calls.get(ids[0])).toBe(1);
    expect(calls.get(ids[1])).toBe(1);
  });

  it('fails the jobs of a site with no online agent after their deadline, naming the site; a site without agents uses the default pool', async () => {
    const lonely = await makeSite(tc, org, `Branch ${transport}`);
    await enrollAgent(tc, org, { name: `sleeper-${transport}`, site_id: lonely.id }); // enrolled, never started
    const staffless = await makeSite(tc, org);
    const inLonely = await makeDevice(tc, org, { port: sim.port, site_id: lonely.id, password: 'sw0rdfish-secret' });
    const inStaffless = await makeDevice(tc, org, { port: sim.port, site_id: staffless.id, password: 'sw0rdfish-secret' });
    const ids = await tc.services.jobs.submit([
      { orgId: org.orgId, kind: 'test_credential', deviceId: inLonely, params: {}, deadlineMs: 1_500 },
      { orgId: org.orgId, kind: 'test_credential', deviceId: inStaffless, params: {}, deadlineMs: 30_000 },
    ]);
    const [stranded, served] = await tc.services.jobs.wait(ids, 40_000);
    expect(stranded.status).toBe('failed');
    expect(stranded.error).toContain(`site "Branch ${transport}"`);
    expect(stranded.error).toMatch(/No agent .* is online/);
    expect(calls.get(stranded.jobId)).toBe(1);
    expect(served.status).toBe('succeeded');
    expect(await jobRow(tc, ids[1])).toMatchObject({ pool: 'default', site_id: staffless.id });
    // Site health shows the failure.
    const health = await tc.request('GET', `/api/sites/${lonely.id}/health`, { token: org.token });
    expect(health.body).toMatchObject({ status: 'down', devices: { total: 1, unreachable: 1 } });
  });

  it('never runs two jobs on one device at the same time, even with two agents in the pool', async () => {
    const site = await makeSite(tc, org);
    const counting = countingDrivers();
    for (const name of ['pair-a', 'pair-b']) {
      const { identity } = await enrollAgent(tc, org, { name: `${name}-${transport}`, site_id: site.id });
      const agent = await startAgent(tc, identity, { natsUrl, drivers: counting.drivers, concurrency: 4 });
      stops.push(agent.stop);
    }
    const profile = await makeProfile(tc, org, { ssh_port: sim.port, password: 'sw0rdfish-secret' });
    const devices = [];
    for (let i = 0; i < 3; i++) devices.push(await makeDevice(tc, org, { profile_id: profile, site_id: site.id }));
    const specs = devices.flatMap((deviceId) =>
      Array.from({ length: 4 }, () => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId, params: {}, deadlineMs: 60_000 })),
    );
    const ids = await tc.services.jobs.submit(specs);
    const outcomes = await tc.services.jobs.wait(ids, 70_000);
    expect(outcomes.map((o) => o.status)).toEqual(ids.map(() => 'succeeded'));
    // All three devices share one simulator, so count by device id from the job rows instead.
    const rows = await tc.db('jobs').whereIn('id', ids).select('device_id', 'started_at', 'finished_at', 'agent_id');
    for (const deviceId of devices) {
      const spans = rows.filter((r) => r.device_id === deviceId).sort((a, b) => a.finished_at - b.finished_at);
      for (let i = 1; i < spans.length; i++) expect(spans[i].started_at.getTime()).toBeGreaterThanOrEqual(spans[i - 1].finished_at.getTime());
    }
    expect(new Set(rows.map((r) => r.agent_id)).size).toBeGreaterThanOrEqual(1);
  });

  it('never opens two sessions to one device at once (counted at the driver)', async () => {
    const site = await makeSite(tc, org);
    const counting = countingDrivers();
    for (const name of ['duo-a', 'duo-b']) {
      const { identity } = await enrollAgent(tc, org, { name: `${name}-${transport}`, site_id: site.id });
      const agent = await startAgent(tc, identity, { natsUrl, drivers: counting.drivers, concurrency: 4 });
      stops.push(agent.stop);
    }
    const deviceId = await makeDevice(tc, org, { port: slow.port, site_id: site.id, password: 'sw0rdfish-secret' });
    const other = await makeDevice(tc, org, { port: sim.port, site_id: site.id, password: 'sw0rdfish-secret' });
    const ids = await tc.services.jobs.submit([
      ...Array.from({ length: 3 }, () => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId, params: {}, deadlineMs: 60_000 })),
      ...Array.from({ length: 3 }, () => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId: other, params: {}, deadlineMs: 60_000 })),
    ]);
    const outcomes = await tc.services.jobs.wait(ids, 70_000);
    expect(outcomes.every((o) => o.status === 'succeeded')).toBe(true);
    expect(counting.stats.maxPerDevice).toBe(1);
    expect(counting.stats.maxTotal).toBeGreaterThanOrEqual(1);
  });

  it('refuses a revoked agent at once: its result is dropped and the job goes to another agent', { timeout: 90_000 }, async () => {
    const site = await makeSite(tc, org);
    let revokedReason = '';
    const doomed = await enrollAgent(tc, org, { name: `doomed-${transport}`, site_id: site.id });
    const heir = await enrollAgent(tc, org, { name: `heir-${transport}`, site_id: site.id }); // started later
    const agent = await startAgent(tc, doomed.identity, { natsUrl, onRevoked: (r) => (revokedReason = r) });
    stops.push(agent.stop);
    const deviceId = await makeDevice(tc, org, { port: slow.port, site_id: site.id, password: 'sw0rdfish-secret' });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'backup', deviceId, params: { methods: ['cli'] }, deadlineMs: 60_000 }]);
    await until('the doomed agent to start the job', async () => (await jobRow(tc, jobId)).status === 'running');
    expect((await jobRow(tc, jobId)).agent_id).toBe(doomed.identity.agent_id);
    expect((await tc.request('DELETE', `/api/agents/${doomed.identity.agent_id}`, { token: org.token })).status).toBe(204);
    // Its heartbeat is answered with "revoked".
    await until('the agent to hear it is revoked', () => revokedReason !== '', 10_000);
    // Its result is refused; the job is sent again, sealed for the site's remaining agent only.
    await until('the job to be sent again', async () => (await jobRow(tc, jobId)).attempt === 2, 30_000);
    expect(calls.get(jobId)).toBeUndefined();
    expect((await jobRow(tc, jobId)).status).toBe('dispatched');
    const heirAgent = await startAgent(tc, heir.identity, { natsUrl });
    stops.push(heirAgent.stop);
    const [outcome] = await tc.services.jobs.wait([jobId], 60_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: heir.identity.agent_id });
    expect(calls.get(jobId)).toBe(1);
    const revoked = await tc.db('agents').where({ id: doomed.identity.agent_id }).first();
    expect(revoked.completed_jobs).toBe(0);
    expect(tc.logs()).toMatch(/refused an agent event/);
  });

  it('re-seals a job for an agent that joined the pool after the job was sent', async () => {
    const site = await makeSite(tc, org);
    await enrollAgent(tc, org, { name: `first-${transport}`, site_id: site.id }); // never runs
    const deviceId = await makeDevice(tc, org, { port: sim.port, site_id: site.id, password: 'sw0rdfish-secret' });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 60_000 }]);
    await until('the job to be dispatched', async () => (await jobRow(tc, jobId)).status === 'dispatched');
    const late = await enrollAgent(tc, org, { name: `late-${transport}`, site_id: site.id });
    const agent = await startAgent(tc, late.identity, { natsUrl });
    stops.push(agent.stop);
    const [outcome] = await tc.services.jobs.wait([jobId], 60_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: late.identity.agent_id });
    expect((await jobRow(tc, jobId)).attempt).toBe(2);
  });

  /** A succeeded test_credential result for the job's first attempt, signed by `agent` as agents send it. */
  const resultOf = async (agent: Awaited<ReturnType<typeof enrollAgent>>, jobId: string, message: string) => {
    const { sign } = await importAgentPrivateKey(agent.identity.private_jwk);
    const at = new Date().toISOString();
    const event = {
      v: PROTOCOL_VERSION,
      type: 'results',
      agent_id: agent.identity.agent_id,
      results: [
        {
          job_id: jobId,
          attempt: 1,
          status: 'succeeded',
          error: null,
          result: { ok: true, message, transports: [] },
          started_at: at,
          finished_at: at,
          logs: [],
          host_key: null,
          gnmi_cert: null,
        },
      ],
    };
    return signJsonDetached(event, sign, AGENT_SIGN_ALG, agent.identity.agent_id);
  };

  /** How often the controller logged `line` so far. */
  const logged = (line: string) => tc.logs().split(line).length - 1;

  /**
   * Submits a test_credential job for `deviceId` while the test holds the dispatch lock, so that
   * the job reads queued at attempt 0 as it does to an agent quicker than the dispatch pass's
   * commit; sends the agent event `eventFor(jobId)` then, waits until the controller puts it off,
   * and lets the pass commit. Answers the job's id.
   */
  async function sendBeforeDispatchCommits(deviceId: string, eventFor: (jobId: string) => Promise<string>, holdMs = 0): Promise<string> {
    const early = "an agent event came before its jobs' dispatch committed";
    const before = logged(early);
    const hold = await tc.db.transaction();
    let jobId: string;
    let sent: Promise<void> | undefined;
    try {
      await hold.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [DISPATCH_LOCK]);
      [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 60_000 }]);
      // Not awaited: in process, a publish resolves once its event is taken, which is after the commit.
      sent = mainAgent.link.publish(await eventFor(jobId), `early-${jobId}`);
      await until('the early event to be put off', () => logged(early) > before);
      expect(await jobRow(tc, jobId)).toMatchObject({ status: 'queued', attempt: 0 });
      await new Promise((r) => setTimeout(r, holdMs));
    } finally {
      await hold.commit();
    }
    await sent;
    return jobId;
  }

  it("applies a rejection that came before its job's dispatch committed, once it has", async () => {
    const site = await makeSite(tc, org);
    const member = await enrollAgent(tc, org, { name: `early-${transport}`, site_id: site.id }); // never runs
    const deviceId = await makeDevice(tc, org, { port: sim.port, site_id: site.id, password: 'sw0rdfish-secret' });
    const { sign } = await importAgentPrivateKey(member.identity.private_jwk);
    const jobId = await sendBeforeDispatchCommits(deviceId, (id) => {
      const rejection = {
        v: PROTOCOL_VERSION,
        type: 'rejected',
        agent_id: member.identity.agent_id,
        jobs: [{ job_id: id, attempt: 1 }],
        reason: 'not_recipient',
      };
      return signJsonDetached(rejection, sign, AGENT_SIGN_ALG, member.identity.agent_id);
    });
    // Sent at attempt 1 once the pass commits; the rejection, read again, has it sealed and sent once more.
    await until('the job to be sent again', async () => (await jobRow(tc, jobId)).attempt === 2);
    expect((await jobRow(tc, jobId)).status).toBe('dispatched');
  });

  it("holds a result that came before its job's dispatch committed, then takes it only from the job's pool", async () => {
    const site = await makeSite(tc, org);
    const member = await enrollAgent(tc, org, { name: `held-member-${transport}`, site_id: site.id }); // never runs
    const elsewhere = await makeSite(tc, org);
    const stranger = await enrollAgent(tc, org, { name: `held-stranger-${transport}`, site_id: elsewhere.id }); // never runs
    const deviceId = await makeDevice(tc, org, { port: sim.port, site_id: site.id, password: 'sw0rdfish-secret' });
    // Before its dispatch commits the job's pool is not known yet: an agent of another site of the
    // organization answers for it as if it had been sent there.
    const refused = "refused an event from an agent outside the job's pool";
    const before = logged(refused);
    const jobId = await sendBeforeDispatchCommits(deviceId, (id) => resultOf(stranger, id, 'forged by another site'));
    // Read again once the pass has committed: the job went to the site's pool, so the other site's agent is refused.
    await until('the result to be refused', () => logged(refused) > before);
    expect(await jobRow(tc, jobId)).toMatchObject({ status: 'dispatched', attempt: 1 });
    // The site's own agent is heard.
    await mainAgent.link.publish(await resultOf(member, jobId, 'from the site'), `held-member-${jobId}`);
    const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: member.identity.agent_id, result: { message: 'from the site' } });
  });

  it("keeps a result whose job's dispatch takes long to commit (6 s), and records it once it has", async () => {
    const site = await makeSite(tc, org);
    const member = await enrollAgent(tc, org, { name: `slow-pass-${transport}`, site_id: site.id }); // never runs
    const deviceId = await makeDevice(tc, org, { port: sim.port, site_id: site.id, password: 'sw0rdfish-secret' });
    // Held by a count of reads (25 × 200 ms), it was dropped after 5 s: its job waited for its deadline.
    const jobId = await sendBeforeDispatchCommits(deviceId, (id) => resultOf(member, id, 'after a slow pass'), 6_000);
    const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: member.identity.agent_id, result: { message: 'after a slow pass' } });
  }, 40_000);

  it('refuses events from unknown agents and forged signatures', async () => {
    const site = await makeSite(tc, org);
    const member = await enrollAgent(tc, org, { name: `member-${transport}`, site_id: site.id }); // never runs
    const deviceId = await makeDevice(tc, org, { port: sim.port, site_id: site.id, password: 'sw0rdfish-secret' });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 60_000 }]);
    await until('the job to be dispatched', async () => (await jobRow(tc, jobId)).status === 'dispatched');
    const stranger = await generateAgentKeys();
    const { sign } = await importAgentPrivateKey(stranger.privateJwk);
    const result = (agentId: string) => ({
      v: PROTOCOL_VERSION,
      type: 'results',
      agent_id: agentId,
      results: [
        {
          job_id: jobId,
          attempt: 1,
          status: 'succeeded',
          error: null,
          result: { ok: true, message: 'forged' },
          started_at: new Date().toISOString(),
          finished_at: new Date().toISOString(),
          logs: [],
          host_key: null,
          gnmi_cert: null,
        },
      ],
    });
    const unknownId = randomUUID();
    // Sent through a real agent's link, as anyone with NATS access could.
    await mainAgent.link.publish(await signJson(result(unknownId), sign, AGENT_SIGN_ALG, unknownId), `forged-1-${jobId}`);
    await mainAgent.link.publish(
      await signJson(result(member.identity.agent_id), sign, AGENT_SIGN_ALG, member.identity.agent_id),
      `forged-2-${jobId}`,
    );
    // The same in the detached form agents send, and a genuine detached event whose body was changed on the way.
    await mainAgent.link.publish(await signJsonDetached(result(unknownId), sign, AGENT_SIGN_ALG, unknownId), `forged-3-${jobId}`);
    await mainAgent.link.publish(
      await signJsonDetached(result(member.identity.agent_id), sign, AGENT_SIGN_ALG, member.identity.agent_id),
      `forged-4-${jobId}`,
    );
    const memberSign = (await importAgentPrivateKey(member.identity.private_jwk)).sign;
    const genuine = await signJsonDetached(
      {
        ...result(member.identity.agent_id),
        results: [{ ...result(member.identity.agent_id).results[0], result: { ok: true, message: 'genuine', transports: [] } }],
      },
      memberSign,
      AGENT_SIGN_ALG,
      member.identity.agent_id,
    );
    await mainAgent.link.publish(genuine.replace('"genuine"', '"altered"'), `forged-5-${jobId}`);
    await until(
      'the forgeries to be refused',
      () => (tc.logs().match(new RegExp(`unknown agent ${unknownId}|bad signature claiming to be agent member-${transport}`, 'g')) ?? []).length >= 5,
    );
    expect((await jobRow(tc, jobId)).status).toBe('dispatched');
    expect(calls.get(jobId)).toBeUndefined();
  });

  it("checks what it is given: unknown devices, other organizations' devices, unknown kinds, wait timeouts", async () => {
    const other = await tc.createOrgUser(['org_admin']);
    const foreign = await makeDevice(tc, other, { port: sim.port });
    await expect(
      tc.services.jobs.submit([{ orgId: org.orgId, kind: 'backup', deviceId: foreign, params: { methods: ['cli'] } }]),
    ).rejects.toMatchObject({ code: 'DEVICE_NOT_FOUND' });
    await expect(
      tc.services.jobs.submit([{ orgId: org.orgId, kind: 'backup', deviceId: randomUUID(), params: { methods: ['cli'] } }]),
    ).rejects.toMatchObject({ code: 'DEVICE_NOT_FOUND' });
    // One missing device refuses the whole submission: its organization's own device gets no job either, and the first missing one is named.
    const own = await makeDevice(tc, org, { port: sim.port });
    const missing = randomUUID();
    await expect(
      tc.services.jobs.submit([
        { orgId: org.orgId, kind: 'backup', deviceId: own, params: { methods: ['cli'] } },
        { orgId: org.orgId, kind: 'backup', deviceId: missing, params: { methods: ['cli'] } },
        { orgId: org.orgId, kind: 'backup', deviceId: foreign, params: { methods: ['cli'] } },
      ]),
    ).rejects.toMatchObject({ code: 'DEVICE_NOT_FOUND', message: `Device ${missing} not found` });
    expect(Number((await tc.db('jobs').where({ device_id: own }).count('* as n').first())!.n)).toBe(0);
    await expect(tc.services.jobs.submit([{ orgId: org.orgId, kind: 'nope', deviceId: foreign, params: {} } as never])).rejects.toMatchObject({
      code: 'JOB_KIND_UNKNOWN',
    });
    expect(await tc.services.jobs.submit([])).toEqual([]);
    const site = await makeSite(tc, other);
    await enrollAgent(tc, other, { site_id: site.id });
    const waiting = await makeDevice(tc, other, { port: sim.port, site_id: site.id });
    const [jobId] = await tc.services.jobs.submit([
      { orgId: other.orgId, kind: 'backup', deviceId: waiting, params: { methods: ['cli'] }, deadlineMs: 60_000 },
    ]);
    await expect(tc.services.jobs.wait([jobId], 300)).rejects.toMatchObject({ code: 'JOBS_WAIT_TIMEOUT' });
  });
});
