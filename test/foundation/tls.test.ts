import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../controller/src/config';
import { createLogger } from '../../controller/src/logger';
import { startController, type RunningController } from '../../controller/src/server';
import { loadOrCreateCa } from '../../controller/src/tls/ca';
import { startTestController, type TestController } from '../helpers/controller';
import { createTestDatabase } from '../helpers/postgres';

/** GET over HTTPS; `ca` undefined means "trust nothing but the system store". */
function httpsGet(url: string, options: { ca?: string; insecure?: boolean } = {}): Promise<{ status: number; body: string; peer: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: options.ca, rejectUnauthorized: !options.insecure, agent: false }, (res) => {
      const peer = new X509Certificate((res.socket as import('node:tls').TLSSocket).getPeerCertificate().raw);
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
    });
    req.on('error', reject);
  });
}

/** A controller from the environment, as `npm run controller` starts it, on a fresh test database. */
async function startFromEnv(env: Record<string, string>) {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-tls-'));
  const config = loadConfig({
    DATABASE_URL: database.url,
    SWITCHBOARD_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    SWITCHBOARD_ADMIN_PASSWORD: 'tls test admin password',
    ...env,
  });
  const controller = await startController(config, createLogger('silent'));
  return {
    controller,
    dataDir,
    async close() {
      await controller.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('GET /api/tls/ca-certificate', () => {
  let c: TestController;
  beforeAll(async () => {
    c = await startTestController();
  });
  afterAll(async () => c?.close());

  it('serves the CA certificate as PEM without a token', async () => {
    const res = await c.request('GET', '/api/tls/ca-certificate');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-pem-file/);
    expect(res.text).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
    const cert = new X509Certificate(res.text);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toContain('CN=Switchboard CA');
    expect(cert.checkIssued(cert)).toBe(true);
    expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 86_400_000);
  });

  it('keeps the same CA across restarts (it lives in the data dir)', async () => {
    const before = (await c.request('GET', '/api/tls/ca-certificate')).text;
    await c.restart();
    expect((await c.request('GET', '/api/tls/ca-certificate')).text).toBe(before);
  });
});

describe('SWITCHBOARD_TLS=1', () => {
  let server: Awaited<ReturnType<typeof startFromEnv>>;
  beforeAll(async () => {
    server = await startFromEnv({ SWITCHBOARD_TLS: '1' });
  });
  afterAll(async () => server?.close());

  it('serves HTTPS with a certificate that verifies against the served CA', async () => {
    const controller: RunningController = server.controller;
    expect(controller.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = (await httpsGet(`${controller.url}/api/tls/ca-certificate`, { insecure: true })).body;
    const caCert = new X509Certificate(ca);
    expect(caCert.ca).toBe(true);

    const res = await httpsGet(`${controller.url}/api/auth/providers`, { ca });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).providers).toContainEqual({ name: 'local', enabled: true });
    expect(res.peer.ca).toBe(false);
    expect(res.peer.checkIssued(caCert)).toBe(true);
    expect(res.peer.verify(caCert.publicKey)).toBe(true);
    expect(res.peer.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(res.peer.checkHost('localhost')).toBe('localhost');
    expect(res.peer.keyUsage ?? []).toContain('1.3.6.1.5.5.7.3.1'); // serverAuth
  });

  it('is refused by a client that does not trust the CA', async () => {
    await expect(httpsGet(`${server.controller.url}/api/auth/providers`)).rejects.toThrow(/self[- ]signed|unable to verify/i);
  });
});

describe('SWITCHBOARD_TLS_CA_CERT and SWITCHBOARD_TLS_CA_KEY', () => {
  let server: Awaited<ReturnType<typeof startFromEnv>>;
  let caDir: string;
  beforeAll(async () => {
    caDir = mkdtempSync(join(tmpdir(), 'sb-ca-'));
    await loadOrCreateCa({ dataDir: caDir, tlsCa: null });
    server = await startFromEnv({
      SWITCHBOARD_TLS: 'true',
      SWITCHBOARD_TLS_CA_CERT: join(caDir, 'tls/ca.crt'),
      SWITCHBOARD_TLS_CA_KEY: join(caDir, 'tls/ca.key'),
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(caDir, { recursive: true, force: true });
  });

  it('uses the supplied CA for the served certificate and the HTTPS listener', async () => {
    const supplied = readFileSync(join(caDir, 'tls/ca.crt'), 'utf8');
    const served = await httpsGet(`${server.controller.url}/api/tls/ca-certificate`, { ca: supplied });
    expect(served.status).toBe(200);
    expect(served.body).toBe(supplied);
  });
});
