import type { JobEngine } from '../jobs/engine';
import type { NatsJobTransport } from '../jobs/nats-transport';
import type { Services } from '../services';
import { watchNats } from '../../../shared/src/ops/nats-health';
import type { Logger } from 'pino';
import { ControllerMetrics } from './metrics';
import { Readiness } from './readiness';

/** The job transport's NATS connection, when the transport is NATS and has started. */
function natsOf(engine: JobEngine) {
  return engine.transport.name === 'nats' ? (engine.transport as NatsJobTransport).connection : undefined;
}

/** Health, readiness and metrics of one controller replica, and its shutting-down state. */
export class OpsService {
  readonly metrics: ControllerMetrics;
  readonly readiness: Readiness;
  readonly startedAt = Date.now();
  private drainingSince: number | null = null;

  constructor(services: Pick<Services, 'config' | 'db' | 'jobEngine' | 'agents'>, log: Logger) {
    const engine = services.jobEngine;
    this.metrics = new ControllerMetrics({ db: services.db, agents: services.agents, log });
    this.readiness = new Readiness({
      db: services.db,
      natsConfigured: Boolean(services.config.natsUrl),
      nats: () => natsOf(engine),
      draining: () => this.draining,
    });
    engine.onFinal((row) => this.metrics.observeJob(row));
  }

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** From now on readiness answers 503 so load balancers stop sending traffic here. */
  beginDrain(): void {
    this.drainingSince ??= Date.now();
    this.metrics.setDraining();
  }

  /** Once the job engine started: follow its NATS connection (reconnects, connected). */
  watchTransport(engine: JobEngine): void {
    const nc = natsOf(engine);
    if (!nc) return;
    const watch = watchNats(nc, () => this.metrics.natsReconnected());
    this.metrics.trackNats(() => watch.connected);
    this.metrics.trackStreams(() => (engine.transport as NatsJobTransport).depth());
  }
}
