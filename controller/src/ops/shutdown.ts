import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { stopOnSignals as onSignals } from '../../../shared/src/ops/signals';

export interface StoppableController {
  app: FastifyInstance;
  /** Read at signal time: `npm start` wraps it to stop the built-in agents first. */
  close(): Promise<void>;
}

/**
 * SIGTERM / SIGINT: a bounded, graceful stop.
 *  1. Readiness answers 503 at once (load balancers stop sending traffic here) and answers
 *     close their connections.
 *  2. close(): the built-in agents (npm start) stop taking jobs and finish or hand back their
 *     own; the server stops accepting connections and answers 503 on kept-alive ones while the
 *     requests in flight finish; the job engine stops dispatching, records the agent events it
 *     already took and closes NATS (events not taken stay in JetStream for another replica);
 *     the database pool closes once its last query returns.
 *  3. Exit 0. If that takes longer than `timeoutMs` (SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS), exit
 *     1 with a line saying so; a second signal exits at once. Nothing a controller holds is lost
 *     by either: job state lives in PostgreSQL and JetStream.
 */
export function stopOnSignals(controller: StoppableController, log: Logger, timeoutMs: number, exit?: (code: number) => void): void {
  onSignals({
    log,
    timeoutMs,
    setting: 'SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS',
    beginDrain: () => controller.app.services.ops?.beginDrain(),
    stop: () => controller.close(),
    exit,
  });
}
