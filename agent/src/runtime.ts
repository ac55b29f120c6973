/**
 * The agent's job runner: pulls job batches from its pool through an AgentLink, checks the
 * controller's signature once per batch, decrypts the batch's device secrets once, runs each job
 * with bounded concurrency (against its device: job-executor.ts), streams log lines, and sends
 * the signed results a few at a time (retrying until they are stored). A batch is acked once
 * every one of its jobs has a stored result; until then it is kept alive. It heartbeats with its load.
 */
import type { Logger } from 'pino';
import type { JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  decryptSecrets,
  importAgentPrivateKey,
  importControllerPublicKey,
  isRecipient,
  signJson,
  signJsonDetached,
  signTextDetached,
  verifyJson,
  type AnyKey,
} from '../../shared/src/jobs/crypto';
import { LinkClosedError, type AgentLink, type DeliveredJob } from '../../shared/src/jobs/link';
import { Semaphore } from '../../shared/src/jobs/limit';
import {
  ALLOWED_NETWORKS_GUARD,
  BatchSecrets,
  HeartbeatReply,
  JobBatch,
  OpenJobsReply,
  PROTOCOL_VERSION,
  checkMessage,
  type AgentEvent,
  type BatchJob,
  type HeartbeatHealth,
  type LogLine,
  type OpenJobsRequest,
  type ProgressEvent,
} from '../../shared/src/jobs/messages';
import { ProgressSender, STARTED_AFTER_MS } from './progress';
import { ResultsSender, resultsEventJson } from './results';
import { BackupStore } from './backup-store';
import type { DriverRegistry } from './drivers';
import type { SessionLimits } from './drivers/types';
import { KIND_RUNNERS } from './jobs';
import { JobExecutor } from './job-executor';
import { TakenJobs } from './taken-jobs';

/** The part of the agent's identity the runtime needs. */
export interface RuntimeIdentity {
  agent_id: string;
  org_id: string;
  pool: string;
  private_jwk: JWK;
  controller_key: JWK;
  heartbeat_interval_ms: number;
}

export interface RuntimeOptions {
  identity: RuntimeIdentity;
  link: AgentLink;
  drivers: DriverRegistry;
  /** Jobs (device sessions) at once. */
  concurrency: number;
  /** New connection set-ups at once. */
  connectConcurrency: number;
  version: string;
  log: Logger;
  /** Session limits handed to the drivers. */
  limits?: Partial<SessionLimits>;
  /** The agent's view of NATS and the controller, sent with each heartbeat. */
  health?: () => HeartbeatHealth;
  /** Called once when the controller answers that this agent is revoked or unknown. */
  onRevoked?: (reason: string) => void;
  /** Hears each job taken and each job whose result is stored (metrics). */
  observer?: JobObserver;
  /** Where the jobs taken are kept across restarts (TakenJobs); only in memory without. */
  takenJobsFile?: string;
}

export interface JobObserver {
  jobReceived(kind: string): void;
  jobFinished(kind: string, status: string, seconds: number): void;
}

/** What the agent tells the controller it can do: job kinds and transports. */
export function capabilitiesOf(drivers: DriverRegistry): string[] {
  return [...Object.keys(KIND_RUNNERS).map((k) => `job:${k}`), ...[...drivers.keys()].map((t) => `transport:${t}`), ALLOWED_NETWORKS_GUARD];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class AgentRuntime {
  /** Batches taken and not yet settled. */
  private readonly batches = new Set<DeliveredJob>();
  private readonly slots: Semaphore;
  /** Runs each job against its device (credentials, sessions, deadline). */
  private readonly executor: JobExecutor;
  /** Jobs taken and waiting for a slot, and batches taken and not yet opened (see pullLoop). */
  private queued = 0;
  private opening = 0;
  private running = 0;
  private pullWaiters: (() => void)[] = [];
  private keys!: { sign: AnyKey; decrypt: AnyKey; controller: AnyKey };
  private pendingEvents = 0;
  private readonly results = new ResultsSender((results) => this.publishResults(results));
  private readonly progress = new ProgressSender((progress) => void this.publishProgress(progress));
  private stopping = false;
  /** Aborted once stopping or revoked: no new jobs are taken, and the jobs waiting for a slot are handed back. */
  private readonly notAccepting = new AbortController();
  /** The next batch is pulled while fewer jobs than this wait for a slot (see pullLoop). */
  private readonly lowWater: number;
  private loops: Promise<void>[] = [];
  private heartbeatMs: number;
  private wakeHeartbeat: (() => void) | null = null;
  /** Each job taken, at its latest attempt, until its deadline: a batch sent again does not run it twice. */
  private readonly taken: TakenJobs;
  /** Jobs refused because this agent had taken them at that attempt (or a later one) before. */
  replaysRefused = 0;
  readonly capabilities: string[];

  constructor(private readonly o: RuntimeOptions) {
    this.slots = new Semaphore(o.concurrency);
    // Each job waiting for a slot listens on it until granted (a batch holds up to 50 jobs):
    // without this, Node warns of a listener leak that is none.
    setMaxListeners(0, this.notAccepting.signal);
    this.lowWater = Math.max(1, Math.ceil(o.concurrency / 4));
    this.heartbeatMs = o.identity.heartbeat_interval_ms;
    this.capabilities = capabilitiesOf(o.drivers);
    this.taken = new TakenJobs({ file: o.takenJobsFile });
    const agentId = o.identity.agent_id;
    const backups = new BackupStore({
      agentId,
      link: o.link,
      sign: (request) => signJsonDetached(request, this.keys.sign, AGENT_SIGN_ALG, agentId),
      verify: (token) => verifyJson(token, this.keys.controller, CONTROLLER_SIGN_ALG),
    });
    this.executor = new JobExecutor({
      drivers: o.drivers,
      connectSlots: new Semaphore(o.connectConcurrency),
      limits: o.limits ?? {},
      backups,
      version: o.version,
    });
  }

  get activeJobs(): number {
    return this.running;
  }

  async start(): Promise<void> {
    const id = this.o.identity;
    const { sign, decrypt } = await importAgentPrivateKey(id.private_jwk);
    this.keys = { sign, decrypt, controller: importControllerPublicKey(id.controller_key) };
    this.loops = [this.pullLoop(), this.heartbeatLoop()];
  }

  /** Stops taking jobs, lets running ones finish (up to graceMs), then closes the link. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.stopAccepting();
    this.wakeHeartbeat?.();
    const end = Date.now() + graceMs;
    while (this.batches.size > 0 && Date.now() < end) await sleep(50);
    await this.o.link.close().catch(() => undefined);
    await Promise.all(this.loops).catch(() => undefined);
  }

  // ---- pulling ------------------------------------------------------------------------------

  private get accepting(): boolean {
    return !this.notAccepting.signal.aborted;
  }

  private stopAccepting(): void {
    this.notAccepting.abort();
    this.wakePull();
  }

  private wakePull(): void {
    this.pullWaiters.splice(0).forEach((w) => w());
  }

  /**
   * Pulls one batch at a time, as soon as fewer than `lowWater` jobs wait for a slot: the next
   * batch arrives while the last jobs of the current one still run, so no slot idles between
   * batches, yet an agent holds at most its concurrency, a few waiting jobs and one batch, and
   * the pool's other agents get the rest.
   */
  private async pullLoop(): Promise<void> {
    while (this.accepting) {
      if (this.queued >= this.lowWater || this.opening > 0) {
        await new Promise<void>((resolve) => this.pullWaiters.push(resolve));
        continue;
      }
      try {
        await this.o.link.pull(1, 2_000, (batch) => this.accept(batch));
      } catch (err) {
        if (!this.accepting) break;
        if (err instanceof LinkClosedError) {
          // No job can come through this link again (the in-process hub closed): stop pulling.
          this.o.log.info({ err: err.message }, 'job link closed; no longer pulling jobs');
          break;
        }
        this.o.log.warn({ err: (err as Error).message }, 'pulling jobs failed; retrying');
        await sleep(500);
      }
    }
  }

  private accept(delivered: DeliveredJob): void {
    if (!this.accepting) {
      delivered.nak(); // for another agent of the pool
      return;
    }
    this.batches.add(delivered);
    void this.handleBatch(delivered)
      .catch((err) => this.o.log.error({ err }, 'job batch handling failed'))
      .finally(() => {
        this.batches.delete(delivered);
        this.wakePull();
      });
  }

  /** The batch, checked: signed by the controller, for this agent's pool, with secrets it can read. Settles it otherwise. */
  private async checkedBatch(delivered: DeliveredJob): Promise<JobBatch | null> {
    const { identity, log } = this.o;
    let batch: JobBatch;
    try {
      batch = checkMessage(JobBatch, await verifyJson(delivered.token, this.keys.controller, CONTROLLER_SIGN_ALG, 'any'), 'job batch');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'dropped a job batch the controller did not sign');
      delivered.term();
      return null;
    }
    if (batch.org_id !== identity.org_id || batch.pool !== identity.pool) {
      log.warn({ batch: batch.batch_id }, 'dropped a job batch of another pool');
      delivered.term();
      return null;
    }
    if (!isRecipient(batch.secrets, identity.agent_id)) {
      // Sealed before this agent joined the pool: the controller seals its jobs again for everyone.
      log.info({ batch: batch.batch_id }, 'job secrets not addressed to this agent; handing the jobs back');
      const jobs = batch.jobs.map((j) => ({ job_id: j.job_id, attempt: j.attempt }));
      await this.publish({ v: PROTOCOL_VERSION, type: 'rejected', agent_id: identity.agent_id, jobs, reason: 'not_recipient' }, randomUUID());
      delivered.term();
      return null;
    }
    return batch;
  }

  private async handleBatch(delivered: DeliveredJob): Promise<void> {
    this.opening += 1;
    let opened = false;
    const open = () => {
      if (opened) return;
      opened = true;
      this.opening -= 1;
      this.wakePull();
    };
    try {
      await this.runBatch(delivered, open);
    } finally {
      open();
    }
  }

  /** Runs the open jobs of a batch; calls `opened` once they are queued for slots. */
  private async runBatch(delivered: DeliveredJob, opened: () => void): Promise<void> {
    const batch = await this.checkedBatch(delivered);
    if (!batch) return;
    // Kept alive until every job of it has a stored result; an agent that dies lets it go to another.
    const keepAlive = setInterval(() => delivered.working(), Math.max(200, Math.floor(this.o.link.ackWaitMs / 3)));
    try {
      const due = batch.jobs.filter((j) => Date.parse(j.deadline_at) > Date.now()); // the controller ends the others
      let jobs = this.untaken(batch, due);
      if (jobs.length === 0 && due.length > 0) {
        delivered.term(); // nothing of it is this agent's to run (again)
        return;
      }
      // Delivered before: the jobs whose result was recorded meanwhile are not run again.
      if (delivered.redeliveries > 0 && jobs.length > 0) {
        const open = await this.stillOpen(jobs);
        jobs = jobs.filter((j) => open.has(j.job_id));
      }
      this.queued += jobs.length;
      opened();
      let secrets: Promise<BatchSecrets> | null = null;
      const secretsOf = () => (secrets ??= this.openSecrets(batch));
      const stored = await Promise.allSettled(jobs.map((job) => this.runQueued(job, secretsOf)));
      const failed = stored.find((r) => r.status === 'rejected');
      // A result that could not be stored (the agent is stopping): the batch goes to another agent.
      if (failed) throw (failed as PromiseRejectedResult).reason;
      // Jobs left unstarted because the agent is stopping: handed back now, and the next agent
      // runs only those (it asks which are still open).
      if (stored.some((r) => r.status === 'fulfilled' && r.value === 'handed_back')) delivered.nak();
      else delivered.ack();
    } finally {
      clearInterval(keepAlive);
    }
  }

  /**
   * Waits for a slot, runs the job, resolves once its result is stored; or, when the agent
   * stopped taking jobs meanwhile, answers 'handed_back' without running it.
   */
  private async runQueued(job: BatchJob, secretsOf: () => Promise<BatchSecrets>): Promise<'stored' | 'skipped' | 'handed_back'> {
    let queued = true;
    try {
      // Stopping: a job still waiting for a slot is handed back at once, not when a slot frees.
      if (!(await this.slots.acquire(this.notAccepting.signal))) return 'handed_back';
      queued = false;
      this.queued -= 1;
      this.wakePull();
      if (!this.accepting || Date.parse(job.deadline_at) <= Date.now()) {
        this.slots.release();
        // Past its deadline (it waited too long): the controller ends it with the reason.
        return this.accepting ? 'skipped' : 'handed_back';
      }
      this.running += 1;
      let ran: { stored: Promise<void> };
      try {
        ran = await this.runJob(job, secretsOf);
      } finally {
        this.running -= 1;
        this.slots.release();
        this.wakePull();
      }
      // The last job of the moment: nothing else will join its results soon, so they go now.
      if (this.running === 0 && this.queued === 0) this.results.flush();
      await ran.stored;
      return 'stored';
    } finally {
      if (queued) this.queued -= 1;
    }
  }

  /**
   * The jobs of a batch this agent has not taken before at their attempt (or a later one), now
   * noted as taken. The others are copies: a signed batch sent again on the jobs subject (which,
   * without per-agent NATS accounts, anybody may publish on) ran them again. The controller sends
   * a job again only at a new attempt, which runs.
   */
  private untaken(batch: JobBatch, jobs: BatchJob[]): BatchJob[] {
    const copies = this.taken.takeAll(jobs);
    if (copies.length === 0) return jobs;
    this.replaysRefused += copies.length;
    this.o.log.warn(
      { batch: batch.batch_id, jobs: copies.map((j) => ({ job_id: j.job_id, attempt: j.attempt })) },
      'refused jobs this agent took before at the same attempt (a job batch sent again)',
    );
    return jobs.filter((j) => !copies.includes(j));
  }

  /**
   * Asks the controllers which jobs of a redelivered batch are still open; asks again while none
   * answers, until every job's deadline has passed.
   */
  private async stillOpen(jobs: BatchJob[]): Promise<Set<string>> {
    const agentId = this.o.identity.agent_id;
    const request: OpenJobsRequest = {
      v: PROTOCOL_VERSION,
      type: 'open_jobs',
      agent_id: agentId,
      at: new Date().toISOString(),
      jobs: jobs.map((j) => ({ job_id: j.job_id, attempt: j.attempt })),
    };
    const token = await signJsonDetached(request, this.keys.sign, AGENT_SIGN_ALG, agentId);
    const last = Math.max(...jobs.map((j) => Date.parse(j.deadline_at)));
    for (let delay = 100; ; delay = Math.min(delay * 2, 5_000)) {
      const answer = await this.o.link.request(token, 10_000);
      if (answer) {
        const reply = (await verifyJson(answer, this.keys.controller, CONTROLLER_SIGN_ALG)) as { type?: unknown; error?: string | null };
        // A refused agent gets a heartbeat reply saying why.
        if (reply.type !== 'open_jobs') throw new Error(`the controller refused to say which jobs are open: ${reply.error ?? 'no reason given'}`);
        const open = checkMessage(OpenJobsReply, reply, 'open jobs reply');
        if (!open.ok) throw new Error(`the controller refused to say which jobs are open: ${open.error ?? 'no reason given'}`);
        this.o.log.info({ jobs: jobs.length, open: open.open.length }, 'a job batch came again; running its open jobs only');
        return new Set(open.open);
      }
      if (Date.now() + delay > last || this.stopping) return new Set();
      await sleep(delay);
    }
  }

  /** The batch's device secrets, decrypted once for all its jobs. */
  private async openSecrets(batch: JobBatch): Promise<BatchSecrets> {
    return checkMessage(BatchSecrets, await decryptSecrets(batch.secrets, this.o.identity.agent_id, this.keys.decrypt), 'job batch secrets');
  }

  /**
   * Runs one job: reports it started and streams its log lines when it takes a while, and hands
   * its result to the results sender. Answers once the job has ended (its slot is free again),
   * with a promise of its result being stored.
   */
  private async runJob(job: BatchJob, secretsOf: () => Promise<BatchSecrets>): Promise<{ stored: Promise<void> }> {
    this.o.observer?.jobReceived(job.kind);
    const ref = { job_id: job.job_id, attempt: job.attempt };
    const startedAt = new Date();
    const lines: LogLine[] = [];
    // A job still running after 2 s is reported started, its lines so far with it and the later
    // ones as they come, in progress events shared with the agent's other long jobs. (A quicker
    // job, most of them, notes nothing: its lines go with the result.)
    let long = false;
    const startedTimer = setTimeout(() => {
      long = true;
      this.progress.started(ref, startedAt.toISOString(), lines.splice(0, lines.length));
    }, STARTED_AFTER_MS);
    try {
      const outcome = await this.executor.execute(job, secretsOf, (level, text) => {
        const line: LogLine = { at: new Date().toISOString(), level, text: text.slice(0, 4000) };
        if (long) this.progress.logs(ref, [line]);
        else lines.push(line);
      });
      clearTimeout(startedTimer);
      const stored = this.results.add({
        ...ref,
        status: outcome.status,
        error: outcome.error,
        result: outcome.result,
        started_at: startedAt.toISOString(),
        finished_at: new Date().toISOString(),
        // Lines not sent yet go with the result, recorded with its outcome.
        logs: long ? this.progress.take(ref) : lines,
        host_key: outcome.hostKey ?? null,
        gnmi_cert: outcome.gnmiCert ?? null,
      });
      return { stored: stored.then(() => this.o.observer?.jobFinished(job.kind, outcome.status, (Date.now() - startedAt.getTime()) / 1000)) };
    } finally {
      clearTimeout(startedTimer);
    }
  }

  /**
   * Signs and publishes an event, retrying (the link deduplicates by id) until it is stored.
   * Events are signed in the detached form: a result's config and transcript travel as JSON,
   * not base64url (see shared/src/jobs/crypto.ts).
   */
  private async publish(event: AgentEvent, id: string): Promise<void> {
    await this.publishToken(await signJsonDetached(event, this.keys.sign, AGENT_SIGN_ALG, this.o.identity.agent_id), id, event.type);
  }

  /** One `progress` event: long jobs' start notices and log lines (see ProgressSender). */
  private async publishProgress(progress: Pick<ProgressEvent, 'started' | 'logs'>): Promise<void> {
    const event: ProgressEvent = { v: PROTOCOL_VERSION, type: 'progress', agent_id: this.o.identity.agent_id, ...progress };
    await this.publish(event, randomUUID());
  }

  /** One `results` event of results already serialized. */
  private async publishResults(results: string[]): Promise<void> {
    const agentId = this.o.identity.agent_id;
    await this.publishToken(signTextDetached(resultsEventJson(agentId, results), this.keys.sign, AGENT_SIGN_ALG, agentId), randomUUID(), 'results');
  }

  private async publishToken(token: string, id: string, type: string): Promise<void> {
    this.pendingEvents += 1;
    try {
      for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
        try {
          await this.o.link.publish(token, id);
          return;
        } catch (err) {
          if (this.stopping && this.batches.size === 0) throw err;
          this.o.log.warn({ err: (err as Error).message, event: type }, 'publishing to the controller failed; retrying');
          await sleep(delay);
        }
      }
    } finally {
      this.pendingEvents -= 1;
    }
  }

  // ---- heartbeats ---------------------------------------------------------------------------

  private async heartbeatLoop(): Promise<void> {
    const { identity, log } = this.o;
    while (!this.stopping) {
      try {
        const beat = {
          v: PROTOCOL_VERSION,
          type: 'heartbeat' as const,
          agent_id: identity.agent_id,
          at: new Date().toISOString(),
          version: this.o.version,
          capabilities: this.capabilities,
          active_jobs: this.running,
          max_jobs: this.o.concurrency,
          pending_events: this.pendingEvents,
          ...(this.o.health ? { health: this.o.health() } : {}),
        };
        const answer = await this.o.link.request(await signJson(beat, this.keys.sign, AGENT_SIGN_ALG, identity.agent_id), 5_000);
        if (answer) {
          const reply = checkMessage(HeartbeatReply, await verifyJson(answer, this.keys.controller, CONTROLLER_SIGN_ALG), 'heartbeat reply');
          if (reply.agent_id === identity.agent_id) {
            if (reply.revoked) {
              // Take no more jobs: they would only be refused.
              log.error({ reason: reply.error }, 'the controller refused this agent');
              this.stopAccepting();
              this.o.onRevoked?.(reply.error ?? 'revoked');
              return;
            }
            if (!reply.ok) log.warn({ reason: reply.error }, 'heartbeat refused');
            this.heartbeatMs = reply.heartbeat_interval_ms;
          }
        }
      } catch (err) {
        if (this.stopping) break;
        log.warn({ err: (err as Error).message }, 'heartbeat failed');
      }
      // stop() wakes a wait under way; one it came during (a beat in flight) is not begun.
      if (this.stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.heartbeatMs);
        this.wakeHeartbeat = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}
