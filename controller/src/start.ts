import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { startController } from './server';

/**
 * `npm start`: all-in-one. The controller plus a built-in agent in the default pool;
 * with no DATABASE_URL the database is embedded (PGlite) under the data dir.
 */
try {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const controller = await startController(config, log);
  log.info({ url: controller.url }, 'Switchboard is up; API explorer at /api/docs');
  const stop = async () => {
    await controller.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (err) {
  console.error(err instanceof ConfigError ? `switchboard: ${err.message}` : err);
  process.exit(1);
}
