import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app';
import { bootstrap } from './bootstrap';
import type { ControllerConfig } from './config';
import { createDb, type Db } from './db/knex';
import { migrateLatest } from './db/migrate';
import { issueServerCertificate, loadOrCreateCa } from './tls/ca';

export interface RunningController {
  app: FastifyInstance;
  db: Db;
  url: string;
  close(): Promise<void>;
}

/** Migrates, bootstraps, builds the app and listens: everything `npm run controller` does. */
export async function startController(config: ControllerConfig, log: Logger): Promise<RunningController> {
  const db = await createDb(config.databaseUrl, config.dataDir);
  await migrateLatest(db);
  await bootstrap(db, { username: config.adminUsername, password: config.adminPassword }, log);
  const https = config.tls
    ? await issueServerCertificate(await loadOrCreateCa(config.dataDir), [...new Set([config.host, 'localhost', '127.0.0.1'])])
    : null;
  const app = await buildApp({ config, db, log, https });
  await app.listen({ port: config.port, host: config.host });
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
    },
  };
}
