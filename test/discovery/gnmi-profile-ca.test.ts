/**
 * A connection profile's own CA (ca_certificate) for gNMI over TLS with verification on: the
 * agent, a process of its own run with GRPC_DEFAULT_SSL_ROOTS_FILE_PATH naming the system bundle
 * and no extra CA, reaches a target whose certificate a private CA signed only through the
 * profile's CA; without it (or once it is cleared) the chain check fails before any RPC. Garbage
 * in ca_certificate is refused with a 400 on write.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { startAgentProcess, startNats, stopAll, type AgentProcess, type NatsServer } from '../helpers/processes';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { newCertificateAuthority, startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';

const PASSWORD = 'gnmi-Profile-Ca-5ecret';
const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const ca = newCertificateAuthority('Profile Test CA');
const leaf = ca.issue('gnmi-profile-ca');

let nats: NatsServer;
let c: TestController;
let u: InventoryUser;
let agent: AgentProcess;
let target: GnmiTarget;

beforeAll(async () => {
  nats = await startNats();
  c = await startTestController({ config: { natsUrl: nats.url, natsPrefix: 'sb', jobs: { sweepIntervalMs: 200 } } });
  u = await inventoryUser(c, ['org_admin']);
  const created = (await u.as('POST', '/api/agents', { body: { name: 'profile-ca-agent', site_id: null } })).body;
  const roots = existsSync(SYSTEM_BUNDLE) ? SYSTEM_BUNDLE : '';
  agent = await startAgentProcess({
    natsUrl: nats.url,
    controllerUrl: c.url,
    enrollToken: created.enrollment_token,
    concurrency: 2,
    env: { GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: roots, NODE_EXTRA_CA_CERTS: roots },
  });
  target = await startGnmiTarget({ tls: true, cert: leaf, username: 'netops', password: PASSWORD });
}, 90_000);

afterAll(async () => {
  await target?.close();
  await agent?.stop(10_000);
  await c?.close();
  await stopAll();
  await nats?.close();
});

const gnmiProfile = (extra: Record<string, unknown> = {}) => ({
  name: `p-${Math.random().toString(36).slice(2)}`,
  username: 'netops',
  password: PASSWORD,
  gnmi_port: target.port,
  gnmi_tls: true,
  gnmi_skip_verify: false,
  automation_transport: 'gnmi',
  ...extra,
});
const testCredential = async (id: string) =>
  (await u.as('POST', `/api/devices/${id}/test-credential`)).body as {
    success: boolean;
    message: string;
    transports: { transport: string; status: string; message: string }[];
  };

describe('per-profile CA for gNMI TLS', () => {
  it('refuses garbage, a private key and a certificate that is not a CA, with a 400 that says why', async () => {
    const cases = ['not a certificate', `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`, `${ca.cert}${leaf.key}`, leaf.cert];
    for (const ca_certificate of cases) {
      const res = await u.as('POST', '/api/profiles', { body: gnmiProfile({ ca_certificate }) });
      expect(res.status, ca_certificate.slice(0, 40)).toBe(400);
      expect(res.body.code).toBe('PROFILE_INVALID_CA_CERTIFICATE');
      expect(res.text).not.toContain('PRIVATE KEY');
    }
  });

  it('trusts the profile CA for the device, with the roots variable set on the agent', async () => {
    const res = await u.as('POST', '/api/profiles', { body: gnmiProfile({ ca_certificate: ca.cert }) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.ca_certificate).toContain('-----BEGIN CERTIFICATE-----');
    const deviceId = (await u.device(res.body.id, { name: 'gnmi-profile-ca', host: target.host, device_type: 'vendor_eos' })).id;
    const body = await testCredential(deviceId);
    expect(body.transports[0], body.message).toMatchObject({ transport: 'gnmi', status: 'ok' });
    expect(target.rpcs).toContain('/gnmi.gNMI/Capabilities');

    // Cleared, the agent's own roots apply again and the private CA is not among them.
    const cleared = await u.as('PUT', `/api/profiles/${res.body.id}`, { body: { ca_certificate: null } });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.ca_certificate).toBeNull();
    const after = await testCredential(deviceId);
    expect(after.success).toBe(false);
    expect(after.transports[0]).toMatchObject({ transport: 'gnmi', status: 'failed' });
    expect(after.transports[0].message).toMatch(/server TLS certificate not trusted/);
  });

  it('a profile without a CA fails the chain check before any RPC', async () => {
    const before = target.rpcs.length;
    const profile = await u.as('POST', '/api/profiles', { body: gnmiProfile() });
    const deviceId = (await u.device(profile.body.id, { name: 'gnmi-no-ca', host: target.host, device_type: 'vendor_eos' })).id;
    const body = await testCredential(deviceId);
    expect(body.success).toBe(false);
    expect(body.message).toMatch(/^gnmi failed: .*server TLS certificate not trusted/);
    expect(target.rpcs.length).toBe(before);
  });
});
