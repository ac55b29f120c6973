/**
 * The agent's job runner: pulls jobs from its pool through an AgentLink with bounded
 * concurrency, checks the controller's signature, decrypts the device secrets, runs the job
 * kind against the device with a deadline, streams log lines and publishes the signed result
 * (retrying until it is stored), and heartbeats with its load.
 */
import type { Logger } from 'pino';
import type { JWK } from 'jose';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  decryptSecrets,
  importAgentPrivateKey,
  importControllerPublicKey,
  isRecipient,
  signJson,
  signJsonDetached,
  verifyJson,
  type AnyKey,
} from '../../shared/src/jobs/crypto';
import { LinkClosedError, type AgentLink, type DeliveredJob } from '../../shared/src/jobs/link';
import { Semaphore } from '../../shared/src/jobs/limit';
import {
  BackupStoreReply,
  HeartbeatReply,
  JobMessage,
  PROTOCOL_VERSION,
  checkMessage,
  type BackupStoreRequest,
  type AgentEvent,
  type GeneralJwe,
  type HeartbeatHealth,
  type LogLine,
} from '../../shared/src/jobs/messages';
import type { DriverRegistry } from './drivers';
import type { DeviceCredentials, FetchedConfig, SessionLimits } from './drivers/types';
import { makeMask, sessionOpener, targetOf, type DeviceIdentity, type JobContext, type JobResultOf, type LogLevel } from './jobs/context';
import { KIND_RUNNERS, runnerOf } from './jobs';
import { paramsMisfit } from '../../shared/src/jobs/kinds';

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
}

/** What the agent tells the controller it can do: job kinds and transports. */
export function capabilitiesOf(drivers: DriverRegistry): string[] {
  return [...Object.keys(KIND_RUNNERS).map((k) => `job:${k}`), ...[...drivers.keys()].map((t) => `transport:${t}`)];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A result is sent a little before the controller's deadline so it is not taken for lost. */
const DEADLINE_MARGIN_MS = 1_500;
const STARTED_AFTER_MS = 2_000;
const LOG_FLUSH_MS = 2_000;
/** The abort reason once a job has ended: built once, not a new AbortError per job. */
const JOB_ENDED = new Error('the job has ended');

export class AgentRuntime {
  private readonly active = new Set<DeliveredJob>();
  private readonly slots: Semaphore;
  private readonly connectSlots: Semaphore;
  private slotWaiters: (() => void)[] = [];
  private keys!: { sign: AnyKey; decrypt: AnyKey; controller: AnyKey };
  private pendingEvents = 0;
  private readonly opened = new Map<string, { at: number; secrets: Promise<Record<string, unknown>> }>();
  private stopping = false;
  /** False once stopping or revoked: no new jobs are taken. */
  private accepting = true;
  private loops: Promise<void>[] = [];
  private heartbeatMs: number;
  private wakeHeartbeat: (() => void) | null = null;
  readonly capabilities: string[];

  constructor(private readonly o: RuntimeOptions) {
    this.slots = new Semaphore(o.concurrency);
    this.connectSlots = new Semaphore(o.connectConcurrency);
    this.heartbeatMs = o.identity.heartbeat_interval_ms;
    this.capabilities = capabilitiesOf(o.drivers);
  }

  get activeJobs(): number {
    return this.active.size;
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
    this.accepting = false;
    this.slotWaiters.splice(0).forEach((w) => w());
    this.wakeHeartbeat?.();
    const end = Date.now() + graceMs;
    while (this.active.size > 0 && Date.now() < end) await sleep(50);
    await this.o.link.close().catch(() => undefined);
    await Promise.all(this.loops).catch(() => undefined);
  }

  // ---- pulling ------------------------------------------------------------------------------

  private async pullLoop(): Promise<void> {
    while (this.accepting) {
      const free = this.slots.free;
      if (free === 0) {
        await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
        continue;
      }
      try {
        await this.o.link.pull(free, 2_000, (job) => this.accept(job));
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
    void this.slots.acquire().then(async () => {
      this.active.add(delivered);
      try {
        await this.handle(delivered);
      } catch (err) {
        this.o.log.error({ err }, 'job handling failed');
      } finally {
        this.active.delete(delivered);
        this.slots.release();
        const waiters = this.slotWaiters;
        this.slotWaiters = [];
        waiters.forEach((w) => w());
      }
    });
  }

  private async handle(delivered: DeliveredJob): Promise<void> {
    const { identity, log } = this.o;
    let msg: JobMessage;
    try {
      msg = checkMessage(JobMessage, await verifyJson(delivered.token, this.keys.controller, CONTROLLER_SIGN_ALG), 'job message');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'dropped a job message the controller did not sign');
      delivered.term();
      return;
    }
    if (msg.org_id !== identity.org_id || msg.pool !== identity.pool) {
      log.warn({ job: msg.job_id }, 'dropped a job message of another pool');
      delivered.term();
      return;
    }
    const deadline = Date.parse(msg.deadline_at);
    if (deadline <= Date.now()) {
      delivered.ack(); // the controller ends it with the reason
      return;
    }
    const base = { v: PROTOCOL_VERSION, job_id: msg.job_id, attempt: msg.attempt, agent_id: identity.agent_id } as const;
    if (msg.secrets && !isRecipient(msg.secrets, identity.agent_id)) {
      // Sealed before this agent joined the pool: the controller seals it again for everyone.
      log.info({ job: msg.job_id }, 'job secrets not addressed to this agent; handing it back');
      await this.publish({ ...base, type: 'rejected', reason: 'not_recipient' }, `${msg.job_id}:${msg.attempt}:${identity.agent_id}:rejected`);
      delivered.term();
      return;
    }

    const keepAlive = setInterval(() => delivered.working(), Math.max(200, Math.floor(this.o.link.ackWaitMs / 3)));
    const startedAt = new Date();
    const lines: LogLine[] = [];
    let logSeq = 0;
    const flushLogs = () => {
      if (lines.length === 0) return;
      const batch = lines.splice(0, lines.length);
      void this.publish({ ...base, type: 'logs', lines: batch }, `${msg.job_id}:${msg.attempt}:${identity.agent_id}:logs:${++logSeq}`);
    };
    // A job still running after 2 s is reported started; its log lines follow then and every 2 s.
    // (A quicker job, most of them, sets up no log timer: its lines go with the result.)
    let logTimer: NodeJS.Timeout | undefined;
    const startedTimer = setTimeout(() => {
      void this.publish({ ...base, type: 'started', at: startedAt.toISOString() }, `${msg.job_id}:${msg.attempt}:${identity.agent_id}:started`);
      flushLogs();
      logTimer = setInterval(flushLogs, LOG_FLUSH_MS);
    }, STARTED_AFTER_MS);
    try {
      const outcome = await this.execute(msg, deadline, (level, text) =>
        lines.push({ at: new Date().toISOString(), level, text: text.slice(0, 4000) }),
      );
      clearTimeout(startedTimer);
      clearInterval(logTimer);
      await this.publish(
        {
          ...base,
          type: 'result',
          status: outcome.status,
          error: outcome.error,
          result: outcome.result,
          started_at: startedAt.toISOString(),
          finished_at: new Date().toISOString(),
          logs: lines.splice(0, lines.length),
          ...(outcome.hostKey ? { host_key: outcome.hostKey } : {}),
          ...(outcome.gnmiCert ? { gnmi_cert: outcome.gnmiCert } : {}),
        },
        `${msg.job_id}:${msg.attempt}:${identity.agent_id}:result`,
      );
      delivered.ack();
    } finally {
      clearTimeout(startedTimer);
      clearInterval(logTimer);
      clearInterval(keepAlive);
    }
  }

  /** Runs the job kind until it ends or its deadline passes. */
  private async execute(msg: JobMessage, deadline: number, log: (level: LogLevel, text: string) => void): Promise<JobResultOf & DeviceIdentity> {
    const runner = runnerOf(msg.kind);
    if (!runner) return { status: 'failed', error: `This agent does not run '${msg.kind}' jobs (agent version ${this.o.version})`, result: null };
    const misfit = paramsMisfit(msg.kind, msg.params);
    if (misfit)
      return {
        status: 'failed',
        error: `The ${msg.kind} job's params do not fit the job contract (${misfit}; agent version ${this.o.version})`,
        result: null,
      };
    let credentials: DeviceCredentials;
    try {
      const secrets = msg.secrets ? await this.open(msg.secrets) : {};
      credentials = { username: msg.device.username, ...(secrets as Omit<DeviceCredentials, 'username'>) };
    } catch (err) {
      return { status: 'failed', error: `The agent could not decrypt the device credentials: ${(err as Error).message}`, result: null };
    }
    const target = targetOf(msg.device, credentials);
    const mask = makeMask(credentials);
    const seen: DeviceIdentity = {};
    const controller = new AbortController();
    const budget = Math.max(100, deadline - Date.now() - Math.min(DEADLINE_MARGIN_MS, (deadline - Date.now()) / 10));
    const timer = setTimeout(() => controller.abort(), budget);
    const ctx: JobContext = {
      jobId: msg.job_id,
      device: msg.device,
      target,
      params: msg.params as JobContext['params'],
      signal: controller.signal,
      log: (level, text) => log(level, mask(text)),
      mask,
      storeBackup: (backup) => this.storeBackup(msg, backup, deadline),
      open: sessionOpener(
        { drivers: this.o.drivers, connectSlots: this.connectSlots, limits: this.o.limits ?? {} },
        target,
        controller.signal,
        (l, t) => log(l, mask(t)),
        (identity) => {
          // The first SSH-based session's key and the first gNMI TLS certificate are the ones
          // reported (and pinned by the controller).
          seen.hostKey ??= identity.hostKey;
          seen.gnmiCert ??= identity.gnmiCert;
        },
      ),
    };
    let ended = false;
    const deadlinePassed = new Promise<JobResultOf>((resolve) =>
      controller.signal.addEventListener('abort', () => {
        if (ended) return; // the job ended first: nothing to answer for
        // Give the kind a moment to report what it has (sessions are being closed) before answering for it.
        setTimeout(
          () =>
            resolve({
              status: 'failed',
              error: `The job did not finish before its deadline (${Math.round(budget / 1000)} s on the agent)`,
              result: null,
            }),
          1_000,
        );
      }),
    );
    try {
      const outcome = await Promise.race([
        runner(ctx).catch((err): JobResultOf => ({ status: 'failed', error: mask((err as Error).message ?? String(err)), result: null })),
        deadlinePassed,
      ]);
      return { ...outcome, ...seen };
    } finally {
      ended = true;
      clearTimeout(timer);
      controller.abort(JOB_ENDED); // closes any session the kind left open
    }
  }

  /**
   * Has the controller store a deploy job's pre-deployment backup (see JobContext.storeBackup);
   * asks again while no controller answers, until the job's time is nearly up.
   */
  private async storeBackup(msg: JobMessage, backup: FetchedConfig, deadline: number): Promise<FetchedConfig> {
    const agentId = this.o.identity.agent_id;
    const request: BackupStoreRequest = {
      v: PROTOCOL_VERSION,
      type: 'backup_store',
      agent_id: agentId,
      job_id: msg.job_id,
      attempt: msg.attempt,
      at: new Date().toISOString(),
      backup,
      echo: false,
    };
    const token = await signJsonDetached(request, this.keys.sign, AGENT_SIGN_ALG, agentId);
    for (let delay = 100; ; delay = Math.min(delay * 2, 5_000)) {
      const answer = await this.o.link.request(token, 10_000);
      if (answer) {
        const reply = (await verifyJson(answer, this.keys.controller, CONTROLLER_SIGN_ALG)) as BackupStoreReply & { error?: string | null };
        // A refused agent gets a heartbeat reply saying why.
        if ((reply as { type?: unknown }).type !== 'backup_stored') throw new Error(`the controller refused it: ${reply.error ?? 'no reason given'}`);
        const stored = checkMessage(BackupStoreReply, reply, 'backup store reply');
        if (stored.job_id !== msg.job_id) throw new Error('the controller answered for another job');
        if (stored.ok && stored.same) return backup;
        if (stored.ok && stored.backup) return stored.backup;
        if (!stored.retry) throw new Error(`the controller did not store it: ${stored.error ?? 'no reason given'}`);
      }
      if (Date.now() + delay > deadline - DEADLINE_MARGIN_MS) throw new Error('no controller stored it in time; nothing was changed');
      await sleep(delay);
    }
  }

  /**
   * Decrypts job secrets. Jobs of devices sharing a connection profile carry the same JWE, so
   * one key agreement serves them all (kept a minute, in memory only).
   */
  private open(jwe: GeneralJwe): Promise<Record<string, unknown>> {
    const key = `${jwe.ciphertext.length}:${jwe.tag}:${jwe.iv}`;
    const now = Date.now();
    const hit = this.opened.get(key);
    if (hit && now - hit.at < 60_000) return hit.secrets;
    if (this.opened.size > 500) this.opened.clear();
    const secrets = decryptSecrets(jwe, this.o.identity.agent_id, this.keys.decrypt);
    this.opened.set(key, { at: now, secrets });
    secrets.catch(() => this.opened.delete(key));
    return secrets;
  }

  /**
   * Signs and publishes an event, retrying (the link deduplicates by id) until it is stored.
   * Events are signed in the detached form: a result's config and transcript travel as JSON,
   * not base64url (see shared/src/jobs/crypto.ts).
   */
  private async publish(event: AgentEvent, id: string): Promise<void> {
    const token = await signJsonDetached(event, this.keys.sign, AGENT_SIGN_ALG, this.o.identity.agent_id);
    this.pendingEvents += 1;
    try {
      for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
        try {
          await this.o.link.publish(token, id);
          return;
        } catch (err) {
          if (this.stopping && this.active.size === 0) throw err;
          this.o.log.warn({ err: (err as Error).message, event: event.type, job: event.job_id }, 'publishing to the controller failed; retrying');
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
          active_jobs: this.active.size,
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
              this.accepting = false;
              this.slotWaiters.splice(0).forEach((w) => w());
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
