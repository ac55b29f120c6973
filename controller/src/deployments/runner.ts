import type { Knex } from 'knex';
import type { FastifyBaseLogger } from 'fastify';
import { outcomeOf } from '../jobs/store';
import type { AgentRef, JobOutcome, JobService, JobSpec } from '../jobs/types';
import type { DryRunResult } from '../../../shared/src/jobs/deploy';
import type { BackupStoreReply } from '../../../shared/src/jobs/messages';
import { PreDeploymentBackups } from './backup-store';
import {
  NEXT,
  QUEUED,
  RUNNING,
  type DeploymentDeviceRow,
  type DeploymentStore,
  type DeviceStatus,
  type DeviceWrite,
  type EntryRow,
  type LockedDeployment,
  type LockedDevice,
  type LogBatch,
  type LogLine,
} from './store';

declare module '../config' {
  interface ControllerConfig {
    /** Deployment recovery sweep tunables; tests lower them. */
    deployments?: Partial<RunnerTunables>;
  }
}

/** Job deadlines: a device's whole deploy (backup, push, verify) or restore. */
export const DEPLOY_DEADLINE_MS = 10 * 60_000;
export const ROLLBACK_DEADLINE_MS = 10 * 60_000;
/**
 * The least time between two pumps of one deployment while outcomes keep coming: each pump locks
 * the deployment, reads its queued devices and recounts them (5 round trips with the transaction),
 * so pumping once per burst of the engine's results would cost more than recording them. While
 * many devices are still open a pump only refreshes the counts, so it waits longer; near the end
 * it comes quickly, so the deployment completes promptly after its last device.
 */
const PUMP_GAP_MS = 50;
const PUMP_GAP_BUSY_MS = 250;
/** More devices open than this after a pump: the next waits PUMP_GAP_BUSY_MS. */
const BUSY_OPEN_DEVICES = 64;
/**
 * Devices one pump claims and submits jobs for. A big deployment starts on its first devices
 * while the next pumps claim the rest (back to back), instead of waiting for every job of it.
 */
const CLAIM_PER_PUMP = 100;

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

type DeploymentKind = 'deploy' | 'rollback' | 'dry_run';
type DeploymentJobSpec = JobSpec<DeploymentKind>;

interface Claimed {
  deviceId: string;
  running: DeviceStatus;
  spec: DeploymentJobSpec;
}
type DeviceUpdate = { device_id: string; status: DeviceStatus; job_id: string | null; error_message: string | null };

/** What one outcome does to its device: the changed fields and the log lines. */
interface Recorded {
  outcome: JobOutcome;
  device: LockedDevice;
  fields: Partial<DeploymentDeviceRow>;
  lines: LogLine[];
}

/** The job kind that does a deployment's `deploy` step: `dry_run` for a dry run. */
const jobKind = (deployment: Pick<LockedDeployment, 'dry_run'>, kind: 'deploy' | 'rollback'): DeploymentKind =>
  deployment.dry_run && kind === 'deploy' ? 'dry_run' : kind;

/** A dry_run outcome's device fields: completed with its diff, or failed with the reason. */
function dryRunFields(outcome: JobOutcome): Partial<DeploymentDeviceRow> {
  const result = outcome.result as unknown as DryRunResult | null;
  if (outcome.status === 'succeeded' && typeof result?.diff === 'string') {
    return { status: 'completed', changed: result.changed === true, error_message: null, dry_run_diff: result.diff };
  }
  // A succeeded outcome without its diff: recorded late from the job row, which does not keep it.
  return {
    status: 'failed',
    changed: false,
    error_message: outcome.error ?? "The dry run's diff was not recorded; run the dry run again",
    dry_run_diff: null,
  };
}

function dryRunSummary(result: DryRunResult): string {
  const how = `${result.exactness}: ${result.method}`;
  return result.changed
    ? `dry run: would add ${plural(result.additions, 'line')} and remove ${plural(result.deletions, 'line')} (${how}); nothing was changed`
    : `dry run: nothing would change (${how})`;
}

/** The failed state of a queued state: queued → failed, restore_queued → restore_failed, rollback_queued → rollback_failed. */
const failedState = (status: DeviceStatus): DeviceStatus =>
  status === 'restore_queued' ? 'restore_failed' : status === 'rollback_queued' ? 'rollback_failed' : 'failed';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const FAILED_STATES: DeviceStatus[] = ['failed', 'restored', 'restore_failed', 'rollback_failed'];

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
    this.jobs.onRequest('backup_store', (agent, payload) => this.storeBackup(agent, payload));
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
   * One pump per deployment at a time: calls meanwhile make it go round once more, PUMP_GAP_MS
   * after the last, so a stream of outcomes costs a pump per gap, not one lock queue entry each.
   * Once as many outcomes came as the last pump left devices open, the deployment may be done:
   * the next pump goes at once, so it completes right after its last device, not a gap later.
   */
  schedule(deploymentId: string, outcome = false): void {
    if (this.stopped) return;
    const state = this.pumping.get(deploymentId);
    if (state) {
      state.again = true;
      if (outcome && ++state.outcomes >= state.open) state.wake?.();
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
          if (!pump.again) break;
          pump.open = pumped?.open ?? Infinity;
          if (pump.outcomes >= pump.open) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pumped && pumped.open > BUSY_OPEN_DEVICES ? PUMP_GAP_BUSY_MS : PUMP_GAP_MS);
            pump.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          pump.wake = null;
        }
      } finally {
        this.pumping.delete(deploymentId);
      }
    });
  }

  /**
   * Starts a pending deployment and submits a job for every queued device. Devices are claimed
   * (moved to their running state) in one transaction and their jobs submitted after it commits,
   * never inside it (the job service has its own connection; embedded PGlite has only one). A job
   * submitted just before a crash is found and adopted by the sweep, never sent twice. Claims at
   * most CLAIM_PER_PUMP devices; answers how many devices are still queued or running and whether
   * more are queued than it claimed (null when the deployment is not running).
   */
  async pump(deploymentId: string): Promise<{ open: number; moreQueued: boolean } | null> {
    const claimed = await this.store.db.transaction(async (trx) => {
      let deployment = await this.store.lock(trx, deploymentId);
      if (!deployment || !['pending', 'in_progress', 'rolling_back'].includes(deployment.status)) return null;
      const lines: LogLine[] = [];
      if (deployment.status === 'pending') {
        await this.store.update(trx, deploymentId, { status: 'in_progress', started_at: trx.fn.now() });
        deployment = { ...deployment, status: 'in_progress' };
        lines.push({ level: 'info', message: `Deployment started on ${plural(deployment.total_devices, 'device')}` });
      }
      const devices = await this.store.queuedDevices(trx, deploymentId, CLAIM_PER_PUMP);
      const specs = devices.length > 0 ? await this.claim(trx, deployment, devices, lines) : [];
      await this.store.log(trx, deploymentId, deployment.org_id, lines);
      const open = await this.settle(trx, deploymentId, deployment);
      return { deployment, specs, open: open ?? 0, moreQueued: devices.length === CLAIM_PER_PUMP };
    });
    if (!claimed) return null;
    if (claimed.specs.length > 0) await this.submit(claimed.deployment, claimed.specs);
    return { open: claimed.open, moreQueued: claimed.moreQueued };
  }

  /**
   * Moves queued devices to their running state: adopting a job already submitted for them, else
   * preparing the job (deploy: the device's services in push order; rollback: its backup).
   */
  private async claim(trx: Knex.Transaction, deployment: LockedDeployment, devices: DeploymentDeviceRow[], lines: LogLine[]): Promise<Claimed[]> {
    const latest = await this.latestJobs(trx, deployment.id, devices);
    // The changes of every device whose deploy job is prepared now.
    const deployKind = jobKind(deployment, 'deploy');
    const preparing = devices.filter((d) => d.status === 'queued' && !latest.has(`${d.device_id}/${deployKind}`)).map((d) => d.device_id);
    const entries = new Map<string, EntryRow[]>();
    if (preparing.length > 0) {
      for (const e of await this.store.entries(trx, deployment.id, preparing)) {
        const list = entries.get(e.device_id);
        if (list) list.push(e);
        else entries.set(e.device_id, [e]);
      }
    }
    // Only a restore or rollback carries a backup: a deploy job has the agent store its own (backup_store).
    const backups = await this.store.backupConfigs(
      trx,
      devices.filter((d) => d.status !== 'queued' && d.backup_config_id).map((d) => d.backup_config_id!),
    );

    const updates: DeviceUpdate[] = [];
    const claimed: Claimed[] = [];
    for (const device of devices) {
      const next = NEXT[device.status]!;
      const kind = jobKind(deployment, next.kind);
      const job = latest.get(`${device.device_id}/${kind}`);
      if (job) {
        updates.push({ device_id: device.device_id, status: next.running, job_id: job.id, error_message: null });
        continue;
      }
      const base = { orgId: deployment.org_id, deviceId: device.device_id, groupId: deployment.id };
      let spec: DeploymentJobSpec;
      const changes = () =>
        (entries.get(device.device_id) ?? []).map((e) => ({
          target_path: e.target_path,
          operation: e.operation,
          config_format: e.config_format,
          config: e.rendered_config,
        }));
      if (kind === 'dry_run') {
        // Read only: no backup is taken, stored or needed.
        spec = {
          ...base,
          kind,
          deadlineMs: DEPLOY_DEADLINE_MS,
          params: { deployment_id: deployment.id, transport: device.transport, changes: changes() },
        };
      } else if (next.kind === 'deploy') {
        // One session: the agent reads the running config, has it stored (storeBackup) before it
        // changes anything, then pushes and verifies against the stored backup. A queued device
        // has no backup yet (nothing moves a device back to `queued`); one that had would take
        // this path all the same, deliberately: the agent's backup_store request is answered with
        // the backup stored first (PreDeploymentBackups), so the push compares with and restores
        // to that one, never to a config read after part of the change.
        spec = {
          ...base,
          kind: 'deploy',
          deadlineMs: DEPLOY_DEADLINE_MS,
          params: { deployment_id: deployment.id, transport: device.transport, changes: changes(), verify: true },
        };
      } else {
        const backup = device.backup_config_id ? backups.get(device.backup_config_id) : undefined;
        if (!backup) {
          const error = device.backup_config_id
            ? `${device.device_name}: the pre-deployment backup (config version ${device.backup_config_id}) no longer exists`
            : `${device.device_name}: no pre-deployment backup to restore`;
          updates.push({ device_id: device.device_id, status: failedState(device.status), job_id: null, error_message: error });
          lines.push({ level: 'error', message: error, device_id: device.device_id });
          continue;
        }
        spec = {
          ...base,
          kind: 'rollback',
          deadlineMs: ROLLBACK_DEADLINE_MS,
          params: {
            deployment_id: deployment.id,
            transport: ['netconf', 'gnmi', 'ssh'].includes(backup.pulled_via) ? backup.pulled_via : device.transport,
            backup: { text: backup.config_text, format: backup.config_format, via: backup.pulled_via },
            purpose: device.status === 'restore_queued' ? 'restore' : 'rollback',
          },
        };
      }
      updates.push({ device_id: device.device_id, status: next.running, job_id: null, error_message: null });
      claimed.push({
        deviceId: device.device_id,
        running: next.running,
        spec,
      });
    }
    await this.store.updateDevices(trx, deployment.id, updates);
    return claimed;
  }

  /** Submits the claimed devices' jobs, then records their ids (or fails them with the reason). */
  private async submit(deployment: LockedDeployment, claimed: Claimed[]): Promise<void> {
    let ids: string[] | null = null;
    let reason = '';
    try {
      ids = await this.jobs.submit(claimed.map((c) => c.spec));
    } catch (err) {
      reason = `The ${claimed[0].spec.kind} job could not be submitted: ${(err as Error).message}`;
    }
    await this.store.db.transaction(async (trx) => {
      const locked = await this.store.lock(trx, deployment.id);
      if (ids) {
        await this.store.recordJobs(
          trx,
          deployment.id,
          claimed.map((c, i) => ({ device_id: c.deviceId, job_id: ids![i] })),
        );
        const what =
          claimed[0].spec.kind === 'dry_run'
            ? 'dry run'
            : claimed[0].running === 'running'
              ? 'deploy'
              : claimed[0].running === 'restoring'
                ? 'restore'
                : 'rollback';
        await this.store.log(trx, deployment.id, deployment.org_id, [
          { level: 'info', message: `Submitted ${plural(ids.length, `${what} job`)} to the devices' agents` },
        ]);
        return;
      }
      // Not retried for ever: the devices fail with the reason, and the deployment settles.
      await this.store.failClaimed(
        trx,
        deployment.id,
        claimed.map((c) => ({ device_id: c.deviceId, status: failedState(QUEUED[RUNNING.indexOf(c.running)]), job_id: null, error_message: reason })),
      );
      await this.store.log(trx, deployment.id, deployment.org_id, [{ level: 'error', message: reason }]);
      await this.settle(trx, deployment.id, locked);
    });
  }

  /** The jobs submitted for these devices since their status_since, by `device_id/kind` (adopted after a crash). */
  private async latestJobs(trx: Knex.Transaction, deploymentId: string, devices: DeploymentDeviceRow[]): Promise<Map<string, { id: string }>> {
    const jobs = await this.store.submittedJobs(
      trx,
      deploymentId,
      devices.map((d) => d.device_id),
    );
    return new Map(jobs.map((j) => [`${j.device_id}/${j.kind}`, j]));
  }

  /**
   * Devices claimed but never given a job id (the controller stopped between claim and record):
   * the job submitted meanwhile is adopted, or the device goes back to its queue.
   */
  private async recoverClaims(deploymentId: string): Promise<void> {
    await this.store.db.transaction(async (trx) => {
      const deployment = await this.store.lock(trx, deploymentId);
      if (!deployment) return;
      const stale = (await this.store.devices(deploymentId, trx)).filter(
        (d) => RUNNING.includes(d.status) && d.job_id === null && Date.now() - d.status_since.getTime() > this.tunables.staleMs,
      );
      if (stale.length === 0) return;
      const latest = await this.latestJobs(trx, deploymentId, stale);
      const updates: DeviceUpdate[] = stale.map((d) => {
        const queued = QUEUED[RUNNING.indexOf(d.status)];
        const job = latest.get(`${d.device_id}/${jobKind(deployment, NEXT[queued]!.kind)}`);
        return job
          ? { device_id: d.device_id, status: d.status, job_id: job.id, error_message: null }
          : { device_id: d.device_id, status: queued, job_id: null, error_message: null };
      });
      await this.store.updateDevices(trx, deploymentId, updates);
    });
  }

  /** A deploy job's pre-deployment backup store request (see PreDeploymentBackups). */
  storeBackup(agent: AgentRef, payload: unknown): Promise<BackupStoreReply> {
    return this.backups.store(agent, payload);
  }

  /** Records a deploy or rollback job's outcome on its device (the deployment settles after the commit). */
  onOutcome(outcome: JobOutcome, trx: Knex.Transaction): Promise<void> {
    return this.onOutcomes([outcome], trx);
  }

  /**
   * Records deploy and rollback outcomes (of any deployments) with a few set-based statements:
   * device rows locked in one, device rows written in one, log lines in one. Exactly what each
   * outcome alone would do: outcomes of the same device (a rare burst with a stale one) are
   * recorded in order, one pass each.
   */
  async onOutcomes(outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void> {
    let rest = outcomes.filter((o) => o.groupId);
    while (rest.length > 0) {
      const seen = new Set<string>();
      const pass: JobOutcome[] = [];
      const later: JobOutcome[] = [];
      for (const o of rest) {
        const key = `${o.groupId}/${o.deviceId}`;
        (seen.has(key) ? later : pass).push(o);
        seen.add(key);
      }
      await this.recordPass(pass, trx);
      rest = later;
    }
  }

  /** One pass of onOutcomes: at most one outcome per deployment device. */
  private async recordPass(outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void> {
    // The device rows are locked for the devices' own record; the deployment row only by the
    // settle after the commit, so that outcomes of one deployment are recorded side by side.
    const locked = await this.store.lockDevices(
      trx,
      outcomes.map((o) => ({ deployment_id: o.groupId!, device_id: o.deviceId })),
    );
    const devices = new Map(locked.map((d) => [`${d.deployment_id}/${d.device_id}`, d]));
    // In the outcomes' order: those recorded, and those their device no longer waited for that came with lines (late).
    const logged: Recorded[] = [];
    const late = new Set<Recorded>();
    for (const outcome of outcomes) {
      const device = devices.get(`${outcome.groupId}/${outcome.deviceId}`);
      if (!device || device.org_id !== outcome.orgId) continue;
      const r = this.record(outcome, device);
      if (r) logged.push(r);
      else if (outcome.logs?.length) {
        const lines = notRecorded(outcome, device);
        late.add(lines);
        logged.push(lines);
      }
    }
    if (logged.length === 0) return;
    const recorded = logged.filter((r) => !late.has(r));

    // The device rows, then the agent's log lines of each job and the controller's: one statement.
    const writes = recorded.map(({ device, fields }): DeviceWrite => ({
      deployment_id: device.deployment_id,
      device_id: device.device_id,
      status: fields.status ?? device.status,
      job_id: fields.job_id === undefined ? device.job_id : fields.job_id,
      backup_config_id: fields.backup_config_id ?? device.backup_config_id,
      changed: fields.changed ?? device.changed,
      error_message: fields.error_message === undefined ? device.error_message : fields.error_message,
      dry_run_diff: fields.dry_run_diff === undefined ? device.dry_run_diff : fields.dry_run_diff,
      stamp: fields.status !== undefined,
    }));
    await this.store.recordDevices(
      trx,
      writes,
      logged.map((r): LogBatch => ({
        deployment_id: r.device.deployment_id,
        org_id: r.device.org_id,
        device_id: r.device.device_id,
        // The lines it sent earlier stay in job_logs for a job whose outcome was not recorded.
        job_id: late.has(r) ? null : r.outcome.jobId,
        // The lines its agent sent with the result, after those it sent earlier (job_logs), then the controller's.
        lines: [...agentLines(r.outcome, r.device.device_id), ...r.lines],
      })),
    );
  }

  /**
   * What one outcome does to its locked device row, or null for a stale or repeated outcome (the
   * device moved on, or another job is its current one), which is ignored.
   */
  private record(outcome: JobOutcome, device: LockedDevice): Recorded | null {
    const expected: DeviceStatus[] =
      outcome.kind === 'rollback' ? ['restore_queued', 'restoring', 'rollback_queued', 'rolling_back'] : ['queued', 'running'];
    if (!expected.includes(device.status) || (device.job_id !== null && device.job_id !== outcome.jobId)) return null;

    const lines: LogLine[] = [];
    const fields: Partial<DeploymentDeviceRow> = { job_id: outcome.jobId };
    const line = (level: LogLine['level'], message: string) =>
      lines.push({ level, message: `${device.device_name}: ${message}`, device_id: device.device_id });
    const ok = outcome.status === 'succeeded';
    if (outcome.kind === 'dry_run') {
      Object.assign(fields, dryRunFields(outcome));
      const computed = fields.status === 'completed';
      line(computed ? 'info' : 'error', computed ? dryRunSummary(outcome.result as unknown as DryRunResult) : fields.error_message!);
      return { outcome, device, fields, lines };
    }
    if (outcome.kind === 'deploy') {
      const { result } = outcome;
      // The backup the controller kept before the change (stored mid-job, see backup-store.ts) is
      // named here, after the job's own lines, so the log reads in the order things happened.
      const backup = device.backup_version === null ? '' : ` (pre-deployment backup: config version ${device.backup_version})`;
      if (ok) {
        // changed: unless the agent found the running config already as rendered (null: not verified).
        Object.assign(fields, { status: 'completed', changed: result?.changed !== false, error_message: null });
        line('info', `deployed${result?.verified ? ' and verified' : ''}${backup}`);
      } else {
        Object.assign(fields, { status: 'failed', changed: false, error_message: outcome.error ?? 'The deploy job failed' });
        line('error', `${fields.error_message!}${backup}`);
      }
      return { outcome, device, fields, lines };
    }
    if (device.status === 'restore_queued' || device.status === 'restoring') {
      if (ok) {
        const why = device.error_message ?? 'the stack is atomic and another device failed';
        Object.assign(fields, { status: 'restored', changed: false, error_message: `Restored from its pre-deployment backup because ${why}` });
        line('info', 'restored from its pre-deployment backup');
      } else {
        Object.assign(fields, {
          status: 'restore_failed',
          error_message: `Restore from the pre-deployment backup failed: ${outcome.error ?? 'no reason given'}; the device keeps the deployed config`,
        });
        line('error', fields.error_message!);
      }
    } else if (ok) {
      Object.assign(fields, { status: 'rolled_back', changed: false, error_message: null });
      line('info', 'rolled back to its pre-deployment backup');
    } else {
      Object.assign(fields, { status: 'rollback_failed', error_message: `Rollback failed: ${outcome.error ?? 'no reason given'}` });
      line('error', fields.error_message!);
    }
    return { outcome, device, fields, lines };
  }

  /**
   * Moves the deployment on once no device is queued or running: completed, failed, the restore
   * of an atomic stack's changed devices, or the end of a rollback. Keeps the counts current.
   * Answers how many devices were still queued or running (null: no such deployment).
   */
  async settle(trx: Knex.Transaction, deploymentId: string, locked?: LockedDeployment): Promise<number | null> {
    const deployment = locked ?? (await this.store.lock(trx, deploymentId));
    if (!deployment) return null;
    const counts = await this.store.refreshCounts(trx, deploymentId, FAILED_STATES);
    const n = (...states: DeviceStatus[]) => states.reduce((sum, s) => sum + (counts.get(s) ?? 0), 0);
    // Counts are stored already; fields holds what a transition changes.
    const fields: Record<string, unknown> = {};
    const open = n(...QUEUED, ...RUNNING);
    const lines: LogLine[] = [];
    if (open === 0 && deployment.status === 'in_progress' && deployment.dry_run) {
      const end = await this.dryRunEnd(trx, deploymentId, n('completed'), n('failed'));
      Object.assign(fields, end.fields);
      lines.push(end.line);
    } else if (open === 0 && deployment.status === 'in_progress') {
      const failed = n('failed');
      const restoredPhase = n('restored', 'restore_failed') > 0;
      if (failed === 0 && !restoredPhase) {
        Object.assign(fields, { status: 'completed', completed_at: trx.fn.now(), error_message: null });
        const changed = await this.store.changedCount(trx, deploymentId);
        const matched = n('completed') - changed;
        lines.push({
          level: 'info',
          message: `Deployment completed: ${plural(changed, 'device')} changed${matched > 0 ? `, ${matched} already as rendered` : ''}`,
        });
      } else if (deployment.atomic && !restoredPhase && n('completed') > 0) {
        const failedNames = (await this.store.devices(deploymentId, trx)).filter((d) => d.status === 'failed').map((d) => d.device_name);
        const reason =
          `the stack is atomic and ` +
          `${failedNames.slice(0, 5).join(', ')}${failedNames.length > 5 ? ` and ${failedNames.length - 5} more` : ''} failed`;
        // Until the restore ends, each device's message says why it is being restored.
        const moved = await this.store.moveDevices(trx, deploymentId, ['completed'], 'restore_queued', { withBackup: true, errorMessage: reason });
        // A changed device without a backup cannot be restored: it is reported, not hidden.
        const unbackedIds = await this.store.moveDevices(trx, deploymentId, ['completed'], 'restore_failed', {
          errorMessage: `Not restored: no pre-deployment backup was stored (${reason})`,
        });
        fields.error_message = `Restoring ${plural(moved.length, 'changed device')} because ${reason}`;
        fields.succeeded_count = 0;
        fields.failed_count = n(...FAILED_STATES) + moved.length + unbackedIds.length;
        lines.push({
          level: 'warn',
          message: `Atomic stack: restoring ${plural(moved.length, 'device')} from their pre-deployment backups because ${reason}`,
        });
        if (moved.length > 0) this.schedule(deploymentId);
        else {
          Object.assign(fields, { status: 'failed', completed_at: trx.fn.now() });
        }
      } else {
        const total = deployment.total_devices;
        const reason = restoredPhase
          ? `${plural(n('failed'), 'device')} failed; ${plural(n('restored'), 'device')} ` +
            `restored${n('restore_failed') ? `, ${n('restore_failed')} could not be restored` : ''}`
          : `${failed} of ${plural(total, 'device')} failed${n('completed') ? `; ${n('completed')} kept the change (the stack is not atomic)` : ''}`;
        Object.assign(fields, { status: 'failed', completed_at: trx.fn.now(), error_message: reason });
        lines.push({ level: 'error', message: `Deployment failed: ${reason}` });
      }
    } else if (open === 0 && deployment.status === 'rolling_back') {
      const failed = n('rollback_failed');
      if (failed === 0) {
        Object.assign(fields, { status: 'rolled_back', completed_at: trx.fn.now(), error_message: null });
        lines.push({ level: 'info', message: `Rollback completed: ${plural(n('rolled_back'), 'device')} back on their pre-deployment config` });
      } else {
        const reason = `Rollback failed on ${plural(failed, 'device')}; POST /rollback again to retry them`;
        Object.assign(fields, { status: 'failed', completed_at: trx.fn.now(), error_message: reason });
        lines.push({ level: 'error', message: reason });
      }
    }
    if (Object.keys(fields).length > 0) await this.store.update(trx, deploymentId, fields);
    await this.store.log(trx, deploymentId, deployment.org_id, lines);
    return open;
  }

  /** How a dry run ends: dry_run_completed, or dry_run_failed when a device could not be previewed. */
  private async dryRunEnd(trx: Knex.Transaction, deploymentId: string, done: number, failed: number) {
    const changed = await this.store.changedCount(trx, deploymentId);
    const counts = `${plural(changed, 'device')} would change, ${done - changed} would not`;
    if (failed === 0) {
      return {
        fields: { status: 'dry_run_completed', completed_at: trx.fn.now(), error_message: null },
        line: { level: 'info', message: `Dry run completed: ${counts}; nothing was changed` } as LogLine,
      };
    }
    const reason = `dry run failed on ${plural(failed, 'device')} (${counts}); nothing was changed`;
    return {
      fields: { status: 'dry_run_failed', completed_at: trx.fn.now(), error_message: reason },
      line: { level: 'error', message: `Dry run failed: ${reason}` } as LogLine,
    };
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
          // A pump claims CLAIM_PER_PUMP devices: pump until none are left queued.
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

/** The lines an agent sent with a job's result, as deployment log lines of its device. */
function agentLines(outcome: JobOutcome, deviceId: string): LogLine[] {
  return (outcome.logs ?? []).map((l) => ({ level: l.level, message: l.text, device_id: deviceId, created_at: new Date(l.at) }));
}

/**
 * An outcome its device no longer waited for (it moved on meanwhile): nothing of the device
 * changes, but its agent's lines are kept in the deployment log, followed by a line saying so.
 */
function notRecorded(outcome: JobOutcome, device: LockedDevice): Recorded {
  const message = `${device.device_name}: a late ${outcome.kind} result (${outcome.status}) was not recorded: the device had moved on`;
  return { outcome, device, fields: {}, lines: [{ level: 'warn', message, device_id: device.device_id }] };
}
