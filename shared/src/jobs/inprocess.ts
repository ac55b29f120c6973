/**
 * The in-process transport of the all-in-one `npm start` (no NATS_URL): job queues per pool
 * and the event path back to the engine, in memory. Nothing here survives a restart, and it
 * need not: the engine puts the jobs of a dead in-process agent back in the queue on start.
 */
import { LinkClosedError, type AgentLink, type DeliveredJob, type EventSink, type IncomingEvent, type JobTransport } from './link';

interface QueuedJob {
  seq: number;
  token: string;
  redeliveries: number;
}

interface PendingEvent {
  token: string;
  redeliveries: number;
  resolve(): void;
}

const EVENT_BATCH = 256;

export class InProcessHub implements JobTransport {
  readonly name = 'inprocess' as const;
  private readonly queues = new Map<string, QueuedJob[]>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly pending: PendingEvent[] = [];
  private sink: EventSink | null = null;
  private flushing = false;
  private closed = false;
  private seq = 0;

  async start(sink: EventSink): Promise<void> {
    this.sink = sink;
    this.closed = false;
    this.scheduleFlush();
  }

  async publishJob(orgId: string, pool: string, token: string): Promise<number> {
    const key = `${orgId}/${pool}`;
    const seq = ++this.seq;
    const queue = this.queues.get(key) ?? [];
    queue.push({ seq, token, redeliveries: 0 });
    this.queues.set(key, queue);
    for (const wake of this.wakers.get(key) ?? []) wake();
    return seq;
  }

  async retractJob(seq: number): Promise<void> {
    for (const queue of this.queues.values()) {
      const i = queue.findIndex((j) => j.seq === seq);
      if (i >= 0) queue.splice(i, 1);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.sink = null;
    for (const set of this.wakers.values()) for (const wake of set) wake();
  }

  /**
   * The agent end for one pool. Once the hub or the link is closed, pull rejects with
   * LinkClosedError (a pull waiting at that moment too), so a pull loop stops instead of
   * spinning on an empty answer.
   */
  link(orgId: string, pool: string): AgentLink {
    const key = `${orgId}/${pool}`;
    const hub = this;
    let closed = false;
    /** Wakers of this link's pulls now waiting, so that close() ends them at once. */
    const waiting = new Set<() => void>();
    const assertOpen = () => {
      if (closed) throw new LinkClosedError('in-process agent link is closed');
      if (hub.closed) throw new LinkClosedError("in-process job hub is closed (the controller's job engine stopped)");
    };
    return {
      ackWaitMs: 30_000,
      async pull(max, waitMs, onJob) {
        const take = () => {
          const queue = hub.queues.get(key) ?? [];
          const jobs = queue.splice(0, max);
          for (const job of jobs) onJob(hub.delivered(key, job));
          return jobs.length;
        };
        assertOpen();
        if (take() > 0) return;
        await new Promise<void>((resolve) => {
          const set = hub.wakers.get(key) ?? new Set();
          hub.wakers.set(key, set);
          const done = () => {
            clearTimeout(timer);
            set.delete(done);
            waiting.delete(done);
            resolve();
          };
          const timer = setTimeout(done, waitMs);
          set.add(done);
          waiting.add(done);
        });
        assertOpen();
        take();
      },
      publish(token) {
        return new Promise<void>((resolve) => {
          hub.pending.push({ token, redeliveries: 0, resolve });
          hub.scheduleFlush();
        });
      },
      async request(token) {
        return hub.sink ? hub.sink.request(token) : null;
      },
      async close() {
        closed = true;
        for (const wake of [...waiting]) wake();
      },
    };
  }

  private delivered(key: string, job: QueuedJob): DeliveredJob {
    return {
      token: job.token,
      redeliveries: job.redeliveries,
      working: () => {},
      ack: () => {},
      term: () => {},
      nak: () => {
        const queue = this.queues.get(key) ?? [];
        queue.unshift({ ...job, redeliveries: job.redeliveries + 1 });
        this.queues.set(key, queue);
        for (const wake of this.wakers.get(key) ?? []) wake();
      },
    };
  }

  private scheduleFlush(): void {
    if (this.flushing || !this.sink || this.pending.length === 0) return;
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    try {
      while (this.sink && this.pending.length > 0) {
        const batch = this.pending.splice(0, EVENT_BATCH);
        const settled = new Set<number>();
        const events: IncomingEvent[] = batch.map((p, i) => ({
          token: p.token,
          redeliveries: p.redeliveries,
          ack: () => {
            if (settled.has(i)) return;
            settled.add(i);
            p.resolve();
          },
          nak: (delayMs = 1000) => {
            if (settled.has(i)) return;
            settled.add(i);
            setTimeout(() => {
              this.pending.push({ ...p, redeliveries: p.redeliveries + 1 });
              this.scheduleFlush();
            }, delayMs).unref();
          },
        }));
        await this.sink.events(events).catch(() => events.forEach((e) => e.nak()));
      }
    } finally {
      this.flushing = false;
      if (this.pending.length > 0) this.scheduleFlush();
    }
  }
}
