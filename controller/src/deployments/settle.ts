import type { Knex } from 'knex';
import { plural } from '../../../shared/src/words';
import { QUEUED, RUNNING, type DeploymentStore, type DeviceStatus, type LockedDeployment, type LogLine } from './store';

const FAILED_STATES: DeviceStatus[] = ['failed', 'restored', 'restore_failed', 'rollback_failed'];

/** The deployment's device counts by status, and what a transition changes (counts are stored already). */
interface Settling {
  trx: Knex.Transaction;
  store: DeploymentStore;
  deploymentId: string;
  n: (...states: DeviceStatus[]) => number;
  fields: Record<string, unknown>;
  lines: LogLine[];
}

/**
 * Moves a deployment on once no device is queued or running: completed, failed, the restore of
 * an atomic stack's changed devices (`restoreQueued` is told, to pump them), or the end of a
 * rollback. Keeps the counts current. Answers how many devices were still queued or running
 * (null: no such deployment). Runs in the caller's transaction, under the deployment's row lock.
 */
export async function settleDeployment(
  store: DeploymentStore,
  trx: Knex.Transaction,
  deploymentId: string,
  locked: LockedDeployment | undefined,
  restoreQueued: (deploymentId: string) => void,
): Promise<number | null> {
  const deployment = locked ?? (await store.lock(trx, deploymentId));
  if (!deployment) return null;
  const counts = await store.refreshCounts(trx, deploymentId, FAILED_STATES);
  const n = (...states: DeviceStatus[]) => states.reduce((sum, s) => sum + (counts.get(s) ?? 0), 0);
  const s: Settling = { trx, store, deploymentId, n, fields: {}, lines: [] };
  const open = n(...QUEUED, ...RUNNING);
  if (open === 0 && deployment.status === 'in_progress') {
    if (deployment.dry_run) await dryRunEnd(s);
    else if (await deployEnd(s, deployment)) restoreQueued(deploymentId);
  } else if (open === 0 && deployment.status === 'rolling_back') {
    rollbackEnd(s);
  }
  if (Object.keys(s.fields).length > 0) await store.update(trx, deploymentId, s.fields);
  await store.log(trx, deploymentId, deployment.org_id, s.lines);
  return open;
}

/** How a dry run ends: dry_run_completed, or dry_run_failed when a device could not be previewed. */
async function dryRunEnd({ trx, store, deploymentId, n, fields, lines }: Settling): Promise<void> {
  const changed = await store.changedCount(trx, deploymentId);
  const counts = `${plural(changed, 'device')} would change, ${n('completed') - changed} would not`;
  if (n('failed') === 0) {
    Object.assign(fields, { status: 'dry_run_completed', completed_at: trx.fn.now(), error_message: null });
    lines.push({ level: 'info', message: `Dry run completed: ${counts}; nothing was changed` });
    return;
  }
  const reason = `dry run failed on ${plural(n('failed'), 'device')} (${counts}); nothing was changed`;
  Object.assign(fields, { status: 'dry_run_failed', completed_at: trx.fn.now(), error_message: reason });
  lines.push({ level: 'error', message: `Dry run failed: ${reason}` });
}

/**
 * How a deployment's last device moves it on: completed; for an atomic stack with a failure, its
 * changed devices restored from their backups (answers true when some were queued for that);
 * else failed with the reason.
 */
async function deployEnd(s: Settling, deployment: LockedDeployment): Promise<boolean> {
  const { trx, store, deploymentId, n, fields, lines } = s;
  const failed = n('failed');
  const restoredPhase = n('restored', 'restore_failed') > 0;
  if (failed === 0 && !restoredPhase) {
    Object.assign(fields, { status: 'completed', completed_at: trx.fn.now(), error_message: null });
    const changed = await store.changedCount(trx, deploymentId);
    const matched = n('completed') - changed;
    lines.push({
      level: 'info',
      message: `Deployment completed: ${plural(changed, 'device')} changed${matched > 0 ? `, ${matched} already as rendered` : ''}`,
    });
    return false;
  }
  if (deployment.atomic && !restoredPhase && n('completed') > 0) return restoreChanged(s);
  const reason = restoredPhase
    ? `${plural(n('failed'), 'device')} failed; ${plural(n('restored'), 'device')} ` +
      `restored${n('restore_failed') ? `, ${n('restore_failed')} could not be restored` : ''}`
    : `${failed} of ${plural(deployment.total_devices, 'device')} failed` +
      `${n('completed') ? `; ${n('completed')} kept the change (the stack is not atomic)` : ''}`;
  Object.assign(fields, { status: 'failed', completed_at: trx.fn.now(), error_message: reason });
  lines.push({ level: 'error', message: `Deployment failed: ${reason}` });
  return false;
}

/** An atomic stack with a failed device: its completed devices go back to their backups (true when any was queued for it). */
async function restoreChanged({ trx, store, deploymentId, n, fields, lines }: Settling): Promise<boolean> {
  const failedNames = (await store.devices(deploymentId, trx)).filter((d) => d.status === 'failed').map((d) => d.device_name);
  const reason =
    `the stack is atomic and ` + `${failedNames.slice(0, 5).join(', ')}${failedNames.length > 5 ? ` and ${failedNames.length - 5} more` : ''} failed`;
  // Until the restore ends, each device's message says why it is being restored.
  const moved = await store.moveDevices(trx, deploymentId, ['completed'], 'restore_queued', { withBackup: true, errorMessage: reason });
  // A changed device without a backup cannot be restored: it is reported, not hidden.
  const unbacked = await store.moveDevices(trx, deploymentId, ['completed'], 'restore_failed', {
    errorMessage: `Not restored: no pre-deployment backup was stored (${reason})`,
  });
  Object.assign(fields, {
    error_message: `Restoring ${plural(moved.length, 'changed device')} because ${reason}`,
    succeeded_count: 0,
    failed_count: n(...FAILED_STATES) + moved.length + unbacked.length,
  });
  lines.push({
    level: 'warn',
    message: `Atomic stack: restoring ${plural(moved.length, 'device')} from their pre-deployment backups because ${reason}`,
  });
  if (moved.length > 0) return true;
  Object.assign(fields, { status: 'failed', completed_at: trx.fn.now() });
  return false;
}

/** How a rollback ends: rolled_back, or failed naming how many devices could not be rolled back. */
function rollbackEnd({ trx, n, fields, lines }: Settling): void {
  const failed = n('rollback_failed');
  if (failed === 0) {
    Object.assign(fields, { status: 'rolled_back', completed_at: trx.fn.now(), error_message: null });
    lines.push({ level: 'info', message: `Rollback completed: ${plural(n('rolled_back'), 'device')} back on their pre-deployment config` });
    return;
  }
  const reason = `Rollback failed on ${plural(failed, 'device')}; POST /rollback again to retry them`;
  Object.assign(fields, { status: 'failed', completed_at: trx.fn.now(), error_message: reason });
  lines.push({ level: 'error', message: reason });
}
