import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ControllerKey } from '../../../shared/src/jobs/crypto';
import type { EventSink, JobTransport } from '../../../shared/src/jobs/link';
import { isJobKind } from '../../../shared/src/jobs/kinds';
import { OpenJobsRequest, PROTOCOL_VERSION, checkMessage, type OpenJobsReply } from '../../../shared/src/jobs/messages';
import { DEFAULT_POOL, poolOf } from '../../../shared/src/nats/subjects';
import type { SettingsService } from '../platform/settings-service';
import { appError } from '../errors/app-error';
import { UUID, type Db } from '../db/knex';
import { AgentJobCounts } from './agent-counts';
import { AgentEventRecorder } from './agent-events';
import { AgentRequests } from './agent-requests';
import { AgentSigners } from './agent-signers';
import { deadlineFailure, inSeconds, type DeadlineContext } from './deadline';
import { Dispatcher } from './dispatcher';
import { answerHeartbeat, type OnlineListener } from './heartbeat';
import { OUTCOMES_PER_TRANSACTION, OutcomeRecorder, type FinishItem } from './outcomes';
import type { AgentDirectory, Liveness, TargetLoader } from './ports';
import { JobsStore, outcomeOf, type FinalRow, type JobRow } from './store';
import type {
  JobKind,
  JobOutcome,
  JobService,
  JobSpec,
  OutcomeHandler,
  OutcomeOptions,
  RequestHandler,
  RequestOptions,
  RequestSigner,
} from './types';

export interface JobTunables {
  /** Deadline of a job submitted without one. */
  defaultDeadlineMs: number;
  /** How often a replica looks for expired jobs and undispatched work. */
  sweepIntervalMs: number;
  /** NATS: a job whose agent stops reporting progress goes to another agent of the pool after this. */
  ackWaitMs: number;
  /** NATS: agent events a crashed controller held go to another (or its restarted) replica after this. */
  resultsAckWaitMs: number;
  /** NATS: age and size limits of the job and result streams. */
  streamMaxAgeMs: number;
  streamMaxBytes: number;
  /** Jobs looked at per dispatch pass. */
  dispatchBatch: number;
  /** Outcomes recorded at once. */
  resultConcurrency: number;
  /** Finished jobs (and their log lines) are kept this long. */
  retentionDays: number;
}

export const DEFAULT_TUNABLES: JobTunables = {
  defaultDeadlineMs: 10 * 60_000,
  sweepIntervalMs: 1_000,
  ackWaitMs: 30_000,
  resultsAckWaitMs: 5_000,
  // The longest job deadline (a snapshot's) is 24 h.
  streamMaxAgeMs: 26 * 3600_000,
  streamMaxBytes: 1024 ** 3,
  dispatchBatch: 2_000,
  resultConcurrency: 8,
  retentionDays: 30,
};

export interface JobEngineDeps {
  db: Db;
  settings: SettingsService;
  log: Logger;
  agents: AgentDirectory;
  targets: TargetLoader;
  transport: JobTransport;
  controllerKey: ControllerKey;
  tunables: JobTunables;
}

/**
 * The durable job machinery of the controller. Every piece of job state lives in PostgreSQL:
 * dispatch, deadlines and recovery are done by passes any replica may run (advisory lock for
 * dispatch, row locks with SKIP LOCKED for deadlines), and outcomes are recorded once, inside
 * the transaction that marks the job final. The parts: the dispatcher (queued jobs out to
 * agents), the outcome recorder (jobs made final with their kind's handler), the agent event
 * recorder (what agents send back) and the sweep here (deadlines, retention).
 */
export class JobEngine implements JobService {
  readonly store: JobsStore;
  /** When this engine was built (the grace of deadlines after a controller restart runs from it). */
  private readonly createdAt = Date.now();
  private readonly requests: AgentRequests;
  private readonly waiters = new Set<() => void>();
  private readonly signers: AgentSigners;
  private readonly dispatcher: Dispatcher;
  private readonly outcomes: OutcomeRecorder;
  private readonly events: AgentEventRecorder;
  private readonly counts: AgentJobCounts;
  private liveCache: { at: number; value: Promise<Liveness> } | null = null;
  private sweeping = false;
  private lastPrune = 0;
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private stopped = false;

  constructor(private readonly deps: JobEngineDeps) {
    const { db, log, agents, transport } = deps;
    this.store = new JobsStore(db);
    this.signers = new AgentSigners(agents);
    this.requests = new AgentRequests({
      signers: this.signers,
      controllerKey: deps.controllerKey,
      heartbeat: async (kid, v) => answerHeartbeat(kid, v, await this.liveness(), agents, this.logOnline),
    });
    this.counts = new AgentJobCounts(agents, log);
    this.outcomes = new OutcomeRecorder(db, this.store, transport, log);
    this.dispatcher = new Dispatcher({
      store: this.store,
      agents,
      targets: deps.targets,
      transport,
      controllerKey: deps.controllerKey,
      log,
      batchSize: deps.tunables.dispatchBatch,
      liveness: () => this.liveness(),
      deviceGone: (jobs) => this.deviceGone(jobs),
    });
    this.events = new AgentEventRecorder({
      store: this.store,
      signers: this.signers,
      outcomes: this.outcomes,
      log,
      resultConcurrency: deps.tunables.resultConcurrency,
      kick: () => void this.kick(),
    });
    this.outcomes.onFinal((row) => {
      for (const wake of [...this.waiters]) wake();
      if (row.agent_id) this.counts.add(row.agent_id, row.status === 'succeeded');
      // The device is free for its next job. With none queued there is nothing to dispatch: a job
      // submitted meanwhile is dispatched by its submitter, or by the next sweep.
      if (row.next_queued) this.dispatcher.kickSoon();
    });
    this.onRequest('open_jobs', (agent, payload) => this.openJobs(agent, payload));
  }

  /** Agents' start notices and jobs' log lines refused so far: their job was not open at that attempt for that agent. */
  get progressRefused(): number {
    return this.events.progressRefused;
  }

  get transport(): JobTransport {
    return this.deps.transport;
  }

  get tunables(): JobTunables {
    return this.deps.tunables;
  }

  // ---- JobService ---------------------------------------------------------------------------

  onOutcome<K extends JobKind>(kind: K, handler: OutcomeHandler<K>, options: OutcomeOptions<K> = {}): void {
    this.outcomes.onOutcome(kind, handler, options);
  }

  onRequest(type: string, handler: RequestHandler, options?: RequestOptions): void {
    this.requests.on(type, handler, options);
  }

  afterOutcome<K extends JobKind>(kind: K, listener: (outcome: JobOutcome<K>) => void): void {
    this.outcomes.afterOutcome(kind, listener);
  }

  /** Hears every job this replica recorded final, once its transaction committed (metrics). */
  onFinal(listener: (row: FinalRow) => void): void {
    this.outcomes.onFinal(listener);
  }

  async submit<K extends JobKind>(specs: JobSpec<K>[], trx?: Knex.Transaction): Promise<string[]> {
    if (specs.length === 0) return [];
    for (const spec of specs) {
      if (!isJobKind(spec.kind)) throw appError('JOB_KIND_UNKNOWN', `Unknown job kind '${String(spec.kind)}'`); // callers outside the type system
      if (!UUID.test(spec.deviceId)) throw appError('DEVICE_NOT_FOUND', `Device ${spec.deviceId} not found`);
    }
    const now = Date.now();
    const rows = specs.map((spec) => ({
      id: randomUUID(),
      org_id: spec.orgId,
      kind: spec.kind,
      device_id: spec.deviceId,
      group_id: spec.groupId ?? null,
      params: spec.params ?? {},
      deadline_at: new Date(now + (spec.deadlineMs ?? this.deps.tunables.defaultDeadlineMs)),
    }));
    const { missing } = await this.store.insertIfDevicesExist(rows, trx);
    if (missing) throw appError('DEVICE_NOT_FOUND', `Device ${missing} not found`);
    // In the caller's transaction, nothing is there to dispatch before it commits.
    if (trx)
      trx.executionPromise.then(
        () => void this.kick(),
        () => undefined,
      );
    else void this.kick();
    return rows.map((r) => r.id);
  }

  async wait(jobIds: string[], timeoutMs: number): Promise<JobOutcome[]> {
    const unique = [...new Set(jobIds)];
    const end = Date.now() + timeoutMs;
    for (;;) {
      const finals = await this.store.finals(unique);
      if (finals.length === unique.length) {
        const byId = new Map(finals.map((r) => [r.id, outcomeOf(r)]));
        return jobIds.map((id) => byId.get(id)!);
      }
      const left = end - Date.now();
      if (left <= 0)
        throw appError(
          'JOBS_WAIT_TIMEOUT',
          `${unique.length - finals.length} of ${unique.length} jobs did not finish within ${inSeconds(timeoutMs)}`,
        );
      // Woken at once when this replica finishes a job; other replicas' jobs are seen by polling.
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.add(wake);
      });
    }
  }

  // ---- life cycle ---------------------------------------------------------------------------

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.stopped = false;
    this.dispatcher.start();
    // In-process agents live and die with this process: what they held goes back in the queue.
    if (this.transport.name === 'inprocess') {
      const n = await this.store.requeueTransport('inprocess');
      if (n > 0) this.deps.log.info({ jobs: n }, 'requeued jobs the previous in-process agent held');
    }
    await this.transport.start(this.sink);
    this.timer = setInterval(() => void this.sweep(), this.deps.tunables.sweepIntervalMs);
    this.timer.unref();
    void this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.dispatcher.stop();
    if (this.started) await this.transport.close();
    this.started = false;
    // Outcomes recorded while the transport closed are counted too.
    await this.counts.flush();
    for (const wake of [...this.waiters]) wake();
  }

  /** Runs a dispatch pass now, or makes the running one go round again; resolves when done. */
  kick(): Promise<void> {
    return this.dispatcher.kick();
  }

  /** Jobs whose device was deleted while they waited end failed with that reason. */
  private async deviceGone(jobs: JobRow[]): Promise<void> {
    const gone = async () => ({ status: 'failed' as const, error: 'The device no longer exists', result: null, agentId: null, startedAt: null });
    for (const job of jobs) {
      await this.outcomes.finish(job.id, gone).catch((err) => this.deps.log.error({ err, job: job.id }, 'could not end the job of a deleted device'));
    }
  }

  // ---- agent events and requests ------------------------------------------------------------

  readonly sink: EventSink = {
    events: (batch) => this.events.record(batch),
    request: (token) => this.requests.answer(token),
  };

  private async liveness(): Promise<Liveness> {
    const now = Date.now();
    if (!this.liveCache || now - this.liveCache.at > 5_000) {
      const { settings } = this.deps;
      const value = Promise.all([settings.get<number>('agents.heartbeat_seconds'), settings.get<number>('agents.offline_after_seconds')]).then(
        ([hb, off]) => ({ heartbeatMs: hb * 1000, offlineMs: off * 1000 }),
      );
      this.liveCache = { at: now, value };
      value.catch(() => (this.liveCache = null));
    }
    return this.liveCache.value;
  }

  private readonly logOnline: OnlineListener = (a) =>
    this.deps.log.info(
      { agent_id: a.id, agent: a.name, org_id: a.org_id, pool: a.site_id ?? DEFAULT_POOL, version: a.version },
      `agent online: ${a.name}`,
    );

  /**
   * Which jobs of a redelivered batch are still open at the attempt the batch carries: the agent
   * runs only those, so a device whose result was recorded is never run again. Only jobs of the
   * agent's own pool are answered for, as its events are (another pool's are never its to run).
   */
  private async openJobs(agent: RequestSigner, payload: unknown): Promise<Record<string, unknown>> {
    const reply = (ok: boolean, open: string[], error: string | null): OpenJobsReply => ({ v: PROTOCOL_VERSION, type: 'open_jobs', ok, open, error });
    let request: OpenJobsRequest;
    try {
      request = checkMessage(OpenJobsRequest, payload, 'open jobs request');
      if (request.agent_id !== agent.id) throw new Error('agent_id does not match the signer');
    } catch (err) {
      return reply(false, [], (err as Error).message);
    }
    const refs = request.jobs.filter((j) => UUID.test(j.job_id));
    return reply(true, await this.store.stillOpen(agent.org_id, poolOf(agent.site_id), refs), null);
  }

  // ---- deadlines ----------------------------------------------------------------------------

  /** One sweep: expired jobs end with their reason, waiting jobs get another dispatch pass. */
  async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    try {
      const expired = await this.store.expired(500);
      const ctx = expired.length > 0 ? await this.deadlineContext() : null;
      for (let i = 0; i < expired.length; i += OUTCOMES_PER_TRANSACTION) {
        const items = expired
          .slice(i, i + OUTCOMES_PER_TRANSACTION)
          .map((jobId): FinishItem => ({ jobId, decide: (job, trx) => deadlineFailure(job, trx, ctx!) }));
        await this.outcomes.finishAll(items, { skipLocked: true, retract: true });
      }
      await this.kick();
      if (Date.now() - this.lastPrune > 3600_000) {
        this.lastPrune = Date.now();
        await this.store.prune(new Date(Date.now() - this.deps.tunables.retentionDays * 86400_000));
      }
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'job sweep failed');
    } finally {
      this.sweeping = false;
    }
  }

  private async deadlineContext(): Promise<DeadlineContext> {
    const backlog = (await this.transport.resultsBacklog?.().catch(() => 0)) ?? 0;
    const { tunables } = this.deps;
    const live = await this.liveness();
    return {
      agents: this.deps.agents,
      store: this.store,
      transport: this.transport.name,
      live,
      backlog,
      graceMs: 3 * tunables.resultsAckWaitMs,
      upSince: this.createdAt,
    };
  }

  // ---- reading ------------------------------------------------------------------------------

  async job(jobId: string): Promise<JobRow | undefined> {
    return this.store.find(jobId);
  }

  async logs(jobId: string) {
    return this.store.logs(jobId);
  }
}
