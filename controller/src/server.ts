import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app';
import { bootstrap } from './bootstrap';
import { ConfigError, loadConfig, type ControllerConfig } from './config';
import { createDb, type Db } from './db/knex';
import { migrateLatest } from './db/migrate';
import { createLogger } from './logger';
import { stopOnSignals } from './ops/shutdown';
import { lockDataDir } from './startup/data-dir-lock';
import { issueServerCertificate, loadOrCreateCa } from './tls/ca';

export interface RunningController {
  app: FastifyInstance;
  db: Db;
  url: string;
  close(): Promise<void>;
}

/** Start-up failures a person fixes in the environment become one line naming the setting. */
function explain(err: unknown, setting: string, what: string): unknown {
  const code = (err as { code?: string }).code ?? '';
  // Network errors, and PostgreSQL's bad password (28P01), unknown role (28000) and unknown database (3D000).
  if (/^(E[A-Z]+|28P01|28000|3D000)$/.test(code)) return new ConfigError(`${setting}: ${what}: ${(err as Error).message || code}`);
  return err;
}

/** Migrates, bootstraps, builds the app and listens: everything `npm run controller` does. */
export async function startController(config: ControllerConfig, log: Logger): Promise<RunningController> {
  const lock = lockDataDir(config.dataDir);
  try {
    return await startLocked(config, log, lock.release);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function startLocked(config: ControllerConfig, log: Logger, releaseLock: () => void): Promise<RunningController> {
  const db = await createDb(config.databaseUrl, config.dataDir);
  try {
    await migrateLatest(db);
  } catch (err) {
    await db.destroy();
    throw config.databaseUrl ? explain(err, 'DATABASE_URL', 'cannot use the database') : err;
  }
  await bootstrap(db, { username: config.adminUsername, password: config.adminPassword }, log);
  const https = config.tls ? await issueServerCertificate(await loadOrCreateCa(config), [...new Set([config.host, 'localhost', '127.0.0.1'])]) : null;
  const app = await buildApp({ config, db, log, https });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close();
    await db.destroy();
    throw explain(err, 'PORT/HOST', `cannot listen on ${config.host}:${config.port}`);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `${config.tls ? 'https' : 'http'}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  return {
    app,
    db,
    url,
    async close() {
      await app.close();
      await db.destroy();
      releaseLock();
    },
  };
}

/**
 * The process entry points (`npm start`, `npm run controller`): read the environment, start,
 * stop cleanly on SIGTERM/SIGINT. A bad setting ends the process with one line naming it.
 */
export async function runFromEnvironment(banner: string): Promise<RunningController | null> {
  try {
    const config = loadConfig();
    const log = createLogger(config.logLevel);
    const controller = await startController(config, log);
    log.info({ url: controller.url }, banner);
    stopOnSignals(controller, log, config.shutdownTimeoutMs ?? 25_000);
    return controller;
  } catch (err) {
    console.error(err instanceof ConfigError ? `switchboard: ${err.message}` : err);
    process.exit(1);
  }
}
