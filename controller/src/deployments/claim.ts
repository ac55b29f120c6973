import type { Knex } from 'knex';
import { groupBy } from '../../../shared/src/group-by';
import type { JobSpec } from '../jobs/types';
import { NEXT, type DeploymentDeviceRow, type DeploymentStore, type DeviceStatus, type LockedDeployment, type LogLine } from './store';

/** Job deadlines: a device's whole deploy (backup, push, verify) or restore. */
export const DEPLOY_DEADLINE_MS = 10 * 60_000;
export const ROLLBACK_DEADLINE_MS = 10 * 60_000;

type DeploymentKind = 'deploy' | 'rollback' | 'dry_run';
export type DeploymentJobSpec = JobSpec<DeploymentKind>;

/** A device moved to its running state, with the job to submit for it. */
export interface Claimed {
  deviceId: string;
  running: DeviceStatus;
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
 * preparing the job (deploy: the device's services in push order; rollback: its backup). A device
 * whose backup is gone fails with the reason (in `lines`). Answers the jobs to submit.
 */
export async function claimDevices(
  store: DeploymentStore,
  trx: Knex.Transaction,
  deployment: LockedDeployment,
  devices: DeploymentDeviceRow[],
  lines: LogLine[],
): Promise<Claimed[]> {
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
    updates.push({ device_id: device.device_id, status: next.running, job_id: null, error_message: null });
    claimed.push({ deviceId: device.device_id, running: next.running, spec });
  }
  await store.updateDevices(trx, deployment.id, updates);
  return claimed;
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
  // Only a restore or rollback carries a backup: a deploy job has the agent store its own (backup_store).
  const backups = await store.backupConfigs(
    trx,
    devices.filter((d) => d.status !== 'queued' && d.backup_config_id).map((d) => d.backup_config_id!),
  );
  return (device, kind) => {
    const base = { orgId: deployment.org_id, deviceId: device.device_id, groupId: deployment.id };
    const changes = () =>
      (entries.get(device.device_id) ?? []).map((e) => ({
        target_path: e.target_path,
        operation: e.operation,
        config_format: e.config_format,
        config: e.rendered_config,
      }));
    if (kind === 'dry_run') {
      // Read only: no backup is taken, stored or needed.
      return {
        ...base,
        kind,
        deadlineMs: DEPLOY_DEADLINE_MS,
        params: { deployment_id: deployment.id, transport: device.transport, changes: changes() },
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
        params: { deployment_id: deployment.id, transport: device.transport, changes: changes(), verify: true },
      };
    }
    const backup = device.backup_config_id ? backups.get(device.backup_config_id) : undefined;
    if (!backup) {
      return device.backup_config_id
        ? `${device.device_name}: the pre-deployment backup (config version ${device.backup_config_id}) no longer exists`
        : `${device.device_name}: no pre-deployment backup to restore`;
    }
    return {
      ...base,
      kind,
      deadlineMs: ROLLBACK_DEADLINE_MS,
      params: {
        deployment_id: deployment.id,
        transport: ['netconf', 'gnmi', 'ssh'].includes(backup.pulled_via) ? backup.pulled_via : device.transport,
        backup: { text: backup.config_text, format: backup.config_format, via: backup.pulled_via },
        purpose: device.status === 'restore_queued' ? 'restore' : 'rollback',
      },
    };
  };
}
