import type { Knex } from 'knex';

/**
 * The contract between the job machinery (controller/src/jobs, agents, NATS) and the areas
 * that use it (configs, snapshots, deployments, discovery). Areas never talk to NATS or
 * agents directly: they submit durable jobs and record outcomes in handlers.
 */

export type JobKind = 'backup' | 'test_credential' | 'deploy' | 'rollback' | 'poll' | 'dry_run';

export interface JobSpec {
  orgId: string;
  kind: JobKind;
  deviceId: string;
  /** Kind-specific input, e.g. backup: { methods: ['cli'] }. Never holds secrets: the job
   * service adds the device's credentials, encrypted to the agents of the device's pool. */
  params: Record<string, unknown>;
  /** Whole-job deadline from submission; the job fails with a reason naming the site after it. */
  deadlineMs?: number;
  /** The snapshot, deployment or poll run this job belongs to, for the outcome handler. */
  groupId?: string | null;
}

export interface JobOutcome {
  jobId: string;
  kind: JobKind;
  orgId: string;
  deviceId: string;
  groupId: string | null;
  status: 'succeeded' | 'failed';
  /** Why it failed, in words an operator can act on (timeout, auth, no agent online in site X…). */
  error: string | null;
  /** Kind-specific output, e.g. backup: { results: [{ method, config?: FetchedConfig, error? }], transcript }. */
  result: Record<string, unknown> | null;
  agentId: string | null;
  startedAt: Date | null;
  finishedAt: Date;
}

export type OutcomeHandler = (outcome: JobOutcome, trx: Knex.Transaction) => Promise<void>;

export interface OutcomeOptions {
  /**
   * What of the result stays on the job row once the handler has stored it where it belongs
   * (default: all of it). A backup keeps a summary, not a second copy of the config text.
   */
  storedResult?(result: Record<string, unknown>): Record<string, unknown>;
  /**
   * Records many outcomes of the kind with a few set-based statements (the fast path for
   * bursts of results). It must do exactly what `handler` does for each outcome. When it
   * throws, the engine rolls the batch back and records each outcome alone with `handler`,
   * so one bad outcome never blocks the others.
   */
  handleMany?(outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void>;
}

/** The agent a request came from (its signature checked out). */
export interface AgentRef {
  id: string;
  org_id: string;
}

/** An agent request's answer: `agent` signed `payload` (checked against the agent's key, not yet against a schema). */
export type RequestHandler = (agent: AgentRef, payload: unknown) => Promise<Record<string, unknown>>;

export interface JobService {
  /** Stores the jobs durably and dispatches them to their pools; returns their ids in order. */
  submit(specs: JobSpec[]): Promise<string[]>;
  /**
   * Registers the recorder for one kind. It runs exactly once per job, inside the same
   * transaction that marks the job final, so a result is never lost nor recorded twice.
   */
  onOutcome(kind: JobKind, handler: OutcomeHandler, options?: OutcomeOptions): void;
  /**
   * Hears each outcome of `kind` once the transaction that recorded it has committed, on the
   * replica that recorded it: follow-up work that must not hold locks in the recorder's
   * transaction (a crash in between is for the area's own sweep to repair).
   */
  afterOutcome(kind: JobKind, listener: (outcome: JobOutcome) => void): void;
  /**
   * Answers agent requests of one message type (beyond heartbeats) from an agent whose signature
   * checked out; the handler's answer is signed and sent back.
   */
  onRequest(type: string, handler: RequestHandler): void;
  /** For request-bound waits (a single pull): resolves when every job is final. */
  wait(jobIds: string[], timeoutMs: number): Promise<JobOutcome[]>;
}

