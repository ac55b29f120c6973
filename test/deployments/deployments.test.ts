/**
 * Deployments end to end: real controller and PostgreSQL, a real agent runtime (in-process hub)
 * with the real gNMI and NETCONF drivers, against the gNMI and NETCONF simulators.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import type { Json } from '../../agent/src/drivers/gnmi/json-tree';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { agentFor, api, backupVersionText, gnmiDevice, netconfDevice, waitFor } from './helpers';

let c: TestController;
let org: Org;
let token: string;
let agent: Awaited<ReturnType<typeof agentFor>>;
const sims: { close(): Promise<void> }[] = [];
let system: any;
let interfaces: any;

const INITIAL = { system: { config: { hostname: 'factory' } }, interfaces: { interface: [{ name: 'eth0', config: { mtu: 1500 } }] } };

async function gnmi(initialTree: Json = INITIAL): Promise<GnmiTarget> {
  const target = await startGnmiTarget({ initialTree });
  sims.push(target);
  return target;
}

async function stack(atomic = true, services?: unknown[]) {
  return api(
    c,
    token,
    'POST',
    '/api/config/stacks',
    {
      name: `fabric-${atomic}`,
      atomic,
      services: services ?? [
        { template_id: system.id, order: 0, variables: { hostname: 'default' } },
        { template_id: interfaces.id, order: 1, variables: { mtu: 9000 } },
      ],
    },
    201,
  );
}

function deploy(stackId: string, devices: string[], variable_values?: unknown, name = 'rollout') {
  return c.request('POST', '/api/config/deployments', {
    token,
    body: { stack_id: stackId, name, target_devices: devices.map((device_id) => ({ device_id })), ...(variable_values ? { variable_values } : {}) },
  });
}

function backupText(deviceId: string, configId: string): Promise<string> {
  return backupVersionText(c, token, deviceId, configId, (entry) => {
    expect(entry, 'the backup is a stored config version of the device').toBeTruthy();
    expect(entry).toMatchObject({ source: 'deployment', pulled_via: expect.stringMatching(/gnmi|netconf/), status: 'success' });
  });
}

beforeAll(async () => {
  c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } } });
  org = await c.createOrgUser(['org_admin']);
  token = org.token;
  agent = await agentFor(c, org);
  system = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    { name: 'system', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/system/config', source: '{"hostname": "{{ hostname }}"}' },
    201,
  );
  interfaces = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    {
      name: 'interfaces',
      platform: 'openconfig-gnmi',
      config_format: 'json',
      operation: 'replace',
      target_path: '/interfaces',
      source: '{"interface": [{"name": "eth0", "config": {"mtu": {{ mtu }}}}]}',
    },
    201,
  );
});

afterAll(async () => {
  await agent?.stop();
  await c?.close();
  await Promise.all(sims.map((s) => s.close().catch(() => undefined)));
});

describe('deploy over gNMI', () => {
  it('answers 201 pending at once, then backs up, pushes the services in order as one change set, verifies and completes', async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target, 'leaf1');
    const s = await stack();
    const res = await deploy(s.id, [device.id], { '0': { devices: [device.id], device_vars: { [device.id]: { hostname: 'leaf1' } } } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: 'pending',
      stack_id: s.id,
      name: 'rollout',
      total_devices: 1,
      succeeded_count: 0,
      failed_count: 0,
      target_devices: [{ device_id: device.id }],
      completed_at: null,
    });
    expect(res.body.variable_values['0'].devices).toEqual([device.id]);

    const done = await waitFor(c, token, res.body.id);
    expect(done).toMatchObject({ status: 'completed', succeeded_count: 1, failed_count: 0 });
    expect(done.started_at).toEqual(expect.any(String));
    expect(done.completed_at).toEqual(expect.any(String));
    expect(done.devices).toHaveLength(2);
    expect(done.devices.map((d: any) => [d.service_name, d.status])).toEqual([
      ['system', 'completed'],
      ['interfaces', 'completed'],
    ]);
    expect(done.devices[0]).toMatchObject({
      device_id: device.id,
      rendered_config: '{"hostname": "leaf1"}',
      error_message: null,
      backup_config_id: expect.any(String),
    });
    expect(done.devices[1].rendered_config).toBe('{"interface": [{"name": "eth0", "config": {"mtu": 9000}}]}');

    // One SetRequest for the device, services in push order; the device took it.
    expect(target.setRequests).toHaveLength(1);
    expect(target.setRequests[0].replace).toEqual(['/system/config', '/interfaces']);
    expect(target.tree()).toEqual({
      system: { config: { hostname: 'leaf1' } },
      interfaces: { interface: [{ name: 'eth0', config: { mtu: 9000 } }] },
    });

    // The backup is the config before the change, stored as a version of the device.
    expect(JSON.parse(await backupText(device.id, done.devices[0].backup_config_id))).toEqual(INITIAL);
    // All in one job and one session: read, stored by the controller before the push, push, verify.
    const jobs = await c.db('jobs').where({ group_id: done.id }).select('kind', 'params');
    expect(jobs.map((j: any) => [j.kind, Object.keys(j.params).sort()])).toEqual([['deploy', ['changes', 'deployment_id', 'transport', 'verify']]]);
    expect(target.rpcs).toEqual(['/gnmi.gNMI/Capabilities', '/gnmi.gNMI/Get', '/gnmi.gNMI/Set', '/gnmi.gNMI/Get']);
    const messages = (await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs?limit=1000`)).logs.map((l: any) => l.message as string);
    const at = (re: RegExp) => messages.findIndex((m: string) => re.test(m));
    // In the order it happened, a line per step: read and stored by the controller, pushed, verified; the outcome names the kept version.
    expect(at(/^backup: \d+ bytes of json running config over gnmi, stored by the controller before any change$/)).toBeGreaterThan(
      at(/^connecting to .* over gnmi$/),
    );
    expect(at(/^the device accepted 2 services as one change set$/)).toBeGreaterThan(at(/^backup: .*, stored by the controller/));
    expect(at(/^verified: the running config changed$/)).toBeGreaterThan(at(/^the device accepted/));
    expect(at(/: deployed and verified \(pre-deployment backup: config version \d+\)$/)).toBeGreaterThan(at(/^verified:/));
    // The agent's lines: one per step and one for the connection, none per half-step.
    expect(messages.filter((m: string) => /^(connecting to|connected|backup:|pushing|the device accepted|verified:)/.test(m))).toHaveLength(4);

    const list = await api(c, token, 'GET', '/api/config/deployments');
    expect(list[0]).toMatchObject({ id: done.id, status: 'completed' });
    expect(list[0]).not.toHaveProperty('devices');
    expect((await api(c, token, 'GET', `/api/config/deployments?stack_id=${s.id}`)).map((d: any) => d.id)).toEqual([done.id]);
  });

  it('keeps log lines with level, message, device_id and created_at, paged and filtered by device', async () => {
    const [t1, t2] = [await gnmi(), await gnmi()];
    const d1 = await gnmiDevice(c, token, t1);
    const d2 = await gnmiDevice(c, token, t2);
    const res = await deploy((await stack()).id, [d1.id, d2.id]);
    const done = await waitFor(c, token, res.body.id);
    expect(done.status).toBe('completed');
    const logs = await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs`);
    expect(logs).toMatchObject({ limit: 100, offset: 0, total: expect.any(Number) });
    expect(logs.logs.length).toBe(Math.min(100, logs.total));
    for (const line of logs.logs) {
      expect(line).toMatchObject({
        level: expect.stringMatching(/^(info|warn|error)$/),
        message: expect.any(String),
        created_at: expect.any(String),
      });
      expect(line).toHaveProperty('device_id');
    }
    const messages = logs.logs.map((l: any) => l.message).join('\n');
    expect(messages).toMatch(/Deployment created/);
    expect(messages).toMatch(/backup/);
    expect(messages).toMatch(/Deployment completed: 2 devices changed$/m);
    // The same stack again: the devices already run it, and the log says so.
    const again = await waitFor(c, token, (await deploy(done.stack_id, [d1.id, d2.id])).body.id);
    expect(again.status).toBe('completed');
    const second = (await api(c, token, 'GET', `/api/config/deployments/${again.id}/logs`)).logs.map((l: any) => l.message).join('\n');
    expect(second).toMatch(/Deployment completed: 0 devices changed, 2 already as rendered$/m);
    const mine = await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs?device_id=${d1.id}&limit=1000`);
    expect(mine.logs.length).toBeGreaterThan(0);
    expect(mine.logs.every((l: any) => l.device_id === d1.id)).toBe(true);
    const page = await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs?limit=2&offset=1`);
    expect(page.logs).toEqual(logs.logs.slice(1, 3));
    for (const q of ['limit=1001', 'limit=0', 'offset=-1', 'device_id=nope']) {
      expect((await c.request('GET', `/api/config/deployments/${done.id}/logs?${q}`, { token })).status, q).toBe(400);
    }
  });
});

describe('atomic and non-atomic failure', () => {
  it('atomic: when the second device fails, the first is restored and its config equals its backup', async () => {
    const good = await gnmi();
    const bad = await gnmi();
    bad.faults.failSetPaths = ['/interfaces'];
    const d1 = await gnmiDevice(c, token, good, 'spine1');
    const d2 = await gnmiDevice(c, token, bad, 'spine2');
    const res = await deploy((await stack(true)).id, [d1.id, d2.id]);
    expect(res.status).toBe(201);
    const done = await waitFor(c, token, res.body.id);
    expect(done).toMatchObject({ status: 'failed', succeeded_count: 0, failed_count: 2 });
    expect(done.error_message).toMatch(/1 device failed; 1 device restored/);
    const byDevice = (id: string) => done.devices.filter((d: any) => d.device_id === id);
    for (const entry of byDevice(d1.id)) {
      expect(entry.status).toBe('restored');
      expect(entry.error_message).toBe('Restored from its pre-deployment backup because the stack is atomic and spine2 failed');
    }
    for (const entry of byDevice(d2.id)) {
      expect(entry.status).toBe('failed');
      expect(entry.error_message).toMatch(/push failed: .*ABORTED/);
    }
    // The first device was changed, then put back: its config equals its backup.
    expect(good.setRequests.length).toBe(2);
    const backup = JSON.parse(await backupText(d1.id, byDevice(d1.id)[0].backup_config_id));
    expect(good.tree()).toEqual(backup);
    expect(good.tree()).toEqual(INITIAL);
    expect(bad.tree()).toEqual(INITIAL);
    const logs = await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs?limit=1000`);
    expect(logs.logs.map((l: any) => l.message).join('\n')).toMatch(/Atomic stack: restoring 1 device/);
  });

  it("non-atomic: keeps what succeeded and ends failed with the failing device's reason", async () => {
    const good = await gnmi();
    const bad = await gnmi();
    bad.faults.failSetPaths = ['/system/config'];
    const d1 = await gnmiDevice(c, token, good);
    const d2 = await gnmiDevice(c, token, bad);
    const done = await waitFor(c, token, (await deploy((await stack(false)).id, [d1.id, d2.id])).body.id);
    expect(done).toMatchObject({ status: 'failed', succeeded_count: 1, failed_count: 1 });
    expect(done.error_message).toMatch(/1 of 2 devices failed; 1 kept the change/);
    expect((good.tree() as { system: Json }).system).toEqual({ config: { hostname: 'default' } });
    expect(done.devices.filter((d: any) => d.device_id === d2.id).every((d: any) => d.status === 'failed' && /ABORTED/.test(d.error_message))).toBe(
      true,
    );
  });

  it('fails a device the agent cannot reach, with the reason, and no backup', async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target);
    await target.close();
    const done = await waitFor(c, token, (await deploy((await stack()).id, [device.id])).body.id);
    expect(done.status).toBe('failed');
    expect(done.devices[0]).toMatchObject({ status: 'failed', backup_config_id: null });
    expect(done.devices[0].error_message).toMatch(/connect failed/);
    const rollback = await c.request('POST', `/api/config/deployments/${done.id}/rollback`, { token });
    expect(rollback.status).toBe(400);
    expect(rollback.body).toMatchObject({
      code: 'ROLLBACK_NOT_ALLOWED',
      error: 'Rollback is not possible: no device of this deployment has a pre-deployment backup',
    });
  });
});

describe('rollback', () => {
  it('pushes back each pre-deployment backup (replace) where the deployment changed the device, and ends rolled_back; not again', async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target);
    const done = await waitFor(c, token, (await deploy((await stack()).id, [device.id])).body.id);
    expect(done.status).toBe('completed');
    // Changed by hand since, inside the deployment's subtrees (the hostname) and outside them (extra).
    // A forced rollback (unforced, the device would be left alone: left-config.test.ts) puts the
    // backup back on the subtrees the deployment changed only: a gNMI Get of / need not return all
    // a target holds, and replacing / with it would remove the rest.
    const changed = target.tree() as Record<string, Json>;
    target.setTree({ ...changed, system: { config: { hostname: 'by-hand' } }, extra: { added: true } });
    const res = await c.request('POST', `/api/config/deployments/${done.id}/rollback`, { token, body: { force: true } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('rolling_back');
    const rolled = await waitFor(c, token, done.id);
    expect(rolled.status).toBe('rolled_back');
    expect(rolled.devices.every((d: any) => d.status === 'rolled_back')).toBe(true);
    expect(target.setRequests.at(-1)).toEqual({ delete: [], replace: ['/system/config', '/interfaces'], update: [] });
    expect(target.tree()).toEqual({ ...(INITIAL as Record<string, Json>), extra: { added: true } });
    const again = await c.request('POST', `/api/config/deployments/${done.id}/rollback`, { token });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('Rollback is only possible from status completed or failed; this deployment is rolled_back');
  });

  it('a rollback the device took but that left it differing from the backup is rollback_failed, not rolled_back', async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target);
    const done = await waitFor(c, token, (await deploy((await stack()).id, [device.id])).body.id);
    expect(done.status).toBe('completed');
    target.faults.ignoredNthSet = target.setRequests.length + 1; // the rollback's Set: answered, not applied
    await api(c, token, 'POST', `/api/config/deployments/${done.id}/rollback`);
    const failed = await waitFor(c, token, done.id, ['failed', 'rolled_back']);
    expect(failed.status).toBe('failed');
    expect(failed.devices[0]).toMatchObject({
      status: 'rollback_failed',
      error_message:
        'Rollback failed: the backup was pushed, but the running config read afterwards still differs from it; the device may be partly restored',
    });
  });

  it('a rollback whose push fails ends failed with the reason and can be retried', async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target);
    const done = await waitFor(c, token, (await deploy((await stack()).id, [device.id])).body.id);
    target.faults.failSetPaths = ['/'];
    await api(c, token, 'POST', `/api/config/deployments/${done.id}/rollback`);
    const failed = await waitFor(c, token, done.id, ['failed', 'rolled_back']);
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toBe('Rollback failed on 1 device; POST /rollback again to retry them');
    expect(failed.devices[0].status).toBe('rollback_failed');
    expect(failed.devices[0].error_message).toMatch(/^Rollback failed: .*ABORTED/);
    target.faults.failSetPaths = [];
    await api(c, token, 'POST', `/api/config/deployments/${done.id}/rollback`);
    const retried = await waitFor(c, token, done.id, ['rolled_back', 'failed']);
    expect(retried.status).toBe('rolled_back');
    expect(target.tree()).toEqual(INITIAL);
  });

  it('answers 400 while a deployment is pending or in progress', async () => {
    // No agent serves this organization: the deployment stays in progress.
    const other = await c.createOrgUser(['org_admin']);
    const target = await gnmi();
    const device = await gnmiDevice(c, other.token, target);
    const tpl = await api(
      c,
      other.token,
      'POST',
      '/api/config/templates',
      { name: 's', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/system/config', source: '{"hostname": "x"}' },
      201,
    );
    const s = await api(c, other.token, 'POST', '/api/config/stacks', { name: 's', services: [{ template_id: tpl.id, order: 0 }] }, 201);
    const created = await c.request('POST', '/api/config/deployments', {
      token: other.token,
      body: { stack_id: s.id, name: 'stuck', target_devices: [{ device_id: device.id }] },
    });
    expect(created.body.status).toBe('pending');
    const res = await c.request('POST', `/api/config/deployments/${created.body.id}/rollback`, { token: other.token });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Rollback is only possible from status completed or failed; this deployment is (pending|in_progress)$/);
  });
});

describe('deploy over NETCONF', () => {
  let sim: NetconfDevice;
  const NS = 'urn:sb:test';
  beforeAll(async () => {
    sim = await startNetconfDevice({ initialConfig: `<system xmlns="${NS}"><hostname>factory</hostname></system>` });
    sims.push(sim);
  });

  it('deploys with candidate + confirmed commit and rolls back to the backup', async () => {
    const device = await netconfDevice(c, token, sim, 'edge1');
    const before = sim.running();
    const tpl = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      {
        name: 'nc-system',
        platform: 'ietf-netconf',
        config_format: 'xml',
        operation: 'merge',
        source: `<system xmlns="${NS}"><hostname>{{ hostname }}</hostname><location>{{ site | default("lab") }}</location></system>`,
      },
      201,
    );
    const s = await api(c, token, 'POST', '/api/config/stacks', { name: 'nc', services: [{ template_id: tpl.id, order: 0 }] }, 201);
    const res = await deploy(s.id, [device.id], { '0': { devices: [device.id], shared_vars: { hostname: 'edge1' } } });
    expect(res.status, res.text).toBe(201);
    const done = await waitFor(c, token, res.body.id);
    expect(done.status, JSON.stringify(done.devices)).toBe('completed');
    expect(sim.running()).toContain('<hostname>edge1</hostname>');
    expect(sim.rpcLog).toEqual(expect.arrayContaining(['lock', 'edit-config', 'commit', 'unlock']));
    expect(await backupText(device.id, done.devices[0].backup_config_id)).toContain('factory');

    await api(c, token, 'POST', `/api/config/deployments/${done.id}/rollback`);
    expect((await waitFor(c, token, done.id)).status).toBe('rolled_back');
    expect(sim.running()).toBe(before);
  });
});

describe('checks before anything is touched', () => {
  it('answers 400 Stack resolution failed for a transport mismatch, a bad payload, an unknown stack or device, and no work', async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target);
    const nc = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      { name: 'nc', platform: 'ietf-netconf', config_format: 'xml', target_path: '/a', source: '<a>{{ x }}</a>' },
      201,
    );
    const bad = async (stackId: string, devices: string[], vv?: unknown) => {
      const res = await deploy(stackId, devices, vv);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('STACK_RESOLUTION_FAILED');
      return res.body.error as string;
    };
    const ncStack = await api(c, token, 'POST', '/api/config/stacks', { name: 'nc', services: [{ template_id: nc.id, variables: { x: 1 } }] }, 201);
    expect(await bad(ncStack.id, [device.id])).toMatch(/automation transport is gnmi, but its templates target netconf platforms/);

    const broken = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      { name: 'broken', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/a', source: '{"a": {{ x }}' },
      201,
    );
    const brokenStack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      { name: 'b', services: [{ template_id: broken.id, variables: { x: 1 } }] },
      201,
    );
    expect(await bad(brokenStack.id, [device.id])).toMatch(/does not render valid JSON/);

    // cli templates go over SSH; one device cannot mix them with structured ones.
    const cli = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      { name: 'cli', platform: 'vendor_eos-gnmi', config_format: 'cli', source: 'hostname x' },
      201,
    );
    const cliStack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      { name: 'c', services: [{ template_id: cli.id }, { template_id: system.id, order: 1, variables: { hostname: 'x' } }] },
      201,
    );
    expect(await bad(cliStack.id, [device.id])).toMatch(/gets both cli templates \(pushed over SSH\) and structured ones \(json\)/);

    const s = await stack();
    expect(await bad('00000000-0000-4000-8000-000000000000', [device.id])).toBe(
      'Stack resolution failed: stack 00000000-0000-4000-8000-000000000000 not found',
    );
    expect(await bad(s.id, ['00000000-0000-4000-8000-000000000001'])).toBe(
      'Stack resolution failed: unknown device 00000000-0000-4000-8000-000000000001',
    );
    const other = await gnmiDevice(c, token, target);
    expect(await bad(s.id, [device.id, other.id], { '0': { devices: [device.id] }, '1': { devices: [device.id] } })).toMatch(/no service runs on it/);
    expect(await bad(s.id, [device.id], { '0': { devices: [other.id] } })).toMatch(/not in target_devices/);

    for (const body of [
      {},
      { stack_id: s.id, name: 'x', target_devices: [] },
      { stack_id: s.id, name: 'x', target_devices: [{ id: device.id }] },
      { stack_id: 'nope', name: 'x', target_devices: [{ device_id: device.id }] },
      { stack_id: s.id, target_devices: [{ device_id: device.id }] },
    ]) {
      const res = await c.request('POST', '/api/config/deployments', { token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await c.request('POST', '/api/config/deployments', { token, raw: '{"stack_id"', contentType: 'application/json' })).status).toBe(400);
    expect(await c.db('deployments').where({ org_id: org.orgId, name: 'x' }).count('* as n').first()).toMatchObject({ n: 0 });
  });
});

describe('organization scoping', () => {
  it('answers 404 to another organization on every :id route and lists nothing', async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target);
    const done = await waitFor(c, token, (await deploy((await stack()).id, [device.id])).body.id);
    const other = await c.createOrgUser(['org_admin']);
    for (const [method, path] of [
      ['GET', `/api/config/deployments/${done.id}`],
      ['GET', `/api/config/deployments/${done.id}/logs`],
      ['POST', `/api/config/deployments/${done.id}/rollback`],
    ]) {
      const res = await c.request(method, path, { token: other.token });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('DEPLOYMENT_NOT_FOUND');
    }
    expect(await api(c, other.token, 'GET', '/api/config/deployments')).toEqual([]);
    expect((await deploy((await stack()).id, [device.id])).status).toBe(201);
    const foreign = await c.request('POST', '/api/config/deployments', {
      token: other.token,
      body: { stack_id: done.stack_id, name: 'x', target_devices: [{ device_id: device.id }] },
    });
    expect(foreign.status).toBe(400);
  });
});

describe('controller restart', () => {
  // A controller restart, an agent start and three deployments in a row: more than the default 30 s on a loaded machine.
  it('never leaves a deployment in pending, in_progress or rolling_back', { timeout: 90_000 }, async () => {
    const target = await gnmi();
    const device = await gnmiDevice(c, token, target);
    await agent.stop();
    // No agent: the run is submitted and waits.
    const created = await deploy((await stack()).id, [device.id]);
    const running = await waitFor(c, token, created.body.id, ['in_progress']);
    expect(running.devices[0].status).toBe('running');
    // A deployment whose controller stopped between storing it and starting it.
    const [crashed] = await c
      .db('deployments')
      .insert({
        org_id: org.orgId,
        stack_id: running.stack_id,
        name: 'crashed',
        status: 'pending',
        atomic: true,
        total_devices: 1,
        target_devices: JSON.stringify([{ device_id: device.id }]),
        variable_values: '{}',
        created_by_name: 'test',
      })
      .returning('id');
    await c
      .db('deployment_devices')
      .insert({ deployment_id: crashed.id, device_id: device.id, device_name: device.name, position: 0, transport: 'gnmi' });
    const entries = await c.db('deployment_entries').where({ deployment_id: created.body.id });
    await c.db('deployment_entries').insert(entries.map((e: any) => ({ ...e, deployment_id: crashed.id })));

    // One whose controller stopped after claiming its device, before recording the job (as a controller
    // before 2026-11-30 could leave it: it claimed devices and submitted their jobs in two transactions).
    const [claimed] = await c
      .db('deployments')
      .insert({
        org_id: org.orgId,
        stack_id: running.stack_id,
        name: 'claimed',
        status: 'in_progress',
        atomic: true,
        total_devices: 1,
        started_at: c.db.fn.now(),
        target_devices: JSON.stringify([{ device_id: device.id }]),
        variable_values: '{}',
        created_by_name: 'test',
      })
      .returning('id');
    await c.db('deployment_devices').insert({
      deployment_id: claimed.id,
      device_id: device.id,
      device_name: device.name,
      position: 0,
      transport: 'gnmi',
      status: 'running',
      status_since: new Date(Date.now() - 3_600_000),
    });
    await c.db('deployment_entries').insert(entries.map((e: any) => ({ ...e, deployment_id: claimed.id })));

    await c.restart();
    agent = await agentFor(c, org);
    const first = await waitFor(c, token, created.body.id);
    const second = await waitFor(c, token, crashed.id);
    const third = await waitFor(c, token, claimed.id);
    expect(first.status).toBe('completed');
    expect(second.status).toBe('completed');
    expect(third.status).toBe('completed');
    expect(
      await c.db('deployments').whereIn('status', ['pending', 'in_progress', 'rolling_back']).where({ org_id: org.orgId }).count('* as n').first(),
    ).toMatchObject({ n: 0 });
  });
});
