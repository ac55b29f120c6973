import type { Knex } from 'knex';
import type { FastifyBaseLogger } from 'fastify';
import { plural } from '../../../shared/src/words';
import type { BackupStoreReply } from '../../../shared/src/jobs/messages';
import { outcomeOf } from '../jobs/store';
import type { JobOutcome, JobService, RequestSigner } from '../jobs/types';
import { PreDeploymentBackups } from './backup-store';
import { claimDevices, latestJobs, type DeviceUpdate } from './claim';
import { recordDeviceOutcomes } from './device-outcomes';
import { settleDeployment } from './settle';
import { NEXT, QUEUED, RUNNING, type DeploymentStore, type LockedDeployment, type LogLine } from './store';

declare module '../config' {
  interface ControllerConfig {
    /** Deployment recovery sweep tunables; tests lower them. */
    deployments?: Partial<RunnerTunables>;
  }
}

/**
 * The least time between two pumps of one deployment while outcomes keep coming: each pump locks
 * the deployment, reads its queued devices and recounts them (5 round trips with the transaction),
 * so pumping once per burst of the engine's results would cost more than recording them; a pump
 * then only refreshes the counts. The deployment still completes right after its last device: once
 * as many outcomes came as the last pump left devices open, the next pump goes at once (schedule).
 */
const PUMP_GAP_MS = 250;
/**
 * Devices one pump claims and submits jobs for. A big deployment starts on its first devices
 * while the next pumps claim the rest (back to back), instead of waiting for every job of it.
 */
const CLAIM_PER_PUMP = 100;
/**
 * Devices the pump that starts a deployment claims: fewer, so that its first jobs reach the
 * agents sooner while the next pumps claim the rest (a first claim of 100 and its dispatch pass
 * took about 30 ms longer to the first device started).
 */
const FIRST_CLAIM = 25;

/** A deployment's pump loop: asked again meanwhile, devices its last pass left open, outcomes since, and how to cut its gap short. */
interface PumpState {
  again: boolean;
  open: number;
  outcomes: number;
  wake: (() => void) | null;
}

export interface RunnerTunables {
  /** How often the recovery sweep runs. */
  sweepIntervalMs: number;
  /** A pending deployment or queued device untouched this long is pushed by the sweep. */
  staleMs: number;
}

/**
 * The deployment state machine. Every transition happens inside a database transaction that
 * holds the deployment's row lock: the pump (starts a deployment, submits the jobs of queued
 * devices, settles), the job outcome handlers (record a device's result under the device's row
 * lock only; the pump that settles runs once the outcome has committed), and the recovery sweep
 * (which any controller replica runs, so that a restart never leaves a deployment in pending,
 * in_progress or rolling_back).
 */
export class DeploymentRunner {
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;
  private stopped = false;
  /** Deployments with a pump under way (see schedule). */
  private readonly pumping = new Map<string, PumpState>();
  /** Answers agents' pre-deployment backup store requests. */
  private readonly backups: PreDeploymentBackups;

  constructor(
    private readonly store: DeploymentStore,
    private readonly jobs: JobService,
    private readonly log: FastifyBaseLogger,
    private readonly tunables: RunnerTunables,
  ) {
    this.backups = new PreDeploymentBackups(store);
  }

  register(): void {
    for (const kind of ['deploy', 'rollback', 'dry_run'] as const) {
      // handleMany records a burst of outcomes with a few set-based statements.
      this.jobs.onOutcome(kind, (outcome, trx) => this.onOutcome(outcome, trx), {
        handleMany: (outcomes, trx) => this.onOutcomes(outcomes, trx),
        // The agent's lines of each device go straight to the deployment log (recordPass), not through job_logs.
        keepsLogs: true,
        // The diff is kept on the device row; the job row keeps the rest.
        ...(kind === 'dry_run' && { storedResult: ({ diff: _diff, ...rest }: Record<string, unknown>) => rest }),
      });
      // Settling and submitting the next jobs lock the deployment row: done after the outcome
      // commits, so outcomes of one deployment are recorded side by side, never behind that lock.
      this.jobs.afterOutcome(kind, (outcome) => outcome.groupId && this.schedule(outcome.groupId, true));
    }
    // Its statement checks the signer is still current (deployments/store.ts STORE_BACKUPS).
    this.jobs.onRequest('backup_store', (agent, payload) => this.storeBackup(agent, payload), { checksSigner: true });
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => void this.sweep(), this.tunables.sweepIntervalMs);
    this.timer.unref();
    void this.sweep();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Pumps soon, after the caller's transaction (if any) has committed and released the lock.
   * One pump per deployment at a time: after a pump that left devices open the loop waits
   * PUMP_GAP_MS, and the outcomes that came meanwhile share one pump at its end, so a stream of
   * outcomes costs a pump per gap, not one per result batch nor a lock queue entry each. Once as
   * many outcomes came as the last pump left devices open, the deployment may be done: the next
   * pump goes at once, so it completes right after its last device, not a gap later.
   */
  schedule(deploymentId: string, outcome = false): void {
    if (this.stopped) return;
    const state = this.pumping.get(deploymentId);
    if (state) {
      state.again = true;
      // Not an outcome (a new deployment, a rollback, a settle moving it on): at once.
      if (!outcome || ++state.outcomes >= state.open) state.wake?.();
      return;
    }
    const pump: PumpState = { again: false, open: Infinity, outcomes: 0, wake: null };
    this.pumping.set(deploymentId, pump);
    setImmediate(async () => {
      try {
        for (;;) {
          Object.assign(pump, { again: false, outcomes: 0, open: Infinity });
          const pumped = await this.pump(deploymentId).catch((err) => {
            this.log.warn({ err: (err as Error).message, deployment: deploymentId }, 'deployment pump failed; the sweep retries');
            return null;
          });
          if (this.stopped) break;
          if (pumped?.moreQueued) continue;
          pump.open = pumped?.open ?? Infinity;
          // Nothing open to wait for: the loop ends (a later call starts another).
          if (!pump.again && (pumped === null || pumped.open === 0)) break;
          if (pump.again && pump.outcomes >= pump.open) continue;
          // The calls of the gap (each result batch's outcomes, mostly) share the pump at its end.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, PUMP_GAP_MS);
            pump.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          pump.wake = null;
          if (!pump.again) break;
        }
      } finally {
        this.pumping.delete(deploymentId);
      }
    });
  }

  /**
   * Starts a pending deployment and submits a job for every queued device, in one transaction
   * (claimDevices): the jobs are dispatched once it commits, and a crash before that leaves
   * neither claim nor job. Claims at most CLAIM_PER_PUMP devices (FIRST_CLAIM when it starts the
   * deployment); answers how many devices are still queued or running and whether more are queued
   * than it claimed (null when the deployment is not running).
   */
  async pump(deploymentId: string): Promise<{ open: number; moreQueued: boolean } | null> {
    return this.store.db.transaction(async (trx) => {
      let deployment = await this.store.lock(trx, deploymentId);
      if (!deployment || !['pending', 'in_progress', 'rolling_back'].includes(deployment.status)) return null;
      const lines: LogLine[] = [];
      const starting = deployment.status === 'pending';
      const limit = starting ? FIRST_CLAIM : CLAIM_PER_PUMP;
      if (starting) {
        await this.store.update(trx, deploymentId, { status: 'in_progress', started_at: trx.fn.now() });
        deployment = { ...deployment, status: 'in_progress' };
        lines.push({ level: 'info', message: `Deployment started on ${plural(deployment.total_devices, 'device')}` });
      }
      const devices = await this.store.queuedDevices(trx, deploymentId, limit);
      if (devices.length > 0) await claimDevices(this.store, this.jobs, trx, deployment, devices, lines);
      await this.store.log(trx, deploymentId, deployment.org_id, lines);
      const open = await this.settle(trx, deploymentId, deployment);
      return { open: open ?? 0, moreQueued: devices.length === limit };
    });
  }

  /**
   * Devices claimed but never given a job id: left by a controller before 2026-11-30, which
   * claimed devices and submitted their jobs in two transactions and could stop in between (a claim
   * now has its jobs in its own transaction). The job submitted meanwhile is adopted, or the device
   * goes back to its queue.
   */
  private async recoverClaims(deploymentId: string): Promise<void> {
    await this.store.db.transaction(async (trx) => {
      const deployment = await this.store.lock(trx, deploymentId);
      if (!deployment) return;
      const stale = (await this.store.devices(deploymentId, trx)).filter(
        (d) => RUNNING.includes(d.status) && d.job_id === null && Date.now() - d.status_since.getTime() > this.tunables.staleMs,
      );
      if (stale.length === 0) return;
      const latest = await latestJobs(this.store, trx, deployment, stale);
      const updates: DeviceUpdate[] = stale.map((d) => {
        const queued = QUEUED[RUNNING.indexOf(d.status)];
        const job = latest(d.device_id, NEXT[queued]!.kind);
        return job
          ? { device_id: d.device_id, status: d.status, job_id: job.id, error_message: null }
          : { device_id: d.device_id, status: queued, job_id: null, error_message: null };
      });
      await this.store.updateDevices(trx, deploymentId, updates);
    });
  }

  /** A deploy job's pre-deployment backup store request (see PreDeploymentBackups). */
  storeBackup(agent: RequestSigner, payload: unknown): Promise<BackupStoreReply> {
    return this.backups.store(agent, payload);
  }

  /** Records a deploy or rollback job's outcome on its device (the deployment settles after the commit). */
  onOutcome(outcome: JobOutcome, trx: Knex.Transaction): Promise<void> {
    return this.onOutcomes([outcome], trx);
  }

  /** Records deploy, dry_run and rollback outcomes on their devices (see recordDeviceOutcomes). */
  onOutcomes(outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void> {
    return recordDeviceOutcomes(this.store, outcomes, trx);
  }

  /** Moves the deployment on once no device is open (see settleDeployment); an atomic stack's restore is pumped. */
  settle(trx: Knex.Transaction, deploymentId: string, locked?: LockedDeployment): Promise<number | null> {
    return settleDeployment(this.store, trx, deploymentId, locked, (id) => this.schedule(id));
  }

  /** Recovery: pumps stale deployments, records outcomes a device row missed, settles idle ones. */
  async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    try {
      for (const id of await this.store.unclaimedRuns(this.tunables.staleMs)) {
        await this.recoverClaims(id).catch((err) =>
          this.log.warn({ err: (err as Error).message, deployment: id }, 'deployment claim recovery failed'),
        );
      }
      for (const id of await this.store.needingPump(this.tunables.staleMs)) {
        try {
          // A pump claims up to CLAIM_PER_PUMP devices: pump until none are left queued.
          for (let more = true; more;) more = (await this.pump(id))?.moreQueued ?? false;
        } catch (err) {
          this.log.warn({ err: (err as Error).message, deployment: id }, 'deployment recovery pump failed');
        }
      }
      for (const job of await this.store.orphanedOutcomes(this.tunables.staleMs)) {
        await this.store.db
          .transaction((trx) => this.onOutcome(outcomeOf(job), trx))
          .then(() => job.group_id && this.schedule(job.group_id))
          .catch((err) => this.log.warn({ err: (err as Error).message, job: job.id }, 'recording a missed deployment outcome failed'));
      }
      for (const id of await this.store.unsettled()) {
        await this.store.db.transaction((trx) => this.settle(trx, id)).catch(() => undefined);
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'deployment sweep failed');
    } finally {
      this.sweeping = false;
    }
  }
}
