import type { Logger } from 'pino';

export interface SignalStopOptions {
  log: Logger;
  /** The clean stop; its promise settles when everything is closed. */
  stop(): Promise<void>;
  /** Runs first, at once (e.g. readiness turns 503). */
  beginDrain?(): void;
  /** After this the process exits 1 anyway, with a line saying so. */
  timeoutMs: number;
  /** Named in the timeout line so the operator knows which setting bounds it. */
  setting: string;
  /** Logged with the first line (e.g. the grace given to running jobs). */
  details?: Record<string, unknown>;
  exit?: (code: number) => void;
}

/**
 * SIGTERM / SIGINT handling shared by the controller and the agent: drain, a clean stop, exit 0;
 * exit 1 when the stop fails or outlasts its bound (the line lists what still held the process);
 * a second signal exits at once.
 */
export function stopOnSignals(o: SignalStopOptions): void {
  const exit = o.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      o.log.warn({ signal }, 'second signal while stopping: exiting now');
      exit(1);
      return;
    }
    stopping = true;
    o.beginDrain?.();
    o.log.info({ signal, timeout_seconds: o.timeoutMs / 1000, ...o.details }, 'stopping: no new work, finishing what is in flight');
    const timer = setTimeout(() => {
      // What still holds the process (sockets, timers, ...), counted by kind.
      const open: Record<string, number> = {};
      for (const kind of process.getActiveResourcesInfo()) open[kind] = (open[kind] ?? 0) + 1;
      o.log.error({ timeout_seconds: o.timeoutMs / 1000, open }, `did not stop cleanly in time (${o.setting}); exiting anyway`);
      exit(1);
    }, o.timeoutMs);
    timer.unref();
    try {
      await o.stop();
      clearTimeout(timer);
      o.log.info('stopped cleanly');
      exit(0);
    } catch (err) {
      clearTimeout(timer);
      o.log.error({ err }, 'stopping failed');
      exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
