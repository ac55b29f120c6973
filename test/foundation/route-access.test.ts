import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authPlugin, routeDefaults } from '../../controller/src/auth/route-guard';
import { startTestController, type TestController } from '../helpers/controller';
import { changedTables, dbFingerprint } from '../helpers/db-fingerprint';
import { callableRoutes, concretePath, eachLimited, spellings } from '../helpers/route-spellings';

let c: TestController;
let auditorToken: string;
let operatorToken: string;
beforeAll(async () => {
  c = await startTestController();
  auditorToken = (await c.createOrgUser(['auditor'])).token; // audit.read only
  operatorToken = (await c.createOrgUser(['operator'])).token; // devices.access only
});
afterAll(async () => c?.close());

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

describe('access follows the matched route', () => {
  it('every registered route declares an access rule', () => {
    const routes = c.app.registeredRoutes;
    expect(routes.length).toBeGreaterThan(50);
    expect(routes.filter((r) => !r.access).map((r) => `${r.method} ${r.url}`)).toEqual([]);
    // The explorer, health and the sign-in routes are public; the admin API is not.
    const access = (method: string, url: string) => routes.find((r) => r.method === method && r.url === url)?.access;
    expect(access('GET', '/api/docs/json')).toBe('public');
    expect(access('GET', '/healthz')).toBe('public');
    expect(access('POST', '/api/auth/login')).toBe('public');
    expect(access('GET', '/api/auth/me')).toBe('authenticated');
    expect(access('POST', '/api/auth/ldap/test')).toBe('authenticated');
    expect(access('POST', '/api/auth/oidc/test')).toBe('authenticated');
    expect(access('GET', '/api/admin/organizations')).toBe('platform.admin');
  });

  it('a route that declares no rule stops the start, wherever it is registered', async () => {
    const app = Fastify();
    await authPlugin(app);
    expect(() => app.get('/healthz2', async () => 'ok')).toThrow(/must declare config.public, config.authenticated or config.permission/);
    expect(() => app.get('/api/auth/whoami', async () => 'ok')).toThrow(/must declare/);
    // A scope can declare the rule for routes a plugin registers; its routes are then fine.
    await app.register(async (scope) => {
      routeDefaults(scope, { public: true });
      scope.get('/plugin-page', async () => 'ok');
    });
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/plugin-page' })).statusCode).toBe(200);
    await app.close();
  });

  it('the reported spellings are refused: no organization listed or created, no anonymous LDAP bind', async () => {
    const before = await c.request('GET', '/api/admin/organizations', { token: c.adminToken });
    for (const path of ['/%61pi/admin/organizations', '/api/%61dmin/organizations', '/api/admin/%6frganizations']) {
      expect((await c.request('GET', path)).status).toBe(401);
      expect((await c.request('POST', path, { body: { name: `sneaky ${path}` } })).status).toBe(401);
      expect((await c.request('GET', path, { token: operatorToken })).status).toBe(403);
    }
    expect((await c.request('POST', '/%61pi/auth/ldap/test')).status).toBe(401);
    const after = await c.request('GET', '/api/admin/organizations', { token: c.adminToken });
    expect(after.body).toEqual(before.body);
  });

  it('every route under every spelling: 401 without a token, 403 without the permission, nothing changed', async () => {
    const routes = callableRoutes(c.app.registeredRoutes).filter((r) => r.access !== 'public');
    expect(routes.length).toBeGreaterThan(50);
    const before = await dbFingerprint(c.db);
    const wrong: string[] = [];
    const attempts: { method: string; path: string; token: string | null; allowed: number[] }[] = [];
    for (const route of routes) {
      const lacking = route.access === 'authenticated' ? null : route.access === 'audit.read' ? operatorToken : auditorToken;
      for (const path of spellings(concretePath(route.url))) {
        attempts.push({ method: route.method, path, token: null, allowed: [401, 404] });
        if (lacking) attempts.push({ method: route.method, path, token: lacking, allowed: [403, 404] });
      }
    }
    await eachLimited(attempts, 8, async ({ method, path, token, allowed }) => {
      const res = await c.request(method, path, { token, body: BODY_METHODS.has(method) ? { name: 'x' } : undefined });
      if (!allowed.includes(res.status)) wrong.push(`${method} ${path} ${token ? 'without permission' : 'anonymous'} → ${res.status}`);
    });
    expect(wrong).toEqual([]);
    expect(attempts.length).toBeGreaterThan(routes.length * 6);
    const after = await dbFingerprint(c.db);
    expect(changedTables(before, after)).toEqual([]);
  }, 180_000);
});
