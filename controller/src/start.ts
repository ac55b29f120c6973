import { startBuiltinAgent } from './builtin-agent';
import { runFromEnvironment } from './server';

/**
 * `npm start`: all-in-one. The controller plus a built-in agent in every organization's default pool
 * (each in a worker thread, controller/src/builtin-agent.ts); with no DATABASE_URL the database is
 * embedded (PGlite) under the data dir.
 */
const controller = await runFromEnvironment('Switchboard is up; API explorer at /api/docs');
if (controller && process.env.SWITCHBOARD_BUILTIN_AGENT !== '0') {
  try {
    const agents = await startBuiltinAgent(controller.app);
    const close = controller.close;
    controller.close = async () => {
      await agents.stop();
      await close();
    };
  } catch (err) {
    console.error(`switchboard: ${(err as Error).message}`);
    await controller.close();
    process.exit(1);
  }
}
