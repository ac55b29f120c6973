/**
 * The audit's attack, end to end: an operator (devices.access, no configs.secrets) points a device
 * that uses an administrator's connection profile at an SSH server they control and asks for a
 * credential test, hoping the agent logs in there with the profile's password. A profile limited
 * to networks (allowed_networks) is the fix: the agent resolves the host, checks every address and
 * opens no session outside them, for every transport, so the server sees no connection at all;
 * inside them everything works as before, DNS names included (TLS still checks the name).
 *
 * Real controller, real in-process agent, real SSH / gNMI / NETCONF sessions; the attacker's
 * server is an ssh2 server of this test that records every authentication attempt it is offered.
 */
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollAgent, startAgent } from './helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { freePort } from '../helpers/net';
import { inventoryUser, orgMember, type InventoryUser } from '../inventory/helpers';
import { newCertificateAuthority, startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { readableKeyPair } from '../sim/ssh/device';

const PASSWORD = 'core-Admins-Pa55word-never-leaks';

interface Capture {
  port: number;
  connections: number;
  attempts: { method: string; username: string; password?: string }[];
  close(): Promise<void>;
}

/** The attacker's SSH server: records every authentication attempt (password included), accepts none. */
async function captureServer(): Promise<Capture> {
  const capture = { port: 0, connections: 0, attempts: [] as Capture['attempts'] };
  const server = new ssh2.Server({ hostKeys: [readableKeyPair().private] }, (conn) => {
    capture.connections += 1;
    conn.on('authentication', (ctx) => {
      capture.attempts.push({ method: ctx.method, username: ctx.username, ...(ctx.method === 'password' && { password: ctx.password }) });
      ctx.reject(['password', 'keyboard-interactive']);
    });
    conn.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  capture.port = (server.address() as { port: number }).port;
  return Object.assign(capture, { close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}

let c: TestController;
let admin: InventoryUser;
let operator: InventoryUser;
let agent: Awaited<ReturnType<typeof startAgent>>;
let capture: Capture;
let sim: SimSshDevice;
let gnmi: GnmiTarget;
let closedPort: number;
let coreAdmins: string;

beforeAll(async () => {
  c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 } } });
  admin = await inventoryUser(c, ['org_admin']);
  operator = await orgMember(c, admin);
  const { identity } = await enrollAgent(c, admin);
  agent = await startAgent(c, identity);
  capture = await captureServer();
  sim = await startSshDevice({ hostname: 'core-1', username: 'netadmin', password: PASSWORD, dialect: 'vendor_ios' });
  gnmi = await startGnmiTarget({ username: 'netadmin', password: PASSWORD });
  closedPort = await freePort();
  // The org admin's profile: the API only ever answers has_password.
  const profile = await admin.as('POST', '/api/profiles', {
    body: { name: 'core-admins', username: 'netadmin', password: PASSWORD, ssh_port: capture.port, allowed_networks: ['10.0.0.0/8'] },
  });
  expect(profile.status, profile.text).toBe(201);
  coreAdmins = profile.body.id;
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await Promise.all([capture?.close(), sim?.close(), gnmi?.close()]);
  await c?.close();
});

const testCredential = async (id: string) => {
  const res = await operator.as('POST', `/api/devices/${id}/test-credential`);
  expect(res.status, res.text).toBe(200);
  return res.body as { success: boolean; message: string; transports: { transport: string; status: string; message: string }[] };
};

/** The cause classes the agent reported with the device's latest credential test (kept on the job row; the API answer has no causes). */
async function causes(deviceId: string): Promise<{ error_cause?: string; transports: (string | undefined)[] }> {
  const job = await c.db('jobs').where({ device_id: deviceId, kind: 'test_credential' }).orderBy('seq', 'desc').first('result');
  return { error_cause: job.result.error_cause, transports: job.result.transports.map((t: { error_cause?: string }) => t.error_cause) };
}

/** A device made by the org admin (the controller refuses IP hosts outside a profile's networks, so a DNS name or a profile change gets one there). */
async function device(name: string, host: string, profileId: string): Promise<string> {
  const res = await admin.as('POST', '/api/devices', { body: { name, host, device_type: 'vendor_ios', profile_id: profileId } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

async function profile(body: Record<string, unknown>): Promise<string> {
  const res = await admin.as('POST', '/api/profiles', {
    body: { name: `p-${Math.random().toString(36).slice(2, 8)}`, username: 'netadmin', password: PASSWORD, ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

describe('the audit: an operator aims a profile at a server they control', () => {
  it('the controller refuses the IP-address host outside the networks, with a 400 naming the profile and its networks', async () => {
    const res = await operator.as('POST', '/api/devices', {
      body: { name: 'evil', host: '127.0.0.1', device_type: 'vendor_ios', profile_id: coreAdmins },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ code: 'HOST_OUTSIDE_PROFILE_NETWORKS' });
    expect(res.body.error).toBe(
      "Device 'evil': host 127.0.0.1 is outside the networks connection profile 'core-admins' allows its credentials to be sent to " +
        '(allowed_networks: 10.0.0.0/8)',
    );
  });

  it('a device on an IP outside (it was there before the limit) gets no session: test-credential and pulls fail, the server sees nothing', async () => {
    // Made before the profile was limited: the limit is lifted for a moment by the admin, then put back.
    expect((await admin.as('PUT', `/api/profiles/${coreAdmins}`, { body: { allowed_networks: [] } })).status).toBe(200);
    const id = await device('evil', '127.0.0.1', coreAdmins);
    expect((await admin.as('PUT', `/api/profiles/${coreAdmins}`, { body: { allowed_networks: ['10.0.0.0/8'] } })).status).toBe(200);

    const body = await testCredential(id);
    expect(body.success).toBe(false);
    expect(await causes(id)).toEqual({ error_cause: 'auth', transports: ['auth'] });
    expect(body.transports).toEqual([
      {
        transport: 'ssh',
        status: 'failed',
        message:
          'refused to log in to evil at 127.0.0.1: the address is outside the networks its connection profile allows its credentials to be sent ' +
          'to (allowed_networks: 10.0.0.0/8); no connection was made',
      },
    ]);
    const pull = await operator.as('POST', `/api/config/devices/${id}/pull?method=cli`);
    expect(pull.status, pull.text).toBe(502);
    expect(pull.text).toContain('outside the networks');
    expect(capture.connections).toBe(0);
    expect(capture.attempts).toEqual([]);
  });

  it('a DNS name that resolves outside (localhost against 10.0.0.0/8) passes the controller and is refused by the agent', async () => {
    const res = await operator.as('POST', '/api/devices', {
      body: { name: 'evil-name', host: 'localhost', device_type: 'vendor_ios', profile_id: coreAdmins },
    });
    expect(res.status, res.text).toBe(201);
    const body = await testCredential(res.body.id);
    expect(body.success).toBe(false);
    expect(body.transports[0]).toMatchObject({ transport: 'ssh', status: 'failed' });
    expect(await causes(res.body.id)).toEqual({ error_cause: 'auth', transports: ['auth'] });
    expect(body.transports[0].message).toBe(
      'refused to log in to evil-name at localhost: it resolves to 127.0.0.1; 127.0.0.1 is outside the networks its connection profile allows ' +
        'its credentials to be sent to (allowed_networks: 10.0.0.0/8); no connection was made',
    );
    expect(capture.connections).toBe(0);
    expect(capture.attempts).toEqual([]);
  });

  it('the operator cannot widen or lift the limit, nor clear a host key pin', async () => {
    for (const allowed_networks of [['10.0.0.0/8', '127.0.0.0/8'], ['0.0.0.0/0'], []]) {
      const res = await operator.as('PUT', `/api/profiles/${coreAdmins}`, { body: { allowed_networks } });
      expect(res.status, JSON.stringify(allowed_networks)).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
      expect(res.body.error).toContain('configs.secrets');
    }
    expect((await operator.as('GET', `/api/profiles/${coreAdmins}`)).body.allowed_networks).toEqual(['10.0.0.0/8']);
    const some = (await operator.as('GET', '/api/devices?q=evil')).body.devices[0].id;
    for (const pin of ['ssh-host-key', 'gnmi-certificate']) {
      const res = await operator.as('DELETE', `/api/devices/${some}/${pin}`);
      expect(res.status, pin).toBe(403);
      expect(res.body.error).toContain('configs.secrets');
    }
  });

  it('every transport is guarded: NETCONF and gNMI get no session either', async () => {
    const netconf = await profile({
      automation_transport: 'netconf',
      netconf_port: capture.port,
      ssh_port: capture.port,
      allowed_networks: ['192.0.2.0/24'],
    });
    const viaGnmi = await profile({
      automation_transport: 'gnmi',
      gnmi_port: gnmi.port,
      ssh_port: capture.port,
      allowed_networks: ['2001:db8::/32'],
    });
    for (const [profileId, transport, networks] of [
      [netconf, 'netconf', '192.0.2.0/24'],
      [viaGnmi, 'gnmi', '2001:db8::/32'],
    ] as const) {
      const id = await device(`guarded-${transport}`, 'localhost', profileId);
      const body = await testCredential(id);
      expect(body.success).toBe(false);
      // SSH is failed, not "unavailable": nothing was tried, it is no sign that nothing listens.
      expect(body.transports.map((t) => [t.transport, t.status])).toEqual([
        [transport, 'failed'],
        ['ssh', 'failed'],
      ]);
      expect(await causes(id)).toEqual({ error_cause: 'auth', transports: ['auth', 'auth'] });
      for (const t of body.transports)
        expect(t.message).toContain(
          `127.0.0.1 is outside the networks its connection profile allows its credentials to be sent to (allowed_networks: ${networks})`,
        );
    }
    expect(gnmi.rpcs).toEqual([]);
    expect(capture.connections).toBe(0);
    expect(capture.attempts).toEqual([]);
  });

  it('with the network allowed it works as before: the same server is offered the password (so the checks above would have seen it)', async () => {
    const res = await admin.as('PUT', `/api/profiles/${coreAdmins}`, { body: { allowed_networks: ['10.0.0.0/8', '127.0.0.0/8'] } });
    expect(res.status, res.text).toBe(200);
    const id = (await operator.as('GET', '/api/devices?q=evil-name')).body.devices[0].id;
    const body = await testCredential(id);
    expect(body.success).toBe(false);
    expect(body.message).toContain('authentication failed'); // the attacker's server refused the login, after seeing the password
    expect(capture.connections).toBe(1);
    expect(capture.attempts).toContainEqual({ method: 'password', username: 'netadmin', password: PASSWORD });
  });
});

describe('inside the networks, sessions work as before', () => {
  it('an SSH device by name logs in, pins its host key, and logs in again against the pin', async () => {
    const id = await device('core-1', 'localhost', await profile({ ssh_port: sim.port, allowed_networks: ['127.0.0.0/8', '::1/128'] }));
    const first = await testCredential(id);
    expect(first.success, first.message).toBe(true);
    expect(first.message).toBe('Logged in to core-1 (localhost) over ssh as netadmin');
    const pinned = (await admin.as('GET', `/api/devices/${id}`)).body.ssh_host_key;
    expect(pinned?.fingerprint).toMatch(/^SHA256:/);
    const again = await testCredential(id);
    expect(again.success, again.message).toBe(true);
    expect(sim.stats.logins).toBe(2);
  });

  it('gNMI over TLS to a name: the agent connects to the address it checked and TLS still verifies the name', async () => {
    const ca = newCertificateAuthority('Allowed Networks Test CA');
    // Valid for the name only: reaching it by its address fails verification.
    const target = await startGnmiTarget({ tls: true, cert: ca.issue('gnmi-by-name', 'DNS:localhost'), username: 'netadmin', password: PASSWORD });
    try {
      const tls = await profile({
        automation_transport: 'gnmi',
        gnmi_port: target.port,
        gnmi_tls: true,
        gnmi_skip_verify: false,
        ca_certificate: ca.cert,
        ssh_port: closedPort,
        allowed_networks: ['127.0.0.0/8'],
      });
      const byName = await testCredential(await device('gnmi-by-name', 'localhost', tls));
      expect(byName.transports.map((t) => [t.transport, t.status])).toEqual([
        ['gnmi', 'ok'],
        ['ssh', 'unavailable'],
      ]);
      expect(byName.success).toBe(true);
      const byAddress = await testCredential(await device('gnmi-by-address', '127.0.0.1', tls));
      expect(byAddress.success).toBe(false);
      expect(byAddress.transports[0]).toMatchObject({ transport: 'gnmi', status: 'failed' });
      expect(byAddress.transports[0].message).not.toContain('allowed_networks');
    } finally {
      await target.close();
    }
  });

  it('a profile without allowed_networks limits nothing (as before the field existed)', async () => {
    const id = await device('unlimited', '127.0.0.1', await profile({ ssh_port: sim.port }));
    const body = await testCredential(id);
    expect(body.success, body.message).toBe(true);
  });
});

describe('an agent too old to enforce allowed_networks', () => {
  it('gets no job whose profile has them: any agent of a pool may take its batches, so such jobs wait while one is in the pool', async () => {
    const limited = await device(
      'old-pool-limited',
      'localhost',
      await profile({ ssh_port: sim.port, allowed_networks: ['127.0.0.0/8', '::1/128'] }),
    );
    const unlimited = await device('old-pool-free', '127.0.0.1', await profile({ ssh_port: sim.port }));
    // Enrolled as an agent older than the field (no guard among its capabilities), and never started.
    const { identity: old } = await enrollAgent(c, admin, {
      name: 'old-agent',
      capabilities: ['job:backup', 'job:test_credential', 'transport:ssh'],
    });
    const job = (deviceId: string, deadlineMs: number) => ({
      orgId: admin.orgId,
      kind: 'test_credential' as const,
      deviceId,
      params: {},
      deadlineMs,
    });
    const [waits, runs] = await c.services.jobs.submit([job(limited, 3_000), job(unlimited, 30_000)]);
    const [free] = await c.services.jobs.wait([runs], 30_000);
    expect(free).toMatchObject({ status: 'succeeded' });
    const [held] = await c.services.jobs.wait([waits], 30_000);
    expect(held.status).toBe('failed');
    expect(held.error).toMatch(
      /^The device's connection profile limits where its credentials may go \(allowed_networks\), and agent\(s\) "old-agent" of the default pool/,
    );
    expect(held.error).toContain('upgrade or revoke them');
    expect(await c.db('jobs').where({ id: waits }).first('attempt', 'agent_id')).toEqual({ attempt: 0, agent_id: null });

    // Revoked, it is no longer a member: the job runs on the agent that enforces the limit.
    expect((await admin.as('DELETE', `/api/agents/${old.agent_id}`)).status).toBe(204);
    const [again] = await c.services.jobs.submit([job(limited, 30_000)]);
    expect((await c.services.jobs.wait([again], 30_000))[0]).toMatchObject({ status: 'succeeded' });
  });
});
