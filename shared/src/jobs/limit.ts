/** A counting semaphore: at most `size` holders at once, the rest wait in order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private size: number) {}

  get inUse(): number {
    return this.active;
  }

  get free(): number {
    return Math.max(0, this.size - this.active);
  }

  /** Takes a slot, waiting for one; answers false (holding none) when `signal` aborts first. */
  async acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return false;
    if (this.active < this.size) {
      this.active += 1;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const granted = () => {
        signal?.removeEventListener('abort', aborted);
        resolve(true);
      };
      const aborted = () => {
        const at = this.waiting.indexOf(granted);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.waiting.push(granted);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active -= 1;
  }

  async use<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}

/** Runs fn over items with at most `limit` at once; results in input order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Gathers concurrent calls into batches: the first call waits one turn of the event loop, later
 * ones gather while a batch is in flight, so a burst of requests shares a few round trips instead
 * of making its own each. `run` answers a batch with one result per item, in order; when it
 * throws, every call of that batch rejects with the error.
 */
export class Batcher<I, R> {
  private waiting: { item: I; resolve: (result: R) => void; reject: (err: unknown) => void }[] = [];
  private draining = false;

  /** `gatherMs`: how long the first call of a batch waits for others (0: one turn of the event loop). */
  constructor(
    private readonly run: (items: I[]) => Promise<R[]>,
    private readonly max = 500,
    private readonly gatherMs = 0,
  ) {}

  add(item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        if (this.gatherMs > 0) setTimeout(() => void this.drain(), this.gatherMs);
        else setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.max);
      try {
        const results = await this.run(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(results[i]));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.draining = false;
  }
}

/**
 * Gathers items into batches that go out without waiting for each other: a batch is sent once
 * `max` items or `maxBytes` of them (by `sizeOf`) wait, or `flushMs` after its first item,
 * whichever comes first, so a burst shares a few messages and one slow batch (no answer yet)
 * holds no later one back. With `eager`, a batch also goes on the next turn of the event loop
 * while none is in flight, and at once when the last in flight is answered: items wait only
 * while another batch is out (for at most flushMs), so a path bound by latency pays nothing for
 * the gathering. (Batcher instead runs one batch at a time, gathering while it is in flight:
 * right for a database, not for requests that may go unanswered for seconds.) `send` answers a
 * batch with one result per item, in order; when it throws, every item of it rejects.
 */
export class Gatherer<I, R> {
  private waiting: { item: I; resolve: (result: R) => void; reject: (err: unknown) => void }[] = [];
  private bytes = 0;
  /** Cancels the pending send of what waits (a timer or an immediate); null when none is pending. */
  private pending: (() => void) | null = null;
  private inFlight = 0;

  constructor(
    private readonly send: (items: I[]) => Promise<R[]>,
    private readonly limits: { max: number; maxBytes: number; flushMs: number; eager?: boolean },
    private readonly sizeOf: (item: I) => number,
  ) {}

  add(item: I): Promise<R> {
    const size = this.sizeOf(item);
    if (this.waiting.length > 0 && this.bytes + size > this.limits.maxBytes) this.flush();
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.bytes += size;
      if (this.waiting.length >= this.limits.max || this.bytes >= this.limits.maxBytes) this.flush();
      else if (this.pending === null) this.pending = this.schedule();
    });
  }

  /** The send of what waits: on the next turn when eager and nothing is in flight, else after flushMs. */
  private schedule(): () => void {
    if (this.limits.eager && this.inFlight === 0) {
      const immediate = setImmediate(() => this.flush());
      return () => clearImmediate(immediate);
    }
    const timer = setTimeout(() => this.flush(), this.limits.flushMs);
    return () => clearTimeout(timer);
  }

  /** Sends what waits now. */
  flush(): void {
    this.pending?.();
    this.pending = null;
    const batch = this.waiting;
    this.waiting = [];
    this.bytes = 0;
    if (batch.length === 0) return;
    this.inFlight += 1;
    this.send(batch.map((w) => w.item))
      .then(
        (results) => batch.forEach((w, i) => w.resolve(results[i])),
        (err: unknown) => batch.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        this.inFlight -= 1;
        if (this.limits.eager && this.inFlight === 0) this.flush();
      });
  }
}
