import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestController } from '../helpers/controller';
import type { GnmiTarget } from '../sim/gnmi/target';
import { api, gnmiStackFixture, waitFor } from '../deployments/helpers';

let f: Awaited<ReturnType<typeof gnmiStackFixture>>;
let c: TestController;
let token: string;
let target: GnmiTarget;
let device: any;
let stack: any;

beforeAll(async () => {
  f = await gnmiStackFixture({ hostname: 'factory', deviceName: 'core1' });
  ({ c, target, device, stack } = f);
  token = f.org.token;
});
afterAll(() => f?.close());

const body = () => ({
  stack_id: stack.id,
  name: 'core hostname',
  target_devices: [{ device_id: device.id }],
  variable_values: { '0': { devices: [device.id], device_vars: { [device.id]: { hostname: 'core1' } } } },
});

describe('instances', () => {
  it('creates, reads, lists, changes only the fields sent, and deletes', async () => {
    const created = await api(c, token, 'POST', '/api/config/instances', { ...body(), description: 'core' }, 201);
    expect(created).toMatchObject({ ...body(), description: 'core', last_deployment_id: null, id: expect.any(String) });
    expect(await api(c, token, 'GET', `/api/config/instances/${created.id}`)).toEqual(created);
    expect((await api(c, token, 'GET', '/api/config/instances')).map((i: any) => i.id)).toContain(created.id);
    const renamed = await api(c, token, 'PUT', `/api/config/instances/${created.id}`, { name: 'renamed' });
    expect(renamed).toMatchObject({ name: 'renamed', description: 'core', stack_id: stack.id, target_devices: [{ device_id: device.id }] });
    expect((await c.request('DELETE', `/api/config/instances/${created.id}`, { token })).status).toBe(204);
    expect((await c.request('GET', `/api/config/instances/${created.id}`, { token })).status).toBe(404);
  });

  it('deploys: 201 with a deployment in status pending, which then runs like any other', async () => {
    const instance = await api(c, token, 'POST', '/api/config/instances', body(), 201);
    const res = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: 'pending',
      stack_id: stack.id,
      instance_id: instance.id,
      name: 'core hostname',
      target_devices: [{ device_id: device.id }],
    });
    const done = await waitFor(c, token, res.body.id);
    expect(done.status).toBe('completed');
    expect(target.tree()).toEqual({ system: { config: { hostname: 'core1' } } });
    expect((await api(c, token, 'GET', `/api/config/instances/${instance.id}`)).last_deployment_id).toBe(res.body.id);
    // Run again: a new deployment.
    const again = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(res.body.id);
    await waitFor(c, token, again.body.id);
  });

  it('answers 400 for malformed input, an unknown stack or device, and a deploy that cannot resolve', async () => {
    for (const bad of [
      {},
      { ...body(), stack_id: 'x' },
      { ...body(), target_devices: [] },
      { ...body(), extra: 1 },
      { ...body(), variable_values: [] },
    ]) {
      expect((await c.request('POST', '/api/config/instances', { token, body: bad })).status, JSON.stringify(bad)).toBe(400);
    }
    const unknownStack = await c.request('POST', '/api/config/instances', {
      token,
      body: { ...body(), stack_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknownStack.body.error).toMatch(/stack .* not found/);
    const unknownDevice = await c.request('POST', '/api/config/instances', {
      token,
      body: { ...body(), target_devices: [{ device_id: '00000000-0000-4000-8000-000000000000' }] },
    });
    expect(unknownDevice.body.error).toMatch(/unknown device/);
    const instance = await api(
      c,
      token,
      'POST',
      '/api/config/instances',
      { ...body(), variable_values: { '0': { devices: [device.id], shared_vars: { hostname: null } } } },
      201,
    );
    const res = await c.request('POST', `/api/config/instances/${instance.id}/deploy`, { token });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Stack resolution failed: /);
    const same = await c.request('PUT', `/api/config/instances/${instance.id}`, { token, body: {} });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: instance.name, stack_id: instance.stack_id, target_devices: instance.target_devices });
  });

  it('answers 404 to another organization on every :id route and lists nothing', async () => {
    const instance = await api(c, token, 'POST', '/api/config/instances', body(), 201);
    const other = await c.createOrgUser(['operator']);
    for (const [method, path, payload] of [
      ['GET', `/api/config/instances/${instance.id}`],
      ['PUT', `/api/config/instances/${instance.id}`, { name: 'x' }],
      ['DELETE', `/api/config/instances/${instance.id}`],
      ['POST', `/api/config/instances/${instance.id}/deploy`],
    ] as [string, string, unknown?][]) {
      const res = await c.request(method, path, { token: other.token, body: payload });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('INSTANCE_NOT_FOUND');
    }
    expect(await api(c, other.token, 'GET', '/api/config/instances')).toEqual([]);
    const foreign = await c.request('POST', '/api/config/instances', { token: other.token, body: body() });
    expect(foreign.status).toBe(400);
  });
});
