import type { Knex } from 'knex';
import type { JobKind, JobParams, JobResult } from '../../../shared/src/jobs/kinds';
import type { LogLine } from '../../../shared/src/jobs/messages';
import type { PublicJwk } from '../../../shared/src/jobs/crypto';

export type { JobKind } from '../../../shared/src/jobs/kinds';

/**
 * The contract between the job machinery (controller/src/jobs, agents, NATS) and the areas
 * that use it (configs, snapshots, deployments, discovery). Areas never talk to NATS or
 * agents directly: they submit durable jobs and record outcomes in handlers.
 */

interface SpecOf<K extends JobKind> {
  orgId: string;
  kind: K;
  deviceId: string;
  /** The kind's params (shared/src/jobs/kinds.ts). Never holds secrets: the job service adds
   * the device's credentials, encrypted to the agents of the device's pool. */
  params: JobParams<K>;
  /** Whole-job deadline from submission; the job fails with a reason naming the site after it. */
  deadlineMs?: number;
  /** The snapshot, deployment or poll run this job belongs to, for the outcome handler. */
  groupId?: string | null;
}

/** A job to submit: one of the kinds with that kind's params. */
export type JobSpec<K extends JobKind = JobKind> = { [k in K]: SpecOf<k> }[K];

interface OutcomeOf<K extends JobKind> {
  jobId: string;
  kind: K;
  orgId: string;
  deviceId: string;
  groupId: string | null;
  status: 'succeeded' | 'failed';
  /** Why it failed, in words an operator can act on (timeout, auth, no agent online in site X…). */
  error: string | null;
  /**
   * The kind's result, checked against its schema when it arrived (one that did not fit failed
   * the job, result null). An outcome read back from the job row (`wait`, a late recording)
   * carries what `storedResult` kept of it instead.
   */
  result: JobResult<K> | null;
  agentId: string | null;
  startedAt: Date | null;
  finishedAt: Date;
  /** The log lines the agent sent with its result, handed only to a recorder with `keepsLogs`. */
  logs?: LogLine[];
}

/** A final job: one of the kinds with that kind's result. */
export type JobOutcome<K extends JobKind = JobKind> = { [k in K]: OutcomeOf<k> }[K];

export type OutcomeHandler<K extends JobKind = JobKind> = (outcome: JobOutcome<K>, trx: Knex.Transaction) => Promise<void>;

export interface OutcomeOptions<K extends JobKind = JobKind> {
  /**
   * What of the result stays on the job row once the handler has stored it where it belongs
   * (default: all of it). A backup keeps a summary, not a second copy of the config text.
   */
  storedResult?(result: JobResult<K>): Record<string, unknown>;
  /**
   * Records many outcomes of the kind with a few set-based statements (the fast path for
   * bursts of results). It must do exactly what `handler` does for each outcome. When it
   * throws, the engine rolls the batch back and records each outcome alone with `handler`,
   * so one bad outcome never blocks the others.
   */
  handleMany?(outcomes: JobOutcome<K>[], trx: Knex.Transaction): Promise<void>;
  /**
   * The recorder stores the log lines that came with each result (outcome.logs) where its area
   * reads them, and the engine keeps none of them in job_logs: a deployment's lines are read from
   * its own log, and writing them twice cost as much as the rest of recording a device.
   */
  keepsLogs?: boolean;
}

/** The agent a request came from (its signature checked out). */
export interface AgentRef {
  id: string;
  org_id: string;
}

/** The agent a request came from, with the key its signature was checked against. */
export interface RequestSigner extends AgentRef {
  public_key: PublicJwk;
  /** Its site (null: the default pool): what it may ask about is its pool's. */
  site_id: string | null;
}

/** An agent request's answer: `agent` signed `payload` (checked against the agent's key, not yet against a schema). */
export type RequestHandler = (agent: RequestSigner, payload: unknown) => Promise<Record<string, unknown>>;

export interface RequestOptions {
  /**
   * The handler's own statement checks that the signer is still what the request was verified
   * against (not revoked, same key), and throws SignerChanged when it is not: the request may then
   * be verified against the agent row last read instead of a fresh one (see AgentRequests).
   */
  checksSigner?: boolean;
}

/** Thrown by a `checksSigner` handler whose statement found the signer revoked or with another key since it was read. */
export class SignerChanged extends Error {
  constructor(agentId: string) {
    super(`agent ${agentId} was revoked or given another key while its request was answered`);
    this.name = 'SignerChanged';
  }
}

export interface JobService {
  /**
   * Stores the jobs durably and dispatches them to their pools; returns their ids in order. With
   * `trx`, the jobs are stored in the caller's transaction and dispatched once it commits.
   */
  submit<K extends JobKind>(specs: JobSpec<K>[], trx?: Knex.Transaction): Promise<string[]>;
  /**
   * Registers the recorder for one kind. It runs exactly once per job, inside the same
   * transaction that marks the job final, so a result is never lost nor recorded twice.
   */
  onOutcome<K extends JobKind>(kind: K, handler: OutcomeHandler<K>, options?: OutcomeOptions<K>): void;
  /**
   * Hears each outcome of `kind` once the transaction that recorded it has committed, on the
   * replica that recorded it: follow-up work that must not hold locks in the recorder's
   * transaction (a crash in between is for the area's own sweep to repair).
   */
  afterOutcome<K extends JobKind>(kind: K, listener: (outcome: JobOutcome<K>) => void): void;
  /**
   * Answers agent requests of one message type (beyond heartbeats) from an agent whose signature
   * checked out; the handler's answer is signed and sent back.
   */
  onRequest(type: string, handler: RequestHandler, options?: RequestOptions): void;
  /** For request-bound waits (a single pull): resolves when every job is final. */
  wait(jobIds: string[], timeoutMs: number): Promise<JobOutcome[]>;
}
