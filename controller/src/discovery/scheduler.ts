/**
 * Background polling. Every tick, each controller claims the devices whose next_poll_at has
 * passed (FOR UPDATE SKIP LOCKED, so a device is claimed by one controller), moves their
 * next_poll_at one interval on with ±10 % jitter and queues a poll; a device never scheduled
 * before gets a first time spread uniformly over one interval, so enabling polling on many
 * devices at once does not poll them all at once. The one-open-poll index keeps a slow
 * device from being polled twice at the same time. About once an hour a pass also forgets poll
 * history older than discovery.poll_history_days.
 */
import type { Logger } from 'pino';
import type { SettingsService } from '../platform/settings-service';
import type { JobService } from '../jobs/types';
import type { DiscoveryService } from './service';
import type { DueDevice } from './store';

export interface SchedulerOptions {
  /** How often the due devices are looked for. */
  tickMs: number;
  /** Length of one "minute" of poll_interval_minutes (tests shorten it). */
  minuteMs: number;
  /** Devices claimed per pass. */
  batch: number;
  /** Share of the interval by which a next time may move either way. */
  jitter: number;
}

export const DEFAULT_SCHEDULER: SchedulerOptions = { tickMs: 15_000, minuteMs: 60_000, batch: 500, jitter: 0.1 };

const PRUNE_EVERY_MS = 3_600_000;

export class PollScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private lastPrune = 0;

  constructor(
    private readonly service: DiscoveryService,
    private readonly settings: SettingsService,
    private readonly jobs: JobService,
    private readonly log: Logger,
    readonly options: SchedulerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One pass (also called by tests); resolves when the claimed polls are queued. */
  tick(): Promise<void> {
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = this.pass()
      .catch((err) => this.log.warn({ err }, 'poll scheduling failed; trying again on the next tick'))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<void> {
    const { jobs } = this;
    await this.recover(jobs);
    if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      await this.service.pruneHistory();
    }
    const intervals = new Map<string, Promise<number>>();
    const intervalOf = (d: DueDevice) => {
      if (d.poll_interval_minutes) return Promise.resolve(d.poll_interval_minutes);
      if (!intervals.has(d.org_id)) intervals.set(d.org_id, this.settings.get<number>('discovery.default_poll_interval_minutes', d.org_id));
      return intervals.get(d.org_id)!;
    };
    const { minuteMs, jitter, batch } = this.options;
    for (;;) {
      const claimed = await this.service.store.claimDue(batch, async (d) => {
        const interval = (await intervalOf(d)) * minuteMs;
        const offset = d.due ? interval * (1 + jitter * (2 * Math.random() - 1)) : interval * Math.random();
        return new Date(Date.now() + Math.max(1, offset));
      });
      await this.service.submit(
        jobs,
        claimed.map((c) => c.poll),
      );
      if (claimed.length > 0) this.log.debug({ polls: claimed.length }, 'queued scheduled polls');
      if (claimed.length < batch || this.stopped) break;
    }
  }

  /** Polls left queued by a controller that stopped before submitting their job end failed. */
  private async recover(jobs: JobService): Promise<void> {
    const store = this.service.store;
    await this.service.submit(jobs, await store.orphans(new Date(Date.now() - 60_000)));
    for (const s of await store.stale(new Date(Date.now() - 60_000))) {
      await store.failPoll(
        s.id,
        s.job_status === 'failed' ? (s.job_error ?? 'The poll job failed') : 'The poll job finished but its result was not recorded',
      );
    }
  }
}
