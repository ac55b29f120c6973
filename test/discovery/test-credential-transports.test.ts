/**
 * POST /api/devices/:id/test-credential tries every transport the device's profile uses: the
 * automation transport (gNMI, NETCONF) first, then SSH. A gNMI-only or NETCONF-only device (no
 * SSH listening) passes with the right password and fails with a wrong one, and the answer
 * names the transport that failed. Real agent, real simulators, over the shared NATS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, natsPrefix, startAgent } from '../agents/helpers';
import { freePort } from '../helpers/net';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';

const PASSWORD = 'tc-Transport-Pa55';
const WRONG = 'not-the-Pa55word';

let c: TestController;
let u: InventoryUser;
let agent: Awaited<ReturnType<typeof startAgent>>;
let gnmi: GnmiTarget;
let nc: NetconfDevice;
let ssh: SimSshDevice;
let refusing: SimSshDevice;
const ids: Record<string, string> = {};
const prefix = natsPrefix();

beforeAll(async () => {
  c = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  u = await inventoryUser(c, ['org_admin']);
  const { identity } = await enrollAgent(c, u);
  agent = await startAgent(c, identity, { natsUrl: SHARED_NATS });
  gnmi = await startGnmiTarget({ username: 'netops', password: PASSWORD });
  nc = await startNetconfDevice({ username: 'netops', password: PASSWORD });
  ssh = await startSshDevice({ hostname: 'both-1', username: 'netops', password: PASSWORD, dialect: 'vendor_eos' });
  // Nothing listens on the SSH port of the gNMI-only and NETCONF-only devices.
  const closedSsh = await freePort();
  const device = async (name: string, profile: Record<string, unknown>, host: string) =>
    (ids[name] = (await u.device((await u.profile({ username: 'netops', ...profile })).id, { name, host, device_type: 'vendor_eos' })).id);
  await device(
    'gnmi-only',
    { password: PASSWORD, ssh_port: closedSsh, gnmi_port: gnmi.port, gnmi_tls: false, automation_transport: 'gnmi' },
    gnmi.host,
  );
  await device(
    'gnmi-wrong',
    { password: WRONG, ssh_port: closedSsh, gnmi_port: gnmi.port, gnmi_tls: false, automation_transport: 'gnmi' },
    gnmi.host,
  );
  await device('netconf-only', { password: PASSWORD, ssh_port: closedSsh, netconf_port: nc.port, automation_transport: 'netconf' }, nc.host);
  await device('netconf-wrong', { password: WRONG, ssh_port: closedSsh, netconf_port: nc.port, automation_transport: 'netconf' }, nc.host);
  // gNMI answers with the right password, the SSH CLI refuses it: the SSH login is the one that failed.
  refusing = await startSshDevice({ hostname: 'refusing', username: 'netops', password: WRONG });
  await device(
    'ssh-wrong',
    { password: PASSWORD, ssh_port: refusing.port, gnmi_port: gnmi.port, gnmi_tls: false, automation_transport: 'gnmi' },
    gnmi.host,
  );
  await device('ssh-only', { password: PASSWORD, ssh_port: ssh.port }, ssh.host);
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await Promise.all([gnmi?.close(), nc?.close(), ssh?.close(), refusing?.close()]);
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
});

const test = async (name: string) => {
  const res = await u.as('POST', `/api/devices/${ids[name]}/test-credential`);
  expect(res.status, res.text).toBe(200);
  return res.body as { success: boolean; message: string; transports: { transport: string; status: string; message: string }[] };
};
const statuses = (body: Awaited<ReturnType<typeof test>>) => body.transports.map((t) => [t.transport, t.status]);

describe('test-credential per transport', () => {
  it('a gNMI-only device passes with the right password; SSH is reported unavailable, not failed', async () => {
    const body = await test('gnmi-only');
    expect(statuses(body)).toEqual([
      ['gnmi', 'ok'],
      ['ssh', 'unavailable'],
    ]);
    expect(body.success).toBe(true);
  });

  it('a gNMI-only device with a wrong password fails, and says gNMI failed', async () => {
    const body = await test('gnmi-wrong');
    expect(body.success).toBe(false);
    expect(body.transports[0]).toMatchObject({ transport: 'gnmi', status: 'failed' });
    expect(body.message).toMatch(/^gnmi failed/);
    expect(JSON.stringify(body)).not.toContain(WRONG);
  });

  it('a NETCONF-only device passes with the right password and fails with a wrong one', async () => {
    const good = await test('netconf-only');
    expect(statuses(good)).toEqual([
      ['netconf', 'ok'],
      ['ssh', 'unavailable'],
    ]);
    expect(good.success).toBe(true);
    const bad = await test('netconf-wrong');
    expect(bad.success).toBe(false);
    expect(bad.transports[0]).toMatchObject({ transport: 'netconf', status: 'failed' });
    expect(bad.message).toMatch(/^netconf failed/);
  });

  it('names SSH as the transport that failed when gNMI logs in and the SSH CLI refuses the password', async () => {
    const body = await test('ssh-wrong');
    expect(statuses(body)).toEqual([
      ['gnmi', 'ok'],
      ['ssh', 'failed'],
    ]);
    expect(body.success).toBe(false);
    expect(body.message).toMatch(/^ssh failed/);
  });

  it('a device without an automation transport is tested over SSH alone', async () => {
    const body = await test('ssh-only');
    expect(statuses(body)).toEqual([['ssh', 'ok']]);
    expect(body.success).toBe(true);
  });
});
