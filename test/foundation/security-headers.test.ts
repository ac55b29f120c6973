import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityHeadersPlugin } from '../../controller/src/plugins/security-headers';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

const CHROMIUM = '/usr/bin/chromium';

function expectSecurityHeaders(headers: Headers, where: string) {
  expect(headers.get('x-content-type-options'), where).toBe('nosniff');
  expect(headers.get('x-frame-options'), where).toBe('DENY');
  expect(headers.get('referrer-policy'), where).toBe('no-referrer');
  expect(headers.get('content-security-policy'), where).toMatch(/frame-ancestors 'none'/);
}

describe('security headers', () => {
  it('are on every kind of answer: success, 401, 403, 404, 400, public and protected', async () => {
    const auditor = await c.createOrgUser(['auditor']);
    const answers = [
      await c.request('GET', '/healthz'),
      await c.request('GET', '/api/auth/providers'),
      await c.request('GET', '/api/devices'),
      await c.request('GET', '/api/devices', { token: auditor.token }),
      await c.request('GET', '/api/devices', { token: c.adminToken }),
      await c.request('GET', '/api/no/such/route'),
      await c.request('POST', '/api/auth/login', { raw: '{', contentType: 'application/json' }),
      await c.request('GET', '/api/docs/json'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 403, 200, 404, 400, 200]);
    answers.forEach((a, i) => expectSecurityHeaders(a.headers, `answer ${i}`));
    // JSON answers get the strict default: nothing may run or be framed.
    expect(answers[2].headers.get('content-security-policy')).toMatch(/default-src 'self'.*script-src 'self'/);
  });

  it('the API explorer has its own policy, still unframeable', async () => {
    const page = await c.request('GET', '/api/docs');
    expect(page.status).toBe(200);
    expectSecurityHeaders(page.headers, '/api/docs');
    expect(page.headers.get('content-security-policy')).toMatch(/style-src 'self' 'unsafe-inline'/);
  });

  it.skipIf(!existsSync(CHROMIUM))(
    'the API explorer still renders in a browser under that policy',
    async () => {
      const { stdout } = await promisify(execFile)(
        CHROMIUM,
        ['--headless', '--no-sandbox', '--disable-gpu', '--virtual-time-budget=15000', '--dump-dom', `${c.url}/api/docs/static/index.html`],
        { maxBuffer: 32 * 1024 * 1024, timeout: 90_000 },
      );
      // swagger-ui drew the operations of the document it fetched: its scripts ran and fetch was allowed.
      expect(stdout).toContain('opblock');
      expect(stdout).toContain('/api/auth/login');
    },
    120_000,
  );

  it("a route's own value wins over the default", async () => {
    const app = Fastify();
    await securityHeadersPlugin(app);
    app.get('/page', async (_request, reply) => reply.header('content-security-policy', "default-src 'none'").send('x'));
    const res = await app.inject({ method: 'GET', url: '/page' });
    expect(res.headers['content-security-policy']).toBe("default-src 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    await app.close();
  });
});
