/**
 * Deployments refuse what would destroy configuration: a required template variable left out
 * (template render, stack render, deployment, instance run, scheduled instance task), a
 * replace whose rendered payload is empty (unless allow_empty_replace), and a change or restore
 * whose structured pre-deployment backup is empty (nothing to restore to). Real controller and
 * PostgreSQL, a real agent with the real drivers, against the gNMI, NETCONF and SSH simulators,
 * whose configs are checked to be untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { agentFor, api, gnmiDevice, netconfDevice, sshDevice, until, waitFor } from './helpers';

let c: TestController;
let org: Org;
let token: string;
let agent: Awaited<ReturnType<typeof agentFor>>;
let target: GnmiTarget;
let nc: NetconfDevice;
let ssh: SimSshDevice;
let gDevice: any;
let nDevice: any;
let sDevice: any;
let interfacesTpl: any;
let interfacesStack: any;

const INITIAL = { interfaces: { interface: [{ name: 'eth0', config: { name: 'eth0', mtu: 1500 } }] } };
const NS = 'urn:sb:test';
const SSH_PASSWORD = 'safety-ssh-pw';
// The README's instance example: a list of interfaces replacing /interfaces.
const INTERFACES =
  '{"interface": [{% for i in interfaces %}{"name": "{{ i.name }}", "config": {"name": "{{ i.name }}", "mtu": {{ i.mtu }}}}{% if not ' +
  'loop.last %},{% endif %}{% endfor %}]}';

function deploy(stackId: string, devices: string[], extra: Record<string, unknown> = {}) {
  return c.request('POST', '/api/config/deployments', {
    token,
    body: { stack_id: stackId, name: 'safety', target_devices: devices.map((device_id) => ({ device_id })), ...extra },
  });
}

async function deploymentsNamed(name: string): Promise<number> {
  const row = await c.db('deployments').where({ org_id: org.orgId, name }).count('* as n').first();
  return Number(row?.n ?? 0);
}

/** A NETCONF (replace of /system/ntp) and a cli stack, each of one template listing the NTP `servers` (required). */
async function ntpStacks(suffix: string) {
  const nc = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    {
      name: `nc-${suffix}`,
      platform: 'ietf-netconf',
      config_format: 'xml',
      operation: 'replace',
      target_path: '/system/ntp',
      source: `<system xmlns="${NS}"><ntp>{% for s in servers %}<server>{{ s }}</server>{% endfor %}</ntp></system>`,
    },
    201,
  );
  const cli = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    {
      name: `cli-${suffix}`,
      platform: 'vendor_xe-netconf',
      config_format: 'cli',
      target_path: 'ntp',
      source: '{% for s in servers %}ntp server {{ s }}\n{% endfor %}',
    },
    201,
  );
  return {
    ncStack: await api(c, token, 'POST', '/api/config/stacks', { name: `nc-${suffix}`, services: [{ template_id: nc.id }] }, 201),
    cliStack: await api(c, token, 'POST', '/api/config/stacks', { name: `cli-${suffix}`, services: [{ template_id: cli.id }] }, 201),
  };
}

beforeAll(async () => {
  c = await startTestController({
    config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 }, tasks: { tickMs: 100 } },
  });
  org = await c.createOrgUser(['org_admin']);
  token = org.token;
  agent = await agentFor(c, org);
  target = await startGnmiTarget({ initialTree: INITIAL });
  nc = await startNetconfDevice({
    initialConfig: `<system xmlns="${NS}"><hostname>factory</hostname><ntp><server>192.0.2.1</server></ntp></system>`,
  });
  ssh = await startSshDevice({ dialect: 'vendor_ios', hostname: 'safety-ios', password: SSH_PASSWORD, configScale: 2 });
  gDevice = await gnmiDevice(c, token, target, 'safety-g');
  nDevice = await netconfDevice(c, token, nc, 'safety-n');
  sDevice = await sshDevice(c, token, ssh, SSH_PASSWORD, 'safety-s');
  interfacesTpl = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    { name: 'interfaces', platform: 'openconfig-gnmi', config_format: 'json', operation: 'replace', target_path: '/interfaces', source: INTERFACES },
    201,
  );
  interfacesStack = await api(
    c,
    token,
    'POST',
    '/api/config/stacks',
    { name: 'interfaces', services: [{ template_id: interfacesTpl.id, order: 0 }] },
    201,
  );
});

afterAll(async () => {
  await agent?.stop();
  await c?.close();
  await Promise.all([target, nc, ssh].map((s) => s?.close().catch(() => undefined)));
});

describe('required variables', () => {
  it('are derived as required and refused by template render (current and older version) with 400 naming them', async () => {
    expect(interfacesTpl.variables).toEqual([{ name: 'interfaces', type: 'list', required: true }]);
    const res = await c.request('POST', `/api/config/templates/${interfacesTpl.id}/render`, { token, body: { variables: {} } });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({
      code: 'REQUIRED_VARIABLE_MISSING',
      error: "Render error: required variable 'interfaces' not provided",
      missing: ['interfaces'],
    });
    const old = await c.request('POST', `/api/config/templates/${interfacesTpl.id}/render`, {
      token,
      body: { variables: { interfaces: null }, version: 1 },
    });
    expect(old.status, old.text).toBe(400);
    expect(old.body.code).toBe('REQUIRED_VARIABLE_MISSING');

    const ok = await api(c, token, 'POST', `/api/config/templates/${interfacesTpl.id}/render`, {
      variables: { interfaces: [{ name: 'eth1', mtu: 9000 }] },
    });
    expect(JSON.parse(ok.rendered)).toEqual({ interface: [{ name: 'eth1', config: { name: 'eth1', mtu: 9000 } }] });
    // A guarded or defaulted variable is not required and still renders without a value.
    const optional = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      {
        name: 'opt',
        platform: 'openconfig-gnmi',
        config_format: 'json',
        target_path: '/system/config',
        source: '{"hostname": "{{ hostname | default("r1") }}"}',
      },
      201,
    );
    expect(JSON.parse((await api(c, token, 'POST', `/api/config/templates/${optional.id}/render`, { variables: {} })).rendered)).toEqual({
      hostname: 'r1',
    });
  });

  it('are refused by stack render, naming the service, the device and the variable', async () => {
    const res = await c.request('POST', `/api/config/stacks/${interfacesStack.id}/render`, {
      token,
      body: { variable_values: { '0': { devices: [gDevice.id] } } },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('REQUIRED_VARIABLE_MISSING');
    expect(res.body.error).toMatch(
      /^Stack resolution failed: template 'interfaces' \(service 0\) needs required variable 'interfaces' for device safety-g/,
    );
    expect(res.body.missing).toEqual([
      { service: '0', template: 'interfaces', device_id: gDevice.id, device_name: 'safety-g', variables: ['interfaces'] },
    ]);
    // Given per device, it renders.
    const ok = await api(c, token, 'POST', `/api/config/stacks/${interfacesStack.id}/render`, {
      variable_values: { '0': { devices: [gDevice.id], device_vars: { [gDevice.id]: { interfaces: [{ name: 'eth0', mtu: 9000 }] } } } },
    });
    expect(ok.jobs).toHaveLength(1);
  });

  it('are refused by deployments on every transport before any job, leaving the devices untouched', async () => {
    const { ncStack, cliStack } = await ntpStacks('ntp');
    const before = { tree: target.tree(), nc: nc.running(), ssh: ssh.config(), sets: target.setRequests.length };
    const jobsBefore = await c.db('jobs').where({ org_id: org.orgId }).count('* as n').first();

    for (const [stack, device, variable] of [
      [interfacesStack, gDevice, 'interfaces'],
      [ncStack, nDevice, 'servers'],
      [cliStack, sDevice, 'servers'],
    ] as const) {
      const res = await deploy(stack.id, [device.id]);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('REQUIRED_VARIABLE_MISSING');
      expect(res.body.error).toContain(`needs required variable '${variable}' for device ${device.name}`);
    }
    expect(await deploymentsNamed('safety')).toBe(0);
    expect(await c.db('jobs').where({ org_id: org.orgId }).count('* as n').first()).toEqual(jobsBefore);
    expect({ tree: target.tree(), nc: nc.running(), ssh: ssh.config(), sets: target.setRequests.length }).toEqual(before);
  });

  it('are refused by an instance run and make a scheduled instance task fail with the reason', async () => {
    const instance = await api(
      c,
      token,
      'POST',
      '/api/config/instances',
      { stack_id: interfacesStack.id, name: 'nightly', target_devices: [{ device_id: gDevice.id }] },
      201,
    );
    const res = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('REQUIRED_VARIABLE_MISSING');

    const task = await api(c, token, 'POST', '/api/tasks', { name: 'nightly', type: 'deployment', cron: '0 0 1 1 *', instance_id: instance.id }, 201);
    await c.db('scheduled_tasks').where({ id: task.id }).update({ next_run_at: c.db.fn.now() });
    const fired = await until('the task run to end', async () => {
      const t = await api(c, token, 'GET', `/api/tasks/${task.id}`);
      return t.last_status && t.last_status !== 'running' ? t : undefined;
    });
    expect(fired.last_status).toBe('failed');
    expect(fired.last_error).toMatch(/needs required variable 'interfaces' for device safety-g/);
    expect(await c.db('deployments').where({ org_id: org.orgId, instance_id: instance.id }).count('* as n').first()).toMatchObject({ n: 0 });
    expect(target.tree()).toEqual(INITIAL);
  });
});

describe('empty replace', () => {
  it('is refused on gNMI, NETCONF and CLI with 400 naming the template and device', async () => {
    const { ncStack, cliStack } = await ntpStacks('empty');
    const cases = [
      [interfacesStack.id, gDevice, { interfaces: [] }, 'interfaces'],
      [ncStack.id, nDevice, { servers: [] }, 'nc-empty'],
      [cliStack.id, sDevice, { servers: [] }, 'cli-empty'],
    ] as const;
    const before = { tree: target.tree(), nc: nc.running(), ssh: ssh.config() };
    for (const [stackId, device, vars, template] of cases) {
      const res = await deploy(stackId, [device.id], { variable_values: { '0': { devices: [device.id], shared_vars: vars } } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('EMPTY_REPLACE_REFUSED');
      expect(res.body.error).toContain(`template '${template}' (service 0) renders an empty`);
      expect(res.body.error).toContain(`for device ${device.name} with operation replace`);
      expect(res.body.error).toContain('allow_empty_replace: true');
      expect(res.body.empty_replaces).toEqual([expect.objectContaining({ service: '0', device_id: device.id })]);
    }
    expect(await deploymentsNamed('safety')).toBe(0);
    expect({ tree: target.tree(), nc: nc.running(), ssh: ssh.config() }).toEqual(before);
  });

  it('is refused by an instance run too, and sent when the request says allow_empty_replace, with a log line saying why', async () => {
    const instance = await api(
      c,
      token,
      'POST',
      '/api/config/instances',
      {
        stack_id: interfacesStack.id,
        name: 'wipe',
        target_devices: [{ device_id: gDevice.id }],
        variable_values: { '0': { devices: [gDevice.id], shared_vars: { interfaces: [] } } },
      },
      201,
    );
    const refused = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.code).toBe('EMPTY_REPLACE_REFUSED');
    expect((await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token, body: { allow_empty_replace: 'yes' } })).status).toBe(
      400,
    );
    expect(target.tree()).toEqual(INITIAL);

    const res = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token, body: { allow_empty_replace: true } });
    expect(res.status, res.text).toBe(201);
    const done = await waitFor(c, token, res.body.id);
    expect(done.status, JSON.stringify(done.devices)).toBe('completed');
    expect(target.tree()).toMatchObject({ interfaces: { interface: [] } });
    const logs = await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs`);
    expect(logs.logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        device_id: gDevice.id,
        message: expect.stringMatching(
          /safety-g: template 'interfaces' renders an empty payload with operation replace on \/interfaces.*sent because the request set allow_empty_replace/,
        ),
      }),
    );
    target.setTree(structuredClone(INITIAL));
  });

  it('is refused for a gNMI replace of a list entry that carries only its key, leaving the device untouched', async () => {
    const path = '/interfaces/interface[name=eth0]';
    const tpl = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      {
        name: 'eth0-only-key',
        platform: 'openconfig-gnmi',
        config_format: 'json',
        operation: 'replace',
        target_path: path,
        source: '{"name": "eth0", "config": {"name": "eth0"{% if mtu %}, "mtu": {{ mtu }}{% endif %}}}',
      },
      201,
    );
    const stack = await api(c, token, 'POST', '/api/config/stacks', { name: 'eth0-only-key', services: [{ template_id: tpl.id }] }, 201);
    const values = (vars: Record<string, unknown>) => ({ variable_values: { '0': { devices: [gDevice.id], shared_vars: vars } } });
    const before = { tree: target.tree(), sets: target.setRequests.length };

    const res = await deploy(stack.id, [gDevice.id], { name: 'safety-key', ...values({}) });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({
      code: 'EMPTY_REPLACE_REFUSED',
      empty_replaces: [{ service: '0', template: 'eth0-only-key', device_id: gDevice.id, device_name: 'safety-g', target_path: path }],
    });
    expect(res.body.error).toContain(
      `template 'eth0-only-key' (service 0) renders an empty json payload for device safety-g with operation replace on ${path}`,
    );
    expect(await deploymentsNamed('safety-key')).toBe(0);
    expect({ tree: target.tree(), sets: target.setRequests.length }).toEqual(before);

    // With a leaf beside the key it replaces eth0's config.
    const ok = await deploy(stack.id, [gDevice.id], { name: 'safety-key', ...values({ mtu: 9000 }) });
    expect(ok.status, ok.text).toBe(201);
    expect((await waitFor(c, token, ok.body.id)).status).toBe('completed');
    expect(target.tree()).toMatchObject({ interfaces: { interface: [{ name: 'eth0', config: { name: 'eth0', mtu: 9000 } }] } });
    target.setTree(structuredClone(INITIAL));
  });

  it('does not refuse merge or delete, nor a replace with leaves', async () => {
    const merge = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      {
        name: 'merge',
        platform: 'openconfig-gnmi',
        config_format: 'json',
        operation: 'merge',
        target_path: '/interfaces',
        source: '{"interface": []}',
      },
      201,
    );
    const s = await api(c, token, 'POST', '/api/config/stacks', { name: 'merge', services: [{ template_id: merge.id }] }, 201);
    const res = await deploy(s.id, [gDevice.id], { name: 'safety-merge' });
    expect(res.status, res.text).toBe(201);
    expect((await waitFor(c, token, res.body.id)).status).toBe('completed');
    const full = await deploy(interfacesStack.id, [gDevice.id], {
      name: 'safety-full',
      variable_values: { '0': { devices: [gDevice.id], shared_vars: { interfaces: [{ name: 'eth0', mtu: 9000 }] } } },
    });
    expect(full.status, full.text).toBe(201);
    expect((await waitFor(c, token, full.body.id)).status).toBe('completed');
    expect(target.tree()).toMatchObject({ interfaces: { interface: [{ name: 'eth0', config: { mtu: 9000 } }] } });
    target.setTree(structuredClone(INITIAL));
  });
});

describe('empty pre-deployment backup', () => {
  /** A deployment of one new merge template (`fields`) to the device: its final state, the device's row and its job's result. */
  async function deployOne(device: any, name: string, fields: Record<string, unknown>) {
    const tpl = await api(c, token, 'POST', '/api/config/templates', { name, operation: 'merge', ...fields }, 201);
    const stack = await api(c, token, 'POST', '/api/config/stacks', { name, services: [{ template_id: tpl.id }] }, 201);
    const res = await deploy(stack.id, [device.id], { name });
    expect(res.status, res.text).toBe(201);
    const done = await waitFor(c, token, res.body.id);
    const { job_id, changed } = await c.db('deployment_devices').where({ deployment_id: done.id }).first('job_id', 'changed');
    const job = await c.db('jobs').where({ id: job_id }).first('result');
    return { done, row: { ...done.devices[0], changed }, job };
  }

  const REFUSED = /checking the backup failed: the pre-deployment backup is empty .*: refusing to change a device that could not be restored/;

  it('fails a gNMI deploy before the push when Get / answers nothing, and a rollback to it is refused', async () => {
    // The target has config, but its Get answers no notification: a restore of that backup would replace / with {}.
    const tree = { system: { config: { hostname: 'keeps-me' } } };
    const empty = await startGnmiTarget({ initialTree: tree, faults: { emptyGet: true } });
    try {
      const device = await gnmiDevice(c, token, empty, 'safety-empty-g');
      const { done, row, job } = await deployOne(device, 'empty-gnmi', {
        platform: 'openconfig-gnmi',
        config_format: 'json',
        target_path: '/system/config',
        source: '{"hostname": "pushed"}',
      });
      expect(done.status).toBe('failed');
      expect(row).toMatchObject({ status: 'failed', changed: false });
      expect(row.error_message).toMatch(REFUSED);
      expect(job.result).toMatchObject({ applied: false, changed: null });
      expect(job.result.restored).toBeUndefined();
      expect(empty.setRequests).toEqual([]);
      expect(empty.tree()).toEqual(tree);

      // A restore or rollback of an empty backup is refused by the agent before it opens a session.
      const [jobId] = await c.services.jobs.submit([
        {
          orgId: org.orgId,
          kind: 'rollback',
          deviceId: device.id,
          params: { deployment_id: done.id, transport: 'gnmi', backup: { text: '{}\n', format: 'json', via: 'gnmi' }, purpose: 'rollback' },
          deadlineMs: 30_000,
        },
      ]);
      const [rollback] = await c.services.jobs.wait([jobId], 40_000);
      expect(rollback).toMatchObject({ status: 'failed', result: { restored: false } });
      expect(rollback.error).toMatch(/not rolled back: the pre-deployment backup is empty .*would replace the whole configuration with nothing/);
      expect(empty.setRequests).toEqual([]);
      expect(empty.tree()).toEqual(tree);
    } finally {
      await empty.close();
    }
  });

  it('fails a NETCONF deploy before the push when get-config answers no data', async () => {
    const blank = await startNetconfDevice({ candidate: false, rollbackOnError: false });
    try {
      const device = await netconfDevice(c, token, blank, 'safety-empty-n');
      const { done, row, job } = await deployOne(device, 'empty-netconf', {
        platform: 'ietf-netconf',
        config_format: 'xml',
        source: `<system xmlns="${NS}"><hostname>pushed</hostname></system>`,
      });
      expect(done.status).toBe('failed');
      expect(row).toMatchObject({ status: 'failed', changed: false });
      expect(row.error_message).toMatch(REFUSED);
      expect(job.result).toMatchObject({ applied: false, changed: null });
      expect(blank.rpcLog).not.toContain('edit-config');
      expect(blank.running()).toBe('');
    } finally {
      await blank.close();
    }
  });
});
