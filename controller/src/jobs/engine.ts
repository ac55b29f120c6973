import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { CONTROLLER_SIGN_ALG, signJson, signerOf, unverifiedPayload, type ControllerKey } from '../../../shared/src/jobs/crypto';
import type { EventSink, IncomingEvent, JobTransport } from '../../../shared/src/jobs/link';
import { mapLimit } from '../../../shared/src/jobs/limit';
import { isJobKind, resultMisfit } from '../../../shared/src/jobs/kinds';
import {
  AgentEvent,
  OpenJobsRequest,
  PROTOCOL_VERSION,
  checkMessage,
  type JobResult,
  type OpenJobsReply,
  type ProgressEvent,
} from '../../../shared/src/jobs/messages';
import { DEFAULT_POOL, poolOf } from '../../../shared/src/nats/subjects';
import type { SettingsService } from '../platform/settings-service';
import { appError } from '../errors/app-error';
import { isOffline, type AgentDirectory, type AgentIdentityRow, type DeviceTarget, type Liveness, type TargetLoader } from './ports';
import { AgentSigners } from './agent-signers';
import { UUID, type Db } from '../db/knex';
import { deadlineFailure, inSeconds, type DeadlineContext } from './deadline';
import { answerHeartbeat, type OnlineListener } from './heartbeat';
import { jobBatch, splitBatches } from './job-message';
import { JobsStore, outcomeOf, type LogRow, type Dispatched, type EventJob, type FinalFields, type FinalRow, type JobRow } from './store';
import type { AgentRef, JobKind, JobOutcome, JobService, JobSpec, OutcomeHandler, OutcomeOptions, RequestHandler } from './types';

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

type Decide = (job: JobRow, trx: Knex.Transaction) => Promise<FinalFields | null>;
interface FinishItem {
  jobId: string;
  decide: Decide;
  /** Log lines recorded with the outcome, in its transaction (an agent's result carries its job's lines). */
  logs?: LogRow[];
}
type FinishResult = 'final' | 'skipped' | 'retry';

/** Outcomes recorded per transaction: one commit serves them all. */
const OUTCOMES_PER_TRANSACTION = 64;
/** After this many failed attempts to record an outcome, the job ends failed with the reason. */
const MAX_RECORD_FAILURES = 5;
/** Batches sealed, signed and published at once. */
const PUBLISH_CONCURRENCY = 16;
const FINAL_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'failed']);
/** A rejection that came before its job's dispatch committed is read again this much later, this many times at most. */
const REJECTED_EARLY_DELAY_MS = 200;
const REJECTED_EARLY_TRIES = 25;
/**
 * The job as read is still queued at the attempt before the one sent: its dispatch pass has not
 * committed yet (the backup_store statement's 'dispatching' verdict, deployments/store.ts).
 */
const beingDispatched = (job: { status: string; attempt: number }, sentAttempt: number) => job.status === 'queued' && job.attempt === sentAttempt - 1;

/**
 * A kind's recorder as the engine keeps it. Registered through the typed onOutcome and looked
 * up by the kind of the job at hand, so it only ever sees outcomes of its own kind.
 */
interface KindHandler {
  handle(outcome: JobOutcome, trx: Knex.Transaction): Promise<void>;
  storedResult?(result: unknown): Record<string, unknown>;
  handleMany?(outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void>;
  keepsLogs?: boolean;
}

interface VerifiedEvent {
  incoming: IncomingEvent;
  event: AgentEvent;
  agent: AgentIdentityRow;
}

/** One job's result out of a verified results event, with what settles that event. */
interface ResultItem {
  result: JobResult;
  agent: AgentIdentityRow;
  job: EventJob;
  settle(recorded: boolean): void;
}

interface JobRef {
  job_id: string;
  attempt: number;
}

/**
 * The durable job machinery of the controller. Every piece of job state lives in PostgreSQL:
 * dispatch, deadlines and recovery are done by passes any replica may run (advisory lock for
 * dispatch, row locks with SKIP LOCKED for deadlines), and outcomes are recorded once, inside
 * the transaction that marks the job final.
 */
export class JobEngine implements JobService {
  readonly store: JobsStore;
  private readonly handlers = new Map<JobKind, KindHandler>();
  /** When this engine was built (the grace of deadlines after a controller restart runs from it). */
  private readonly createdAt = Date.now();
  private readonly finalListeners: ((row: JobRow) => void)[] = [];
  private readonly outcomeListeners = new Map<JobKind, ((outcome: JobOutcome) => void)[]>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly waiters = new Set<() => void>();
  private readonly signers: AgentSigners;
  private liveCache: { at: number; value: Promise<Liveness> } | null = null;
  private dispatching: Promise<void> | null = null;
  private dispatchAgain = false;
  private sweeping = false;
  private lastPrune = 0;
  private timer: NodeJS.Timeout | null = null;
  private kickTimer: NodeJS.Timeout | null = null;
  private countTimer: NodeJS.Timeout | null = null;
  private readonly counts = new Map<string, { completed: number; failed: number }>();
  private started = false;
  private stopped = false;

  constructor(private readonly deps: JobEngineDeps) {
    this.store = new JobsStore(deps.db);
    this.signers = new AgentSigners(deps.agents);
    this.onRequest('open_jobs', (agent, payload) => this.openJobs(agent, payload));
  }

  get transport(): JobTransport {
    return this.deps.transport;
  }

  get tunables(): JobTunables {
    return this.deps.tunables;
  }

  // ---- JobService ---------------------------------------------------------------------------

  onOutcome<K extends JobKind>(kind: K, handler: OutcomeHandler<K>, options: OutcomeOptions<K> = {}): void {
    this.handlers.set(kind, { handle: handler, ...options } as KindHandler);
  }

  onRequest(type: string, handler: RequestHandler): void {
    this.requestHandlers.set(type, handler);
  }

  afterOutcome<K extends JobKind>(kind: K, listener: (outcome: JobOutcome<K>) => void): void {
    this.outcomeListeners.set(kind, [...(this.outcomeListeners.get(kind) ?? []), listener as (outcome: JobOutcome) => void]);
  }

  /** Hears every job this replica recorded final, once its transaction committed (metrics). */
  onFinal(listener: (row: JobRow) => void): void {
    this.finalListeners.push(listener);
  }

  async submit<K extends JobKind>(specs: JobSpec<K>[]): Promise<string[]> {
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
    const { missing } = await this.store.insertIfDevicesExist(rows);
    if (missing) throw appError('DEVICE_NOT_FOUND', `Device ${missing} not found`);
    void this.kick();
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
    if (this.kickTimer) clearTimeout(this.kickTimer);
    await this.dispatching?.catch(() => undefined);
    if (this.started) await this.transport.close();
    this.started = false;
    // Outcomes recorded while the transport closed are counted too.
    if (this.countTimer) clearTimeout(this.countTimer);
    await this.flushCounts();
    for (const wake of [...this.waiters]) wake();
  }

  // ---- dispatch -----------------------------------------------------------------------------

  /** Runs a dispatch pass now, or makes the running one go round again; resolves when done. */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.dispatching) {
      this.dispatchAgain = true;
      return this.dispatching;
    }
    this.dispatching = (async () => {
      try {
        do {
          this.dispatchAgain = false;
          try {
            const full = await this.dispatchOnce();
            if (full) this.dispatchAgain = true;
          } catch (err) {
            this.deps.log.warn({ err: (err as Error).message }, 'job dispatch failed; retrying on the next sweep');
            break;
          }
        } while (this.dispatchAgain && !this.stopped);
      } finally {
        this.dispatching = null;
      }
    })();
    return this.dispatching;
  }

  /** One pass; true when the batch was full (more may be waiting). */
  private async dispatchOnce(): Promise<boolean> {
    const { store, deps } = this;
    const batch = deps.tunables.dispatchBatch;
    const gone: JobRow[] = [];
    // Read before the lock: the embedded database has a single connection, held by the dispatch transaction.
    const live = await this.liveness();
    const full = await store.withDispatchLock(async (trx) => {
      const rows = await store.dispatchCandidates(trx, batch);
      const seen = new Set<string>();
      const jobs = rows.filter((r) => !seen.has(r.device_id) && seen.add(r.device_id));
      if (jobs.length === 0) return false;

      const targets = new Map<string, DeviceTarget>();
      for (const [orgId, list] of groupBy(jobs, (j) => j.org_id)) {
        for (const t of await deps.targets(
          trx,
          orgId,
          list.map((j) => j.device_id),
        ))
          targets.set(`${orgId}/${t.device_id}`, t);
      }
      const siteIds = [...new Set([...targets.values()].flatMap((t) => (t.site_id ? [t.site_id] : [])))];
      const staffed = await deps.agents.sitesWithAgents(siteIds, trx);
      const members = new Map<string, AgentIdentityRow[]>();

      const waiting: { id: string; pool: string; site_id: string | null }[] = [];
      const toSend: { job: JobRow; target: DeviceTarget; pool: string; recipients: AgentIdentityRow[] }[] = [];
      for (const job of jobs) {
        const target = targets.get(`${job.org_id}/${job.device_id}`);
        if (!target) {
          gone.push(job);
          continue;
        }
        const pool = target.site_id && staffed.has(target.site_id) ? target.site_id : DEFAULT_POOL;
        const key = `${job.org_id}/${pool}`;
        if (!members.has(key))
          members.set(
            key,
            (await deps.agents.poolMembers(job.org_id, pool, trx)).filter((a) => a.public_key),
          );
        const recipients = members.get(key)!;
        if (recipients.length === 0) waiting.push({ id: job.id, pool, site_id: target.site_id });
        else toSend.push({ job, target, pool, recipients });
      }

      // The jobs of each pool in batches: one message, one signature and one sealing per batch.
      const online = (agents: AgentIdentityRow[]) => agents.filter((a) => !isOffline(a, live)).length;
      const batches = [...groupBy(toSend, (s) => `${s.job.org_id}/${s.pool}`).values()].flatMap((group) =>
        splitBatches(
          group.map(({ job, target }) => ({ job, target, attempt: job.attempt + 1 })),
          online(group[0].recipients),
        ).map((items) => ({ items, ...group[0] })),
      );
      const sent = (
        await mapLimit(batches, PUBLISH_CONCURRENCY, async ({ items, job, pool, recipients }): Promise<Dispatched[]> => {
          const message = await jobBatch(job.org_id, pool, items, recipients);
          const token = await signJson(message, deps.controllerKey.privateKey, CONTROLLER_SIGN_ALG);
          const seq = await this.transport.publishJob(job.org_id, pool, token, message.batch_id);
          return items.map(({ job: j, target, attempt }) => ({
            id: j.id,
            attempt,
            pool,
            site_id: target.site_id,
            stream_seq: seq,
            transport: this.transport.name,
          }));
        })
      ).flat();
      await store.markDispatched(trx, sent);
      await store.setPool(trx, waiting);
      return rows.length === batch;
    });
    for (const job of gone) {
      await this.finish(job.id, async () => ({
        status: 'failed',
        error: 'The device no longer exists',
        result: null,
        agentId: null,
        startedAt: null,
      })).catch((err) => deps.log.error({ err, job: job.id }, 'could not end the job of a deleted device'));
    }
    return full;
  }

  /** Dispatch shortly: outcomes arrive in bursts, one pass serves a burst. */
  private kickSoon(): void {
    if (this.kickTimer || this.stopped) return;
    this.kickTimer = setTimeout(() => {
      this.kickTimer = null;
      void this.kick();
    }, 20);
  }

  /**
   * Per-agent job counts, added up and written after the outcomes commit: a counter updated
   * inside each outcome's transaction would make every outcome of one agent wait for the last.
   * (Informational: a crash may lose the last few increments, never an outcome.)
   */
  private count(agentId: string, succeeded: boolean): void {
    const c = this.counts.get(agentId) ?? { completed: 0, failed: 0 };
    if (succeeded) c.completed += 1;
    else c.failed += 1;
    this.counts.set(agentId, c);
    this.countTimer ??= setTimeout(() => void this.flushCounts(), 100);
  }

  private async flushCounts(): Promise<void> {
    this.countTimer = null;
    const counts = [...this.counts];
    this.counts.clear();
    for (const [agentId, c] of counts) {
      await this.deps.agents
        .addJobCounts(agentId, c.completed, c.failed)
        .catch((err) => this.deps.log.warn({ err: (err as Error).message }, 'agent job counts not updated'));
    }
  }

  // ---- finishing jobs -----------------------------------------------------------------------

  /**
   * Marks one open job final and runs its kind's outcome handler in the same transaction.
   * `decide` sees the locked row and answers the final fields (or null to leave it open).
   * Throws when recording failed and should be retried later.
   */
  private async finish(jobId: string, decide: Decide, opts: { skipLocked?: boolean; retract?: boolean } = {}): Promise<boolean> {
    const [result] = await this.finishAll([{ jobId, decide }], opts);
    if (result === 'retry') throw new Error(`recording the outcome of job ${jobId} failed; it is retried`);
    return result === 'final';
  }

  /**
   * Finishes several jobs in one transaction (one commit for many outcomes), each in its own
   * savepoint so one outcome whose handler fails does not undo the others. Answers per item:
   * 'final' (recorded now), 'skipped' (already final, or left open by decide) or 'retry'.
   */
  private async finishAll(items: FinishItem[], opts: { skipLocked?: boolean; retract?: boolean } = {}): Promise<FinishResult[]> {
    const results: FinishResult[] = items.map(() => 'retry');
    const finals: FinalRow[] = [];
    const failed = new Map<number, Error>();
    try {
      await this.deps.db.transaction(async (trx) => {
        finals.length = 0;
        failed.clear();
        for (let i = 0; i < items.length; i++) {
          try {
            // Everything inside goes through the transaction: the embedded database has a single connection.
            const row = await trx.transaction((sp) => this.finishIn(sp, items[i], opts.skipLocked ?? false, true));
            results[i] = row ? 'final' : 'skipped';
            if (row) finals.push(row);
          } catch (err) {
            results[i] = 'retry';
            failed.set(i, err as Error);
          }
        }
      });
    } catch (err) {
      // Nothing of this transaction was recorded (connection lost, deadlock, commit failed).
      this.deps.log.warn({ err: (err as Error).message, jobs: items.length }, 'recording job outcomes failed; they are retried');
      return items.map(() => 'retry');
    }
    for (const [i, err] of failed) {
      const { jobId } = items[i];
      const failures = await this.store.bumpRecordFailures(jobId).catch(() => 0);
      this.deps.log.error({ err, job: jobId, failures }, 'recording a job outcome failed');
      if (failures < MAX_RECORD_FAILURES) continue;
      // Give up on this outcome: the job ends failed, and the handler hears why (once).
      const reason = `Recording the job's outcome failed ${failures} times: ${err.message}`;
      const giveUp: Decide = async (job) => ({ status: 'failed', error: reason, result: null, agentId: job.agent_id, startedAt: job.started_at });
      const inTrx = (withHandler: boolean) =>
        this.deps.db.transaction((trx) =>
          this.finishIn(trx, { ...items[i], decide: giveUp, logs: withHandler ? items[i].logs : [] }, false, withHandler),
        );
      const row = await inTrx(true)
        .catch(() => inTrx(false))
        .catch(() => null);
      results[i] = row ? 'final' : 'retry';
      if (row) finals.push(row);
    }
    for (const row of finals) await this.afterFinal(row, opts.retract ?? false);
    return results;
  }

  private async finishIn(trx: Knex.Transaction, item: FinishItem, skipLocked: boolean, withHandler: boolean): Promise<FinalRow | null> {
    const { jobId, decide } = item;
    const job = await this.store.lockOpen(trx, jobId, skipLocked);
    if (!job) return null;
    const fields = await decide(job, trx);
    if (!fields) return null;
    const handler = withHandler ? this.handlers.get(job.kind) : undefined;
    const row = await this.store.markFinal(trx, jobId, fields, this.storedResult(job.kind, fields.result));
    await this.store.insertLogs(linesKept(row, handler, item.logs ?? []), trx);
    if (handler) await handler.handle(withLogs(row, handler, item.logs), trx);
    return row;
  }

  /** After the commit: listeners, stream clean-up, waiters, counts, the device's next job. */
  private async afterFinal(row: FinalRow, retract: boolean): Promise<void> {
    const hear = (listener: () => void) => {
      try {
        listener();
      } catch (err) {
        this.deps.log.warn({ err, job: row.id }, 'a job-final listener failed');
      }
    };
    for (const listener of this.finalListeners) hear(() => listener(row));
    const kindListeners = this.outcomeListeners.get(row.kind) ?? [];
    if (kindListeners.length > 0) {
      const outcome = outcomeOf(row);
      for (const listener of kindListeners) hear(() => listener(outcome));
    }
    // A batch message goes once none of its jobs is open (the others may still need its redelivery).
    if (retract && row.stream_seq !== null && row.transport && !(await this.store.messageOpen(row.stream_seq, row.transport).catch(() => true)))
      await this.transport.retractJob(row.stream_seq).catch(() => undefined);
    for (const wake of [...this.waiters]) wake();
    if (row.agent_id) this.count(row.agent_id, row.status === 'succeeded');
    // The device is free for its next job. With none queued there is nothing to dispatch: a job
    // submitted meanwhile is dispatched by its submitter, or by the next sweep.
    if (row.next_queued) this.kickSoon();
  }

  // ---- agent events -------------------------------------------------------------------------

  readonly sink: EventSink = {
    events: (batch) => this.recordEvents(batch),
    request: (token) => this.answerRequest(token),
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

  /**
   * The events whose signature, shape and signer check out; the others are acked and dropped
   * (never recorded), and a revoked agent's jobs go back to the pool's other agents.
   */
  private async verifiedEvents(batch: IncomingEvent[]): Promise<VerifiedEvent[]> {
    const agents = await this.signers.ofTokens(batch.map((e) => e.token));
    const checked = await Promise.all(batch.map((incoming) => this.signers.verify(incoming.token, agents, 'detached')));
    const verified: VerifiedEvent[] = [];
    const revokedJobs: JobRef[] = [];
    for (const [i, incoming] of batch.entries()) {
      const v = checked[i];
      if ('payload' in v) {
        try {
          const event = checkMessage(AgentEvent, v.payload, 'agent event');
          if (event.agent_id !== v.agent.id) throw new Error('agent_id does not match the signer');
          verified.push({ incoming, event, agent: v.agent });
          continue;
        } catch (err) {
          this.deps.log.warn({ err: (err as Error).message, agent: v.agent.id }, 'refused an agent event');
        }
      } else {
        this.deps.log.warn({ reason: v.refused }, 'refused an agent event');
        if (v.agent?.revoked_at) revokedJobs.push(...jobsOfToken(incoming.token));
      }
      incoming.ack();
    }
    await this.requeueAll(revokedJobs);
    return verified;
  }

  /** Puts jobs an agent could not (or may not) finish back in the queue, at the attempt it had. */
  private async requeueAll(jobs: JobRef[]): Promise<void> {
    let any = false;
    for (const r of jobs) if (await this.store.requeue(r.job_id, r.attempt)) any = true;
    if (any) void this.kick();
  }

  private async recordEvents(batch: IncomingEvent[]): Promise<void> {
    const { store, deps } = this;
    const verified = await this.verifiedEvents(batch);

    // Every job an event is about, read at once; events must come from an agent of the job's own organization and pool.
    const ids = verified.flatMap(({ event: e }) =>
      e.type === 'results' ? e.results.map((r) => r.job_id) : e.type === 'rejected' ? e.jobs.map((j) => j.job_id) : jobIdsOf(e),
    );
    const jobs = await store.jobsById([...new Set(ids.filter((id) => UUID.test(id)))]);
    const mine = (v: VerifiedEvent, jobId: string) => {
      const job = jobs.get(jobId);
      const ok = job !== undefined && job.org_id === v.agent.org_id && (job.pool === null || job.pool === poolOf(v.agent.site_id));
      if (!ok && job) deps.log.warn({ agent: v.agent.id, job: jobId }, "refused an event from an agent outside the job's pool");
      return ok;
    };

    const logs: LogRow[] = [];
    const started: { id: string; agent_id: string; at: Date }[] = [];
    const results: ResultItem[] = [];
    const done: IncomingEvent[] = [];
    const rejected: JobRef[] = [];
    for (const v of verified) {
      const e = v.event;
      if (e.type === 'results') {
        const accepted = e.results.filter((r) => mine(v, r.job_id));
        // The event is acked once every result in it is recorded (or was already): a redelivered copy records only what is missing.
        const settle = settleOnce(v.incoming, accepted.length);
        // A result's log lines are recorded with it (once, in its transaction), not on their own.
        for (const r of accepted) results.push({ result: r, agent: v.agent, job: jobs.get(r.job_id)!, settle });
        continue;
      }
      if (e.type === 'rejected') {
        // The batch's secrets were sealed before this agent joined the pool: seal them again.
        const ours = e.jobs.filter((j) => mine(v, j.job_id));
        if (ours.some((j) => beingDispatched(jobs.get(j.job_id)!, j.attempt)) && v.incoming.redeliveries < REJECTED_EARLY_TRIES) {
          // Batches are published inside the dispatch pass's transaction, and a quick agent can
          // answer before it commits: the job still reads queued at the attempt before. Dropping
          // the rejection would leave the job dispatched to nobody until its deadline; it is read
          // again once the pass has committed.
          deps.log.info({ agent: v.agent.id, jobs: ours.length }, 'a job rejection came before its dispatch committed; reading it again shortly');
          v.incoming.nak(REJECTED_EARLY_DELAY_MS);
          continue;
        }
        rejected.push(...ours.filter((j) => jobs.get(j.job_id)!.attempt === j.attempt));
      } else {
        for (const s of e.started.filter((j) => mine(v, j.job_id))) started.push({ id: s.job_id, agent_id: v.agent.id, at: new Date(s.at) });
        for (const j of e.logs.filter((l) => mine(v, l.job_id)))
          for (const line of j.lines) logs.push({ job_id: j.job_id, attempt: j.attempt, agent_id: v.agent.id, line });
      }
      done.push(v.incoming);
    }
    await this.requeueAll(rejected);
    try {
      await store.insertLogs(logs);
      // A job whose result came in the same gather is written once, final, with its start time.
      const finishing = new Set(results.map((r) => r.result.job_id));
      await store.markStarted(started.filter((s) => !finishing.has(s.id)));
    } catch (err) {
      deps.log.error({ err }, 'recording agent progress failed');
      for (const v of verified) v.incoming.nak(1000);
      return;
    }
    done.forEach((e) => e.ack());

    // Outcomes in chunks, one transaction each, a few transactions at once.
    const chunks: ResultItem[][] = [];
    for (let i = 0; i < results.length; i += OUTCOMES_PER_TRANSACTION) chunks.push(results.slice(i, i + OUTCOMES_PER_TRANSACTION));
    await mapLimit(chunks, deps.tunables.resultConcurrency, async (chunk) => {
      const outcome = await this.recordResults(
        chunk.map(({ result, agent, job }) => ({
          jobId: result.job_id,
          kind: job.kind,
          fields: resultFields(result, agent.id, job.kind),
          logs: logRows(result, agent.id),
        })),
      );
      // A result not recorded keeps its log lines unless it is a copy of the one recorded (whose lines are in).
      const late = new Set(chunk.filter((item, i) => outcome[i] === 'skipped' && !this.noteUnrecorded(item)));
      const kept = await store.insertLogs([...late].flatMap((item) => logRows(item.result, item.agent.id))).then(
        () => true,
        (err: unknown) => (deps.log.error({ err }, "recording a late result's log lines failed"), false),
      );
      // Acked once recorded, or already recorded; a late result once its lines are kept.
      chunk.forEach((item, i) => item.settle(late.has(item) ? kept : outcome[i] !== 'retry'));
    });
  }

  /**
   * A result that was not recorded because its job was already final: a redelivered copy of the
   * result that finished it is expected after a crash, anything else arrived too late (its job
   * was failed at its deadline, or another attempt finished it) and is logged, never dropped silently.
   */
  private noteUnrecorded({ job, result: e, agent }: ResultItem): boolean {
    if (!FINAL_STATUSES.has(job.status)) return false;
    const fields = resultFields(e, agent.id, job.kind);
    const copy = job.status === fields.status && job.agent_id === agent.id && job.error === fields.error;
    const about = {
      job: job.id,
      device: job.device_id,
      kind: job.kind,
      agent: agent.id,
      attempt: e.attempt,
      job_status: job.status,
      job_error: job.error,
      result_status: e.status,
    };
    if (copy) this.deps.log.debug(about, 'a result already recorded was delivered again');
    else this.deps.log.warn(about, 'a result arrived after its job was finalised; it was not recorded');
    return copy;
  }

  /**
   * Records agents' results: the fast path marks them all final with one statement and hands
   * each kind's outcomes to its handler at once (handleMany where the kind has one). When any
   * of that fails, the transaction rolls back and each result is recorded alone, in its own
   * savepoint, so one bad outcome never holds up the others.
   */
  private async recordResults(results: { jobId: string; kind: JobKind; fields: FinalFields; logs: LogRow[] }[]): Promise<FinishResult[]> {
    const byJob = new Map(results.map((r) => [r.jobId, r])); // a redelivered duplicate counts once
    let finals: FinalRow[];
    try {
      finals = await this.deps.db.transaction(async (trx) => {
        // In id order, so two batches (or replicas) lock the rows they share in the same order.
        const chunk = [...byJob.values()].sort((a, b) => (a.jobId < b.jobId ? -1 : 1));
        const rows = await this.store.markFinalMany(
          trx,
          chunk.map(({ jobId, kind, fields }) => ({ id: jobId, fields, stored: this.storedResult(kind, fields.result) })),
        );
        await this.store.insertLogs(
          rows.flatMap((row) => linesKept(row, this.handlers.get(row.kind), byJob.get(row.id)!.logs)),
          trx,
        );
        for (const [kind, group] of groupBy(rows, (row) => row.kind)) {
          const handler = this.handlers.get(kind as JobKind);
          if (!handler) continue;
          const outcomes = group.map((row) => withLogs(row, handler, byJob.get(row.id)!.logs));
          if (handler.handleMany) await handler.handleMany(outcomes, trx);
          else for (const o of outcomes) await handler.handle(o, trx);
        }
        return rows;
      });
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message, jobs: results.length }, 'recording job results together failed; recording them one by one');
      return this.finishAll(results.map(({ jobId, fields, logs }) => ({ jobId, logs, decide: async () => fields })));
    }
    for (const row of finals) await this.afterFinal(row, false);
    const recorded = new Set(finals.map((row) => row.id));
    return results.map((r) => (recorded.has(r.jobId) ? 'final' : 'skipped'));
  }

  /** The form of a result kept on the job row (see OutcomeOptions.storedResult). */
  private storedResult(kind: JobKind, result: Record<string, unknown> | null): Record<string, unknown> | null {
    const handler = this.handlers.get(kind);
    return result && handler?.storedResult ? handler.storedResult(result) : result;
  }

  /**
   * An agent request: a registered handler answers its type (a verified agent's only); anything
   * else is a heartbeat, whose reply also tells a refused or revoked agent why.
   */
  private readonly logOnline: OnlineListener = (a) =>
    this.deps.log.info(
      { agent_id: a.id, agent: a.name, org_id: a.org_id, pool: a.site_id ?? DEFAULT_POOL, version: a.version },
      `agent online: ${a.name}`,
    );

  private async answerRequest(token: string): Promise<string> {
    const v = await this.signers.verify(token, await this.signers.ofRequest(token));
    const type = 'payload' in v ? (v.payload as { type?: unknown } | null)?.type : undefined;
    const handler = typeof type === 'string' ? this.requestHandlers.get(type) : undefined;
    const reply =
      handler && 'payload' in v
        ? await handler(v.agent, v.payload)
        : await answerHeartbeat(signerOf(token), v, await this.liveness(), this.deps.agents, this.logOnline);
    return signJson(reply, this.deps.controllerKey.privateKey, CONTROLLER_SIGN_ALG);
  }

  /**
   * Which jobs of a redelivered batch are still open at the attempt the batch carries: the agent
   * runs only those, so a device whose result was recorded is never run again.
   */
  private async openJobs(agent: AgentRef, payload: unknown): Promise<Record<string, unknown>> {
    const reply = (ok: boolean, open: string[], error: string | null): OpenJobsReply => ({ v: PROTOCOL_VERSION, type: 'open_jobs', ok, open, error });
    let request: OpenJobsRequest;
    try {
      request = checkMessage(OpenJobsRequest, payload, 'open jobs request');
      if (request.agent_id !== agent.id) throw new Error('agent_id does not match the signer');
    } catch (err) {
      return reply(false, [], (err as Error).message);
    }
    const refs = request.jobs.filter((j) => UUID.test(j.job_id));
    return reply(true, await this.store.stillOpen(agent.org_id, refs), null);
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
        await this.finishAll(items, { skipLocked: true, retract: true });
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

/** The jobs a progress event is about. */
const jobIdsOf = (e: ProgressEvent) => [...e.started.map((j) => j.job_id), ...e.logs.map((j) => j.job_id)];

/** The jobs a refused results or rejected event was about, read without trusting it (to requeue them). */
function jobsOfToken(token: string): JobRef[] {
  try {
    const payload = unverifiedPayload(token) as { type?: unknown; results?: unknown; jobs?: unknown };
    const list = payload.type === 'results' ? payload.results : payload.type === 'rejected' ? payload.jobs : null;
    if (!Array.isArray(list)) return [];
    return list.flatMap((j: { job_id?: unknown; attempt?: unknown }) =>
      typeof j?.job_id === 'string' && UUID.test(j.job_id) && typeof j.attempt === 'number' ? [{ job_id: j.job_id, attempt: j.attempt }] : [],
    );
  } catch {
    return []; // unreadable: nothing to requeue
  }
}

/** Answers once all `n` parts of an event are settled: ack when each was recorded, nak when any must be tried again. */
function settleOnce(incoming: IncomingEvent, n: number): (recorded: boolean) => void {
  let left = n;
  let retry = false;
  if (n === 0) incoming.ack();
  return (recorded) => {
    if (!recorded) retry = true;
    if (--left === 0) {
      if (retry) incoming.nak(1000);
      else incoming.ack();
    }
  };
}

/**
 * The final fields an agent's result event asks for. A result that does not fit its kind's
 * contract (an agent of another build) fails the job with the reason instead of reaching the
 * kind's recorder, which can then take every result as its schema says.
 */
function resultFields(e: JobResult, agentId: string, kind: JobKind): FinalFields {
  const misfit = e.result === null ? null : resultMisfit(kind, e.result);
  return {
    status: misfit ? 'failed' : e.status,
    error: misfit
      ? `The agent's ${kind} result does not fit the job contract (${misfit})${e.status === 'failed' && e.error ? `; it reported: ${e.error}` : ''}`
      : e.status === 'failed'
        ? (e.error ?? 'The agent reported a failure without a reason')
        : null,
    result: misfit ? null : e.result,
    agentId,
    startedAt: new Date(e.started_at),
    attempt: e.attempt,
    ...(e.host_key ? { hostKey: e.host_key } : {}),
    ...(e.gnmi_cert ? { gnmiCert: e.gnmi_cert } : {}),
  };
}

/**
 * The lines a result came with that job_logs keeps: none when the kind's recorder keeps them
 * itself; all of a failed job; of a succeeded one its warnings and errors only, since its info
 * lines only retell the outcome recorded with it, and nothing reads them (a fleet polled every
 * 15 minutes wrote 7 of them per device and poll, kept for the jobs' retention).
 */
function linesKept(row: FinalRow, handler: KindHandler | undefined, logs: LogRow[]): LogRow[] {
  if (handler?.keepsLogs) return [];
  return row.status === 'succeeded' ? logs.filter((l) => l.line.level !== 'info') : logs;
}

/** The outcome of a final row for its recorder, with the lines its result came with when the recorder keeps them. */
function withLogs(row: FinalRow, handler: KindHandler, logs: LogRow[] = []): JobOutcome {
  const outcome = outcomeOf(row);
  return handler.keepsLogs ? { ...outcome, logs: logs.map((l) => l.line) } : outcome;
}

function logRows(r: JobResult, agentId: string): LogRow[] {
  return r.logs.map((line) => ({ job_id: r.job_id, attempt: r.attempt, agent_id: agentId, line }));
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}
