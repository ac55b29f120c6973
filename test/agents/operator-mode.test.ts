/**
 * NATS operator (JWT) mode on a private nats-server: agents get credentials minted by the
 * controller for exactly their own subjects; everything else is refused by NATS itself; a revoked
 * agent is disconnected and cannot come back; credentials are renewed before they expire.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Events, connect, jwtAuthenticator, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '@nats-io/jwt';
import { generateAgentKeys } from '../../shared/src/jobs/crypto';
import { generateOperator, OPERATOR_FILES } from '../../shared/src/nats/operator';
import { natsNames, poolConsumer, resultsSubject, jobsSubject } from '../../shared/src/nats/subjects';
import { NATS_SEED_FILE } from '../../agent/src/state-dir';
import { jwtTimes } from '../../agent/src/nats-renewal';
import { natsAuthorityOf } from '../../controller/src/platform/nats-authority';
import type { ControllerConfig } from '../../controller/src/config';
import { startTestController, type TestController } from '../helpers/controller';
import { NATS_SERVER, ROOT, startAgentProcess, startNats, stopAll, waitUntil, type AgentProcess, type NatsServer } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { enrollAgent, makeDevice, makeSite, until, type Org } from './helpers';

/** Short enough that the suite sees a renewal, long enough for a slow start under load. */
const LIFETIME_S = 30;

let dir: string;
let nats: NatsServer;
let tc: TestController;
let sim: SimSshDevice;
let org1: Org;
let org2: Org;
let agentA: AgentProcess;
let agentAId: string;
let agentBId: string;
let siteA: string;
const stateDirA = mkdtempSync(join(tmpdir(), 'sb-agent-op-'));

const jwtClaims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
let accountId: string;

const identityOf = (stateDir: string) => JSON.parse(readFileSync(join(stateDir, 'identity.json'), 'utf8'));

/** A raw NATS connection with an agent's credentials (what a compromised agent holds). */
async function connectAs(stateDir: string, inboxPrefix?: string): Promise<{ nc: NatsConnection; violations: string[] }> {
  const identity = identityOf(stateDir);
  const seed = new TextEncoder().encode(readFileSync(join(stateDir, NATS_SEED_FILE), 'utf8').trim());
  const nc = await connect({
    servers: nats.url,
    authenticator: jwtAuthenticator(identity.nats.user_jwt, seed),
    inboxPrefix: inboxPrefix ?? identity.nats.inbox_prefix,
    maxReconnectAttempts: 0,
  });
  const violations: string[] = [];
  void (async () => {
    for await (const s of nc.status()) {
      const ctx = (s as unknown as { permissionContext?: { operation: string; subject: string } }).permissionContext;
      if (s.type === Events.Error && ctx) violations.push(`${ctx.operation} ${ctx.subject}`);
    }
  })();
  return { nc, violations };
}

async function runJob(orgId: string, deviceId: string) {
  const [jobId] = await tc.services.jobs.submit([{ orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 60_000 }]);
  const [outcome] = await tc.services.jobs.wait([jobId], 90_000);
  return outcome;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-nats-op-'));
  accountId = (await generateOperator(dir, { resolverDir: join(dir, 'resolver') })).account;
  nats = await startNats({ config: join(dir, OPERATOR_FILES.serverConfig) });
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1 },
    config: { natsUrl: nats.url, natsOperatorDir: dir, natsJwtLifetimeSeconds: LIFETIME_S },
  });
  org1 = await tc.createOrgUser(['org_admin']);
  org2 = await tc.createOrgUser(['org_admin']);
  siteA = (await makeSite(tc, org1, 'site-a')).id;
  sim = await startSshDevice({ hostname: 'op-sw1' });
  const created = await tc.request('POST', '/api/agents', { token: org1.token, body: { name: 'agent-a', site_id: siteA } });
  agentAId = created.body.id;
  agentA = await startAgentProcess({
    natsUrl: nats.url,
    controllerUrl: tc.url,
    enrollToken: created.body.enrollment_token,
    stateDir: stateDirA,
    concurrency: 4,
  });
  // Another organization's agent, enrolled (its credentials exist) but not running.
  agentBId = (await enrollAgent(tc, org2, { name: 'agent-b' })).identity.agent_id;
}, 180_000);

afterAll(async () => {
  await agentA?.stop(10_000);
  await sim?.close();
  await tc?.close();
  await stopAll();
  rmSync(stateDirA, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('NATS operator mode', () => {
  it("enrolls with the agent's own NATS key, and the job path runs end to end on the credentials it got", async () => {
    const identity = identityOf(stateDirA);
    expect(identity.nats.user_jwt).toMatch(/^eyJ/);
    expect(identity.nats.inbox_prefix).toBe(`_INBOX.${agentAId}`);
    expect(statSync(join(stateDirA, NATS_SEED_FILE)).mode & 0o777).toBe(0o600);
    // The seed never left the agent: the controller only knows the public key the JWT names.
    expect(jwtClaims(identity.nats.user_jwt)).toMatchObject({ sub: expect.stringMatching(/^U[A-Z2-7]{55}$/), iss: accountId });
    expect(readFileSync(join(stateDirA, NATS_SEED_FILE), 'utf8')).toMatch(/^SU/);
    expect(tc.logs()).not.toContain(readFileSync(join(stateDirA, NATS_SEED_FILE), 'utf8').trim());

    const deviceId = await makeDevice(tc, org1, { port: sim.port, site_id: siteA });
    const outcome = await runJob(org1.orgId, deviceId);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: agentAId });
    await waitUntil('agent A online', async () => {
      const res = await tc.request('GET', '/api/agents', { token: org1.token });
      return res.body.agents.find((a: any) => a.id === agentAId)?.status === 'online';
    });
    expect(agentA.output()).not.toMatch(/Permissions Violation/i);
  });

  it("refuses, at NATS, every subject outside the agent's own: inboxes, consumers, other agents and organizations", async () => {
    const names = natsNames(identityOf(stateDirA).nats.prefix);
    const own = poolConsumer(org1.orgId, siteA);
    const otherOrg = poolConsumer(org2.orgId, 'default');
    const { nc, violations } = await connectAs(stateDirA);
    try {
      const refused = async (subject: string) => {
        const err = await nc.request(subject, new TextEncoder().encode('{}'), { timeout: 1_500 }).then(
          () => null,
          (e: Error) => e,
        );
        expect(err, subject).not.toBeNull();
      };
      const consumerConfig = (filter: string) =>
        new TextEncoder().encode(
          JSON.stringify({ stream_name: names.jobsStream, config: { durable_name: own, filter_subject: filter, ack_policy: 'explicit' } }),
        );
      // Re-pointing its pool's consumer at another pool, or making a consumer of its own.
      const repoint = `$JS.API.CONSUMER.CREATE.${names.jobsStream}.${own}`;
      await nc.request(repoint, consumerConfig(jobsSubject(names.prefix, org2.orgId, 'default')), { timeout: 1_500 }).catch(() => null);
      await nc
        .request(`$JS.API.CONSUMER.DURABLE.CREATE.${names.jobsStream}.${own}`, consumerConfig(jobsSubject(names.prefix, org2.orgId, 'default')), {
          timeout: 1_500,
        })
        .catch(() => null);
      await refused(`$JS.API.CONSUMER.CREATE.${names.jobsStream}`);
      // Another organization's queue, another agent's results, the streams themselves.
      await refused(`$JS.API.CONSUMER.MSG.NEXT.${names.jobsStream}.${otherOrg}`);
      await refused(`$JS.API.CONSUMER.INFO.${names.jobsStream}.${otherOrg}`);
      await refused(`$JS.API.STREAM.DELETE.${names.jobsStream}`);
      await refused(`$JS.API.STREAM.PURGE.${names.resultsStream}`);
      nc.publish(resultsSubject(names.prefix, agentBId), new TextEncoder().encode('forged'));
      // Snooping: every inbox, another organization's job subject, everything.
      const subs = [
        nc.subscribe('_INBOX.>'),
        nc.subscribe(`_INBOX.${agentBId}.>`),
        nc.subscribe(jobsSubject(names.prefix, org2.orgId, 'default')),
        nc.subscribe('>'),
      ];
      await nc.flush();
      await waitUntil(
        'NATS to refuse the subscriptions',
        () => violations.filter((v) => v.startsWith('subscri')).length >= subs.length,
        undefined,
        30_000,
      );
      const seen = violations.join('\n');
      for (const subject of [
        repoint,
        `$JS.API.CONSUMER.DURABLE.CREATE.${names.jobsStream}.${own}`,
        `$JS.API.CONSUMER.MSG.NEXT.${names.jobsStream}.${otherOrg}`,
        resultsSubject(names.prefix, agentBId),
        `$JS.API.STREAM.DELETE.${names.jobsStream}`,
      ]) {
        expect(seen).toContain(`publish ${subject}`);
      }
      for (const subject of ['_INBOX.>', `_INBOX.${agentBId}.>`, jobsSubject(names.prefix, org2.orgId, 'default'), '>']) {
        expect(seen).toMatch(new RegExp(`^subscri\\w* ${subject.replace(/[.$>*]/g, '\\$&')}$`, 'm'));
      }
      // The pool's consumer still takes its own pool's subject only.
      const info = JSON.parse(
        new TextDecoder().decode((await nc.request(`$JS.API.CONSUMER.INFO.${names.jobsStream}.${own}`, undefined, { timeout: 5_000 })).data),
      );
      expect(info.config.filter_subject).toBe(jobsSubject(names.prefix, org1.orgId, siteA));
    } finally {
      await nc.close();
    }
    // Another inbox prefix than its own gets no replies at all (its requests time out).
    const wrong = await connectAs(stateDirA, '_INBOX');
    try {
      const err = await wrong.nc.request(`$JS.API.CONSUMER.INFO.${names.jobsStream}.${own}`, undefined, { timeout: 1_500 }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err).not.toBeNull();
    } finally {
      await wrong.nc.close();
    }
  });

  it('refuses an enrollment without a valid NATS key before the token is spent', async () => {
    const created = await tc.request('POST', '/api/agents', { token: org1.token, body: { name: 'agent-c', site_id: null } });
    const body = { token: created.body.enrollment_token, public_key: (await generateAgentKeys()).publicJwk, version: 'test', capabilities: [] };
    for (const natsKey of [undefined, 'UABC', new TextDecoder().decode(createUser().getSeed())]) {
      const res = await tc.request('POST', '/api/agents/enroll', { body: { ...body, ...(natsKey ? { nats_public_key: natsKey } : {}) } });
      expect(res.status, String(natsKey)).toBe(400);
      expect(res.body.code).toBe('AGENT_NATS_KEY_INVALID');
    }
    const key = createUser().getPublicKey();
    const ok = await tc.request('POST', '/api/agents/enroll', { body: { ...body, nats_public_key: key } });
    expect(ok.status).toBe(200);
    expect(jwtClaims(ok.body.nats.user_jwt)).toMatchObject({ sub: key, iss: accountId });
    expect(ok.body.nats.inbox_prefix).toBe(`_INBOX.${ok.body.agent_id}`);
  });

  it("renews the agent's credentials before they expire and keeps taking jobs past the first expiry", { timeout: 150_000 }, async () => {
    const first = identityOf(stateDirA).nats.user_jwt as string;
    const { exp } = jwtTimes(first);
    await waitUntil('the agent to renew its NATS credentials', () => identityOf(stateDirA).nats.user_jwt !== first, agentA, 120_000);
    const renewed = jwtTimes(identityOf(stateDirA).nats.user_jwt);
    expect(renewed.exp).toBeGreaterThan(exp);
    await waitUntil('the first credentials to expire', () => Date.now() > exp * 1000 + 1_000, agentA, 120_000);
    const deviceId = await makeDevice(tc, org1, { port: sim.port, site_id: siteA });
    expect(await runJob(org1.orgId, deviceId)).toMatchObject({ status: 'succeeded', agentId: agentAId });
    expect(agentA.running).toBe(true);
  });

  it('a revocation made while NATS is down reaches NATS once it is back, without a controller restart', { timeout: 90_000 }, async () => {
    const { identity, stateDir } = await enrollAgent(tc, org1, { site_id: siteA });
    await nats.stop();
    try {
      const res = await tc.request('DELETE', `/api/agents/${identity.agent_id}`, { token: org1.token });
      expect(res.status).toBe(204);
    } finally {
      await nats.start();
    }
    // The restarted server holds the account as last pushed, without this revocation, until the controller's retry.
    const refusal = await until(
      "the revoked agent's credentials to be refused",
      async () => {
        const outcome = await connectAs(stateDir).then(
          async ({ nc }) => (await nc.close(), 'connected'),
          (e: Error) => String(e.message ?? e),
        );
        return /authoriz|revoked/i.test(outcome) && outcome;
      },
      60_000,
      500,
    );
    expect(refusal).toMatch(/authoriz|revoked/i);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('revoking an agent disconnects it at NATS and it cannot connect again', async () => {
    const spy = await connectAs(stateDirA);
    const closed = spy.nc.closed();
    const res = await tc.request('DELETE', `/api/agents/${agentAId}`, { token: org1.token });
    expect(res.status).toBe(204);
    const err = await closed;
    expect(String(err?.message ?? err)).toMatch(/revoked|authoriz|authentic/i);
    // The agent process stops, saying why (told by NATS or by the controller's heartbeat reply, whichever comes first).
    expect(await agentA.exited).toBe(3);
    expect(agentA.output()).toMatch(/NATS closed the connection|the controller refused this agent/);
    // Its credentials are refused from now on.
    const again = await connectAs(stateDirA).then(
      () => null,
      (e: Error) => e,
    );
    expect(String(again?.message ?? again)).toMatch(/authoriz|revoked/i);
    // Nor does it get new ones: the controller refuses its signature (revoked), and the restarted controller pushes the list again.
    await tc.restart();
    const after = await connectAs(stateDirA).then(
      () => null,
      (e: Error) => e,
    );
    expect(String(after?.message ?? after)).toMatch(/authoriz|revoked/i);
  });

  it('an enrollment while NATS is down answers 503 and leaves the token usable', async () => {
    const site = (await makeSite(tc, org2, 'site-late')).id;
    const created = await tc.request('POST', '/api/agents', { token: org2.token, body: { name: 'agent-late', site_id: site } });
    const body = {
      token: created.body.enrollment_token,
      public_key: (await generateAgentKeys()).publicJwk,
      nats_public_key: createUser().getPublicKey(),
      version: 'test',
      capabilities: [],
    };
    await nats.stop();
    try {
      const down = await tc.request('POST', '/api/agents/enroll', { body });
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', error: expect.stringMatching(/token is still valid/) });
    } finally {
      await nats.start();
    }
    const again = await until(
      'the controller to reach NATS again',
      async () => {
        const res = await tc.request('POST', '/api/agents/enroll', { body });
        return res.status === 200 && res;
      },
      60_000,
      500,
    );
    expect(again.body.nats.user_jwt).toMatch(/^eyJ/);
  });
});

describe('deploy/nats-server-operator.conf', () => {
  it('passes nats-server -t with the keys `npm run nats:operator` makes, which refuses to overwrite them', () => {
    const root = mkdtempSync(join(tmpdir(), 'sb-natsop-deploy-'));
    try {
      const generate = (dir: string) =>
        spawnSync(process.execPath, ['--import', 'tsx', 'deploy/nats-operator/generate.ts', dir, join(root, 'resolver')], {
          cwd: ROOT,
          encoding: 'utf8',
        });
      const made = generate(join(root, 'operator'));
      expect(made.status, made.stderr).toBe(0);
      expect(made.stdout).toContain('SWITCHBOARD_NATS_OPERATOR_DIR=');
      for (const seed of [
        OPERATOR_FILES.operatorSeed,
        OPERATOR_FILES.operatorSigningSeed,
        OPERATOR_FILES.accountSeed,
        OPERATOR_FILES.systemUserCreds,
      ]) {
        expect(statSync(join(root, 'operator', seed)).mode & 0o777, seed).toBe(0o600);
      }
      const again = generate(join(root, 'operator'));
      expect(again.status).toBe(1);
      expect(again.stderr).toMatch(/already holds an operator set-up/);
      const conf = readFileSync(join(ROOT, 'deploy/nats-server-operator.conf'), 'utf8').replace('/data/jetstream', join(root, 'js'));
      writeFileSync(join(root, 'nats-server.conf'), conf);
      const check = spawnSync(NATS_SERVER, ['-t', '-c', join(root, 'nats-server.conf')], { encoding: 'utf8' });
      expect(check.status, check.stdout + check.stderr).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('operator mode settings', () => {
  const config = (natsUrl: string | null) => ({ natsUrl }) as ControllerConfig;
  const withEnv = (env: Record<string, string>, fn: () => void) => {
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      fn();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  };

  it('is off without SWITCHBOARD_NATS_OPERATOR_DIR, and a bad one stops the controller with one line naming it', () => {
    expect(natsAuthorityOf(config('nats://127.0.0.1:4222'))).toBeNull();
    const missing = join(tmpdir(), 'sb-no-such-operator-dir');
    withEnv({ SWITCHBOARD_NATS_OPERATOR_DIR: missing }, () => {
      expect(() => natsAuthorityOf(config('nats://127.0.0.1:4222'))).toThrow(
        /SWITCHBOARD_NATS_OPERATOR_DIR .* does not exist; create it with `npm run nats:operator/,
      );
      expect(() => natsAuthorityOf(config(null))).toThrow(/SWITCHBOARD_NATS_OPERATOR_DIR needs NATS_URL/);
    });
    const empty = mkdtempSync(join(tmpdir(), 'sb-empty-op-'));
    try {
      withEnv({ SWITCHBOARD_NATS_OPERATOR_DIR: empty }, () => {
        expect(() => natsAuthorityOf(config('nats://127.0.0.1:4222'))).toThrow(/does not hold the files of `npm run nats:operator`/);
      });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    withEnv({ SWITCHBOARD_NATS_OPERATOR_DIR: dir, SWITCHBOARD_NATS_JWT_LIFETIME_SECONDS: '5' }, () => {
      expect(() => natsAuthorityOf(config('nats://127.0.0.1:4222'))).toThrow(/SWITCHBOARD_NATS_JWT_LIFETIME_SECONDS must be a whole number from 10/);
    });
    withEnv({ SWITCHBOARD_NATS_OPERATOR_DIR: dir, SWITCHBOARD_NATS_JWT_LIFETIME_SECONDS: '3600' }, () => {
      expect(natsAuthorityOf(config('nats://127.0.0.1:4222'))).toMatchObject({ accountId, lifetimeSeconds: 3600 });
    });
  });
});
