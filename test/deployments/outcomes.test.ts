/**
 * The runner's set-based recorder (the job engine's handleMany for deploy and rollback): many
 * outcomes of one deployment recorded in one transaction leave exactly the rows that recording
 * them one by one leaves. Two deployments of the same stack on two sets of devices get the same
 * outcomes (backups, a backup with no config, failures, a stale and a repeated outcome, pushes,
 * an atomic restore); one is recorded together, the other one outcome per transaction. No agent
 * runs, so the jobs stay queued and the outcomes are the test's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { JobOutcome } from '../../controller/src/jobs/types';
import type { DeploymentRunner } from '../../controller/src/deployments/runner';
import { startTestController, type TestController } from '../helpers/controller';
import type { Org } from '../agents/helpers';
import { api, until } from './helpers';

const N = 4;
let c: TestController;
let org: Org;
let runner: DeploymentRunner;

interface Run {
  id: string;
  devices: { id: string; name: string }[];
}

beforeAll(async () => {
  // The sweep stays out of the way: the test moves the deployments on itself.
  c = await startTestController({ config: { deployments: { sweepIntervalMs: 3_600_000, staleMs: 3_600_000 } } });
  org = await c.createOrgUser(['org_admin']);
  runner = c.app.services.deployments!.runner;
});

afterAll(async () => {
  await c?.close();
});

async function start(prefix: string, stackId: string): Promise<Run> {
  const devices = [];
  for (let i = 0; i < N; i++) {
    const profile = await api(
      c,
      org.token,
      'POST',
      '/api/profiles',
      { name: `p-${prefix}${i}`, username: 'admin', password: 'admin', gnmi_port: 1, automation_transport: 'gnmi' },
      201,
    );
    devices.push(
      await api(
        c,
        org.token,
        'POST',
        '/api/devices',
        { name: `${prefix}${i}`, host: '127.0.0.1', device_type: 'vendor_eos', profile_id: profile.id },
        201,
      ),
    );
  }
  const created = await api(
    c,
    org.token,
    'POST',
    '/api/config/deployments',
    { stack_id: stackId, name: prefix, target_devices: devices.map((d) => ({ device_id: d.id })) },
    201,
  );
  return { id: created.id, devices: devices.map((d) => ({ id: d.id, name: d.name })) };
}

/** The device rows once every device in a running state has its job id. */
async function running(run: Run, statuses: string[]) {
  return until(
    `deployment ${run.id}'s devices to run`,
    async () => {
      const rows = await c.db('deployment_devices').where({ deployment_id: run.id }).orderBy('position').select('*');
      return rows.every((r) => statuses.includes(r.status) && r.job_id) ? rows : undefined;
    },
    30_000,
    50,
  );
}

function outcome(
  run: Run,
  row: { device_id: string; job_id: string },
  kind: JobOutcome['kind'],
  status: 'succeeded' | 'failed',
  result: Record<string, unknown> | null,
  error: string | null = null,
): JobOutcome {
  return {
    jobId: row.job_id,
    kind,
    orgId: org.orgId,
    deviceId: row.device_id,
    groupId: run.id,
    status,
    error,
    result,
    agentId: null,
    startedAt: new Date(),
    finishedAt: new Date(),
  } as JobOutcome;
}

/** Agent log lines of the jobs, as the engine stores them before the outcome. */
async function agentLines(rows: { job_id: string }[]) {
  await c
    .db('job_logs')
    .insert(
      rows.flatMap((r, i) =>
        [1, 2].map((n) => ({ job_id: r.job_id, attempt: 1, level: 'info', text: `agent line ${n} of device ${i}`, at: new Date() })),
      ),
    );
}

async function record(together: boolean, outcomes: JobOutcome[]) {
  if (together) await c.db.transaction((trx) => runner.onOutcomes(outcomes, trx));
  else for (const o of outcomes) await c.db.transaction((trx) => runner.onOutcome(o, trx));
}

/** What a deployment's rows say, with its own ids and names replaced by positions. */
async function picture(run: Run) {
  const name = (text: string) => run.devices.reduce((t, d, i) => t.replaceAll(d.name, `device${i}`), text);
  const position = (id: string | null) => (id === null ? null : run.devices.findIndex((d) => d.id === id));
  const devices = await c
    .db('deployment_devices as d')
    .leftJoin('config_versions as v', 'v.id', 'd.backup_config_id')
    .leftJoin('jobs as j', 'j.id', 'd.job_id')
    .where('d.deployment_id', run.id)
    .orderBy('d.position')
    .select(
      'd.device_id',
      'd.status',
      'd.changed',
      'd.error_message',
      'j.kind as job_kind',
      'j.params as job_params',
      'v.version',
      'v.config_text',
      'v.source',
      'v.pulled_via',
      'v.method',
      'v.job_id as version_job',
      'd.job_id',
    );
  const logs = await c.db('deployment_logs').where({ deployment_id: run.id }).orderBy('id').select('device_id', 'level', 'message', 'org_id');
  const deployment = await c.db('deployments').where({ id: run.id }).first('status', 'succeeded_count', 'failed_count', 'error_message');
  return {
    deployment: { ...deployment, error_message: deployment.error_message && name(deployment.error_message) },
    devices: devices.map((d) => ({
      ...d,
      device_id: position(d.device_id),
      error_message: d.error_message && name(d.error_message),
      job_id: d.job_id !== null,
      version_job: d.version_job === null ? null : d.version_job === d.job_id ? 'current' : 'earlier',
      job_params: d.job_params && { phase: d.job_params.phase, backup: d.job_params.backup?.text ?? null, purpose: d.job_params.purpose ?? null },
    })),
    logs: logs.map((l) => ({ ...l, device_id: position(l.device_id), message: name(l.message), org: l.org_id === org.orgId })),
  };
}

type Row = { device_id: string; job_id: string };

/**
 * One step on both deployments: after a pump (claiming queued devices), the devices in `status`
 * (the others are in one of `settled`) get the agent's log lines and the outcomes `build` makes,
 * recorded together on the first deployment and one by one on the second. Answers both pictures.
 */
async function step(runs: Run[], status: string, settled: string[], build: (run: Run, rows: Row[]) => JobOutcome[]) {
  for (const [k, run] of runs.entries()) {
    await runner.pump(run.id);
    const rows = (await running(run, [status, ...settled])).filter((r) => r.status === status);
    await agentLines(rows);
    await record(k === 0, build(run, rows));
  }
  return Promise.all(runs.map(picture));
}

it('records many outcomes of a deployment in one transaction exactly as one by one', async () => {
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
    { name: 'base', atomic: true, services: [{ template_id: tpl.id, order: 0, variables: { hostname: 'h' } }] },
    201,
  );
  const runs = [await start('together', stack.id), await start('alone', stack.id)];

  // Backups: two stored, one with no config, one failed; a stale outcome (another job) and a repeat.
  const backup = (i: number) => ({ phase: 'backup', backup: { text: `{"hostname": "before ${i}"}`, format: 'json', via: 'gnmi' } });
  const afterBackups = await step(runs, 'running', [], (run, rows) => {
    const first = outcome(run, rows[0], 'deploy', 'succeeded', backup(0));
    return [
      { ...outcome(run, rows[3], 'deploy', 'failed', null, 'stale'), jobId: rows[2].job_id },
      first,
      outcome(run, rows[1], 'deploy', 'succeeded', backup(1)),
      outcome(run, rows[2], 'deploy', 'succeeded', { phase: 'backup', backup: null }),
      outcome(run, rows[3], 'deploy', 'failed', null, 'connect failed: connection refused'),
      { ...first, result: backup(9) } as JobOutcome,
    ];
  });
  expect(afterBackups[0].devices.map((d) => d.status)).toEqual(['queued', 'queued', 'failed', 'failed']);
  expect(afterBackups[0].devices[0]).toMatchObject({
    config_text: '{"hostname": "before 0"}',
    source: 'deployment',
    pulled_via: 'gnmi',
    method: 'structured',
    job_id: false,
  });
  expect(afterBackups[0].logs.slice(-12).map((l) => `${l.device_id} ${l.level} ${l.message}`)).toEqual([
    '0 info agent line 1 of device 0',
    '0 info agent line 2 of device 0',
    '0 info device0: pre-deployment backup stored as config version 1',
    '1 info agent line 1 of device 1',
    '1 info agent line 2 of device 1',
    '1 info device1: pre-deployment backup stored as config version 1',
    '2 info agent line 1 of device 2',
    '2 info agent line 2 of device 2',
    '2 error device2: The backup job returned no configuration; nothing was pushed',
    '3 info agent line 1 of device 3',
    '3 info agent line 2 of device 3',
    '3 error device3: connect failed: connection refused',
  ]);
  expect(afterBackups[1]).toEqual(afterBackups[0]);

  // Pushes carrying the stored backups: one deployed, one failed; the atomic stack then restores the first.
  const afterPushes = await step(runs, 'running', ['failed'], (run, rows) => [
    outcome(run, rows[0], 'deploy', 'succeeded', { phase: 'push', applied: true, verified: true, changed: true }),
    outcome(run, rows[1], 'deploy', 'failed', null, 'push failed: ABORTED'),
  ]);
  expect(afterPushes[0].devices.slice(0, 2).map((d) => [d.status, d.job_params?.backup])).toEqual([
    ['completed', '{"hostname": "before 0"}'],
    ['failed', '{"hostname": "before 1"}'],
  ]);
  expect(afterPushes[1]).toEqual(afterPushes[0]);

  await step(runs, 'restoring', ['failed'], (run, [row]) => {
    const restored = outcome(run, row, 'rollback', 'succeeded', {});
    return [restored, { ...restored, status: 'failed', error: 'repeated' }];
  });
  for (const run of runs) await runner.pump(run.id);
  const afterRestore = await Promise.all(runs.map(picture));
  expect(afterRestore[0].deployment).toMatchObject({ status: 'failed', succeeded_count: 0, failed_count: 4 });
  expect(afterRestore[0].devices.map((d) => d.status)).toEqual(['restored', 'failed', 'failed', 'failed']);
  expect(afterRestore[0].devices[0].error_message).toMatch(
    /^Restored from its pre-deployment backup because the stack is atomic and device1, device2, device3 failed/,
  );
  expect(afterRestore[1]).toEqual(afterRestore[0]);
});
