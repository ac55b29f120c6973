/**
 * Dry runs end to end: real controller and PostgreSQL, a real agent with the real drivers,
 * against the gNMI, NETCONF and SSH CLI simulators. A dry run computes each device's diff and
 * changes nothing (no Set, no commit, no configuration mode, no backup); the same change deployed
 * for real afterwards produces exactly the diff the dry run showed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, type Json } from '../../agent/src/drivers/gnmi/json-tree';
import { unifiedDiff } from '../../shared/src/diff/unified';
import type { Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { agentFor, api, gnmiDevice, netconfDevice, sshDevice, waitFor } from './helpers';

const DRY_FINAL = ['dry_run_completed', 'dry_run_failed', 'completed', 'failed'];
const NS = 'urn:sb:dry';
const SSH_PASSWORD = 'dry-run-ssh-pw';
const INITIAL: Json = {
  system: { config: { hostname: 'factory' } },
  interfaces: { interface: [{ name: 'eth0', config: { name: 'eth0', mtu: 1500 } }] },
};

let c: TestController;
let org: Org;
let token: string;
let agent: Awaited<ReturnType<typeof agentFor>>;
const sims: { close(): Promise<void> }[] = [];

function deploy(stackId: string, deviceId: string, shared_vars: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return c.request('POST', '/api/config/deployments', {
    token,
    body: {
      stack_id: stackId,
      name: extra.dry_run ? 'dry' : 'real',
      target_devices: [{ device_id: deviceId }],
      variable_values: { '0': { devices: [deviceId], shared_vars } },
      ...extra,
    },
  });
}

/** Runs a dry run to its end; answers the deployment with devices. */
async function dryRun(stackId: string, deviceId: string, shared_vars: Record<string, unknown>) {
  const res = await deploy(stackId, deviceId, shared_vars, { dry_run: true });
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ status: 'pending', dry_run: true });
  return waitFor(c, token, res.body.id, DRY_FINAL);
}

async function realRun(stackId: string, deviceId: string, shared_vars: Record<string, unknown>) {
  const res = await deploy(stackId, deviceId, shared_vars);
  expect(res.status, res.text).toBe(201);
  const done = await waitFor(c, token, res.body.id);
  expect(done.status, JSON.stringify(done.devices)).toBe('completed');
  return done;
}

/** What a dry run must not leave: a stored config version, or a rollback. */
async function expectNoTrace(deployment: any, deviceId: string) {
  expect(deployment.devices.every((d: any) => d.backup_config_id === null)).toBe(true);
  expect((await api(c, token, 'GET', `/api/config/devices/${deviceId}/configs`)).total).toBe(0);
  const rollback = await c.request('POST', `/api/config/deployments/${deployment.id}/rollback`, { token });
  expect(rollback.status).toBe(400);
  const kinds = await c.db('jobs').where({ group_id: deployment.id }).pluck('kind');
  expect(kinds).toEqual(['dry_run']);
}

beforeAll(async () => {
  c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } } });
  org = await c.createOrgUser(['org_admin']);
  token = org.token;
  agent = await agentFor(c, org);
});

afterAll(async () => {
  await agent?.stop();
  await c?.close();
  await Promise.all(sims.map((s) => s.close().catch(() => undefined)));
});

describe('dry run over gNMI', () => {
  let target: GnmiTarget;
  let device: any;
  let stack: any;
  beforeAll(async () => {
    target = await startGnmiTarget({ initialTree: structuredClone(INITIAL) });
    sims.push(target);
    device = await gnmiDevice(c, token, target, 'dry-g');
    const interfaces = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      {
        name: 'dry-interfaces',
        platform: 'openconfig-gnmi',
        config_format: 'json',
        operation: 'replace',
        target_path: '/interfaces',
        source:
          '{"interface": [{% for i in interfaces %}{"name": "{{ i.name }}", "config": {"name": "{{ i.name }}", "mtu": {{ i.mtu }}}}{% if not ' +
          'loop.last %},{% endif %}{% endfor %}]}',
      },
      201,
    );
    stack = await api(c, token, 'POST', '/api/config/stacks', { name: 'dry-g', services: [{ template_id: interfaces.id }] }, 201);
  });

  it('reports the diff of Get-then-Set applied locally, sends no Set, stores no backup; the real run gives that diff', async () => {
    const vars = {
      interfaces: [
        { name: 'eth0', mtu: 9000 },
        { name: 'eth1', mtu: 1500 },
      ],
    };
    const sets = target.setRequests.length;
    const done = await dryRun(stack.id, device.id, vars);
    expect(done.status, JSON.stringify(done.devices)).toBe('dry_run_completed');
    expect(done.succeeded_count).toBe(1);
    const diff: string = done.devices[0].dry_run_diff;
    expect(diff).toContain('-          "mtu": 1500,');
    expect(diff).toContain('+          "mtu": 9000,');
    expect(diff).toContain('+          "name": "eth1"');
    expect(target.tree()).toEqual(INITIAL);
    expect(target.setRequests.length).toBe(sets);
    await expectNoTrace(done, device.id);
    const logs = (await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs`)).logs.map((l: any) => l.message);
    expect(logs).toContainEqual(expect.stringMatching(/^dry-g: dry run: would add \d+ lines and remove \d+ lines? \(local: applied the Set/));
    expect(logs).toContainEqual('Dry run completed: 1 device would change, 0 would not; nothing was changed');

    await realRun(stack.id, device.id, vars);
    expect(diff).toBe(unifiedDiff(canonicalJson(INITIAL), canonicalJson(target.tree())).diff);
    // Now the device matches: a second dry run finds nothing to change.
    const again = await dryRun(stack.id, device.id, vars);
    expect(again.status).toBe('dry_run_completed');
    expect(again.devices[0].dry_run_diff).toBe('');
  });

  it('runs from an instance with the body {"dry_run": true}', async () => {
    const instance = await api(
      c,
      token,
      'POST',
      '/api/config/instances',
      {
        stack_id: stack.id,
        name: 'dry-instance',
        target_devices: [{ device_id: device.id }],
        variable_values: { '0': { devices: [device.id], shared_vars: { interfaces: [{ name: 'eth0', mtu: 1400 }] } } },
      },
      201,
    );
    const before = target.tree();
    const res = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token, body: { dry_run: true } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ dry_run: true, instance_id: instance.id });
    const done = await waitFor(c, token, res.body.id, DRY_FINAL);
    expect(done.status).toBe('dry_run_completed');
    expect(done.devices[0].dry_run_diff).toContain('+          "mtu": 1400,');
    expect(target.tree()).toEqual(before);
  });

  it('shows an empty replace instead of refusing it, and says a real run would be refused', async () => {
    const done = await dryRun(stack.id, device.id, { interfaces: [] });
    expect(done.status).toBe('dry_run_completed');
    expect(done.devices[0].dry_run_diff).toMatch(/^-\s+"name": "eth0"/m);
    const logs = (await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs`)).logs.map((l: any) => l.message);
    expect(logs).toContainEqual(expect.stringContaining('a real run is refused unless it sets allow_empty_replace'));
    expect((await deploy(stack.id, device.id, { interfaces: [] })).body.code).toBe('EMPTY_REPLACE_REFUSED');
  });
});

/** A NETCONF simulator, its device and a stack merging `hostname` into it. */
async function hostnameOverNetconf(name: string, options: Parameters<typeof startNetconfDevice>[0]) {
  const sim: NetconfDevice = await startNetconfDevice(options);
  sims.push(sim);
  const device = await netconfDevice(c, token, sim, name);
  const tpl = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    {
      name,
      platform: 'ietf-netconf',
      config_format: 'xml',
      operation: 'merge',
      source: `<system xmlns="${NS}"><hostname>{{ hostname }}</hostname></system>`,
    },
    201,
  );
  const stack = await api(c, token, 'POST', '/api/config/stacks', { name, services: [{ template_id: tpl.id }] }, 201);
  return { sim, device, stack };
}

describe('dry run over NETCONF', () => {
  it('edits the candidate, reads it back, discards it and unlocks; running is untouched; the real run gives that diff', async () => {
    const { sim, device, stack } = await hostnameOverNetconf('dry-n', {
      initialConfig: `<system xmlns="${NS}"><hostname>factory</hostname><location>lab</location></system>`,
    });
    const running = sim.running();
    sim.rpcLog.length = 0;

    const done = await dryRun(stack.id, device.id, { hostname: 'edge7' });
    expect(done.status, JSON.stringify(done.devices)).toBe('dry_run_completed');
    const diff: string = done.devices[0].dry_run_diff;
    expect(diff.split('\n').filter((l) => /^[-+]/.test(l))).toEqual(['-  <hostname>factory</hostname>', '+  <hostname>edge7</hostname>']);
    expect(sim.running()).toBe(running);
    expect(sim.candidate()).toBe(running);
    expect(sim.lockHolder('candidate')).toBeUndefined();
    expect(sim.rpcLog).toEqual(expect.arrayContaining(['lock', 'edit-config', 'get-config', 'discard-changes', 'unlock']));
    expect(sim.rpcLog).not.toContain('commit');
    await expectNoTrace(done, device.id);

    const real = await realRun(stack.id, device.id, { hostname: 'edge7' });
    const before = await api(c, token, 'GET', `/api/config/devices/${device.id}/configs`);
    const backup = before.configs.find((v: any) => v.id === real.devices[0].backup_config_id);
    await api(c, token, 'POST', `/api/config/devices/${device.id}/pull?method=structured`, undefined, 201);
    const actual = await api(
      c,
      token,
      'GET',
      `/api/config/devices/${device.id}/diff-versions?old_version=${backup.version}&new_version=${backup.version + 1}&reveal=true`,
    );
    expect(diff).toBe(actual.diff);
  });

  it('fails the device with the reason when the device has no candidate datastore, changing nothing', async () => {
    const { sim, device, stack } = await hostnameOverNetconf('dry-plain', {
      candidate: false,
      initialConfig: `<system xmlns="${NS}"><hostname>plain</hostname></system>`,
    });
    const running = sim.running();
    const done = await dryRun(stack.id, device.id, { hostname: 'x' });
    expect(done.status).toBe('dry_run_failed');
    expect(done.error_message).toMatch(/dry run failed on 1 device/);
    expect(done.devices[0]).toMatchObject({ status: 'failed', dry_run_diff: null, error_message: expect.stringMatching(/no :candidate datastore/) });
    expect(sim.running()).toBe(running);
  });
});

/** An SSH CLI simulator of `dialect`, its device, and a stack of one cli template. */
async function cliOnSim(name: string, dialect: string, source: string, configScale = 1) {
  const sim: SimSshDevice = await startSshDevice({ dialect, hostname: name, password: SSH_PASSWORD, configScale });
  sims.push(sim);
  const device = await sshDevice(c, token, sim, SSH_PASSWORD, name);
  const tpl = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    { name, platform: 'vendor_xe-netconf', config_format: 'cli', target_path: name, source },
    201,
  );
  const stack = await api(c, token, 'POST', '/api/config/stacks', { name, services: [{ template_id: tpl.id }] }, 201);
  return { sim, device, stack };
}

describe('dry run over SSH CLI', () => {
  it('types the lines into a model of the running config, never into the device; the real run gives that diff', async () => {
    const { sim, device, stack } = await cliOnSim(
      'dry-s',
      'vendor_ios',
      '{% for s in servers %}ntp server {{ s }}\n{% endfor %}interface GigabitEthernet0/1\n description {{ description }}\nexit\n',
      2,
    );
    const original = sim.config();
    const vars = { servers: ['192.0.2.10', '192.0.2.11'], description: 'to core (dry)' };

    const done = await dryRun(stack.id, device.id, vars);
    expect(done.status, JSON.stringify(done.devices)).toBe('dry_run_completed');
    const diff: string = done.devices[0].dry_run_diff;
    expect(diff).toContain('+ntp server 192.0.2.10');
    expect(diff).toContain('+ description to core (dry)');
    expect(sim.config()).toBe(original);
    await expectNoTrace(done, device.id);

    await realRun(stack.id, device.id, vars);
    expect(sim.config()).not.toBe(original);
    expect(diff).toBe(unifiedDiff(original, sim.config()).diff);
  });

  it("refuses a line holding a '?' in the dry run as the push does, before a line is typed", async () => {
    // The CLI takes a typed `?` as a request for help: `description link up?` would become `description link up`.
    const { sim, device, stack } = await cliOnSim('dry-q', 'vendor_ios', 'interface GigabitEthernet0/1\n description {{ description }}\nexit\n', 2);
    const original = sim.config();
    const done = await dryRun(stack.id, device.id, { description: 'link up?' });
    expect(done.status).toBe('dry_run_failed');
    expect(done.devices[0].error_message).toMatch(/line 2 of 3 \('description link up\?'\) holds a '\?', which the CLI takes as a request for help/);
    const res = await deploy(stack.id, device.id, { description: 'link up?' });
    const real = await waitFor(c, token, res.body.id);
    expect(real.status).toBe('failed');
    expect(real.devices[0].error_message).toMatch(/nothing was typed/);
    expect(sim.configLog).toEqual([]);
    expect(sim.config()).toBe(original);
  });

  it('Junos in braces: applies the set lines to the statement tree, changing nothing; the real run gives that diff', async () => {
    const { sim, device, stack } = await cliOnSim(
      'dry-j',
      'vendor_junos',
      'set system ntp server {{ server }}\nset interfaces ge-0/0/1 description "{{ description }}"\n',
      3,
    );
    const original = sim.config();
    const vars = { server: '192.0.2.77', description: 'to core (dry)' };
    const done = await dryRun(stack.id, device.id, vars);
    expect(done.status, JSON.stringify(done.devices)).toBe('dry_run_completed');
    const diff: string = done.devices[0].dry_run_diff;
    expect(diff).toMatch(/^\+ {8}server 192\.0\.2\.77;$/m);
    expect(diff).toMatch(/^\+ {8}description "to core \(dry\)";$/m);
    expect(sim.config()).toBe(original);
    const logs = (await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs`)).logs.map((l: any) => l.message);
    expect(logs).toContainEqual(expect.stringContaining('(approximate: typed the CLI lines into a model of the running config'));

    await realRun(stack.id, device.id, vars);
    expect(diff).toBe(unifiedDiff(original, sim.config()).diff);
  });

  it("shows the device's secrets in the diff masked, as stored configs are", async () => {
    const { device, stack } = await cliOnSim('dry-m', 'vendor_ios', 'snmp-server community {{ community }} RO\n');
    const done = await dryRun(stack.id, device.id, { community: 'Sup3r-c0mmunity' });
    expect(done.status).toBe('dry_run_completed');
    const diff: string = done.devices[0].dry_run_diff;
    expect(diff).toMatch(/^\+snmp-server community <secret:[0-9a-f]{8}> RO$/m);
    expect(diff).not.toContain('Sup3r-c0mmunity');
    const stored = await c.db('deployment_devices').where({ deployment_id: done.id, device_id: device.id }).first('dry_run_diff');
    expect(stored.dry_run_diff).toContain('+snmp-server community Sup3r-c0mmunity RO');
  });

  it('masks each line of a multi-line credential when the hunk shows only the end of it', async () => {
    // The profile's password spans lines and sits in the device's banner; a line added before
    // `end` makes a hunk whose context is the banner's last lines, never the whole password.
    const password = ['break-glass passphrase:', 'correct horse battery', 'staple 7719-2231', 'vault B-12'].join('\n');
    const sim: SimSshDevice = await startSshDevice({ dialect: 'vendor_ios', hostname: 'dry-ml', password });
    sims.push(sim);
    sim.setConfig(`hostname dry-ml\n!\nbanner motd ^C\n${password}\n^C\nend\n`);
    const device = await sshDevice(c, token, sim, password, 'dry-ml');
    const tpl = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      { name: 'dry-ml', platform: 'vendor_xe-netconf', config_format: 'cli', target_path: 'dry-ml', source: 'ntp server {{ server }}\n' },
      201,
    );
    const stack = await api(c, token, 'POST', '/api/config/stacks', { name: 'dry-ml', services: [{ template_id: tpl.id }] }, 201);

    const done = await dryRun(stack.id, device.id, { server: '192.0.2.99' });
    expect(done.status, JSON.stringify(done.devices)).toBe('dry_run_completed');
    const diff: string = done.devices[0].dry_run_diff;
    expect(diff.split('\n').slice(-6)).toEqual(['@@ -6,4 +6,5 @@', ' ********', ' ********', ' ^C', '+ntp server 192.0.2.99', ' end']);
    for (const line of password.split('\n')) expect(diff).not.toContain(line);
    const stored = await c.db('deployment_devices').where({ deployment_id: done.id, device_id: device.id }).first('dry_run_diff');
    expect(stored.dry_run_diff).toContain(' vault B-12\n');
  });
});
