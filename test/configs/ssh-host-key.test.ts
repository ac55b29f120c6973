/**
 * SSH host key pinning (trust on first use) end to end: the API submits config pulls, an agent
 * runtime on the controller's in-process hub runs real SSH / NETCONF sessions against the
 * simulators, the first host key seen is pinned with the job outcome, later jobs carry the pin
 * and a device offering another key fails before authentication until the pin is cleared.
 */
import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestController } from '../helpers/controller';
import { freePort } from '../helpers/net';
import type { InventoryUser } from '../inventory/helpers';
import { pinningFixture } from './pinning';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { readableKeyPair } from '../sim/ssh/device';

const PASSWORD = 'pin-Pa55word-secret';

/** OpenSSH's SHA256 fingerprint of a private key's public half. */
function fingerprintOf(privateKey: string): { fingerprint: string; type: string } {
  const parsed = ssh2.utils.parseKey(privateKey);
  if (parsed instanceof Error) throw parsed;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return { fingerprint: `SHA256:${createHash('sha256').update(key.getPublicSSH()).digest('base64').replace(/=+$/, '')}`, type: key.type };
}

let f: Awaited<ReturnType<typeof pinningFixture>>;
let c: TestController;
let u: InventoryUser;
let other: InventoryUser;
let sim: SimSshDevice;
let nc: NetconfDevice;
let ncRekeyed: NetconfDevice;
let deviceId: string;
let ncId: string;
let ncProfileId: string;
const keyA = readableKeyPair().private;
const keyB = readableKeyPair().private;
const ncKeyA = readableKeyPair().private;
const ncKeyB = readableKeyPair().private;

beforeAll(async () => {
  f = await pinningFixture();
  ({ c, u, other } = f);
  sim = await startSshDevice({ hostname: 'pin-1', username: 'netops', password: PASSWORD, hostKey: keyA });
  const profile = await u.profile({ username: 'netops', password: PASSWORD, ssh_port: sim.port });
  deviceId = (await u.device(profile.id, { name: 'pin-1', host: sim.host })).id;

  nc = await startNetconfDevice({
    username: 'netops',
    password: PASSWORD,
    hostKey: ncKeyA,
    initialConfig: '<system xmlns="urn:example:system"><hostname>nc-pin</hostname></system>',
  });
  ncRekeyed = await startNetconfDevice({
    username: 'netops',
    password: PASSWORD,
    hostKey: ncKeyB,
    initialConfig: '<system xmlns="urn:example:system"><hostname>nc-pin</hostname></system>',
  });
  ncProfileId = (
    await u.profile({ username: 'netops', password: PASSWORD, ssh_port: await freePort(), netconf_port: nc.port, automation_transport: 'netconf' })
  ).id;
  ncId = (await u.device(ncProfileId, { name: 'nc-pin', host: nc.host, device_type: 'vendor_junos' })).id;
}, 60_000);

afterAll(async () => {
  await Promise.all([sim?.close(), nc?.close(), ncRekeyed?.close()]);
  await f?.close();
});

const pull = (id: string, method: 'cli' | 'structured') => f.pull(id, method);
const pinOf = (id: string) => f.pinOf(id, 'ssh_host_key');

describe('SSH host key pinning (SSH CLI)', () => {
  it('shows no pin before the first session', async () => {
    expect(await pinOf(deviceId)).toBeNull();
  });

  it('pins the host key of the first pull', async () => {
    const res = await pull(deviceId, 'cli');
    expect(res.status, res.text).toBe(201);
    const pin = await pinOf(deviceId);
    expect(pin).toMatchObject(fingerprintOf(keyA));
    expect(pin.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(new Date(pin.seen_at).getTime()).toBeGreaterThan(0);
    // Not part of the summary form.
    const list = await u.as('GET', '/api/devices');
    expect(list.body.devices.find((d: any) => d.id === deviceId)).not.toHaveProperty('ssh_host_key');
  });

  it('pulls again with the same key and keeps the pin', async () => {
    const before = await pinOf(deviceId);
    const res = await pull(deviceId, 'cli');
    expect(res.status, res.text).toBe(201);
    expect(await pinOf(deviceId)).toEqual(before);
  });

  it('refuses a device offering another key, before authenticating, and learns nothing', async () => {
    const port = sim.port;
    const before = await pinOf(deviceId);
    await sim.close();
    sim = await startSshDevice({ hostname: 'pin-1', username: 'netops', password: PASSWORD, hostKey: keyB, port });
    const res = await pull(deviceId, 'cli');
    expect(res.status, res.text).toBe(502);
    const expected =
      `host key: mismatch for pin-1 (${sim.host}:${port}): expected ${fingerprintOf(keyA).fingerprint}, device offered ` +
      `${fingerprintOf(keyB).fingerprint} (ssh-ed25519)`;
    const latest = await u.as('GET', `/api/config/devices/${deviceId}/configs/latest`);
    expect(latest.body.status).toBe('failed');
    expect(latest.body.error_message).toContain(expected);
    expect(latest.body.error_message).toContain('DELETE /api/devices/:id/ssh-host-key');
    expect(sim.stats.logins).toBe(0);
    expect(await pinOf(deviceId)).toEqual(before);
  });

  it('another organization gets 404 and the pin stays', async () => {
    const res = await other.as('DELETE', `/api/devices/${deviceId}/ssh-host-key`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('DEVICE_NOT_FOUND');
    expect((await other.as('GET', `/api/devices/${deviceId}`)).status).toBe(404);
    expect(await pinOf(deviceId)).toMatchObject(fingerprintOf(keyA));
  });

  it('clearing the pin lets the next pull learn the new key (audited)', async () => {
    const res = await u.as('DELETE', `/api/devices/${deviceId}/ssh-host-key`);
    expect(res.status, res.text).toBe(204);
    expect(await pinOf(deviceId)).toBeNull();
    const audit = await c.db('audit_log').where({ kind: 'device.ssh_host_key_cleared' });
    expect(audit).toHaveLength(1);
    expect(audit[0].details).toMatchObject({ device_id: deviceId, fingerprint: fingerprintOf(keyA).fingerprint });
    const again = await pull(deviceId, 'cli');
    expect(again.status, again.text).toBe(201);
    expect(await pinOf(deviceId)).toMatchObject(fingerprintOf(keyB));
    expect(sim.stats.logins).toBe(1);
  });
});

describe('SSH host key pinning (NETCONF)', () => {
  it('pins the NETCONF session key and refuses another', async () => {
    const first = await pull(ncId, 'structured');
    expect(first.status, first.text).toBe(201);
    expect(await pinOf(ncId)).toMatchObject(fingerprintOf(ncKeyA));

    const moved = await u.as('PUT', `/api/profiles/${ncProfileId}`, { body: { netconf_port: ncRekeyed.port } });
    expect(moved.status, moved.text).toBe(200);
    const res = await pull(ncId, 'structured');
    expect(res.status, res.text).toBe(502);
    const latest = await u.as('GET', `/api/config/devices/${ncId}/configs/latest`);
    expect(latest.body.error_message).toContain(
      `host key: mismatch for nc-pin (${ncRekeyed.host}:${ncRekeyed.port}): expected ${fingerprintOf(ncKeyA).fingerprint}, device offered ` +
        `${fingerprintOf(ncKeyB).fingerprint}`,
    );
    expect(await pinOf(ncId)).toMatchObject(fingerprintOf(ncKeyA));

    expect((await u.as('DELETE', `/api/devices/${ncId}/ssh-host-key`)).status).toBe(204);
    const relearned = await pull(ncId, 'structured');
    expect(relearned.status, relearned.text).toBe(201);
    expect(await pinOf(ncId)).toMatchObject(fingerprintOf(ncKeyB));
  });
});
