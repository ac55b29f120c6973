import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { SecretBox } from '../../shared/src/crypto/secret-box';
import { SettingsService } from '../../controller/src/platform/settings-service';
import { SettingsStore } from '../../controller/src/platform/settings-store';
import { buildApp } from '../../controller/src/app';
import { bootstrap } from '../../controller/src/bootstrap';
import type { ControllerConfig } from '../../controller/src/config';
import { createDb, type Db } from '../../controller/src/db/knex';
import { createLogger } from '../../controller/src/logger';
import type { Services } from '../../controller/src/services';
import { seedPgliteDataDir, testDatabaseKind } from './pglite';
import { createTestDatabase } from './postgres';

export const ADMIN = { username: 'admin', password: 'bootstrap-admin-password' };

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body (e.g. CSV); sent as is with the given content type. */
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface TestController {
  url: string;
  app: FastifyInstance;
  db: Db;
  services: Services;
  config: ControllerConfig;
  /** Everything the controller logged, for checking that secrets never appear. */
  logs(): string;
  /** Access token of the bootstrap platform admin. */
  adminToken: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  login(username: string, password: string, extra?: Record<string, unknown>): Promise<ApiResponse>;
  /** A new organization with a user holding the given roles; returns that user's token. */
  createOrgUser(roles?: string[], orgName?: string): Promise<{ orgId: string; userId: string; token: string; username: string; password: string }>;
  /** Stops the controller and starts it again on the same database and data dir (new port, same url field updated). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface TestControllerOptions {
  /** Settings applied before the app starts (e.g. lowered rate limits). */
  settings?: Record<string, unknown>;
  config?: Partial<ControllerConfig>;
  /** Default: SWITCHBOARD_TEST_DB (pglite, else PostgreSQL); see test/helpers/pglite.ts. */
  database?: 'postgres' | 'pglite';
}

/** A fresh database of the kind asked for: a PostgreSQL clone, or PGlite in the data dir (no URL). */
async function freshDatabase(kind: 'postgres' | 'pglite', dataDir: string): Promise<{ url: string | null; drop(): Promise<void> }> {
  if (kind === 'postgres') return createTestDatabase();
  await seedPgliteDataDir(dataDir);
  return { url: null, drop: async () => {} };
}

/** A real controller on a fresh PostgreSQL (or PGlite) database, listening on a free loopback port. */
export async function startTestController(options: TestControllerOptions = {}): Promise<TestController> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-test-'));
  const database = await freshDatabase(options.database ?? testDatabaseKind(), dataDir);
  const config: ControllerConfig = {
    port: 0,
    host: '127.0.0.1',
    databaseUrl: database.url,
    natsUrl: null,
    dataDir,
    adminUsername: ADMIN.username,
    adminPassword: ADMIN.password,
    secretKey: randomBytes(32),
    logLevel: 'info',
    publicUrl: 'http://127.0.0.1:0',
    tls: false,
    ...options.config,
  };
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const log = createLogger('debug', sink);
  let db = await createDb(config.databaseUrl, config.dataDir);
  await bootstrap(db, { username: ADMIN.username, password: ADMIN.password }, log);
  if (options.settings) await new SettingsService(new SettingsStore(db), new SecretBox(config.secretKey)).update('global', options.settings, true);
  let app!: FastifyInstance;
  let url = '';
  const listen = async () => {
    app = await buildApp({ config, db, log });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address() as { port: number };
    url = `http://127.0.0.1:${address.port}`;
    config.publicUrl = url;
  };
  await listen();

  const request = async <T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) {
      body = opts.raw;
      headers['content-type'] = opts.contentType ?? 'text/plain';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, body: parsed as T, text, headers: res.headers };
  };
  const login = (username: string, password: string, extra: Record<string, unknown> = {}) =>
    request('POST', '/api/auth/login', { body: { username, password, ...extra } });

  const adminLogin = await login(ADMIN.username, ADMIN.password);
  if (adminLogin.status !== 200) throw new Error(`admin login failed: ${adminLogin.text}`);
  const adminToken = adminLogin.body.access_token as string;

  let orgCounter = 0;
  const createOrgUser: TestController['createOrgUser'] = async (roles = ['org_admin'], orgName) => {
    orgCounter += 1;
    const name = orgName ?? `Org ${orgCounter} ${randomBytes(3).toString('hex')}`;
    const org = await request('POST', '/api/admin/organizations', { token: adminToken, body: { name } });
    const switched = await request('POST', '/api/auth/switch-org', { token: adminToken, body: { org_id: org.body.id } });
    const username = `user-${randomBytes(4).toString('hex')}`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const created = await request('POST', '/api/admin/users', { token: switched.body.access_token, body: { username, password, roles } });
    if (created.status !== 201) throw new Error(`user create failed: ${created.text}`);
    const session = await login(username, password);
    return { orgId: org.body.id, userId: created.body.id, token: session.body.access_token, username, password };
  };

  return {
    get url() {
      return url;
    },
    get app() {
      return app;
    },
    get db() {
      return db;
    },
    get services() {
      return app.services;
    },
    config,
    logs: () => chunks.join(''),
    adminToken,
    request,
    login,
    createOrgUser,
    async restart() {
      await app.close();
      await db.destroy();
      db = await createDb(config.databaseUrl, config.dataDir);
      await listen();
    },
    async close() {
      await app.close();
      await db.destroy();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
