import { ConfigError, type ControllerConfig } from '../config';
import { DEFAULT_SCHEDULER, type SchedulerOptions } from './scheduler';

declare module '../config' {
  interface ControllerConfig {
    /** Background polling tunables (tests shorten them); env SWITCHBOARD_POLL_TICK_MS. */
    discovery?: Partial<SchedulerOptions> & { scheduler?: boolean };
  }
}

/** The poll scheduler's tunables: the config (tests) over SWITCHBOARD_POLL_TICK_MS over the defaults. */
export function schedulerOptions(config: ControllerConfig): SchedulerOptions {
  const raw = process.env.SWITCHBOARD_POLL_TICK_MS;
  const tick = raw ? Number(raw) : undefined;
  if (raw && (!Number.isInteger(tick) || tick! < 50 || tick! > 3_600_000))
    throw new ConfigError(`SWITCHBOARD_POLL_TICK_MS must be a whole number from 50 to 3600000, got "${raw}"`);
  return { ...DEFAULT_SCHEDULER, ...(tick ? { tickMs: tick } : {}), ...config.discovery };
}
