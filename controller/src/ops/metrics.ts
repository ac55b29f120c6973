/**
 * The controller's Prometheus registry (prom-client). One registry per app, so several apps in
 * one process (tests) never share series.
 *
 * Two kinds of figures, and how to read them across replicas:
 *  - per replica (sum across replicas): HTTP requests and latency, jobs this replica recorded
 *    final and their durations, device session errors from those jobs' results, NATS
 *    reconnects, database pool use, process figures;
 *  - cluster-wide, read from PostgreSQL at scrape time (every replica reports the same value;
 *    use max): open jobs by kind, pool and status, agents by pool and status.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';
import { statusOf, type AgentsService } from '../agents/service';
import type { Db } from '../db/knex';
import type { StreamDepth } from '../../../shared/src/nats/jetstream';
import type { JobRow } from '../jobs/store';

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** Statuses of a job still in flight (queued → dispatched → running). */
const OPEN_STATUSES = ['queued', 'dispatched', 'running'] as const;
const AGENT_STATUSES = ['online', 'degraded', 'offline'] as const;
/** Scrape-time queries give up after this, so a slow database never hangs a scrape. */
const QUERY_TIMEOUT_MS = 2_000;

/** A queued job has no pool until it is dispatched. */
const poolLabel = (pool: string | null) => pool ?? 'unassigned';

/** DriverError causes in a job result: `error_cause` at the top and in each `results[]` item. */
export function errorCauses(result: Record<string, unknown> | null): string[] {
  if (!result) return [];
  const causes: string[] = [];
  const take = (value: unknown) => {
    if (typeof value === 'string' && /^[a-z_]{1,32}$/.test(value)) causes.push(value);
  };
  take(result.error_cause);
  if (Array.isArray(result.results)) for (const item of result.results) take((item as Record<string, unknown> | null)?.error_cause);
  return causes;
}

interface ClusterFigures {
  ok: boolean;
  jobs: { kind: string; pool: string | null; status: string; n: number | string }[];
  agents: { pool: string; site: string; n: Record<(typeof AGENT_STATUSES)[number], number> }[];
}

interface TarnPool {
  max?: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

export interface MetricsDeps {
  db: Db;
  agents: AgentsService;
  log: Logger;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly jobsFinished: Counter<'kind' | 'pool' | 'status'>;
  private readonly jobDuration: Histogram<'kind' | 'pool' | 'status'>;
  private readonly jobWait: Histogram<'kind' | 'pool'>;
  private readonly sessionErrors: Counter<'cause' | 'kind'>;
  private readonly natsReconnects: Counter;
  private natsState: (() => boolean) | null = null;
  private streams: (() => Promise<StreamDepth | undefined>) | null = null;
  private streamRead: Promise<StreamDepth | undefined> | null = null;
  private draining = false;

  constructor(private readonly deps: MetricsDeps) {
    const registers = [this.registry];
    // Event-loop delay sampled every 100 ms, not prom-client's 10 ms: 100 wake-ups a second per
    // process cost an idle agent about a third of its CPU, and a site may run many agents.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
    this.httpRequests = new Counter({
      name: 'switchboard_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method and route template.',
      labelNames: ['method', 'route'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.jobsFinished = new Counter({
      name: 'switchboard_jobs_finished_total',
      help: 'Jobs this replica recorded final (succeeded or failed), by kind and pool.',
      labelNames: ['kind', 'pool', 'status'],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'switchboard_job_duration_seconds',
      help: 'Run time of jobs this replica recorded final, from the agent starting it to the result (queue time excluded).',
      labelNames: ['kind', 'pool', 'status'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.jobWait = new Histogram({
      name: 'switchboard_job_queue_seconds',
      help: 'Time jobs waited between submission and an agent starting them, for jobs this replica recorded final.',
      labelNames: ['kind', 'pool'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.sessionErrors = new Counter({
      name: 'switchboard_device_session_errors_total',
      help: 'Device session errors reported in job results, by cause (auth, timeout, refused, protocol, device) and job kind.',
      labelNames: ['cause', 'kind'],
      registers,
    });
    this.natsReconnects = new Counter({ name: 'switchboard_nats_reconnects_total', help: 'Times the job transport reconnected to NATS.', registers });

    const self = this;
    new Gauge({
      name: 'switchboard_nats_connected',
      help: '1 while the job transport is connected to NATS (absent without NATS_URL).',
      registers,
      collect() {
        this.reset();
        if (self.natsState) this.set(self.natsState() ? 1 : 0);
      },
    });
    const streamGauge = (name: string, help: string, label: string, values: (d: StreamDepth) => Record<string, number>) =>
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers,
        async collect() {
          this.reset();
          const depth = await self.streamDepth();
          if (depth) for (const [value, n] of Object.entries(values(depth))) this.set({ [label]: value }, n);
        },
      });
    streamGauge(
      'switchboard_nats_stream_messages',
      "Messages in the job protocol's JetStream streams: jobs not yet taken or acknowledged by an agent, agent events not yet recorded " +
        '(cluster-wide; absent without NATS_URL).',
      'stream',
      (d) => ({ jobs: d.jobs, results: d.results }),
    );
    streamGauge(
      'switchboard_nats_results_unrecorded',
      'Agent events not yet recorded: pending (taken by no controller) or unacked (held by a controller, perhaps one that crashed, until the ' +
        'results ack wait passes).',
      'state',
      (d) => ({ pending: d.resultsPending, unacked: d.resultsUnacked }),
    );
    new Gauge({
      name: 'switchboard_draining',
      help: '1 once this replica is shutting down (readiness answers 503).',
      registers,
      collect() {
        this.set(self.draining ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_db_pool_connections',
      help: 'Database connection pool of this replica: used, free, pending_acquires, pending_creates and max.',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = (self.deps.db.client as { pool?: TarnPool }).pool;
        this.reset();
        if (!pool || typeof pool.numUsed !== 'function') return;
        this.set({ state: 'used' }, pool.numUsed());
        this.set({ state: 'free' }, pool.numFree());
        this.set({ state: 'pending_acquires' }, pool.numPendingAcquires());
        this.set({ state: 'pending_creates' }, pool.numPendingCreates());
        if (typeof pool.max === 'number') this.set({ state: 'max' }, pool.max);
      },
    });
    new Gauge({
      name: 'switchboard_metrics_database_ok',
      help: '1 when the cluster-wide figures (switchboard_jobs, switchboard_agents) could be read from the database on this scrape.',
      registers,
      async collect() {
        this.set((await self.cluster()).ok ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_jobs',
      help: 'Open jobs in the whole installation by kind, pool (site id, default, or unassigned before dispatch) and status (queued, dispatched, running).',
      labelNames: ['kind', 'pool', 'status'],
      registers,
      async collect() {
        this.reset();
        for (const r of (await self.cluster()).jobs) this.set({ kind: r.kind, pool: poolLabel(r.pool), status: r.status }, Number(r.n));
      },
    });
    new Gauge({
      name: 'switchboard_agents',
      help: 'Enrolled agents in the whole installation by pool (site id or default), site name and status (online, degraded, offline).',
      labelNames: ['pool', 'site', 'status'],
      registers,
      async collect() {
        this.reset();
        for (const { pool, site, n } of (await self.cluster()).agents)
          for (const status of AGENT_STATUSES) this.set({ pool, site, status }, n[status]);
      },
    });
  }

  private clusterRead: Promise<ClusterFigures> | null = null;

  /** The cluster-wide figures of one scrape (collectors run in parallel; one read serves them all). */
  private cluster(): Promise<ClusterFigures> {
    this.clusterRead ??= this.readCluster();
    return this.clusterRead;
  }

  private async readCluster(): Promise<ClusterFigures> {
    const { db, agents, log } = this.deps;
    try {
      const [jobs, rows, live] = await Promise.all([
        db('jobs')
          .whereIn('status', OPEN_STATUSES as unknown as string[])
          .select('kind', 'pool', 'status')
          .count('* as n')
          .groupBy('kind', 'pool', 'status')
          .timeout(QUERY_TIMEOUT_MS) as unknown as Promise<ClusterFigures['jobs']>,
        db('agents as a')
          .leftJoin('sites as s', 's.id', 'a.site_id')
          .whereNull('a.revoked_at')
          .whereNotNull('a.enrolled_at')
          .select('a.site_id', 's.name as site', 'a.last_seen_at', 'a.pending_events', 'a.revoked_at')
          .timeout(QUERY_TIMEOUT_MS) as Promise<
          { site_id: string | null; site: string | null; last_seen_at: Date | null; pending_events: number; revoked_at: Date | null }[]
        >,
        agents.liveness(),
      ]);
      const byPool = new Map<string, ClusterFigures['agents'][number]>();
      for (const row of rows) {
        const pool = row.site_id ?? DEFAULT_POOL;
        const entry = byPool.get(pool) ?? { pool, site: row.site ?? '', n: { online: 0, degraded: 0, offline: 0 } };
        entry.n[statusOf(row, live)] += 1;
        byPool.set(pool, entry);
      }
      return { ok: true, jobs, agents: [...byPool.values()] };
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'metrics: reading cluster figures from the database failed');
      return { ok: false, jobs: [], agents: [] };
    }
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  /** onResponse hook: one observation per answered request, by route template (never the raw URL). */
  observeRequest(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? '(unmatched)';
    const method = request.method;
    this.httpRequests.inc({ method, route, status: String(reply.statusCode) });
    this.httpDuration.observe({ method, route }, reply.elapsedTime / 1000);
  }

  // ---- jobs ---------------------------------------------------------------------------------

  /** A job this replica recorded final. */
  observeJob(row: Pick<JobRow, 'kind' | 'pool' | 'status' | 'result' | 'created_at' | 'started_at' | 'finished_at'>): void {
    const pool = poolLabel(row.pool);
    this.jobsFinished.inc({ kind: row.kind, pool, status: row.status });
    if (row.started_at && row.finished_at) {
      this.jobDuration.observe(
        { kind: row.kind, pool, status: row.status },
        Math.max(0, row.finished_at.getTime() - row.started_at.getTime()) / 1000,
      );
      this.jobWait.observe({ kind: row.kind, pool }, Math.max(0, row.started_at.getTime() - row.created_at.getTime()) / 1000);
    }
    for (const cause of errorCauses(row.result)) this.sessionErrors.inc({ cause, kind: row.kind });
  }

  // ---- NATS and life cycle ------------------------------------------------------------------

  /** The job transport's NATS connection state, once it is up. */
  trackNats(connected: () => boolean): void {
    this.natsState = connected;
  }

  /** The job transport's stream depths, once it is up. */
  trackStreams(depth: () => Promise<StreamDepth | undefined>): void {
    this.streams = depth;
  }

  /** One read of the stream depths per scrape, shared by the gauges; undefined when unknown. */
  private streamDepth(): Promise<StreamDepth | undefined> {
    if (!this.streams) return Promise.resolve(undefined);
    this.streamRead ??= withTimeout(this.streams(), QUERY_TIMEOUT_MS).catch((err) => {
      this.deps.log.warn({ err: (err as Error).message }, 'metrics: reading the NATS stream depths failed');
      return undefined;
    });
    return this.streamRead;
  }

  natsReconnected(): void {
    this.natsReconnects.inc();
  }

  setDraining(): void {
    this.draining = true;
  }

  /** Prometheus text exposition. */
  async text(): Promise<{ contentType: string; body: string }> {
    this.clusterRead = null;
    this.streamRead = null;
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** The promise, or a rejection once `ms` passed (a slow NATS never hangs a scrape). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
