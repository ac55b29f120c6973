/**
 * gNMI over TLS with certificate verification on (gnmi_skip_verify false) and a private CA, end
 * to end with a real `npm run agent` process: the agent trusts the CA named by
 * NODE_EXTRA_CA_CERTS (read once at process start, so only a process of its own can show it),
 * the first certificate is pinned, another certificate from the same CA (a valid chain) is still
 * refused until the pin is cleared, and a certificate no trusted CA signed fails the chain check
 * before any RPC carries the device credentials. The agent keeps the machine's environment, so
 * where GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names the system bundle (as on the build machines) that
 * bundle and the extra CA are both trusted.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { startAgentProcess, startNats, stopAll, type AgentProcess, type NatsServer } from '../helpers/processes';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { newCertificateAuthority, newSelfSignedCert, startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';

const PASSWORD = 'gnmi-Ca-Pa55word';
const INITIAL = { 'openconfig-system:system': { config: { hostname: 'gnmi-ca' } } };
const ca = newCertificateAuthority();
const certA = ca.issue('gnmi-ca-a');
const certB = ca.issue('gnmi-ca-b');
const sha256 = (pem: string) => new X509Certificate(pem).fingerprint256;

let nats: NatsServer;
let c: TestController;
let u: InventoryUser;
let agent: AgentProcess;
let dir: string;
let target: GnmiTarget;
let profileId: string;
let deviceId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-gnmi-ca-test-'));
  writeFileSync(join(dir, 'ca.pem'), ca.cert);
  nats = await startNats();
  c = await startTestController({ config: { natsUrl: nats.url, natsPrefix: 'sb', jobs: { sweepIntervalMs: 200 } } });
  u = await inventoryUser(c, ['org_admin']);
  const created = (await u.as('POST', '/api/agents', { body: { name: 'ca-agent', site_id: null } })).body;
  agent = await startAgentProcess({
    natsUrl: nats.url,
    controllerUrl: c.url,
    enrollToken: created.enrollment_token,
    concurrency: 2,
    env: { NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') },
  });
  target = await startGnmiTarget({ tls: true, cert: certA, username: 'netops', password: PASSWORD, initialTree: INITIAL });
  profileId = (
    await u.profile({
      username: 'netops',
      password: PASSWORD,
      gnmi_port: target.port,
      gnmi_tls: true,
      gnmi_skip_verify: false,
      automation_transport: 'gnmi',
    })
  ).id;
  deviceId = (await u.device(profileId, { name: 'gnmi-ca', host: target.host, device_type: 'vendor_eos' })).id;
}, 90_000);

afterAll(async () => {
  await target?.close();
  await agent?.stop(10_000);
  await c?.close();
  await stopAll();
  await nats?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const pull = (id: string) => u.as('POST', `/api/config/devices/${id}/pull?method=structured`);
const pinOf = async (id: string) => (await u.as('GET', `/api/devices/${id}`)).body.gnmi_certificate;
const latestError = async (id: string) => (await u.as('GET', `/api/config/devices/${id}/configs/latest`)).body.error_message as string;

describe('gNMI TLS with a private CA (gnmi_skip_verify off)', () => {
  it('verifies the chain against the CA from NODE_EXTRA_CA_CERTS and pins the first certificate', async () => {
    const res = await pull(deviceId);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ structured: true, cli: false });
    expect((await u.as('GET', `/api/config/devices/${deviceId}/configs/latest`)).body).toMatchObject({
      status: 'success',
      config_format: 'json',
      pulled_via: 'gnmi',
    });
    expect(await pinOf(deviceId)).toMatchObject({ sha256: sha256(certA.cert), subject: 'CN=gnmi-ca-a' });
    expect(target.rpcs).toEqual(['/gnmi.gNMI/Capabilities', '/gnmi.gNMI/Get']);
  });

  it('refuses another certificate of the same CA while the first is pinned, before any RPC', async () => {
    const port = target.port;
    await target.close();
    target = await startGnmiTarget({ tls: true, cert: certB, username: 'netops', password: PASSWORD, initialTree: INITIAL, port });
    const res = await pull(deviceId);
    expect(res.status, res.text).toBe(502);
    expect(await latestError(deviceId)).toContain(`expected SHA-256 ${sha256(certA.cert)}, device presented ${sha256(certB.cert)} (CN=gnmi-ca-b)`);
    expect(target.rpcs).toEqual([]);
    expect(await pinOf(deviceId)).toMatchObject({ sha256: sha256(certA.cert) });
  });

  it('learns the new certificate once the pin is cleared', async () => {
    expect((await u.as('DELETE', `/api/devices/${deviceId}/gnmi-certificate`)).status).toBe(204);
    const res = await pull(deviceId);
    expect(res.status, res.text).toBe(201);
    expect(await pinOf(deviceId)).toMatchObject({ sha256: sha256(certB.cert), subject: 'CN=gnmi-ca-b' });
  });

  it('fails the chain check of a certificate no trusted CA signed, before any RPC, and pins nothing', async () => {
    const untrusted = await startGnmiTarget({
      tls: true,
      cert: newSelfSignedCert('gnmi-untrusted'),
      username: 'netops',
      password: PASSWORD,
      initialTree: INITIAL,
    });
    try {
      const profile = await u.profile({
        username: 'netops',
        password: PASSWORD,
        gnmi_port: untrusted.port,
        gnmi_tls: true,
        gnmi_skip_verify: false,
        automation_transport: 'gnmi',
      });
      const id = (await u.device(profile.id, { name: 'gnmi-untrusted', host: untrusted.host, device_type: 'vendor_eos' })).id;
      const res = await pull(id);
      expect(res.status, res.text).toBe(502);
      expect(await latestError(id)).toMatch(
        new RegExp(
          String.raw`server TLS certificate not trusted \(.*self-signed certificate.*\); ` +
            String.raw`trust its CA on the agent \(NODE_EXTRA_CA_CERTS\) or set gnmi_skip_verify to accept it`,
        ),
      );
      expect(untrusted.rpcs).toEqual([]);
      expect(await pinOf(id)).toBeNull();
    } finally {
      await untrusted.close();
    }
  });
});
