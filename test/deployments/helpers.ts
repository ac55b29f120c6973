/**
 * Helpers of the deployment, instance and task suites: a controller with an enrolled agent over
 * its in-process hub (or NATS), devices pointing at the gNMI and NETCONF simulators, and
 * polling for deployment states (a guard against hanging, not a timed assertion).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { enrollAgent, startAgent, until, type Org } from '../agents/helpers';
import type { TestController } from '../helpers/controller';
import type { GnmiTarget } from '../sim/gnmi/target';
import type { NetconfDevice } from '../sim/netconf/device';

export { until };

export const FINAL = ['completed', 'failed', 'rolled_back'];

export async function api<T = any>(c: TestController, token: string, method: string, path: string, body?: unknown, status = 200): Promise<T> {
  const res = await c.request(method, path, { token, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
  return res.body as T;
}

/** An agent of the organization's default pool, over the controller's in-process hub. */
export async function agentFor(c: TestController, org: Org) {
  const { identity } = await enrollAgent(c, org);
  return startAgent(c, identity);
}

export async function gnmiDevice(c: TestController, token: string, target: GnmiTarget, name = `g-${randomBytes(3).toString('hex')}`) {
  const profile = await api(c, token, 'POST', '/api/profiles', { name: `p-${name}`, username: 'admin', password: 'admin', gnmi_port: target.port, automation_transport: 'gnmi' }, 201);
  return api(c, token, 'POST', '/api/devices', { name, host: target.host, device_type: 'vendor_eos', profile_id: profile.id }, 201);
}

export async function netconfDevice(c: TestController, token: string, device: NetconfDevice, name = `n-${randomBytes(3).toString('hex')}`) {
  const profile = await api(c, token, 'POST', '/api/profiles', { name: `p-${name}`, username: 'admin', password: 'admin', netconf_port: device.port, automation_transport: 'netconf' }, 201);
  return api(c, token, 'POST', '/api/devices', { name, host: device.host, device_type: 'vendor_junos', profile_id: profile.id }, 201);
}

/** Waits until the deployment is in one of `statuses` (default: a final one); returns it with devices. */
export async function waitFor(c: TestController, token: string, id: string, statuses: string[] = FINAL, timeoutMs = 60_000) {
  return until(
    `deployment ${id} to reach ${statuses.join('/')}`,
    async () => {
      const res = await c.request('GET', `/api/config/deployments/${id}`, { token });
      return statuses.includes(res.body.status) ? res.body : undefined;
    },
    timeoutMs,
    100,
  );
}
