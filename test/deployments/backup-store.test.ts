/**
 * The controller's side of a deploy job's pre-deployment backup (PreDeploymentBackups, reached
 * through DeploymentRunner.storeBackup once an agent's backup_store request checked out): the
 * first backup of the job is stored before anything changes and every later attempt is answered
 * with that one; requests for another organization, another agent, a stale attempt, a malformed body
 * or a job that ended are refused, storing nothing. No agent runs: the test moves the job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeploymentRunner } from '../../controller/src/deployments/runner';
import { PROTOCOL_VERSION } from '../../shared/src/jobs/messages';
import { startTestController, type TestController } from '../helpers/controller';
import type { Org } from '../agents/helpers';
import { api, until } from './helpers';

let c: TestController;
let org: Org;
let runner: DeploymentRunner;
let deviceId: string;
let deploymentId: string;
let jobId: string;
const AGENT = '11111111-1111-4111-8111-111111111111';

beforeAll(async () => {
  c = await startTestController({ config: { deployments: { sweepIntervalMs: 3_600_000, staleMs: 3_600_000 } } });
  org = await c.createOrgUser(['org_admin']);
  runner = c.app.services.deployments!.runner;
  const profile = await api(
    c,
    org.token,
    'POST',
    '/api/profiles',
    { name: 'store', username: 'admin', password: 'admin', gnmi_port: 1, automation_transport: 'gnmi' },
    201,
  );
  deviceId = (
    await api(c, org.token, 'POST', '/api/devices', { name: 'store-1', host: '127.0.0.1', device_type: 'vendor_eos', profile_id: profile.id }, 201)
  ).id;
  const tpl = await api(
    c,
    org.token,
    'POST',
    '/api/config/templates',
    { name: 'hostname', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/system/config', source: '{"hostname": "{{ hostname }}"}' },
    201,
  );
  const stack = await api(
    c,
    org.token,
    'POST',
    '/api/config/stacks',
    { name: 'base', services: [{ template_id: tpl.id, order: 0, variables: { hostname: 'h' } }] },
    201,
  );
  deploymentId = (
    await api(c, org.token, 'POST', '/api/config/deployments', { stack_id: stack.id, name: 'store', target_devices: [{ device_id: deviceId }] }, 201)
  ).id;
  jobId = await until(
    'the deploy job',
    async () => ((await c.db('deployment_devices').where({ deployment_id: deploymentId }).first('job_id'))?.job_id as string | null) ?? undefined,
    30_000,
    50,
  );
  // As if an agent had taken it.
  await c.db('jobs').where({ id: jobId }).update({ status: 'dispatched', attempt: 1 });
});

afterAll(async () => c?.close());

const request = (text: string, extra: Record<string, unknown> = {}) => ({
  v: PROTOCOL_VERSION,
  type: 'backup_store',
  agent_id: AGENT,
  job_id: jobId,
  attempt: 1,
  at: new Date().toISOString(),
  backup: { text, format: 'json', via: 'gnmi' },
  ...extra,
});
const store = (payload: unknown, agent = { id: AGENT, org_id: org.orgId }) => runner.storeBackup(agent, payload);
const versions = () => c.db('config_versions').where({ device_id: deviceId, source: 'deployment' }).select('id', 'config_text', 'job_id');
const deviceRow = () => c.db('deployment_devices').where({ deployment_id: deploymentId }).first('backup_config_id', 'status');

describe("storing a deploy job's pre-deployment backup", () => {
  it("asks the agent to try again while the job's dispatch has not committed", async () => {
    await c.db('jobs').where({ id: jobId }).update({ status: 'queued', attempt: 0 });
    expect(await store(request('{}'))).toMatchObject({ ok: false, retry: true, error: 'the job is still being dispatched' });
    await c.db('jobs').where({ id: jobId }).update({ status: 'dispatched', attempt: 1 });
    expect(await versions()).toEqual([]);
  });

  it('refuses a malformed request, another agent, another organization and a stale attempt, storing nothing', async () => {
    expect(await store({ ...request('{}'), backup: { text: '{}' } })).toMatchObject({
      ok: false,
      backup: null,
      error: expect.stringContaining('malformed backup store request'),
    });
    expect(await store(request('{}'), { id: '22222222-2222-4222-8222-222222222222', org_id: org.orgId })).toMatchObject({
      ok: false,
      error: 'agent_id does not match the signer',
    });
    const other = await c.createOrgUser(['org_admin']);
    expect(await store(request('{}'), { id: AGENT, org_id: other.orgId })).toMatchObject({ ok: false, error: 'the deploy job is not open' });
    expect(await store(request('{}', { attempt: 2 }))).toMatchObject({ ok: false, error: "attempt 2 is not the job's current attempt (1)" });
    expect(await versions()).toEqual([]);
    expect((await deviceRow()).backup_config_id).toBeNull();
  });

  it('stores the first backup and answers every later attempt with it', async () => {
    // The agent keeps its copy: the kept backup being its own, the reply says `same` instead of sending it back.
    const first = await store(request('{"hostname": "before"}'));
    expect(first).toEqual({
      v: PROTOCOL_VERSION,
      type: 'backup_stored',
      job_id: jobId,
      ok: true,
      backup: null,
      error: null,
      same: true,
    });
    const stored = await versions();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ config_text: '{"hostname": "before"}', job_id: jobId });
    expect(await deviceRow()).toEqual({ backup_config_id: stored[0].id, status: 'running' });
    const logs = await api(c, org.token, 'GET', `/api/config/deployments/${deploymentId}/logs`);
    expect(logs.logs.map((l: any) => l.message)).toContain('store-1: pre-deployment backup stored as config version 1');

    // A redelivered attempt read the half-changed device: it gets the first backup back.
    const again = await store(request('{"hostname": "half changed"}'));
    expect(again).toMatchObject({ ok: true, backup: { text: '{"hostname": "before"}' } });
    expect(again).not.toHaveProperty('same');
    // Its own again: `same`.
    expect(await store(request('{"hostname": "before"}'))).toMatchObject({ ok: true, backup: null, same: true });
    expect(await versions()).toHaveLength(1);
  });

  it('stores the requests of the moment together: one backup per job, a repeated request answered with the first', async () => {
    const profile = await api(
      c,
      org.token,
      'POST',
      '/api/profiles',
      { name: 'store-many', username: 'admin', password: 'admin', gnmi_port: 1, automation_transport: 'gnmi' },
      201,
    );
    const ids: string[] = [];
    for (const name of ['store-a', 'store-b'])
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
        { stack_id: stackId, name: 'store-many', target_devices: ids.map((device_id) => ({ device_id })) },
        201,
      )
    ).id;
    const jobs = await until(
      'both deploy jobs',
      async () => {
        const rows = await c.db('deployment_devices').where({ deployment_id: run }).orderBy('position').select('job_id');
        return rows.every((r) => r.job_id) ? rows.map((r) => r.job_id as string) : undefined;
      },
      30_000,
      50,
    );
    await c.db('jobs').whereIn('id', jobs).update({ status: 'running', attempt: 1 });
    const ask = (job: string, text: string) => store({ ...request(text), job_id: job });
    const [a, b, again] = await Promise.all([ask(jobs[0], '{"a": 1}'), ask(jobs[1], '{"b": 1}'), ask(jobs[0], '{"a": "half"}')]);
    // Each job keeps its first backup: the askers whose backup was kept hear `same`; the repeat gets the first.
    expect([a.same, b.same, again.backup?.text]).toEqual([true, true, '{"a": 1}']);
    const stored = await c
      .db('config_versions')
      .whereIn('device_id', ids)
      .where({ source: 'deployment' })
      .orderBy('config_text')
      .pluck('config_text');
    expect(stored).toEqual(['{"a": 1}', '{"b": 1}']);
    const rows = await c.db('deployment_devices').where({ deployment_id: run }).whereNotNull('backup_config_id');
    expect(rows).toHaveLength(2);
  });

  it('refuses once the job has ended', async () => {
    await c.db('jobs').where({ id: jobId }).update({ status: 'failed', finished_at: new Date() });
    expect(await store(request('{"hostname": "late"}'))).toMatchObject({ ok: false, error: 'the deploy job is not open' });
    expect(await versions()).toHaveLength(1);
  });
});
