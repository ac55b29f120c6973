import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

const noTrailingSlash = (path: string) => path.replace(/(.)\/$/, '$1');

/**
 * The API routes the app registered, as OpenAPI path templates: HEAD twins, the explorer, the
 * trailing-slash twins Fastify adds for a plugin's '/' route and WebSocket endpoints (which
 * OpenAPI 3.0 cannot describe, and @fastify/websocket hides) left out.
 */
function apiRoutes() {
  const seen = new Set<string>();
  return c.app.registeredRoutes
    .filter((r) => r.method !== 'HEAD' && !r.websocket && r.url.startsWith('/api/') && !r.url.startsWith('/api/docs'))
    .map((r) => ({ ...r, path: noTrailingSlash(r.url).replace(/:(\w+)/g, '{$1}') }))
    .filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
}

describe('API explorer', () => {
  it('serves the explorer UI at /api/docs without a token', async () => {
    const res = await c.request('GET', '/api/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toMatch(/swagger-ui/i);
  });

  it('documents every registered /api route, with bearerAuth on the protected ones', async () => {
    const res = await c.request('GET', '/api/docs/json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });

    const paths: Record<string, Record<string, any>> = {};
    for (const [path, operations] of Object.entries(doc.paths ?? {})) Object.assign((paths[noTrailingSlash(path)] ??= {}), operations);
    const routes = apiRoutes();
    expect(routes.length).toBeGreaterThan(10);
    const missing: string[] = [];
    const wrongSecurity: string[] = [];
    for (const route of routes) {
      const operation = paths[route.path]?.[route.method.toLowerCase()];
      if (!operation) {
        missing.push(`${route.method} ${route.url}`);
        continue;
      }
      const bearer = (operation.security ?? []).some((s: Record<string, unknown>) => 'bearerAuth' in s);
      if (bearer === route.public) wrongSecurity.push(`${route.method} ${route.url} (public: ${route.public})`);
    }
    expect(missing, 'routes missing from /api/docs/json').toEqual([]);
    expect(wrongSecurity, 'routes with the wrong security').toEqual([]);
  });

  it('lists every auth route of API.md (local accounts), with summaries and tags', async () => {
    const doc = (await c.request('GET', '/api/docs/json')).body;
    const expected: [string, string][] = [
      ['post', '/api/auth/login'],
      ['post', '/api/auth/refresh'],
      ['get', '/api/auth/providers'],
      ['get', '/api/auth/me'],
      ['post', '/api/auth/logout'],
      ['put', '/api/auth/password'],
      ['get', '/api/auth/sessions'],
      ['delete', '/api/auth/sessions/{id}'],
      ['delete', '/api/auth/sessions/other'],
      ['post', '/api/auth/switch-org'],
    ];
    for (const [method, path] of expected) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(operation.summary).toBeTruthy();
      expect(operation.tags).toContain('auth');
    }
    expect(doc.paths['/api/auth/login'].post.security ?? []).toEqual([]);
    expect(doc.paths['/api/auth/me'].get.security).toEqual([{ bearerAuth: [] }]);
  });

  it('accepts a token from Authorize: the documented scheme is what the API checks', async () => {
    const res = await c.request('GET', '/api/auth/me', { headers: { authorization: `Bearer ${c.adminToken}` } });
    expect(res.status).toBe(200);
  });
});
