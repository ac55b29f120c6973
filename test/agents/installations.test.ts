/**
 * Two installations on one NATS server (the shared test server, no auth): each takes its NATS
 * subject and stream namespace from its own database, so neither takes the other's jobs or
 * answers the other's heartbeats.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAgentKeys } from '../../shared/src/jobs/crypto';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, makeDevice, startAgent, until, type Org } from './helpers';

interface Installation {
  tc: TestController;
  org: Org;
  agentId: string;
  prefix: string;
  agent: Awaited<ReturnType<typeof startAgent>>;
}

let sim: SimSshDevice;
const installations: Installation[] = [];

async function install(): Promise<Installation> {
  // No natsPrefix: the installation's own, from its database.
  const tc = await startTestController({ settings: { 'agents.heartbeat_seconds': 1 }, config: { natsUrl: SHARED_NATS } });
  const org = await tc.createOrgUser(['org_admin']);
  const { identity } = await enrollAgent(tc, org);
  const agent = await startAgent(tc, identity, { natsUrl: SHARED_NATS });
  return { tc, org, agentId: identity.agent_id, prefix: identity.nats.prefix, agent };
}

beforeAll(async () => {
  sim = await startSshDevice({ hostname: 'two-installs' });
  installations.push(await install(), await install());
}, 120_000);

afterAll(async () => {
  for (const i of installations) {
    await i.agent.stop();
    await i.tc.close();
    await dropNatsNamespace(SHARED_NATS, i.prefix);
  }
  await sim?.close();
});

describe('installations sharing a NATS server', () => {
  it('each has its own namespace, kept across restarts', async () => {
    const [a, b] = installations;
    expect(a.prefix).toMatch(/^sb_[0-9a-f]{10}$/);
    expect(b.prefix).toMatch(/^sb_[0-9a-f]{10}$/);
    expect(a.prefix).not.toBe(b.prefix);
    const row = await a.tc.db('installation').first('nats_prefix');
    expect(row.nats_prefix).toBe(a.prefix);
  });

  it('without operator mode an agent may enroll without a NATS key, but not with a malformed one', async () => {
    const { tc, org } = installations[0];
    const created = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'keyless', site_id: null } });
    const body = { token: created.body.enrollment_token, public_key: (await generateAgentKeys()).publicJwk, version: 'test', capabilities: [] };
    const bad = await tc.request('POST', '/api/agents/enroll', { body: { ...body, nats_public_key: 'not-a-key' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('AGENT_NATS_KEY_INVALID');
    const ok = await tc.request('POST', '/api/agents/enroll', { body });
    expect(ok.status).toBe(200);
    expect(ok.body.nats.user_jwt).toBeUndefined();
  });

  it("runs each installation's jobs on its own agent, and each sees only its own agent beat", async () => {
    for (const i of installations) {
      const deviceId = await makeDevice(i.tc, i.org, { port: sim.port });
      const [jobId] = await i.tc.services.jobs.submit([{ orgId: i.org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 60_000 }]);
      const [outcome] = await i.tc.services.jobs.wait([jobId], 90_000);
      expect(outcome).toMatchObject({ status: 'succeeded', agentId: i.agentId });
    }
    for (const [mine, other] of [installations, [...installations].reverse()]) {
      const agents = await until('its agent online', async () => {
        const res = await mine.tc.request('GET', '/api/agents', { token: mine.org.token });
        return res.body.agents.some((x: any) => x.id === mine.agentId && x.status === 'online') && res.body.agents;
      });
      expect(agents.map((x: any) => x.id)).not.toContain(other.agentId);
      // The other installation's agent never reached this one's heartbeat subject.
      expect(await mine.tc.db('agents').where({ id: other.agentId }).first()).toBeUndefined();
    }
  });
});
