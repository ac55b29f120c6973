/**
 * One job against its device: the kind's runner, given the job's credentials (from its batch's
 * secrets), a log that masks them, sessions through the agent's drivers and connection slots,
 * and the job's deadline. Taking jobs, reporting progress and sending results are the runtime's
 * (runtime.ts); this is what happens in between.
 */
import type { BatchJob, BatchSecrets } from '../../shared/src/jobs/messages';
import type { Semaphore } from '../../shared/src/jobs/limit';
import { paramsMisfit } from '../../shared/src/jobs/kinds';
import type { BackupStore } from './backup-store';
import type { DriverRegistry } from './drivers';
import type { DeviceCredentials, DeviceTarget, SessionLimits } from './drivers/types';
import { makeMask, sessionOpener, targetOf, type DeviceIdentity, type JobContext, type JobResultOf, type LogLevel } from './jobs/context';
import { runnerOf } from './jobs';
import { DEADLINE_MARGIN_MS, JOB_ENDED, deadlineFailure, jobBudget } from './job-deadline';

export interface JobExecutorDeps {
  drivers: DriverRegistry;
  /** New connection set-ups at once, shared by every job of the agent. */
  connectSlots: Semaphore;
  /** Session limits handed to the drivers. */
  limits: Partial<SessionLimits>;
  /** Stores a deploy job's pre-deployment backup with the controller before anything changes. */
  backups: BackupStore;
  /** The agent's version, named when it cannot run a job. */
  version: string;
}

/** A job that failed before or while it ran, saying why. */
const failure = (error: string): JobResultOf => ({ status: 'failed', error, result: null });

/** The job's device credentials: its set among the batch's decrypted secrets, with the device's username. */
function credentialsOf(msg: BatchJob, batchSecrets: BatchSecrets): DeviceCredentials {
  const { credentials: sets, of } = batchSecrets;
  const secrets = sets[of[msg.job_id]];
  if (!secrets) throw new Error('the job batch holds none for this job');
  return { username: msg.device.username, ...(secrets as Omit<DeviceCredentials, 'username'>) };
}

export class JobExecutor {
  constructor(private readonly o: JobExecutorDeps) {}

  /**
   * Runs the job kind until it ends or its deadline passes; answers its outcome with the device's
   * identity as its sessions saw it. `log` gets the job's lines with its credentials masked.
   */
  async execute(
    msg: BatchJob,
    secretsOf: () => Promise<BatchSecrets>,
    log: (level: LogLevel, text: string) => void,
  ): Promise<JobResultOf & DeviceIdentity> {
    const deadline = Date.parse(msg.deadline_at);
    const runner = runnerOf(msg.kind);
    if (!runner) return failure(`This agent does not run '${msg.kind}' jobs (agent version ${this.o.version})`);
    const misfit = paramsMisfit(msg.kind, msg.params);
    if (misfit) return failure(`The ${msg.kind} job's params do not fit the job contract (${misfit}; agent version ${this.o.version})`);
    let credentials: DeviceCredentials;
    try {
      credentials = credentialsOf(msg, await secretsOf());
    } catch (err) {
      return failure(`The agent could not decrypt the device credentials: ${(err as Error).message}`);
    }
    const target = targetOf(msg.device, credentials);
    // Deployment jobs also name the secret variable values their changes hold (DeployParams.secrets).
    const mask = makeMask(credentials, (msg.params as { secrets?: string[] }).secrets);
    const seen: DeviceIdentity = {};
    const controller = new AbortController();
    const budget = jobBudget(deadline);
    const timer = setTimeout(() => controller.abort(), budget);
    const ctx = this.context(msg, deadline, target, controller.signal, (level, text) => log(level, mask(text)), mask, seen);
    const deadlinePassed = deadlineFailure(controller.signal, budget);
    try {
      const outcome = await Promise.race([
        runner(ctx).catch((err): JobResultOf => failure(mask((err as Error).message ?? String(err)))),
        deadlinePassed,
      ]);
      return { ...outcome, ...seen };
    } finally {
      clearTimeout(timer);
      controller.abort(JOB_ENDED); // closes any session the kind left open
    }
  }

  /** What the kind's runner gets: the job, its signal, its masked log, and sessions to its device that note the device's identity in `seen`. */
  private context(
    msg: BatchJob,
    deadline: number,
    target: DeviceTarget,
    signal: AbortSignal,
    log: JobContext['log'],
    mask: (text: string) => string,
    seen: DeviceIdentity,
  ): JobContext {
    return {
      jobId: msg.job_id,
      device: msg.device,
      target,
      params: msg.params as JobContext['params'],
      signal,
      log,
      mask,
      storeBackup: (backup) => this.o.backups.store(msg, backup, deadline - DEADLINE_MARGIN_MS),
      open: sessionOpener({ drivers: this.o.drivers, connectSlots: this.o.connectSlots, limits: this.o.limits }, target, signal, log, (identity) => {
        // The first SSH-based session's key and the first gNMI TLS certificate are the ones
        // reported (and pinned by the controller).
        seen.hostKey ??= identity.hostKey;
        seen.gnmiCert ??= identity.gnmiCert;
      }),
    };
  }
}
