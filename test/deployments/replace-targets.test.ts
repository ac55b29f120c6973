/**
 * What a structured replace may take out. NETCONF: the empty-replace guard checks each element
 * the push replaces (the one target_path selects, any element with an inline
 * nc:operation="replace"), not the whole fragment; inline delete and remove are the template's
 * own deletions and pass. Both transports: a replace or delete with no target_path, or on the
 * root, is refused by stack render, deployments, dry runs and instance runs (for templates saved
 * before templates refused that shape). Real controller, agent and drivers against the NETCONF and
 * gNMI simulators, whose configs are checked to be untouched by what is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { agentFor, api, gnmiDevice, netconfDevice, waitFor } from './helpers';

const NS = 'urn:sb:audit';
const NC = 'xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"';
const ENTRIES = '<entry><name>10</name><action>permit</action></entry><entry><name>20</name><action>deny</action></entry>';
const INITIAL =
  `<acls xmlns="${NS}"><acl><name>MGMT</name><entries>${ENTRIES}</entries></acl></acls>` +
  `<interfaces xmlns="${NS}"><interface><name>eth0</name><mtu>1500</mtu></interface><interface><name>eth1</name><mtu>1500</mtu></interface></interfaces>` +
  `<banner xmlns="${NS}"><motd>authorised use only</motd></banner>`;
const TREE = { interfaces: { interface: [{ name: 'eth0', config: { mtu: 1500 } }] } };

let c: TestController;
let org: Org;
let token: string;
let agent: Awaited<ReturnType<typeof agentFor>>;
let sim: NetconfDevice;
let target: GnmiTarget;
let nDevice: any;
let gDevice: any;

function deploy(stackId: string, device: any, extra: Record<string, unknown> = {}) {
  return c.request('POST', '/api/config/deployments', {
    token,
    body: { stack_id: stackId, name: 'targets', target_devices: [{ device_id: device.id }], ...extra },
  });
}

/** A stack of one new template (`body` completes it, a NETCONF xml one unless it says otherwise) and the template. */
async function stackOf(body: Record<string, unknown>) {
  const tpl = await api(c, token, 'POST', '/api/config/templates', { platform: 'ietf-netconf', config_format: 'xml', ...body }, 201);
  const stack = await api(c, token, 'POST', '/api/config/stacks', { name: `s-${tpl.name}`, services: [{ template_id: tpl.id }] }, 201);
  return { tpl, stack };
}

const shared = (device: any, vars: Record<string, unknown>) => ({ variable_values: { '0': { devices: [device.id], shared_vars: vars } } });

/** Expects the answer of a deployment request to be 201, then the deployment to complete. */
async function completes(res: Awaited<ReturnType<typeof deploy>>) {
  expect(res.status, res.text).toBe(201);
  expect((await waitFor(c, token, res.body.id)).status, JSON.stringify(res.body)).toBe('completed');
}

async function deploymentCount(): Promise<number> {
  return Number((await c.db('deployments').where({ org_id: org.orgId }).count('* as n').first())?.n ?? 0);
}

beforeAll(async () => {
  c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } } });
  org = await c.createOrgUser(['org_admin']);
  token = org.token;
  agent = await agentFor(c, org);
  sim = await startNetconfDevice({ initialConfig: INITIAL });
  target = await startGnmiTarget({ initialTree: TREE });
  nDevice = await netconfDevice(c, token, sim, 'targets-n');
  gDevice = await gnmiDevice(c, token, target, 'targets-g');
});

afterAll(async () => {
  await agent?.stop();
  await c?.close();
  await Promise.all([sim, target].map((s) => s?.close().catch(() => undefined)));
});

describe('NETCONF empty replace, element by element', () => {
  it('refuses a replace of the element target_path selects when it is empty, though an ancestor carries the list key', async () => {
    const path = '/acls/acl[name=MGMT]/entries';
    const { stack } = await stackOf({
      name: 'acl-entries',
      operation: 'replace',
      target_path: path,
      source:
        `<acls xmlns="${NS}"><acl><name>MGMT</name><entries>{% for e in entries %}<entry><name>{{ e.seq }}</name>` +
        `<action>{{ e.action }}</action></entry>{% endfor %}</entries></acl></acls>`,
    });
    const before = { running: sim.running(), deployments: await deploymentCount() };
    const res = await deploy(stack.id, nDevice, shared(nDevice, { entries: [] }));
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({
      code: 'EMPTY_REPLACE_REFUSED',
      empty_replaces: [{ service: '0', template: 'acl-entries', device_id: nDevice.id, device_name: 'targets-n', target_path: path }],
    });
    expect(res.body.error).toBe(
      `Refused: template 'acl-entries' (service 0) renders an empty xml payload for device targets-n with operation replace on ${path}, ` +
        `which would empty that part of the device's config. Check the variables, or send allow_empty_replace: true if that is what you mean`,
    );
    expect({ running: sim.running(), deployments: await deploymentCount() }).toEqual(before);

    // A dry run shows it instead, and says a real run is refused.
    const dry = await deploy(stack.id, nDevice, { ...shared(nDevice, { entries: [] }), dry_run: true });
    expect(dry.status, dry.text).toBe(201);
    expect((await waitFor(c, token, dry.body.id, ['dry_run_completed', 'dry_run_failed'])).status).toBe('dry_run_completed');
    const logs = await api(c, token, 'GET', `/api/config/deployments/${dry.body.id}/logs`);
    expect(logs.logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message:
          `targets-n: template 'acl-entries' renders an empty payload with operation replace on ${path}, which empties that part of the ` +
          'config; a real run is refused unless it sets allow_empty_replace',
      }),
    );
    expect(sim.running()).toBe(before.running);

    // With entries it replaces them.
    await completes(await deploy(stack.id, nDevice, shared(nDevice, { entries: [{ seq: 30, action: 'permit' }] })));
    expect(sim.running()).toContain('<name>30</name>');
    expect(sim.running()).not.toContain('<name>10</name>');
    sim.setRunning(INITIAL);
  });

  it('refuses an empty element carrying nc:operation="replace" in a merge template, and sends it with allow_empty_replace', async () => {
    const { stack } = await stackOf({
      name: 'inline-replace',
      operation: 'merge',
      source:
        `<interfaces xmlns="${NS}" ${NC} nc:operation="replace">{% for i in interfaces %}<interface><name>{{ i.name }}</name>` +
        `<mtu>{{ i.mtu }}</mtu></interface>{% endfor %}</interfaces>`,
    });
    const before = { running: sim.running(), deployments: await deploymentCount() };
    const res = await deploy(stack.id, nDevice, shared(nDevice, { interfaces: [] }));
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('EMPTY_REPLACE_REFUSED');
    expect(res.body.error).toContain(
      `template 'inline-replace' (service 0) renders an empty xml payload for device targets-n with operation replace on /interfaces`,
    );
    expect(res.body.empty_replaces).toEqual([expect.objectContaining({ target_path: '/interfaces' })]);
    const instance = await api(
      c,
      token,
      'POST',
      '/api/config/instances',
      { stack_id: stack.id, name: 'inline', target_devices: [{ device_id: nDevice.id }], ...shared(nDevice, { interfaces: [] }) },
      201,
    );
    const run = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token });
    expect(run.status, run.text).toBe(400);
    expect(run.body.code).toBe('EMPTY_REPLACE_REFUSED');
    expect({ running: sim.running(), deployments: await deploymentCount() }).toEqual(before);

    await completes(await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token, body: { allow_empty_replace: true } }));
    expect(sim.running()).not.toContain('eth0');
    sim.setRunning(INITIAL);
  });

  it('lets inline delete and remove through: the template author deletes on purpose', async () => {
    const { stack } = await stackOf({
      name: 'drop-banner',
      operation: 'merge',
      source:
        `<banner xmlns="${NS}" ${NC} nc:operation="remove"/>` +
        `<interfaces xmlns="${NS}" ${NC}><interface nc:operation="delete"><name>{{ gone }}</name></interface></interfaces>`,
    });
    await completes(await deploy(stack.id, nDevice, shared(nDevice, { gone: 'eth1' })));
    expect(sim.running()).not.toContain('banner');
    expect(sim.running()).not.toContain('eth1');
    expect(sim.running()).toContain('<name>eth0</name>');
    sim.setRunning(INITIAL);
  });
});

describe('a replace or delete of the whole config, from a template saved before templates refused it', () => {
  /** A template saved as a merge, then turned into `fields` in the database as an older controller allowed. */
  async function legacy(body: Record<string, unknown>, fields: Record<string, unknown>) {
    const made = await stackOf({ ...body, operation: 'merge' });
    await c.db('config_templates').where({ id: made.tpl.id }).update(fields);
    return made;
  }

  it('refuses a NETCONF replace with no target_path at stack render, deployment, dry run and instance run; eth1 survives', async () => {
    const { tpl, stack } = await legacy(
      {
        name: 'eth0-mtu',
        source: `<interfaces xmlns="${NS}"><interface><name>eth0</name><mtu>{{ mtu }}</mtu></interface></interfaces>`,
      },
      { operation: 'replace' },
    );
    const message =
      "Stack resolution failed: template 'eth0-mtu' (service 0) has operation replace and no target_path, so the NETCONF push would " +
      'replace each top-level element the template renders as a whole, removing whatever the template does not list under it. A replace ' +
      'needs a target_path naming the subtree it replaces, e.g. /interfaces/interface[name=eth0]; to add to the config without removing ' +
      `anything use operation merge. Fix the template with PUT /api/config/templates/${tpl.id}`;
    const before = { running: sim.running(), deployments: await deploymentCount() };
    const values = shared(nDevice, { mtu: 9000 });
    const render = await c.request('POST', `/api/config/stacks/${stack.id}/render`, { token, body: values });
    for (const res of [render, await deploy(stack.id, nDevice, values), await deploy(stack.id, nDevice, { ...values, dry_run: true })]) {
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual({ code: 'TARGET_PATH_REQUIRED', error: message, service: '0', template_id: tpl.id, template: 'eth0-mtu' });
    }
    const instance = await api(
      c,
      token,
      'POST',
      '/api/config/instances',
      { stack_id: stack.id, name: 'mtu', target_devices: [{ device_id: nDevice.id }], ...values },
      201,
    );
    const run = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token, body: { allow_empty_replace: true } });
    expect(run.status, run.text).toBe(400);
    expect(run.body.code).toBe('TARGET_PATH_REQUIRED');
    expect({ running: sim.running(), deployments: await deploymentCount() }).toEqual(before);

    // Named, the replace changes eth0 alone.
    await api(c, token, 'PUT', `/api/config/templates/${tpl.id}`, { target_path: '/interfaces/interface[name=eth0]' });
    await completes(await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token }));
    expect(sim.running()).toMatch(/<name>eth0<\/name>\s*<mtu>9000<\/mtu>/);
    expect(sim.running()).toMatch(/<name>eth1<\/name>\s*<mtu>1500<\/mtu>/);
    sim.setRunning(INITIAL);
  });

  it('refuses a gNMI replace or delete of the root before any Set', async () => {
    const before = { tree: target.tree(), sets: target.setRequests.length, deployments: await deploymentCount() };
    for (const [operation, path] of [
      ['replace', '/'],
      ['delete', 'openconfig:/'],
    ]) {
      const { stack } = await legacy(
        { name: `root-${operation}`, platform: 'openconfig-gnmi', config_format: 'json', target_path: path, source: '{"interfaces": {}}' },
        { operation },
      );
      const res = await deploy(stack.id, gDevice);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('ROOT_TARGET_REFUSED');
      expect(res.body.error).toContain(
        `template 'root-${operation}' (service 0) has operation ${operation} on target_path '${path}', the root: gNMI would ${operation} the ` +
          "device's entire configuration",
      );
    }
    expect({ tree: target.tree(), sets: target.setRequests.length, deployments: await deploymentCount() }).toEqual(before);
  });
});
