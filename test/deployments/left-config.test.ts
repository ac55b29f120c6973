/**
 * A deployment's backups never go back over a newer change: two deployments cannot change one
 * device at once (409 while the first is open), and a rollback (or an atomic stack's restore)
 * puts a backup back only while the device still runs the config the deployment left, unless the
 * rollback is forced. Real controller and database, a real agent with the gNMI driver, against
 * the gNMI simulator, whose tree is checked after each step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { agentFor, api, gnmiDevice, waitFor, hostnameTemplate } from './helpers';

let c: TestController;
let org: Org;
let agent: Awaited<ReturnType<typeof agentFor>>;
let templateId: string;
const targets: GnmiTarget[] = [];

const hostnameOf = (t: GnmiTarget) => (t.tree() as any).system.config.hostname as string;

async function deviceOn(hostname: string) {
  const target = await startGnmiTarget({ initialTree: { system: { config: { hostname } } } });
  targets.push(target);
  return { target, device: await gnmiDevice(c, org.token, target) };
}

/** A stack setting the hostname to `hostname`. */
function stackSetting(hostname: string, atomic = false) {
  return api(
    c,
    org.token,
    'POST',
    '/api/config/stacks',
    { name: `set-${hostname}`, atomic, services: [{ template_id: templateId, order: 0, variables: { hostname } }] },
    201,
  );
}

function deploy(stackId: string, deviceIds: string[], extra: Record<string, unknown> = {}) {
  return c.request('POST', '/api/config/deployments', {
    token: org.token,
    body: { stack_id: stackId, name: 'left-config', target_devices: deviceIds.map((device_id) => ({ device_id })), ...extra },
  });
}

async function deployed(stackId: string, deviceIds: string[]) {
  const res = await deploy(stackId, deviceIds);
  expect(res.status, res.text).toBe(201);
  return waitFor(c, org.token, res.body.id);
}

async function rolledBack(id: string, body?: unknown) {
  const res = await c.request('POST', `/api/config/deployments/${id}/rollback`, { token: org.token, body });
  expect(res.status, res.text).toBe(200);
  return waitFor(c, org.token, id, ['rolled_back', 'failed']);
}

beforeAll(async () => {
  c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } } });
  org = await c.createOrgUser(['org_admin']);
  agent = await agentFor(c, org);
  const tpl = await hostnameTemplate(c, org.token);
  templateId = tpl.id;
});

afterAll(async () => {
  await agent?.stop();
  await c?.close();
  await Promise.all(targets.map((t) => t.close()));
});

describe('one device, one open deployment', () => {
  it('refuses a second deployment (409) while the first is open; a dry run is never refused; once it ends, the next goes', async () => {
    const { target, device } = await deviceOn('factory');
    target.faults.delayMs = 400; // keeps the first deployment open for a while
    const first = await deploy((await stackSetting('first')).id, [device.id]);
    expect(first.status, first.text).toBe(201);

    const secondStack = await stackSetting('second');
    const second = await deploy(secondStack.id, [device.id]);
    expect(second.status, second.text).toBe(409);
    expect(second.body.error).toMatch(/^Refused: device .* is in deployment 'left-config' \(.*\), which is still (pending|in_progress)/);
    expect(second.body.busy).toEqual([expect.objectContaining({ deployment_id: first.body.id, device_name: device.name })]);
    expect(await c.db('deployments').where({ stack_id: secondStack.id }).first()).toBeUndefined(); // nothing half-written

    const preview = await deploy((await stackSetting('preview')).id, [device.id], { dry_run: true });
    expect(preview.status, preview.text).toBe(201);

    expect((await waitFor(c, org.token, first.body.id)).status).toBe('completed');
    target.faults.delayMs = 0;
    expect((await deployed((await stackSetting('after')).id, [device.id])).status).toBe('completed');
    expect(hostnameOf(target)).toBe('after');
  });

  it("another organization cannot deploy to this organization's device (400, not 409: it does not see the device)", async () => {
    const other = await c.createOrgUser(['org_admin']);
    const { target, device } = await deviceOn('factory');
    target.faults.delayMs = 300;
    const mine = await deploy((await stackSetting('mine')).id, [device.id]);
    expect(mine.status).toBe(201);
    const theirs = await c.request('POST', '/api/config/deployments', {
      token: other.token,
      body: { stack_id: mine.body.stack_id, name: 'x', target_devices: [{ device_id: device.id }] },
    });
    // Their request names this organization's stack and device: not found for them, not busy.
    expect(theirs.status, theirs.text).toBe(400);
    expect(theirs.body.error).toMatch(/^Stack resolution failed/);
    await waitFor(c, org.token, mine.body.id);
  });
});

describe('rollback onto the config the deployment left, only', () => {
  it('refuses a device changed by hand since the deployment, leaves it as it is, and puts the backup back when forced', async () => {
    const { target, device } = await deviceOn('factory');
    const done = await deployed((await stackSetting('deployed')).id, [device.id]);
    expect(done.status).toBe('completed');
    expect(hostnameOf(target)).toBe('deployed');

    target.setTree({ system: { config: { hostname: 'by-hand' } } });
    const refused = await rolledBack(done.id);
    expect(refused.status).toBe('failed');
    expect(refused.devices[0].status).toBe('rollback_failed');
    expect(refused.devices[0].error_message).toMatch(
      /^Rollback refused: not rolled back: the running config is no longer the one this deployment left .*"force": true/,
    );
    expect(hostnameOf(target)).toBe('by-hand');
    expect(target.setRequests).toHaveLength(1); // the deployment's own push only

    const forced = await rolledBack(done.id, { force: true });
    expect(forced.status).toBe('rolled_back');
    expect(hostnameOf(target)).toBe('factory');
    const logs = await api(c, org.token, 'GET', `/api/config/deployments/${done.id}/logs?limit=1000`);
    expect(logs.logs.map((l: { message: string }) => l.message)).toContainEqual(expect.stringMatching(/forced: also onto devices changed since/));
  });

  it("rolling back an earlier deployment keeps a later one's change; rolling back in reverse order unwinds both", async () => {
    const { target, device } = await deviceOn('factory');
    const a = await deployed((await stackSetting('a')).id, [device.id]);
    const b = await deployed((await stackSetting('b')).id, [device.id]);
    expect(hostnameOf(target)).toBe('b');

    expect((await rolledBack(a.id)).devices[0].status).toBe('rollback_failed');
    expect(hostnameOf(target)).toBe('b');

    expect((await rolledBack(b.id)).status).toBe('rolled_back');
    expect(hostnameOf(target)).toBe('a');
    expect((await rolledBack(a.id)).status).toBe('rolled_back');
    expect(hostnameOf(target)).toBe('factory');
  });

  it("a device whose deploy failed is rolled back only while it is still on its backup: a later deployment's change stays", async () => {
    const { target, device } = await deviceOn('factory');
    target.faults.failSetPaths = ['/system'];
    const failed = await deployed((await stackSetting('refused')).id, [device.id]);
    expect(failed.devices[0].status).toBe('failed');
    target.faults.failSetPaths = [];
    await deployed((await stackSetting('later')).id, [device.id]);
    expect(hostnameOf(target)).toBe('later');

    expect((await rolledBack(failed.id)).devices[0].status).toBe('rollback_failed');
    expect(hostnameOf(target)).toBe('later');
  });

  it('a device already on its backup is rolled back without a push (a retried or redelivered rollback)', async () => {
    const { target, device } = await deviceOn('factory');
    const done = await deployed((await stackSetting('undone-by-hand')).id, [device.id]);
    target.setTree({ system: { config: { hostname: 'factory' } } }); // as the backup
    const pushes = target.setRequests.length;
    const rolled = await rolledBack(done.id);
    expect(rolled.status).toBe('rolled_back');
    expect(target.setRequests).toHaveLength(pushes);
    const logs = await api(c, org.token, 'GET', `/api/config/deployments/${done.id}/logs?limit=1000`);
    expect(logs.logs.map((l: { message: string }) => l.message)).toContainEqual(
      expect.stringMatching(/already equals the pre-deployment backup; nothing pushed/),
    );
  });

  it('a body that is not an object, or has unknown fields, is a 400', async () => {
    const { device } = await deviceOn('factory');
    const done = await deployed((await stackSetting('strict')).id, [device.id]);
    const bad = await c.request('POST', `/api/config/deployments/${done.id}/rollback`, { token: org.token, body: { force: 'yes' } });
    expect(bad.status, bad.text).toBe(400);
    const unknown = await c.request('POST', `/api/config/deployments/${done.id}/rollback`, { token: org.token, body: { forse: true } });
    expect(unknown.status, unknown.text).toBe(400);
  });
});
