import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIST } from '../../controller/src/console/plugin';
import { startTestController, type TestController } from '../helpers/controller';
import { ensureConsoleBuilt } from './build';

let c: TestController;
beforeAll(async () => {
  ensureConsoleBuilt();
  c = await startTestController();
}, 180_000);
afterAll(() => c?.close());

const expectConsoleHeaders = (headers: Headers) => {
  const csp = headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  expect(headers.get('x-content-type-options')).toBe('nosniff');
};

describe('console serving', () => {
  it('serves index.html at / and at client routes, uncached, with the strict headers', async () => {
    for (const path of ['/', '/devices', '/devices/5b1f8a52-3c1e-4a8e-9a51-1c2b3d4e5f60', '/*']) {
      const res = await c.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.text).toContain('<div id="root"></div>');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expectConsoleHeaders(res.headers);
    }
  });

  it('serves hashed assets with a year-long immutable cache', async () => {
    const asset = readdirSync(join(CONSOLE_DIST, 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await c.request('GET', `/assets/${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expectConsoleHeaders(res.headers);
  });

  it('never shadows the API or the ops endpoints', async () => {
    const missing = await c.request('GET', '/api/no-such-thing');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('Route not found: GET /api/no-such-thing');
    expect((await c.request('GET', '/healthz')).status).toBe(200);
    expect((await c.request('GET', '/metrics')).headers.get('content-type')).not.toMatch(/html/);
    const api = await c.request('GET', '/api/devices');
    expect(api.status).toBe(401);
  });

  it('answers 404 for a missing asset and refuses paths out of the build folder', async () => {
    expect((await c.request('GET', '/assets/no-such-file.js')).status).toBe(404);
    const escape = await fetch(`${c.url}/assets/..%2f..%2f..%2fpackage.json`);
    expect(escape.status).toBeGreaterThanOrEqual(400);
    expect(await escape.text()).not.toContain('"name": "switchboard"');
  });
});
