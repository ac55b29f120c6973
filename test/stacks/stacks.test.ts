import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { fixtures } from './fixtures';

let c: TestController;
let token: string;
let otherToken: string;
let f: ReturnType<typeof fixtures>;
let profileId: string;
let leaf1: any;
let leaf2: any;
let hostname: any;
let vlans: any;

beforeAll(async () => {
  c = await startTestController();
  token = (await c.createOrgUser(['operator'])).token;
  otherToken = (await c.createOrgUser(['operator'])).token;
  f = fixtures(c, token);
  profileId = (await f.profile()).id;
  const site = await f.site({ name: 'dc1', location: 'Hall 3' });
  leaf1 = await f.device(profileId, { name: 'leaf1', host: '10.0.0.1', site_id: site.id, metadata: { rack: 'R12', loopback: { ip: '192.0.2.1' } } });
  leaf2 = await f.device(profileId, { name: 'leaf2', host: '10.0.0.2' });
  hostname = await f.template({ name: 'hostname', source: '{"hostname": "{{ hostname }}", "domain": "{{ domain }}"}' });
  vlans = await f.template({
    name: 'vlans',
    target_path: '/network-instances/network-instance[name=default]/vlans',
    source: '{"vlans": [{% for v in vlans %}{{ v }}{% if not loop.last %}, {% endif %}{% endfor %}], "mtu": {{ mtu }}}',
  });
});
afterAll(async () => c?.close());

describe('stack CRUD', () => {
  it('creates a stack with defaults (atomic true, shared false) and reads it back', async () => {
    const stack = await f.stack({
      name: 'fabric',
      services: [
        { template_id: hostname.id, order: 0 },
        { template_id: vlans.id, order: 1, variables: { mtu: 9000 } },
      ],
    });
    expect(stack).toMatchObject({ name: 'fabric', atomic: true, shared: false, description: '', variable_config: {} });
    expect(stack.services).toEqual([
      { template_id: hostname.id, order: 0 },
      { template_id: vlans.id, order: 1, variables: { mtu: 9000 } },
    ]);
    const got = await c.request('GET', `/api/config/stacks/${stack.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(stack);
  });

  it('defaults a missing order to the position', async () => {
    const stack = await f.stack({ services: [{ template_id: hostname.id }, { template_id: vlans.id }] });
    expect(stack.services.map((s: { order: number }) => s.order)).toEqual([0, 1]);
  });

  it('changes only the fields sent', async () => {
    const stack = await f.stack({
      name: 'partial',
      description: 'd',
      atomic: false,
      services: [{ template_id: hostname.id, order: 0 }],
      variable_config: { hostname: { scope: 'per_device' } },
    });
    const res = await c.request('PUT', `/api/config/stacks/${stack.id}`, { token, body: { shared: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'partial',
      description: 'd',
      atomic: false,
      shared: true,
      variable_config: { hostname: { scope: 'per_device' } },
    });
    expect(res.body.services).toHaveLength(1);
    const services = await c.request('PUT', `/api/config/stacks/${stack.id}`, { token, body: { services: [], variable_config: null } });
    expect(services.body).toMatchObject({ services: [], variable_config: {}, shared: true });
    const same = await c.request('PUT', `/api/config/stacks/${stack.id}`, { token, body: {} });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: 'partial', description: 'd', atomic: false, shared: true, services: [] });
  });

  it('lists stacks with paging', async () => {
    const all = await c.request('GET', '/api/config/stacks', { token });
    expect(all.status).toBe(200);
    expect(all.body.length).toBeGreaterThanOrEqual(3);
    const page = await c.request('GET', '/api/config/stacks?limit=1&offset=1', { token });
    expect(page.body).toEqual([all.body[1]]);
  });

  it('refuses malformed stacks with 400', async () => {
    const bad = async (body: unknown) => {
      const res = await c.request('POST', '/api/config/stacks', { token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    };
    await bad({ services: [] });
    await bad({ name: 'x' });
    await bad({ name: 'x', services: [{ template_id: 'nope' }] });
    await bad({ name: 'x', services: [{ template_id: hostname.id, order: 'first' }] });
    await bad({ name: 'x', services: [{ template_id: hostname.id, colour: 'red' }] });
    await bad({ name: 'x', services: {}, atomic: 'yes' });
    await bad({ name: 'x', services: [], atomic: 'yes' });
    await bad({ name: 'x', services: [], variable_config: [] });
    const raw = await c.request('POST', '/api/config/stacks', { token, raw: '{', contentType: 'application/json' });
    expect(raw.status).toBe(400);
  });

  it('deletes a stack (204), then answers 404', async () => {
    const stack = await f.stack({ services: [] });
    expect((await c.request('DELETE', `/api/config/stacks/${stack.id}`, { token })).status).toBe(204);
    expect((await c.request('GET', `/api/config/stacks/${stack.id}`, { token })).status).toBe(404);
    expect((await c.request('DELETE', `/api/config/stacks/${stack.id}`, { token })).status).toBe(404);
  });
});

describe('stack render', () => {
  it('merges defaults < shared_vars < device_vars per device, keyed by service position, in push order', async () => {
    // Position 0 is pushed second (order 5), position 1 first (order 1).
    const stack = await f.stack({
      services: [
        { template_id: hostname.id, order: 5, variables: { hostname: 'default', domain: 'default.example' } },
        { template_id: vlans.id, order: 1, variables: { mtu: 1500, vlans: [1] } },
      ],
    });
    const res = await c.request('POST', `/api/config/stacks/${stack.id}/render`, {
      token,
      body: {
        variable_values: {
          '0': {
            devices: [leaf1.id, leaf2.id],
            shared_vars: { domain: 'lab.example', hostname: 'shared' },
            device_vars: { [leaf1.id]: { hostname: 'leaf1' } },
          },
          '1': { devices: [leaf2.id], shared_vars: { vlans: [10, 20] }, device_vars: { [leaf2.id]: { mtu: 9214 } } },
        },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.jobs).toEqual([
      {
        device_id: leaf2.id,
        device_name: 'leaf2',
        template_id: vlans.id,
        template_name: 'vlans',
        service_order: 1,
        rendered_config: '{"vlans": [10, 20], "mtu": 9214}',
        target_path: '/network-instances/network-instance[name=default]/vlans',
        operation: 'replace',
        config_format: 'json',
      },
      {
        device_id: leaf1.id,
        device_name: 'leaf1',
        template_id: hostname.id,
        template_name: 'hostname',
        service_order: 5,
        rendered_config: '{"hostname": "leaf1", "domain": "lab.example"}',
        target_path: '/system/config',
        operation: 'replace',
        config_format: 'json',
      },
      {
        device_id: leaf2.id,
        device_name: 'leaf2',
        template_id: hostname.id,
        template_name: 'hostname',
        service_order: 5,
        rendered_config: '{"hostname": "shared", "domain": "lab.example"}',
        target_path: '/system/config',
        operation: 'replace',
        config_format: 'json',
      },
    ]);
  });

  it('skips a service with an empty devices list or no entry, and accepts variable_values as the body itself', async () => {
    const stack = await f.stack({
      services: [
        { template_id: hostname.id, order: 0 },
        { template_id: vlans.id, order: 1 },
        { template_id: vlans.id, order: 2 },
      ],
    });
    const res = await c.request('POST', `/api/config/stacks/${stack.id}/render`, {
      token,
      body: { '0': { devices: [leaf1.id], shared_vars: { hostname: 'a', domain: 'b' } }, '1': { devices: [], shared_vars: {} } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.jobs.map((j: { template_name: string }) => j.template_name)).toEqual(['hostname']);
    const empty = await c.request('POST', `/api/config/stacks/${stack.id}/render`, { token, body: { variable_values: {} } });
    expect(empty.body).toEqual({ jobs: [] });
  });

  it('fills API-mapped variables per device (between defaults and shared_vars)', async () => {
    const tpl = await f.template({
      name: 'mapped',
      source: '{"host": "{{ mgmt }}", "rack": "{{ rack }}", "site": "{{ site_name }}", "lo": "{{ lo }}", "name": "{{ name }}"}',
    });
    const stack = await f.stack({
      services: [
        {
          template_id: tpl.id,
          order: 0,
          variables: { rack: 'none', lo: 'none', site_name: 'none' },
          api_variables: { mgmt: 'device.host', rack: { resource: 'device', field: 'metadata.rack' }, lo: 'device.metadata.loopback.ip' },
        },
      ],
      variable_config: { site_name: { scope: 'per_device', source: 'site.location' }, name: { scope: 'per_device', source: 'device.name' } },
    });
    const res = await c.request('POST', `/api/config/stacks/${stack.id}/render`, {
      token,
      body: { variable_values: { '0': { devices: [leaf1.id, leaf2.id], device_vars: { [leaf2.id]: { mgmt: 'override' } } } } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.jobs.map((j: { rendered_config: string }) => JSON.parse(j.rendered_config))).toEqual([
      { host: '10.0.0.1', rack: 'R12', site: 'Hall 3', lo: '192.0.2.1', name: 'leaf1' },
      { host: 'override', rack: 'none', site: 'none', lo: 'none', name: 'leaf2' },
    ]);

    const resolved = await c.request('POST', `/api/config/stacks/${stack.id}/resolve-variables`, { token, body: { devices: [leaf1.id, leaf2.id] } });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body.variable_values['0'].devices).toEqual([leaf1.id, leaf2.id]);
    expect(resolved.body.variable_values['0'].device_vars[leaf1.id]).toEqual({
      mgmt: '10.0.0.1',
      rack: 'R12',
      lo: '192.0.2.1',
      site_name: 'Hall 3',
      name: 'leaf1',
    });
    expect(resolved.body.variable_values['0'].device_vars[leaf2.id]).toEqual({ mgmt: '10.0.0.2', name: 'leaf2' });
    expect(resolved.body.unresolved).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ device_id: leaf2.id, variable: 'rack', source: 'device.metadata.rack' }),
        expect.objectContaining({ device_id: leaf2.id, variable: 'site_name', reason: 'device leaf2 has no site' }),
      ]),
    );
    const keep = await c.request('POST', `/api/config/stacks/${stack.id}/resolve-variables`, {
      token,
      body: { variable_values: { '0': { devices: [leaf1.id], device_vars: { [leaf1.id]: { mgmt: 'mine' } } } } },
    });
    expect(keep.body.variable_values['0'].device_vars[leaf1.id].mgmt).toBe('mine');
    expect(keep.body.resolved.find((r: { variable: string }) => r.variable === 'mgmt')).toBeUndefined();
  });

  it('reports a lookup it cannot read without failing', async () => {
    const stack = await f.stack({
      services: [{ template_id: hostname.id, api_variables: { hostname: 'netbox.name', domain: { resource: 'device', field: 'password' } } }],
    });
    const res = await c.request('POST', `/api/config/stacks/${stack.id}/resolve-variables`, { token, body: { devices: [leaf1.id] } });
    expect(res.status).toBe(200);
    // jsonb keeps object keys in its own order, so compare as a set.
    expect(res.body.unresolved.map((u: { reason: string }) => u.reason)).toEqual(
      expect.arrayContaining(["unknown resource 'netbox' (device or site)", expect.stringMatching(/^unknown device field 'password'/)]),
    );
    expect(res.body.unresolved).toHaveLength(2);
  });

  it('answers 400 Stack resolution failed for a missing template, an unknown or foreign device, a bad key and a render error', async () => {
    const gone = await f.template({ name: 'gone' });
    const stack = await f.stack({
      services: [
        { template_id: hostname.id, order: 0 },
        { template_id: gone.id, order: 1 },
      ],
    });
    await c.request('DELETE', `/api/config/templates/${gone.id}`, { token });
    const render = (body: unknown) => c.request('POST', `/api/config/stacks/${stack.id}/render`, { token, body });

    const missing = await render({ variable_values: { '1': { devices: [leaf1.id] } } });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: 'STACK_RESOLUTION_FAILED',
      error: `Stack resolution failed: service 1 uses template ${gone.id}, which does not exist`,
    });

    const other = await fixtures(c, otherToken).device((await fixtures(c, otherToken).profile()).id, { name: 'theirs' });
    for (const id of [other.id, '00000000-0000-4000-8000-000000000000']) {
      const res = await render({ variable_values: { '0': { devices: [leaf1.id, id], shared_vars: { hostname: 'x', domain: 'y' } } } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`Stack resolution failed: unknown device ${id}`);
    }

    const key = await render({ variable_values: { '7': { devices: [leaf1.id] } } });
    expect(key.body.error).toBe("Stack resolution failed: variable_values key '7' is not a service position (the stack has 2 services: 0-1)");

    const broken = await render({ variable_values: { '0': { devices: [leaf1.id], shared_vars: { domain: 'y' } } } });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({
      code: 'REQUIRED_VARIABLE_MISSING',
      error:
        "Stack resolution failed: template 'hostname' (service 0) needs required variable 'hostname' for device leaf1; give it in " +
        "variable_values['0'] shared_vars or device_vars, or as the service's default",
    });

    expect((await render({ variable_values: { '0': { devices: ['nope'] } } })).status).toBe(400);
    expect((await render({ variable_values: { '0': { devices: [leaf1.id], extra: 1 } } })).status).toBe(400);
    expect((await render({ variable_values: [] })).status).toBe(400);
  });
});

describe('values in CLI templates', () => {
  it('refuses a value holding a line break, which the agent would type as a command of its own, naming the device', async () => {
    const device = await f.device(profileId, { name: 'leaf-desc', host: '10.0.0.9', description: 'uplink\nno router bgp 65000' });
    const tpl = await f.template({ name: 'cli-desc', config_format: 'cli', source: 'interface Ethernet1\n description {{ d }}' });
    const stack = await f.stack({ services: [{ template_id: tpl.id, api_variables: { d: 'device.description' } }] });
    const render = (devices: string[]) =>
      c.request('POST', `/api/config/stacks/${stack.id}/render`, { token, body: { variable_values: { '0': { devices } } } });
    const refused = await render([device.id]);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(
      /template 'cli-desc' \(service 0\) does not render for device leaf-desc: .*holds a line break, which a CLI template would type as a separate command/,
    );
    // One line is fine; a JSON template takes the same text (it is a string there).
    await c.request('PUT', `/api/devices/${device.id}`, { token, body: { description: 'uplink to spine1' } });
    expect((await render([device.id])).body.jobs[0].rendered_config).toBe('interface Ethernet1\n description uplink to spine1');
  });
});

describe('organization scoping', () => {
  it('answers 404 to another organization on every :id route and lists nothing', async () => {
    const stack = await f.stack({ services: [{ template_id: hostname.id }] });
    const calls: [string, string, unknown?][] = [
      ['GET', `/api/config/stacks/${stack.id}`],
      ['PUT', `/api/config/stacks/${stack.id}`, { name: 'stolen' }],
      ['DELETE', `/api/config/stacks/${stack.id}`],
      ['POST', `/api/config/stacks/${stack.id}/render`, { variable_values: {} }],
      ['POST', `/api/config/stacks/${stack.id}/resolve-variables`, {}],
    ];
    for (const [method, path, body] of calls) {
      const res = await c.request(method, path, { token: otherToken, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('STACK_NOT_FOUND');
    }
    expect((await c.request('GET', '/api/config/stacks', { token: otherToken })).body).toEqual([]);
  });

  it("refuses another organization's template_id with 400 on create and update, storing nothing", async () => {
    const theirs = fixtures(c, otherToken);
    const before = await c.db('stacks').count<{ count: string }[]>({ count: '*' });
    const created = await c.request('POST', '/api/config/stacks', {
      token: otherToken,
      body: { name: 'borrowed', services: [{ template_id: hostname.id }] },
    });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({
      code: 'UNKNOWN_REFERENCE',
      error: `No template ${hostname.id} in this organization: services[].template_id must name one of your templates`,
    });
    expect(await c.db('stacks').count<{ count: string }[]>({ count: '*' })).toEqual(before);

    const own = await theirs.template({ name: 'their own' });
    const stack = await theirs.stack({ services: [{ template_id: own.id }] });
    const updated = await c.request('PUT', `/api/config/stacks/${stack.id}`, {
      token: otherToken,
      body: { services: [{ template_id: own.id }, { template_id: hostname.id }] },
    });
    expect(updated.status).toBe(400);
    expect(updated.body.code).toBe('UNKNOWN_REFERENCE');
    expect((await c.db('stacks').where({ id: stack.id }).first('services')).services).toEqual([{ template_id: own.id, order: 0 }]);
  });

  it("cannot render another organization's template through a stack stored before the check", async () => {
    const theirs = fixtures(c, otherToken);
    const own = await theirs.template({ name: 'placeholder' });
    const stack = await theirs.stack({ services: [{ template_id: own.id }] });
    await c
      .db('stacks')
      .where({ id: stack.id })
      .update({ services: JSON.stringify([{ template_id: hostname.id, order: 0 }]) });
    const device = await theirs.device((await theirs.profile()).id);
    const res = await c.request('POST', `/api/config/stacks/${stack.id}/render`, {
      token: otherToken,
      body: { variable_values: { '0': { devices: [device.id] } } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('which does not exist');
  });
});
