import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { changedTables, dbFingerprint } from '../helpers/db-fingerprint';

/** The values of issue #17 that reached the database or a recursive serializer and answered 500. */
let c: TestController;
let operator: string;
beforeAll(async () => {
  c = await startTestController();
  operator = (await c.createOrgUser(['org_admin'])).token;
});
afterAll(async () => {
  expect(c.logs()).not.toContain('"level":50');
  await c?.close();
});

async function expect400(method: string, path: string, options: Parameters<TestController['request']>[2], message: RegExp) {
  const before = await dbFingerprint(c.db);
  const res = await c.request(method, path, options);
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(400);
  expect(res.body.error).toMatch(message);
  expect(changedTables(before, await dbFingerprint(c.db))).toEqual([]);
}

describe('bad values are a 400 naming the field', () => {
  it('NUL in a body text field, even on an anonymous login, and in a property name', async () => {
    await expect400('POST', '/api/auth/login', { body: { username: 'ad\u0000min', password: 'x' } }, /^body\.username must not contain NUL/);
    await expect400('POST', '/api/admin/organizations', { token: c.adminToken, body: { name: 'a\u0000b' } }, /^body\.name must not contain NUL/);
    await expect400('PUT', '/api/admin/settings', { token: operator, body: { settings: { 'x\u0000': 1 } } }, /NUL/);
  });

  it('NUL in a query filter or a path parameter', async () => {
    await expect400('GET', '/api/devices?q=%00', { token: operator }, /^querystring\.q must not contain NUL/);
    await expect400('GET', '/api/devices?vendor=cisco%00', { token: operator }, /NUL/);
  });

  it('offsets and versions beyond a PostgreSQL integer', async () => {
    await expect400('GET', '/api/admin/users?offset=1e18', { token: operator }, /^querystring\.offset must be <= 2147483647/);
    await expect400('GET', '/api/config/stacks?offset=9007199254740993', { token: operator }, /offset/);
    await expect400(
      'GET',
      '/api/config/templates/5b0f3c3e-4f51-4c2e-9d38-2a5f3b1c0d11/versions/2147483648',
      { token: operator },
      /^params\.version must be <= 2147483647/,
    );
  });

  it('a 20,000-deep JSON body', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const raw = `{"name":"deep","services":[],"atomic":false,"shared":false,"description":"","variable_config":{"a":${deep}}}`;
    await expect400('POST', '/api/config/stacks', { token: operator, raw, contentType: 'application/json' }, /nested too deeply/);
  });

  it('setting keys that are members of every object', async () => {
    for (const key of ['constructor', 'toString', '__defineGetter__', 'hasOwnProperty']) {
      const before = await dbFingerprint(c.db);
      const res = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { [key]: 1 } } });
      expect(res.status, key).toBe(400);
      expect(res.body.code).toBe('UNKNOWN_SETTING');
      expect(changedTables(before, await dbFingerprint(c.db))).toEqual([]);
    }
  });

  it('a role named after an object member is an unknown role', async () => {
    const res = await c.request('POST', '/api/admin/users', {
      token: operator,
      body: { username: 'proto-role', password: 'a-long-enough-password-1', roles: ['constructor'] },
    });
    expect(res.status).toBe(400);
  });
});
