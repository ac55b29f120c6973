import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeviceTargets } from '../../controller/src/profiles/credentials';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from './helpers';

const SECRETS = {
  password: 'Pa55-word-that-must-never-leak',
  private_key: '-----BEGIN OPENSSH PRIVATE KEY-----\nkey-material-that-must-never-leak\n-----END OPENSSH PRIVATE KEY-----',
  enable_password: 'enable-secret-that-must-never-leak',
};

let c: TestController;
let a: InventoryUser;
let b: InventoryUser;
const responses: string[] = [];

beforeAll(async () => {
  c = await startTestController();
  a = await inventoryUser(c);
  b = await inventoryUser(c);
});
afterAll(async () => c?.close());

/** Every response body of this file is kept to check that no secret ever appears in one. */
async function call(user: InventoryUser, method: string, path: string, body?: unknown) {
  const res = await user.as(method, path, body === undefined ? {} : { body });
  responses.push(res.text);
  return res;
}

describe('connection profiles', () => {
  let id: string;

  it('creates a profile with defaults and has_* flags instead of secrets', async () => {
    const res = await call(a, 'POST', '/api/profiles', { name: 'core', username: 'netops', ...SECRETS });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'core',
      username: 'netops',
      org_id: a.orgId,
      has_password: true,
      has_private_key: true,
      has_enable_password: true,
      ssh_port: 22,
      netconf_port: 830,
      gnmi_port: 9339,
      gnmi_tls: false,
      gnmi_skip_verify: false,
      automation_transport: null,
      device_count: 0,
    });
    for (const key of ['password', 'private_key', 'enable_password', 'password_enc']) expect(res.body).not.toHaveProperty(key);
    id = res.body.id;
  });

  it('stores secrets sealed, not in clear text', async () => {
    const row = await c.db('connection_profiles').where({ id }).first();
    expect(row.password_enc).not.toContain(SECRETS.password);
    expect(await c.services.secrets.open(row.password_enc)).toBe(SECRETS.password);
  });

  it('lists and reads profiles', async () => {
    const list = await call(a, 'GET', '/api/profiles');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.profiles[0]).toMatchObject({ id, name: 'core', has_password: true });
    const one = await call(a, 'GET', `/api/profiles/${id}`);
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(id);
  });

  it('PUT keeps omitted secrets, clears a secret sent as null, and changes only fields sent', async () => {
    const res = await call(a, 'PUT', `/api/profiles/${id}`, {
      enable_password: null,
      gnmi_port: 57400,
      automation_transport: 'gnmi',
      gnmi_tls: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'core',
      has_password: true,
      has_private_key: true,
      has_enable_password: false,
      gnmi_port: 57400,
      automation_transport: 'gnmi',
      gnmi_tls: true,
      ssh_port: 22,
    });
    const replaced = await call(a, 'PUT', `/api/profiles/${id}`, { password: 'a-new-password-never-leaks' });
    expect(replaced.body.has_password).toBe(true);
    const row = await c.db('connection_profiles').where({ id }).first();
    expect(await c.services.secrets.open(row.password_enc)).toBe('a-new-password-never-leaks');
    await call(a, 'PUT', `/api/profiles/${id}`, { password: SECRETS.password, enable_password: SECRETS.enable_password });
  });

  it('refuses a duplicate name with 409', async () => {
    const res = await call(a, 'POST', '/api/profiles', { name: 'core' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('PROFILE_NAME_TAKEN');
    const other = await call(a, 'POST', '/api/profiles', { name: 'edge' });
    const rename = await call(a, 'PUT', `/api/profiles/${other.body.id}`, { name: 'core' });
    expect(rename.status).toBe(409);
  });

  it('the same name is free in another organization', async () => {
    const res = await call(b, 'POST', '/api/profiles', { name: 'core' });
    expect(res.status).toBe(201);
  });

  it('answers 400, never 500, for bad input', async () => {
    for (const [body, needle] of [
      [{ name: 'x', ssh_port: 70000 }, 'ssh_port'],
      [{ name: 'x', ssh_port: '22' }, 'ssh_port'],
      [{ name: 'x', automation_transport: 'telnet' }, 'automation_transport'],
      [{ name: 'x', colour: 'blue' }, 'colour'],
      [{ username: 'x' }, 'name'],
      [{ name: '' }, 'name'],
    ] as const) {
      const res = await call(a, 'POST', '/api/profiles', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toContain(needle);
    }
    const malformed = await a.as('POST', '/api/profiles', { raw: '{"name":', contentType: 'application/json' });
    expect(malformed.status).toBe(400);
    expect((await call(a, 'GET', '/api/profiles/not-a-uuid')).status).toBe(400);
    expect((await call(a, 'PUT', `/api/profiles/${id}`, { password: 42 })).status).toBe(400);
  });

  it('assigns devices to a profile and reports how many moved', async () => {
    const target = await a.profile({ name: 'target' });
    const d1 = await a.device(id);
    const d2 = await a.device(id);
    const foreign = await b.device((await b.profile()).id);
    const res = await call(a, 'POST', '/api/profiles/assign', { profile_id: target.id, device_ids: [d1.id, d2.id, foreign.id] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 2 });
    expect((await call(a, 'GET', `/api/devices/${d1.id}`)).body.profile_id).toBe(target.id);
    expect((await call(b, 'GET', `/api/devices/${foreign.id}`)).body.profile_id).not.toBe(target.id);
    expect((await call(a, 'GET', `/api/profiles/${target.id}`)).body.device_count).toBe(2);
    expect((await call(a, 'POST', '/api/profiles/assign', { profile_id: target.id, device_ids: [] })).status).toBe(400);
    const foreignProfile = await call(b, 'POST', '/api/profiles/assign', { profile_id: target.id, device_ids: [foreign.id] });
    expect(foreignProfile.status).toBe(404);
  });

  it('refuses to delete a profile devices still use, saying how many', async () => {
    const used = await a.profile({ name: 'used' });
    await a.device(used.id);
    await a.device(used.id);
    const res = await call(a, 'DELETE', `/api/profiles/${used.id}`);
    expect(res.status).toBe(409);
    expect(res.body.error).toContain('2 devices');
    expect(res.body.device_count).toBe(2);
  });

  it('deletes an unused profile with 204', async () => {
    const spare = await a.profile({ name: 'spare' });
    expect((await call(a, 'DELETE', `/api/profiles/${spare.id}`)).status).toBe(204);
    expect((await call(a, 'GET', `/api/profiles/${spare.id}`)).status).toBe(404);
  });

  it('another organization gets 404 on every :id route and sees nothing in the list', async () => {
    expect((await call(b, 'GET', `/api/profiles/${id}`)).status).toBe(404);
    expect((await call(b, 'PUT', `/api/profiles/${id}`, { name: 'stolen' })).status).toBe(404);
    expect((await call(b, 'DELETE', `/api/profiles/${id}`)).status).toBe(404);
    const list = await call(b, 'GET', '/api/profiles');
    expect(list.body.profiles.map((p: { id: string }) => p.id)).not.toContain(id);
    expect((await call(a, 'GET', `/api/profiles/${id}`)).body.name).toBe('core');
  });

  it('loadDeviceTargets returns device, ports, transport and decrypted credentials of one organization only', async () => {
    const profile = await a.profile({ name: 'automation', username: 'robot', ...SECRETS, netconf_port: 2830, automation_transport: 'netconf' });
    const d = await a.device(profile.id, { host: 'sw1.example.net', device_type: 'vendor_junos', platform: 'junos' });
    const foreign = await b.device((await b.profile()).id);
    const targets = await loadDeviceTargets(c.db, c.services.secrets, a.orgId, [d.id, foreign.id, d.id]);
    expect(targets).toEqual([
      {
        device_id: d.id,
        name: d.name,
        host: 'sw1.example.net',
        device_type: 'vendor_junos',
        platform: 'junos',
        protocol: 'ssh',
        site_id: null,
        profile_id: profile.id,
        ports: { ssh: 22, netconf: 2830, gnmi: 9339 },
        gnmi_tls: false,
        gnmi_skip_verify: false,
        automation_transport: 'netconf',
        ca_certificate: null,
        allowed_networks: [],
        ssh_host_key: null,
        gnmi_cert_sha256: null,
        credentials: { username: 'robot', ...SECRETS },
      },
    ]);
    expect(await c.services.inventory!.loadDeviceTargets(a.orgId, [d.id])).toHaveLength(1);
    expect(await loadDeviceTargets(c.db, c.services.secrets, a.orgId, [])).toEqual([]);
  });

  it('no secret appears in any response or log line', async () => {
    const everything = responses.join('\n') + c.logs();
    for (const secret of [...Object.values(SECRETS), 'a-new-password-never-leaks', 'key-material-that-must-never-leak']) {
      expect(everything).not.toContain(secret);
    }
  });
});
