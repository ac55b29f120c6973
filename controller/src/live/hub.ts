import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/knex';
import { ACCESS_EVENT, LIVE_CHANNEL as CHANNEL } from '../db/live-channel';

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

/** Users whose sessions or permissions changed (ACCESS_EVENT). */
interface AccessEvent {
  type: typeof ACCESS_EVENT;
  user_ids: unknown;
}

export type LiveListener = (event: LiveEvent) => void;

/** Checks one connection's access again (closing it when its token or permission is gone). */
export type AccessCheck = () => void;

/** How often a replica with subscribers refreshes its live_watchers row (the triggers ignore rows 2 minutes old: migration 188). */
const WATCH_REFRESH_MS = 30_000;
/** The longest a new subscriber waits for the transactions that were running when its replica began watching. */
const SETTLE_LIMIT_MS = 10_000;

/** Fields that hold times: the triggers' JSON gives them in the server's TimeZone with microseconds. */
const TIME_FIELD = /(_at|_since)$/;

/** Reads a notification, its times as the REST answers give them (ISO 8601 UTC, milliseconds). */
function parseNotification(payload: string): LiveEvent | LiveBatch | AccessEvent {
  return JSON.parse(payload, (key, value) => {
    if (typeof value !== 'string' || !TIME_FIELD.test(key)) return value;
    const time = new Date(value);
    return Number.isNaN(time.getTime()) ? value : time.toISOString();
  }) as LiveEvent | LiveBatch | AccessEvent;
}

/**
 * Fans the database's sb_live notifications out to this controller's WebSocket clients, by
 * organization. Triggers announce committed changes of deployments, their devices and log lines,
 * and snapshots, so every replica hears every change whichever replica made it. PostgreSQL: one
 * LISTEN connection (reconnected with backoff); embedded PGlite: its own listen().
 *
 * The busy triggers only announce anything while some replica is watching (migration 188): this
 * one keeps its live_watchers row while it has a subscriber, and a new subscriber is told it is
 * ready only once every transaction that could have missed the row has ended.
 */
export class LiveHub {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  /** The access checks of this replica's signed-in connections, by user id. */
  private readonly accessChecks = new Map<string, Set<AccessCheck>>();
  private client: pg.Client | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  /** This replica's live_watchers row. */
  private readonly replicaId = randomUUID();
  /** Writes of that row, one at a time in call order; resolves once the last is done. */
  private watchWrites: Promise<void> = Promise.resolve();
  private refresh: NodeJS.Timeout | null = null;
  /** Resolves once the row of the current watch is written and the transactions older than it have ended (settle). */
  private settled: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly databaseUrl: string | null,
    private readonly log: FastifyBaseLogger,
  ) {}

  subscribe(orgId: string, listener: LiveListener): () => void {
    const first = this.listeners.size === 0 && !this.closed;
    const set = this.listeners.get(orgId) ?? new Set();
    set.add(listener);
    this.listeners.set(orgId, set);
    if (first) this.watch(true);
    return () => {
      if (!set.delete(listener) || this.closed) return;
      if (set.size === 0) this.listeners.delete(orgId);
      if (this.listeners.size === 0) this.watch(false);
    };
  }

  /** Registers a connection's access check, run when the user's sessions or permissions change; returns its removal. */
  watchAccess(userId: string, check: AccessCheck): () => void {
    const set = this.accessChecks.get(userId) ?? new Set();
    set.add(check);
    this.accessChecks.set(userId, set);
    return () => {
      if (set.delete(check) && set.size === 0 && this.accessChecks.get(userId) === set) this.accessChecks.delete(userId);
    };
  }

  /** Runs the access checks of these users' connections on this replica (all of them without a list). */
  recheckAccess(userIds?: Iterable<string>): void {
    const sets = userIds ? [...new Set(userIds)].map((id) => this.accessChecks.get(id)) : [...this.accessChecks.values()];
    for (const set of sets) {
      for (const check of set ?? []) {
        try {
          check();
        } catch (err) {
          this.log.warn({ err: (err as Error).message }, 'live access check failed');
        }
      }
    }
  }

  /** Keeps (with a refresh timer) or deletes this replica's live_watchers row. */
  private watch(on: boolean): void {
    if (this.refresh) clearInterval(this.refresh);
    this.refresh = null;
    if (on) {
      this.refresh = setInterval(() => this.writeWatch(true), WATCH_REFRESH_MS);
      this.refresh.unref();
    }
    this.writeWatch(on);
    // Once per watch, not per subscriber: the oldest running transaction only ever gets younger.
    if (on) this.settled = this.watchWrites.then(() => this.settle());
  }

  private writeWatch(on: boolean): void {
    const write = on
      ? () =>
          this.db.raw('INSERT INTO live_watchers (replica_id) VALUES (?) ON CONFLICT (replica_id) DO UPDATE SET seen_at = now()', [this.replicaId])
      : () => this.db.raw('DELETE FROM live_watchers WHERE replica_id = ?', [this.replicaId]);
    this.watchWrites = this.watchWrites.then(write).then(
      () => undefined,
      (err: Error) => this.log.warn({ err: err.message }, 'live watcher row not written; live events may pause until the next refresh'),
    );
  }

  /**
   * Resolves once every transaction running when this replica's watcher row was written has
   * ended: one that ran its triggers before the row existed sent nothing, so a subscriber told
   * ready earlier could miss what it commits. Gives up waiting after SETTLE_LIMIT_MS, or when
   * the database does not answer (the subscriber is told ready all the same).
   */
  private async settle(): Promise<void> {
    try {
      const { rows } = await this.db.raw('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax');
      const until = Date.now() + SETTLE_LIMIT_MS;
      for (;;) {
        const { rows: done } = await this.db.raw('SELECT pg_snapshot_xmin(pg_current_snapshot()) >= ?::xid8 AS ok', [rows[0].xmax]);
        if (done[0].ok) return;
        if (Date.now() > until) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      this.log.warn('a transaction older than a new live subscriber is still running; its events may be missed');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not wait for the transactions older than a new live subscriber');
    }
  }

  private readonly onWatchers: ((orgId: string) => Promise<void>)[] = [];

  /** Work done before a new watcher of an organization is told it is ready (the agent watch learns the present). */
  onWatch(fn: (orgId: string) => Promise<void>): void {
    this.onWatchers.push(fn);
  }

  /** Resolves once the database announces changes and every onWatch hook has run for the organization: what changes after it is announced. */
  async watching(orgId: string): Promise<void> {
    await this.settled;
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
    return entriesOf(this.listeners);
  }

  /** Access checks held for streams, one per authenticated connection (a leak check). */
  get accessWatchers(): number {
    return entriesOf(this.accessChecks);
  }

  private deliver(payload: string | undefined): void {
    // Nobody on this replica is watching: the notification is not even parsed.
    if (!payload || (this.listeners.size === 0 && this.accessChecks.size === 0)) return;
    let event: LiveEvent | LiveBatch | AccessEvent;
    try {
      event = parseNotification(payload);
    } catch {
      return;
    }
    if (event.type === ACCESS_EVENT) {
      const { user_ids: userIds } = event as AccessEvent;
      if (Array.isArray(userIds)) this.recheckAccess(userIds.filter((id): id is string => typeof id === 'string'));
    } else if (event.type === 'batch') {
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
    if (this.listeners.size > 0) this.watch(false);
    await this.watchWrites;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    await this.unlisten?.().catch(() => undefined);
    this.listeners.clear();
    this.accessChecks.clear();
  }
}

/** How many entries the sets of `map` hold together. */
function entriesOf(map: Map<string, Set<unknown>>): number {
  let n = 0;
  for (const set of map.values()) n += set.size;
  return n;
}
