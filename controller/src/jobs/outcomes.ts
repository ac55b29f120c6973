import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { JobTransport } from '../../../shared/src/jobs/link';
import type { Db } from '../db/knex';
import { groupBy } from '../../../shared/src/group-by';
import { outcomeOf, type FinalFields, type FinalRow, type JobRow, type JobsStore, type LogRow } from './store';
import type { JobKind, JobOutcome, OutcomeHandler, OutcomeOptions } from './types';

/** Sees a job's locked open row and answers its final fields, or null to leave it open. */
export type Decide = (job: JobRow, trx: Knex.Transaction) => Promise<FinalFields | null>;

export interface FinishItem {
  jobId: string;
  decide: Decide;
  /** Log lines recorded with the outcome, in its transaction (an agent's result carries its job's lines). */
  logs?: LogRow[];
}

/** 'final': recorded now; 'skipped': already final, or left open by decide; 'retry': recording failed. */
export type FinishResult = 'final' | 'skipped' | 'retry';

export interface FinishOptions {
  /** Skip a job another transaction holds (the deadline sweep) instead of waiting for it. */
  skipLocked?: boolean;
  /** Take the job's batch message off the stream once none of its jobs is open. */
  retract?: boolean;
}

/** An agent's result as the recorder takes it: the final fields it asks for, with its log lines. */
export interface ResultToRecord {
  jobId: string;
  kind: JobKind;
  fields: FinalFields;
  logs: LogRow[];
}

/** Outcomes recorded per transaction: one commit serves them all. */
export const OUTCOMES_PER_TRANSACTION = 64;
/** After this many failed attempts to record an outcome, the job ends failed with the reason. */
const MAX_RECORD_FAILURES = 5;

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

/**
 * Makes jobs final, exactly once: each outcome is recorded by its kind's handler inside the
 * transaction that marks the job final, so an outcome is either recorded with its job or not
 * at all. Listeners hear a job once its transaction has committed.
 */
export class OutcomeRecorder {
  private readonly handlers = new Map<JobKind, KindHandler>();
  private readonly finalListeners: ((row: FinalRow) => void)[] = [];
  private readonly outcomeListeners = new Map<JobKind, ((outcome: JobOutcome) => void)[]>();

  constructor(
    private readonly db: Db,
    private readonly store: JobsStore,
    private readonly transport: JobTransport,
    private readonly log: Logger,
  ) {}

  onOutcome<K extends JobKind>(kind: K, handler: OutcomeHandler<K>, options: OutcomeOptions<K> = {}): void {
    this.handlers.set(kind, { handle: handler, ...options } as KindHandler);
  }

  afterOutcome<K extends JobKind>(kind: K, listener: (outcome: JobOutcome<K>) => void): void {
    this.outcomeListeners.set(kind, [...(this.outcomeListeners.get(kind) ?? []), listener as (outcome: JobOutcome) => void]);
  }

  /** Hears every job this replica recorded final, once its transaction committed. */
  onFinal(listener: (row: FinalRow) => void): void {
    this.finalListeners.push(listener);
  }

  /**
   * Marks one open job final and runs its kind's handler in the same transaction. Throws when
   * recording failed and should be retried later.
   */
  async finish(jobId: string, decide: Decide, opts: FinishOptions = {}): Promise<boolean> {
    const [result] = await this.finishAll([{ jobId, decide }], opts);
    if (result === 'retry') throw new Error(`recording the outcome of job ${jobId} failed; it is retried`);
    return result === 'final';
  }

  /**
   * Finishes several jobs in one transaction (one commit for many outcomes), each in its own
   * savepoint so one outcome whose handler fails does not undo the others.
   */
  async finishAll(items: FinishItem[], opts: FinishOptions = {}): Promise<FinishResult[]> {
    const results: FinishResult[] = items.map(() => 'retry');
    const finals: FinalRow[] = [];
    const failed = new Map<number, Error>();
    try {
      await this.db.transaction(async (trx) => {
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
      this.log.warn({ err: (err as Error).message, jobs: items.length }, 'recording job outcomes failed; they are retried');
      return items.map(() => 'retry');
    }
    for (const [i, err] of failed) {
      const row = await this.afterFailure(items[i], err);
      results[i] = row ? 'final' : 'retry';
      if (row) finals.push(row);
    }
    for (const row of finals) await this.afterFinal(row, opts.retract ?? false);
    return results;
  }

  /**
   * Records agents' results: the fast path marks them all final with one statement and hands
   * each kind's outcomes to its handler at once (handleMany where the kind has one). When any
   * of that fails, the transaction rolls back and each result is recorded alone, in its own
   * savepoint, so one bad outcome never holds up the others.
   */
  async recordResults(results: ResultToRecord[]): Promise<FinishResult[]> {
    const byJob = new Map(results.map((r) => [r.jobId, r])); // a redelivered duplicate counts once
    let finals: FinalRow[];
    try {
      finals = await this.db.transaction((trx) => this.recordTogether(trx, byJob));
    } catch (err) {
      this.log.warn({ err: (err as Error).message, jobs: results.length }, 'recording job results together failed; recording them one by one');
      return this.finishAll(results.map(({ jobId, fields, logs }) => ({ jobId, logs, decide: async () => fields })));
    }
    for (const row of finals) await this.afterFinal(row, false);
    const recorded = new Set(finals.map((row) => row.id));
    return results.map((r) => (recorded.has(r.jobId) ? 'final' : 'skipped'));
  }

  private async recordTogether(trx: Knex.Transaction, byJob: Map<string, ResultToRecord>): Promise<FinalRow[]> {
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
  }

  /**
   * An outcome whose recording failed is tried again later; after MAX_RECORD_FAILURES tries the
   * job ends failed with the reason, and the handler hears why (once). Answers the final row then.
   */
  private async afterFailure(item: FinishItem, err: Error): Promise<FinalRow | null> {
    const failures = await this.store.bumpRecordFailures(item.jobId).catch(() => 0);
    this.log.error({ err, job: item.jobId, failures }, 'recording a job outcome failed');
    if (failures < MAX_RECORD_FAILURES) return null;
    const reason = `Recording the job's outcome failed ${failures} times: ${err.message}`;
    const giveUp: Decide = async (job) => ({ status: 'failed', error: reason, result: null, agentId: job.agent_id, startedAt: job.started_at });
    const inTrx = (withHandler: boolean) =>
      this.db.transaction((trx) => this.finishIn(trx, { ...item, decide: giveUp, logs: withHandler ? item.logs : [] }, false, withHandler));
    return inTrx(true)
      .catch(() => inTrx(false))
      .catch(() => null);
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

  /** After the commit: listeners, then the batch message's clean-up. */
  private async afterFinal(row: FinalRow, retract: boolean): Promise<void> {
    const hear = (listener: () => void) => {
      try {
        listener();
      } catch (err) {
        this.log.warn({ err, job: row.id }, 'a job-final listener failed');
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
  }

  /** The form of a result kept on the job row (see OutcomeOptions.storedResult). */
  private storedResult(kind: JobKind, result: Record<string, unknown> | null): Record<string, unknown> | null {
    const handler = this.handlers.get(kind);
    return result && handler?.storedResult ? handler.storedResult(result) : result;
  }
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
