/**
 * Helpers of the deployment, instance and task suites: a controller with an enrolled agent over
 * its in-process hub (or NATS), devices pointing at the gNMI and NETCONF simulators, and
 * polling for deployment states (a guard against hanging, not a timed assertion).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { AgentIdentity } from '../../agent/src/identity';
import type { RequestSigner } from '../../controller/src/jobs/types';
import { enrollAgent, startAgent, until, type Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import type { NetconfDevice } from '../sim/netconf/device';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';

export { until };

export const FINAL = ['completed', 'failed', 'rolled_back'];

export async function api<T = any>(c: TestController, token: string, method: string, path: string, body?: unknown, status = 200): Promise<T> {
  const res = await c.request(method, path, { token, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
  return res.body as T;
}

/**
 * An enrolled agent that no runtime runs, for tests that answer its requests themselves: its
 * identity, and the agent as the controller's request handlers get it once its signature checked out.
 */
export async function enrolledSigner(c: TestController, org: Org): Promise<{ signer: RequestSigner; identity: AgentIdentity }> {
  const { identity } = await enrollAgent(c, org);
  const signer: RequestSigner = await c.db('agents').where({ id: identity.agent_id }).first('id', 'org_id', 'public_key');
  return { signer, identity };
}

/** An agent of the organization's default pool, over the controller's in-process hub. */
export async function agentFor(c: TestController, org: Org) {
  const { identity } = await enrollAgent(c, org);
  return startAgent(c, identity);
}

export async function gnmiDevice(c: TestController, token: string, target: GnmiTarget, name = `g-${randomBytes(3).toString('hex')}`) {
  const profile = await api(
    c,
    token,
    'POST',
    '/api/profiles',
    { name: `p-${name}`, username: 'admin', password: 'admin', gnmi_port: target.port, automation_transport: 'gnmi' },
    201,
  );
  return api(c, token, 'POST', '/api/devices', { name, host: target.host, device_type: 'vendor_eos', profile_id: profile.id }, 201);
}

export async function netconfDevice(c: TestController, token: string, device: NetconfDevice, name = `n-${randomBytes(3).toString('hex')}`) {
  const profile = await api(
    c,
    token,
    'POST',
    '/api/profiles',
    { name: `p-${name}`, username: 'admin', password: 'admin', netconf_port: device.port, automation_transport: 'netconf' },
    201,
  );
  return api(c, token, 'POST', '/api/devices', { name, host: device.host, device_type: 'vendor_junos', profile_id: profile.id }, 201);
}

/**
 * The setting of the instance and live suites: a controller with quick sweeps, an org admin with
 * an agent of its default pool, one device on a gNMI simulator whose hostname starts as
 * `hostname`, and a stack of one template setting /system/config's hostname (variable
 * `hostname`, default "default"). close() stops all of it.
 */
export async function gnmiStackFixture(opts: { hostname: string; deviceName: string }) {
  const parts: { c?: TestController; agent?: Awaited<ReturnType<typeof agentFor>>; target?: GnmiTarget } = {};
  const close = async () => {
    await parts.agent?.stop();
    await parts.c?.close();
    await parts.target?.close();
  };
  try {
    const c = (parts.c = await startTestController({
      config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } },
    }));
    const org = await c.createOrgUser(['org_admin']);
    const agent = (parts.agent = await agentFor(c, org));
    const target = (parts.target = await startGnmiTarget({ initialTree: { system: { config: { hostname: opts.hostname } } } }));
    const device = await gnmiDevice(c, org.token, target, opts.deviceName);
    const stack = await hostnameStack(c, org.token, 'base', 'default');
    return { c, org, agent, target, device, stack, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A new gNMI template `hostname` setting /system/config's hostname to its variable `hostname`. */
export function hostnameTemplate(c: TestController, token: string) {
  return api(
    c,
    token,
    'POST',
    '/api/config/templates',
    { name: 'hostname', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/system/config', source: '{"hostname": "{{ hostname }}"}' },
    201,
  );
}

/** A stack `name` of one new gNMI template setting /system/config's hostname to the stack's variable `hostname`. */
export async function hostnameStack(c: TestController, token: string, name: string, hostname: string) {
  const tpl = await hostnameTemplate(c, token);
  return api(c, token, 'POST', '/api/config/stacks', { name, services: [{ template_id: tpl.id, order: 0, variables: { hostname } }] }, 201);
}

/** A device on an SSH CLI simulator (its dialect is its device_type); cli templates reach it over SSH. */
export async function sshDevice(
  c: TestController,
  token: string,
  sim: SimSshDevice,
  password: string,
  name = `s-${randomBytes(3).toString('hex')}`,
  extra: Record<string, unknown> = {},
) {
  const profile = await api(c, token, 'POST', '/api/profiles', { name: `p-${name}`, username: 'admin', password, ssh_port: sim.port }, 201);
  return api(c, token, 'POST', '/api/devices', { name, host: sim.host, device_type: sim.deviceType, profile_id: profile.id, ...extra }, 201);
}

/**
 * Waits until the deployment is in one of `statuses` (default: a final one); returns it with
 * devices. A timeout names where it stood: its devices and their jobs, so a rare hang says why.
 */
export async function waitFor(c: TestController, token: string, id: string, statuses: string[] = FINAL, timeoutMs = 60_000) {
  let last: any;
  try {
    return await until(
      `deployment ${id} to reach ${statuses.join('/')}`,
      async () => {
        last = (await c.request('GET', `/api/config/deployments/${id}`, { token })).body;
        return statuses.includes(last.status) ? last : undefined;
      },
      timeoutMs,
      100,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; it stood at ${await standing(c, last)}`, { cause: err });
  }
}

/** A deployment's status, its devices' and their jobs', in one line. */
async function standing(c: TestController, deployment: any): Promise<string> {
  const devices: { device_id: string; status: string }[] = deployment?.devices ?? [];
  const jobs = await c
    .db('jobs')
    .whereIn(
      'device_id',
      devices.map((d) => d.device_id),
    )
    .orderBy('created_at')
    .select('id', 'device_id', 'kind', 'status', 'attempt', 'agent_id', 'transport', 'error');
  return JSON.stringify({
    status: deployment?.status,
    devices: devices.map((d) => ({ device: d.device_id, status: d.status })),
    jobs,
  });
}

/**
 * The text of a deployment's pre-change backup: the device's stored config version `configId`,
 * which `check` inspects (source, transport, status) before its text is read.
 */
export async function backupVersionText(
  c: TestController,
  token: string,
  deviceId: string,
  configId: string,
  check: (entry: any) => void,
): Promise<string> {
  const list = await api(c, token, 'GET', `/api/config/devices/${deviceId}/configs`);
  const versions = Array.isArray(list) ? list : (list.versions ?? list.configs);
  const entry = versions.find((v: { id: string }) => v.id === configId);
  check(entry);
  // reveal: the text as stored (the device's secrets unmasked; the org admin has configs.secrets).
  return (await api(c, token, 'GET', `/api/config/devices/${deviceId}/configs/${entry.version}?reveal=true`)).config_text as string;
}

/**
 * What the cli deployment suites share: a controller with quick sweeps, an org admin, an
 * in-process agent, SSH simulators of one password (closed with the fixture), deploy() and the
 * stored pre-deployment backup of a device entry.
 */
export async function cliDeployFixture(opts: { password: string; name: string; configScale: number }) {
  const c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } } });
  const org = await c.createOrgUser(['org_admin']);
  const token = org.token;
  const agent = await agentFor(c, org);
  const sims: SimSshDevice[] = [];
  return {
    c,
    org,
    token,
    async sim(hostname: string, dialect = 'vendor_ios'): Promise<SimSshDevice> {
      const dev = await startSshDevice({ dialect, hostname, password: opts.password, configScale: opts.configScale });
      sims.push(dev);
      return dev;
    },
    deploy(stackId: string, devices: string[], variable_values?: unknown) {
      return c.request('POST', '/api/config/deployments', {
        token,
        body: {
          stack_id: stackId,
          name: opts.name,
          target_devices: devices.map((device_id) => ({ device_id })),
          ...(variable_values ? { variable_values } : {}),
        },
      });
    },
    backupText(deviceId: string, configId: string) {
      return backupVersionText(c, token, deviceId, configId, (entry) =>
        expect(entry).toMatchObject({ source: 'deployment', pulled_via: 'ssh', config_format: 'cli', status: 'success' }),
      );
    },
    async close() {
      await agent.stop();
      await c.close();
      await Promise.all(sims.map((s) => s.close().catch(() => undefined)));
    },
  };
}
