import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../controller/src/app';
import { createDb, type Db } from '../../controller/src/db/knex';
import { createLogger } from '../../controller/src/logger';
import { startTestController, type TestController } from '../helpers/controller';
import { api, until } from '../deployments/helpers';

let c: TestController;
let token: string;
let orgId: string;
let peer: { app: FastifyInstance; db: Db };
let device: any;
let instance: any;
let snapshot: any;

/** A second controller replica on the same database (same secret key, so tokens work on both). */
async function startPeer(): Promise<{ app: FastifyInstance; db: Db }> {
  const db = await createDb(c.config.databaseUrl, c.config.dataDir);
  const sink = new Writable({
    write(_chunk, _enc, done) {
      done();
    },
  });
  const app = await buildApp({ config: { ...c.config }, db, log: createLogger('info', sink) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, db };
}

beforeAll(async () => {
  c = await startTestController({ config: { tasks: { tickMs: 100 } } });
  const org = await c.createOrgUser(['org_admin']);
  token = org.token;
  orgId = org.orgId;
  peer = await startPeer();
  const profile = await api(
    c,
    token,
    'POST',
    '/api/profiles',
    { name: 'p', username: 'admin', password: 'admin', automation_transport: 'gnmi' },
    201,
  );
  device = await api(c, token, 'POST', '/api/devices', { name: 'r1', host: '127.0.0.1', device_type: 'vendor_eos', profile_id: profile.id }, 201);
  const tpl = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    { name: 't', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/system', source: '{"hostname": "{{ hostname }}"}' },
    201,
  );
  const stack = await api(
    c,
    token,
    'POST',
    '/api/config/stacks',
    { name: 's', services: [{ template_id: tpl.id, variables: { hostname: 'r1' } }] },
    201,
  );
  instance = await api(
    c,
    token,
    'POST',
    '/api/config/instances',
    { stack_id: stack.id, name: 'nightly', target_devices: [{ device_id: device.id }] },
    201,
  );
  snapshot = (await api(c, token, 'POST', '/api/devices/snapshots', { name: 'weekly' }, 201)).snapshot;
});
afterAll(async () => {
  await peer?.app.close();
  await peer?.db.destroy();
  await c?.close();
});

describe('scheduled task CRUD', () => {
  it('creates a deployment task with its next run, reads, lists, changes and deletes it', async () => {
    const task = await api(
      c,
      token,
      'POST',
      '/api/tasks',
      { name: 'nightly deploy', type: 'deployment', cron: '30 2 * * *', instance_id: instance.id },
      201,
    );
    expect(task).toMatchObject({
      name: 'nightly deploy',
      type: 'deployment',
      cron: '30 2 * * *',
      timezone: 'UTC',
      enabled: true,
      instance_id: instance.id,
      snapshot_id: null,
      last_run_at: null,
      last_status: null,
    });
    const next = new Date(task.next_run_at);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect([next.getUTCHours(), next.getUTCMinutes()]).toEqual([2, 30]);
    expect(await api(c, token, 'GET', `/api/tasks/${task.id}`)).toEqual(task);
    expect((await api(c, token, 'GET', '/api/tasks')).map((t: any) => t.id)).toContain(task.id);
    expect((await api(c, token, 'GET', '/api/tasks?type=snapshot')).map((t: any) => t.id)).not.toContain(task.id);

    const moved = await api(c, token, 'PUT', `/api/tasks/${task.id}`, { cron: '0 6 * * 1', timezone: 'Europe/Berlin' });
    const when = new Date(moved.next_run_at);
    expect(
      new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false }).format(
        when,
      ),
    ).toBe('Mon 06:00');
    const paused = await api(c, token, 'PUT', `/api/tasks/${task.id}`, { enabled: false });
    expect(paused).toMatchObject({ enabled: false, next_run_at: null });
    expect((await api(c, token, 'PUT', `/api/tasks/${task.id}`, { enabled: true })).next_run_at).toEqual(expect.any(String));
    expect((await c.request('DELETE', `/api/tasks/${task.id}`, { token })).status).toBe(204);
    expect((await c.request('GET', `/api/tasks/${task.id}`, { token })).status).toBe(404);
  });

  it('creates snapshot and backup tasks', async () => {
    const snap = await api(c, token, 'POST', '/api/tasks', { name: 's', type: 'snapshot', cron: '@daily', snapshot_id: snapshot.id }, 201);
    expect(snap).toMatchObject({ type: 'snapshot', snapshot_id: snapshot.id, instance_id: null });
    const backup = await api(
      c,
      token,
      'POST',
      '/api/tasks',
      { name: 'b', type: 'backup', cron: '0 */6 * * *', device_filter: { device_type: 'vendor_eos' }, method: 'cli' },
      201,
    );
    expect(backup).toMatchObject({ type: 'backup', device_filter: { device_type: 'vendor_eos' }, method: 'cli' });
  });

  it('answers 400 for a bad cron expression, time zone, type or target', async () => {
    const bad = async (body: Record<string, unknown>, code?: string) => {
      const res = await c.request('POST', '/api/tasks', {
        token,
        body: { name: 'x', type: 'deployment', cron: '* * * * *', instance_id: instance.id, ...body },
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      if (code) expect(res.body.code).toBe(code);
      return res.body.error as string;
    };
    expect(await bad({ cron: '61 * * * *' }, 'INVALID_SCHEDULE')).toMatch(/^Invalid cron expression '61 \* \* \* \*'/);
    expect(await bad({ cron: '* * *' }, 'INVALID_SCHEDULE')).toMatch(/needs 5 fields/);
    expect(await bad({ cron: 'every day' }, 'INVALID_SCHEDULE')).toMatch(/Invalid cron/);
    expect(await bad({ timezone: 'Mars/Olympus' }, 'INVALID_SCHEDULE')).toBe("Unknown time zone 'Mars/Olympus'");
    expect(await bad({ type: 'reboot' })).toMatch(/type/);
    expect(await bad({ instance_id: undefined }, 'INVALID_TASK_TARGET')).toMatch(/needs instance_id/);
    expect(await bad({ instance_id: '00000000-0000-4000-8000-000000000000' }, 'INVALID_TASK_TARGET')).toMatch(/not found/);
    expect(await bad({ type: 'snapshot', instance_id: undefined }, 'INVALID_TASK_TARGET')).toMatch(/needs snapshot_id/);
    await bad({ cron: 5 });
    await bad({ extra: true });
  });

  it('answers 404 to another organization on every :id route and lists nothing', async () => {
    const task = await api(c, token, 'POST', '/api/tasks', { name: 'mine', type: 'snapshot', cron: '@weekly', snapshot_id: snapshot.id }, 201);
    const other = await c.createOrgUser(['operator']);
    for (const [method, path, body] of [
      ['GET', `/api/tasks/${task.id}`],
      ['PUT', `/api/tasks/${task.id}`, { name: 'x' }],
      ['DELETE', `/api/tasks/${task.id}`],
      ['GET', `/api/tasks/${task.id}/runs`],
    ] as [string, string, unknown?][]) {
      const res = await c.request(method, path, { token: other.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('TASK_NOT_FOUND');
    }
    expect(await api(c, other.token, 'GET', '/api/tasks')).toEqual([]);
    const foreign = await c.request('POST', '/api/tasks', {
      token: other.token,
      body: { name: 'x', type: 'deployment', cron: '@daily', instance_id: instance.id },
    });
    expect(foreign.status).toBe(400);
  });
});

describe("another organization's ids", () => {
  it('refuses foreign or unknown device ids and site ids in a backup filter with 400, on create and update', async () => {
    const other = await c.createOrgUser(['org_admin']);
    const theirProfile = await api(c, other.token, 'POST', '/api/profiles', { name: 'theirs', username: 'u', password: 'p' }, 201);
    const theirDevice = await api(
      c,
      other.token,
      'POST',
      '/api/devices',
      { name: 'theirs', host: '127.0.0.2', device_type: 'vendor_eos', profile_id: theirProfile.id },
      201,
    );
    const theirSite = await api(c, other.token, 'POST', '/api/sites', { name: 'their site' }, 201);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const create = (filter: unknown) =>
      c.request('POST', '/api/tasks', { token, body: { name: 'b', type: 'backup', cron: '@daily', device_filter: filter } });
    const count = async () => Number((await c.db('scheduled_tasks').where({ org_id: orgId }).count<{ count: string }[]>({ count: '*' }))[0].count);
    const before = await count();

    for (const [filter, message] of [
      [{ device_ids: [device.id, theirDevice.id] }, `device_filter.device_ids: no device ${theirDevice.id} in this organization`],
      [{ device_ids: [unknown] }, `device_filter.device_ids: no device ${unknown} in this organization`],
      [{ site_id: theirSite.id }, `device_filter.site_id: no site ${theirSite.id} in this organization`],
    ] as [unknown, string][]) {
      const res = await create(filter);
      expect(res.status, JSON.stringify(filter)).toBe(400);
      expect(res.body).toEqual({ code: 'UNKNOWN_REFERENCE', error: message });
    }
    expect(await count()).toBe(before);

    const task = await api(
      c,
      token,
      'POST',
      '/api/tasks',
      { name: 'mine', type: 'backup', cron: '@daily', device_filter: { device_ids: [device.id] } },
      201,
    );
    const update = await c.request('PUT', `/api/tasks/${task.id}`, { token, body: { device_filter: { device_ids: [theirDevice.id] } } });
    expect(update.status).toBe(400);
    expect(update.body.code).toBe('UNKNOWN_REFERENCE');
    expect((await api(c, token, 'GET', `/api/tasks/${task.id}`)).device_filter).toEqual({ device_ids: [device.id] });

    // A task of another kind reads no filter and keeps none, also when an update sends one (as create does).
    const snapshotTask = await api(c, token, 'POST', '/api/tasks', { name: 'snap', type: 'snapshot', cron: '@daily', snapshot_id: snapshot.id }, 201);
    await api(c, token, 'PUT', `/api/tasks/${snapshotTask.id}`, { device_filter: { device_ids: [theirDevice.id], site_id: theirSite.id } }, 200);
    expect((await api(c, token, 'GET', `/api/tasks/${snapshotTask.id}`)).device_filter).toEqual({});
  });
});

describe('the scheduler', () => {
  it('fires a due run once with two controllers running, records the last run and moves the next one', async () => {
    const task = await api(c, token, 'POST', '/api/tasks', { name: 'once', type: 'deployment', cron: '0 0 1 1 *', instance_id: instance.id }, 201);
    const yearly = task.next_run_at;
    // The scheduled time arrives for both controllers at once.
    await c.db('scheduled_tasks').where({ id: task.id }).update({ next_run_at: c.db.fn.now() });
    const fired = await until('the run to finish', async () => {
      const t = await api(c, token, 'GET', `/api/tasks/${task.id}`);
      return t.last_status && t.last_status !== 'running' ? t : undefined;
    });
    // Both schedulers keep ticking every 100 ms: give them time to fire it twice if they could.
    await new Promise((r) => setTimeout(r, 1_000));
    const runs = await api(c, token, 'GET', `/api/tasks/${task.id}/runs`);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'succeeded', error: null, result: { deployment_id: expect.any(String) } });
    expect(fired).toMatchObject({
      last_status: 'succeeded',
      last_error: null,
      next_run_at: yearly,
      last_result: { deployment_id: runs[0].result.deployment_id },
    });
    expect(fired.last_run_at).toEqual(expect.any(String));
    const deployments = await c.db('deployments').where({ org_id: orgId, instance_id: instance.id });
    expect(deployments).toHaveLength(1);
    expect(deployments[0].name).toBe('nightly (scheduled)');
    expect((await api(c, token, 'GET', `/api/config/instances/${instance.id}`)).last_deployment_id).toBe(deployments[0].id);
  });

  it('fires an every-second schedule repeatedly, never twice for one time', async () => {
    const task = await api(c, token, 'POST', '/api/tasks', { name: 'often', type: 'snapshot', cron: '* * * * * *', snapshot_id: snapshot.id }, 201);
    await until('three runs', async () => (await api(c, token, 'GET', `/api/tasks/${task.id}/runs`)).length >= 3);
    await api(c, token, 'PUT', `/api/tasks/${task.id}`, { enabled: false });
    const runs = await api(c, token, 'GET', `/api/tasks/${task.id}/runs`);
    const times = runs.map((r: any) => r.scheduled_for);
    expect(new Set(times).size).toBe(times.length);
    expect(runs.some((r: any) => r.status === 'succeeded' || r.status === 'failed')).toBe(true);
  });

  it('records a failed run with its reason', async () => {
    const task = await api(
      c,
      token,
      'POST',
      '/api/tasks',
      { name: 'nothing', type: 'backup', cron: '0 0 1 1 *', device_filter: { device_type: 'vendor_none' } },
      201,
    );
    await c.db('scheduled_tasks').where({ id: task.id }).update({ next_run_at: c.db.fn.now() });
    const done = await until('the failed run', async () => {
      const t = await api(c, token, 'GET', `/api/tasks/${task.id}`);
      return t.last_status === 'failed' ? t : undefined;
    });
    expect(done.last_error).toBe("no device matches the task's device filter");
  });

  it('runs a backup task as a bulk pull of the matching devices', async () => {
    const task = await api(
      c,
      token,
      'POST',
      '/api/tasks',
      { name: 'backup', type: 'backup', cron: '0 0 1 1 *', device_filter: { device_ids: [device.id] }, method: 'cli' },
      201,
    );
    await c.db('scheduled_tasks').where({ id: task.id }).update({ next_run_at: c.db.fn.now() });
    const done = await until('the backup run', async () => {
      const t = await api(c, token, 'GET', `/api/tasks/${task.id}`);
      return t.last_status && t.last_status !== 'running' ? t : undefined;
    });
    expect(done).toMatchObject({ last_status: 'succeeded', last_result: { snapshot_id: expect.any(String), devices_queued: 1 } });
  });
});

describe('the user a task runs as', () => {
  /** Makes the task due now and returns it once its run is recorded. */
  async function runNow(taskId: string): Promise<any> {
    const before = (await c.db('scheduled_task_runs').where({ task_id: taskId }).count<{ count: string }[]>({ count: '*' }))[0].count;
    await c.db('scheduled_tasks').where({ id: taskId }).update({ next_run_at: c.db.fn.now() });
    await until('the run', async () => {
      const runs = await c
        .db('scheduled_task_runs')
        .where({ task_id: taskId })
        .whereNotNull('finished_at')
        .count<{ count: string }[]>({ count: '*' });
      return Number(runs[0].count) > Number(before);
    });
    return api(c, token, 'GET', `/api/tasks/${taskId}`);
  }

  it('stops running (skipped, with the reason) while its creator is disabled or lacks devices.access, and resumes after', async () => {
    const operator = await api(
      c,
      token,
      'POST',
      '/api/admin/users',
      { username: `op-${Date.now()}`, password: 'operator-password-long', roles: ['operator'] },
      201,
    );
    const operatorToken = (await c.login(operator.username, 'operator-password-long')).body.access_token;
    const task = await api(
      c,
      operatorToken,
      'POST',
      '/api/tasks',
      { name: 'ops backup', type: 'backup', cron: '0 0 1 1 *', device_filter: { device_ids: [device.id] }, method: 'cli' },
      201,
    );
    const pulls = () =>
      c
        .db('snapshots')
        .where({ org_id: orgId })
        .count<{ count: string }[]>({ count: '*' })
        .then((r) => Number(r[0].count));

    await api(c, token, 'PUT', `/api/admin/users/${operator.id}`, { is_active: false });
    const before = await pulls();
    const disabled = await runNow(task.id);
    expect(disabled).toMatchObject({ last_status: 'skipped', last_result: null });
    expect(disabled.last_error).toBe(`not run: ${operator.username} is disabled; the task runs again once the account is enabled`);
    expect(disabled.next_run_at).toEqual(expect.any(String)); // the schedule goes on
    const [run] = await api(c, token, 'GET', `/api/tasks/${task.id}/runs`);
    expect(run).toMatchObject({ status: 'skipped', error: disabled.last_error, result: null });
    expect(await pulls()).toBe(before);

    await api(c, token, 'PUT', `/api/admin/users/${operator.id}`, { is_active: true });
    await api(c, token, 'PUT', `/api/admin/users/${operator.id}/roles`, { roles: ['auditor'] });
    const demoted = await runNow(task.id);
    expect(demoted).toMatchObject({
      last_status: 'skipped',
      last_error: `not run: ${operator.username} no longer has the devices.access permission`,
    });
    expect(await pulls()).toBe(before);

    await api(c, token, 'PUT', `/api/admin/users/${operator.id}/roles`, { roles: ['operator'] });
    const resumed = await runNow(task.id);
    expect(resumed).toMatchObject({ last_status: 'succeeded', last_error: null, last_result: { devices_queued: 1 } });
  });
});
