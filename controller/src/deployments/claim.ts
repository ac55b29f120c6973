import type { Knex } from 'knex';
import { groupBy } from '../../../shared/src/group-by';
import { configDigest, restoreScope } from '../../../shared/src/jobs/deploy';
import { plural } from '../../../shared/src/words';
import { AppError } from '../errors/app-error';
import type { JobService, JobSpec } from '../jobs/types';
import { NEXT, type DeploymentDeviceRow, type DeploymentStore, type DeviceStatus, type LockedDeployment, type LogLine } from './store';

/**
 * Job deadlines: a device's whole deploy (backup, push, verify, and a restore when the push failed
 * part-way) or restore. A commit may take its agent's commitTimeoutMs (2 minutes) twice, confirmed
 * and confirming, and so may the restore after it.
 */
export const DEPLOY_DEADLINE_MS = 15 * 60_000;
export const ROLLBACK_DEADLINE_MS = 15 * 60_000;

type DeploymentKind = 'deploy' | 'rollback' | 'dry_run';
export type DeploymentJobSpec = JobSpec<DeploymentKind>;

/** A device moved to its running state, with the job submitted for it (its update gets the job's id). */
interface Claimed {
  /** The queued state it left (its failed state if the job is refused). */
  queued: DeviceStatus;
  update: DeviceUpdate;
  spec: DeploymentJobSpec;
}

export type DeviceUpdate = { device_id: string; status: DeviceStatus; job_id: string | null; error_message: string | null };

/** The job kind that does a deployment's `deploy` step: `dry_run` for a dry run. */
const jobKind = (deployment: Pick<LockedDeployment, 'dry_run'>, kind: 'deploy' | 'rollback'): DeploymentKind =>
  deployment.dry_run && kind === 'deploy' ? 'dry_run' : kind;

/** The failed state of a queued state: queued → failed, restore_queued → restore_failed, rollback_queued → rollback_failed. */
export const failedState = (status: DeviceStatus): DeviceStatus =>
  status === 'restore_queued' ? 'restore_failed' : status === 'rollback_queued' ? 'rollback_failed' : 'failed';

/** A job submitted for a device, by the deployment step it does (adopted after a crash). */
export type SubmittedJobOf = (deviceId: string, step: 'deploy' | 'rollback') => { id: string } | undefined;

/** The newest jobs submitted for these devices since their status_since, looked up by device and step. */
export async function latestJobs(
  store: DeploymentStore,
  trx: Knex.Transaction,
  deployment: Pick<LockedDeployment, 'id' | 'dry_run'>,
  devices: DeploymentDeviceRow[],
): Promise<SubmittedJobOf> {
  const jobs = await store.submittedJobs(
    trx,
    deployment.id,
    devices.map((d) => d.device_id),
  );
  const byKey = new Map(jobs.map((j) => [`${j.device_id}/${j.kind}`, j]));
  return (deviceId, step) => byKey.get(`${deviceId}/${jobKind(deployment, step)}`);
}

/**
 * Moves queued devices to their running state: adopting a job already submitted for them, else
 * submitting the job (deploy: the device's services in push order; rollback: its backup) in the
 * same transaction, so that a device is never claimed without its job nor a job left without its
 * device's claim, whatever stops the controller; the jobs are dispatched once it commits. A device
 * whose backup is gone, or whose job is refused, fails with the reason (in `lines`).
 */
export async function claimDevices(
  store: DeploymentStore,
  jobs: Pick<JobService, 'submit'>,
  trx: Knex.Transaction,
  deployment: LockedDeployment,
  devices: DeploymentDeviceRow[],
  lines: LogLine[],
): Promise<void> {
  const latest = await latestJobs(store, trx, deployment, devices);
  const specs = await specMaker(store, trx, deployment, devices, latest);
  const updates: DeviceUpdate[] = [];
  const claimed: Claimed[] = [];
  for (const device of devices) {
    const next = NEXT[device.status]!;
    const job = latest(device.device_id, next.kind);
    if (job) {
      updates.push({ device_id: device.device_id, status: next.running, job_id: job.id, error_message: null });
      continue;
    }
    const spec = specs(device, jobKind(deployment, next.kind));
    if (typeof spec === 'string') {
      updates.push({ device_id: device.device_id, status: failedState(device.status), job_id: null, error_message: spec });
      lines.push({ level: 'error', message: spec, device_id: device.device_id });
      continue;
    }
    const update: DeviceUpdate = { device_id: device.device_id, status: next.running, job_id: null, error_message: null };
    updates.push(update);
    claimed.push({ queued: device.status, update, spec });
  }
  await submitClaimed(jobs, trx, claimed, lines);
  await store.updateDevices(trx, deployment.id, updates);
}

/** What a claimed device's job does, in the deployment log's words. */
const jobWords = ({ queued, spec }: Claimed) =>
  spec.kind === 'dry_run' ? 'dry run' : queued === 'queued' ? 'deploy' : queued === 'restore_queued' ? 'restore' : 'rollback';

/**
 * Submits the claimed devices' jobs in the claim's transaction and sets each device's job id. A
 * job the job service refuses (its device was deleted meanwhile) fails the devices with the
 * reason, not retried for ever; a database error rolls the whole claim back for a later pump.
 */
async function submitClaimed(jobs: Pick<JobService, 'submit'>, trx: Knex.Transaction, claimed: Claimed[], lines: LogLine[]): Promise<void> {
  if (claimed.length === 0) return;
  const what = jobWords(claimed[0]);
  try {
    const ids = await jobs.submit(
      claimed.map((c) => c.spec),
      trx,
    );
    claimed.forEach((c, i) => (c.update.job_id = ids[i]));
    lines.push({ level: 'info', message: `Submitted ${plural(ids.length, `${what} job`)} to the devices' agents` });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const reason = `The ${claimed[0].spec.kind} job could not be submitted: ${err.message}`;
    for (const c of claimed) Object.assign(c.update, { status: failedState(c.queued), error_message: reason });
    lines.push({ level: 'error', message: reason });
  }
}

/**
 * Reads what the devices' new jobs carry (the changes of deploys, the backups of restores and
 * rollbacks) and answers a maker of each device's job, or the reason it has none.
 */
async function specMaker(
  store: DeploymentStore,
  trx: Knex.Transaction,
  deployment: LockedDeployment,
  devices: DeploymentDeviceRow[],
  latest: SubmittedJobOf,
): Promise<(device: DeploymentDeviceRow, kind: DeploymentKind) => DeploymentJobSpec | string> {
  const preparing = devices.filter((d) => d.status === 'queued' && !latest(d.device_id, 'deploy')).map((d) => d.device_id);
  const entries = groupBy(preparing.length > 0 ? await store.entries(trx, deployment.id, preparing) : [], (e) => e.device_id);
  // A gNMI restore or rollback puts the backup back only where the deployment changed the device
  // (restoreScope): its target paths, not its rendered configs.
  const restoring = devices.filter((d) => d.status !== 'queued' && d.transport === 'gnmi').map((d) => d.device_id);
  const targets = groupBy(restoring.length > 0 ? await store.targetPaths(trx, deployment.id, restoring) : [], (e) => e.device_id);
  // Only a restore or rollback carries a backup: a deploy job has the agent store its own (backup_store).
  const backups = await store.backupConfigs(
    trx,
    devices.filter((d) => d.status !== 'queued' && d.backup_config_id).map((d) => d.backup_config_id!),
  );
  return (device, kind) => {
    const base = { orgId: deployment.org_id, deviceId: device.device_id, groupId: deployment.id };
    const mine = entries.get(device.device_id) ?? [];
    const changes = () =>
      mine.map((e) => ({
        target_path: e.target_path,
        operation: e.operation,
        config_format: e.config_format,
        config: e.rendered_config,
      }));
    // Masked by the agent in what it reports (DeployParams.secrets); absent when there are none.
    const secrets = [...new Set(mine.flatMap((e) => e.secrets ?? []))];
    const masked = secrets.length > 0 ? { secrets } : {};
    if (kind === 'dry_run') {
      // Read only: no backup is taken, stored or needed.
      return {
        ...base,
        kind,
        deadlineMs: DEPLOY_DEADLINE_MS,
        params: { deployment_id: deployment.id, transport: device.transport, changes: changes(), ...masked },
      };
    }
    if (kind === 'deploy') {
      // One session: the agent reads the running config, has it stored (storeBackup) before it
      // changes anything, then pushes and verifies against the stored backup. A queued device
      // has no backup yet (nothing moves a device back to `queued`); one that had would take
      // this path all the same, deliberately: the agent's backup_store request is answered with
      // the backup stored first (PreDeploymentBackups), so the push compares with and restores
      // to that one, never to a config read after part of the change.
      return {
        ...base,
        kind,
        deadlineMs: DEPLOY_DEADLINE_MS,
        params: { deployment_id: deployment.id, transport: device.transport, changes: changes(), verify: true, ...masked },
      };
    }
    const backup = device.backup_config_id ? backups.get(device.backup_config_id) : undefined;
    if (!backup) {
      return device.backup_config_id
        ? `${device.device_name}: the pre-deployment backup (config version ${device.backup_config_id}) no longer exists`
        : `${device.device_name}: no pre-deployment backup to restore`;
    }
    const purpose = device.status === 'restore_queued' ? 'restore' : 'rollback';
    // The backup goes back only onto the config this deployment left (unless a rollback is forced):
    // never silently over a later deployment's change or one made by hand. A device whose deploy
    // did not verify (it failed, or its read did) was left on the backup, as far as anyone knows.
    const forced = purpose === 'rollback' && deployment.rollback_force;
    const expect = forced ? {} : { expect_sha256: device.left_sha256 ?? configDigest(backup.config_text) };
    const transport = ['netconf', 'gnmi', 'ssh'].includes(backup.pulled_via) ? backup.pulled_via : device.transport;
    const paths = transport === 'gnmi' ? restoreScope(targets.get(device.device_id) ?? []) : undefined;
    return {
      ...base,
      kind,
      deadlineMs: ROLLBACK_DEADLINE_MS,
      params: {
        deployment_id: deployment.id,
        transport,
        backup: { text: backup.config_text, format: backup.config_format, via: backup.pulled_via },
        purpose,
        ...expect,
        ...(paths ? { paths } : {}),
      },
    };
  };
}
