import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/knex';

/** One live event, as the database announced it (migration 071's sb_live_notify, or in a batch of 160's). */
export interface LiveEvent {
  type: 'deployment' | 'deployment_device' | 'deployment_log' | 'snapshot' | 'agent' | 'backup';
  org_id: string;
  [field: string]: unknown;
}

/** Events of one statement, in row order (migration 160: log lines and device states). */
interface LiveBatch {
  type: 'batch';
  org_id: string;
  events: LiveEvent[];
}

export type LiveListener = (event: LiveEvent) => void;

export const CHANNEL = 'sb_live';

/** Fields that hold times: the triggers' JSON gives them in the server's TimeZone with microseconds. */
const TIME_FIELD = /(_at|_since)$/;

/** Reads a notification, its times as the REST answers give them (ISO 8601 UTC, milliseconds). */
function parseNotification(payload: string): LiveEvent | LiveBatch {
  return JSON.parse(payload, (key, value) => {
    if (typeof value !== 'string' || !TIME_FIELD.test(key)) return value;
    const time = new Date(value);
    return Number.isNaN(time.getTime()) ? value : time.toISOString();
  }) as LiveEvent | LiveBatch;
}

/**
 * Fans the database's sb_live notifications out to this controller's WebSocket clients, by
 * organization. Triggers announce committed changes of deployments, their devices and log lines,
 * and snapshots, so every replica hears every change whichever replica made it. PostgreSQL: one
 * LISTEN connection (reconnected with backoff); embedded PGlite: its own listen().
 */
export class LiveHub {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  private client: pg.Client | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly databaseUrl: string | null,
    private readonly log: FastifyBaseLogger,
  ) {}

  subscribe(orgId: string, listener: LiveListener): () => void {
    const set = this.listeners.get(orgId) ?? new Set();
    set.add(listener);
    this.listeners.set(orgId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(orgId);
    };
  }

  private readonly onWatchers: ((orgId: string) => Promise<void>)[] = [];

  /** Work done before a new watcher of an organization is told it is ready (the agent watch learns the present). */
  onWatch(fn: (orgId: string) => Promise<void>): void {
    this.onWatchers.push(fn);
  }

  /** Resolves once every onWatch hook has run for the organization: what changes after it is announced. */
  async watching(orgId: string): Promise<void> {
    await Promise.all(this.onWatchers.map((fn) => fn(orgId)));
  }

  /** Organizations with at least one subscriber on this replica. */
  watchedOrgs(): string[] {
    return [...this.listeners.keys()];
  }

  /** Delivers an event made on this replica (agent status changes), as if the database announced it. */
  publish(event: LiveEvent): void {
    this.emit(event);
  }

  get subscribers(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  private deliver(payload: string | undefined): void {
    // Nobody on this replica is watching: the notification is not even parsed.
    if (!payload || this.listeners.size === 0) return;
    let event: LiveEvent | LiveBatch;
    try {
      event = parseNotification(payload);
    } catch {
      return;
    }
    if (event.type === 'batch') {
      for (const e of (event as LiveBatch).events) this.emit(e);
    } else this.emit(event as LiveEvent);
  }

  private emit(event: LiveEvent): void {
    for (const listener of this.listeners.get(event.org_id) ?? []) {
      try {
        listener(event);
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'live listener failed');
      }
    }
  }

  async start(): Promise<void> {
    this.closed = false;
    if (!this.databaseUrl) {
      const pglite = (this.db.client as { pglite?: { listen(channel: string, cb: (payload: string) => void): Promise<() => Promise<void>> } }).pglite;
      if (pglite) this.unlisten = await pglite.listen(CHANNEL, (payload) => this.deliver(payload));
      return;
    }
    await this.connect();
  }

  private async connect(delayMs = 500): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.databaseUrl! });
    client.on('notification', (msg) => this.deliver(msg.payload));
    const reconnect = (err?: Error) => {
      if (this.closed || this.client !== client) return;
      this.client = null;
      this.log.warn({ err: err?.message }, 'live notifications connection lost; reconnecting');
      client.end().catch(() => undefined);
      this.retry = setTimeout(() => void this.connect(Math.min(delayMs * 2, 10_000)), delayMs);
      this.retry.unref();
    };
    client.on('error', reconnect);
    client.on('end', () => reconnect());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.client = client;
    } catch (err) {
      this.client = client;
      reconnect(err as Error);
    }
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    await this.unlisten?.().catch(() => undefined);
    this.listeners.clear();
  }
}
