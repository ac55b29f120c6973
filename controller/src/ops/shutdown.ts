import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

export interface StoppableController {
  app: FastifyInstance;
  /** Read at signal time: `npm start` wraps it to stop the built-in agent first. */
  close(): Promise<void>;
}

/**
 * SIGTERM / SIGINT: a bounded, graceful stop.
 *  1. Readiness answers 503 at once (load balancers stop sending traffic here).
 *  2. close(): the built-in agent (npm start) stops taking jobs and finishes or hands back its
 *     own; the server stops accepting connections and answers 503 on kept-alive ones while the
 *     requests in flight finish; the job engine stops dispatching, records the agent events it
 *     already took and closes NATS (events not taken stay in JetStream for another replica);
 *     the database pool closes once its last query returns.
 *  3. Exit 0. If that takes longer than `timeoutMs`, exit 1 with a line saying so; a second
 *     signal exits at once. Nothing a controller holds is lost by either: job state lives in
 *     PostgreSQL and JetStream.
 */
export function stopOnSignals(controller: StoppableController, log: Logger, timeoutMs: number, exit: (code: number) => void = (code) => process.exit(code)): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal while stopping: exiting now');
      exit(1);
      return;
    }
    stopping = true;
    controller.app.services.ops?.beginDrain();
    log.info({ signal, timeout_seconds: timeoutMs / 1000 }, 'stopping: no new work, finishing what is in flight');
    const timer = setTimeout(() => {
      // What still holds the process (sockets, timers, ...), counted by kind, for the operator.
      const open: Record<string, number> = {};
      for (const kind of process.getActiveResourcesInfo()) open[kind] = (open[kind] ?? 0) + 1;
      log.error({ timeout_seconds: timeoutMs / 1000, open }, 'did not stop cleanly in time (SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS); exiting anyway');
      exit(1);
    }, timeoutMs);
    timer.unref();
    try {
      await controller.close();
      clearTimeout(timer);
      log.info('stopped cleanly');
      exit(0);
    } catch (err) {
      clearTimeout(timer);
      log.error({ err }, 'stopping failed');
      exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
