/**
 * The runner's set-based recorder (the job engine's handleMany for deploy and rollback): many
 * outcomes of one deployment recorded in one transaction leave exactly the rows that recording
 * them one by one leaves. Two deployments of the same stack on two sets of devices get the same
 * outcomes (single-session deploys that stored their pre-deployment backup first, failures, a
 * stale and a repeated outcome, an atomic restore); one is recorded together, the other one
 * outcome per transaction. No agent runs: the test marks the deploy jobs dispatched, stores their
 * backups through the runner's backup_store handler as the agents would, and makes the outcomes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { JobOutcome, RequestSigner } from '../../controller/src/jobs/types';
import type { DeploymentRunner } from '../../controller/src/deployments/runner';
import { PROTOCOL_VERSION } from '../../shared/src/jobs/messages';
import { startTestController, type TestController } from '../helpers/controller';
import type { Org } from '../agents/helpers';
import { api, enrolledSigner, until, hostnameTemplate } from './helpers';

const N = 4;
let c: TestController;
let org: Org;
let runner: DeploymentRunner;
/** The agent whose pre-deployment backups the test stores (no runtime runs it). */
let agent: RequestSigner;

interface Run {
  id: string;
  devices: { id: string; name: string }[];
}

beforeAll(async () => {
  // The sweep stays out of the way: the test moves the deployments on itself.
  c = await startTestController({ config: { deployments: { sweepIntervalMs: 3_600_000, staleMs: 3_600_000 } } });
  org = await c.createOrgUser(['org_admin']);
  ({ signer: agent } = await enrolledSigner(c, org));
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

/**
 * The pre-deployment backup an agent sends before it pushes (backup_store), answered by the
 * controller with the backup it keeps for the job. One at a time, so both deployments log alike.
 */
async function storeBackup(row: Row, text: string) {
  const reply = await runner.storeBackup(agent, {
    v: PROTOCOL_VERSION,
    type: 'backup_store',
    agent_id: agent.id,
    at: new Date().toISOString(),
    backups: [{ job_id: row.job_id, attempt: 1, backup: { text, format: 'json', via: 'gnmi' } }],
  });
  expect(reply).toMatchObject({ error: null, answers: [{ job_id: row.job_id, ok: true, error: null }] });
  // The agent keeps its copy: `same` means the backup kept for the job is the one it sent.
  const [answer] = reply.answers;
  return answer.same ? text : answer.backup?.text;
}

async function record(together: boolean, outcomes: JobOutcome[]) {
  if (together) await c.db.transaction((trx) => runner.onOutcomes(outcomes, trx));
  else for (const o of outcomes) await c.db.transaction((trx) => runner.onOutcome(o, trx));
}

/** What a deployment's rows say, with its own ids and names replaced by positions. */
type Row = { device_id: string; job_id: string };

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
      job_params: d.job_params && {
        keys: Object.keys(d.job_params).sort(),
        backup: d.job_params.backup?.text ?? null,
        purpose: d.job_params.purpose ?? null,
      },
    })),
    logs: logs.map((l) => ({ ...l, device_id: position(l.device_id), message: name(l.message), org: l.org_id === org.orgId })),
  };
}

/**
 * One step on both deployments: after a pump (claiming queued devices), the devices in `status`
 * (the others are in one of `settled`) get the agent's log lines and the outcomes `build` makes,
 * recorded together on the first deployment and one by one on the second. Answers both pictures.
 */
async function step(runs: Run[], status: string, settled: string[], build: (run: Run, rows: Row[]) => JobOutcome[] | Promise<JobOutcome[]>) {
  for (const [k, run] of runs.entries()) {
    await runner.pump(run.id);
    const rows = (await running(run, [status, ...settled])).filter((r) => r.status === status);
    await agentLines(rows);
    await record(k === 0, await build(run, rows));
  }
  return Promise.all(runs.map(picture));
}

it('records many outcomes of a deployment in one transaction exactly as one by one', async () => {
  const tpl = await hostnameTemplate(c, org.token);
  const stack = await api(
    c,
    org.token,
    'POST',
    '/api/config/stacks',
    { name: 'base', atomic: true, services: [{ template_id: tpl.id, order: 0, variables: { hostname: 'h' } }] },
    201,
  );
  const runs = [await start('together', stack.id), await start('alone', stack.id)];

  // Single-session deploys: three agents store their backup (a second attempt of the first is
  // answered with the first's), then two deploy (one changed, one already as rendered), one push
  // fails; the fourth fails to connect before any backup. A stale outcome (another job) and a repeat.
  const afterDeploys = await step(runs, 'running', [], async (run, rows) => {
    // As if agents had taken the jobs.
    await c
      .db('jobs')
      .whereIn(
        'id',
        rows.map((r) => r.job_id),
      )
      .update({ status: 'dispatched', attempt: 1 });
    for (const i of [0, 1, 3]) expect(await storeBackup(rows[i], `{"hostname": "before ${i}"}`)).toBe(`{"hostname": "before ${i}"}`);
    expect(await storeBackup(rows[0], '{"hostname": "half changed"}')).toBe('{"hostname": "before 0"}');
    // The lines an agent sends with a result reach the recorder with it (keepsLogs), after those it sent earlier (job_logs).
    const sent = (text: string) => [{ at: new Date().toISOString(), level: 'info' as const, text }];
    const first = {
      ...outcome(run, rows[0], 'deploy', 'succeeded', { applied: true, verified: true, changed: true }),
      logs: sent('verified: sent with the result'),
    };
    return [
      { ...outcome(run, rows[3], 'deploy', 'failed', null, 'stale'), jobId: rows[2].job_id, logs: sent('a line of a stale result') },
      first,
      outcome(run, rows[1], 'deploy', 'failed', { applied: false, verified: false, changed: null, error_cause: 'device' }, 'push failed: ABORTED'),
      outcome(run, rows[2], 'deploy', 'failed', { applied: false, verified: false, changed: null }, 'connect failed: connection refused'),
      outcome(run, rows[3], 'deploy', 'succeeded', { applied: true, verified: true, changed: false }),
      { ...first, status: 'failed', error: 'repeated', logs: undefined },
    ];
  });
  expect(afterDeploys[0].devices.map((d) => [d.status, d.changed, d.version, d.config_text, d.job_params])).toEqual([
    ['completed', true, 1, '{"hostname": "before 0"}', { keys: ['changes', 'deployment_id', 'transport', 'verify'], backup: null, purpose: null }],
    ['failed', false, 1, '{"hostname": "before 1"}', { keys: ['changes', 'deployment_id', 'transport', 'verify'], backup: null, purpose: null }],
    ['failed', false, null, null, { keys: ['changes', 'deployment_id', 'transport', 'verify'], backup: null, purpose: null }],
    ['completed', false, 1, '{"hostname": "before 3"}', { keys: ['changes', 'deployment_id', 'transport', 'verify'], backup: null, purpose: null }],
  ]);
  expect(afterDeploys[0].devices[0]).toMatchObject({ source: 'deployment', pulled_via: 'gnmi', method: 'structured', version_job: 'current' });
  // Each device's lines in the order they happened: the agent's, then the outcome naming the kept backup.
  // A stale result's own lines are kept, with a line saying it was not recorded (the lines its job sent earlier stay in job_logs).
  expect(afterDeploys[0].logs.slice(-16).map((l) => `${l.device_id} ${l.level} ${l.message}`)).toEqual([
    "null info Submitted 4 deploy jobs to the devices' agents",
    '3 info a line of a stale result',
    '3 warn device3: a late deploy result (failed) was not recorded: the device had moved on',
    '0 info agent line 1 of device 0',
    '0 info agent line 2 of device 0',
    '0 info verified: sent with the result',
    '0 info device0: deployed and verified (pre-deployment backup: config version 1)',
    '1 info agent line 1 of device 1',
    '1 info agent line 2 of device 1',
    '1 error device1: push failed: ABORTED (pre-deployment backup: config version 1)',
    '2 info agent line 1 of device 2',
    '2 info agent line 2 of device 2',
    '2 error device2: connect failed: connection refused',
    '3 info agent line 1 of device 3',
    '3 info agent line 2 of device 3',
    '3 info device3: deployed and verified (pre-deployment backup: config version 1)',
  ]);
  expect(afterDeploys[1]).toEqual(afterDeploys[0]);

  // The atomic stack restores the two deployed devices from their stored backups: one restored
  // (and a repeated outcome of it), one whose restore fails.
  const afterRestoreJobs = await step(runs, 'restoring', ['failed'], (run, rows) => {
    const restored = outcome(run, rows[0], 'rollback', 'succeeded', { restored: true, matches: true });
    return [
      restored,
      { ...restored, status: 'failed', error: 'repeated' },
      outcome(run, rows[1], 'rollback', 'failed', { restored: false }, 'connect failed: timed out'),
    ];
  });
  expect(afterRestoreJobs[0].devices.map((d) => [d.status, d.job_kind, d.job_params?.backup, d.job_params?.purpose])).toEqual([
    ['restored', 'rollback', '{"hostname": "before 0"}', 'restore'],
    ['failed', 'deploy', null, null],
    ['failed', 'deploy', null, null],
    ['restore_failed', 'rollback', '{"hostname": "before 3"}', 'restore'],
  ]);
  expect(afterRestoreJobs[1]).toEqual(afterRestoreJobs[0]);

  for (const run of runs) await runner.pump(run.id);
  const afterRestore = await Promise.all(runs.map(picture));
  expect(afterRestore[0].deployment).toMatchObject({ status: 'failed', succeeded_count: 0, failed_count: 4 });
  expect(afterRestore[0].devices[0].error_message).toMatch(
    /^Restored from its pre-deployment backup because the stack is atomic and device1, device2 failed/,
  );
  expect(afterRestore[0].devices[3].error_message).toMatch(/^Restore from the pre-deployment backup failed: connect failed: timed out/);
  expect(afterRestore[1]).toEqual(afterRestore[0]);
});
