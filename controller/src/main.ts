import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { startController } from './server';

/** `npm run controller`: the controller alone (agents connect over NATS). */
try {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const controller = await startController(config, log);
  log.info({ url: controller.url }, 'controller listening; API explorer at /api/docs');
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
