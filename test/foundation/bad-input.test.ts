import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => {
  // Whatever was thrown at it, the controller logged no server error.
  expect(c.logs()).not.toContain('"level":50');
  await c?.close();
});

function expectJsonError(res: { status: number; body: any; headers: Headers }, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(typeof res.body.error).toBe('string');
  expect(typeof res.body.code).toBe('string');
}

describe('bad input never becomes a 500', () => {
  it('malformed JSON → 400 INVALID_JSON saying so', async () => {
    for (const raw of ['{"username": "admin", ', '{username: admin}', 'null x', '[1,2', '{"a":1}}']) {
      const res = await c.request('POST', '/api/auth/login', { raw, contentType: 'application/json' });
      expectJsonError(res, 400);
      expect(res.body.code).toBe('INVALID_JSON');
      expect(res.body.error).toMatch(/^Request body is not valid JSON/);
    }
  });

  it('a __proto__ key is refused', async () => {
    const res = await c.request('POST', '/api/admin/organizations', {
      token: c.adminToken,
      raw: '{"name":"x","__proto__":{"admin":true}}',
      contentType: 'application/json',
    });
    expectJsonError(res, 400);
  });

  it('wrong types → 400 naming the field; bodies are never coerced', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/auth/login', { username: 123, password: 'x' }, 'body.username must be string'],
      ['POST', '/api/auth/login', { username: 'admin', password: true }, 'body.password must be string'],
      ['POST', '/api/admin/organizations', { name: ['a'] }, 'body.name must be string'],
      ['PUT', '/api/admin/users/00000000-0000-4000-8000-000000000000', { is_active: 'false' }, 'body.is_active must be boolean'],
      ['POST', '/api/auth/login', [], 'body must be object'],
      ['POST', '/api/auth/login', 'admin', 'body must be object'],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await c.request(method, path, { token: c.adminToken, body });
      expectJsonError(res, 400);
      expect(res.body.error).toBe(message);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    }
  });

  it('a number in a string field is not read as a string, nor "5" as a number', async () => {
    const seats = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'licenses.terminal_seats': '5' } } });
    expectJsonError(seats, 400);
  });

  it('unknown fields of closed schemas → 400 naming the field', async () => {
    const res = await c.request('POST', '/api/auth/refresh', { body: { refresh_token: 'x', extra: 1 } });
    expectJsonError(res, 400);
    expect(res.body.error).toBe("body has unknown property 'extra'");
  });

  it('a missing body where one is needed → 400', async () => {
    const res = await c.request('POST', '/api/auth/login');
    expectJsonError(res, 400);
    const empty = await c.request('POST', '/api/auth/login', { raw: '', contentType: 'application/json' });
    expectJsonError(empty, 400);
    expect(empty.body.error).toBe('body must be object');
  });

  it('a bad UUID in a path → 400 naming the parameter', async () => {
    for (const [method, path] of [
      ['GET', '/api/admin/users/abc'],
      ['DELETE', '/api/auth/sessions/1234'],
      ['PUT', '/api/admin/users/%27%3B--'],
    ]) {
      const res = await c.request(method, path, { token: c.adminToken, body: method === 'PUT' ? { display_name: 'x' } : undefined });
      expectJsonError(res, 400);
      expect(res.body.error).toBe('params.id must be a UUID');
    }
  });

  it('a bad query value → 400 naming it', async () => {
    const res = await c.request('GET', '/api/admin/users?limit=lots', { token: c.adminToken });
    expectJsonError(res, 400);
    expect(res.body.error).toBe('querystring.limit must be integer');
  });

  it('an oversized body → 413 JSON error', async () => {
    const big = JSON.stringify({ username: 'admin', password: 'x'.repeat(2 * 1024 * 1024) });
    const res = await c.request('POST', '/api/auth/login', { raw: big, contentType: 'application/json' });
    expectJsonError(res, 413);
    expect(res.body.code).toBe('BODY_TOO_LARGE');
  });

  it('an unsupported content type → 415 JSON error', async () => {
    const res = await c.request('POST', '/api/auth/login', { raw: `username=${ADMIN.username}`, contentType: 'application/x-www-form-urlencoded' });
    expectJsonError(res, 415);
  });

  it('an unknown route → 404 JSON naming it, with or without a token', async () => {
    for (const token of [undefined, c.adminToken]) {
      const res = await c.request('GET', '/api/no-such-thing?x=1', { token });
      expectJsonError(res, 404);
      expect(res.body.error).toBe('Route not found: GET /api/no-such-thing');
    }
    const wrongMethod = await c.request('PATCH', '/api/auth/me', { token: c.adminToken });
    expectJsonError(wrongMethod, 404);
  });

  it('a very long username or password is refused, not hashed', async () => {
    const res = await c.login('a'.repeat(300), 'x');
    expectJsonError(res, 400);
    const long = await c.login('admin', 'x'.repeat(5000));
    expectJsonError(long, 400);
  });
});
