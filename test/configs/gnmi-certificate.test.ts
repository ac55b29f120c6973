/**
 * gNMI TLS certificate pinning (trust on first use) end to end: the API submits structured
 * config pulls, an agent runtime on the controller's in-process hub runs real gNMI-over-TLS
 * sessions against the simulator (self-signed certificates, gnmi_skip_verify as devices with
 * self-signed certificates are usually set up), the first certificate seen is pinned with the
 * job outcome, later jobs carry the pin and a target presenting another certificate on the same
 * address and port is refused before any RPC carries credentials, until the pin is cleared.
 * The last part answers for an agent in the test itself: an older agent's result (no gnmi_cert)
 * pins nothing, and the job message carries the pin once there is one.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importAgentPrivateKey } from '../../shared/src/jobs/crypto';
import type { InProcessHub } from '../../shared/src/jobs/inprocess';
import type { BatchJob } from '../../shared/src/jobs/messages';
import type { TestController } from '../helpers/controller';
import { batchOf, enrollAgent, resultsToken, takeBatch } from '../agents/helpers';
import type { InventoryUser } from '../inventory/helpers';
import { pinningFixture } from './pinning';
import { newSelfSignedCert, startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';

const PASSWORD = 'gnmi-Pa55word-secret';
const INITIAL = { 'openconfig-system:system': { config: { hostname: 'gnmi-pin' } } };
const certA = newSelfSignedCert('gnmi-pin-a');
const certB = newSelfSignedCert('gnmi-pin-b');
const sha256 = (pem: string) => new X509Certificate(pem).fingerprint256;

let f: Awaited<ReturnType<typeof pinningFixture>>;
let c: TestController;
let u: InventoryUser;
let other: InventoryUser;
let target: GnmiTarget;
let profileId: string;
let deviceId: string;

beforeAll(async () => {
  f = await pinningFixture();
  ({ c, u, other } = f);
  target = await startGnmiTarget({ tls: true, cert: certA, username: 'netops', password: PASSWORD, initialTree: INITIAL });
  profileId = (
    await u.profile({
      username: 'netops',
      password: PASSWORD,
      gnmi_port: target.port,
      gnmi_tls: true,
      gnmi_skip_verify: true,
      automation_transport: 'gnmi',
    })
  ).id;
  deviceId = (await u.device(profileId, { name: 'gnmi-pin', host: target.host, device_type: 'vendor_eos' })).id;
}, 60_000);

afterAll(async () => {
  await target?.close();
  await f?.close();
});

const pull = (id: string) => f.pull(id, 'structured');
const pinOf = (id: string) => f.pinOf(id, 'gnmi_certificate');

describe('gNMI TLS certificate pinning (gnmi_skip_verify on)', () => {
  it('shows no pin before the first session', async () => {
    expect(await pinOf(deviceId)).toBeNull();
  });

  it('pins the certificate of the first pull', async () => {
    const res = await pull(deviceId);
    expect(res.status, res.text).toBe(201);
    const pin = await pinOf(deviceId);
    const x = new X509Certificate(certA.cert);
    expect(pin).toMatchObject({ sha256: sha256(certA.cert), subject: 'CN=gnmi-pin-a', not_after: new Date(x.validTo).toISOString() });
    expect(pin.sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(new Date(pin.seen_at).getTime()).toBeGreaterThan(0);
    // No SSH session: no host key. Not part of the summary form.
    expect((await u.as('GET', `/api/devices/${deviceId}`)).body.ssh_host_key).toBeNull();
    const list = await u.as('GET', '/api/devices');
    expect(list.body.devices.find((d: any) => d.id === deviceId)).not.toHaveProperty('gnmi_certificate');
  });

  it('pulls again with the same certificate and keeps the pin', async () => {
    const before = await pinOf(deviceId);
    const res = await pull(deviceId);
    expect(res.status, res.text).toBe(201);
    expect(await pinOf(deviceId)).toEqual(before);
  });

  it('refuses another certificate on the same address and port before any RPC carries credentials, and learns nothing', async () => {
    const port = target.port;
    const before = await pinOf(deviceId);
    await target.close();
    target = await startGnmiTarget({ tls: true, cert: certB, username: 'netops', password: PASSWORD, initialTree: INITIAL, port });
    const res = await pull(deviceId);
    expect(res.status, res.text).toBe(502);
    const latest = await u.as('GET', `/api/config/devices/${deviceId}/configs/latest`);
    expect(latest.body.status).toBe('failed');
    expect(latest.body.error_message).toContain(
      `gNMI certificate: mismatch for gnmi-pin (${target.host}:${port}): expected SHA-256 ${sha256(certA.cert)}, device presented ` +
        `${sha256(certB.cert)} (CN=gnmi-pin-b)`,
    );
    expect(latest.body.error_message).toContain('DELETE /api/devices/:id/gnmi-certificate');
    expect(target.rpcs).toEqual([]); // no Capabilities, no Get: the username/password never left the agent
    expect(await pinOf(deviceId)).toEqual(before);
  });

  it('another organization gets 404 and the pin stays', async () => {
    const res = await other.as('DELETE', `/api/devices/${deviceId}/gnmi-certificate`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('DEVICE_NOT_FOUND');
    expect(await pinOf(deviceId)).toMatchObject({ sha256: sha256(certA.cert) });
    expect(await c.db('audit_log').where({ kind: 'device.gnmi_certificate_cleared' })).toHaveLength(0);
  });

  it('clearing the pin lets the next pull learn the new certificate (audited)', async () => {
    const res = await u.as('DELETE', `/api/devices/${deviceId}/gnmi-certificate`);
    expect(res.status, res.text).toBe(204);
    expect(await pinOf(deviceId)).toBeNull();
    const audit = await c.db('audit_log').where({ kind: 'device.gnmi_certificate_cleared' });
    expect(audit).toHaveLength(1);
    expect(audit[0].details).toMatchObject({ device_id: deviceId, sha256: sha256(certA.cert) });
    const again = await pull(deviceId);
    expect(again.status, again.text).toBe(201);
    expect(await pinOf(deviceId)).toMatchObject({ sha256: sha256(certB.cert), subject: 'CN=gnmi-pin-b' });
    expect(target.rpcs).toEqual(['/gnmi.gNMI/Capabilities', '/gnmi.gNMI/Get']);
    // Clearing a device with no pin is no error.
    expect((await u.as('DELETE', `/api/devices/${deviceId}/gnmi-certificate`)).status).toBe(204);
    expect((await u.as('DELETE', `/api/devices/${deviceId}/gnmi-certificate`)).status).toBe(204);
  });

  it('plaintext gNMI has nothing to pin', async () => {
    const plain = await startGnmiTarget({ username: 'netops', password: PASSWORD, initialTree: INITIAL });
    try {
      const profile = await u.profile({ username: 'netops', password: PASSWORD, gnmi_port: plain.port, automation_transport: 'gnmi' });
      const id = (await u.device(profile.id, { name: 'gnmi-plain', host: plain.host, device_type: 'vendor_eos' })).id;
      const res = await pull(id);
      expect(res.status, res.text).toBe(201);
      expect(await pinOf(id)).toBeNull();
    } finally {
      await plain.close();
    }
  });
});

describe('the pin in results and in the job batch', () => {
  it('pins nothing from a result without a gnmi_cert; the job carries the pin once there is one', async () => {
    // An agent of its own site, never started: the test takes its jobs off the hub and answers.
    const site = await u.site();
    const { identity } = await enrollAgent(c, u, { site_id: site.id });
    const signKey = (await importAgentPrivateKey(identity.private_jwk)).sign;
    const link = (c.services.jobEngine.transport as InProcessHub).link(u.orgId, site.id);
    const id = (await u.device(profileId, { name: 'gnmi-older', host: '192.0.2.44', device_type: 'vendor_eos', site_id: site.id })).id;

    const runJob = async (extra: Record<string, unknown>): Promise<BatchJob> => {
      const [jobId] = await c.services.jobs.submit([{ orgId: u.orgId, kind: 'test_credential', deviceId: id, params: {}, deadlineMs: 60_000 }]);
      const [message] = batchOf(await takeBatch(link)).jobs;
      expect(message.job_id).toBe(jobId);
      await link.publish(await resultsToken(signKey, identity.agent_id, [{ job_id: jobId, attempt: message.attempt, ...extra }]), `${jobId}:results`);
      const [outcome] = await c.services.jobs.wait([jobId], 30_000);
      expect(outcome.status).toBe('succeeded');
      return message;
    };

    const first = await runJob({});
    expect(first.device.gnmi_cert_sha256).toBeNull(); // nothing pinned yet
    expect(await pinOf(id)).toBeNull();

    const cert = { sha256: sha256(certA.cert), subject: 'CN=gnmi-pin-a', not_after: null };
    await runJob({ gnmi_cert: cert });
    expect(await pinOf(id)).toMatchObject({ sha256: cert.sha256, subject: cert.subject, not_after: null });

    const third = await runJob({ gnmi_cert: { ...cert, sha256: sha256(certB.cert) } });
    expect(third.device.gnmi_cert_sha256).toBe(cert.sha256);
    expect(await pinOf(id)).toMatchObject({ sha256: cert.sha256 }); // a device keeps the pin it has
    await link.close();
  });
});
