/**
 * The controller's side of a deploy job's pre-deployment backup (PreDeploymentBackups, reached
 * through DeploymentRunner.storeBackup once an agent's backup_store request checked out): the
 * first backup of the job is stored before anything changes and every later attempt is answered
 * with that one; requests for another organization or pool, another agent, a stale attempt, a malformed body
 * or a job that ended are refused, storing nothing. No agent runs: the test moves the job. The
 * signers are enrolled agents: the statement checks that a request's signer is still what it was
 * verified against (not revoked, same key), and a request is answered again from a fresh read when not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeploymentRunner } from '../../controller/src/deployments/runner';
import { SignerChanged, type RequestSigner } from '../../controller/src/jobs/types';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  generateAgentKeys,
  importAgentPrivateKey,
  importControllerPublicKey,
  signJsonDetached,
  verifyJson,
} from '../../shared/src/jobs/crypto';
import type { InProcessHub } from '../../shared/src/jobs/inprocess';
import { BACKUP_STORE_MAX, PROTOCOL_VERSION } from '../../shared/src/jobs/messages';
import { startTestController, type TestController } from '../helpers/controller';
import type { Org } from '../agents/helpers';
import { api, enrolledSigner, hostnameStack, until } from './helpers';
import { testDatabaseKind } from '../helpers/pglite';
import { backupVersion } from '../../controller/src/deployments/backup-store';

let c: TestController;
let org: Org;
let runner: DeploymentRunner;
let deviceId: string;
let deploymentId: string;
let jobId: string;
/** The agent whose requests the tests store, as the controller verified it. */
let signer: RequestSigner;

beforeAll(async () => {
  // No sweep dispatches the jobs a test puts back in the queue: the test alone moves them.
  c = await startTestController({
    config: { deployments: { sweepIntervalMs: 3_600_000, staleMs: 3_600_000 }, jobs: { sweepIntervalMs: 3_600_000 } },
  });
  org = await c.createOrgUser(['org_admin']);
  ({ signer } = await enrolledSigner(c, org));
  runner = c.app.services.deployments!.runner;
  await hostnameStack(c, org.token, 'base', 'h');
  const first = await deploymentOf(['store-1']);
  [deploymentId, deviceId, jobId] = [first.id, first.ids[0], first.jobs[0]];
  // As if an agent had taken it.
  await c.db('jobs').where({ id: jobId }).update({ status: 'dispatched', attempt: 1 });
});

afterAll(async () => c?.close());

/** One job's backup in a request (by default the first job's, attempt 1). */
const entry = (text: string, extra: Record<string, unknown> = {}) => ({
  job_id: jobId,
  attempt: 1,
  backup: { text, format: 'json', via: 'gnmi' },
  ...extra,
});
/** A backup_store request of an agent (by default the signer) carrying these jobs' backups. */
const requestOf = (agentId: string, ...backups: unknown[]) => ({
  v: PROTOCOL_VERSION,
  type: 'backup_store',
  agent_id: agentId,
  at: new Date().toISOString(),
  backups,
});
const request = (...backups: unknown[]) => requestOf(signer.id, ...backups);
const storeAll = (payload: unknown, agent = signer) => runner.storeBackup(agent, payload);
/** One job's backup alone in a request: its answer. */
async function store(backup: unknown, agent = signer) {
  const reply = await storeAll(request(backup), agent);
  expect(reply).toMatchObject({ v: PROTOCOL_VERSION, type: 'backup_stored', error: null });
  expect(reply.answers).toHaveLength(1);
  return reply.answers[0];
}
const versions = () => c.db('config_versions').where({ device_id: deviceId, source: 'deployment' }).select('id', 'config_text', 'job_id');
const deviceRow = () => c.db('deployment_devices').where({ deployment_id: deploymentId }).first('backup_config_id', 'status');

/** A deployment of the first stack to new devices (names), once its deploy jobs exist: its id, device and job ids in position order. */
async function deploymentOf(names: string[]): Promise<{ id: string; ids: string[]; jobs: string[] }> {
  const profile = await api(
    c,
    org.token,
    'POST',
    '/api/profiles',
    { name: `store-${names[0]}`, username: 'admin', password: 'admin', gnmi_port: 1, automation_transport: 'gnmi' },
    201,
  );
  const ids: string[] = [];
  for (const name of names)
    ids.push(
      (await api(c, org.token, 'POST', '/api/devices', { name, host: '127.0.0.1', device_type: 'vendor_eos', profile_id: profile.id }, 201)).id,
    );
  const stackId = (await api(c, org.token, 'GET', '/api/config/stacks'))[0].id;
  const run = (
    await api(
      c,
      org.token,
      'POST',
      '/api/config/deployments',
      { stack_id: stackId, name: names[0], target_devices: ids.map((device_id) => ({ device_id })) },
      201,
    )
  ).id;
  const jobs = await until(
    'the deploy jobs',
    async () => {
      const rows = await c.db('deployment_devices').where({ deployment_id: run }).orderBy('position').select('job_id');
      return rows.every((r) => r.job_id) ? rows.map((r) => r.job_id as string) : undefined;
    },
    30_000,
    50,
  );
  // The pass that dispatches them runs once their transaction committed: let it end before the test moves the jobs.
  await c.app.services.jobEngine.kick();
  return { id: run, ids, jobs };
}

const storedTexts = (ids: string[]) =>
  c.db('config_versions').whereIn('device_id', ids).where({ source: 'deployment' }).orderBy('config_text').pluck('config_text');

describe("storing a deploy job's pre-deployment backup", () => {
  it("asks the agent to try again while the job's dispatch has not committed", async () => {
    await c.db('jobs').where({ id: jobId }).update({ status: 'queued', attempt: 0 });
    expect(await store(entry('{}'))).toMatchObject({ job_id: jobId, ok: false, retry: true, error: 'the job is still being dispatched' });
    await c.db('jobs').where({ id: jobId }).update({ status: 'dispatched', attempt: 1 });
    expect(await versions()).toEqual([]);
  });

  it('refuses a malformed request and another agent as a whole, another organization or pool and a stale attempt per job, storing nothing', async () => {
    const refused = (error: unknown) => ({ v: PROTOCOL_VERSION, type: 'backup_stored', error, answers: [] });
    expect(await storeAll(request({ ...entry('{}'), backup: { text: '{}' } }))).toEqual(
      refused(expect.stringContaining('malformed backup store request')),
    );
    // At least one backup, at most BACKUP_STORE_MAX.
    expect(await storeAll(request())).toEqual(refused(expect.stringContaining('malformed backup store request')));
    expect(await storeAll(request(...Array.from({ length: BACKUP_STORE_MAX + 1 }, () => entry('{}'))))).toEqual(
      refused(expect.stringContaining('malformed backup store request')),
    );
    expect(await storeAll(request(entry('{}')), { ...signer, id: '22222222-2222-4222-8222-222222222222' })).toEqual(
      refused('agent_id does not match the signer'),
    );
    const other = (await enrolledSigner(c, await c.createOrgUser(['org_admin']))).signer;
    expect((await storeAll(requestOf(other.id, entry('{}')), other)).answers).toMatchObject([{ ok: false, error: 'the deploy job is not open' }]);
    // An agent of the same organization in another pool (a site's): its agents never get the job.
    const site = await api(c, org.token, 'POST', '/api/sites', { name: 'elsewhere' }, 201);
    const sited = (await enrolledSigner(c, org)).signer;
    await c.db('agents').where({ id: sited.id }).update({ site_id: site.id });
    expect((await storeAll(requestOf(sited.id, entry('{}')), sited)).answers).toMatchObject([{ ok: false, error: 'the deploy job is not open' }]);
    expect(await store(entry('{}', { attempt: 2 }))).toMatchObject({ ok: false, error: "attempt 2 is not the job's current attempt (1)" });
    expect(await versions()).toEqual([]);
    expect((await deviceRow()).backup_config_id).toBeNull();
  });

  it('stores the first backup and answers every later attempt with it', async () => {
    // The agent keeps its copy: the kept backup being its own, the reply says `same` instead of sending it back.
    const first = await storeAll(request(entry('{"hostname": "before"}')));
    expect(first).toEqual({
      v: PROTOCOL_VERSION,
      type: 'backup_stored',
      error: null,
      answers: [{ job_id: jobId, ok: true, backup: null, error: null, same: true }],
    });
    const stored = await versions();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ config_text: '{"hostname": "before"}', job_id: jobId });
    expect(await deviceRow()).toEqual({ backup_config_id: stored[0].id, status: 'running' });
    expect(await c.db('config_versions').where({ id: stored[0].id }).first('version', 'source', 'pulled_via')).toEqual({
      version: 1,
      source: 'deployment',
      pulled_via: 'gnmi',
    });

    // A redelivered attempt read the half-changed device: it gets the first backup back.
    const again = await store(entry('{"hostname": "half changed"}'));
    expect(again).toMatchObject({ ok: true, backup: { text: '{"hostname": "before"}' } });
    expect(again).not.toHaveProperty('same');
    // Its own again: `same`.
    expect(await store(entry('{"hostname": "before"}'))).toMatchObject({ ok: true, backup: null, same: true });
    expect(await versions()).toHaveLength(1);
  });

  it('stores the requests of the moment together: one backup per job, a repeated request answered with the first', async () => {
    const { ids, jobs } = await deploymentOf(['store-a', 'store-b']);
    await c.db('jobs').whereIn('id', jobs).update({ status: 'running', attempt: 1 });
    const ask = (job: string, text: string) => store(entry(text, { job_id: job }));
    const [a, b, again] = await Promise.all([ask(jobs[0], '{"a": 1}'), ask(jobs[1], '{"b": 1}'), ask(jobs[0], '{"a": "half"}')]);
    // Each job keeps its first backup: the askers whose backup was kept hear `same`; the repeat gets the first.
    expect([a.same, b.same, again.backup?.text]).toEqual([true, true, '{"a": 1}']);
    expect(await storedTexts(ids)).toEqual(['{"a": 1}', '{"b": 1}']);
    const rows = await c.db('deployment_devices').whereIn('device_id', ids).whereNotNull('backup_config_id');
    expect(rows).toHaveLength(2);
  });

  it("answers each job of one request on its own: stored, kept, same, not yet, refused; each job's backup stored once", async () => {
    const { ids, jobs } = await deploymentOf(['many-new', 'many-kept', 'many-queued', 'many-stale']);
    await c.db('jobs').whereIn('id', [jobs[0], jobs[1], jobs[3]]).update({ status: 'running', attempt: 1 });
    await c.db('jobs').where({ id: jobs[2] }).update({ status: 'queued', attempt: 0 });
    // The second job's first attempt stored its backup before.
    expect(await store(entry('{"kept": 1}', { job_id: jobs[1] }))).toMatchObject({ ok: true, same: true });
    const backup = (job: number, text: string, extra: Record<string, unknown> = {}) => entry(text, { job_id: jobs[job], ...extra });
    const reply = await storeAll(
      request(
        backup(0, '{"new": 1}'),
        backup(1, '{"kept": "half changed"}'),
        backup(1, '{"kept": 1}'),
        backup(2, '{"queued": 1}', { attempt: 1 }),
        backup(3, '{"stale": 1}', { attempt: 2 }),
      ),
    );
    expect(reply.error).toBeNull();
    expect(reply.answers).toEqual([
      { job_id: jobs[0], ok: true, backup: null, error: null, same: true },
      { job_id: jobs[1], ok: true, backup: { text: '{"kept": 1}', format: 'json', via: 'gnmi' }, error: null },
      { job_id: jobs[1], ok: true, backup: null, error: null, same: true },
      { job_id: jobs[2], ok: false, backup: null, error: 'the job is still being dispatched', retry: true },
      { job_id: jobs[3], ok: false, backup: null, error: "attempt 2 is not the job's current attempt (1)" },
    ]);
    expect(await storedTexts(ids)).toEqual(['{"kept": 1}', '{"new": 1}']);
    // The one asked to try again is stored once its dispatch committed.
    await c.db('jobs').where({ id: jobs[2] }).update({ status: 'dispatched', attempt: 1 });
    expect(await store(backup(2, '{"queued": 1}', { attempt: 1 }))).toMatchObject({ ok: true, same: true });
    expect(await storedTexts(ids)).toEqual(['{"kept": 1}', '{"new": 1}', '{"queued": 1}']);
    // Each stored backup is its device's kept one.
    const kept = await c
      .db('deployment_devices as d')
      .join('config_versions as v', 'v.id', 'd.backup_config_id')
      .whereIn('d.device_id', ids)
      .orderBy('v.config_text')
      .select('d.device_name', 'v.config_text', 'v.version');
    expect(kept).toEqual([
      { device_name: 'many-kept', config_text: '{"kept": 1}', version: 1 },
      { device_name: 'many-new', config_text: '{"new": 1}', version: 1 },
      { device_name: 'many-queued', config_text: '{"queued": 1}', version: 1 },
    ]);
  });

  it("refuses a job that is no longer its device's current one, and a kept backup that is gone, storing nothing", async () => {
    const { ids, jobs } = await deploymentOf(['gone-moved', 'gone-pruned']);
    await c.db('jobs').whereIn('id', jobs).update({ status: 'running', attempt: 1 });
    // The first device went on to another job (say, the deployment was retried); the second one's
    // kept backup was deleted since it was stored.
    await c.db('deployment_devices').where({ device_id: ids[0] }).update({ job_id: jobId });
    const missing = '33333333-3333-4333-8333-333333333333';
    await c.db('deployment_devices').where({ device_id: ids[1] }).update({ backup_config_id: missing });
    const reply = await storeAll(request(entry('{"a": 1}', { job_id: jobs[0] }), entry('{"b": 1}', { job_id: jobs[1] })));
    expect(reply.answers).toEqual([
      { job_id: jobs[0], ok: false, backup: null, error: "the job is no longer the device's current deploy job" },
      { job_id: jobs[1], ok: false, backup: null, error: `the pre-deployment backup (config version ${missing}) no longer exists` },
    ]);
    expect(await storedTexts(ids)).toEqual([]);
  });

  // Two controllers answering the same job's backup at once (a request asked again after its
  // timeout reaches another replica): the one that waits on the device row's lock must answer with
  // the backup the other kept, never call it gone. PostgreSQL only: PGlite has one connection, so
  // no second transaction can hold the row (the suite's PGlite run leaves this case out).
  if (testDatabaseKind() === 'postgres')
    it('answers a request that waited on the device row with the backup another transaction kept meanwhile', async () => {
      const { ids, jobs } = await deploymentOf(['raced']);
      await c.db('jobs').whereIn('id', jobs).update({ status: 'running', attempt: 1 });
      const other = await c.db.transaction();
      let waiting: Promise<unknown> | undefined;
      try {
        // The other replica: it locked the row, stored its backup and set it on the device, not committed yet.
        await other('deployment_devices').where({ device_id: ids[0] }).forNoKeyUpdate().first('device_id');
        const [kept] = await c.app.services.configs.store.insertVersions(other, [
          backupVersion({ orgId: org.orgId, deviceId: ids[0], jobId: jobs[0] }, { text: '{"first": true}', format: 'json', via: 'gnmi' }),
        ]);
        await other('deployment_devices').where({ device_id: ids[0] }).update({ backup_config_id: kept.id });
        waiting = storeAll(request(entry('{"second": true}', { job_id: jobs[0] })));
        await until('the request to wait on the row lock', async () => {
          const [{ n }] = (await c.db.raw('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted')).rows;
          return n > 0 || undefined;
        });
        await other.commit();
      } catch (err) {
        await other.rollback();
        throw err;
      }
      expect((await waiting) as unknown).toMatchObject({
        answers: [{ job_id: jobs[0], ok: true, error: null, backup: { text: '{"first": true}' } }],
      });
      expect(await storedTexts(ids)).toEqual(['{"first": true}']);
    });

  it('refuses once the job has ended', async () => {
    await c.db('jobs').where({ id: jobId }).update({ status: 'failed', finished_at: new Date() });
    expect(await store(entry('{"hostname": "late"}'))).toMatchObject({ ok: false, error: 'the deploy job is not open' });
    expect(await versions()).toHaveLength(1);
  });
});

describe('a signer revoked or given another key since the controller read it', () => {
  it('stores nothing and throws SignerChanged', async () => {
    const { jobs, ids } = await deploymentOf(['signer-key', 'signer-revoked']);
    await c.db('jobs').whereIn('id', jobs).update({ status: 'running', attempt: 1 });
    const otherKey = (await generateAgentKeys()).publicJwk;
    await expect(storeAll(request(entry('{"a": 1}', { job_id: jobs[0] })), { ...signer, public_key: otherKey })).rejects.toBeInstanceOf(
      SignerChanged,
    );
    const doomed = (await enrolledSigner(c, org)).signer;
    await c.db('agents').where({ id: doomed.id }).update({ revoked_at: new Date() });
    await expect(storeAll(requestOf(doomed.id, entry('{"b": 1}', { job_id: jobs[1] })), doomed)).rejects.toThrow(
      `agent ${doomed.id} was revoked or given another key`,
    );
    expect(await storedTexts(ids)).toEqual([]);
  });

  it('answers from a fresh read through the request path: a revoked agent hears it is revoked, nothing stored', async () => {
    const { jobs, ids } = await deploymentOf(['path-before', 'path-after']);
    await c.db('jobs').whereIn('id', jobs).update({ status: 'running', attempt: 1 });
    const { identity: agent } = await enrolledSigner(c, org);
    const link = (c.services.jobEngine.transport as InProcessHub).link(agent.org_id, agent.pool);
    const { sign } = await importAgentPrivateKey(agent.private_jwk);
    const controllerKey = importControllerPublicKey(agent.controller_key);
    const ask = async (job: string, text: string) => {
      const token = await signJsonDetached(requestOf(agent.agent_id, entry(text, { job_id: job })), sign, AGENT_SIGN_ALG, agent.agent_id);
      const reply = await link.request(token, 10_000);
      return verifyJson(reply!, controllerKey, CONTROLLER_SIGN_ALG);
    };
    // Answered: the controller now holds the agent's row as read for this request.
    expect(await ask(jobs[0], '{"before": 1}')).toMatchObject({ type: 'backup_stored', answers: [{ ok: true, same: true }] });
    expect((await c.request('DELETE', `/api/agents/${agent.agent_id}`, { token: org.token })).status).toBe(204);
    expect(await ask(jobs[1], '{"after": 1}')).toMatchObject({ ok: false, revoked: true, error: expect.stringContaining('is revoked') });
    expect(await storedTexts(ids)).toEqual(['{"before": 1}']);
  });
});
