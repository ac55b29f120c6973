/**
 * `npm run agent` as real processes (node + tsx, agent/src/main.ts) against a real controller
 * over the machine's NATS (namespaced by a prefix): settings, enrollment, identity across
 * restarts, heartbeats and offline detection, and an agent SIGKILLed in the middle of a job.
 */
import { statSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobOutcome } from '../../controller/src/jobs/types';
import { startTestController, type TestController } from '../helpers/controller';
import { spawnAgent, type Proc } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, dropNatsNamespace, jobRow, makeDevice, makeSite, natsPrefix, until, type Org } from './helpers';

const prefix = natsPrefix();
let tc: TestController;
let org: Org;
let slow: SimSshDevice;
const procs: Proc[] = [];
const calls = new Map<string, number>();

beforeAll(async () => {
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200, ackWaitMs: 2_000 } },
  });
  org = await tc.createOrgUser(['org_admin']);
  // Output trickles, so a backup reliably takes a few seconds: long enough to kill an agent in the middle.
  slow = await startSshDevice({ hostname: 'slow-edge', password: 'pw-slow-1', faults: { slowOutput: { chunkBytes: 96, intervalMs: 40 } } });
  tc.services.jobs.onOutcome('backup', async (outcome: JobOutcome) => {
    calls.set(outcome.jobId, (calls.get(outcome.jobId) ?? 0) + 1);
  });
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await slow?.close();
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

async function newAgent(name: string, siteId: string | null = null): Promise<{ id: string; token: string }> {
  const res = await tc.request('POST', '/api/agents', { token: org.token, body: { name, site_id: siteId } });
  expect(res.status).toBe(201);
  return { id: res.body.id, token: res.body.enrollment_token };
}

function agentEnv(stateDir: string, token?: string, extra: Record<string, string> = {}) {
  return {
    NATS_URL: SHARED_NATS,
    SWITCHBOARD_URL: tc.url,
    SWITCHBOARD_AGENT_STATE_DIR: stateDir,
    SWITCHBOARD_AGENT_CONCURRENCY: '4',
    ...(token ? { SWITCHBOARD_ENROLL_TOKEN: token } : {}),
    ...extra,
  };
}

function run(env: Record<string, string | undefined>): Proc {
  const p = spawnAgent(env);
  procs.push(p);
  return p;
}

async function agentView(id: string): Promise<any> {
  const res = await tc.request('GET', '/api/agents', { token: org.token });
  return res.body.agents.find((a: any) => a.id === id);
}

const stateDir = () => mkdtempSync(join(tmpdir(), 'sb-agent-state-'));

describe('agent settings', () => {
  it('stops at start with one line naming a missing or bad setting', { timeout: 120_000 }, async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ SWITCHBOARD_URL: 'http://127.0.0.1:1', SWITCHBOARD_ENROLL_TOKEN: 'x' }, /^switchboard-agent: NATS_URL is required/],
      [{ NATS_URL: 'http://nope', SWITCHBOARD_ENROLL_TOKEN: 'x' }, /^switchboard-agent: NATS_URL must use nats:/],
      [{ NATS_URL: SHARED_NATS, SWITCHBOARD_AGENT_CONCURRENCY: 'lots' }, /^switchboard-agent: SWITCHBOARD_AGENT_CONCURRENCY must be a whole number/],
      [{ NATS_URL: SHARED_NATS, SWITCHBOARD_AGENT_CONCURRENCY: '0' }, /^switchboard-agent: SWITCHBOARD_AGENT_CONCURRENCY must be a whole number/],
      [{ NATS_URL: SHARED_NATS, SWITCHBOARD_ENROLL_TOKEN: 'x' }, /^switchboard-agent: SWITCHBOARD_URL is required to enroll/],
      [{ NATS_URL: SHARED_NATS, SWITCHBOARD_URL: 'ftp://x' }, /^switchboard-agent: SWITCHBOARD_URL must use http: or https:/],
      [{ NATS_URL: SHARED_NATS, SWITCHBOARD_URL: tc.url }, /^switchboard-agent: SWITCHBOARD_ENROLL_TOKEN is required to enroll/],
      [
        { NATS_URL: SHARED_NATS, SWITCHBOARD_URL: tc.url, SWITCHBOARD_ENROLL_TOKEN: 'sbe_wrong' },
        /^switchboard-agent: SWITCHBOARD_ENROLL_TOKEN was refused: Enrollment token is invalid, expired or already used/,
      ],
    ];
    await Promise.all(
      cases.map(async ([env, expected]) => {
        const p = run({ SWITCHBOARD_AGENT_STATE_DIR: stateDir(), ...env });
        expect(await p.exited).toBe(1);
        const lines = p.output().trim().split('\n');
        expect(lines, p.output()).toHaveLength(1);
        expect(lines[0]).toMatch(expected);
      }),
    );
  });
});

describe('enrollment, identity and heartbeats', () => {
  it('enrolls once, keeps its identity (0600) and reconnects with it after a restart', { timeout: 120_000 }, async () => {
    const { id, token } = await newAgent('proc-1');
    const dir = stateDir();
    const first = run(agentEnv(dir, token));
    const online = await until(
      'the agent to be online',
      async () => {
        const a = await agentView(id);
        return a?.status === 'online' ? a : null;
      },
      60_000,
    );
    expect(online).toMatchObject({
      enrolled: true,
      version: '0.1.0',
      max_jobs: 4,
      capabilities: expect.arrayContaining(['job:backup', 'job:test_credential', 'transport:ssh', 'transport:netconf', 'transport:gnmi']),
    });
    expect(statSync(join(dir, 'identity.json')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o077).toBe(0);

    // The token was spent: another process cannot enroll with it.
    const thief = run(agentEnv(stateDir(), token));
    expect(await thief.exited).toBe(1);
    expect(thief.output()).toMatch(/SWITCHBOARD_ENROLL_TOKEN was refused/);

    // SIGTERM stops it cleanly; a restart without a token comes back as the same agent.
    expect(await first.kill('SIGTERM')).toBe(0);
    const seenBefore = new Date((await agentView(id)).last_seen_at).getTime();
    run(agentEnv(dir));
    await until('the restarted agent to heartbeat', async () => new Date((await agentView(id))?.last_seen_at).getTime() > seenBefore);
    const list = await tc.request('GET', '/api/agents', { token: org.token });
    expect(list.body.agents.filter((a: any) => a.name === 'proc-1')).toHaveLength(1);
  });

  it('turns offline after missed heartbeats when killed, and a revoked agent stops with one line', { timeout: 120_000 }, async () => {
    const { id, token } = await newAgent('proc-2');
    const p = run(agentEnv(stateDir(), token));
    await until('online', async () => (await agentView(id))?.status === 'online');
    await p.kill('SIGKILL');
    await until('offline after missed beats', async () => (await agentView(id))?.status === 'offline', 20_000);

    const other = await newAgent('proc-3');
    const q = run(agentEnv(stateDir(), other.token));
    await until('online', async () => (await agentView(other.id))?.status === 'online');
    expect((await tc.request('DELETE', `/api/agents/${other.id}`, { token: org.token })).status).toBe(204);
    expect(await q.exited).toBe(3);
    expect(
      q
        .output()
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('switchboard-agent:')),
    ).toEqual([expect.stringMatching(/^switchboard-agent: the controller refused this agent \(agent proc-3 is revoked\)/)]);
  });
});

describe('agents killed in the middle of a job', () => {
  it('hands the job of a SIGKILLed agent to another agent of the pool', { timeout: 90_000 }, async () => {
    const site = await makeSite(tc, org, 'Killing Fields');
    const a = await newAgent('pool-a', site.id);
    const b = await newAgent('pool-b', site.id);
    const byId = new Map<string, Proc>([
      [a.id, run(agentEnv(stateDir(), a.token))],
      [b.id, run(agentEnv(stateDir(), b.token))],
    ]);
    await until('both agents online', async () => (await agentView(a.id))?.status === 'online' && (await agentView(b.id))?.status === 'online');
    const deviceId = await makeDevice(tc, org, { port: slow.port, site_id: site.id, password: 'pw-slow-1' });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'backup', deviceId, params: { methods: ['cli'] }, deadlineMs: 60_000 }]);
    const running = await until('an agent to start the job', async () => {
      const row = await jobRow(tc, jobId);
      return row.status === 'running' ? row : null;
    });
    const victim = running.agent_id as string;
    const survivor = victim === a.id ? b.id : a.id;
    await byId.get(victim)!.kill('SIGKILL');

    const [outcome] = await tc.services.jobs.wait([jobId], 60_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: survivor });
    expect(calls.get(jobId)).toBe(1);
    const logs = await tc.db('job_logs').where({ job_id: jobId }).select('agent_id');
    expect(new Set(logs.map((l) => l.agent_id))).toContain(survivor);
  });

  it('fails the job of a SIGKILLed agent with no one to take over after its deadline, with the reason', { timeout: 90_000 }, async () => {
    const site = await makeSite(tc, org, 'Lone Outpost');
    const lone = await newAgent('lone', site.id);
    const p = run(agentEnv(stateDir(), lone.token));
    await until('online', async () => (await agentView(lone.id))?.status === 'online');
    const deviceId = await makeDevice(tc, org, { port: slow.port, site_id: site.id, password: 'pw-slow-1' });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'backup', deviceId, params: { methods: ['cli'] }, deadlineMs: 8_000 }]);
    await until('the agent to start the job', async () => (await jobRow(tc, jobId)).status === 'running');
    await p.kill('SIGKILL');
    const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(
      /^Agent "lone" of site "Lone Outpost" started the job but reported no result within its 8 s deadline; the agent has stopped sending heartbeats$/,
    );
    expect(calls.get(jobId)).toBe(1);
    // Job counts are added up shortly after the outcomes commit.
    await until('the failed job to be counted', async () => (await agentView(lone.id))?.failed_jobs === 1, 10_000);
    expect(await agentView(lone.id)).toMatchObject({ status: 'offline', failed_jobs: 1 });
  });
});
