/**
 * A CLI push cut off mid-way (the device took a line, then never answered: a timeout, or a line
 * that cut the management path) is undone before the job reports: the session it hung in is
 * broken, so the pre-deployment backup goes back over a new one. So is a NETCONF or gNMI push whose
 * answer never came, and a NETCONF edit that a device without :rollback-on-error refused part-way.
 * Real controller and database, a real agent runtime with the real drivers against the simulators.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enrollAgent, startAgent, type Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget } from '../sim/gnmi/target';
import { startNetconfDevice } from '../sim/netconf/device';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { api, gnmiDevice, netconfDevice, sshDevice, until, waitFor } from './helpers';

const PASSWORD = 'cut-push-pw';
let c: TestController;
let org: Org;
let dev: SimSshDevice;
let agent: Awaited<ReturnType<typeof startAgent>>;

beforeAll(async () => {
  c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } } });
  org = await c.createOrgUser(['org_admin']);
  const { identity } = await enrollAgent(c, org);
  // Short command and commit timeouts: the hung line or commit fails the push in a second, not minutes.
  agent = await startAgent(c, identity, { limits: { commandTimeoutMs: 1_000, idleTimeoutMs: 1_000, commitTimeoutMs: 1_000 } });
  // Each shell takes one config line, then hangs; a new session is served normally.
  dev = await startSshDevice({ hostname: 'cut', password: PASSWORD, configScale: 4, faults: { stallConfigAfter: 1 } });
});

afterAll(async () => {
  await agent?.stop();
  await dev?.close();
  await c?.close();
});

/** Deploys a stack of one new template (`template`: its fields) to the device: the deployment, at the end. */
async function deployTemplate(deviceId: string, template: Record<string, unknown>) {
  const tpl = await api(c, org.token, 'POST', '/api/config/templates', template, 201);
  const services = [{ template_id: tpl.id }];
  const stack = await api(c, org.token, 'POST', '/api/config/stacks', { name: String(template.name), services }, 201);
  const created = await api(
    c,
    org.token,
    'POST',
    '/api/config/deployments',
    { stack_id: stack.id, name: String(template.name), target_devices: [{ device_id: deviceId }] },
    201,
  );
  return created;
}

it('restores the backup over a new session when the push hangs after the device took a line', async () => {
  const original = dev.config();
  const device = await sshDevice(c, org.token, dev, PASSWORD, 'cut');
  const created = await deployTemplate(device.id, {
    name: 'ntp',
    platform: 'vendor_xe-netconf',
    config_format: 'cli',
    target_path: 'ntp',
    source: 'ntp server 192.0.2.10\nntp server 192.0.2.11\nntp server 192.0.2.12',
  });

  const done = await waitFor(c, org.token, created.id);
  expect(done.status).toBe('failed');
  expect(done.devices[0].status).toBe('failed');
  expect(done.devices[0].error_message).toMatch(
    /line 2 of 3, which the device may have taken.*the device was restored from its pre-deployment backup/,
  );
  expect(dev.configLog).toContain('ntp server 192.0.2.10'); // the first line did go in
  expect(dev.config()).toBe(original);
  const { job_id } = await c.db('deployment_devices').where({ deployment_id: created.id }).first('job_id');
  const job = await c.db('jobs').where({ id: job_id }).first('result');
  expect(job.result).toMatchObject({ applied: false, restored: true });
  const messages = (await api(c, org.token, 'GET', `/api/config/deployments/${created.id}/logs?limit=1000`)).logs.map((l: any) => l.message);
  expect(messages).toContainEqual(expect.stringMatching(/restoring in the same session failed/));
  expect(messages).toContainEqual(expect.stringMatching(/restoring over a new session/));
});

it('restores the backup when the answer to a commit never came (it may have gone through)', async () => {
  // Junos-like: two set lines go into the candidate, then the session hangs at `commit confirmed 5`.
  const junos = await startSshDevice({
    dialect: 'vendor_junos',
    hostname: 'cut-j',
    password: PASSWORD,
    configScale: 3,
    faults: { stallConfigAfter: 2 },
  });
  try {
    const original = junos.config();
    const device = await sshDevice(c, org.token, junos, PASSWORD, 'cut-j');
    const created = await deployTemplate(device.id, {
      name: 'junos-ntp',
      platform: 'vendor_junos-netconf',
      config_format: 'cli',
      target_path: 'ntp',
      source: 'set system ntp server 192.0.2.20\nset system ntp server 192.0.2.21',
    });
    // Hung at the confirmed commit: the next session (the restore's) is served normally.
    await until('the push to hang at commit', () => junos.configLog.includes('commit confirmed 5'), 30_000);
    junos.setFaults({});
    const done = await waitFor(c, org.token, created.id);
    expect(done.devices[0].status).toBe('failed');
    expect(done.devices[0].error_message).toMatch(
      new RegExp(
        "during 'commit confirmed 5': the change may have been committed; if so, the device rolls it back by itself 5 minutes after " +
          "'commit confirmed 5' unless confirmed.*restored from its pre-deployment backup",
      ),
    );
    expect(junos.config()).toBe(original);
  } finally {
    await junos.close();
  }
});

it('restores over a new session when a NETCONF commit went in but its answer never came', async () => {
  const NS = 'urn:sb:test';
  // Candidate without confirmed commit: the commit applies, then the device goes silent mid-reply.
  const nc = await startNetconfDevice({
    initialConfig: `<system xmlns="${NS}"><hostname>factory</hostname></system>`,
    confirmedCommit: false,
    faults: { stallMidReply: 'commit' },
  });
  try {
    const original = nc.running();
    const device = await netconfDevice(c, org.token, nc, 'cut-nc');
    const created = await deployTemplate(device.id, {
      name: 'nc-hostname',
      platform: 'ietf-netconf',
      config_format: 'xml',
      operation: 'merge',
      source: `<system xmlns="${NS}"><hostname>cut</hostname></system>`,
    });
    await until('the commit to go in unanswered', () => nc.running().includes('<hostname>cut</hostname>'), 30_000);
    nc.faults = {};
    const done = await waitFor(c, org.token, created.id);
    expect(done.devices[0].status).toBe('failed');
    expect(done.devices[0].error_message).toMatch(/its answer never came: the change may have gone in.*restored from its pre-deployment backup/);
    expect(nc.running()).toBe(original);
  } finally {
    await nc.close();
  }
});

it('restores when a NETCONF device without :rollback-on-error took the first service of the edit and refused the second', async () => {
  const NS = 'urn:sb:test';
  // No candidate, no :rollback-on-error: the edit of running stops at the refused subtree and keeps those before it.
  const nc = await startNetconfDevice({
    initialConfig: `<system xmlns="${NS}"><hostname>factory</hostname></system>`,
    candidate: false,
    rollbackOnError: false,
    faults: { rejectMarker: 'REFUSED' },
  });
  try {
    const original = nc.running();
    const device = await netconfDevice(c, org.token, nc, 'stop-nc');
    const template = (name: string, source: string) =>
      api(c, org.token, 'POST', '/api/config/templates', { name, platform: 'ietf-netconf', config_format: 'xml', operation: 'merge', source }, 201);
    const ntp = await template('nc-ntp', `<ntp xmlns="${NS}"><server>192.0.2.30</server></ntp>`);
    const refused = await template('nc-refused', `<system xmlns="${NS}"><hostname>REFUSED</hostname></system>`);
    const services = [ntp, refused].map((t, order) => ({ template_id: t.id, order }));
    const stack = await api(c, org.token, 'POST', '/api/config/stacks', { name: 'stop-on-error', services }, 201);
    const body = { stack_id: stack.id, name: 'stop-on-error', target_devices: [{ device_id: device.id }] };
    const created = await api(c, org.token, 'POST', '/api/config/deployments', body, 201);

    const done = await waitFor(c, org.token, created.id);
    expect(done.devices[0].status).toBe('failed');
    expect(done.devices[0].error_message).toMatch(
      /value "REFUSED" is not allowed.*without :rollback-on-error the device keeps what it applied before the error.*restored from its pre-deployment backup/,
    );
    // One edit (both services), refused part-way, then the restore's edit; the device is its backup again.
    expect(nc.rpcLog.filter((op) => op === 'edit-config')).toHaveLength(2);
    expect(nc.running()).toBe(original);
    const { job_id } = await c.db('deployment_devices').where({ deployment_id: created.id }).first('job_id');
    const job = await c.db('jobs').where({ id: job_id }).first('result');
    expect(job.result).toMatchObject({ applied: false, restored: true });
    const messages = (await api(c, org.token, 'GET', `/api/config/deployments/${created.id}/logs?limit=1000`)).logs.map((l: any) => l.message);
    expect(messages).toContainEqual(expect.stringMatching(/push failed after part of the change may have been taken/));
    expect(messages).toContainEqual(expect.stringMatching(/the device is back on its pre-deployment config/));
  } finally {
    await nc.close();
  }
});

it('restores when a gNMI Set went in but its answer never came', async () => {
  const target = await startGnmiTarget({ initialTree: { system: { config: { hostname: 'factory' } } }, faults: { silentNthSet: 1 } });
  try {
    const original = structuredClone(target.tree());
    const device = await gnmiDevice(c, org.token, target, 'cut-gnmi');
    const created = await deployTemplate(device.id, {
      name: 'gnmi-hostname',
      platform: 'openconfig-gnmi',
      config_format: 'json',
      target_path: '/system/config',
      source: '{"hostname": "cut"}',
    });
    const done = await waitFor(c, org.token, created.id);
    expect(done.devices[0].status).toBe('failed');
    expect(done.devices[0].error_message).toMatch(/its answer never came: the change may have gone in.*restored from its pre-deployment backup/);
    expect(target.setRequests).toHaveLength(2); // the push, then the restore (replace /)
    expect(target.tree()).toEqual(original);
  } finally {
    await target.close();
  }
});

it('records a FortiOS device whose push saved a block before a refused line as changed: its backup cannot go back over SSH', async () => {
  const fw = await startSshDevice({ dialect: 'vendor_fw', hostname: 'fw-cut', password: PASSWORD, configScale: 3 });
  try {
    const device = await sshDevice(c, org.token, fw, PASSWORD, 'fw-cut');
    const created = await deployTemplate(device.id, {
      name: 'fw-tz-and-port',
      platform: 'vendor_xe-netconf',
      config_format: 'cli',
      target_path: 'system',
      source: [
        'config system global',
        'set timezone 12',
        'end',
        'config system interface',
        'edit "port1"',
        'set ip 10.0.0.300 255.255.255.0',
        'next',
        'end',
      ].join('\n'),
    });
    const done = await waitFor(c, org.token, created.id);
    expect(done.devices[0].status).toBe('failed');
    expect(done.devices[0].error_message).toMatch(/value parse error.*restoring the backup failed too.*no configuration replace over SSH/);
    // The first block is on the device, the half-typed interface is not; the row says the device changed.
    expect(fw.config()).toContain('set timezone 12');
    expect(fw.configLog).toContain('abort');
    const row = await c.db('deployment_devices').where({ deployment_id: created.id }).first('changed');
    expect(row.changed).toBe(true);
  } finally {
    await fw.close();
  }
});
