import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

const getSettings = (token: string) => c.request('GET', '/api/admin/settings', { token });
const putSettings = (token: string, settings: unknown) => c.request('PUT', '/api/admin/settings', { token, body: { settings } });

describe('GET /api/admin/settings', () => {
  it("returns every setting with API.md's defaults", async () => {
    const res = await getSettings(c.adminToken);
    expect(res.status).toBe(200);
    expect(res.body.settings).toMatchObject({
      'session.access_token_hours': 24,
      'session.refresh_token_days': 30,
      'security.rate_limit.requests_per_minute': 100,
      'security.rate_limit.failed_login_limit': 5,
      'security.rate_limit.failed_login_window_minutes': 15,
      'licenses.terminal_seats': expect.any(Number),
      'devices.default_profile_id': null,
      'discovery.default_poll_interval_minutes': expect.any(Number),
    });
  });

  it('needs settings.manage', async () => {
    const operator = await c.createOrgUser(['operator']);
    expect((await getSettings(operator.token)).status).toBe(403);
    expect((await putSettings(operator.token, { 'discovery.default_poll_interval_minutes': 5 })).status).toBe(403);
  });
});

describe('PUT /api/admin/settings', () => {
  it('changes a global setting for a platform administrator and answers with the effective settings', async () => {
    const res = await putSettings(c.adminToken, { 'licenses.terminal_seats': 12 });
    expect(res.status).toBe(200);
    expect(res.body.settings['licenses.terminal_seats']).toBe(12);
    expect((await getSettings(c.adminToken)).body.settings['licenses.terminal_seats']).toBe(12);
    const audit = await c.request('GET', '/api/admin/audit?kind=admin.settings_changed', { token: c.adminToken });
    expect(audit.body.entries[0].details.keys).toEqual(['licenses.terminal_seats']);
  });

  it('answers 400 naming an unknown key', async () => {
    const res = await putSettings(c.adminToken, { 'session.forever': true });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNKNOWN_SETTING');
    expect(res.body.error).toContain('session.forever');
  });

  it('answers 400 for a bad value and writes nothing of the request', async () => {
    for (const value of ['12', 0, 1.5, null, 100000000]) {
      const res = await putSettings(c.adminToken, { 'licenses.terminal_seats': 3, 'session.access_token_hours': value });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('INVALID_SETTING');
      expect(res.body.error).toContain('session.access_token_hours');
    }
    const now = (await getSettings(c.adminToken)).body.settings;
    expect(now['licenses.terminal_seats']).toBe(12);
    expect(now['session.access_token_hours']).toBe(24);
  });

  it('answers 400 for an empty change or a malformed body', async () => {
    expect((await putSettings(c.adminToken, {})).status).toBe(400);
    expect((await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { 'licenses.terminal_seats': 3 } })).status).toBe(400);
    expect((await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: [1] } })).status).toBe(400);
  });

  it('answers 403 when an organization administrator changes a platform-wide key', async () => {
    const orgAdmin = await c.createOrgUser(['org_admin']);
    const res = await putSettings(orgAdmin.token, { 'security.rate_limit.failed_login_limit': 100 });
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('security.rate_limit.failed_login_limit');
    expect((await getSettings(c.adminToken)).body.settings['security.rate_limit.failed_login_limit']).toBe(5);
  });

  it('scopes organization keys to the organization that set them', async () => {
    const a = await c.createOrgUser(['org_admin']);
    const b = await c.createOrgUser(['org_admin']);
    const key = 'discovery.default_poll_interval_minutes';
    const before = (await getSettings(b.token)).body.settings[key];
    const res = await putSettings(a.token, { [key]: 7 });
    expect(res.status).toBe(200);
    expect((await getSettings(a.token)).body.settings[key]).toBe(7);
    expect((await getSettings(b.token)).body.settings[key]).toBe(before);
    expect((await getSettings(c.adminToken)).body.settings[key]).toBe(before);
    expect(await c.services.settings.get(key, a.orgId)).toBe(7);
    expect(await c.services.settings.get(key, b.orgId)).toBe(before);
  });

  it("refuses another organization's connection profile for devices.default_profile_id (400), accepting its own and null", async () => {
    const a = await c.createOrgUser(['org_admin']);
    const b = await c.createOrgUser(['org_admin']);
    const profile = async (token: string) => {
      const res = await c.request('POST', '/api/profiles', {
        token,
        body: { name: `p-${Math.random().toString(16).slice(2)}`, username: 'netops', password: 'secret' },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const theirs = await profile(b.token);
    const mine = await profile(a.token);
    const key = 'devices.default_profile_id';
    for (const id of [theirs, '00000000-0000-4000-8000-000000000000']) {
      const res = await putSettings(a.token, { [key]: id });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 'UNKNOWN_REFERENCE', error: `Setting '${key}': no connection profile ${id} in this organization` });
    }
    // Nothing of a refused request is stored, not even its valid keys.
    const mixed = await putSettings(a.token, { 'discovery.default_poll_interval_minutes': 9, [key]: theirs });
    expect(mixed.status).toBe(400);
    expect(await c.services.settings.get(key, a.orgId)).toBeNull();
    expect(await c.services.settings.get('discovery.default_poll_interval_minutes', a.orgId)).not.toBe(9);

    expect((await putSettings(a.token, { [key]: mine })).body.settings[key]).toBe(mine);
    expect((await putSettings(a.token, { [key]: null })).body.settings[key]).toBeNull();
  });
});
