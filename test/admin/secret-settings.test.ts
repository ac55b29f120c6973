import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

describe('secret settings', () => {
  it('are write-only, and clearing one with null reads back as unset instead of failing', async () => {
    const set = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'ldap.bind_password': 's3cret-bind' } } });
    expect(set.status).toBe(200);
    expect(set.body.settings['has_ldap.bind_password']).toBe(true);
    expect(set.text).not.toContain('s3cret-bind');
    expect(await c.services.settings.get('ldap.bind_password')).toBe('s3cret-bind');

    const cleared = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'ldap.bind_password': null } } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.settings['has_ldap.bind_password']).toBe(false);
    expect(await c.services.settings.get('ldap.bind_password')).toBeNull();
    const test = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(test.status).toBeLessThan(500);
  });
});
