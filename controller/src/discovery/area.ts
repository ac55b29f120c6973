import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { JobService } from '../jobs/types';
import { topologyRoutes } from '../topology/routes';
import { discoveryRoutes } from './routes';
import { DEFAULT_SCHEDULER, PollScheduler, type SchedulerOptions } from './scheduler';
import { DiscoveryService } from './service';
import { DiscoveryStore } from './store';
import { ConfigError, type ControllerConfig } from '../config';

declare module '../config' {
  interface ControllerConfig {
    /** Background polling tunables (tests shorten them); env SWITCHBOARD_POLL_TICK_MS. */
    discovery?: Partial<SchedulerOptions> & { scheduler?: boolean };
  }
}

declare module '../services' {
  interface Services {
    discovery?: DiscoveryService;
    pollScheduler?: PollScheduler;
  }
}

function schedulerOptions(config: ControllerConfig): SchedulerOptions {
  const raw = process.env.SWITCHBOARD_POLL_TICK_MS;
  const tick = raw ? Number(raw) : undefined;
  if (raw && (!Number.isInteger(tick) || tick! < 50 || tick! > 3_600_000)) throw new ConfigError(`SWITCHBOARD_POLL_TICK_MS must be a whole number from 50 to 3600000, got "${raw}"`);
  return { ...DEFAULT_SCHEDULER, ...(tick ? { tickMs: tick } : {}), ...config.discovery };
}

/**
 * Discovery: records 'poll' outcomes, runs the background poll scheduler, and mounts the
 * device discovery routes under /api/devices and GET /api/topology.
 */
export async function discoveryArea(app: FastifyInstance): Promise<void> {
  const { db, settings, config } = app.services;
  const log = app.log.child({ area: 'discovery' }) as unknown as Logger;
  const jobs = () => app.services.jobs as JobService | undefined;
  const discovery = new DiscoveryService(new DiscoveryStore(db), settings, jobs, log);
  const scheduler = new PollScheduler(discovery, settings, jobs, log, schedulerOptions(config));
  app.services.discovery = discovery;
  app.services.pollScheduler = scheduler;

  let attached = false;
  const attach = () => {
    const j = jobs();
    if (attached || !j) return;
    // The records live in discovery_sections; the job row keeps how each section went.
    // handleMany records a burst of outcomes with a few set-based statements.
    j.onOutcome('poll', (outcome, trx) => discovery.recordOutcome(outcome, trx), {
      storedResult: ({ records: _, ...rest }) => rest,
      handleMany: (outcomes, trx) => discovery.recordOutcomes(outcomes, trx),
    });
    attached = true;
  };
  attach();
  app.addHook('onReady', async () => {
    attach();
    if (config.discovery?.scheduler !== false) scheduler.start();
  });
  app.addHook('onClose', async () => scheduler.stop());

  await app.register(discoveryRoutes, { prefix: '/api/devices', discovery });
  await app.register(topologyRoutes, { prefix: '/api/topology' });
}
